"""A replica's shard membership at run time (kubeloop/sharding/runtime.py) on a FakeClient, one round
at a time: the release drains in-flight reconciles before the Lease stops listing their slots, the new
owner starts only after claim then verify, a drain is cancelled after its timeout, and the framework
refuses leader election and sharding together."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from click.testing import CliRunner

from kubeloop import metrics
from kubeloop.cli.run import build_command, load_operator
from kubeloop.manager import ManagerOptions
from kubeloop.sharding.membership import HOLDS, Timings, decode_slots
from kubeloop.sharding.ring import assign, slot_bounds
from kubeloop.sharding.runtime import LEASES, ShardMember
from kubeloop.testing.fakeclient import FakeClient

TIMINGS = Timings(lease_duration=4, renew_deadline=3, retry_period=0.5)


class Controller:
    """The part of a controller the member uses: the reconciles in flight."""

    def __init__(self) -> None:
        self.name = "c"
        self.in_flight: dict[str, tuple[int, asyncio.Task[None]]] = {}
        self.requeued = 0
        self.daemon_stops = 0

    def owned_keys(self) -> list[str]:
        return []

    def requeue_owned(self) -> int:
        self.requeued += 1
        return 0

    async def stop_unowned_daemons(self) -> int:
        self.daemon_stops += 1
        return 0


async def wait_for(event: asyncio.Event) -> None:
    await event.wait()


def member(client: FakeClient, who: str, **kw: Any) -> tuple[ShardMember, Controller]:
    m, c = ShardMember(client, "op", "default", who, TIMINGS, **kw), Controller()
    m.attach([c])
    return m, c


async def holds(client: FakeClient, m: ShardMember) -> set[int]:
    lease = await client.get(LEASES, m.name, "default")
    return decode_slots(lease["metadata"]["annotations"][HOLDS])


async def test_release_drains_before_the_new_owner_claims_and_starts() -> None:
    client = FakeClient()
    a, ca = member(client, "a")
    await a.round()
    assert not a.owns(0), "a claim is not a hold: the next round verifies it"
    await a.round()
    assert a.owns(0) and len(a.member.held) == 2048 and ca.requeued == 1
    moving = assign({"a", "b"}).slots_of("b")[0]
    h = slot_bounds(moving, 2048)[0]
    finish = asyncio.Event()
    ca.in_flight["ns/x"] = (h, asyncio.create_task(wait_for(finish)))  # a reconcile of a key that moves
    b, _ = member(client, "b")
    await b.round()  # b joins; a still lists every slot, so b claims none
    releasing = asyncio.create_task(a.round())
    await asyncio.sleep(0.2)
    assert not releasing.done(), "the release waits for the in-flight reconcile"
    assert not a.owns(h), "a stops dequeuing the slot at once"
    assert moving in await holds(client, a), "its Lease still lists the slot while it drains"
    await b.round()
    assert not b.owns(h) and moving not in b.member.claimed
    assert ca.daemon_stops == 0, "the daemons of released keys stop after their reconciles drained"
    finish.set()
    await releasing
    assert ca.daemon_stops == 1, "the release stopped the daemons of the keys a no longer owns"
    assert moving not in await holds(client, a)
    await b.round()
    assert moving in b.member.claimed and not b.owns(h), "claimed, not yet verified"
    await a.round()
    await b.round()
    assert b.owns(h) and not a.owns(h)
    sample = metrics.REGISTRY.get_sample_value
    assert (sample("kubeloop_shard_handoffs_total", {"name": "op", "direction": "released"}) or 0) >= 1
    assert (sample("kubeloop_shard_handoff_duration_seconds_sum", {"name": "op", "direction": "released"}) or 0) >= 0.15
    assert sample("kubeloop_shard_slots_owned", {"name": "op"}) is not None


async def test_a_drain_cancels_after_its_timeout() -> None:
    client = FakeClient()
    a, ca = member(client, "a", handoff_timeout=0.1)
    await a.round()
    await a.round()
    stuck = asyncio.create_task(wait_for(asyncio.Event()))
    moving = assign({"a", "b"}).slots_of("b")[0]
    ca.in_flight["ns/x"] = (slot_bounds(moving, 2048)[0], stuck)
    b, _ = member(client, "b")
    await b.round()
    await asyncio.wait_for(a.round(), 2)
    assert stuck.cancelled() and moving not in await holds(client, a)


async def test_a_clean_leave_deletes_the_lease_and_others_take_over_next_round() -> None:
    client = FakeClient()
    a, _ = member(client, "a")
    b, _ = member(client, "b")
    for _ in range(3):
        await a.round()
        await b.round()
    assert a.member.held and b.member.held
    await a.leave()
    assert not a.owns(0) and len((await client.list(LEASES, "default"))["items"]) == 1
    for _ in range(2):
        await b.round()
    assert len(b.member.held) == 2048


def test_leader_election_and_sharding_are_refused_together() -> None:
    with pytest.raises(ValueError, match="--leader-elect.*--shards auto"):
        ManagerOptions(leader_elect=True, shards=True)
    result = CliRunner().invoke(build_command(load_operator("immortal")), ["--leader-elect", "--shards", "auto"])
    assert result.exit_code == 2
    assert "--leader-elect and --shards auto are exclusive" in result.output
