"""An operator's webhooks at run time and in its manifests: the server, the certificates, the
configurations and the CRD conversion stanzas.

- :class:`WebhookOptions` says where the API server reaches the process: a URL
  (``https://127.0.0.1:9443``, for ``kubeloop run`` against a local cluster, the default) or a Service
  (``service=``, in a cluster). The serving certificate names whichever it is.
- :func:`webhook_manifests` are the configurations and CRD patches for a set of hooks; ``kubeloop
  generate`` emits them without a ``caBundle`` (or with cert-manager's annotation), and
  :meth:`WebhookRuntime.start` applies them *with* the process's ``caBundle`` (server-side apply, the
  operator's field manager, forced: the process's CA is the one that must be trusted).
- :func:`webhook_permissions` is exactly what that start needs: ``get`` and ``patch`` of those
  configurations and CRDs, by name (a local run gives back the in-cluster endpoint it replaced), and, in
  the operator's namespace, ``get``/``patch`` of the CA Secret, by name (:mod:`kubeloop.webhooks.shared_ca`).
  No hooks, no permissions.
- Every replica runs a server (admission is not leader work); :attr:`WebhookRuntime.ready` is true once
  the certificate is loaded, the listener is up and the ``caBundle`` is written.
"""

from __future__ import annotations

import ipaddress
import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from kubeloop.client import ApiError, Client, Forbidden, Invalid, NotFound
from kubeloop.webhooks.hooks import Hooks
from kubeloop.webhooks.manifests import (
    CERT_MANAGER_ANNOTATION,
    Endpoint,
    conversion_stanza,
    mutating_configuration,
    validating_configuration,
)

# Certificates (cryptography, ~70 ms of imports) and the server are imported where a webhook is
# actually served: every `kubeloop run` imports this module (the manager's options), few serve hooks.
if TYPE_CHECKING:
    from kubeloop.webhooks.cert_dir import MountedCerts
    from kubeloop.webhooks.certs import CertAuthority, WebhookCerts
    from kubeloop.webhooks.server import WebhookServer

log = logging.getLogger(__name__)

DEFAULT_PORT = 9443  # controller-runtime's; the Service maps 443 to it
# Seconds a replica reached through a Service keeps answering after it is asked to stop: the endpoints
# controller drops a terminating pod at once, but the API server's resolver and kube-proxy follow a little
# later. Well inside the generated Deployment's terminationGracePeriodSeconds (10).
DEFAULT_SERVICE_DRAIN = 3.0


Isolation = Literal["auto", "process", "thread", "loop"]
ISOLATIONS: dict[str, str] = {
    "process": "a process of its own (kubeloop/webhooks/process.py): answers wait for nothing of the "
               "operator's, not even its GIL; every hook must be loop-free and picklable",
    "thread": "a thread of the operator's process (kubeloop/webhooks/server.py): loop-free hooks answer "
              "while a reconcile holds the loop, sharing the GIL with it; the others run on the loop",
    "loop": "the operator's event loop: every answer waits for the loop",
    "auto": "process when every hook can go there, else thread",
}


@dataclass(frozen=True)
class WebhookOptions:
    """Where the webhook server listens and how the API server reaches it.

    ``service`` (with ``namespace``): the Service form, in a cluster. Otherwise the URL form
    ``https://<url_host or host>:<port>``: the local control plane calls the process directly.
    ``url_port``: the port in that URL when the API server reaches the process through something listening
    elsewhere (a tunnel, a proxy in front of several processes); default: the port it listens on.
    ``drain_seconds``: how long the server keeps answering after a stop is asked (readiness already false);
    default 3 s in the Service form, none in the URL form.
    ``namespace_selector``: replaces the default (every namespace but the operator's and kube-system),
    e.g. one test's namespace. ``cert_dir``: serve the certificate mounted there
    (:mod:`kubeloop.webhooks.cert_dir`) instead of making one.
    """

    host: str = "127.0.0.1"
    port: int = DEFAULT_PORT
    url_host: str | None = None
    url_port: int | None = None
    service: str | None = None
    namespace: str | None = None  # the operator's (the Service's) namespace, excluded by the default selector
    namespace_selector: dict[str, Any] | None = None
    cert_dir: str | None = None  # serve tls.crt/tls.key from here (cert-manager); no caBundle is written
    # Appended to the configurations' names: the test kit gives each test session its own, so that two
    # sessions on one cluster do not point each other's admission at their own servers.
    configuration_suffix: str = ""
    # Where the server and its handlers run (see ISOLATIONS): "auto" is a process of its own when every
    # hook can go there (loop-free, picklable), else a thread of the operator's process.
    isolation: Isolation = "auto"
    drain_seconds: float | None = None

    @property
    def drain(self) -> float:
        if self.drain_seconds is not None:
            return self.drain_seconds
        return DEFAULT_SERVICE_DRAIN if self.service else 0.0

    def endpoint(self, port: int | None = None) -> Endpoint:
        if self.service:
            if not self.namespace:
                raise ValueError(f"webhook service {self.service!r} needs its namespace (--webhook-namespace)")
            return Endpoint(service=self.service, namespace=self.namespace)
        host = self.url_host or ("127.0.0.1" if self.host in ("", "0.0.0.0", "::") else self.host)
        return Endpoint(url=f"https://{host}:{self.url_port or port or self.port}")

    def certificate_names(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """(DNS names, IP addresses) the serving certificate must name."""
        if self.service:
            from kubeloop.webhooks.certs import service_dns_names

            return service_dns_names(self.service, str(self.namespace)), ("127.0.0.1",)
        host = self.endpoint().url.split("//", 1)[1].rsplit(":", 1)[0]  # type: ignore[union-attr]
        try:
            ipaddress.ip_address(host)
        except ValueError:
            return (host,), ("127.0.0.1",)
        return (), tuple(dict.fromkeys((host, "127.0.0.1")))


def configuration_names(operator: str, suffix: str = "") -> dict[str, str]:
    """The names of an operator's webhook configurations, by kind."""
    return {"ValidatingWebhookConfiguration": f"{operator}-validating{suffix}",
            "MutatingWebhookConfiguration": f"{operator}-mutating{suffix}"}


def webhook_manifests(operator: str, hooks: Hooks, options: WebhookOptions, *, ca_bundle: str | None = None,
                      cert_manager_certificate: str | None = None, port: int | None = None
                      ) -> list[dict[str, Any]]:
    """The webhook configurations (one per kind in use) and the CRD conversion patches for ``hooks``."""
    endpoint, names, out = options.endpoint(port), configuration_names(operator, options.configuration_suffix), []
    for verb, build in (("validating", validating_configuration), ("mutating", mutating_configuration)):
        specs = [h.spec(options.namespace_selector) for h in hooks.admission if h.verb == verb]
        if specs:
            kind = f"{verb.capitalize()}WebhookConfiguration"
            # Run outside any namespace (locally), only kube-system is excluded by default.
            out.append(build(names[kind], specs, endpoint, operator_namespace=options.namespace or "kube-system",
                             ca_bundle=ca_bundle, cert_manager_certificate=cert_manager_certificate))
    for conv in hooks.conversions:
        meta: dict[str, Any] = {"name": conv.crd_name}
        if cert_manager_certificate:
            meta["annotations"] = {CERT_MANAGER_ANNOTATION: cert_manager_certificate}
        out.append({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
                    "metadata": meta, "spec": {"conversion": conversion_stanza(endpoint, conv.path, ca_bundle)}})
    return out


def webhook_namespaced_permissions(operator: str, hooks: Hooks) -> list[Any]:
    """In the operator's namespace: read and fill the Secret the replicas share their CA through."""
    from kubeloop.resources.rbac import Permission
    from kubeloop.webhooks.shared_ca import secret_name

    return [Permission("", "secrets", ("get", "patch"), names=(secret_name(operator),))] if hooks else []


def webhook_permissions(operator: str, hooks: Hooks) -> list[Any]:
    """``get``/``patch`` of the operator's own configurations and converted CRDs, by name; none without hooks."""
    from kubeloop.resources.rbac import Permission  # resources is a sibling layer; imported where used

    names = configuration_names(operator)
    # get: a local run reads what it replaces, to give it back when it stops (see WebhookRuntime)
    out = [Permission("admissionregistration.k8s.io", f"{verb}webhookconfigurations", ("get", "patch"),
                      namespaced=False, names=(names[f"{verb.capitalize()}WebhookConfiguration"],))
           for verb in ("validating", "mutating") if any(h.verb == verb for h in hooks.admission)]
    if hooks.conversions:
        out.append(Permission("apiextensions.k8s.io", "customresourcedefinitions", ("get", "patch"),
                              namespaced=False, names=tuple(c.crd_name for c in hooks.conversions)))
    return out


class WebhookSetupError(RuntimeError):
    """The webhook configurations could not be written at start; the message says what to do."""


class WebhookRuntime:
    """Serves an operator's hooks and writes its ``caBundle`` into their configurations at start."""

    def __init__(self, operator: str, hooks: Hooks, options: WebhookOptions) -> None:
        self.operator, self.hooks, self.options = operator, hooks, options
        self.certs: WebhookCerts | MountedCerts | None = None  # made by start(): the CA may be shared
        self.server: WebhookServer | None = None
        self.installed = False
        self._client: Client | None = None
        # (kind, name) → what a local run (URL form) replaced, given back when it stops: a CRD's conversion
        # stanza, a webhook configuration's webhooks.
        self._replaced: dict[tuple[str, str], Any] = {}

    @property
    def ready(self) -> bool:
        """Certificate loaded, listener up, ``caBundle`` written."""
        return self.server is not None and self.server.ready and self.installed

    def manifests(self) -> list[dict[str, Any]]:
        """What :meth:`start` applies: the configurations and CRD stanzas with this process's CA."""
        return webhook_manifests(self.operator, self.hooks, self.options,
                                 ca_bundle=self.certs.ca_bundle_b64 if self.certs else None,
                                 port=self.server.port if self.server else None)

    def _certs(self, ca: CertAuthority | None) -> WebhookCerts | MountedCerts:
        from kubeloop.webhooks.cert_dir import CertDirError, MountedCerts
        from kubeloop.webhooks.certs import WebhookCerts

        if not self.options.cert_dir:
            dns, ips = self.options.certificate_names()
            return WebhookCerts(dns, ips, ca=ca)
        try:
            mounted = MountedCerts(self.options.cert_dir)
            mounted.reload()  # a bad or missing pair fails the start, naming the flag and the file
        except CertDirError as exc:
            raise WebhookSetupError(str(exc)) from exc
        return mounted

    def _serve(self, ca: CertAuthority | None) -> WebhookServer:
        from kubeloop.webhooks.process import ProcessWebhookServer, refusal
        from kubeloop.webhooks.server import WebhookServer

        self.certs = self._certs(ca)
        server = WebhookServer(self.certs, host=self.options.host, port=self.options.port,
                               threaded=self.options.isolation != "loop")
        for hook in self.hooks.admission:
            register = server.validating if hook.verb == "validating" else server.mutating
            register(hook.path, hook.server_handler(), failure_policy=hook.failure_policy,  # type: ignore[arg-type]
                     timeout_seconds=hook.timeout_seconds, loop_free=hook.loop_free)
        for conv in self.hooks.conversions:
            server.conversion(conv.path, conv.converter())
        if self.options.isolation not in ("auto", "process"):
            return server
        why = refusal(server.webhooks, server.converters)
        if why and self.options.isolation == "process":
            raise WebhookSetupError(f"--webhook-isolation process: {why}; or serve them from a thread "
                                    f"(--webhook-isolation thread)")
        if why:
            log.info("webhooks served from a thread of the operator's process, not one of their own: %s", why)
            return server
        alone = ProcessWebhookServer(self.certs, host=self.options.host, port=self.options.port)
        alone.webhooks, alone.converters = server.webhooks, server.converters
        return alone

    async def start(self, client: Client) -> None:
        """Listens, then applies the configurations with the CA. In a cluster (the Service form) the CA
        is the one every replica shares through the Secret ``<name>-webhook-ca``; locally, its own."""
        from kubeloop.webhooks.shared_ca import MissingCASecret, secret_name, shared_ca

        ca = None
        if self.options.service and not self.options.cert_dir:  # a mounted certificate needs no shared CA
            try:
                ca = await shared_ca(client, str(self.options.namespace), secret_name(self.operator))
            except (MissingCASecret, Forbidden) as exc:
                raise WebhookSetupError(f"cannot read the webhook CA: {exc}") from exc
        self.server = self._serve(ca)
        await self.server.start()
        self._client = client
        for obj in self.manifests():
            try:
                await self._remember(client, obj)
                await self._write(client, obj)
            except Forbidden as exc:
                # Its RBAC allows patching these objects by name, not creating them: they come with the
                # deployment (kubeloop generate). Locally, admin credentials create them on the fly.
                raise WebhookSetupError(
                    f"cannot write the caBundle into {obj['kind']} {obj['metadata']['name']}: {exc.message}. "
                    f"Apply the operator's manifests first (kubeloop generate all ... | kubectl apply "
                    f"--server-side -f -), or run with credentials that may create it") from exc
            except ApiError as exc:
                raise WebhookSetupError(
                    f"cannot point {obj['kind']} {obj['metadata']['name']} at this process's webhook server: "
                    f"{exc}") from exc
        self.installed = True
        pid = getattr(self.server, "pid", None)
        log.info("webhooks served on %s:%d (%d admission, %d conversion) from %s", self.options.host,
                 self.server.port, len(self.hooks.admission), len(self.hooks.conversions),
                 f"a process of their own (pid {pid})" if pid else "the operator's process")

    async def _write(self, client: Client, obj: dict[str, Any]) -> None:
        """Server-side applies ``obj``; if the object names the other form of endpoint (a ``service`` the
        generated manifests wrote with kubectl, where this process is reached by ``url``, or the other way
        round), the apply would merge both and the API server refuses it (422 "exactly one of url or
        service"): the other form is swapped for this one in one JSON patch, then the apply is repeated."""
        try:
            await client.apply(obj, field_manager=self.operator, force=True)
            return
        except Invalid as exc:
            swap = _swap_client_configs(obj)
            if not swap or "exactly one of url or service" not in exc.message:
                raise
        res = await client.resource_of(obj)
        log.info("%s %s named the other kind of webhook endpoint; pointing it at this process",
                 obj["kind"], obj["metadata"]["name"])
        await client.patch(res, obj["metadata"]["name"], swap, type="json", field_manager=self.operator)
        await client.apply(obj, field_manager=self.operator, force=True)

    async def _remember(self, client: Client, obj: dict[str, Any]) -> None:
        """A local run (URL form) keeps what it is about to replace when that named another server (the
        in-cluster Service): a CRD's conversion stanza, a configuration's webhooks. It gives them back at
        stop; otherwise a deployed operator's CRD would stay pointed at a process that is gone (its
        non-storage versions unreadable), and a ``Fail`` admission webhook would refuse every write it sees."""
        if self.options.service:
            return
        name = obj["metadata"]["name"]
        try:
            current = await client.get(await client.resource_of(obj), name)
        except NotFound:
            return
        except Forbidden as exc:  # RBAC generated before it had get: serve anyway, say what is not given back
            log.warning("cannot read %s %s (%s): it stays pointed at this process after it stops; regenerate "
                        "the operator's RBAC (kubeloop generate rbac) to have it given back", obj["kind"], name,
                        exc.message)
            return
        if obj["kind"] == "CustomResourceDefinition":
            stanza = current["spec"].get("conversion") or {}
            config = (stanza.get("webhook") or {}).get("clientConfig")
            if stanza.get("strategy") == "Webhook" and _names_service(config):
                self._replaced[(obj["kind"], name)] = stanza
        elif any(_names_service(h.get("clientConfig")) for h in current.get("webhooks") or ()):
            self._replaced[(obj["kind"], name)] = current["webhooks"]

    async def _give_back(self) -> None:
        """At stop, a local run points each object back at the server it replaced, unless someone else has
        rewritten it since (the JSON patch's tests of this process's URLs fail, and it is left as it is)."""
        assert self._client is not None
        mine = {(o["kind"], o["metadata"]["name"]): o for o in self.manifests()}
        for (kind, name), previous in self._replaced.items():
            ours = mine[(kind, name)]
            if kind == "CustomResourceDefinition":
                url = ours["spec"]["conversion"]["webhook"]["clientConfig"]["url"]
                patch = [{"op": "test", "path": "/spec/conversion/webhook/clientConfig/url", "value": url},
                         {"op": "replace", "path": "/spec/conversion", "value": previous}]
            else:
                patch = [{"op": "test", "path": f"/webhooks/{i}/clientConfig/url", "value": h["clientConfig"]["url"]}
                         for i, h in enumerate(ours["webhooks"])]
                patch.append({"op": "replace", "path": "/webhooks", "value": previous})
            try:
                await self._client.patch(await self._client.resource_of(ours), name, patch, type="json",
                                         field_manager=self.operator)
                log.info("%s %s handed back to the webhook Service it named before this run", kind, name)
            except (ApiError, OSError) as exc:  # taken over meanwhile, or the API server is gone: leave it
                log.info("%s %s left as it is (%s)", kind, name, exc)
        self._replaced.clear()

    async def stop(self) -> None:
        """Stops serving (the configurations stay: the next process, or another replica, serves them; a
        local run gives a converted CRD back to the in-cluster Service it found there)."""
        if self._replaced and self.installed:
            await self._give_back()
        self.installed = False
        if self.server is not None:
            await self.server.stop()
        if self.certs is not None:
            self.certs.close()


def _names_service(config: dict[str, Any] | None) -> bool:
    return bool((config or {}).get("service"))


def _swap_client_configs(obj: dict[str, Any]) -> list[dict[str, Any]]:
    """JSON patch operations that replace the other form of every clientConfig in ``obj`` (service ↔ url)
    by the one ``obj`` has, leaving the rest (a caBundle injected by cert-manager) in place. Webhooks are
    addressed by their index in ``obj``, guarded by a test of their name."""
    def swap(path: str, config: dict[str, Any]) -> list[dict[str, Any]]:
        form, other = ("url", "service") if config.get("url") else ("service", "url")
        return [{"op": "remove", "path": f"{path}/{other}"},
                {"op": "add", "path": f"{path}/{form}", "value": config[form]}]

    if obj["kind"] == "CustomResourceDefinition":
        config = obj["spec"]["conversion"]["webhook"]["clientConfig"]
        return swap("/spec/conversion/webhook/clientConfig", config)
    ops: list[dict[str, Any]] = []
    for i, hook in enumerate(obj.get("webhooks") or ()):
        ops.append({"op": "test", "path": f"/webhooks/{i}/name", "value": hook["name"]})
        ops += swap(f"/webhooks/{i}/clientConfig", hook["clientConfig"])
    return ops
