"""The framework's own settings of ``kubeloop run``, as one typed value: :class:`RunOptions`.

Declared the way an operator declares its settings (``kubeloop.settings``), and the command line is
derived from it the same way:

- Each field is one flag ``--field-name`` and environment variable ``KUBELOOP_FIELD_NAME``; its
  ``flag(...)`` gives the help text (and more spellings, and bounds), its default is the flag's default.
- The field's type makes the flag: ``bool`` an on/off flag that also takes ``=true``/``=false``,
  ``tuple[str, ...]`` a repeatable one, a ``Literal`` a choice, ``X | None`` unset by default. Bounds
  (``ge``, ``gt``, ``le``) make a click range, so that a bad value is refused naming its flag.
- A default that is a setting of the layer the flag configures (``ManagerOptions``, ``WebhookOptions``,
  the client's rate limit, the controllers' workers) is that layer's own, read from it: each is named
  once, where it takes effect.
- The ``webhook_*`` fields are the webhook server's: their flags exist only for an operator that may
  serve webhooks.

Like ``ControllerSpec`` it is frozen and checked at construction: an instance that exists can be run
(bounds and choices hold, leader election and sharding are not both on, the Lease timings are ordered).
``kubeloop run`` builds it from its flags and refuses, as a usage error, what the check refuses.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from dataclasses import dataclass
from typing import Any, Literal

import click

from kubeloop.cli.flags import leader_lease, option
from kubeloop.client.transport import BURST, QPS
from kubeloop.controller import DEFAULT_CONCURRENCY
from kubeloop.manager import ManagerOptions
from kubeloop.manager.manager import check_one_role
from kubeloop.reconcile import logs
from kubeloop.webhooks.runtime import DEFAULT_SERVICE_DRAIN, ISOLATIONS, WebhookOptions

_WEBHOOK = "webhook_"  # the prefix of the webhook server's fields


@dataclass(frozen=True)
class Flag:
    """How a field of ``RunOptions`` is shown and bounded on the command line."""

    help: str = ""
    aliases: tuple[str, ...] = ()  # more spellings, full flags ("-n")
    ge: float | None = None  # value >= ge
    gt: float | None = None  # value > gt
    le: float | None = None  # value <= le


def flag(default: Any, help: str = "", *, aliases: tuple[str, ...] = (), ge: float | None = None,
         gt: float | None = None, le: float | None = None) -> Any:
    """A field of ``RunOptions``: its default, its help text, more spellings and bounds."""
    return dataclasses.field(default=default, metadata={"flag": Flag(help, aliases, ge, gt, le)})


@dataclass(frozen=True)
class RunOptions:
    """Every framework flag of ``kubeloop run``, typed, with its default (the module docstring says how
    a field becomes a flag). ``kubeloop run`` hands it to the runner, which builds the client, the
    ``ManagerOptions`` (:meth:`manager_options`) and the logging from it."""

    kubeconfig: str | None = flag(
        None, "Path to a kubeconfig (default: $KUBECONFIG, ~/.kube/config, else in-cluster).")
    context: str | None = flag(None, "The kubeconfig context to use.")
    namespace: tuple[str, ...] = flag(
        (), "Watch only these namespaces (repeat or comma-separate); default all namespaces.", aliases=("-n",))
    leader_elect: bool = flag(ManagerOptions.leader_elect, "Run leader election so that only one replica acts.")
    leader_election_id: str | None = flag(None, f"Lease name (default: {leader_lease('<operator name>')}).")
    leader_election_namespace: str | None = flag(
        None, "Lease namespace (default: the pod's namespace or the kubeconfig's).")
    shards: Literal["off", "auto"] = flag(
        "off", "auto: every replica acts on its own share of the objects, found through one Lease per replica in "
               "the leader election namespace (docs/SHARDING.md); excludes --leader-elect.")
    lease_duration: float = flag(ManagerOptions.lease_duration,
                                 "Seconds a Lease (leader election, shards) lasts without renewal.", ge=1)
    renew_deadline: float = flag(ManagerOptions.renew_deadline,
                                 "Seconds a replica may fail to renew its Lease before it stops acting.", gt=0)
    retry_period: float = flag(ManagerOptions.retry_period, "Seconds between Lease renewals.", gt=0)
    metrics_bind_address: str = flag(ManagerOptions.metrics_bind_address, "Address of /metrics; 0 disables it.")
    health_probe_bind_address: str = flag(ManagerOptions.health_probe_bind_address,
                                          "Address of /healthz and /readyz; 0 disables.")
    log_level: logs.Level = flag(logs.LEVEL)
    log_format: logs.Format = flag(logs.FORMAT)
    max_concurrent_reconciles: int = flag(DEFAULT_CONCURRENCY, "Workers per controller.")
    resync_period: float | None = flag(
        None, "Seconds between full re-checks of every object (default: each controller's own).")
    qps: float = flag(QPS, "Client-side rate limit in requests/s (0 = none).")
    burst: int = flag(BURST, "Client-side burst, when --qps is set.")
    graceful_shutdown_timeout: float = flag(ManagerOptions.graceful_shutdown_timeout,
                                            "Seconds in-flight reconciles get to finish on SIGTERM.")
    watch_inactivity_timeout: float = flag(
        ManagerOptions.watch_inactivity_timeout, "Seconds a watch may stay silent (no event, no bookmark) before "
                                                 "it is taken for a dead connection and reopened.")
    install_crds: bool = flag(
        False, "Development: apply the CRDs of the operator's CustomResource models before starting (in "
               "production apply `kubeloop generate crd TARGET` instead).")
    debug: bool = flag(False, "Show the Python traceback of a start-up error.")
    # Where the webhook server listens and how the API server reaches it (see WebhookOptions).
    webhook_port: int = flag(
        WebhookOptions.port,
        "Port of the webhook server (operators with @validate/@mutate/convert); 0 picks a free one.", ge=0, le=65535)
    webhook_host: str = flag(
        WebhookOptions.host,
        "Address the webhook server binds (0.0.0.0 in a cluster, as the generated Deployment sets).")
    webhook_url_host: str | None = flag(
        None, "Host the API server calls, as https://HOST:PORT (default: --webhook-host, or 127.0.0.1 for "
              "0.0.0.0); used unless --webhook-service is set.")
    webhook_url_port: int | None = flag(
        None, "Port the API server calls in that URL when something listens there for this process (a tunnel, a "
              "proxy in front of several replicas); default: --webhook-port.", ge=1, le=65535)
    webhook_drain_seconds: float | None = flag(
        None, "Seconds the webhook server keeps answering after SIGTERM, not ready meanwhile, while the replica "
              f"leaves the Service's endpoints (default: {DEFAULT_SERVICE_DRAIN:g} with --webhook-service, else 0).",
        ge=0)
    webhook_service: str | None = flag(
        None, "In a cluster: the Service the API server calls instead of a URL (generated as <name>-webhook).")
    webhook_namespace: str | None = flag(
        None, "The operator's namespace, for the Service and the namespaceSelector that excludes it (default "
              "with --webhook-service: the pod's namespace).")
    webhook_isolation: Literal["auto", "process", "thread", "loop"] = flag(
        WebhookOptions.isolation,
        "Where the webhook server and its handlers run: " + "; ".join(f"{k}: {v}" for k, v in ISOLATIONS.items())
        + ".")
    webhook_cert_dir: str | None = flag(
        None, "Serve tls.crt/tls.key from this directory (a cert-manager Secret mounted there), reloaded when "
              "they change, instead of making a certificate; no caBundle is written (cert-manager's cainjector "
              "does: generate with --cert-manager-certificate).")

    def __post_init__(self) -> None:
        object.__setattr__(self, "namespace", tuple(self.namespace))  # a list given by a caller stays unshared
        for f in dataclasses.fields(self):
            _check(f.name, getattr(self, f.name), _HINTS[f.name], f.metadata["flag"])
        check_one_role(self.leader_elect, self.shards == "auto")
        if not self.retry_period < self.renew_deadline < self.lease_duration:
            raise ValueError("--retry-period < --renew-deadline < --lease-duration is required (got "
                             f"{self.retry_period}, {self.renew_deadline}, {self.lease_duration})")

    @property
    def namespaces(self) -> list[str] | None:
        """The namespaces to watch (``--namespace`` repeated or comma-separated); None: all of them."""
        names = [n.strip() for v in self.namespace for n in v.split(",") if n.strip()]
        return names or None

    def webhook_options(self, default_namespace: str) -> WebhookOptions:
        """The ``--webhook-*`` flags: the URL form (local, the default) or the Service form (in a cluster,
        where the namespace defaults to ``default_namespace``, the pod's)."""
        namespace = self.webhook_namespace or (default_namespace if self.webhook_service else None)
        return WebhookOptions(host=self.webhook_host or WebhookOptions.host, port=self.webhook_port,
                              url_host=self.webhook_url_host, url_port=self.webhook_url_port,
                              service=self.webhook_service, namespace=namespace, cert_dir=self.webhook_cert_dir,
                              drain_seconds=self.webhook_drain_seconds, isolation=self.webhook_isolation)

    def manager_options(self, operator: str, default_namespace: str) -> ManagerOptions:
        """The manager's options for ``operator``, its client's namespace being ``default_namespace``."""
        return ManagerOptions(
            namespaces=self.namespaces,
            leader_elect=self.leader_elect,
            leader_election_id=self.leader_election_id or leader_lease(operator),
            leader_election_namespace=self.leader_election_namespace,
            metrics_bind_address=self.metrics_bind_address,
            health_probe_bind_address=self.health_probe_bind_address,
            graceful_shutdown_timeout=self.graceful_shutdown_timeout,
            watch_inactivity_timeout=self.watch_inactivity_timeout,
            webhook=self.webhook_options(default_namespace),
            shards=self.shards == "auto",
            lease_duration=self.lease_duration, renew_deadline=self.renew_deadline, retry_period=self.retry_period,
        )


_HINTS = typing.get_type_hints(RunOptions)


def _check(name: str, value: Any, hint: Any, spec: Flag) -> None:
    flag_name = "--" + name.replace("_", "-")
    choices = _choices(_scalar(hint))
    if choices and value not in choices:
        raise ValueError(f"{flag_name}: {value!r} is not one of {', '.join(choices)}")
    if value is None or isinstance(value, bool) or not isinstance(value, int | float):
        return
    bounds = [(spec.ge, value >= (spec.ge or 0), ">="), (spec.gt, value > (spec.gt or 0), ">"),
              (spec.le, value <= (spec.le or 0), "<=")]
    if any(bound is not None and not holds for bound, holds, _ in bounds):
        wanted = " and ".join(f"{sign} {bound}" for bound, _, sign in bounds if bound is not None)
        raise ValueError(f"{flag_name}: {value} is not {wanted}")


def _choices(hint: Any) -> tuple[str, ...]:
    return typing.get_args(hint) if typing.get_origin(hint) is Literal else ()


def _scalar(hint: Any) -> Any:
    """``X`` of ``X | None``."""
    rest = [a for a in typing.get_args(hint) if a is not type(None)]
    return rest[0] if typing.get_origin(hint) in (typing.Union, types.UnionType) and len(rest) == 1 else hint


def _click_type(hint: Any, spec: Flag) -> Any:
    """The click type of a field (None: click's text)."""
    kind = _scalar(hint)
    bounded = spec.ge is not None or spec.gt is not None or spec.le is not None
    low = spec.ge if spec.ge is not None else spec.gt
    if kind is int:
        whole = (None if low is None else int(low), None if spec.le is None else int(spec.le))
        return click.IntRange(*whole, min_open=spec.gt is not None) if bounded else int
    if kind is float:
        return click.FloatRange(low, spec.le, min_open=spec.gt is not None) if bounded else float
    choices = _choices(kind)
    return click.Choice(choices) if choices else None


def framework_options(webhooks: bool = False) -> list[click.Option]:
    """The flags of ``RunOptions``' fields, in their order; the ``--webhook-*`` ones only with ``webhooks``."""
    return [_option(f, _HINTS[f.name]) for f in dataclasses.fields(RunOptions)
            if webhooks or not f.name.startswith(_WEBHOOK)]


def _option(f: dataclasses.Field[Any], hint: Any) -> click.Option:
    spec: Flag = f.metadata["flag"]
    kw: dict[str, Any] = {"help": spec.help or None}
    if hint is bool:
        kw.update(is_flag=True)
    elif typing.get_origin(hint) is tuple:
        kw.update(multiple=True)
    elif (kind := _click_type(hint, spec)) is not None:
        kw.update(type=kind)
    if not kw.get("multiple"):  # a repeatable flag keeps click's own default: given nowhere, no values
        kw.update(default=f.default)
    return option(f.name.replace("_", "-"), spec.aliases, **kw)


def from_values(values: dict[str, Any]) -> RunOptions:
    """``RunOptions`` from click's values (by field name; the webhook flags may be absent), or the check's
    refusal as click's usage error."""
    try:
        return RunOptions(**values)
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None
