"""Run an Operator in a test the way it runs in a cluster: its CRDs installed, its generated RBAC
bound to a ServiceAccount, and its client authenticated *as that ServiceAccount* — so a missing
permission fails the test with a real 403, and the RBAC audit can compare used with granted.

The cluster-scoped objects a run makes (ClusterRoles, ClusterRoleBindings, webhook configurations) are
the test session's own (``kubeloop.testing.session``): named with its suffix, labelled, deleted when the
last run using them ends. CRDs are shared, and a CRD the test kit did not install is never changed."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import socket
import tempfile
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kubeloop.builder import Operator
from kubeloop.client import ApiError, Client, NotFound
from kubeloop.client.wait import wait_for
from kubeloop.controller import DEFAULT_CONCURRENCY
from kubeloop.manager import Manager, ManagerOptions
from kubeloop.resources import RbacAudit, crds_for, render_rbac
from kubeloop.testing.session import CRD_LABEL, FIELD_MANAGER, current
from kubeloop.webhooks.runtime import WebhookOptions, WebhookRuntime, webhook_manifests

log = logging.getLogger(__name__)


@dataclass
class RunningOperator:
    """An operator started by ``run_operator``: its manager, its client (authenticated as its
    ServiceAccount, recording every permission it uses) and the RBAC objects it was given.
    """

    manager: Manager
    client: Client  # authenticated as the operator's ServiceAccount, recording what it uses
    rbac: list[dict[str, Any]] = field(default_factory=list)
    # (group, resource) of the objects a deployment ships and the operator only patches by name (its
    # webhook configurations, its converted CRDs). The client records "create" next to every
    # server-side apply, but RBAC only checks it when the object is missing, which these never are.
    shipped: frozenset[tuple[str, str]] = frozenset()

    async def events_sent(self) -> None:
        """Waits until every Event the operator has queued so far has reached the API server. Events are
        sent in the background (``Context.event``): a test asserting that an Event was *not* recorded calls
        this first; one waiting for an Event uses ``kubeloop.testing.wait_for_events``."""
        await self.manager.events.flush()

    def audit(self) -> Any:
        """The RBAC audit of what this run used against what was generated."""
        assert self.client.used_permissions is not None
        used = {u for u in self.client.used_permissions
                if not (u.verb == "create" and (u.group, u.resource) in self.shipped)}
        return RbacAudit.from_manifests(self.rbac).check(used)


class ForeignCRD(RuntimeError):
    """A CRD the test needs exists on the cluster, was not installed by the test kit, and differs."""


async def install_crds(admin: Client, operator: Operator) -> None:
    """Applies the CRDs of ``operator``'s models and waits until each is Established and served.

    A CRD that exists and was not installed by the test kit (a cluster someone uses) is left as it is
    when it already says what the test needs, and is never changed otherwise: ``ForeignCRD`` says so."""
    session = current()
    for crd in crds_for(operator.custom_resources()):
        name = crd["metadata"]["name"]
        live = await _get(admin, "customresourcedefinitions", name)
        if live is not None and not _installed_by_test_kit(live):
            await _check_same(admin, crd, live)
        else:
            if live is None:
                session.crds.add(name)
            body = {**crd, "metadata": {**crd["metadata"],
                                        "labels": {**(crd["metadata"].get("labels") or {}), CRD_LABEL: "true"}}}
            await admin.apply(body, field_manager=FIELD_MANAGER, force=True)
        await wait_for(admin, "customresourcedefinitions", crd["metadata"]["name"], timeout=30,
                       predicate=lambda o: any(c["type"] == "Established" and c["status"] == "True"
                                               for c in (o.get("status") or {}).get("conditions") or []),
                       description=f"CRD {crd['metadata']['name']} to be Established")
    await admin.registry.refresh()


async def _get(admin: Client, resource: str, name: str) -> dict[str, Any] | None:
    try:
        return await admin.get(resource, name)
    except NotFound:
        return None


def _installed_by_test_kit(crd: dict[str, Any]) -> bool:
    meta = crd["metadata"]
    return ((meta.get("labels") or {}).get(CRD_LABEL) == "true"
            or any(m.get("manager") == FIELD_MANAGER for m in meta.get("managedFields") or ()))


async def _check_same(admin: Client, crd: dict[str, Any], live: dict[str, Any]) -> None:
    """Raises ``ForeignCRD`` unless applying ``crd`` would leave ``live`` as it is (asked of the API server
    with a dry run, so that its defaults count)."""
    would = await admin.apply(crd, field_manager=FIELD_MANAGER, force=True, dry_run=True)
    if would["spec"] != live["spec"]:
        keys = set(would["spec"]) | set(live["spec"])
        differ = sorted(k for k in keys if would["spec"].get(k) != live["spec"].get(k))
        raise ForeignCRD(f"CRD {crd['metadata']['name']} exists on this cluster, was not installed by kubeloop's "
                         f"test kit, and differs from what the test needs (spec: {', '.join(differ)}): the test "
                         "kit changes no object it did not make. Run the tests on a cluster of their own (unset "
                         "KUBELOOP_TEST_KUBECONFIG), or apply the operator's CRDs there yourself")


@contextlib.asynccontextmanager
async def run_operator(cluster: Any, admin: Client, operator: Operator, namespace: str, *,
                       options: ManagerOptions | None = None, concurrency: int = DEFAULT_CONCURRENCY,
                       watch_namespaces: list[str] | None | bool = True,
                       as_admin: bool = False) -> AsyncIterator[RunningOperator]:
    """Installs the operator's CRDs and RBAC (ServiceAccount ``operator.name`` in ``namespace``), runs it
    in-process under those credentials until the block ends, then stops it gracefully.

    ``watch_namespaces``: True (default) watches only ``namespace`` so tests sharing a cluster do not
    see each other's objects; None watches all namespaces; or a list.

    An operator with webhooks (``@op.validate``, ``@op.mutate``, ``op.convert``) serves them on
    127.0.0.1 (a free port) and installs its configurations against the local control plane, limited to
    the watched namespaces (so other tests are not admitted by it); they are deleted when the block ends.
    With ``options`` given, its ``webhook`` settings are used as they are; with ``options.shards`` (or
    ``leader_elect``) the generated Role covers the Leases in ``options.leader_election_namespace``,
    which must then be ``namespace`` (the Role is made there, as ``kubeloop generate`` makes it).
    A test then creates a bad object and sees the rejection.

    The ClusterRole, ClusterRoleBinding and webhook configurations carry the session's suffix
    (``<name>-t<id>``, see ``kubeloop.testing.session``), so two sessions on one cluster keep their own."""
    session = current()
    await install_crds(admin, operator)
    opts = dataclasses.replace(options) if options is not None else ManagerOptions(
        metrics_bind_address="127.0.0.1:0", health_probe_bind_address="127.0.0.1:0", graceful_shutdown_timeout=5,
        freeze_gc=False, leader_election_namespace=namespace)
    if options is None:
        opts.namespaces = [namespace] if watch_namespaces is True else (watch_namespaces or None)
        selector = ({"matchExpressions": [{"key": "kubernetes.io/metadata.name", "operator": "In",
                                           "values": sorted(opts.namespaces)}]} if opts.namespaces else None)
        opts.webhook = WebhookOptions(port=_free_port(), namespace=namespace, namespace_selector=selector)
    opts.webhook = dataclasses.replace(opts.webhook, configuration_suffix=session.suffix)
    if (opts.shards or opts.leader_elect) and opts.leader_election_namespace not in (None, namespace):
        raise ValueError(f"options.leader_election_namespace={opts.leader_election_namespace!r}: the generated "
                         f"Role grants Leases in {namespace!r} only; set it to {namespace!r}")
    await _refuse_foreign_conversions(admin, operator)
    rbac = session.rename(render_rbac(operator.name, namespace, operator.permissions(),
                                      operator.namespaced_permissions(), events="cluster",
                                      leader_election=opts.leader_elect, shards=opts.shards))
    configurations = [session.mark(obj) for obj in webhook_manifests(operator.name, operator.hooks, opts.webhook)
                      if obj["kind"] != "CustomResourceDefinition"]
    held = [*rbac, *configurations]
    for obj in held:
        session.acquire(obj)
    earlier: dict[str, dict[str, Any]] = {}
    try:
        for obj in rbac:
            await admin.apply(obj, field_manager=FIELD_MANAGER, force=True)
        earlier = await _live_conversions(admin, operator)
        # As a deployment would: the configurations exist (without a caBundle) before the operator runs,
        # and its RBAC lets it patch them by name, not create them.
        for obj in configurations:
            await admin.apply(obj, field_manager=FIELD_MANAGER, force=True)
        async with _running_as(cluster, admin, operator, namespace, opts, concurrency, as_admin) as running:
            running.rbac = rbac
            yield running
    finally:
        # Nothing else in the cluster may be sent to a server that is gone, or bound to a namespace that is.
        await session.release(admin, held)
        await _restore_conversions(admin, earlier)


@contextlib.asynccontextmanager
async def _running_as(cluster: Any, admin: Client, operator: Operator, namespace: str, opts: ManagerOptions,
                      concurrency: int, as_admin: bool) -> AsyncIterator[RunningOperator]:
    if as_admin:
        client = await Client.from_kubeconfig(str(cluster.kubeconfig), record_permissions=True,
                                              field_manager=operator.name)
    else:
        with tempfile.TemporaryDirectory() as tmp:
            path = await asyncio.to_thread(cluster.service_account_kubeconfig, namespace, operator.name,
                                           Path(tmp) / "kubeconfig")
            # The kubeconfig is read now; its token stays in memory only.
            client = await Client.from_kubeconfig(str(path), record_permissions=True,
                                                  field_manager=operator.name)
    try:
        async with operator_running(operator, client, options=opts, concurrency=concurrency) as manager:
            if manager.webhooks is not None:
                await _until_called(admin, manager.webhooks, opts.namespaces or [namespace])
            yield RunningOperator(manager, client, [], _shipped(operator))
    finally:
        await client.close()


@contextlib.asynccontextmanager
async def operator_running(operator: Operator, client: Client, *, namespaces: list[str] | None = None,
                           options: ManagerOptions | None = None,
                           concurrency: int = DEFAULT_CONCURRENCY) -> AsyncIterator[Manager]:
    """Runs ``operator`` in-process on ``client`` as it is (no CRDs or RBAC installed: see
    ``run_operator`` for that), from when its caches are synced until the block ends, then stops it
    gracefully. For a fake API server (``kubeloop.testing.apiserver``) as much as a real one.
    ``namespaces``: the ones to watch (default all), unless ``options`` says it all."""
    opts = options or ManagerOptions(namespaces=namespaces, metrics_bind_address="127.0.0.1:0",
                                     health_probe_bind_address="127.0.0.1:0", graceful_shutdown_timeout=5,
                                     freeze_gc=False, webhook=WebhookOptions(port=0))  # any free port
    manager = Manager(client, opts, name=operator.name)
    manager.add_operator(operator, concurrency)
    task = asyncio.create_task(manager.run())
    try:
        started = asyncio.ensure_future(manager.started.wait())
        done, _ = await asyncio.wait({started, task}, timeout=60, return_when=asyncio.FIRST_COMPLETED)
        if task in done:
            started.cancel()
            task.result()
            raise RuntimeError(f"operator {operator.name} stopped before it started")
        if not done:
            raise TimeoutError(f"operator {operator.name} did not start within 60 s (caches not synced?)")
        yield manager
    finally:
        manager.stop()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(task, 30)


async def _until_called(admin: Client, webhooks: WebhookRuntime, namespaces: list[str],
                        timeout: float = 15.0) -> None:
    """Waits until the API server calls each admission webhook, so that a test's first request is
    admitted by it (the API server picks new configurations up asynchronously). The probes are dry-run
    creates in the test's namespace: nothing is stored, but handlers do see them (``req.dry_run``).
    A validating webhook is only called for an object the schema accepts: for a model that cannot be
    built from its defaults, or a built-in kind, the wait gives up after ``timeout`` and says so."""
    assert webhooks.server is not None
    loop = asyncio.get_running_loop()
    for hook in webhooks.hooks.admission:
        if "CREATE" not in hook.operations:
            continue
        res, before = hook.resource, webhooks.server.answered[hook.path]
        body: dict[str, Any] = {"apiVersion": res.api_version, "kind": res.kind}
        if isinstance(hook.target, type):
            with contextlib.suppress(Exception):  # required fields: the minimal object will have to do
                body = hook.target().to_dict()
        body["metadata"] = {"generateName": "kubeloop-probe-",
                            **({"namespace": namespaces[0]} if res.namespaced else {})}
        deadline = loop.time() + timeout
        while webhooks.server.answered[hook.path] == before:
            if loop.time() > deadline:
                log.warning("the API server did not call webhook %s within %gs; the test may race it",
                            hook.path, timeout)
                break
            with contextlib.suppress(ApiError):
                await admin.create(body, dry_run=True, resource=res)
            await asyncio.sleep(0.1)


def _free_port() -> int:
    """A port free now, for the webhook server: the configurations installed before it starts name it."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _shipped(operator: Operator) -> frozenset[tuple[str, str]]:
    kinds = set()
    if operator.hooks.admission:
        kinds |= {("admissionregistration.k8s.io", "validatingwebhookconfigurations"),
                  ("admissionregistration.k8s.io", "mutatingwebhookconfigurations")}
    if operator.hooks.conversions:
        kinds.add(("apiextensions.k8s.io", "customresourcedefinitions"))
    return frozenset(kinds)


async def _live_conversions(admin: Client, operator: Operator) -> dict[str, dict[str, Any]]:
    """The webhook conversion stanzas of the operator's converted CRDs before this run, by CRD name:
    another run of the same CRD's operator may still be serving them (nested runs in one test)."""
    found = {}
    for conv in operator.hooks.conversions:
        crd = await admin.get("customresourcedefinitions", conv.crd_name)
        if crd["spec"].get("conversion", {}).get("strategy") == "Webhook":
            found[conv.crd_name] = crd["spec"]["conversion"]
    return found


async def _restore_conversions(admin: Client, earlier: dict[str, dict[str, Any]]) -> None:
    """Points each CRD back at the server it named before this run, so that an enclosing run of the same
    operator keeps converting once this one is gone (this run's server is)."""
    for name, conversion in earlier.items():
        with contextlib.suppress(ApiError):  # teardown: the CRD may be gone, which is fine
            await admin.patch("customresourcedefinitions", name,
                              [{"op": "replace", "path": "/spec/conversion", "value": conversion}], type="json")


async def _refuse_foreign_conversions(admin: Client, operator: Operator) -> None:
    """The operator's conversion webhook is written into its CRDs: never into one the test kit did not
    install (it would send a cluster's conversions to this test's server)."""
    for conv in operator.hooks.conversions:
        crd = await _get(admin, "customresourcedefinitions", conv.crd_name)
        if crd is not None and not _installed_by_test_kit(crd):
            raise ForeignCRD(f"CRD {conv.crd_name} was not installed by kubeloop's test kit: running {operator.name} "
                             "in a test would point its conversion webhook at the test's own server. Run the tests "
                             "on a cluster of their own (unset KUBELOOP_TEST_KUBECONFIG)")

