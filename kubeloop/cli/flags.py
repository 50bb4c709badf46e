"""Click options for ``kubeloop run``: the framework's flags, and an operator's flags derived from its
settings model (``kubeloop.settings``), whose values go back into the model, validated.

A bad value stops the run the way click reports a bad flag: ``Error: Invalid value for '--flag': ...``
after the usage line, exit code 2, no traceback.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:  # pydantic is loaded only for an operator with settings (a run's start-up)
    from pydantic import BaseModel, ValidationError

    from kubeloop.settings import FlagSpec, M, Settings


def leader_lease(operator: str) -> str:
    """The leader election Lease's name unless ``--leader-election-id`` names another (its help says so)."""
    return f"{operator}-leader"


def option(name: str, aliases: tuple[str, ...] = (), **kw: Any) -> click.Option:
    """``--name`` (and ``aliases``) read from ``KUBELOOP_NAME`` unless ``envvar`` says otherwise."""
    env = "KUBELOOP_" + name.upper().replace("-", "_")
    if kw.pop("is_flag", None) or _is_bool(kw.get("type")):
        # An on/off flag: ``--dry-run`` alone means true, and like Go's flags (which many operators'
        # manifests were written for) ``--dry-run=true`` / ``--dry-run=false`` are accepted as well.
        kw.update(is_flag=False, flag_value=True, type=kw.get("type") or click.BOOL)
    decls = [*kw.pop("dest", ()), f"--{name}", *aliases]
    return click.Option(decls, envvar=kw.pop("envvar", env), show_envvar=True,
                        show_default=kw.pop("show_default", "default" in kw), **kw)


def _is_bool(type_: Any) -> bool:
    return type_ is bool or isinstance(type_, click.types.BoolParamType)


if TYPE_CHECKING:
    _ParamType = click.ParamType[str]  # generic from click 8.4 on (8.1 to 8.3 run it too)
else:
    _ParamType = click.ParamType


class _Text(_ParamType):
    """A string whose environment variable, for a list setting, splits at ``separator`` only."""

    name = "text"

    def __init__(self, separator: str) -> None:
        self.separator = separator

    def split_envvar_value(self, rv: str) -> Any:
        return (rv or "").split(self.separator)

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        return str(value)


def with_framework_flags(model: type[Settings], common: list[click.Option]) -> list[click.Option]:
    """The framework's options with the spellings and environment variables ``model.framework_flags``
    adds. A key that is no framework flag, or a setting named like one, is the operator's mistake:
    refused here rather than silently ignored or shadowed."""
    by_flag = {(o.name or "").replace("_", "-"): o for o in common}
    unknown = sorted(set(model.framework_flags) - set(by_flag))
    if unknown:
        raise TypeError(f"{model.__name__}.framework_flags: {', '.join(unknown)} is not a flag of kubeloop run "
                        f"(those are: {', '.join(by_flag)})")
    taken = sorted({name.replace("_", "-") for name in model.model_fields} & set(by_flag))
    if taken:
        raise TypeError(f"{model.__name__}: --{taken[0]} is a flag of kubeloop run already; name the setting "
                        "otherwise")
    for flag, more in model.framework_flags.items():
        opt = by_flag[flag]
        current = [opt.envvar] if isinstance(opt.envvar, str) else list(opt.envvar or ())
        opt.envvar = [*current, *more.env]
        opt.opts += list(more.aliases)
    return common


def settings_options(model: type[BaseModel]) -> list[click.Option]:
    """One option per field of ``model`` (see ``kubeloop.settings`` for how a field becomes a flag)."""
    from kubeloop.settings import flag_specs
    return [option(spec.name[2:], spec.aliases, dest=(spec.field,), default=_default(spec), help=spec.help,
                   type=_click_type(spec), multiple=spec.multiple, envvar=list(spec.env)) for spec in flag_specs(model)]


def _default(spec: FlagSpec) -> Any:
    return tuple(spec.default or ()) if spec.multiple else spec.default


def _click_type(spec: FlagSpec) -> Any:
    if spec.choices:
        return click.Choice(spec.choices)
    if spec.kind is str and spec.env_separator:
        return _Text(spec.env_separator)
    return {bool: click.BOOL, int: click.INT, float: click.FLOAT}.get(spec.kind, click.STRING)


def settings_from(model: type[M], values: dict[str, Any], command: click.Command) -> M:
    """Takes the settings' values out of ``values`` (click's, by field name) and validates them into
    ``model``; a refused value raises click's error for its flag."""
    from pydantic import ValidationError

    given = {name: values.pop(name) for name in model.model_fields}
    try:
        return model(**given)
    except ValidationError as exc:
        raise _bad_value(exc, command) from None


def _bad_value(exc: ValidationError, command: click.Command) -> click.UsageError:
    """The first refused value as click's error: the flag's name and what is wrong with the value."""
    error = exc.errors()[0]
    cause = (error.get("ctx") or {}).get("error")
    message = str(cause) if error["type"] == "value_error" and cause else error["msg"]
    field = error["loc"][0] if error["loc"] else None
    param = next((p for p in command.params if p.name == field), None)
    if param is None:  # a check of several settings together: its message names them
        return click.UsageError(message)
    for flag in param.opts:  # the flag is named once, by click
        message = message.removeprefix(f"{flag}: ")
    return click.BadParameter(message, param=param)
