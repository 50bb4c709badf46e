"""A real stall, in real time: two replicas, each in its own thread with its own event loop and client,
elect a leader on the in-process fake API server (HTTP on 127.0.0.1, a third thread). The leader's loop is
held by a pure-Python computation until the standby, seeing no renewal for the Lease's duration, has taken
it over; the old leader's next write, made as the computation ends, must not reach the server. The same
scenario with the plain client shows the write would otherwise have gone out."""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import pytest

from kubeloop.client import Client, NotFound
from kubeloop.controller.gate import Fenced
from kubeloop.manager.fence import FencedClient
from kubeloop.manager.leader import LeaderElector
from kubeloop.resources.builtin import CONFIG_MAP, LEASE
from kubeloop.testing.apiserver.server import FakeApiServer

from .controller_kit import cm

LEASE_DURATION, RENEW_DEADLINE, RETRY = 1.5, 1.0, 0.2


def compute_until(done: Callable[[], bool], limit: float = 30.0) -> float:
    """Pure-Python work until ``done()`` (another thread's event), at most ``limit`` s; returns its length."""
    started = time.monotonic()
    while not done() and time.monotonic() - started < limit:
        sum(i * i for i in range(300))
    return time.monotonic() - started


class Loop:
    """An event loop running in a thread of its own; ``run`` submits a coroutine and waits for it."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()

    def run(self, make: Callable[[], Awaitable[Any]], timeout: float = 60) -> Any:
        async def call() -> Any:
            return await make()
        return asyncio.run_coroutine_threadsafe(call(), self.loop).result(timeout)

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)
        self.loop.close()


@pytest.fixture
def server() -> Iterator[tuple[Loop, FakeApiServer]]:
    loop, fake = Loop(), FakeApiServer()
    loop.run(fake.start)
    yield loop, fake
    loop.run(fake.stop)
    loop.close()


def elector(client: Client, identity: str, namespace: str) -> LeaderElector:
    return LeaderElector(client, "lock", namespace, identity, lease_duration=LEASE_DURATION,
                         renew_deadline=RENEW_DEADLINE, retry_period=RETRY)


def scenario(make_client: Callable[[], Awaitable[Client]], fenced: bool,
             namespace: str = "default") -> tuple[BaseException | None, str | None, bool]:
    """(what the old leader's write raised, the Lease's holder after, whether the write reached the server).
    Blocking: runs the two replicas' threads to the end."""
    a_loop, b_loop = Loop(), Loop()
    a_client: Client = a_loop.run(make_client)
    b_client: Client = b_loop.run(make_client)
    a, b = elector(a_client, "a", namespace), elector(b_client, "b", namespace)
    renewing = None
    try:
        a_loop.run(a.acquire)
        renewing = asyncio.run_coroutine_threadsafe(a.renew_until_lost(), a_loop.loop)
        standby = asyncio.run_coroutine_threadsafe(b.acquire(), b_loop.loop)
        time.sleep(RETRY * 3)
        assert not standby.done(), "the standby must wait while the leader renews"

        async def reconcile() -> BaseException | None:
            # Holds a's loop (no renewal, no check) until the standby has taken the expired Lease.
            stalled = compute_until(standby.done)
            print(f"\nthe leader's loop was held {stalled:.2f}s (lease {LEASE_DURATION}s, renew deadline "
                  f"{RENEW_DEADLINE}s); then it writes {'through the fence' if fenced else 'unfenced'}")
            writer = FencedClient(a_client, a.confirm) if fenced else a_client
            try:
                await writer.create(cm("after-stall", ns=namespace))
            except Fenced as exc:
                return exc
            return None

        raised = a_loop.run(reconcile)
        assert standby.done(), "the standby did not take over within 30 s"

        async def written() -> bool:
            try:
                await b_client.get(CONFIG_MAP, "after-stall", namespace)
                return True
            except NotFound:
                return False
        reached = b_loop.run(written)
        holder = b_loop.run(lambda: b_client.get(LEASE, "lock", namespace))["spec"]["holderIdentity"]
        return raised, holder, reached
    finally:
        if renewing is not None:
            a_loop.loop.call_soon_threadsafe(renewing.cancel)
            with contextlib.suppress(BaseException):
                renewing.result(5)
        a_loop.run(a_client.close)
        b_loop.run(b_client.close)
        a_loop.close()
        b_loop.close()


def test_the_old_leader_writes_nothing_after_a_stall_in_which_the_standby_took_over(
        server: tuple[Loop, FakeApiServer]) -> None:
    raised, holder, reached = scenario(server[1].client, fenced=True)
    assert isinstance(raised, Fenced), raised
    assert holder == "b" and not reached


def test_without_the_fence_the_same_write_would_have_gone_out(server: tuple[Loop, FakeApiServer]) -> None:
    raised, holder, reached = scenario(server[1].client, fenced=False)
    assert raised is None and holder == "b" and reached, "the hazard the fence exists for"
