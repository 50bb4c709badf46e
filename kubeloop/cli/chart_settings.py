"""``kubeloop generate chart TARGET [--set NAME=VALUE]``: which settings become chart values.

- Every on/off setting that is off by default and changes ``generate all``'s output when on becomes a
  *switch* (``settings.<name>`` in values.yaml, see :mod:`kubeloop.packaging.switches`); ``--set`` of one
  only sets the value's default.
- The chart's base objects are generated with every switch off and the other ``--set`` settings applied
  (those are baked into the Deployment's arguments, as for ``generate all``).
- A setting whose changes no chart value can switch is said on stderr, with what to use instead: it is
  not dropped silently.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
from pydantic import ValidationError

from kubeloop.builder import Operator
from kubeloop.cli.generate import manifests
from kubeloop.cli.overrides import off_by_default, parse_sets, settings_applied
from kubeloop.packaging.switches import Switch, unsupported
from kubeloop.settings import Settings, flag_specs


def write_operator_chart(target: str, operator: Operator, output: Path | None, image: str | None,
                         replicas: int | None, sets: tuple[str, ...], shards: bool = False) -> None:
    """Writes the chart (see the module docstring) and echoes its files."""
    from kubeloop.packaging.chart import write_chart

    if output is None:
        raise click.ClickException("a chart is a directory: pass -o DIR")
    settings, args = parse_sets(operator, sets)

    def objs(with_settings: Settings, extra: list[str]) -> list[dict[str, Any]]:
        # The namespace is a placeholder: the chart uses .Release.Namespace.
        with settings_applied(operator, with_settings):
            return manifests(target, operator, "default", image, replicas, settings_args=extra, shards=shards)

    flags = _switches(operator, settings, objs)
    base = _with(settings, dict.fromkeys(flags, False)) or settings
    base_args = [a for a in args if a[2:].partition("=")[0].replace("-", "_") not in flags]
    aliases = {s.field: s.aliases for s in flag_specs(operator.settings_model)}
    switches = [Switch(field.replace("_", "-"), help, objs(on, base_args), default=bool(getattr(settings, field)),
                       aliases=aliases[field])
                for field, help in flags.items() if (on := _with(base, {field: True})) is not None]
    for path in write_chart(output, operator.name, objs(base, base_args), switches=switches):
        click.echo(str(path))


def _switches(operator: Operator, settings: Settings, objs: Any) -> dict[str, str]:
    """{field: help} of the settings that become chart values; the others that change the output, said."""
    candidates = {s.field: s.help for s in off_by_default(operator)}
    off = _with(settings, dict.fromkeys(candidates, False))
    if off is None:
        return {}
    base = objs(off, [])
    found = {}
    for field, help in candidates.items():
        on = _with(off, {field: True})
        if on is None or (changed := objs(on, [])) == base:
            continue  # refused by the model (a compatibility flag) or changes nothing the chart installs
        if reason := unsupported(base, changed):
            click.echo(f"{operator.name}: --{field.replace('_', '-')} is not a chart value ({reason}); "
                       f"`kubeloop generate all {operator.name} --set {field.replace('_', '-')}=true` "
                       "generates it", err=True)
            continue
        found[field] = help
    return found


def _with(settings: Settings, update: dict[str, Any]) -> Any:
    """``settings`` with ``update``, validated (None when the model refuses the combination)."""
    try:
        return type(settings).model_validate({**settings.model_dump(), **update})
    except ValidationError:
        return None
