"""Flags of the tools kubeloop replaces (``kopf run``, a kubebuilder / controller-runtime ``main.go``), as
their users bring them in a Deployment's ``args``. Each is accepted where it means what kubeloop does
anyway, or refused with kubeloop's spelling (click alone would say "No such option" and, at best, guess).

- Accepted: Kopf's ``-A``/``--all-namespaces`` and ``--standalone`` (kubeloop's defaults: every
  namespace, no leader election; contradicting ``--namespace`` / ``--leader-elect`` is an error), and
  ``-n`` for ``--namespace`` (Kopf, kubectl).
- Refused with the fix: the rest of the table below. An operator's own setting of the same name wins:
  only a flag the command does not define is looked up here.
"""

from __future__ import annotations

import click

_LOG_LEVEL = "use --log-level debug|info|warning|error"
_PLAIN_METRICS = ("kubeloop serves /metrics over plain HTTP: keep it inside the cluster (the generated Service) "
                  "or put a TLS proxy in front; --metrics-bind-address 0 turns it off")
_TARGET = "give the module as kubeloop run's TARGET: kubeloop run pkg.module (or a file, or pkg.module:op)"
_LEADER = "use --leader-elect (a Lease: one replica acts, the others wait with warm caches)"
_CERT_DIR = "use --webhook-cert-dir DIR (a directory holding tls.crt and tls.key, e.g. a mounted cert-manager Secret)"
_PREFIX = ("drop it: kubeloop's human log lines always end with [controller namespace/name id=...] during a "
           "reconcile; --log-format json puts those in fields")
_LIVENESS = "use --health-probe-bind-address ADDR (serves /healthz and /readyz)"
_PRIORITY = "use --leader-elect (replicas have no priorities: the first to take the Lease acts)"

# flag → (whose, what to do instead)
PEER_FLAGS: dict[str, tuple[str, str]] = {
    "--verbose": ("Kopf", "use --log-level debug"),
    "-v": ("Kopf", "use --log-level debug"),
    "-d": ("Kopf", "use --log-level debug (kubeloop's --debug is something else: a start-up error's traceback)"),
    "--quiet": ("Kopf", "use --log-level warning"),
    "-q": ("Kopf", "use --log-level warning"),
    "--log-prefix": ("Kopf", _PREFIX),
    "--no-log-prefix": ("Kopf", _PREFIX),
    "--log-refkey": ("Kopf", "drop it: --log-format json writes the object being reconciled as the field object "
                             "(namespace/name), with kind, controller and reconcileID"),
    "--liveness": ("Kopf", _LIVENESS),
    "-L": ("Kopf", _LIVENESS),
    "--peering": ("Kopf", _LEADER),
    "-P": ("Kopf", _LEADER),
    "--priority": ("Kopf", _PRIORITY),
    "-p": ("Kopf", _PRIORITY),
    "--dev": ("Kopf", "drop it: kubeloop runs standalone by default; add --log-level debug for its logs"),
    "-m": ("Kopf", _TARGET),
    "--module": ("Kopf", _TARGET),
    "--metrics-addr": ("kubebuilder", "use --metrics-bind-address ADDR"),
    "--enable-leader-election": ("kubebuilder", "use --leader-elect"),
    "--zap-log-level": ("controller-runtime's zap", _LOG_LEVEL),
    "--zap-devel": ("controller-runtime's zap", "use --log-format human --log-level debug"),
    "--zap-encoder": ("controller-runtime's zap", "use --log-format json|human"),
    "--zap-stacktrace-level": ("controller-runtime's zap", "drop it: kubeloop logs the traceback of an unexpected "
                                                          "reconcile error, and none for the API errors it names "
                                                          "(conflicts, missing permissions)"),
    "--zap-time-encoding": ("controller-runtime's zap", "drop it: --log-format human writes UTC timestamps "
                                                       "(YYYY-MM-DD HH:MM:SS,mmm), json writes ts in epoch seconds"),
    "--metrics-secure": ("kubebuilder", _PLAIN_METRICS),
    "--metrics-cert-path": ("kubebuilder", _PLAIN_METRICS),
    "--metrics-cert-name": ("kubebuilder", _PLAIN_METRICS),
    "--metrics-cert-key": ("kubebuilder", _PLAIN_METRICS),
    "--enable-http2": ("kubebuilder", "drop it: kubeloop's metrics, probe and webhook servers speak HTTP/1.1 only "
                                      "(kubebuilder's default, since the HTTP/2 rapid-reset CVE-2023-44487)"),
    "--webhook-cert-path": ("kubebuilder", _CERT_DIR),
    "--webhook-cert-name": ("kubebuilder", _CERT_DIR),
    "--webhook-cert-key": ("kubebuilder", _CERT_DIR),
}


# Peer flags that take a value (what follows them is not kubeloop run's TARGET).
TAKE_VALUES = frozenset({"-m", "--module", "-p", "--priority", "-P", "--peering", "-L", "--liveness", "--log-refkey",
                         "--metrics-addr", "--zap-log-level", "--zap-encoder", "--zap-stacktrace-level",
                         "--zap-time-encoding", "--metrics-cert-path", "--metrics-cert-name", "--metrics-cert-key",
                         "--webhook-cert-path", "--webhook-cert-name", "--webhook-cert-key"})


def explain(exc: click.NoSuchOption) -> click.NoSuchOption:
    """``exc`` with kubeloop's spelling when its option is a peer's, else ``exc`` itself."""
    known = PEER_FLAGS.get(exc.option_name)
    if known is None:
        return exc
    whose, ours = known
    return click.NoSuchOption(exc.option_name, f"{exc.option_name} is {whose}'s flag; {ours}",
                              ctx=exc.ctx)


def accepted_options() -> list[click.Option]:
    """Kopf's spellings of kubeloop's defaults (hidden from --help, which shows kubeloop's own)."""
    return [
        click.Option(["--all-namespaces", "-A", "all_namespaces"], is_flag=True, default=False, hidden=True),
        click.Option(["--standalone", "standalone"], is_flag=True, default=False, hidden=True),
    ]


def check_accepted(values: dict[str, object], added: set[str]) -> None:
    """Refuses a Kopf spelling that contradicts the flags given with it, and drops it from ``values``;
    ``added``: the names of ``accepted_options()`` the command has (an operator's own setting wins)."""
    if "all_namespaces" in added and values.pop("all_namespaces", False) and values.get("namespace"):
        raise click.UsageError("-A/--all-namespaces (Kopf's) and --namespace contradict each other: kubeloop "
                               "watches every namespace unless --namespace is given; drop one of them")
    if "standalone" in added and values.pop("standalone", False) and (
            values.get("leader_elect") or values.get("shards") != "off"):
        raise click.UsageError("--standalone (Kopf's) contradicts --leader-elect/--shards: kubeloop runs "
                               "standalone unless one of those is given; drop one of them")
    for name in added:
        values.pop(name, None)
