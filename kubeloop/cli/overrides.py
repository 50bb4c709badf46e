"""``kubeloop generate --set NAME=VALUE``: an operator's settings for the manifests it is generated with.

An operator's settings decide more than its behaviour: ``op.permission(..., when=...)`` and
``op.record_author(..., when=...)`` add RBAC rules and webhooks only with some settings (copyrator's
``--check-author``). Generating with the defaults would leave those out, so:

- ``NAME`` is one of the operator's own settings, spelled as its ``kubeloop run`` flag without the dashes
  (``check-author``; ``check_author`` is accepted too). Anything else is refused, naming the valid ones:
  the framework's own flags are not settings (``generate`` has its own options for what they decide).
- ``VALUE`` is read exactly as ``kubeloop run --NAME=VALUE`` reads it (``true``/``false`` for on/off
  settings, repeat ``--set`` for a list) and validated by the settings model; environment variables
  (``KUBELOOP_*``) are not consulted: the output must not depend on the shell it was made in.
- The result is the validated settings, for the manifests, and the same values as ``--NAME=VALUE``
  arguments, for the Deployment, so that the deployed process runs with the settings it was generated for.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from typing import Any

import click
from pydantic import ValidationError

from kubeloop.builder import Operator
from kubeloop.cli.flags import settings_from, settings_options
from kubeloop.settings import FlagSpec, Settings, flag_specs


def setting_names(operator: Operator) -> list[str]:
    """The operator's settings as ``--set`` names them (its flags without the dashes)."""
    return [spec.name[2:] for spec in flag_specs(operator.settings_model)]


def parse_sets(operator: Operator, pairs: Sequence[str]) -> tuple[Settings, list[str]]:
    """(settings, run arguments) from ``NAME=VALUE`` pairs; a bad pair is a ``click.BadParameter``."""
    names = setting_names(operator)
    args = [f"--{_name(operator, names, pair)}={pair.partition('=')[2]}" for pair in pairs]
    params: list[click.Parameter] = [*settings_options(operator.settings_model)]
    for param in params:
        param.envvar = None  # see the module docstring: the shell must not change the output
    command = click.Command(f"{operator.name} settings", params=params)
    try:
        values = command.make_context(command.name, list(args)).params
        settings = settings_from(operator.settings_model, dict(values), command)
    except click.BadParameter as exc:  # one value: named by its setting, as --set spells it
        where = exc.param.opts[0].removeprefix("--") if exc.param is not None else "a setting"
        raise click.BadParameter(f"{where}: {exc.message}", param_hint="--set") from None
    except click.ClickException as exc:  # several settings together (the model's own checks)
        raise click.BadParameter(exc.message, param_hint="--set") from None
    return settings, args


def _name(operator: Operator, names: list[str], pair: str) -> str:
    name, sep, _ = pair.partition("=")
    dashed = name.strip().removeprefix("--").replace("_", "-")
    if not sep:
        raise click.BadParameter(f"{pair!r} is not NAME=VALUE: give the value too, e.g. --set {dashed}=true",
                                 param_hint="--set")
    if dashed not in names:
        valid = ", ".join(names) if names else "none"
        raise click.BadParameter(f"{name!r} is not a setting of {operator.name} (its settings: {valid})",
                                 param_hint="--set")
    return dashed


def off_by_default(operator: Operator) -> list[FlagSpec]:
    """The on/off settings that are off by default: the ones that may add objects and rules when on."""
    return [s for s in flag_specs(operator.settings_model) if s.kind is bool and not s.multiple and s.default is False]


def on_off_variants(operator: Operator) -> list[Settings]:
    """The defaults, and the defaults with each of :func:`off_by_default` turned on (those the model
    accepts): what ``kubeloop undeploy`` looks for, whichever of them ``deploy --set`` used."""
    base = operator.settings_model()
    out = [base]
    for spec in off_by_default(operator):
        with contextlib.suppress(ValidationError):
            out.append(operator.settings_model.model_validate({**base.model_dump(), spec.field: True}))
    return out


@contextlib.contextmanager
def settings_applied(operator: Operator, settings: Any) -> Iterator[None]:
    """``operator.settings`` replaced for the block: a bundled operator is a module-level object that
    other code in the same process (tests, an embedding) must find with its settings unchanged."""
    before = operator.settings
    operator.settings = settings
    try:
        yield
    finally:
        operator.settings = before
