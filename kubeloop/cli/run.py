"""``kubeloop run TARGET``: runs an operator (a bundled short name, a module path or a file).

Every setting is a flag and an environment variable ``KUBELOOP_<FLAG>``; flag names follow
controller-runtime's where one exists.
"""

from __future__ import annotations

import asyncio
import importlib
import importlib.util
import logging
import sys
from pathlib import Path
from typing import Any

import click

from kubeloop.controller import DEFAULT_CONCURRENCY
from kubeloop.operator import Operator

BUNDLED = ("immortal", "blackadder", "copyrator", "reloader")
log = logging.getLogger("kubeloop.run")


def load_operator(target: str) -> Operator:
    """Finds the Operator in a bundled operator, a ``package.module[:attr]`` or a ``file.py[:attr]``."""
    path, _, attr = target.partition(":")
    if path in BUNDLED:
        module = importlib.import_module(f"kubeloop.operators.{path}")
    elif path.endswith(".py") or Path(path).is_file():
        file = Path(path)
        if not file.is_file():
            raise click.BadParameter(f"no such file: {path}", param_hint="TARGET")
        spec = importlib.util.spec_from_file_location(file.stem, file)
        assert spec and spec.loader
        module = importlib.util.module_from_spec(spec)
        sys.modules[file.stem] = module
        sys.path.insert(0, str(file.parent.resolve()))
        spec.loader.exec_module(module)
    else:
        try:
            module = importlib.import_module(path)
        except ModuleNotFoundError as exc:
            raise click.BadParameter(f"{path!r} is not a bundled operator ({', '.join(BUNDLED)}), a file or an "
                                     f"importable module: {exc}", param_hint="TARGET") from exc
    if attr:
        found = getattr(module, attr, None)
        if not isinstance(found, Operator):
            raise click.BadParameter(f"{target}: {attr!r} is not a kubeloop.Operator", param_hint="TARGET")
        return found
    operators = [v for v in vars(module).values() if isinstance(v, Operator)]
    if len(operators) != 1:
        raise click.BadParameter(f"{path} defines {len(operators)} kubeloop.Operator objects; name one as "
                                 f"{path}:NAME", param_hint="TARGET")
    return operators[0]


def _opt(name: str, aliases: tuple[str, ...] = (), **kw: Any) -> click.Option:
    env = "KUBELOOP_" + name.upper().replace("-", "_")
    if kw.pop("is_flag", None) or _is_bool(kw.get("type")):
        # An on/off flag: ``--dry-run`` alone means true, and like Go's flags (which many operators'
        # manifests were written for) ``--dry-run=true`` / ``--dry-run=false`` are accepted as well.
        kw.update(is_flag=False, flag_value=True, type=kw.get("type") or click.BOOL)
    return click.Option([f"--{name}", *aliases], envvar=kw.pop("envvar", env), show_envvar=True,
                        show_default=kw.pop("show_default", "default" in kw), **kw)


def _is_bool(type_: Any) -> bool:
    return type_ is bool or isinstance(type_, click.types.BoolParamType)


def common_options() -> list[click.Option]:
    return [
        _opt("kubeconfig", help="Path to a kubeconfig (default: $KUBECONFIG, ~/.kube/config, else in-cluster)."),
        _opt("context", help="The kubeconfig context to use."),
        _opt("namespace", multiple=True,
             help="Watch only these namespaces (repeat or comma-separate); default all namespaces."),
        _opt("leader-elect", is_flag=True, default=False,
             help="Run leader election so that only one replica acts."),
        _opt("leader-election-id", default=None, help="Lease name (default: the operator's name)."),
        _opt("leader-election-namespace", default=None,
             help="Lease namespace (default: the pod's namespace or the kubeconfig's)."),
        _opt("metrics-bind-address", default=":8080", help="Address of /metrics; 0 disables it."),
        _opt("health-probe-bind-address", default=":8081", help="Address of /healthz and /readyz; 0 disables."),
        _opt("log-level", default="info", type=click.Choice(["debug", "info", "warning", "error"])),
        _opt("log-format", default="human", type=click.Choice(["human", "json"])),
        _opt("max-concurrent-reconciles", default=DEFAULT_CONCURRENCY, type=int, help="Workers per controller."),
        _opt("resync-period", default=None, type=float,
             help="Seconds between full re-checks of every object (default: each controller's own)."),
        # Off by default, like controller-runtime since its PR #3119: the API server's Priority and
        # Fairness protects it, and its 429s (with Retry-After) are honoured.
        _opt("qps", default=0.0, type=float, help="Client-side rate limit in requests/s (0 = none)."),
        _opt("burst", default=400, type=int, help="Client-side burst, when --qps is set."),
        _opt("graceful-shutdown-timeout", default=30.0, type=float,
             help="Seconds in-flight reconciles get to finish on SIGTERM."),
        _opt("watch-inactivity-timeout", default=330.0, type=float,
             help="Seconds a watch may stay silent (no event, no bookmark) before it is taken for a dead "
                  "connection and reopened."),
    ]


def build_command(operator: Operator) -> click.Command:
    # A bool setting is an on/off flag (``--dry-run``) that also takes ``=true``/``=false`` (see _opt).
    extra = [_opt(o.name, o.aliases, default=o.default, help=o.help, type=o.type, multiple=o.multiple,
                  envvar=[f"KUBELOOP_{o.name.upper().replace('-', '_')}", *o.envvars]) for o in operator.options]

    def callback(**values: Any) -> None:
        for o in operator.options:
            operator.settings[o.name.replace("-", "_")] = values.pop(o.name.replace("-", "_"))
        from kubeloop.cli.runner import run_operator
        sys.exit(asyncio.run(run_operator(operator, values)))

    common = common_options()
    for opt in common:
        aliases = operator.env_aliases.get((opt.name or "").replace("_", "-"), ())
        if aliases:
            current = [opt.envvar] if isinstance(opt.envvar, str) else list(opt.envvar or ())
            opt.envvar = [*current, *aliases]
        opt.opts += list(operator.flag_aliases.get((opt.name or "").replace("_", "-"), ()))
    params: list[click.Parameter] = [*common, *extra]
    return click.Command(operator.name, params=params, callback=callback,
                         help=f"Run the {operator.name} operator.")


@click.command(context_settings={"ignore_unknown_options": True, "allow_extra_args": True,
                                 "help_option_names": []})
@click.argument("target", required=False)
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
@click.pass_context
def command(ctx: click.Context, target: str | None, args: tuple[str, ...]) -> None:
    """Run an operator: TARGET is a bundled operator (immortal, blackadder, copyrator, reloader), a
    module path (pkg.mod[:attr]) or a file (op.py[:attr]). `kubeloop run TARGET --help` lists its
    settings."""
    if target is None or target in ("--help", "-h"):
        click.echo(ctx.get_help())
        click.echo("\nSettings (flags and KUBELOOP_* environment variables):")
        for opt in common_options():
            click.echo(f"  --{opt.name.replace('_', '-'):28} {opt.help or ''}")
        return
    operator = load_operator(target)
    build_command(operator).main(list(args), prog_name=f"kubeloop run {target}")
