"""Typed settings (kubeloop.settings): what ``kubeloop run`` derives from a settings class, checked on
the class the Operator reference shows (docs/reference/settings_example.py) and on small ones."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any, ClassVar

import pytest
from click.testing import CliRunner, Result
from pydantic import ValidationError, field_validator, model_validator

from kubeloop import Flag, Operator, Settings, setting
from kubeloop.settings import flag_specs

EXAMPLE = Path(__file__).resolve().parents[2] / "docs" / "reference" / "settings_example.py"


def example() -> Any:
    spec = importlib.util.spec_from_file_location("settings_example", EXAMPLE)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run(op: Operator, args: list[str], monkeypatch: pytest.MonkeyPatch,
        env: dict[str, str] | None = None) -> tuple[Result, Any, Any]:
    """``kubeloop run`` up to the point where it would connect: (result, op.settings, framework options)."""
    import kubeloop.cli.runner as runner
    from kubeloop.cli.run import build_command

    seen: dict[str, Any] = {}

    async def fake_run(operator: Operator, options: Any, target: str | None = None) -> int:
        seen.update(settings=operator.settings, options=options)
        return 0

    monkeypatch.setattr(runner, "run_operator", fake_run)
    result = CliRunner().invoke(build_command(op), args, env=env or {})
    return result, seen.get("settings"), seen.get("options")


def test_flag_names_env_help_and_defaults_come_from_the_fields() -> None:
    specs = {s.field: s for s in flag_specs(example().GreeterSettings)}
    greeting, team, tone = specs["greeting"], specs["team"], specs["tone"]
    assert (greeting.name, greeting.env, greeting.help, greeting.default) == (
        "--greeting", ("KUBELOOP_GREETING", "GREETING"), "What to say.", "hello")
    assert specs["max_greetings"].name == "--max-greetings" and specs["max_greetings"].kind is int
    assert team.multiple and team.kind is str and team.default == ()
    assert tone.choices == ("plain", "loud") and not tone.multiple


def test_the_operator_holds_the_defaults_until_run(monkeypatch: pytest.MonkeyPatch) -> None:
    module = example()
    op = module.operator
    assert op.settings == module.GreeterSettings() and op.settings.greeting == "hello"
    result, settings, _ = run(op, ["--greeting", "hi", "--tone", "loud", "--max-greetings", "3"], monkeypatch)
    assert result.exit_code == 0, result.output
    assert (settings.greeting, settings.tone, settings.max_greetings) == ("hi", "loud", 3)
    assert op.settings is settings
    with pytest.raises(ValidationError):
        settings.greeting = "changed"  # frozen: no reconcile sees it change under it


def test_env_vars_own_first_then_the_declared_ones(monkeypatch: pytest.MonkeyPatch) -> None:
    op = example().operator
    _, settings, _ = run(op, [], monkeypatch, env={"GREETING": "from-extra"})
    assert settings.greeting == "from-extra"
    _, settings, _ = run(op, [], monkeypatch, env={"GREETING": "from-extra", "KUBELOOP_GREETING": "own"})
    assert settings.greeting == "own"
    _, settings, _ = run(op, ["--greeting", "flag"], monkeypatch, env={"KUBELOOP_GREETING": "own"})
    assert settings.greeting == "flag"


@pytest.mark.parametrize(("args", "env", "expected"), [
    ([], {}, False), (["--dry-run"], {}, True), (["--dry-run=true"], {}, True), (["--dry-run=false"], {}, False),
    ([], {"KUBELOOP_DRY_RUN": "true"}, True), (["--dry-run=false"], {"KUBELOOP_DRY_RUN": "true"}, False),
])
def test_bool_fields_are_switches_that_take_go_style_values(args: list[str], env: dict[str, str], expected: bool,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    result, settings, _ = run(example().operator, args, monkeypatch, env=env)
    assert result.exit_code == 0, result.output
    assert settings.dry_run is expected


def test_list_fields_repeat_and_read_whitespace_separated_env(monkeypatch: pytest.MonkeyPatch) -> None:
    op = example().operator
    _, settings, _ = run(op, ["--team", "a,b", "--team", "c"], monkeypatch)
    assert settings.team == ("a", "b", "c")  # the example's validator splits commas
    _, settings, _ = run(op, [], monkeypatch, env={"KUBELOOP_TEAM": "x y"})
    assert settings.team == ("x", "y")


def test_env_separator_keeps_a_value_with_spaces_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    class Selecting(Settings):
        selector: tuple[str, ...] = setting((), "Label selectors.", env_separator="\n")

    _, settings, _ = run(Operator("s", settings=Selecting), [], monkeypatch,
                         env={"KUBELOOP_SELECTOR": "tier in (a, b)\nteam=x"})
    assert settings.selector == ("tier in (a, b)", "team=x")


def test_aliases_of_a_setting_and_of_framework_flags(monkeypatch: pytest.MonkeyPatch) -> None:
    class Compatible(Settings):
        framework_flags: ClassVar = {"leader-elect": Flag(aliases=("--enable-ha",)),
                                     "namespace": Flag(env=("WATCH_NAMESPACE",))}
        argo: bool = setting(False, "Roll Argo Rollouts.", aliases=["--is-Argo-Rollouts"])

    op = Operator("c", settings=Compatible)
    result, settings, options = run(op, ["--is-Argo-Rollouts=true", "--enable-ha"], monkeypatch,
                                   env={"WATCH_NAMESPACE": "team-a"})
    assert result.exit_code == 0, result.output
    assert settings.argo and options.leader_elect is True and options.namespace == ("team-a",)
    assert not hasattr(options, "argo")  # settings go to operator.settings, not to the framework's options


@pytest.mark.parametrize(("args", "flag", "expected"), [
    (["--max-greetings", "0"], "--max-greetings", "greater than 0"),
    (["--max-greetings", "many"], "--max-greetings", "not a valid integer"),
    (["--tone", "shouty"], "--tone", "'plain', 'loud'"),
    (["--dry-run=maybe"], "--dry-run", "not a valid boolean"),
])
def test_a_bad_value_stops_the_run_naming_the_flag(args: list[str], flag: str, expected: str,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    result, settings, _ = run(example().operator, args, monkeypatch)
    assert result.exit_code == 2 and settings is None, result.output
    assert f"Invalid value for '{flag}'" in result.output and expected in result.output, result.output
    assert "Traceback" not in result.output


def test_the_error_the_reference_shows_is_the_real_one(monkeypatch: pytest.MonkeyPatch) -> None:
    page = (EXAMPLE.parent / "operator.md").read_text()
    shown = next(line for line in page.splitlines() if line.startswith("Error: Invalid value"))
    result, _, _ = run(example().operator, ["--max-greetings", "0"], monkeypatch)
    assert result.exit_code == 2 and shown in result.output, result.output


def test_a_validator_message_names_the_flag_once(monkeypatch: pytest.MonkeyPatch) -> None:
    class Checked(Settings):
        pattern: str = setting("x", "A pattern.")
        low: int = setting(0, "Low.")
        high: int = setting(1, "High.")

        @field_validator("pattern")
        @classmethod
        def _pattern(cls, given: str) -> str:
            if given == "bad":
                raise ValueError("--pattern: 'bad' is not a pattern")
            return given

        @model_validator(mode="after")
        def _ordered(self) -> Checked:
            if self.low > self.high:
                raise ValueError(f"--low {self.low} is above --high {self.high}")
            return self

    op = Operator("c", settings=Checked)
    result, _, _ = run(op, ["--pattern", "bad"], monkeypatch)
    assert result.exit_code == 2, result.output
    assert "Invalid value for '--pattern' (env var: 'KUBELOOP_PATTERN'): 'bad' is not a pattern" in result.output
    result, _, _ = run(op, ["--low", "5"], monkeypatch)  # several settings together: the message names them
    assert result.exit_code == 2 and "Error: --low 5 is above --high 1" in result.output, result.output


def test_declarations_no_flag_can_express_are_refused() -> None:
    class Nested(Settings):
        limits: dict[str, int] = setting({}, "Limits.")

    class Required(Settings):
        url: str

    with pytest.raises(ValueError, match="full flags, such as --is-Argo"):
        setting(False, "Argo.", aliases=["is-Argo"])
    with pytest.raises(TypeError, match="Nested.limits"):
        flag_specs(Nested)
    with pytest.raises(TypeError, match="give url a default"):
        Operator("r", settings=Required)


def test_framework_flags_must_exist_and_settings_must_not_shadow_them() -> None:
    from kubeloop.cli.run import build_command

    class Misspelt(Settings):
        framework_flags: ClassVar = {"namespaces": Flag(aliases=("--ns",))}

    class Shadowing(Settings):
        namespace: str = setting("", "Where.")

    with pytest.raises(TypeError, match="Misspelt.framework_flags: namespaces is not a flag of kubeloop run"):
        build_command(Operator("m", settings=Misspelt))
    with pytest.raises(TypeError, match="--namespace is a flag of kubeloop run already"):
        build_command(Operator("s", settings=Shadowing))


def test_an_unknown_setting_is_an_error_not_dropped() -> None:
    with pytest.raises(ValidationError, match="greting"):
        example().GreeterSettings(greting="hi")


def test_an_operator_without_settings_has_only_the_framework_flags(monkeypatch: pytest.MonkeyPatch) -> None:
    from kubeloop.cli.run import build_command, common_options

    op = Operator("plain")
    # (and the hidden Kopf spellings of its defaults: kubeloop/cli/peer_flags.py)
    assert [p.name for p in build_command(op).params] == [*(o.name for o in common_options()), "all_namespaces",
                                                          "standalone"]
    result, settings, _ = run(op, [], monkeypatch)
    assert result.exit_code == 0 and settings == Settings()
