"""Informers, controllers, finalizers, owned children, leader election and metrics on the real API server."""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import replace

import aiohttp

from kubeloop import Context, Manager, Operator, Result
from kubeloop.cache import Cache
from kubeloop.client import Client, NotFound
from kubeloop.testing import wait_for, wait_for_deletion

from .conftest import echo, options, running


async def test_informer_lists_watches_and_indexes(kube_client: Client, namespace: str) -> None:
    await kube_client.create({"apiVersion": "v1", "kind": "ConfigMap",
                              "metadata": {"name": "before", "namespace": namespace}})
    cache = Cache(kube_client, [namespace], freeze_gc=False)
    informer = await cache.informer("configmaps")
    events: list[tuple[str, str, bool]] = []
    informer.subscribe(lambda e: events.append((e.type, e.object["metadata"]["name"], e.initial)))
    cache.start()
    try:
        await cache.wait_synced(30)
        assert ("added", "before", True) in events
        await kube_client.create({"apiVersion": "v1", "kind": "ConfigMap",
                                  "metadata": {"name": "after", "namespace": namespace}})
        await kube_client.patch("configmaps", "after", {"data": {"k": "v"}}, namespace)
        await kube_client.delete("configmaps", "after", namespace)
        for _ in range(100):
            if ("deleted", "after", False) in events:
                break
            await asyncio.sleep(0.05)
        assert [e for e in events if e[1] == "after"] == [
            ("added", "after", False), ("modified", "after", False), ("deleted", "after", False)]
        assert informer.store.get(f"{namespace}/after") is None
        assert len(informer.store.by_index("namespace", namespace)) == len(informer.store)
    finally:
        await cache.stop()


async def test_cache_drops_managed_fields_and_an_update_keeps_the_servers(kube_client: Client,
                                                                           namespace: str) -> None:
    """The cached copy has no managedFields (memory), the user's transform still runs after, and a PUT
    of that copy leaves the server's managedFields in place (the API server keeps them when omitted)."""
    await kube_client.create({"apiVersion": "v1", "kind": "ConfigMap", "data": {"k": "v"},
                              "metadata": {"name": "cm", "namespace": namespace}})
    await kube_client.apply({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {
        "name": "cm", "namespace": namespace, "labels": {"owner": "other"}}}, field_manager="other-owner")
    cache = Cache(kube_client, [namespace], freeze_gc=False)
    informer = await cache.informer("configmaps", transform=lambda o: {**o, "seen": True})
    cache.start()
    try:
        await cache.wait_synced(30)
        cached = informer.store.get(f"{namespace}/cm")
        assert cached is not None and cached["seen"] and "managedFields" not in cached["metadata"]
        body = {k: v for k, v in cached.items() if k != "seen"}
        updated = await kube_client.replace({**body, "data": {"k": "w"}})
        managers = {m["manager"] for m in updated["metadata"]["managedFields"]}
        assert "other-owner" in managers, managers  # another manager's fields survive our update
    finally:
        await cache.stop()
    kept = Cache(kube_client, [namespace], freeze_gc=False, strip_managed_fields=False)
    informer = await kept.informer("configmaps")
    kept.start()
    try:
        await kept.wait_synced(30)
        assert informer.store.get(f"{namespace}/cm")["metadata"]["managedFields"]
    finally:
        await kept.stop()


async def test_relist_after_410_loses_nothing(kube_cluster, kube_client: Client, namespace: str) -> None:
    """The API server restarts while the informer is away; its fresh watch cache answers the resume
    from the old resourceVersion with 410 Gone. The informer relists, and its store then matches the
    server exactly: what was deleted meanwhile is reported deleted, what was created is there."""
    cache = Cache(kube_client, [namespace], freeze_gc=False)
    informer = await cache.informer("configmaps")
    deleted: list[str] = []
    informer.subscribe(lambda e: deleted.append(e.object["metadata"]["name"]) if e.type == "deleted" else None)
    await kube_client.create({"apiVersion": "v1", "kind": "ConfigMap",
                              "metadata": {"name": "doomed", "namespace": namespace}})
    cache.start()
    await cache.wait_synced(30)
    watcher = informer.watchers[0]
    await informer.stop()  # the operator is cut off while the world changes
    await kube_client.delete("configmaps", "doomed", namespace)
    await kube_client.create({"apiVersion": "v1", "kind": "ConfigMap",
                              "metadata": {"name": "born", "namespace": namespace}})
    for i in range(30):  # move etcd's revision on, well past what the informer saw
        await kube_client.create({"apiVersion": "v1", "kind": "ConfigMap",
                                  "metadata": {"name": f"filler-{i}", "namespace": "default"}})
        await kube_client.delete("configmaps", f"filler-{i}", "default")
    await asyncio.to_thread(kube_cluster.restart_apiserver)
    relists = watcher.relists
    informer.start()
    try:
        for _ in range(400):
            if watcher.relists > relists and informer.store.get(f"{namespace}/born"):
                break
            await asyncio.sleep(0.05)
        assert watcher.relists == relists + 1, "the resume should have been refused with 410 and relisted"
        server = {o["metadata"]["name"] for o in (await kube_client.list("configmaps", namespace))["items"]}
        cached = {o["metadata"]["name"] for o in informer.store}
        assert cached == server and "doomed" in deleted
    finally:
        await cache.stop()


def echo_operator(calls: list[str]) -> Operator:
    """The README's example: an Echo makes a ConfigMap with its message, and reports in status."""
    op = Operator("echo")

    @op.reconcile("echoes.test.kubeloop.dev", owns=["configmaps"], resync=None)
    async def reconcile(obj: dict, ctx: Context) -> Result | None:
        calls.append(obj["metadata"]["name"])
        wanted = [] if obj["spec"].get("copies") == 0 else [{
            "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"{ctx.name}-echo"},
            "data": {"message": obj["spec"]["message"]}}]
        await ctx.apply_children(wanted)
        await ctx.patch_status({"observedGeneration": obj["metadata"]["generation"],
                                "conditions": ctx.condition("Ready", True, "Echoed")})
        return None

    return op


async def test_controller_owns_children_and_prunes(kube_client: Client, namespace: str, echo_crd: str) -> None:
    calls: list[str] = []
    manager = Manager(kube_client, options(namespace))
    manager.add_operator(echo_operator(calls))
    async with running(manager):
        await kube_client.create(echo("e1", namespace, "hello"))
        cm = await wait_for(kube_client, "configmaps", "e1-echo", namespace, timeout=20)
        assert cm["data"] == {"message": "hello"}
        ref = cm["metadata"]["ownerReferences"][0]
        assert ref["controller"] is True and ref["blockOwnerDeletion"] is True and ref["kind"] == "Echo"
        status = (await wait_for(kube_client, echo_crd, "e1", namespace, timeout=20,
                                 predicate=lambda o: o.get("status", {}).get("observedGeneration") == 1))["status"]
        assert status["conditions"][0]["type"] == "Ready"
        # Deleting the owned child wakes the owner (mapped by ownerReference UID): it comes back.
        await kube_client.delete("configmaps", "e1-echo", namespace)
        await wait_for(kube_client, "configmaps", "e1-echo", namespace, timeout=20)
        # A hand edit of the child is reverted on the next reconcile.
        await kube_client.patch("configmaps", "e1-echo", {"data": {"message": "tampered"}}, namespace)
        await wait_for(kube_client, "configmaps", "e1-echo", namespace, timeout=20,
                       predicate=lambda o: o.get("data", {}).get("message") == "hello")
        # Declarative children: no longer wanted → pruned.
        await kube_client.patch(echo_crd, "e1", {"spec": {"copies": 0}}, namespace)
        await wait_for_deletion(kube_client, "configmaps", "e1-echo", namespace, timeout=20)
    # Steady state writes nothing: the status patch is skipped when unchanged.
    assert calls.count("e1") >= 3


async def test_finalizer_added_first_and_removed_after_cleanup(kube_client: Client, namespace: str,
                                                               echo_crd: str) -> None:
    op = Operator("fin")
    cleaned: list[str] = []
    seen_finalizer_on_first_reconcile: list[bool] = []

    @op.reconcile(echo_crd, resync=None)
    async def reconcile(obj: dict, ctx: Context) -> None:
        seen_finalizer_on_first_reconcile.append("kubeloop.dev/fin" in (obj["metadata"].get("finalizers") or []))

    @op.finalize(echo_crd)
    async def cleanup(obj: dict, ctx: Context) -> None:
        cleaned.append(obj["metadata"]["name"])

    manager = Manager(kube_client, options(namespace))
    manager.add_operator(op)
    async with running(manager):
        await kube_client.create(echo("f1", namespace))
        await wait_for(kube_client, echo_crd, "f1", namespace, timeout=20,
                       predicate=lambda o: "kubeloop.dev/fin" in (o["metadata"].get("finalizers") or []))
        for _ in range(100):
            if seen_finalizer_on_first_reconcile:
                break
            await asyncio.sleep(0.05)
        assert seen_finalizer_on_first_reconcile[0] is True
        await kube_client.delete(echo_crd, "f1", namespace)
        await wait_for_deletion(kube_client, echo_crd, "f1", namespace, timeout=20)
        assert cleaned == ["f1"]


async def test_errors_retry_with_backoff_then_succeed(kube_client: Client, namespace: str,
                                                      echo_crd: str) -> None:
    op = Operator("flaky")
    attempts: list[float] = []

    @op.reconcile(echo_crd, resync=None)
    async def reconcile(obj: dict, ctx: Context) -> Result | None:
        attempts.append(asyncio.get_running_loop().time())
        if len(attempts) < 4:
            raise RuntimeError("transient")
        await ctx.patch_status({"seen": "ok"})
        return None

    manager = Manager(kube_client, options(namespace))
    for spec in op.specs():
        # A base large enough that the doubling stands out from scheduling noise on a busy machine.
        manager.add(replace(spec, backoff_base=0.1))
    async with running(manager):
        await kube_client.create(echo("r1", namespace))
        await wait_for(kube_client, echo_crd, "r1", namespace, timeout=20,
                       predicate=lambda o: o.get("status", {}).get("seen") == "ok")
    gaps = [b - a for a, b in zip(attempts[:3], attempts[1:4], strict=True)]
    assert gaps[0] >= 0.09 and gaps[1] >= 0.19 and gaps[2] >= 0.39, f"backoff should double: {gaps}"


async def test_metrics_and_probes_are_served(kube_client: Client, namespace: str, echo_crd: str) -> None:
    manager = Manager(kube_client, options(namespace))
    manager.add_operator(echo_operator([]))
    async with running(manager):
        await kube_client.create(echo("m1", namespace))
        await wait_for(kube_client, "configmaps", "m1-echo", namespace, timeout=20)
        port, probes = manager.http.bound["metrics"], manager.http.bound["probes"]
        async with aiohttp.ClientSession() as http:
            async with http.get(f"http://127.0.0.1:{port}/metrics") as resp:
                text = await resp.text()
            async with http.get(f"http://127.0.0.1:{probes}/readyz") as resp:
                assert resp.status == 200
            async with http.get(f"http://127.0.0.1:{probes}/healthz") as resp:
                assert resp.status == 200
    for name in ('controller_runtime_reconcile_total{controller="echo-echoes",result="success"}',
                 "workqueue_adds_total", "workqueue_depth", "workqueue_queue_duration_seconds_bucket",
                 "rest_client_requests_total", "controller_runtime_reconcile_time_seconds_count",
                 "controller_runtime_max_concurrent_reconciles", "workqueue_longest_running_processor_seconds"):
        assert name in text, name


async def test_leader_election_one_acts_standby_takes_over(kube_client: Client, namespace: str,
                                                           echo_crd: str) -> None:
    acted: dict[str, int] = {"a": 0, "b": 0}

    def make(tag: str) -> Manager:
        op = Operator("le")

        @op.reconcile(echo_crd, resync=None)
        async def reconcile(obj: dict, ctx: Context) -> None:
            acted[tag] += 1

        m = Manager(kube_client, options(namespace, leader_elect=True, leader_election_id="le-test",
                                         leader_election_namespace=namespace, identity=tag,
                                         lease_duration=4, renew_deadline=3, retry_period=0.5))
        m.add_operator(op)
        return m

    a, b = make("a"), make("b")
    task_a = asyncio.create_task(a.run())
    await asyncio.wait_for(a.started.wait(), 30)
    task_b = asyncio.create_task(b.run())
    await asyncio.sleep(2)
    assert not b.started.is_set(), "the standby must not act while the leader holds the lease"
    await kube_client.create(echo("le1", namespace))
    for _ in range(100):
        if acted["a"]:
            break
        await asyncio.sleep(0.05)
    assert acted["a"] >= 1 and acted["b"] == 0
    # A clean shutdown releases the lease: the standby takes over well before the lease would expire.
    loop = asyncio.get_running_loop()
    stopped_at = loop.time()
    a.stop()
    await asyncio.wait_for(task_a, 20)
    await asyncio.wait_for(b.started.wait(), 10)
    takeover = loop.time() - stopped_at
    lease = await kube_client.get("leases.coordination.k8s.io", "le-test", namespace)
    assert lease["spec"]["holderIdentity"] == "b"
    assert takeover < 4, f"takeover took {takeover:.1f}s"
    for _ in range(100):
        if acted["b"]:
            break
        await asyncio.sleep(0.05)
    assert acted["b"] >= 1  # the standby's warm cache is reconciled at once
    b.stop()
    await asyncio.wait_for(task_b, 20)
    lease = await kube_client.get("leases.coordination.k8s.io", "le-test", namespace)
    assert not lease["spec"].get("holderIdentity")


async def test_leader_killed_standby_takes_over_after_lease(kube_client: Client, namespace: str,
                                                            echo_crd: str) -> None:
    """The leader vanishes without releasing (its renewals stop): the standby waits out the lease."""
    from kubeloop.manager import LeaderElector

    a = LeaderElector(kube_client, "le-kill", namespace, "a", lease_duration=3, renew_deadline=2,
                      retry_period=0.3)
    await a.acquire()
    b = LeaderElector(kube_client, "le-kill", namespace, "b", lease_duration=3, renew_deadline=2,
                      retry_period=0.3)
    loop = asyncio.get_running_loop()
    start = loop.time()
    await asyncio.wait_for(b.acquire(), 15)  # a never renews: "killed"
    waited = loop.time() - start
    assert 3 <= waited < 6, waited
    with contextlib.suppress(NotFound):
        lease = await kube_client.get("leases.coordination.k8s.io", "le-kill", namespace)
        assert lease["spec"]["holderIdentity"] == "b" and lease["spec"]["leaseTransitions"] == 1


async def test_conflicts_are_retried_until_converged(kube_client: Client, namespace: str, echo_crd: str) -> None:
    """The reconciler replaces the object with the cached resourceVersion while another writer keeps
    changing it: 409s are retried from fresh cache state until the label matches the spec."""
    op = Operator("conflict")

    @op.reconcile(echo_crd, resync=None)
    async def reconcile(obj: dict, ctx: Context) -> None:
        if obj["metadata"].get("labels", {}).get("seen") != obj["spec"]["message"]:
            obj["metadata"].setdefault("labels", {})["seen"] = obj["spec"]["message"]
            await ctx.client.replace(obj)  # conditional on the (possibly stale) cached resourceVersion

    manager = Manager(kube_client, options(namespace))
    manager.add_operator(op)
    async with running(manager):
        await kube_client.create(echo("c1", namespace, "m0"))
        for i in range(1, 15):
            await kube_client.patch(echo_crd, "c1", {"spec": {"message": f"m{i}"},
                                                     "metadata": {"annotations": {"n": str(i)}}}, namespace)
        await wait_for(kube_client, echo_crd, "c1", namespace, timeout=30,
                       predicate=lambda o: o["metadata"].get("labels", {}).get("seen") == "m14")


async def test_graceful_shutdown_finishes_in_flight_reconciles(kube_client: Client, namespace: str,
                                                               echo_crd: str) -> None:
    op = Operator("graceful")
    entered = asyncio.Event()

    @op.reconcile(echo_crd, resync=None)
    async def reconcile(obj: dict, ctx: Context) -> None:
        entered.set()
        await asyncio.sleep(1.0)  # in flight when the stop comes
        await ctx.patch_status({"seen": "finished"})

    manager = Manager(kube_client, options(namespace, graceful_shutdown_timeout=10))
    manager.add_operator(op)
    task = asyncio.create_task(manager.run())
    await asyncio.wait_for(manager.started.wait(), 30)
    await kube_client.create(echo("g1", namespace))
    await asyncio.wait_for(entered.wait(), 20)
    manager.stop()
    await asyncio.wait_for(task, 20)
    obj = await kube_client.get(echo_crd, "g1", namespace)
    assert obj.get("status", {}).get("seen") == "finished"


async def test_the_initial_list_is_a_streaming_list(kube_client: Client, namespace: str) -> None:
    """The API server we build serves streaming lists: the watch itself brings every object, then the
    end-of-initial-events bookmark; changes follow on the same stream, with no list request."""
    from kubeloop.watch.watcher import Changed, Relisted, Watcher, WatchOptions

    for i in range(3):
        await kube_client.create({"apiVersion": "v1", "kind": "ConfigMap",
                                  "metadata": {"name": f"s{i}", "namespace": namespace}})
    watcher = Watcher(kube_client, await kube_client.resource("configmaps"), WatchOptions(namespace=namespace))
    stream = watcher.__aiter__()
    try:
        listed = await asyncio.wait_for(anext(stream), 30)
        assert isinstance(listed, Relisted) and watcher.streaming, "fell back to a paginated list"
        assert {f"s{i}" for i in range(3)} <= {o["metadata"]["name"] for o in listed.items}
        assert int(listed.resource_version) >= max(int(o["metadata"]["resourceVersion"]) for o in listed.items)
        await kube_client.create({"apiVersion": "v1", "kind": "ConfigMap",
                                  "metadata": {"name": "later", "namespace": namespace}})
        changed = await asyncio.wait_for(anext(stream), 30)
        assert isinstance(changed, Changed) and changed.type == "ADDED"
        assert changed.object["metadata"]["name"] == "later" and watcher.relists == 1
    finally:
        await stream.aclose()


async def test_bookmarks_advance_the_resource_version(kube_client: Client, namespace: str) -> None:
    """Nothing changes in what we watch, but the cluster moves on: bookmarks keep our resourceVersion
    fresh so a reconnect does not fall behind into 410s. (What we watch: our namespace's ConfigMaps with a
    label none has, so neither the write below nor the controller-manager's kube-root-ca.crt is an event.)"""
    from kubeloop.watch.watcher import Relisted, Watcher, WatchOptions

    watcher = Watcher(kube_client, await kube_client.resource("configmaps"),
                      WatchOptions(namespace=namespace, label_selector="bookmark-test=watched", min_watch_timeout=3))
    stream = watcher.__aiter__()
    first = await anext(stream)
    assert isinstance(first, Relisted)
    listed = int(first.resource_version)
    await kube_client.create({"apiVersion": "v1", "kind": "ConfigMap",
                              "metadata": {"generateName": "elsewhere-", "namespace": namespace}})
    pending = asyncio.ensure_future(anext(stream))  # no event will come for what we watch
    try:
        for _ in range(160):
            if int(watcher.resource_version or 0) > listed:
                break
            await asyncio.sleep(0.05)
        assert int(watcher.resource_version or 0) > listed
        assert not pending.done()
    finally:
        pending.cancel()
        with contextlib.suppress(asyncio.CancelledError, StopAsyncIteration):
            await pending


async def test_metadata_only_and_transform_shrink_the_cache(kube_client: Client, namespace: str) -> None:
    await kube_client.create({"apiVersion": "v1", "kind": "ConfigMap",
                              "metadata": {"name": "big", "namespace": namespace, "labels": {"a": "b"}},
                              "data": {"blob": "x" * 100_000}})
    cache = Cache(kube_client, [namespace], freeze_gc=False)
    meta_only = await cache.informer("configmaps", metadata_only=True)

    def prune(obj: dict) -> dict:
        obj["metadata"].pop("managedFields", None)
        obj.pop("data", None)
        return obj

    pruned = await cache.informer("configmaps", label_selector="a=b", transform=prune)
    cache.start()
    try:
        await cache.wait_synced(30)
        m = meta_only.store.get(f"{namespace}/big")
        assert m is not None and "data" not in m and m["kind"] == "PartialObjectMetadata"
        assert m["metadata"]["labels"] == {"a": "b"}
        p = pruned.store.get(f"{namespace}/big")
        assert p is not None and "data" not in p and "managedFields" not in p["metadata"]
        assert len(pruned.store) == 1  # the label selector ran on the server
        await kube_client.patch("configmaps", "big", {"data": {"blob": "y"}}, namespace)
        for _ in range(100):
            if pruned.store.get(f"{namespace}/big")["metadata"]["resourceVersion"] != p["metadata"]["resourceVersion"]:
                break
            await asyncio.sleep(0.05)
        assert "data" not in pruned.store.get(f"{namespace}/big")  # watch events are transformed too
    finally:
        await cache.stop()


async def test_mapped_watch_and_predicates(kube_client: Client, namespace: str, echo_crd: str) -> None:
    """A ConfigMap labelled ``echo=<name>`` wakes that Echo (mapping function); a status-only change of
    the Echo does not (generation_changed predicate)."""
    from kubeloop import Watch, predicates

    op = Operator("mapped")
    calls: list[str] = []

    @op.reconcile(echo_crd, resync=None, predicates=[predicates.generation_changed],
                  watches=[Watch("configmaps", mapper=lambda cm: [
                      f"{cm['metadata']['namespace']}/{cm['metadata'].get('labels', {}).get('echo')}"]
                      if cm["metadata"].get("labels", {}).get("echo") else [])])
    async def reconcile(obj: dict, ctx: Context) -> None:
        calls.append(obj["metadata"]["name"])

    manager = Manager(kube_client, options(namespace))
    manager.add_operator(op)
    async with running(manager):
        await kube_client.create(echo("w1", namespace))
        for _ in range(100):
            if calls:
                break
            await asyncio.sleep(0.05)
        await kube_client.patch_status(echo_crd, "w1", {"seen": "status only"}, namespace)
        await asyncio.sleep(1.0)  # proving a negative: nothing may happen
        assert calls == ["w1"]
        await kube_client.create({"apiVersion": "v1", "kind": "ConfigMap",
                                  "metadata": {"name": "trigger", "namespace": namespace, "labels": {"echo": "w1"}}})
        for _ in range(100):
            if len(calls) > 1:
                break
            await asyncio.sleep(0.05)
        assert calls == ["w1", "w1"]
