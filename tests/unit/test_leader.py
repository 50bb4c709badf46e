"""Leader election's transitions on the in-memory FakeClient, with timings shrunk thirtyfold (lease
0.6 s, renew deadline 0.3 s, retry 0.03 s): acquire, renew, step down on conflicts or a taken lease,
take over an expired lease, release on stop. (The manager's order around them: test_manager_leader.py.)"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest

from kubeloop import metrics
from kubeloop.client import Conflict
from kubeloop.client.errors import ServerError
from kubeloop.manager.leader import LeaderElector
from kubeloop.resources.builtin import LEASE
from kubeloop.testing.fakeclient import FakeClient

LEASE_DURATION, RENEW_DEADLINE, RETRY = 0.6, 0.3, 0.03


def candidate(client: FakeClient, identity: str, lease_duration: float = LEASE_DURATION) -> LeaderElector:
    return LeaderElector(client, "lock", "ns", identity, lease_duration=lease_duration,
                         renew_deadline=RENEW_DEADLINE, retry_period=RETRY)


def lease(client: FakeClient) -> dict[str, Any]:
    obj = client.stored(LEASE, "lock", "ns")
    assert obj is not None, "no Lease"
    return obj["spec"]


def leader_metric() -> float:
    return metrics.leader_election_master_status.labels("lock").get()


@pytest.fixture
async def tasks() -> AsyncIterator[list[asyncio.Task[Any]]]:
    """Background tasks of a test, cancelled at its end."""
    started: list[asyncio.Task[Any]] = []
    yield started
    for task in started:
        task.cancel()
    await asyncio.gather(*started, return_exceptions=True)


async def test_the_first_candidate_creates_the_lease_and_leads() -> None:
    client = FakeClient()
    a = candidate(client, "a")
    await asyncio.wait_for(a.acquire(), 1)
    assert a.leading.is_set() and not a.lost.is_set() and leader_metric() == 1
    spec = lease(client)
    assert spec["holderIdentity"] == "a" and spec["leaseTransitions"] == 0 and spec["acquireTime"]
    assert client.verbs() == ["get", "create"]


async def test_renewing_keeps_the_lease_and_its_history(tasks: list[asyncio.Task[Any]]) -> None:
    client = FakeClient()
    a = candidate(client, "a")
    await a.acquire()
    acquired = lease(client)["acquireTime"]
    tasks.append(asyncio.create_task(a.renew_until_lost()))
    await asyncio.sleep(RETRY * 5)
    spec = lease(client)
    assert client.verbs().count("update") >= 3
    assert spec["holderIdentity"] == "a" and spec["acquireTime"] == acquired and spec["leaseTransitions"] == 0


async def test_a_standby_waits_for_a_live_leader_and_takes_an_expired_lease(tasks: list[asyncio.Task[Any]]) -> None:
    client = FakeClient()
    a, b = candidate(client, "a"), candidate(client, "b")
    await a.acquire()
    renewing = asyncio.create_task(a.renew_until_lost())
    waiting = asyncio.create_task(b.acquire())
    tasks += [renewing, waiting]
    await asyncio.sleep(LEASE_DURATION * 3)
    assert not b.leading.is_set() and lease(client)["holderIdentity"] == "a", "took a lease still renewed"
    renewing.cancel()  # the leader dies without releasing
    died = time.monotonic()
    await asyncio.wait_for(waiting, LEASE_DURATION * 5)
    waited = time.monotonic() - died
    assert LEASE_DURATION - RETRY * 2 <= waited, f"took over {waited:.2f}s after the last renewal"
    spec = lease(client)
    assert spec["holderIdentity"] == "b" and spec["leaseTransitions"] == 1


async def test_a_leader_whose_renewals_conflict_steps_down_at_the_renew_deadline() -> None:
    client = FakeClient()
    a = candidate(client, "a")
    await a.acquire()
    client.fail("update", Conflict(409, "Conflict", "the object has been modified"), times=1000, resource=LEASE)
    started = time.monotonic()
    await asyncio.wait_for(a.renew_until_lost(), RENEW_DEADLINE * 5)
    took = time.monotonic() - started
    assert RENEW_DEADLINE <= took < LEASE_DURATION, f"stepped down after {took:.2f}s: before anyone may take over"
    assert a.lost.is_set() and not a.leading.is_set() and leader_metric() == 0


async def test_a_failed_renewal_within_the_deadline_is_not_a_loss(tasks: list[asyncio.Task[Any]]) -> None:
    client = FakeClient()
    a = candidate(client, "a")
    await a.acquire()
    client.fail("get", ServerError(500, "InternalError", "etcd leader changed"), times=3, resource=LEASE)
    tasks.append(asyncio.create_task(a.renew_until_lost()))
    await asyncio.sleep(RENEW_DEADLINE * 2)
    assert a.leading.is_set() and not a.lost.is_set()


async def test_a_leader_whose_lease_was_taken_steps_down() -> None:
    client = FakeClient()
    a = candidate(client, "a")
    await a.acquire()
    taken = client.stored(LEASE, "lock", "ns")
    assert taken is not None
    taken["spec"]["holderIdentity"] = "usurper"
    await client.replace(taken, resource=LEASE)
    await asyncio.wait_for(a.renew_until_lost(), RENEW_DEADLINE * 5)
    assert a.lost.is_set() and lease(client)["holderIdentity"] == "usurper"


async def test_release_hands_the_lease_over_at_once(tasks: list[asyncio.Task[Any]]) -> None:
    client = FakeClient()
    a, b = candidate(client, "a", lease_duration=30), candidate(client, "b", lease_duration=30)
    await a.acquire()
    waiting = asyncio.create_task(b.acquire())
    tasks.append(waiting)
    await asyncio.sleep(RETRY * 3)
    await a.release()
    assert not a.leading.is_set() and lease(client)["holderIdentity"] is None
    await asyncio.wait_for(waiting, RETRY * 10)  # far sooner than the 30 s lease
    assert lease(client)["holderIdentity"] == "b"


async def test_release_leaves_a_lease_it_no_longer_holds() -> None:
    client = FakeClient()
    a = candidate(client, "a")
    await a.acquire()
    taken = client.stored(LEASE, "lock", "ns")
    assert taken is not None
    taken["spec"]["holderIdentity"] = "b"
    await client.replace(taken, resource=LEASE)
    writes = client.verbs().count("update")
    await a.release()
    assert client.verbs().count("update") == writes and lease(client)["holderIdentity"] == "b"
    assert not a.leading.is_set()


async def test_cancelling_the_renewal_always_stops_it() -> None:
    """The manager cancels the renewal before releasing the lease. On Python 3.11, asyncio.wait_for
    dropped a cancel that landed as a renewal completed (about one in seven here), and the renewal went
    on — re-taking the lease just released."""
    client = FakeClient()
    a = LeaderElector(client, "lock", "ns", "a", lease_duration=LEASE_DURATION, renew_deadline=RENEW_DEADLINE,
                      retry_period=0.001)
    await a.acquire()
    for i in range(200):
        renewing = asyncio.create_task(a.renew_until_lost())
        await asyncio.sleep((i * 37 % 100) / 10_000)  # spread over ten renewals
        renewing.cancel()
        done, _ = await asyncio.wait({renewing}, timeout=0.5)
        if not done:
            while not renewing.done():  # stop it for good before failing
                renewing.cancel()
                await asyncio.sleep(0.01)
            pytest.fail(f"a cancelled renewal went on (attempt {i})")
