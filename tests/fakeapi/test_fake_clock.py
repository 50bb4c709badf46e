"""The fake clock (``fake_clock``: virtual time on the event loop) with the fake API server: hours of
requeues, backoff, timers, resyncs and lease expiry run in moments of wall time, and time never jumps
while I/O to the server or work in a thread is under way. Assertions are on virtual time (the loop's
clock, which the runtime reads) and on order and counts; wall time is printed and bounded loosely."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import defaultdict
from collections.abc import AsyncIterator, Callable
from typing import Any

from kubeloop import Context, Operator, Result
from kubeloop.client import Client
from kubeloop.manager.leader import LeaderElector
from kubeloop.resources.builtin import CONFIG_MAP
from kubeloop.testing import operator_running
from kubeloop.testing.apiserver import FakeApiServer
from kubeloop.testing.virtualtime import VirtualTime

WALL_BOUND = 60.0  # seconds: loose, only to fail instead of hanging if time stopped jumping


def cm(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "default"}}


def ours(obj: Any) -> bool:
    """Not the namespace's own kube-root-ca.crt ConfigMap."""
    return obj["metadata"]["name"] != "kube-root-ca.crt"


def now() -> float:
    return asyncio.get_running_loop().time()


@contextlib.asynccontextmanager
async def running(op: Operator, fake: FakeApiServer) -> AsyncIterator[None]:
    """The operator under a Manager against the fake server."""
    async with await fake.client(field_manager=op.name) as client:
        async with operator_running(op, client, namespaces=["default"]):
            yield


async def until(check: Callable[[], bool], virtual: float) -> None:
    """Waits (in virtual time) until ``check()``; fails after ``virtual`` seconds or WALL_BOUND of wall time."""
    wall = time.perf_counter()
    async with asyncio.timeout(virtual):
        while not check():
            assert time.perf_counter() - wall < WALL_BOUND, "virtual time did not advance"
            await asyncio.sleep(1)


async def test_requeue_after_an_hour(fake_clock: VirtualTime, fake_api: FakeApiServer, fake_client: Client
                                     ) -> None:
    op, seen = Operator("hourly"), []

    @op.reconcile(CONFIG_MAP, resync=None)
    async def reconcile(obj: Any, ctx: Context) -> Result | None:
        if not ours(obj):
            return None
        seen.append(now())
        return Result(requeue_after=3600)

    wall = time.perf_counter()
    async with running(op, fake_api):
        await fake_client.create(cm("a"))
        await until(lambda: len(seen) >= 3, 3 * 3600)
    gaps = [round(b - a) for a, b in zip(seen, seen[1:], strict=False)]
    print(f"reconciles at {[round(t - seen[0]) for t in seen]} (virtual s) in "
          f"{time.perf_counter() - wall:.2f}s of wall time, {fake_clock.jumps} jumps")
    assert gaps[:2] == [3600, 3600]


async def test_error_backoff_doubles_to_its_cap(fake_clock: VirtualTime, fake_api: FakeApiServer,
                                                fake_client: Client) -> None:
    op, seen = Operator("failing"), []

    @op.reconcile(CONFIG_MAP, resync=None)
    async def reconcile(obj: Any, ctx: Context) -> None:
        if ours(obj):
            seen.append(now())
            raise RuntimeError("always fails")

    wall = time.perf_counter()
    async with running(op, fake_api):
        await fake_client.create(cm("a"))
        await until(lambda: len(seen) >= 20, 3600)
    gaps = [b - a for a, b in zip(seen, seen[1:], strict=False)]
    print(f"{len(seen)} failing reconciles over {seen[-1] - seen[0]:.0f} virtual s in "
          f"{time.perf_counter() - wall:.2f}s of wall time; gaps {[round(g, 3) for g in gaps]}")
    # A gap is the backoff (virtual, exact) plus one reconcile's real run time (small, but it varies).
    backoffs = [min(300.0, 0.005 * 2 ** i) for i in range(len(gaps))]
    assert all(gap >= backoff - 1e-6 for gap, backoff in zip(gaps, backoffs, strict=True))  # never sooner
    doubling = [(a, b) for a, b in zip(gaps, gaps[1:], strict=False) if 5 <= a and b < 300]
    assert len(doubling) >= 3 and all(abs(b / a - 2) < 0.05 for a, b in doubling)  # 5.12, 10.24, ...
    assert all(300 <= gap < 301 for gap in gaps[-3:])  # capped at 300 s


async def test_timer_fires_every_interval(fake_clock: VirtualTime, fake_api: FakeApiServer, fake_client: Client
                                          ) -> None:
    op, seen = Operator("ticking"), []

    @op.timer(CONFIG_MAP, interval=600)
    async def tick(obj: Any, ctx: Context) -> None:
        if ours(obj):
            seen.append(now())

    async with running(op, fake_api):
        await fake_client.create(cm("a"))
        await until(lambda: len(seen) >= 4, 4 * 600 + 60)
    gaps = [round(b - a) for a, b in zip(seen, seen[1:], strict=False)]
    assert gaps[:3] == [600, 600, 600]


async def test_resync_requeues_every_object(fake_clock: VirtualTime, fake_api: FakeApiServer,
                                            fake_client: Client) -> None:
    op, seen = Operator("resyncing"), defaultdict(list)

    @op.reconcile(CONFIG_MAP, resync=600)
    async def reconcile(obj: Any, ctx: Context) -> None:
        seen[obj["metadata"]["name"]].append(now())

    names = ["a", "b", "c"]
    async with running(op, fake_api):
        started = now()
        for name in names:
            await fake_client.create(cm(name))
        await until(lambda: all(len(seen[n]) >= 4 for n in names), 4 * 660 + 60)
    # Once for the event, then once per resync (jittered ±10 %, checked each second). The resyncs are
    # timed from the controller's start, not from the creates: virtual time may move on while a create
    # is on its way (the loop waits on a socket), so the first resync is judged from the start.
    for name in names:
        _, first, second, third = seen[name][:4]
        assert first - started <= 660 + 1, (name, seen[name])
        assert 540 - 1 <= second - first <= 660 + 1, (name, seen[name])
        assert 540 - 1 <= third - second <= 660 + 1, (name, seen[name])


async def test_a_standby_takes_over_an_expired_lease(fake_clock: VirtualTime, fake_client: Client) -> None:
    leader = LeaderElector(fake_client, "lock", "default", identity="first")
    standby = LeaderElector(fake_client, "lock", "default", identity="second")
    await leader.acquire()
    renewing = asyncio.create_task(leader.renew_until_lost())
    taking = asyncio.create_task(standby.acquire())
    await asyncio.sleep(60)  # a minute of renewals: the standby must not take over meanwhile
    assert not taking.done() and leader.leading.is_set()
    renewing.cancel()  # the leader dies without releasing the lease
    died = now()
    await asyncio.wait_for(taking, 60)
    took = now() - died
    lease = await fake_client.get("leases.coordination.k8s.io", "lock", "default")
    assert lease["spec"]["holderIdentity"] == "second" and lease["spec"]["leaseTransitions"] == 1
    # The standby counts the lease's 15 s from when it saw the last renewal (up to one 2 s retry period
    # before the death, and seen up to one period later) and takes over at its next retry after that.
    assert 15 - 2 <= took <= 15 + 2 + 2 + 0.5, took


async def test_requests_are_never_cut_by_a_jump(fake_clock: VirtualTime, fake_api: FakeApiServer,
                                                fake_client: Client) -> None:
    """Each request has a 5 s (virtual) timeout, which no request comes near in real time, while a ticker
    keeps a timer due within 10 s: had the loop looked idle while a request's bytes were on their way,
    time would have jumped to the tick or to the timeout itself, and the request would have been cut.
    A list of 100 larger objects spans several socket reads."""
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(10)
            ticks += 1

    async def timed(request: Any) -> Any:
        await asyncio.sleep(0.01)  # idle: time jumps here, just before the request is sent
        started, jumps_before = now(), fake_clock.jumps
        async with asyncio.timeout(5):
            result = await request
        took.append(now() - started)
        mid_request.append(fake_clock.jumps - jumps_before)
        return result

    took: list[float] = []
    mid_request: list[int] = []
    jumps = fake_clock.jumps
    task = asyncio.create_task(ticker())
    try:
        for i in range(100):
            await timed(fake_client.create({**cm(f"c{i}"), "data": {"x": "y" * 2000}}))
        for _ in range(50):
            items = (await timed(fake_client.list("configmaps", "default")))["items"]
            assert len([o for o in items if ours(o)]) == 100
        async with asyncio.timeout(5):  # work in a thread: time is real until it is done
            await asyncio.to_thread(time.sleep, 0.2)
    finally:
        task.cancel()
    jumps = fake_clock.jumps - jumps
    print(f"{ticks} ticks, {jumps} jumps, {sum(mid_request)} of them while a request was in flight; "
          f"the slowest request took {max(took) * 1000:.1f} ms of virtual time")
    assert jumps >= 150  # time did jump between the requests (at least at each idle sleep)


async def test_virtual_time_stays_monotonic_when_turned_off() -> None:
    clock = VirtualTime.of()
    before = now()
    with clock.running():
        await asyncio.sleep(3600)
    after = now()
    await asyncio.sleep(0.01)  # real time again: the hour skipped is kept
    assert before + 3600 <= after <= now()
