"""The manager's order around leader election, on the FakeClient: reconcile only while holding the lease;
on stop, in-flight reconciles finish before the lease is released (and a standby takes over at once);
on a lost lease, work stops and ``run`` raises ``LeadershipLost``."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from kubeloop import Operator
from kubeloop.client import Conflict
from kubeloop.manager import Manager, ManagerOptions
from kubeloop.manager.manager import LeadershipLost
from kubeloop.resources.builtin import CONFIG_MAP, LEASE

from .controller_kit import Kit, cm, until


def manager(kit: Kit, identity: str, reconcile: Any, lease_duration: float = 30) -> Manager:
    options = ManagerOptions(leader_elect=True, leader_election_id="lock", leader_election_namespace="ns",
                             identity=identity, lease_duration=lease_duration, renew_deadline=0.3,
                             retry_period=0.03, metrics_bind_address="0", health_probe_bind_address="0",
                             freeze_gc=False, graceful_shutdown_timeout=5)
    m = Manager(kit.client, options, name=identity)
    m.add(kit.unwired(reconcile, concurrency=1))
    return m


def holder(kit: Kit) -> str | None:
    lease = kit.client.stored(LEASE, "lock", "ns")
    return lease["spec"]["holderIdentity"] if lease else None


async def test_reconciles_only_while_leading_and_releases_after_in_flight_work(kit: Kit) -> None:
    kit.client.add(cm("a"))
    order: list[str] = []
    release = asyncio.Event()

    async def reconcile(obj: dict[str, Any], ctx: Any) -> None:
        order.append(f"reconcile started, lease held by {holder(kit)}")
        await release.wait()
        order.append(f"reconcile finished, lease held by {holder(kit)}")

    leader = manager(kit, "a", reconcile)
    running = asyncio.create_task(leader.run())
    await until(lambda: bool(order), "the first reconcile")
    leader.stop()
    await asyncio.sleep(0.05)
    assert not running.done(), "stop waits for the reconcile in flight"
    release.set()
    await asyncio.wait_for(running, 5)
    assert order == ["reconcile started, lease held by a", "reconcile finished, lease held by a"]
    assert holder(kit) is None, "released on stop"


async def test_a_standby_waits_then_takes_over_when_the_leader_stops(kit: Kit) -> None:
    kit.client.add(cm("a"))
    seen: list[str] = []

    def reconcile_as(who: str) -> Any:
        async def reconcile(obj: dict[str, Any], ctx: Any) -> None:
            seen.append(who)
        return reconcile

    first, second = manager(kit, "a", reconcile_as("a")), manager(kit, "b", reconcile_as("b"))
    runs = [asyncio.create_task(first.run())]
    await until(lambda: seen == ["a"], "the leader's reconcile")
    runs.append(asyncio.create_task(second.run()))
    await asyncio.sleep(0.2)
    assert seen == ["a"] and not second.started.is_set(), "the standby keeps its hands off"
    first.stop()
    await until(lambda: "b" in seen, "the standby's reconcile (at once, not after the 30 s lease)")
    assert holder(kit) == "b"
    second.stop()
    await asyncio.wait_for(asyncio.gather(*runs), 5)


async def test_a_lost_lease_stops_the_work_and_raises(kit: Kit) -> None:
    kit.client.add(cm("a"))
    cancelled = asyncio.Event()

    async def reconcile(obj: dict[str, Any], ctx: Any) -> None:
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.set()
            raise

    leader = manager(kit, "a", reconcile, lease_duration=0.6)
    running = asyncio.create_task(leader.run())
    await until(lambda: leader.started.is_set() and leader.controllers[0].queue.processing == 1, "work")
    kit.client.fail("update", Conflict(409, "Conflict", "taken"), times=10_000, resource=LEASE)
    with pytest.raises(LeadershipLost):
        await asyncio.wait_for(running, 5)
    assert cancelled.is_set(), "in-flight work is cancelled at once: another replica may already lead"


async def test_a_lost_lease_cancels_and_awaits_the_daemons(kit: Kit) -> None:
    kit.client.add(cm("a"))
    state: list[str] = []
    op = Operator("a")

    @op.daemon(CONFIG_MAP)
    async def daemon(obj: dict[str, Any], ctx: Any) -> None:
        state.append("running")
        try:
            await asyncio.Event().wait()
        finally:
            state.append("stopped")

    options = ManagerOptions(leader_elect=True, leader_election_id="lock", leader_election_namespace="ns",
                             identity="a", lease_duration=0.6, renew_deadline=0.3, retry_period=0.03,
                             metrics_bind_address="0", health_probe_bind_address="0", freeze_gc=False)
    leader = Manager(kit.client, options, name="a")
    leader.add_operator(op)
    running = asyncio.create_task(leader.run())
    await until(lambda: state == ["running"], "the daemon")
    kit.client.fail("update", Conflict(409, "Conflict", "taken"), times=10_000, resource=LEASE)
    with pytest.raises(LeadershipLost):
        await asyncio.wait_for(running, 5)
    assert state == ["running", "stopped"], "a daemon kept running after the lease was lost"
