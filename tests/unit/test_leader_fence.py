"""Fenced writes under leader election, on the FakeClient in virtual time (``fake_clock``), with
client-go's timings (lease 15 s, renew deadline 10 s, retry 2 s). A *stall* is a jump of the loop's clock
with nothing run meanwhile (``fake_clock.skipped += s``): what a process whose loop was held, or that
was paused, sees when it resumes. The old leader's first action after the stall is a write."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from types import SimpleNamespace
from typing import Any

import pytest

from kubeloop.controller.gate import Fenced
from kubeloop.manager import LeadershipLost, Manager, ManagerOptions
from kubeloop.manager.fence import FencedClient
from kubeloop.manager.leader import LeaderElector
from kubeloop.resources.builtin import CONFIG_MAP, LEASE
from kubeloop.testing.fakeclient import FakeClient
from kubeloop.testing.virtualtime import VirtualTime

from .controller_kit import Kit, cm


def elector(client: FakeClient, identity: str) -> LeaderElector:
    return LeaderElector(client, "lock", "ns", identity, lease_duration=15, renew_deadline=10, retry_period=2)


def calls_since(client: FakeClient, n: int) -> list[tuple[str, str]]:
    return [(c.verb, c.resource.plural) for c in client.calls[n:]]


@pytest.fixture
async def leader(fake_clock: VirtualTime) -> AsyncIterator[tuple[FakeClient, LeaderElector]]:
    client = FakeClient()
    a = elector(client, "a")
    await a.acquire()
    renewing = asyncio.create_task(a.renew_until_lost())
    await asyncio.sleep(7)  # a few renewals, in virtual time
    yield client, a
    renewing.cancel()
    await asyncio.gather(renewing, return_exceptions=True)


async def test_while_renewed_a_write_goes_out_without_a_lease_request(
        leader: tuple[FakeClient, LeaderElector]) -> None:
    client, a = leader
    n = len(client.calls)
    await FencedClient(client, a.confirm).create(cm("x", ns="ns"))
    assert calls_since(client, n) == [("create", "configmaps")]


async def test_after_a_stall_past_the_lease_the_lease_is_renewed_before_the_write(
        leader: tuple[FakeClient, LeaderElector], fake_clock: VirtualTime) -> None:
    client, a = leader
    fake_clock.skipped += 20  # the loop was held 20 s (> lease_duration): no renewal ran
    n = len(client.calls)
    await FencedClient(client, a.confirm).create(cm("x", ns="ns"))
    assert calls_since(client, n)[:3] == [("get", "leases"), ("update", "leases"), ("create", "configmaps")]
    assert a.leading.is_set() and a.lease_valid()


async def test_after_a_stall_in_which_a_standby_took_over_the_old_leader_writes_nothing(
        leader: tuple[FakeClient, LeaderElector], fake_clock: VirtualTime) -> None:
    client, a = leader
    fake_clock.skipped += 20
    taken = client.stored(LEASE, "lock", "ns")  # meanwhile, a standby saw the lease expire and took it
    assert taken is not None
    taken["spec"].update(holderIdentity="b", leaseTransitions=1)
    await client.replace(taken, resource=LEASE)
    writer = FencedClient(client, a.confirm)
    for write in (writer.create(cm("x", ns="ns")), writer.patch(CONFIG_MAP, "y", {"data": {}}, "ns"),
                  writer.delete(CONFIG_MAP, "z", "ns")):
        with pytest.raises(Fenced, match="not confirmed"):
            await write
    assert client.verbs(CONFIG_MAP) == [], "no write of the old leader reached the API server"
    assert a.lost.is_set() and not a.leading.is_set()
    assert client.stored(LEASE, "lock", "ns")["spec"]["holderIdentity"] == "b"  # type: ignore[index]


async def test_many_writes_after_a_stall_share_one_renewal(leader: tuple[FakeClient, LeaderElector],
                                                           fake_clock: VirtualTime,
                                                           caplog: pytest.LogCaptureFixture) -> None:
    client, a = leader
    fake_clock.skipped += 20
    n = len(client.calls)
    writer = FencedClient(client, a.confirm)
    with caplog.at_level(logging.WARNING, logger="kubeloop.leader"):
        await asyncio.gather(*(writer.create(cm(f"x{i}", ns="ns")) for i in range(5)))
    calls = calls_since(client, n)
    first_write = calls.index(("create", "configmaps"))
    assert calls[:2] == [("get", "leases"), ("update", "leases")] and first_write >= 2, "renewed before any write"
    assert client.verbs(CONFIG_MAP).count("create") == 5
    # one renewal for the five writes (the renewal loop's own overdue round may follow it)
    assert len([r for r in caplog.records if "renewing before" in r.getMessage()]) == 1


async def test_a_replica_that_does_not_lead_writes_nothing(fake_clock: VirtualTime) -> None:
    client = FakeClient()
    standby = elector(client, "b")
    with pytest.raises(Fenced):
        await FencedClient(client, standby.confirm).apply(cm("x", ns="ns"))
    assert client.verbs(CONFIG_MAP) == []


async def test_reads_are_not_fenced(leader: tuple[FakeClient, LeaderElector], fake_clock: VirtualTime) -> None:
    client, a = leader
    client.add(cm("r", ns="ns"))
    fake_clock.skipped += 20
    n = len(client.calls)
    got: Any = await FencedClient(client, a.confirm).get(CONFIG_MAP, "r", "ns")
    assert got["metadata"]["name"] == "r" and calls_since(client, n) == [("get", "configmaps")]


async def test_a_managers_reconcile_resuming_after_a_stall_cannot_write_once_a_standby_leads(
        kit: Kit, fake_clock: VirtualTime) -> None:
    kit.client.add(cm("a", ns="ns"))
    outcome: list[BaseException | str] = []

    async def reconcile(obj: dict[str, Any], ctx: Any) -> None:
        fake_clock.skipped += 20  # the reconcile computed for 20 s (> lease_duration) on the loop...
        taken = kit.client.stored(LEASE, "lock", "ns")  # ...while a standby took the expired lease
        taken["spec"].update(holderIdentity="b", leaseTransitions=1)  # type: ignore[index]
        await kit.client.replace(taken, resource=LEASE)  # type: ignore[arg-type]
        try:
            await ctx.client.create(cm("written-after-the-stall", ns="ns"))
            outcome.append("written")
        except Fenced as exc:
            outcome.append(exc)
            raise

    options = ManagerOptions(leader_elect=True, leader_election_id="lock", leader_election_namespace="ns",
                             identity="a", lease_duration=15, renew_deadline=10, retry_period=2,
                             metrics_bind_address="0", health_probe_bind_address="0", freeze_gc=False,
                             graceful_shutdown_timeout=5, loop_lag_warning=0)
    m = Manager(kit.client, options, name="a")
    m.add(kit.unwired(reconcile, concurrency=1))
    with pytest.raises(LeadershipLost):
        await asyncio.wait_for(m.run(), 600)  # virtual seconds
    assert outcome and isinstance(outcome[0], Fenced), outcome
    assert kit.client.stored(CONFIG_MAP, "written-after-the-stall", "ns") is None


class _Member:
    def __init__(self, slots: set[int]) -> None:
        self.slots = slots

    def active(self, now: float) -> set[int]:
        return self.slots


async def test_a_shard_member_past_its_renew_deadline_writes_nothing(kit: Kit) -> None:
    m = Manager(kit.client, ManagerOptions(shards=True, metrics_bind_address="0", health_probe_bind_address="0",
                                           freeze_gc=False, loop_lag_warning=0))
    m.shard = SimpleNamespace(member=_Member(set()))  # type: ignore[assignment]  # renewed too long ago
    with pytest.raises(Fenced, match="shard Lease"):
        await m.writer.create(cm("x", ns="ns"))
    m.shard = SimpleNamespace(member=_Member({3}))  # type: ignore[assignment]  # renewed: holds a slot
    await m.writer.create(cm("x", ns="ns"))
    assert kit.client.verbs(CONFIG_MAP) == ["create"]


async def test_without_leader_election_or_shards_the_client_is_not_wrapped(kit: Kit) -> None:
    m = Manager(kit.client, ManagerOptions(metrics_bind_address="0", health_probe_bind_address="0",
                                           freeze_gc=False))
    assert m.writer is kit.client
