"""The manager's /metrics, /healthz, /readyz server (kubeloop/manager/http.py) against real clients
(aiohttp, http.client, curl, raw sockets): methods, paths, versions, keep-alive, gzip, bad and slow
clients, concurrent scrapes, shutdown with idle connections."""

from __future__ import annotations

import asyncio
import gzip
import http.client
import shutil
import time
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest
import pytest_asyncio
from prometheus_client.parser import text_string_to_metric_families

from kubeloop import metrics
from kubeloop.manager import http as server_module
from kubeloop.manager.http import CONTENT_TYPE, HttpServer


class State:
    ready = True
    healthy = True


@pytest_asyncio.fixture
async def served() -> AsyncIterator[tuple[HttpServer, State]]:
    state = State()
    # different addresses, so two listeners (the same address serves all three paths on one port)
    server = HttpServer("127.0.0.1:0", ":0", lambda: state.ready, lambda: state.healthy)
    await server.start()
    yield server, state
    await server.stop()


async def raw(port: int, data: bytes, *, read_timeout: float = 5) -> bytes:
    """Send bytes, read until the server closes (or the timeout: then what came so far)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(data)
    await writer.drain()
    chunks = []
    try:
        async with asyncio.timeout(read_timeout):
            while chunk := await reader.read(65536):
                chunks.append(chunk)
    except TimeoutError:
        pass
    writer.close()
    return b"".join(chunks)


def get(port: int, path: str, method: str = "GET", headers: dict[str, str] | None = None) -> tuple[Any, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    conn.request(method, path, headers=headers or {})
    resp = conn.getresponse()
    body = resp.read()
    conn.close()
    return resp, body


async def test_metrics_with_aiohttp_client_parse_as_prometheus_text(served: tuple[HttpServer, State]) -> None:
    server, _ = served
    metrics.reconcile_total.labels("http-test", "success").inc()
    async with aiohttp.ClientSession() as session:
        async with session.get(f"http://127.0.0.1:{server.bound['metrics']}/metrics") as resp:
            assert resp.status == 200
            assert resp.headers["Content-Type"] == CONTENT_TYPE
            assert resp.headers["Content-Encoding"] == "gzip"  # aiohttp accepts gzip, and decodes it
            text = await resp.text()
    families = {f.name: f for f in text_string_to_metric_families(text)}
    family = families["controller_runtime_reconcile"]
    samples = {(s.name, tuple(sorted(s.labels.items()))): s.value for s in family.samples}
    assert samples[("controller_runtime_reconcile_total", (("controller", "http-test"), ("result", "success")))] >= 1


async def test_probes_with_http_client(served: tuple[HttpServer, State]) -> None:
    server, state = served
    port = server.bound["probes"]
    assert server.bound["metrics"] != port
    for path in ("/healthz", "/readyz", "/readyz?verbose=1"):
        resp, body = await asyncio.to_thread(get, port, path)
        assert (resp.status, body, resp.getheader("Content-Length")) == (200, b"ok", "2")
    state.ready, state.healthy = False, False
    assert (await asyncio.to_thread(get, port, "/readyz"))[0].status == 503
    assert (await asyncio.to_thread(get, port, "/healthz"))[0].status == 500
    assert (await asyncio.to_thread(get, port, "/metrics"))[0].status == 404  # metrics live on their own port


async def test_head_post_and_unknown_paths(served: tuple[HttpServer, State]) -> None:
    port = served[0].bound["metrics"]
    resp, body = await asyncio.to_thread(get, port, "/metrics", "HEAD")
    assert resp.status == 200 and body == b"" and int(resp.getheader("Content-Length")) > 0
    resp, body = await asyncio.to_thread(get, port, "/metrics", "POST")
    assert resp.status == 405 and resp.getheader("Allow") == "GET, HEAD"
    assert resp.getheader("Connection") == "close"
    assert (await asyncio.to_thread(get, port, "/nope"))[0].status == 404


async def test_keep_alive_serves_pipelined_requests_on_one_connection(served: tuple[HttpServer, State]) -> None:
    port = served[0].bound["probes"]
    two = b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\nGET /readyz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    out = await raw(port, two)
    assert out.count(b"HTTP/1.1 200 OK") == 2
    assert b"Connection: keep-alive" in out and out.endswith(b"Connection: close\r\n\r\nok")


async def test_http_1_0_gets_an_answer_with_length_and_close(served: tuple[HttpServer, State]) -> None:
    out = await raw(served[0].bound["probes"], b"GET /readyz HTTP/1.0\r\n\r\n")
    assert out.startswith(b"HTTP/1.1 200 OK\r\n")
    assert b"Content-Length: 2\r\n" in out and b"Connection: close\r\n" in out and out.endswith(b"\r\n\r\nok")


@pytest.mark.parametrize(("request_bytes", "status"), [
    (b"GARBAGE\r\n\r\n", b"400"),
    (b"GET /metrics\r\n\r\n", b"400"),
    (b"GET /metrics HTTP/1.1\r\nno colon here\r\n\r\n", b"400"),
    (b"GET /metrics HTTP/2.0\r\n\r\n", b"505"),
    (b"GET /metrics HTTP/1.1\r\n" + b"X-Big: " + b"a" * 9000 + b"\r\n\r\n", b"431"),
    (b"GET /metrics HTTP/1.1\r\n" + b"X-A: 12345678901234567890\r\n" * 400 + b"\r\n", b"431"),
])
async def test_malformed_and_oversized_requests(served: tuple[HttpServer, State], request_bytes: bytes,
                                                status: bytes) -> None:
    out = await raw(served[0].bound["metrics"], request_bytes)
    assert out.startswith(b"HTTP/1.1 " + status), out[:80]
    assert b"Connection: close" in out


async def test_a_stalled_half_head_is_cut_off_and_others_are_served(served: tuple[HttpServer, State],
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(server_module, "HEAD_TIMEOUT", 0.5)
    port = served[0].bound["probes"]
    started = time.monotonic()
    stalled = asyncio.create_task(raw(port, b"GET /readyz HTTP/1.1\r\nHost: x\r\n"))
    silent = asyncio.create_task(raw(port, b""))
    partial_line = asyncio.create_task(raw(port, b"GET /rea"))
    await asyncio.sleep(0.1)
    assert (await asyncio.to_thread(get, port, "/readyz"))[0].status == 200  # not blocked by them
    assert (await stalled).startswith(b"HTTP/1.1 408")
    assert await silent == b"" and await partial_line == b""  # closed: nothing of a request had arrived
    assert time.monotonic() - started < 3


async def test_concurrent_scrapes(served: tuple[HttpServer, State]) -> None:
    url = f"http://127.0.0.1:{served[0].bound['metrics']}/metrics"

    async def scrape(session: aiohttp.ClientSession) -> str:
        async with session.get(url) as resp:
            assert resp.status == 200
            return await resp.text()

    async with aiohttp.ClientSession() as a, aiohttp.ClientSession() as b:
        texts = await asyncio.gather(*(scrape(a if i % 2 else b) for i in range(40)))
    assert all("workqueue_depth" in t for t in texts)


async def test_gzip_only_when_accepted(served: tuple[HttpServer, State]) -> None:
    port = served[0].bound["metrics"]
    resp, body = await asyncio.to_thread(get, port, "/metrics", "GET", {"Accept-Encoding": "gzip"})
    assert resp.getheader("Content-Encoding") == "gzip" and b"# TYPE" in gzip.decompress(body)
    resp, body = await asyncio.to_thread(get, port, "/metrics", "GET", {"Accept-Encoding": "gzip;q=0"})
    assert resp.getheader("Content-Encoding") is None and body.startswith(b"# HELP")
    resp, body = await asyncio.to_thread(get, port, "/metrics", "GET", {"Accept-Encoding": "identity"})
    assert resp.getheader("Content-Encoding") is None and int(resp.getheader("Content-Length")) == len(body)


@pytest.mark.skipif(shutil.which("curl") is None, reason="curl is not installed")
async def test_curl(served: tuple[HttpServer, State]) -> None:
    port = served[0].bound["metrics"]
    for flags in (["--compressed"], ["--http1.0"], []):
        proc = await asyncio.create_subprocess_exec(
            "curl", "-sS", "--fail", "--max-time", "5", *flags, f"http://127.0.0.1:{port}/metrics",
            stdout=asyncio.subprocess.PIPE)
        out, _ = await proc.communicate()
        assert proc.returncode == 0 and b"# TYPE workqueue_depth gauge" in out, flags


async def test_a_failing_check_is_a_500_and_the_server_keeps_serving(served: tuple[HttpServer, State]) -> None:
    server, _ = served

    def boom() -> bool:
        raise RuntimeError("check failed")

    server.healthy = boom
    port = server.bound["probes"]
    assert (await asyncio.to_thread(get, port, "/healthz"))[0].status == 500
    assert (await asyncio.to_thread(get, port, "/readyz"))[0].status == 200


async def test_same_address_serves_all_and_zero_disables() -> None:
    both = HttpServer("127.0.0.1:0", "127.0.0.1:0", lambda: True)
    await both.start()
    try:
        port = both.bound["metrics"]
        assert both.bound["probes"] == port
        for path in ("/metrics", "/healthz", "/readyz"):
            assert (await asyncio.to_thread(get, port, path))[0].status == 200
    finally:
        await both.stop()
    off = HttpServer("0", "0", lambda: True)
    await off.start()
    assert off.bound == {}
    await off.stop()
    only_probes = HttpServer("0", "127.0.0.1:0", lambda: True)
    await only_probes.start()
    assert set(only_probes.bound) == {"probes"}
    await only_probes.stop()


async def test_stop_closes_idle_kept_alive_connections_promptly() -> None:
    server = HttpServer("127.0.0.1:0", "0", lambda: True)
    await server.start()
    reader, writer = await asyncio.open_connection("127.0.0.1", server.bound["metrics"])
    writer.write(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
    await reader.readuntil(b"\r\n\r\n")  # answered; the connection stays open for the next request
    started = time.monotonic()
    await asyncio.wait_for(server.stop(), 3)
    assert time.monotonic() - started < 1
    writer.close()
