"""The fault scenarios of the synthetic Widget operator: each one sets up a fresh rig, starts a
seeded storm, injects its fault, and returns what it measured (``Row``s)."""

from __future__ import annotations

import asyncio
import contextlib
import copy
import random
import re
import signal
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from harness.faults import etcd
from harness.faults.env import Env, now, retrying
from harness.faults.results import Row
from harness.faults.rig import WIDGET, Size, WidgetRig, keys_in
from harness.faults.widget import Widget
from kubeloop.client import ApiError, NotFound
from kubeloop.client.wait import wait_for_crd, wait_for_deletion
from kubeloop.resources import crds_for

APF = "flowcontrol.apiserver.k8s.io/v1"
LEASES = "leases.coordination.k8s.io"
Scenario = Callable[[Env, Size], Awaitable[list[Row]]]


@dataclass(frozen=True)
class Spec:
    name: str
    run: Scenario
    operators: tuple[str, ...]
    destructive: bool  # restarts or compacts the control plane: only on the harness's own cluster
    fault: str


async def _wait_writes(rig: WidgetRig, count: int, timeout: float = 60) -> None:
    assert rig.storm is not None
    deadline = now() + timeout
    while rig.storm.writes < count and now() < deadline:
        await asyncio.sleep(0.02)


# --- control plane ---------------------------------------------------------------------------------------


async def apiserver_restart(env: Env, size: Size) -> list[Row]:
    fault = "kube-apiserver restarted twice: during the creates, then during the updates"
    async with WidgetRig(env, size, "apiserver-restart", fault) as rig:
        storm = rig.storm
        assert storm is not None
        creating = asyncio.create_task(storm.create())
        await _wait_writes(rig, size.n // 3)
        restarts = [await rig.restart_apiserver()]
        await creating
        updating = asyncio.create_task(storm.run(size.storm_seconds))
        await asyncio.sleep(size.storm_seconds * random.Random(size.seed).uniform(0.2, 0.6))
        restarts.append(await rig.restart_apiserver())
        fault_end = now()
        await updating
        row = await rig.finish(fault_end)
        row.details["apiserver_down_s"] = [round(down, 1) for down, _ in restarts]
        row.details["owner_refs_refused_after_ready_s"] = [round(refused, 1) for _, refused in restarts]
        return [row]


async def _probe_watch(env: Env, resource_version: str) -> str:
    """What a watch resuming from ``resource_version`` gets now: the first answer, summarised."""
    try:
        async with asyncio.timeout(10):
            async for event in env.admin.watch(WIDGET, resource_version=resource_version, timeout_seconds=5,
                                               allow_bookmarks=False):
                if event.get("type") == "ERROR":
                    obj = event.get("object") or {}
                    return f"{obj.get('code')} {obj.get('reason')}: {obj.get('message')}"
                return f"served ({event.get('type')} events from the watch cache)"
    except ApiError as exc:  # 410 Gone, or 429 while a restarted server's watch cache initialises
        return f"{exc.status} {exc.reason}: {exc.message}"
    except TimeoutError:
        return "served (no event)"
    return "served (closed)"


async def etcd_compaction(env: Env, size: Size) -> list[Row]:
    """The operator is cut off (its proxy refuses and resets), the world moves on, etcd is compacted
    past everything the operator saw; then it reconnects. Phase A: compaction alone. Phase B: the same
    plus an API server restart (a fresh watch cache)."""
    rows = []
    async with WidgetRig(env, size, "etcd-compaction", "", through_proxy=True) as rig:
        storm, proxy, port = rig.storm, rig.proxies[0], etcd.etcd_port(env.cluster)
        assert storm is not None
        await storm.create()
        await rig.observer.wait_converged(size.timeout)  # type: ignore[union-attr]
        for restart in (False, True):
            relists = rig.proc.log_count("expired (410), relisting")
            listed = await retrying(lambda: env.admin.list(WIDGET, limit=1), what="list")
            seen = listed["metadata"]["resourceVersion"]
            proxy.refuse = True
            proxy.reset_all()
            await storm.run(min(5.0, size.storm_seconds / 2))
            rev = await asyncio.to_thread(etcd.compact, port)
            refused = (await rig.restart_apiserver())[1] if restart else 0.0
            probe = await _probe_watch(env, seen)
            proxy.refuse = False
            fault_end = now()
            fault = ("etcd compacted (physical) past the operator's resourceVersion while it was cut off"
                     + (", and kube-apiserver restarted" if restart else ""))
            row = await rig.finish(fault_end, Row(f"etcd-compaction{'+restart' if restart else ''}", "widget",
                                                  fault))
            row.details["relists_410"] = rig.proc.log_count("expired (410), relisting") - relists
            row.details["compacted_to"] = rev
            row.details["resume_probe"] = probe[:160]
            if restart:
                row.details["owner_refs_refused_after_ready_s"] = round(refused, 1)
            rows.append(row)
            rig.started = now()
    return rows


# --- the network between operator and API server -------------------------------------------------------


async def watch_reset(env: Env, size: Size) -> list[Row]:
    cuts = max(3, size.kills // 2)
    fault = f"every connection of the operator cut with a TCP RST, {cuts} times during the storm"
    async with WidgetRig(env, size, "watch-reset", fault, through_proxy=True) as rig:
        storm, proxy = rig.storm, rig.proxies[0]
        assert storm is not None
        rng = random.Random(size.seed)
        storming = asyncio.create_task(_create_then_storm(rig, size.storm_seconds))
        reset = 0
        for _ in range(cuts):
            await asyncio.sleep(rng.uniform(0.5, 2.5))
            reset += proxy.reset_all()
        fault_end = now()
        await storming
        row = await rig.finish(fault_end)
        row.details["connections_reset"] = reset
        return [row]


async def half_open(env: Env, size: Size, inactivity: float = 5.0) -> list[Row]:
    fault = (f"every connection of the operator black-holed (open, silent) mid-stream; "
             f"--watch-inactivity-timeout {inactivity:g}s")
    async with WidgetRig(env, size, "half-open", fault, through_proxy=True,
                         operator_args=["--watch-inactivity-timeout", str(inactivity)]) as rig:
        storm, proxy = rig.storm, rig.proxies[0]
        assert storm is not None
        await storm.create()
        await rig.observer.wait_converged(size.timeout)  # type: ignore[union-attr]
        held = proxy.blackhole_all()
        fault_end = now()
        await storm.run(size.storm_seconds / 2)
        row = await rig.finish(fault_end)
        row.details["connections_held"] = held
        row.details["inactivity_timeout_s"] = inactivity
        proxy.release_held()
        return [row]


async def _create_then_storm(rig: WidgetRig, seconds: float, deletes: int = 0) -> None:
    assert rig.storm is not None
    await rig.storm.create()
    await rig.storm.run(seconds, deletes_per_round=deletes)


# --- the operator process ---------------------------------------------------------------------------------


async def sigkill(env: Env, size: Size) -> list[Row]:
    fault = f"operator SIGKILLed at {size.kills} random points (start-up, sync, mid-reconcile) and restarted"
    async with WidgetRig(env, size, "sigkill", fault) as rig:
        rng = random.Random(size.seed)
        storming = asyncio.create_task(_create_then_storm(rig, size.storm_seconds, deletes=1))
        fault_end = now()
        for _ in range(size.kills):
            await asyncio.sleep(rng.uniform(0.0, 2.5))
            await rig.proc.restart()
            fault_end = now()
        await storming
        row = await rig.finish(fault_end)
        row.details["kill_points"] = size.kills
        return [row]


async def _holder(env: Env, namespace: str, lease: str) -> str:
    with contextlib.suppress(NotFound, ApiError, OSError):
        obj = await env.admin.get(LEASES, lease, namespace)
        return (obj.get("spec") or {}).get("holderIdentity") or ""
    return ""


async def leader_kill(env: Env, size: Size) -> list[Row]:
    kills = max(1, min(3, size.kills // 4))
    fault = f"the leader SIGKILLed {kills} times with a standby running (lease 15 s, controller-runtime's)"
    async with WidgetRig(env, size, "leader-kill", fault, replicas=2) as rig:
        assert rig.setup is not None and rig.observer is not None
        lease, ns = "widget-leader-kill", rig.setup.namespace
        storming = asyncio.create_task(_create_then_storm(rig, size.storm_seconds + kills * 25))
        by_tag = {p.tag: p for p in rig.procs}
        terms: list[tuple[str, float, float]] = []  # (replica, from, to): when each one led
        takeovers, first_writes = [], []
        held_since = 0.0
        holder = ""
        deadline = now() + 60
        while not holder and now() < deadline:
            holder = (await _holder(env, ns, lease)).split("_")[0]
            await asyncio.sleep(0.1)
        fault_end = now()
        for _ in range(kills):
            await asyncio.sleep(random.Random(size.seed + len(terms)).uniform(2, 5))
            killed_at = now()
            await by_tag[holder].kill()
            terms.append((holder, held_since, killed_at))
            new = ""
            while now() - killed_at < 90:
                new = (await _holder(env, ns, lease)).split("_")[0]
                if new and new != holder:
                    break
                await asyncio.sleep(0.1)
            took = now()
            takeovers.append(took - killed_at)
            await by_tag[holder].start()  # back as the standby
            first = None
            while now() - took < 30 and first is None:
                first = next((t for t, w, _ in rig.observer.writes if w == new and t >= took - 1), None)
                await asyncio.sleep(0.1)
            if first is not None:
                first_writes.append(first - killed_at)
            holder, held_since = new, took
            fault_end = took
        await storming
        terms.append((holder, held_since, now() + 3600))
        row = await rig.finish(fault_end)
        # Two leaders acting: a status write by a replica outside its own term (1 s slack for the
        # watch delivering the write after the kill).
        outside = [(round(t - rig.started, 1), writer) for t, writer, _ in rig.observer.writes
                   if writer and not any(r == writer and start - 1 <= t <= end + 1 for r, start, end in terms)]
        overlaps = len(outside)
        if outside:
            row.details["outside_sample"] = outside[:5]
            row.details["terms"] = [(r, round(a - rig.started, 1), round(b - rig.started, 1)) for r, a, b in terms]
        row.duplicates += overlaps
        row.restarts = sum(p.kills for p in rig.procs)
        row.details.update(takeover_s=[round(t, 1) for t in takeovers],
                           first_write_after_kill_s=[round(t, 1) for t in first_writes],
                           writes_outside_own_term=overlaps)
        return [row]


async def conflicts(env: Env, size: Size) -> list[Row]:
    fault = "a second writer keeps changing the Widgets (metadata) and their ConfigMaps (data) → 409s"
    async with WidgetRig(env, size, "conflicts", fault) as rig:
        storm = rig.storm
        assert storm is not None
        await storm.create()
        stop = asyncio.Event()
        pokes = 0

        async def meddle() -> None:
            nonlocal pokes
            rng = random.Random(size.seed)
            while not stop.is_set():
                key = rng.choice(storm.live)
                ns, _, name = key.partition("/")
                with contextlib.suppress(ApiError):
                    if rng.random() < 0.5:
                        await env.admin.patch(WIDGET, name, {"metadata": {"annotations": {
                            "faults.kubeloop.dev/poke": str(pokes)}}}, ns)
                    else:
                        await env.admin.patch("configmaps", f"{name}-w", {"data": {"value": "tampered"}}, ns)
                    pokes += 1
                await asyncio.sleep(0.005)

        meddlers = [asyncio.create_task(meddle()) for _ in range(4)]
        await storm.run(size.storm_seconds)
        stop.set()
        await asyncio.gather(*meddlers)
        fault_end = now()
        conflicts_seen = await rig.metric("rest_client_requests_total", code="409")
        row = await rig.finish(fault_end)
        row.details.update(meddling_writes=pokes, operator_409s=int(conflicts_seen))
        return [row]


async def throttling(env: Env, size: Size) -> list[Row]:
    fault = "API Priority and Fairness: the operator's ServiceAccount gets 1 seat, no queue (429s)"
    async with WidgetRig(env, size, "throttling", fault, replicas=1,
                         operator_args=["--leader-elect", "--leader-election-id", "widget-throttling",
                                        "--max-concurrent-reconciles", "16", "--qps", "0"]) as rig:
        assert rig.setup is not None and rig.storm is not None
        level, schema = env.name("faults-tiny"), env.name("faults-throttle")
        await env.admin.create({"apiVersion": APF, "kind": "PriorityLevelConfiguration", "metadata": {"name": level},
                                "spec": {"type": "Limited", "limited": {
                                    "nominalConcurrencyShares": 1, "lendablePercent": 0,
                                    "limitResponse": {"type": "Reject"}}}})
        await env.admin.create({"apiVersion": APF, "kind": "FlowSchema", "metadata": {"name": schema},
                                "spec": {"priorityLevelConfiguration": {"name": level}, "matchingPrecedence": 100,
                                         "distinguisherMethod": {"type": "ByUser"},
                                         "rules": [{"subjects": [{"kind": "ServiceAccount", "serviceAccount": {
                                             "name": rig.setup.name, "namespace": rig.setup.namespace}}],
                                             "resourceRules": [{"verbs": ["*"], "apiGroups": ["*"],
                                                                "resources": ["*"], "namespaces": ["*"],
                                                                "clusterScope": True}]}]}})
        try:
            await asyncio.sleep(1.0)  # APF picks the new schema up from its informer
            await _create_then_storm(rig, size.storm_seconds)
            fault_end = now()  # measured while still throttled: the fault stays on until finish()
            row = await rig.finish(fault_end)
            throttled = await rig.metric("rest_client_requests_total", code="429")
        finally:
            for ref, name in (("flowschemas.flowcontrol.apiserver.k8s.io", schema),
                              ("prioritylevelconfigurations.flowcontrol.apiserver.k8s.io", level)):
                with contextlib.suppress(ApiError):
                    await env.admin.delete(ref, name)
        row.details["operator_429s"] = int(throttled)
        row.details["lost_leadership"] = rig.proc.log_count("lost leader lease")
        return [row]


# --- things going away ----------------------------------------------------------------------------------


async def crd_recreate(env: Env, size: Size) -> list[Row]:
    fault = "the Widget CRD deleted (every Widget with it) and created again while the operator runs"
    async with WidgetRig(env, size, "crd-recreate", fault) as rig:
        storm, obs = rig.storm, rig.observer
        assert storm is not None and obs is not None
        await storm.create()
        await storm.round(1.0)  # every Widget changed: the operator is busy when the CRD goes
        crd_name = f"{WIDGET.plural}.{WIDGET.group}"
        t0 = now()
        for key in storm.live:
            obs.deleting(key)
        await env.admin.delete("customresourcedefinitions", crd_name)
        await wait_for_deletion(env.admin, "customresourcedefinitions", crd_name, timeout=size.timeout)
        gone_s = now() - t0
        fresh = copy.deepcopy(crds_for([Widget])[0])
        await retrying(lambda: env.admin.create(fresh))
        await wait_for_crd(env.admin, crd_name, timeout=60)
        fault_end = now()
        storm.deleted.clear()
        await storm.create()
        await storm.run(2.0)
        row = await rig.finish(fault_end)
        row.details["crd_deletion_s"] = round(gone_s, 1)
        return [row]


async def namespace_delete(env: Env, size: Size) -> list[Row]:
    fault = "a namespace deleted while its Widgets (with finalizers) are being reconciled"
    big = Size(**{**size.__dict__, "namespaces": max(3, size.namespaces)})
    async with WidgetRig(env, big, "namespace-delete", fault) as rig:
        storm, obs = rig.storm, rig.observer
        assert storm is not None and obs is not None
        await storm.create()
        doomed = rig.namespaces[0]
        storming = asyncio.create_task(storm.run(size.storm_seconds))
        await asyncio.sleep(size.storm_seconds / 3)
        t0 = now()
        obs.forget(keys_in(doomed, storm.keys))
        storm.deleted |= keys_in(doomed, storm.keys)
        await env.admin.delete("namespaces", doomed)
        fault_end = now()
        await storming
        gone_s = None
        try:
            await wait_for_deletion(env.admin, "namespaces", doomed, timeout=size.timeout)
            gone_s = round(now() - t0, 1)  # measured here, not after finish's own wait for convergence
        except AssertionError:
            pass
        row = await rig.finish(fault_end)
        row.never_converged += gone_s is None
        row.details["namespace_gone_s"] = gone_s
        return [row]


def _failure(line: str) -> str:
    """The message of a log line from "... failed:" on, without the logging context in brackets."""
    found = re.search(r"\w+ failed.*", line)
    text = found.group(0) if found else line
    return re.sub(r" \[[^\]]*\]$", "", text)[:320]


def _without(rules: list[dict], resource: str, verbs: set[str]) -> list[dict]:
    """``rules`` with ``verbs`` taken away on core ``resource`` (other resources keep theirs)."""
    out = []
    for rule in rules:
        if resource not in rule.get("resources", []) or rule.get("apiGroups") != [""]:
            out.append(rule)
            continue
        others = [r for r in rule["resources"] if r != resource]
        if others:
            out.append({**rule, "resources": others})
        kept = [v for v in rule["verbs"] if v not in verbs]
        if kept:
            out.append({**rule, "resources": [resource], "verbs": kept})
    return out


async def rbac_revoke(env: Env, size: Size) -> list[Row]:
    """Phase 1 takes away writing ConfigMaps; phase 2 takes away listing/watching them (and resets the
    operator's connections, since an open watch is authorised once, when it starts)."""
    rows = []
    async with WidgetRig(env, size, "rbac-revoke", "", through_proxy=True) as rig:
        assert rig.setup is not None and rig.storm is not None
        storm, proxy = rig.storm, rig.proxies[0]
        role = rig.setup.cluster_role
        await storm.create()
        await rig.observer.wait_converged(size.timeout)  # type: ignore[union-attr]
        for phase, verbs in (("write", {"create", "patch", "delete"}), ("watch", {"list", "watch"})):
            cut = {**copy.deepcopy(role), "rules": _without(role["rules"], "configmaps", verbs)}
            await env.admin.apply(cut, field_manager="faults", force=True)
            await asyncio.sleep(1.0)
            errors_before, log_at = rig.proc.log_count("orbidden"), rig.proc.log_size()
            if phase == "watch":
                proxy.reset_all()
            await storm.run(min(8.0, size.storm_seconds))
            alive = rig.proc.running
            sample = rig.proc.log_lines("orbidden", 1, since=log_at)
            errors = rig.proc.log_count("orbidden") - errors_before
            await env.admin.apply(role, field_manager="faults", force=True)
            fault_end = now()
            if phase == "watch":  # drift on the ConfigMaps: reverted only once their informer is back
                assert rig.observer is not None
                for key in storm.live[:5]:
                    ns, _, name = key.partition("/")
                    await env.admin.patch("configmaps", f"{name}-w", {"data": {"value": "tampered"}}, ns)
                    rig.observer.last_write[key], rig.observer.converged_at[key] = now(), None
            row = await rig.finish(fault_end, Row(f"rbac-revoke-{phase}", "widget",
                                                  f"ClusterRole loses {'/'.join(sorted(verbs))} on configmaps "
                                                  "for ~8 s, then gets it back"
                                                  + ("; 5 ConfigMaps then edited by hand must be reverted"
                                                     if phase == "watch" else "")))
            row.details.update(forbidden_log_lines=errors, alive_while_forbidden=alive,
                               error_sample=_failure(sample[0]) if sample else None)
            rows.append(row)
            rig.started = now()
    return rows


WIDGET_SCENARIOS: list[Spec] = [
    Spec("apiserver-restart", apiserver_restart, ("widget",), True, "kube-apiserver restart"),
    Spec("etcd-compaction", etcd_compaction, ("widget",), True, "etcd compaction → 410"),
    Spec("watch-reset", watch_reset, ("widget",), False, "connections RST mid-stream"),
    Spec("half-open", half_open, ("widget",), False, "half-open connections"),
    Spec("sigkill", sigkill, ("widget",), False, "SIGKILL mid-storm"),
    Spec("leader-kill", leader_kill, ("widget",), False, "leader SIGKILL, standby takes over"),
    Spec("conflicts", conflicts, ("widget",), False, "409 conflicts"),
    Spec("throttling", throttling, ("widget",), False, "APF 429 throttling"),
    Spec("crd-recreate", crd_recreate, ("widget",), False, "CRD deleted and recreated"),
    Spec("namespace-delete", namespace_delete, ("widget",), False, "namespace deleted mid-reconcile"),
    Spec("rbac-revoke", rbac_revoke, ("widget",), False, "RBAC permission removed and restored"),
]

__all__ = ["WIDGET_SCENARIOS", "Spec", "signal"]
