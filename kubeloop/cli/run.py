"""``kubeloop run TARGET``: runs an operator (a bundled short name, a module path or a file).

Every setting is a flag and an environment variable ``KUBELOOP_<FLAG>``; flag names follow
controller-runtime's where one exists. The framework's are the fields of ``RunOptions``
(kubeloop/cli/options.py), the operator's those of its settings model (kubeloop/settings.py).
"""

from __future__ import annotations

import asyncio
import difflib
import importlib
import importlib.util
import logging
import os
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from kubeloop.builder import Operator
from kubeloop.cli import peer_flags
from kubeloop.cli.flags import settings_from, settings_options, with_framework_flags
from kubeloop.cli.options import framework_options, from_values

BUNDLED = ("immortal", "blackadder", "copyrator", "reloader")
log = logging.getLogger("kubeloop.run")


class TargetLoadError(click.ClickException):
    """The target was found but importing it raised: a bug in the user's module, shown in one line
    (``--debug`` shows the traceback, kept as ``__cause__``)."""


def load_operator(target: str) -> Operator:
    """Finds the Operator in a bundled operator, a ``package.module[:attr]`` or a ``file.py[:attr]``."""
    path, _, attr = target.partition(":")
    if path in BUNDLED:
        module = importlib.import_module(f"kubeloop.operators.{path}")
    elif path.endswith(".py") or Path(path).is_file():
        module = _load_file(Path(path))
    else:
        module = _import_module(path)
    operators = {name: v for name, v in vars(module).items() if isinstance(v, Operator)}
    if attr:
        found = getattr(module, attr, None)
        if not isinstance(found, Operator):
            known = ", ".join(operators) or "none"
            raise click.BadParameter(f"{target}: {attr!r} is not a kubeloop.Operator{_did_you_mean(attr, operators)}"
                                     f" (Operators in {path}: {known})", param_hint="TARGET")
        return found
    if len(operators) != 1:
        hint = (f"name one as {path}:NAME ({', '.join(operators)})" if operators else
                "create one with `op = kubeloop.Operator(\"my-operator\")` and register a reconciler on it")
        raise click.BadParameter(f"{path} defines {len(operators)} kubeloop.Operator objects; {hint}",
                                 param_hint="TARGET")
    return next(iter(operators.values()))


def _load_file(file: Path) -> Any:
    if not file.is_file():
        nearby = [p.name for p in (file.parent if file.parent.is_dir() else Path(".")).glob("*.py")]
        raise click.BadParameter(f"no such file: {file}{_did_you_mean(file.name, nearby)}", param_hint="TARGET")
    spec = importlib.util.spec_from_file_location(file.stem, file)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[file.stem] = module
    sys.path.insert(0, str(file.parent.resolve()))
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        raise TargetLoadError(f"loading {file} failed: {_describe(exc, str(file.resolve()))}") from exc
    return module


def _import_module(path: str) -> Any:
    try:
        return importlib.import_module(path)
    except ModuleNotFoundError as exc:
        if exc.name and (path == exc.name or path.startswith(exc.name + ".")):
            local = [p.name for p in Path(".").glob("*.py")] + [p.stem for p in Path(".").glob("*.py")]
            raise click.BadParameter(
                f"{path!r} is not a bundled operator ({', '.join(BUNDLED)}), a file or an importable module"
                f"{_did_you_mean(path, [*BUNDLED, *local])}", param_hint="TARGET") from exc
        raise TargetLoadError(f"importing {path} failed: {_describe(exc, None)}") from exc
    except Exception as exc:
        raise TargetLoadError(f"importing {path} failed: {_describe(exc, None)}") from exc


def _did_you_mean(word: str, candidates: Any) -> str:
    close = difflib.get_close_matches(word, list(candidates), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _describe(exc: BaseException, file: str | None) -> str:
    """``Type: message`` plus where in the user's file it happened; the full traceback is --debug's."""
    where = ""
    frames = traceback.extract_tb(exc.__traceback__)
    mine = [f for f in frames if file and f.filename == file] or frames[-1:]
    if isinstance(exc, SyntaxError):
        where = f" ({exc.filename}, line {exc.lineno})"
    elif mine:
        where = f" ({mine[-1].filename}, line {mine[-1].lineno})"
    return f"{type(exc).__name__}: {exc}{where}. Run with --debug for the traceback."


def common_options(webhooks: bool = False) -> list[click.Option]:
    """The framework's flags (``RunOptions``' fields); the ``--webhook-*`` ones only for an operator with
    webhooks (``webhooks``)."""
    return framework_options(webhooks)


def build_command(operator: Operator, target: str | None = None) -> click.Command:
    """``kubeloop run TARGET``'s command for ``operator``: the framework's flags, then the operator's
    (derived from its settings model), whose values become ``operator.settings``."""
    model = operator.declared_settings  # None: no settings of its own, and no pydantic to import
    kopf_defaults: set[str] = set()  # Kopf's spellings of kubeloop's defaults this command accepts

    def callback(**values: Any) -> None:
        peer_flags.check_accepted(values, kopf_defaults)
        if model is not None:
            operator.settings = settings_from(model, values, click.get_current_context().command)
        options = from_values(values)  # what is left: the framework's flags
        try:  # a definition the builder refuses (@reconcile beside cause handlers): one line, not a traceback
            operator.specs()
        except ValueError as exc:
            raise click.ClickException(f"{target or operator.name}: {exc}") from exc
        from kubeloop.cli.runner import run_operator
        sys.exit(_guarded(lambda: asyncio.run(run_operator(operator, options, target or operator.name)),
                          options.debug))

    common = common_options(webhooks=operator.may_serve_webhooks)
    params: list[click.Parameter] = [*common] if model is None else [*with_framework_flags(model, common),
                                                                      *settings_options(model)]
    taken = {opt for p in params for opt in getattr(p, "opts", ())}
    accepted = [o for o in peer_flags.accepted_options() if not taken & set(o.opts)]  # the operator's win
    kopf_defaults.update(o.name or "" for o in accepted)
    params += accepted
    return _RunCommand(operator.name, params=params, callback=callback, help=f"Run the {operator.name} operator.")


class _RunCommand(click.Command):
    """A peer tool's flag that kubeloop does not take is refused naming kubeloop's (``peer_flags``)."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        try:
            return super().parse_args(ctx, args)
        except click.NoSuchOption as exc:
            raise peer_flags.explain(exc) from None


@click.command(context_settings={"ignore_unknown_options": True, "allow_extra_args": True,
                                 "help_option_names": []})
@click.argument("target", required=False)
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
@click.pass_context
def command(ctx: click.Context, target: str | None, args: tuple[str, ...]) -> None:
    """Run an operator: TARGET is a bundled operator (immortal, blackadder, copyrator, reloader), a
    module path (pkg.mod[:attr]) or a file (op.py[:attr]). `kubeloop run TARGET --help` lists its
    settings."""
    if target is not None and target.startswith("-") and target not in ("--help", "-h"):
        target, args = _target_among(target, args)  # flags before TARGET (kopf run --standalone x.py)
        if target is None:
            peer = next((a.partition("=")[0] for a in args if a.partition("=")[0] in peer_flags.PEER_FLAGS), None)
            whose, ours = peer_flags.PEER_FLAGS.get(peer or "", ("", ""))
            raise click.UsageError(f"{peer} is {whose}'s flag; {ours}" if peer else
                                   f"no TARGET among {' '.join(args)}: kubeloop run TARGET [FLAGS], TARGET being a "
                                   "bundled operator, a module (pkg.mod[:attr]) or a file (op.py[:attr])")
    if target is None or target in ("--help", "-h"):
        click.echo(ctx.get_help())
        click.echo("\nSettings (flags and KUBELOOP_* environment variables):")
        for opt in common_options(webhooks=True):
            click.echo(f"  --{opt.name.replace('_', '-'):28} {opt.help or ''}")
        return
    try:
        operator = load_operator(target)
    except TargetLoadError as exc:
        if _debug_requested(args):
            traceback.print_exception(exc.__cause__ or exc)
        raise
    build_command(operator, target).main(list(args), prog_name=f"kubeloop run {target}")


def _target_among(first: str, rest: tuple[str, ...]) -> tuple[str | None, tuple[str, ...]]:
    """TARGET and the other arguments, when flags come first: the first argument that is neither a flag nor
    the value of one and names something loadable (else the first that is neither, for load_operator to
    report). The operator's own flags are not known yet, so a loadable name decides whether a word after
    one of them is its value or TARGET."""
    tokens = [first, *rest]
    takes_value = {o for opt in [*common_options(webhooks=True)] if not opt.is_flag for o in opt.opts}
    takes_value |= peer_flags.TAKE_VALUES
    candidates: list[int] = []
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if token == "--":
            candidates += range(i + 1, len(tokens))
            break
        if token.startswith("-"):
            i += 2 if token in takes_value else 1
            continue
        candidates.append(i)
        i += 1
    if not candidates:
        return None, tuple(tokens)
    pick = next((i for i in candidates if _loadable(tokens[i])), candidates[0])
    return tokens[pick], tuple(tokens[:pick] + tokens[pick + 1:])


def _loadable(word: str) -> bool:
    path = word.partition(":")[0]
    if path in BUNDLED or path.endswith(".py") or Path(path).is_file():
        return True
    try:
        return importlib.util.find_spec(path) is not None
    except (ImportError, ValueError):
        return False


def _debug_requested(args: tuple[str, ...]) -> bool:
    # The operator's flags are parsed only once it is loaded; a load error needs --debug earlier.
    env = os.environ.get("KUBELOOP_DEBUG", "").lower() not in ("", "0", "false", "no")
    return env or any(a == "--debug" or a == "--debug=true" for a in args)


def _guarded(run: Callable[[], int], debug: bool) -> int:
    """Runs the operator; a start-up problem is one paragraph on stderr and exit code 1, and its
    traceback only with --debug."""
    from kubeloop.cli.preflight import StartupError
    from kubeloop.client.config import ConfigError

    try:
        return run()
    except KeyboardInterrupt:
        return 130  # Ctrl-C before the signal handlers were installed: no traceback either
    except click.ClickException:
        raise  # a bad flag value: click prints it with the usage line (exit code 2)
    except (StartupError, ConfigError) as exc:
        # A problem of the setup, named with its fix. Anything else is a bug (in the operator or in
        # kubeloop) and keeps its traceback: it may come hours into a run, when --debug is too late.
        if debug:
            traceback.print_exception(exc)
        click.echo(f"Error: {exc}", err=True)
        return 1
