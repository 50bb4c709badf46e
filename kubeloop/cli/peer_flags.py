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

# flag → (whose, what to do instead)
PEER_FLAGS: dict[str, tuple[str, str]] = {
    "--verbose": ("Kopf", "use --log-level debug"),
    "--quiet": ("Kopf", "use --log-level warning"),
    "-q": ("Kopf", "use --log-level warning"),
    "--liveness": ("Kopf", "use --health-probe-bind-address ADDR (serves /healthz and /readyz)"),
    "--peering": ("Kopf", _LEADER),
    "-P": ("Kopf", _LEADER),
    "--priority": ("Kopf", "use --leader-elect (replicas have no priorities: the first to take the Lease acts)"),
    "--dev": ("Kopf", "drop it: kubeloop runs standalone by default; add --log-level debug for its logs"),
    "-m": ("Kopf", _TARGET),
    "--module": ("Kopf", _TARGET),
    "--metrics-addr": ("kubebuilder", "use --metrics-bind-address ADDR"),
    "--enable-leader-election": ("kubebuilder", "use --leader-elect"),
    "--zap-log-level": ("controller-runtime's zap", _LOG_LEVEL),
    "--zap-devel": ("controller-runtime's zap", "use --log-format human --log-level debug"),
    "--zap-encoder": ("controller-runtime's zap", "use --log-format json|human"),
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
