"""The fault proxy on loopback: relays bytes both ways, RSTs, black-holes (open but silent), refuses."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

import pytest

from harness.faults.proxy import FaultProxy


@contextlib.asynccontextmanager
async def echo_server() -> AsyncIterator[int]:
    async def echo(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(ConnectionError):
            while data := await reader.read(1024):
                writer.write(data)
                await writer.drain()
        writer.close()

    server = await asyncio.start_server(echo, "127.0.0.1", 0)
    try:
        yield server.sockets[0].getsockname()[1]
    finally:
        server.close()


async def roundtrip(port: int, payload: bytes = b"ping") -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(payload)
    await writer.drain()
    assert await asyncio.wait_for(reader.readexactly(len(payload)), 5) == payload
    return reader, writer


async def test_relays_both_ways_and_counts() -> None:
    async with echo_server() as upstream, FaultProxy(upstream) as proxy:
        _, writer = await roundtrip(proxy.port, b"hello through the proxy")
        assert proxy.stats.accepted == 1 and proxy.open_connections == 1
        assert proxy.stats.bytes_up == proxy.stats.bytes_down == len(b"hello through the proxy")
        writer.close()


async def test_reset_all_cuts_with_rst_and_new_connections_work() -> None:
    async with echo_server() as upstream, FaultProxy(upstream) as proxy:
        reader, _ = await roundtrip(proxy.port)
        assert proxy.reset_all() == 1
        with pytest.raises(ConnectionResetError):
            await asyncio.wait_for(reader.read(10), 5)
        await roundtrip(proxy.port)  # the network is back at once


async def test_blackhole_keeps_the_socket_open_and_silent() -> None:
    async with echo_server() as upstream, FaultProxy(upstream) as proxy:
        reader, writer = await roundtrip(proxy.port)
        assert proxy.blackhole_all() == 1
        writer.write(b"anyone there?")
        await writer.drain()
        # No answer, no FIN, no RST: only a timeout can tell.
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(reader.read(10), 0.5)
        assert not reader.at_eof()
        await roundtrip(proxy.port)  # new connections are relayed
        assert proxy.release_held() == 1


async def test_refuse_resets_new_connections() -> None:
    async with echo_server() as upstream, FaultProxy(upstream) as proxy:
        proxy.refuse = True
        reader, writer = await asyncio.open_connection("127.0.0.1", proxy.port)
        writer.write(b"x")
        with contextlib.suppress(ConnectionError):
            await writer.drain()
        with pytest.raises(ConnectionError):
            data = await asyncio.wait_for(reader.read(10), 5)
            if not data:
                raise ConnectionResetError("closed")
        assert proxy.stats.refused == 1
        proxy.refuse = False
        await roundtrip(proxy.port)


def test_only_loopback_upstreams() -> None:
    with pytest.raises(ValueError):
        FaultProxy(443, upstream_host="10.0.0.1")
