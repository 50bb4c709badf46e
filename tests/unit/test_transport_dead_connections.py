"""A request that gets no answer takes the client's other connections to the same server with it.

A tiny HTTP/1.1 server on 127.0.0.1 stands in for a network path that dies without a FIN: connections it
black-holes stay open and read requests but never answer, while connections opened afterwards work.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from kubeloop.client.config import Config
from kubeloop.client.transport import Transport


class MuteServer:
    def __init__(self) -> None:
        self.muted: set[int] = set()  # connection ids that read requests and never answer
        self.mute_new = False  # every connection from now on is muted too (a server that hangs)
        self.requests_on_muted: list[str] = []
        self._ids = 0
        self._open: set[int] = set()
        self.server: asyncio.Server | None = None

    async def start(self) -> str:
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        port = self.server.sockets[0].getsockname()[1]
        return f"http://127.0.0.1:{port}"

    def mute_open_connections(self) -> int:
        self.muted |= self._open
        return len(self._open)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._ids += 1
        conn = self._ids
        self._open.add(conn)
        if self.mute_new:
            self.muted.add(conn)
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                request_line, *header_lines = head.decode().split("\r\n")
                length = next((int(h.split(":")[1]) for h in header_lines
                               if h.lower().startswith("content-length:")), 0)
                await reader.readexactly(length)
                method, path = request_line.split()[:2]
                if conn in self.muted:
                    self.requests_on_muted.append(f"{method} {path}")
                    continue
                if path.startswith("/watch"):  # a watch that sends its headers, one event, then nothing
                    writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                                 b"Transfer-Encoding: chunked\r\n\r\n")
                    event = b'{"type":"BOOKMARK","object":{}}\n'
                    writer.write(b"%x\r\n%s\r\n" % (len(event), event))
                    await writer.drain()
                    self.muted.add(conn)
                    continue
                if path.startswith("/hang"):
                    self.muted.add(conn)
                    self.requests_on_muted.append(f"{method} {path}")
                    continue
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}")
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            self._open.discard(conn)
            writer.close()

    async def stop(self) -> None:
        if self.server is not None:
            self.server.close()


@pytest.fixture
async def server() -> AsyncIterator[MuteServer]:
    srv = MuteServer()
    yield srv
    await srv.stop()


async def test_a_request_timeout_closes_a_watch_on_the_same_dead_pool(server: MuteServer) -> None:
    transport = Transport(Config(server=await server.start()), timeout=0.5)

    async def follow() -> None:
        async for _ in transport.stream("/watch", {}, read_timeout=60):
            pass

    watch = asyncio.create_task(follow())
    try:
        await asyncio.sleep(0.2)  # the watch has its event and is silent from now on
        with pytest.raises(TimeoutError):
            await transport.request("PATCH", "/hang", body={})
        # Without closing the pool the watch would stay open until its 60 s inactivity timeout.
        done, _ = await asyncio.wait({watch}, timeout=10)
        assert watch in done, "the watch on the dead pool is still open"
        assert await transport.request("GET", "/ok") == {}
    finally:
        watch.cancel()
        await transport.close()


async def test_after_a_timeout_idle_connections_of_the_dead_pool_are_not_reused(server: MuteServer) -> None:
    transport = Transport(Config(server=await server.start()), timeout=0.5)
    try:
        # Two pooled keep-alive connections, then the network path under them dies.
        await asyncio.gather(transport.request("GET", "/ok"), transport.request("GET", "/ok"))
        assert server.mute_open_connections() == 2
        with pytest.raises(TimeoutError):
            await transport.request("PATCH", "/write", body={})  # writes are not retried
        assert await transport.request("GET", "/ok") == {}
        # The read went to a new connection: nothing but the timed-out write reached a muted one.
        assert server.requests_on_muted == ["PATCH /write"]
    finally:
        await transport.close()


async def test_a_silent_request_is_cut_when_the_server_answers_a_probe(server: MuteServer) -> None:
    # a half-open connection is noticed long before the 60 s request timeout. The server
    # answers new connections (the probe), so the silence is the connection's, not the server's.
    transport = Transport(Config(server=await server.start()), timeout=60, silent_after=0.5, probe_timeout=1)

    async def follow() -> None:
        async for _ in transport.stream("/watch", {}, read_timeout=60):
            pass

    watch = asyncio.create_task(follow())
    try:
        await asyncio.sleep(0.2)
        started = asyncio.get_running_loop().time()
        with pytest.raises(Exception) as caught:  # a write on a dead path fails, for its error policy
            await asyncio.wait_for(transport.request("PATCH", "/hang", body={}), 20)
        assert not isinstance(caught.value, TimeoutError), "waited out the wait_for instead of being cut"
        assert asyncio.get_running_loop().time() - started < 5
        done, _ = await asyncio.wait({watch}, timeout=5)
        assert watch in done, "the watch on the dead pool is still open"
        assert await transport.request("GET", "/ok") == {}
    finally:
        watch.cancel()
        await transport.close()


async def test_a_slow_server_is_not_mistaken_for_a_dead_connection(server: MuteServer) -> None:
    # When the probe gets no answer either, the server (not the connection) is slow: keep waiting.
    transport = Transport(Config(server=await server.start()), timeout=2, silent_after=0.3, probe_timeout=0.3)
    server.mute_new = True
    try:
        started = asyncio.get_running_loop().time()
        with pytest.raises(TimeoutError):
            await transport.request("PATCH", "/hang", body={})
        assert asyncio.get_running_loop().time() - started >= 1.9, "cut before its own timeout"
    finally:
        await transport.close()


async def test_a_collection_delete_is_not_judged_by_its_silence(server: MuteServer) -> None:
    # Deleting thousands of objects in one request legitimately keeps the connection silent for long
    # while the server answers others: only its own timeout may cut it, never the half-open check.
    transport = Transport(Config(server=await server.start()), timeout=2, silent_after=0.3, probe_timeout=0.5)
    try:
        started = asyncio.get_running_loop().time()
        with pytest.raises(TimeoutError):
            await transport.request("DELETE", "/hang", body={}, verb="DELETECOLLECTION")
        assert asyncio.get_running_loop().time() - started >= 1.9, "cut as a half-open connection"
    finally:
        await transport.close()


async def test_a_watch_sent_on_a_dead_pooled_connection_is_cut_before_its_inactivity_timeout(
        server: MuteServer) -> None:
    # The path under the pool died (the half-open fault); the next watch takes a pooled connection and
    # gets no headers. Judged only by its 60 s inactivity timeout, each reopened watch would take the
    # next dead connection of the pool in turn (the fault suite saw 23 s to converge with a 5 s one).
    transport = Transport(Config(server=await server.start()), timeout=60, silent_after=0.5, probe_timeout=1)
    try:
        await asyncio.gather(*(transport.request("GET", "/ok") for _ in range(3)))
        assert server.mute_open_connections() == 3
        started = asyncio.get_running_loop().time()
        with pytest.raises(Exception) as caught:
            async with asyncio.timeout(20):
                async for _ in transport.stream("/watch", {}, read_timeout=60):
                    pass
        assert not isinstance(caught.value, TimeoutError), "waited out the inactivity timeout"
        assert asyncio.get_running_loop().time() - started < 5
        assert server.requests_on_muted == ["GET /watch"]
        events = transport.stream("/watch", {}, read_timeout=60)
        assert await anext(events) == {"type": "BOOKMARK", "object": {}}  # the reopened watch: a new connection
        await events.aclose()
    finally:
        await transport.close()


async def test_a_watch_timing_out_before_its_headers_takes_the_dead_pool_with_it(server: MuteServer) -> None:
    # An inactivity timeout shorter than the half-open check (the fault suite runs with 5 s): the watch's
    # own timeout comes first, and the next watch must not take the next dead connection of the pool.
    transport = Transport(Config(server=await server.start()), timeout=60, silent_after=30, probe_timeout=1)
    try:
        await asyncio.gather(*(transport.request("GET", "/ok") for _ in range(3)))
        assert server.mute_open_connections() == 3
        with pytest.raises(TimeoutError):
            async for _ in transport.stream("/watch", {}, read_timeout=0.5):
                pass
        events = transport.stream("/watch", {}, read_timeout=0.5)
        assert await anext(events) == {"type": "BOOKMARK", "object": {}}
        await events.aclose()
        assert server.requests_on_muted == ["GET /watch"]
    finally:
        await transport.close()
