"""A settings class, as docs/reference/operator.md shows it (tests/unit/test_settings.py runs it)."""

from typing import Literal

from pydantic import field_validator

from kubeloop import Operator, Settings, setting


class GreeterSettings(Settings):
    greeting: str = setting("hello", "What to say.", env=["GREETING"])  # also read from $GREETING
    dry_run: bool = setting(False, "Only report what would change.")  # --dry-run, --dry-run=false
    tone: Literal["plain", "loud"] = setting("plain", "How to say it.")  # one of these
    team: tuple[str, ...] = setting((), "Only greet these teams (repeat the flag or comma-separate).")
    max_greetings: int = setting(10, "Greetings per minute.", gt=0)  # a pydantic constraint

    @field_validator("team")
    @classmethod
    def _split(cls, given: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(t.strip() for value in given for t in value.split(",") if t.strip())


operator = Operator("greeter", settings=GreeterSettings)  # operator.settings.greeting, ...
