"""A TCP relay between an operator and the API server, on 127.0.0.1 only, that can break connections
the way networks do. TLS passes through untouched: the proxy never sees a byte in clear.

- ``reset_all()``: every open connection is cut with a TCP RST (both sides), as a crashed middlebox or
  a restarted load balancer does; new connections work at once.
- ``blackhole_all()``: every open connection stops relaying but its sockets stay open — no FIN, no RST
  (a NAT entry that expired, a peer that vanished). Only an inactivity timeout can notice. New
  connections work.
- ``refuse = True``: new connections are reset on accept (the API server looks unreachable).
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import struct
from dataclasses import dataclass, field

LOOPBACK = "127.0.0.1"
CHUNK = 64 * 1024


def _rst(writer: asyncio.StreamWriter) -> None:
    """Close with a RST rather than a FIN: SO_LINGER with a zero timeout, then abort."""
    sock = writer.get_extra_info("socket")
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    writer.transport.abort()


@dataclass(eq=False)
class _Conn:
    client: asyncio.StreamWriter
    upstream: asyncio.StreamWriter
    pumps: list[asyncio.Task[None]] = field(default_factory=list)
    held: bool = False  # black-holed: nothing relayed, sockets kept open

    def close(self, rst: bool = False) -> None:
        for task in self.pumps:
            task.cancel()
        for writer in (self.client, self.upstream):
            if rst:
                _rst(writer)
            else:
                writer.transport.abort()


@dataclass
class ProxyStats:
    accepted: int = 0
    refused: int = 0
    reset: int = 0
    blackholed: int = 0
    bytes_up: int = 0
    bytes_down: int = 0


class FaultProxy:
    """``async with FaultProxy(upstream_port) as proxy``: listens on ``proxy.port`` (127.0.0.1)."""

    def __init__(self, upstream_port: int, upstream_host: str = LOOPBACK, port: int = 0) -> None:
        if upstream_host not in (LOOPBACK, "localhost", "::1"):
            raise ValueError("the fault proxy only relays to the loopback interface")
        self.upstream = (upstream_host, upstream_port)
        self.port = port
        self.refuse = False
        self.stats = ProxyStats()
        self._conns: set[_Conn] = set()
        self._held: list[_Conn] = []
        self._server: asyncio.base_events.Server | None = None

    async def __aenter__(self) -> FaultProxy:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    async def start(self) -> int:
        self._server = await asyncio.start_server(self._accept, LOOPBACK, self.port)
        self.port = self._server.sockets[0].getsockname()[1]
        return self.port

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
            self._server = None
        for conn in [*self._conns, *self._held]:
            conn.close()
        self._conns.clear()
        self._held.clear()
        await asyncio.sleep(0)

    @property
    def open_connections(self) -> int:
        return len(self._conns)

    def reset_all(self) -> int:
        """RSTs every relayed connection; returns how many."""
        conns, self._conns = list(self._conns), set()
        for conn in conns:
            conn.close(rst=True)
        self.stats.reset += len(conns)
        return len(conns)

    def blackhole_all(self) -> int:
        """Stops relaying on every open connection and keeps its sockets open (half-open)."""
        conns, self._conns = list(self._conns), set()
        for conn in conns:
            conn.held = True
            for task in conn.pumps:
                task.cancel()
            self._held.append(conn)
        self.stats.blackholed += len(conns)
        return len(conns)

    def release_held(self) -> int:
        """Closes (quietly) the sockets ``blackhole_all`` kept open."""
        held, self._held = self._held, []
        for conn in held:
            conn.close()
        return len(held)

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if self.refuse or self._server is None:
            self.stats.refused += 1
            _rst(writer)
            return
        try:
            up_reader, up_writer = await asyncio.open_connection(*self.upstream)
        except OSError:
            self.stats.refused += 1
            _rst(writer)
            return
        self.stats.accepted += 1
        conn = _Conn(writer, up_writer)
        self._conns.add(conn)
        conn.pumps = [asyncio.create_task(self._pump(reader, up_writer, conn, up=True)),
                      asyncio.create_task(self._pump(up_reader, writer, conn, up=False))]

    async def _pump(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, conn: _Conn,
                    up: bool) -> None:
        try:
            while True:
                data = await reader.read(CHUNK)
                if not data:
                    break
                if up:
                    self.stats.bytes_up += len(data)
                else:
                    self.stats.bytes_down += len(data)
                writer.write(data)
                await writer.drain()
        except asyncio.CancelledError:
            return  # reset or black-holed: whoever cancelled handles the sockets
        except OSError:
            pass
        # One side closed or failed: close both (a FIN, as a transparent relay would pass on).
        if not conn.held and conn in self._conns:
            self._conns.discard(conn)
            for task in conn.pumps:
                if task is not asyncio.current_task():
                    task.cancel()
            for w in (conn.client, conn.upstream):
                with contextlib.suppress(Exception):
                    w.close()
