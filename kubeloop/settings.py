"""Typed operator settings: an operator declares one pydantic model, and ``kubeloop run`` derives its
command line from it.

    class GreeterSettings(kubeloop.Settings):
        greeting: str = setting("hello", "What to say.", env=["GREETING"])
        dry_run: bool = setting(False, "Only report what would change.")

    operator = Operator("greeter", settings=GreeterSettings)
    ...  # a reconciler reads operator.settings.greeting

The contract:

- Each field is one flag ``--field-name`` and environment variable ``KUBELOOP_FIELD_NAME`` (then the
  ``env`` it declares); its description is the help text and its default the flag's default.
- The field's type makes the flag: ``bool`` an on/off flag that also takes ``=true``/``=false``;
  ``tuple[X, ...]`` (or ``list``) a repeatable flag; a ``Literal`` a choice; ``X | None`` unset by default.
- The model validates the values before the operator starts: a bad one stops ``kubeloop run`` naming
  its flag (exit code 2); nothing has connected anywhere yet.
- ``operator.settings`` holds the instance: the defaults until ``kubeloop run`` replaces it (a test
  assigns its own). It is frozen, so that no reconcile sees it change under it.
- ``framework_flags`` gives the framework's own flags (``namespace``, ``leader-elect``) more spellings
  or environment variables, for an operator that replaces a tool whose manifests use those.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal, TypeVar, Union

from pydantic import BaseModel, ConfigDict, Field
from pydantic.fields import FieldInfo

_SCALARS = (bool, int, float, str)
M = TypeVar("M", bound=BaseModel)


@dataclass(frozen=True)
class Flag:
    """How a setting is spelled beyond its derived ``--name`` and ``KUBELOOP_NAME``."""

    env: tuple[str, ...] = ()  # more environment variables, read after KUBELOOP_NAME
    aliases: tuple[str, ...] = ()  # more spellings, full flags: another tool's ("--is-Argo-Rollouts")
    # What separates the items of a list setting given as one environment variable: whitespace by
    # default; "\n" keeps a value with spaces (a label selector such as ``tier in (a, b)``) whole.
    env_separator: str | None = None

    def __post_init__(self) -> None:
        # click would take a word without dashes for the option's name, not for another spelling.
        if bad := [a for a in self.aliases if not a.startswith("-")]:
            raise ValueError(f"aliases are full flags, such as --{bad[0]}, not {bad[0]!r}")


def setting(default: Any, help: str = "", *, env: Sequence[str] = (), aliases: Sequence[str] = (),
            env_separator: str | None = None, **constraints: Any) -> Any:
    """A field of a ``Settings`` class: its default, help text, extra spellings, and pydantic
    ``constraints`` (``gt=0``, ...) that the value must meet."""
    info: FieldInfo = Field(default, description=help, **constraints)
    if env or aliases or env_separator:
        info.metadata.append(Flag(tuple(env), tuple(aliases), env_separator))
    return info


class Settings(BaseModel):
    """Base of an operator's settings: frozen (read by concurrent reconciles), and a name that is no
    field is refused (a typo in a test or an embedding is an error, not a setting silently dropped)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    # A flag of kubeloop run itself, without its leading dashes ("leader-elect") -> more spellings of it.
    framework_flags: ClassVar[Mapping[str, Flag]] = {}


@dataclass(frozen=True)
class FlagSpec:
    """One setting as the command line sees it, derived from its field."""

    field: str
    name: str  # "--dry-run"
    aliases: tuple[str, ...]
    env: tuple[str, ...]  # KUBELOOP_DRY_RUN first
    help: str
    default: Any
    kind: type  # bool, int, float or str: of each item when ``multiple``
    choices: tuple[str, ...] | None  # a Literal's values
    multiple: bool
    env_separator: str | None


def flag_specs(model: type[BaseModel]) -> list[FlagSpec]:
    """The flags of ``model``, in field order. Raises TypeError for a field no flag can express."""
    return [_spec(model, name, info) for name, info in model.model_fields.items()]


def defaults(model: type[M]) -> M:
    """The model with every default: what ``operator.settings`` holds before ``kubeloop run`` sets it."""
    missing = [n for n, info in model.model_fields.items() if info.is_required()]
    if missing:
        raise TypeError(f"{model.__name__}: give {', '.join(missing)} a default (a setting without one "
                        "would leave operator.settings unset in tests and embeddings)")
    return model()


def _spec(model: type[BaseModel], name: str, info: FieldInfo) -> FlagSpec:
    flag = next((m for m in info.metadata if isinstance(m, Flag)), Flag())
    kind, choices, multiple = _shape(info.annotation)
    if kind is None:
        raise TypeError(f"{model.__name__}.{name}: {info.annotation} cannot be a flag; use bool, int, float, "
                        "str, a Literal of strings, tuple[...] of those, or one of them | None")
    dashed = name.replace("_", "-")
    default = info.get_default(call_default_factory=True)
    return FlagSpec(name, f"--{dashed}", flag.aliases, (f"KUBELOOP_{name.upper()}", *flag.env),
                    info.description or "", default, kind, choices, multiple, flag.env_separator)


def _shape(annotation: Any) -> tuple[type | None, tuple[str, ...] | None, bool]:
    """(item type, choices, repeatable) of a field's type; (None, ...) when no flag fits it."""
    annotation = _without_none(annotation)
    origin = typing.get_origin(annotation)
    if origin in (tuple, list, frozenset, set):
        args = [a for a in typing.get_args(annotation) if a is not Ellipsis]
        if len(args) != 1:
            return None, None, False
        kind, choices, nested = _shape(args[0])
        return (None, None, False) if nested else (kind, choices, True)
    if origin is Literal:
        values = typing.get_args(annotation)
        return (str, tuple(values), False) if all(isinstance(v, str) for v in values) else (None, None, False)
    return (annotation if annotation in _SCALARS else None), None, False


def _without_none(annotation: Any) -> Any:
    """``X`` of ``X | None`` and of ``Annotated[X, ...]`` (validators say nothing about the flag)."""
    if typing.get_origin(annotation) is typing.Annotated:
        return _without_none(typing.get_args(annotation)[0])
    if typing.get_origin(annotation) in (Union, types.UnionType):
        rest = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(rest) == 1:
            return rest[0]
    return annotation
