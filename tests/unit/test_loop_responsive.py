"""A reconcile computing for seconds in pure Python, while a client polls /healthz and an admission webhook
over real sockets (127.0.0.1, TLS for the webhook) from a thread of its own. Off the loop
(``ctx.run_in_thread``), both keep answering; on the loop, the probes still answer (their own thread) and
the webhook answers once the loop is free. Latencies are printed (``-s``), never asserted."""

from __future__ import annotations

import asyncio
import http.client
import ssl
import threading
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import orjson
import pytest_asyncio

from kubeloop.manager.http import HttpServer
from kubeloop.metrics.loop import LoopMonitor
from kubeloop.reconcile.context import close_process_pool
from kubeloop.webhooks import Denied, WebhookCerts, WebhookServer
from kubeloop.webhooks.admission import AdmissionRequest

from .controller_kit import Kit, cm
from .test_webhooks_admission import review

COMPUTE = 3.0


def heavy(seconds: float) -> int:
    """Pure-Python work, no I/O and no C call that releases the GIL (module level: picklable)."""
    n, end = 0, time.monotonic() + seconds
    while time.monotonic() < end:
        n += sum(i * i for i in range(500))
    return n


def total(n: int) -> int:
    return sum(i * i for i in range(n))


async def check(req: AdmissionRequest) -> None:
    if (req.object or {}).get("data", {}).get("a") != "2":
        raise Denied("must be '2'", field="data.a")


@dataclass
class Served:
    probes: int
    webhook: WebhookServer
    monitor: LoopMonitor


@dataclass
class Poll:
    """Answers seen by the polling thread: (seconds, answered correctly) per request, per target."""

    healthz: list[tuple[float, bool]] = field(default_factory=list)
    webhook: list[tuple[float, bool]] = field(default_factory=list)
    stop: threading.Event = field(default_factory=threading.Event)

    def threads(self, served: Served, webhook_timeout: float) -> list[threading.Thread]:
        """One polling thread per target, so that a slow answer of one does not delay the other's polls."""
        tls = ssl.create_default_context(cadata=served.webhook.certs.ca_bundle.decode())
        body = orjson.dumps(review())
        return [threading.Thread(target=self._poll, args=(self.healthz, lambda: _healthz(served.probes))),
                threading.Thread(target=self._poll, args=(
                    self.webhook, lambda: _admit(served.webhook.port, tls, body, webhook_timeout)))]

    def _poll(self, into: list[tuple[float, bool]], call: Any) -> None:
        while not self.stop.is_set():
            into.append(_timed(call))
            time.sleep(0.02)


def _timed(call: Any) -> tuple[float, bool]:
    started = time.monotonic()
    try:
        ok = call()
    except OSError:
        ok = False
    return time.monotonic() - started, ok


def _healthz(port: int) -> bool:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.request("GET", "/healthz")
        resp = conn.getresponse()
        return resp.status == 200 and resp.read() == b"ok"
    finally:
        conn.close()


def _admit(port: int, tls: ssl.SSLContext, body: bytes, timeout: float) -> bool:
    conn = http.client.HTTPSConnection("127.0.0.1", port, timeout=timeout, context=tls)
    try:
        conn.request("POST", "/check", body, {"Content-Type": "application/json"})
        resp = conn.getresponse()
        return resp.status == 200 and orjson.loads(resp.read())["response"]["allowed"] is True
    finally:
        conn.close()


def _report(what: str, samples: list[tuple[float, bool]]) -> str:
    times = sorted(t for t, _ in samples)
    p = lambda q: times[min(len(times) - 1, int(q * len(times)))] * 1000  # noqa: E731
    return (f"{what}: {len(times)} requests, {sum(ok for _, ok in samples)} answered correctly, "
            f"p50 {p(0.5):.1f} ms, p99 {p(0.99):.1f} ms, max {times[-1] * 1000:.1f} ms")


@pytest_asyncio.fixture
async def served() -> AsyncIterator[Served]:
    certs = WebhookCerts()
    webhook = WebhookServer(certs)
    webhook.validating("/check", check)
    await webhook.start()
    monitor = LoopMonitor(interval=0.05, warn_after=1.0)
    monitor.start()
    probes = HttpServer("0", "127.0.0.1:0", ready=lambda: True, healthy=lambda: monitor.blocked_for() < 120)
    await probes.start()
    yield Served(probes.bound["probes"], webhook, monitor)
    await probes.stop()
    monitor.stop()
    await webhook.stop()
    certs.close()


async def _while_reconciling(kit: Kit, served: Served, reconcile: Any, webhook_timeout: float) -> Poll:
    kit.client.add(cm("big", ns="tenant-a"))
    controller = await kit.controller(reconcile)
    poll = Poll()
    pollers = poll.threads(served, webhook_timeout)
    for poller in pollers:
        poller.start()
    try:
        await asyncio.sleep(0.2)  # a few answers before the computation, as a baseline
        await controller.process("tenant-a/big")
    finally:
        poll.stop.set()
        for poller in pollers:  # not joined on the loop: a poller may be waiting for the webhook
            await asyncio.to_thread(poller.join)
    return poll


async def test_off_the_loop_probes_and_webhooks_keep_answering(kit: Kit, served: Served) -> None:
    results: list[int] = []

    async def reconcile(obj: dict[str, Any], ctx: Any) -> None:
        results.append(await ctx.run_in_thread(heavy, COMPUTE))

    poll = await _while_reconciling(kit, served, reconcile, webhook_timeout=10)
    print("\n" + _report(f"/healthz during a {COMPUTE:g} s computation in ctx.run_in_thread", poll.healthz))
    print(_report(f"webhook during a {COMPUTE:g} s computation in ctx.run_in_thread", poll.webhook))
    assert results and results[0] > 0
    assert len(poll.healthz) > 5 and all(ok for _, ok in poll.healthz)
    assert len(poll.webhook) > 5 and all(ok for _, ok in poll.webhook)


async def test_on_the_loop_the_probes_still_answer_and_the_webhook_after_the_stall(kit: Kit,
                                                                                 served: Served) -> None:
    async def reconcile(obj: dict[str, Any], ctx: Any) -> None:
        heavy(COMPUTE)  # the mistake the lag monitor names: computing on the loop

    poll = await _while_reconciling(kit, served, reconcile, webhook_timeout=COMPUTE + 10)
    print("\n" + _report(f"/healthz during a {COMPUTE:g} s computation on the loop", poll.healthz))
    print(_report(f"webhook during a {COMPUTE:g} s computation on the loop", poll.webhook))
    assert len(poll.healthz) > 5 and all(ok for _, ok in poll.healthz)
    assert poll.webhook and all(ok for _, ok in poll.webhook)


async def test_run_in_process_returns_the_result_of_a_module_level_function(kit: Kit) -> None:
    results: list[int] = []

    async def reconcile(obj: dict[str, Any], ctx: Any) -> None:
        results.append(await ctx.run_in_process(total, 10_000))

    kit.client.add(cm("p", ns="tenant-a"))
    controller = await kit.controller(reconcile)
    try:
        await controller.process("tenant-a/p")
    finally:
        await asyncio.to_thread(close_process_pool)
    assert results == [total(10_000)]
