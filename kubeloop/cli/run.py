"""``kubeloop run TARGET``: runs an operator (a bundled short name, a module path or a file).

Every setting is a flag and an environment variable ``KUBELOOP_<FLAG>``; flag names follow
controller-runtime's where one exists.
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
from kubeloop.cli.flags import leader_lease, settings_from, settings_options, with_framework_flags
from kubeloop.cli.flags import option as _opt
from kubeloop.controller import DEFAULT_CONCURRENCY

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
    """The framework's flags; the ``--webhook-*`` ones only for an operator with webhooks (``webhooks``)."""
    return [*_common_options(), *(webhook_options() if webhooks else [])]


def webhook_options() -> list[click.Option]:
    """Where the webhook server listens and how the API server reaches it (see WebhookOptions)."""
    return [
        _opt("webhook-port", default=9443, type=click.IntRange(0, 65535),
             help="Port of the webhook server (operators with @validate/@mutate/convert); 0 picks a free one."),
        _opt("webhook-host", default="127.0.0.1",
             help="Address the webhook server binds (0.0.0.0 in a cluster, as the generated Deployment sets)."),
        _opt("webhook-url-host", default=None,
             help="Host the API server calls, as https://HOST:PORT (default: --webhook-host, or 127.0.0.1 "
                  "for 0.0.0.0); used unless --webhook-service is set."),
        _opt("webhook-url-port", default=None, type=click.IntRange(1, 65535),
             help="Port the API server calls in that URL when something listens there for this process (a "
                  "tunnel, a proxy in front of several replicas); default: --webhook-port."),
        _opt("webhook-drain-seconds", default=None, type=click.FloatRange(0),
             help="Seconds the webhook server keeps answering after SIGTERM, not ready meanwhile, while the "
                  "replica leaves the Service's endpoints (default: 3 with --webhook-service, else 0)."),
        _opt("webhook-service", default=None,
             help="In a cluster: the Service the API server calls instead of a URL (generated as <name>-webhook)."),
        _opt("webhook-namespace", default=None,
             help="The operator's namespace, for the Service and the namespaceSelector that excludes it "
                  "(default with --webhook-service: the pod's namespace)."),
        _opt("webhook-cert-dir", default=None,
             help="Serve tls.crt/tls.key from this directory (a cert-manager Secret mounted there), reloaded "
                  "when they change, instead of making a certificate; no caBundle is written "
                  "(cert-manager's cainjector does: generate with --cert-manager-certificate)."),
    ]


def _common_options() -> list[click.Option]:
    return [
        _opt("kubeconfig", help="Path to a kubeconfig (default: $KUBECONFIG, ~/.kube/config, else in-cluster)."),
        _opt("context", help="The kubeconfig context to use."),
        _opt("namespace", ("-n",), multiple=True,
             help="Watch only these namespaces (repeat or comma-separate); default all namespaces."),
        _opt("leader-elect", is_flag=True, default=False,
             help="Run leader election so that only one replica acts."),
        _opt("leader-election-id", default=None,
             help=f"Lease name (default: {leader_lease('<operator name>')})."),
        _opt("leader-election-namespace", default=None,
             help="Lease namespace (default: the pod's namespace or the kubeconfig's)."),
        _opt("shards", default="off", type=click.Choice(["off", "auto"]),
             help="auto: every replica acts on its own share of the objects, found through one Lease per "
                  "replica in the leader election namespace (docs/SHARDING.md); excludes --leader-elect."),
        _opt("lease-duration", default=15.0, type=click.FloatRange(min=1),
             help="Seconds a Lease (leader election, shards) lasts without renewal."),
        _opt("renew-deadline", default=10.0, type=click.FloatRange(min=0, min_open=True),
             help="Seconds a replica may fail to renew its Lease before it stops acting."),
        _opt("retry-period", default=2.0, type=click.FloatRange(min=0, min_open=True),
             help="Seconds between Lease renewals."),
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
        _opt("install-crds", is_flag=True, default=False,
             help="Development: apply the CRDs of the operator's CustomResource models before starting "
                  "(in production apply `kubeloop generate crd TARGET` instead)."),
        _opt("debug", is_flag=True, default=False, help="Show the Python traceback of a start-up error."),
    ]


def build_command(operator: Operator, target: str | None = None) -> click.Command:
    """``kubeloop run TARGET``'s command for ``operator``: the framework's flags, then the operator's
    (derived from its settings model), whose values become ``operator.settings``."""
    model = operator.declared_settings  # None: no settings of its own, and no pydantic to import
    kopf_defaults: set[str] = set()  # Kopf's spellings of kubeloop's defaults this command accepts

    def callback(**values: Any) -> None:
        peer_flags.check_accepted(values, kopf_defaults)
        if model is not None:
            operator.settings = settings_from(model, values, click.get_current_context().command)
        if values["leader_elect"] and values["shards"] != "off":
            raise click.UsageError(f"--leader-elect and --shards {values['shards']} are exclusive: one replica "
                                   "acting (--leader-elect) or every replica acting on its share (--shards "
                                   "auto); drop one of them")
        if not values["retry_period"] < values["renew_deadline"] < values["lease_duration"]:
            raise click.UsageError("--retry-period < --renew-deadline < --lease-duration is required (got "
                                   f"{values['retry_period']}, {values['renew_deadline']}, {values['lease_duration']})")
        try:  # a definition the builder refuses (@reconcile beside cause handlers): one line, not a traceback
            operator.specs()
        except ValueError as exc:
            raise click.ClickException(f"{target or operator.name}: {exc}") from exc
        from kubeloop.cli.runner import run_operator
        values["target"] = target or operator.name
        sys.exit(_guarded(lambda: asyncio.run(run_operator(operator, values)), bool(values["debug"])))

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
