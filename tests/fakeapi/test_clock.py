"""The public clock (``kubeloop.clock``) under the test kit's virtual time: monotonic and wall time both
jump with the loop, so a debounce window or a schedule an operator reads from it takes no wall time, and
wall time is real again once virtual time is off. Assertions are on counts and virtual time; wall time is
printed."""

from __future__ import annotations

import asyncio
import datetime as dt
import time
from typing import Any

import pytest

from kubeloop import Context, Operator, Result, clock
from kubeloop.client import Client
from kubeloop.operators.reloader import build_operator
from kubeloop.operators.reloader.policy import HASH, TEMPLATE_HASH
from kubeloop.operators.reloader.reconciler import Reloader
from kubeloop.operators.reloader.settings import ReloaderSettings
from kubeloop.resources.builtin import CONFIG_MAP
from kubeloop.testing import operator_running, wait_for
from kubeloop.testing.apiserver import FakeApiServer
from kubeloop.testing.virtualtime import VirtualTime

Obj = dict[str, Any]


def test_outside_a_loop_the_clock_is_the_process_clock() -> None:
    assert abs(clock.monotonic() - time.monotonic()) < 1
    assert abs(clock.time() - time.time()) < 1
    assert clock.now().tzinfo is dt.UTC


async def test_wall_time_jumps_with_the_loop_and_is_real_again_after() -> None:
    virtual = VirtualTime.of()
    with virtual.running():
        mono, wall, real = clock.monotonic(), clock.time(), time.time()
        await asyncio.sleep(7200)
        assert clock.monotonic() - mono >= 7200
        assert 7200 <= clock.time() - wall < 7200 + 5
        # ahead of the real wall clock by the jump: the 2 h less what really passed meanwhile (other tasks
        # on the session's loop, e.g. a real cluster's watches, keep it busy for real seconds)
        assert clock.time() - time.time() > 7199 - (time.time() - real)
    assert abs(clock.time() - time.time()) < 1  # off: real wall time, for the tests that follow


async def test_a_time_based_reconciler_reads_virtual_wall_time(fake_clock: VirtualTime, fake_api: FakeApiServer,
                                                               fake_client: Client) -> None:
    """A reconciler that decides by the date (as a CronJob-like operator does) sees an hour pass per
    requeue, in wall time as in the loop's clock."""
    op, seen = Operator("hourly-wall"), []

    @op.reconcile(CONFIG_MAP, resync=None)
    async def reconcile(obj: Obj, ctx: Context) -> Result | None:
        if obj["metadata"]["name"] != "ticker":
            return None
        seen.append((clock.now(), clock.monotonic()))
        return Result(requeue_after=3600)

    started = time.perf_counter()
    async with await fake_api.client(field_manager=op.name) as client:
        async with operator_running(op, client, namespaces=["default"]):
            await fake_client.create({"apiVersion": "v1", "kind": "ConfigMap",
                                      "metadata": {"name": "ticker", "namespace": "default"}})
            async with asyncio.timeout(4 * 3600):
                while len(seen) < 3:
                    await asyncio.sleep(60)
    print(f"3 hourly reconciles in {time.perf_counter() - started:.2f}s of wall time")
    walls = [(b[0] - a[0]).total_seconds() for a, b in zip(seen, seen[1:], strict=False)]
    monos = [b[1] - a[1] for a, b in zip(seen, seen[1:], strict=False)]
    assert all(abs(w - m) < 1 for w, m in zip(walls, monos, strict=True)), (walls, monos)
    assert all(3600 <= w < 3601 for w in walls[:2]), walls
    assert seen[-1][0] - dt.datetime.now(dt.UTC) >= dt.timedelta(seconds=7000)


async def test_reloaders_debounce_takes_no_wall_time(fake_clock: VirtualTime, fake_api: FakeApiServer,
                                                     fake_client: Client, monkeypatch: pytest.MonkeyPatch) -> None:
    """A 20 s debounce: the change rolls once, after 20 s of virtual time, in a handful of reconciles (the
    window read from the loop's clock, which the requeue waits on; a window read from the process's
    clock would requeue the workload every moment of 20 s of wall time)."""
    reconciles: list[float] = []
    reconcile = Reloader.reconcile

    async def counted(self: Reloader, kind: Any, workload: Obj, ctx: Context) -> Result | None:
        if workload["metadata"]["name"] == "nginx":
            reconciles.append(clock.monotonic())
        return await reconcile(self, kind, workload, ctx)

    monkeypatch.setattr(Reloader, "reconcile", counted)
    op = build_operator("reloader-clock")
    op.settings = ReloaderSettings(debounce_seconds=20)
    await fake_client.create({"apiVersion": "v1", "kind": "ConfigMap", "data": {"a": "1"},
                              "metadata": {"name": "conf", "namespace": "default"}})
    await fake_client.create({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {
        "name": "nginx", "namespace": "default", "annotations": {"reloader.stakater.com/auto": "true"}},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "nginx"}}, "template": {
            "metadata": {"labels": {"app": "nginx"}}, "spec": {
                "containers": [{"name": "app", "image": "nginx:1.27"}],
                "volumes": [{"name": "conf", "configMap": {"name": "conf"}}]}}}})
    async with await fake_api.client(field_manager=op.name) as client:
        async with operator_running(op, client, namespaces=["default"]):
            await wait_for(fake_client, "deployments.apps", "nginx", "default",
                           lambda d: (d["metadata"].get("annotations") or {}).get(HASH) is not None, timeout=60)
            reconciles.clear()
            started, wall = clock.monotonic(), time.perf_counter()
            await fake_client.patch("configmaps", "conf", {"data": {"a": "2"}}, "default")
            await wait_for(fake_client, "deployments.apps", "nginx", "default", lambda d: (
                d["spec"]["template"]["metadata"].get("annotations") or {}).get(TEMPLATE_HASH) is not None,
                timeout=120)
            rolled_after = clock.monotonic() - started
            await asyncio.sleep(60)  # a minute more: nothing else is due
    print(f"rolled after {rolled_after:.1f} virtual s, {time.perf_counter() - wall:.2f}s of wall time, "
          f"{len(reconciles)} reconciles at {[round(t - started, 1) for t in reconciles]}")
    assert rolled_after >= 20, "the debounce window holds the rollout back"
    # The change, the end of the window, and the echo of the operator's own patch: no busy requeues.
    assert 2 <= len(reconciles) <= 6, len(reconciles)
