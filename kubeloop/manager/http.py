"""The manager's HTTP endpoints: ``/metrics`` (Prometheus text), ``/healthz`` and ``/readyz``.

A small HTTP/1.x server on ``asyncio.start_server``: aiohttp.web cost ~98 M instructions at start-up
for three fixed GET routes. Contract:

- GET and HEAD only (HEAD: GET's headers, no body); other methods get 405 with ``Allow``, unknown
  paths 404, a malformed request 400, an HTTP version other than 1.0/1.1 505.
- Every answer has a Content-Length. Keep-alive is honoured for HTTP/1.1 (Prometheus reuses its
  connection between scrapes) unless the client sends ``Connection: close``; HTTP/1.0 and every
  error answer close the connection (a request body is never read, so the stream cannot be trusted).
- A request head is at most 8 KiB (431 beyond) and must arrive within 10 s, also between requests
  on a kept-alive connection: a slow or idle client is disconnected and cannot hold the server.
- ``/metrics`` is ``text/plain; version=0.0.4; charset=utf-8``, gzip-compressed when the client
  accepts gzip (Prometheus does; it cuts the bytes of a large exposition ~10x).
- The listeners run in a thread of their own, on their own event loop, so ``/healthz`` and ``/readyz``
  answer while the process's loop is held by a reconcile that computes (the thread gets the GIL every
  ``sys.getswitchinterval()``, 5 ms). The probes' checks only read flags, safe from that thread; the
  exposition is made on the process's loop (gauge functions read its structures), so a scrape waits
  for a held loop while the probes do not.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import inspect
import logging
import zlib
from collections.abc import Awaitable, Callable

from kubeloop.loopthread import LoopThread
from kubeloop.metrics import REGISTRY

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
HEAD_LIMIT = 8 * 1024
HEAD_TIMEOUT = 10.0
_REASONS = {200: "OK", 400: "Bad Request", 404: "Not Found", 405: "Method Not Allowed",
            408: "Request Timeout", 431: "Request Header Fields Too Large", 500: "Internal Server Error",
            503: "Service Unavailable", 505: "HTTP Version Not Supported"}
log = logging.getLogger("kubeloop.manager.http")


class _Reply:
    """An answer: status, body, content type and extra headers."""

    def __init__(self, status: int, body: bytes, content_type: str = "text/plain; charset=utf-8",
                 headers: dict[str, str] | None = None) -> None:
        self.status, self.body, self.content_type = status, body, content_type
        self.headers = headers or {}


class _BadRequest(Exception):
    def __init__(self, status: int, why: str) -> None:
        super().__init__(why)
        self.status = status


class _Request:
    """A parsed request head: method, path, version and lower-cased headers."""

    def __init__(self, head: list[bytes]) -> None:
        try:
            method, target, version = head[0].decode("latin-1").rstrip("\r\n").split(" ")
        except ValueError:
            raise _BadRequest(400, "malformed request line") from None
        if not version.startswith("HTTP/") or not (method.isascii() and method.isprintable()) or not target:
            raise _BadRequest(400, "malformed request line")
        if version not in ("HTTP/1.0", "HTTP/1.1"):
            raise _BadRequest(505, f"{version} is not served; use HTTP/1.1")
        if target.startswith(("http://", "https://")):  # absolute form: keep the path
            target = "/" + target.split("/", 3)[3] if target.count("/") >= 3 else "/"
        self.method, self.path, self.version = method, target.split("?", 1)[0], version
        self.headers: dict[str, str] = {}
        for line in head[1:]:
            name, colon, value = line.decode("latin-1").partition(":")
            if not colon or not name or name != name.strip():
                raise _BadRequest(400, "malformed header line")
            self.headers[name.lower()] = value.strip()

    def keep_alive(self) -> bool:
        """HTTP/1.1 without ``Connection: close``, and no request body we would have to skip."""
        body = self.headers.get("content-length", "0") != "0" or "transfer-encoding" in self.headers
        return (self.version == "HTTP/1.1" and self.method in ("GET", "HEAD") and not body
                and "close" not in self.headers.get("connection", "").lower())

    def accepts_gzip(self) -> bool:
        for part in self.headers.get("accept-encoding", "").split(","):
            coding, _, params = part.partition(";")
            if coding.strip().lower() == "gzip":
                return params.replace(" ", "") not in ("q=0", "q=0.0", "q=0.00", "q=0.000")
        return False


async def _read_head(reader: asyncio.StreamReader, lines: list[bytes]) -> bool:
    """Read the request line and header lines into ``lines``; False at a clean end of stream (no
    byte of a request). ``lines`` is the caller's so that, on a timeout, it sees what had arrived."""
    size = 0
    while True:
        try:
            line = await reader.readline()
        except ValueError:  # a line longer than the stream's limit (HEAD_LIMIT)
            raise _BadRequest(431, "request head too large") from None
        size += len(line)
        if size > HEAD_LIMIT:
            raise _BadRequest(431, "request head too large")
        if not line:
            if lines:
                raise _BadRequest(400, "connection closed inside the request head")
            return False
        if line in (b"\r\n", b"\n"):
            if lines:
                return True
            continue  # tolerated: an empty line before a request (RFC 9112, 2.2)
        if not line.endswith(b"\n"):
            raise _BadRequest(400, "connection closed inside the request head")
        lines.append(line)


def _encode(request: _Request | None, reply: _Reply, keep: bool) -> bytes:
    body, headers = reply.body, dict(reply.headers)
    if request is not None and reply.status == 200 and len(body) > 1024 and request.accepts_gzip():
        packer = zlib.compressobj(6, zlib.DEFLATED, 31)  # wbits 31: the gzip container
        body = packer.compress(body) + packer.flush()
        headers["Content-Encoding"] = "gzip"
        headers["Vary"] = "Accept-Encoding"
    lines = [f"HTTP/1.1 {reply.status} {_REASONS[reply.status]}", f"Content-Type: {reply.content_type}",
             f"Content-Length: {len(body)}", "Connection: " + ("keep-alive" if keep else "close"),
             *(f"{name}: {value}" for name, value in headers.items())]
    out = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
    return out if request is not None and request.method == "HEAD" else out + body


Route = Callable[[], _Reply | Awaitable[_Reply]]


class _Server:
    """One listener with its routes; answers request after request on each connection."""

    def __init__(self, routes: dict[str, Route]) -> None:
        self.routes = routes
        self.server: asyncio.Server | None = None
        self.connections: set[asyncio.StreamWriter] = set()

    async def start(self, host: str, port: int) -> int:
        self.server = await asyncio.start_server(self._serve, host, port, limit=HEAD_LIMIT)
        return int(self.server.sockets[0].getsockname()[1])

    async def stop(self) -> None:
        if self.server is not None:
            self.server.close()
            for writer in list(self.connections):  # idle keep-alive connections: wait_closed waits on them
                writer.close()
            await self.server.wait_closed()
            self.server = None

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections.add(writer)
        try:
            while await self._one(reader, writer):
                pass
        except ConnectionError:
            pass  # the client went away: nothing to answer
        finally:
            self.connections.discard(writer)
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    async def _one(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        """Answer one request; True to wait for another on the same connection."""
        request: _Request | None = None
        head: list[bytes] = []
        try:
            async with asyncio.timeout(HEAD_TIMEOUT):
                if not await _read_head(reader, head):
                    return False
            request = _Request(head)
            reply = await self._route(request)
        except TimeoutError:
            if not head:  # an idle kept-alive connection: close it without an unsolicited answer
                return False
            reply = _Reply(408, b"request head not received in time\n")
        except _BadRequest as bad:
            reply = _Reply(bad.status, f"{bad}\n".encode())
        keep = request is not None and request.keep_alive()
        writer.write(_encode(request, reply, keep))
        await writer.drain()
        return keep

    async def _route(self, request: _Request) -> _Reply:
        route = self.routes.get(request.path)
        if route is None:
            return _Reply(404, b"not found\n")
        if request.method not in ("GET", "HEAD"):
            return _Reply(405, b"method not allowed\n", headers={"Allow": "GET, HEAD"})
        try:
            reply = route()
            return await reply if inspect.isawaitable(reply) else reply
        except Exception:  # a failing health check or gauge function: answer, log, keep serving
            log.exception("serving %s failed", request.path)
            return _Reply(500, b"internal error\n")


def _split(address: str) -> tuple[str, int]:
    host, _, port = address.rpartition(":")
    return (host or "0.0.0.0"), int(port)


class HttpServer:
    """Serves metrics and probes. ``address`` "0" disables a listener (controller-runtime's convention).
    ``threaded`` (the default) serves them from a thread with its own event loop (see the module's
    docstring); ``ready`` and ``healthy`` are then called in that thread."""

    def __init__(self, metrics_address: str, probe_address: str, ready: Callable[[], bool],
                 healthy: Callable[[], bool] = lambda: True, threaded: bool = True) -> None:
        self.metrics_address, self.probe_address = metrics_address, probe_address
        self.ready, self.healthy, self.threaded = ready, healthy, threaded
        self._servers: list[_Server] = []
        self.bound: dict[str, int] = {}  # "metrics"/"probes" → actual port (useful with port 0)
        self._thread = LoopThread("kubeloop http")  # its owner, the process's loop, runs the exposition

    async def start(self) -> None:
        """Listens (a taken port raises here, as without the thread)."""
        if self.threaded:
            await self._thread.start(self._listen, self._close)
        else:
            await self._listen()

    async def _listen(self) -> None:
        metrics: dict[str, Route] = {"/metrics": self._metrics}
        probes: dict[str, Route] = {"/healthz": self._healthz, "/readyz": self._readyz}
        if self.metrics_address == self.probe_address and self.metrics_address != "0":
            await self._serve("metrics", metrics | probes, self.metrics_address)
            self.bound["probes"] = self.bound["metrics"]
            return
        if self.metrics_address != "0":
            await self._serve("metrics", metrics, self.metrics_address)
        if self.probe_address != "0":
            await self._serve("probes", probes, self.probe_address)

    async def _serve(self, name: str, routes: dict[str, Route], address: str) -> None:
        server = _Server(routes)
        self.bound[name] = await server.start(*_split(address))
        self._servers.append(server)

    async def _close(self) -> None:
        for server in self._servers:
            await server.stop()
        self._servers.clear()

    async def stop(self) -> None:
        if self._thread.running:
            await self._thread.stop()
        else:
            await self._close()

    def _metrics(self) -> _Reply | Awaitable[_Reply]:
        owner = self._thread.owner
        if not self._thread.running or owner is None:
            return _Reply(200, REGISTRY.expose(), CONTENT_TYPE)
        done: concurrent.futures.Future[_Reply] = concurrent.futures.Future()

        def expose() -> None:  # on the process's loop
            if done.set_running_or_notify_cancel():
                try:
                    done.set_result(_Reply(200, REGISTRY.expose(), CONTENT_TYPE))
                except Exception as exc:  # noqa: BLE001 - answered as a 500 by the route
                    done.set_exception(exc)
        owner.call_soon_threadsafe(expose)
        return asyncio.wrap_future(done)

    def _healthz(self) -> _Reply:
        return _Reply(200, b"ok") if self.healthy() else _Reply(500, b"unhealthy")

    def _readyz(self) -> _Reply:
        return _Reply(200, b"ok") if self.ready() else _Reply(503, b"caches not synced")
