"""The HTTP layer: one aiohttp session, orjson bodies, auth, rate limiting, retries and metrics.

Everything above this works on plain dicts; nothing here knows about Kubernetes kinds.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import random
import socket
import ssl
import time
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import urlsplit

import aiohttp
import orjson

from kubeloop import clock, metrics
from kubeloop.client.config import Config, Credentials
from kubeloop.client.errors import ApiError, error_from_status

log = logging.getLogger("kubeloop.client")

# client-go retries 429/5xx answers carrying Retry-After up to 10 times.
MAX_RETRIES = 10
_RETRY_STATUSES = {429, 500, 502, 503, 504}
# The connection broke or went silent: the request may or may not have reached the server.
_CONNECTION_ERRORS = (TimeoutError, aiohttp.ClientConnectionError, aiohttp.ClientPayloadError)
# The half-open check. HTTP/1.1 has no ping (client-go's HTTP/2 health check: 30 s read-idle + 15 s
# ping), so the evidence is indirect: a request for one object that has had no answer for SILENT_AFTER
# seconds while the server answers a probe on a new connection within PROBE_TIMEOUT sits on a dead path,
# and the pool is dropped (``_drop_pool``). Requests for many objects are not judged (a big LIST page or
# a DELETECOLLECTION of thousands may take a while: the benchmark saw the latter cut at N=5,000), nor is
# a server that does not answer the probe either (it is slow or down: the request timeout applies).
# The price: a request the server legitimately holds longer while answering others (an admission
# webhook slower than 8 s, a long wait in an API Priority and Fairness queue) is cut too: a read is
# retried, a write goes to its controller's error policy (a transient failure, retried within 8 s).
SILENT_AFTER = 8.0
PROBE_TIMEOUT = 3.0
_JUDGED_VERBS = frozenset({"GET", "POST", "PUT", "PATCH", "DELETE"})
# Below HTTP, the kernel watches every connection: an idle one is probed after KEEPALIVE_IDLE seconds,
# every KEEPALIVE_INTERVAL, and closed after KEEPALIVE_COUNT probes go unanswered; data unacknowledged
# for USER_TIMEOUT closes it too. A path that silently drops packets (a node gone, a NAT entry expired)
# then fails a quiet watch in 10-12 s instead of its inactivity timeout. (A peer whose kernel still
# acknowledges but whose program went mute passes these checks: the probe above covers requests.)
KEEPALIVE_IDLE, KEEPALIVE_INTERVAL, KEEPALIVE_COUNT = 4, 2, 3
USER_TIMEOUT = 10.0
# Client-side rate limit (client-go's QPS/burst): off by default, like controller-runtime since its
# PR #3119: the API server's Priority and Fairness protects it, and its 429s (with Retry-After) are honoured.
QPS, BURST = 0.0, 400
# Seconds a watch may stay silent (no event, no bookmark) before it is taken for a dead, half-open
# connection and reopened: the default of the watcher, the cache and the manager.
WATCH_INACTIVITY_TIMEOUT = 330.0


class RateLimiter:
    """A token bucket (client-go's QPS/burst). ``qps <= 0`` disables it."""

    def __init__(self, qps: float, burst: int) -> None:
        self.qps, self.burst = qps, max(1, burst)
        self._tokens = float(self.burst)
        self._last = clock.monotonic()
        self._lock = asyncio.Lock()

    async def acquire(self) -> float:
        if self.qps <= 0:
            return 0.0
        async with self._lock:
            now = clock.monotonic()
            self._tokens = min(self.burst, self._tokens + (now - self._last) * self.qps)
            self._last = now
            wait = 0.0 if self._tokens >= 1 else (1 - self._tokens) / self.qps
            self._tokens -= 1
        if wait:
            await asyncio.sleep(wait)
        return wait


class Transport:
    """Sends requests to one API server. Create with a ``Config``; close when done."""

    def __init__(self, config: Config, *, qps: float = QPS, burst: int = BURST,
                 timeout: float = 60.0, user_agent: str = "kubeloop",
                 silent_after: float = SILENT_AFTER, probe_timeout: float = PROBE_TIMEOUT,
                 keepalive: tuple[float, float, int, float] = (KEEPALIVE_IDLE, KEEPALIVE_INTERVAL,
                                                               KEEPALIVE_COUNT, USER_TIMEOUT)) -> None:
        self.config = config
        self.host = urlsplit(config.server).netloc
        self.limiter = RateLimiter(qps, burst)
        self.timeout = timeout
        self._timeout = aiohttp.ClientTimeout(total=timeout)
        self.user_agent = user_agent
        self._session: aiohttp.ClientSession | None = None
        self._closing: set[asyncio.Task[None]] = set()
        self._watches: set[tuple[aiohttp.ClientSession, aiohttp.StreamReader]] = set()
        self._ssl: tuple[int, ssl.SSLContext | bool] | None = None
        self.silent_after, self.probe_timeout = silent_after, probe_timeout
        self.keepalive = keepalive  # (idle s, interval s, probes, user timeout s)
        self._inflight: dict[int, tuple[float, aiohttp.ClientSession]] = {}  # id → (started, pool)
        self._ids = itertools.count()
        self._checker: asyncio.Task[None] | None = None
        # Bound metric children by label values: labels() on every request is a measurable cost.
        self._m_requests: dict[tuple[str, str], Any] = {}
        self._m_duration: dict[str, Any] = {}

    def _count(self, status: str, method: str) -> None:
        child = self._m_requests.get((status, method))
        if child is None:
            child = self._m_requests[(status, method)] = metrics.rest_client_requests.labels(
                status, method, self.host)
        child.inc()

    def _observe(self, verb: str, seconds: float) -> None:
        child = self._m_duration.get(verb)
        if child is None:
            child = self._m_duration[verb] = metrics.rest_client_request_duration.labels(verb, self.host)
        child.observe(seconds)

    async def _session_for(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            connector = aiohttp.TCPConnector(limit=100, ttl_dns_cache=300, socket_factory=self._socket)
            self._session = aiohttp.ClientSession(
                connector=connector, json_serialize=lambda o: orjson.dumps(o).decode(),
                headers={"User-Agent": self.user_agent})
        return self._session

    def _ssl_for(self, creds: Credentials) -> ssl.SSLContext | bool:
        # Rebuild only when the client certificate changes (exec plugins may rotate it).
        key = hash((creds.cert_pem, creds.key_pem))
        if self._ssl is None or self._ssl[0] != key:
            self._ssl = (key, self.config.ssl_context(creds))
        return self._ssl[1]

    async def close(self) -> None:
        if self._checker is not None:
            self._checker.cancel()
            self._checker = None
        if self._session is not None:
            await self._session.close()
            self._session = None
        if self._closing:
            await asyncio.gather(*self._closing, return_exceptions=True)

    def _drop_pool(self, session: aiohttp.ClientSession, why: str = "") -> None:
        """Closes every connection of ``session``, idle or in use, and starts a fresh pool.

        Called when a request got no answer within the timeout: the other connections to the same server
        most likely died with its connection (a dead node, a dropped NAT entry, a proxy gone mute), idle
        ones would be handed to the next requests and a watch on one would stay silent until its own
        inactivity timeout (5.5 minutes by default). Closing them all now means those requests fail and
        are retried or requeued on fresh connections, and watches reopen at once (kubelet closes all its
        connections when a heartbeat fails, for the same reason). A quiet watch is not such evidence: it
        may stay silent for a minute between bookmarks. Only the session that failed is dropped, so a crowd
        of requests timing out together drops one pool, not each other's.
        """
        if self._session is not session:
            return
        self._session = None
        for owner, body in list(self._watches):
            # Closing a connection does not wake a reader waiting on its body: end each watch explicitly.
            if owner is session:
                body.set_exception(aiohttp.ServerDisconnectedError("closed with its pool: a request got no answer"))
        log.warning("a request to %s got no answer %s; closing all connections to it", self.host,
                    why or f"in {self.timeout:g}s")
        task = asyncio.get_running_loop().create_task(session.close())
        self._closing.add(task)
        task.add_done_callback(self._closing.discard)

    def _socket(self, addr_info: tuple[Any, ...]) -> socket.socket:
        """A TCP socket with keepalive probing and a user timeout (see KEEPALIVE_IDLE)."""
        family, type_, proto, *_ = addr_info
        sock = socket.socket(family, type_, proto)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
        for name, value in (("TCP_KEEPIDLE", self.keepalive[0]), ("TCP_KEEPINTVL", self.keepalive[1]),
                            ("TCP_KEEPCNT", self.keepalive[2]),
                            ("TCP_USER_TIMEOUT", int(self.keepalive[3] * 1000))):
            option = getattr(socket, name, None)  # Linux has all four; other systems some
            if option is not None:
                sock.setsockopt(socket.IPPROTO_TCP, option, int(value))
        return sock

    def _watch_silence(self) -> None:
        if self._checker is None or self._checker.done():
            self._checker = asyncio.get_running_loop().create_task(self._check_silence())

    async def _check_silence(self) -> None:
        """Runs while requests are in flight: once a judged request has been silent ``silent_after``
        seconds, probes the server on a new connection; an answer there condemns the old pool."""
        while self._inflight:
            await asyncio.sleep(min(1.0, self.silent_after / 4))
            now = time.monotonic()
            session = self._session
            silent = [t for t, s in self._inflight.values() if s is session and now - t >= self.silent_after]
            if not silent or session is None:
                continue
            if await self._server_answers():
                if any(s is session for _, s in self._inflight.values()):  # still waiting: condemn
                    self._drop_pool(session, f"for {now - min(silent):.0f}s while the server answers on a new "
                                             "connection (a half-open connection)")
        self._checker = None

    async def _server_answers(self) -> bool:
        """GET /version on a connection of its own: any HTTP answer in time means the server is there."""
        headers, ssl_ctx = await self._headers(None)
        timeout = aiohttp.ClientTimeout(total=self.probe_timeout)
        try:
            async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(force_close=True)) as probe:
                async with probe.get(self.config.server + "/version", headers=headers, ssl=ssl_ctx,
                                     timeout=timeout, server_hostname=self.config.tls_server_name) as resp:
                    await resp.read()
                    return True
        except (*_CONNECTION_ERRORS, OSError):
            return False

    async def _headers(self, content_type: str | None) -> tuple[dict[str, str], ssl.SSLContext | bool]:
        creds = await self.config.auth.credentials()
        headers = {"Accept": "application/json"}
        if creds.token:
            headers["Authorization"] = f"Bearer {creds.token}"
        if content_type:
            headers["Content-Type"] = content_type
        return headers, self._ssl_for(creds)

    async def request(self, method: str, path: str, *, params: dict[str, Any] | None = None,
                      body: Any = None, content_type: str = "application/json",
                      verb: str | None = None, accept: str = "application/json") -> Any:
        """Sends one request and returns the decoded JSON body; raises ``ApiError`` on error answers.

        Retries (jittered exponential backoff) connection failures and 429/5xx answers, honouring
        Retry-After. A request that may have reached the server is retried only if it is a read.
        """
        data = orjson.dumps(body) if body is not None and not isinstance(body, bytes) else body
        verb = verb or method
        attempt = 0
        while True:
            attempt += 1
            waited = await self.limiter.acquire()
            if waited:
                metrics.rest_client_rate_limiter_duration.labels(verb, self.host).observe(waited)
            headers, ssl_ctx = await self._headers(content_type if data is not None else None)
            headers["Accept"] = accept
            session = await self._session_for()
            started = time.monotonic()
            judged = verb in _JUDGED_VERBS
            if judged:
                request_id = next(self._ids)
                self._inflight[request_id] = (started, session)
                self._watch_silence()
            try:
                async with session.request(
                    method, self.config.server + path, params=_clean(params), data=data, headers=headers,
                    ssl=ssl_ctx, timeout=self._timeout,
                    server_hostname=self.config.tls_server_name,
                ) as resp:
                    raw = await resp.read()
                    status = resp.status
                    retry_after = _retry_after(resp.headers.get("Retry-After"))
            except _CONNECTION_ERRORS as exc:
                self._count("<error>", method)
                if isinstance(exc, TimeoutError):
                    self._drop_pool(session)
                sent = not isinstance(exc, aiohttp.ClientConnectorError)
                if attempt >= MAX_RETRIES or (sent and method not in ("GET", "HEAD")):
                    raise
                delay = _backoff(attempt)
                log.debug("%s %s: %s; retrying in %.2fs", method, path, exc, delay)
                await asyncio.sleep(delay)
                continue
            finally:
                if judged:
                    del self._inflight[request_id]
                self._observe(verb, time.monotonic() - started)
            self._count(str(status), method)
            if status < 400:
                return orjson.loads(raw) if raw else None
            error = error_from_status(status, _decode(raw), retry_after)
            if status == 401 and attempt == 1:
                await self.config.auth.invalidate()  # rotated token or expired exec credential
                continue
            if status in _RETRY_STATUSES and attempt < MAX_RETRIES and not _policy_refusal(error) and (
                    status == 429 or retry_after is not None or method == "GET"):
                delay = _retry_delay(attempt, retry_after)
                log.debug("%s %s: %s; retrying in %.2fs", method, path, status, delay)
                await asyncio.sleep(delay)
                continue
            raise error

    async def stream(self, path: str, params: dict[str, Any], *, read_timeout: float,
                     accept: str = "application/json") -> AsyncIterator[dict[str, Any]]:
        """A watch: yields each JSON line as a dict. ``read_timeout`` bounds silence between lines,
        which catches half-open connections (no bytes, no FIN) that would otherwise hang forever."""
        await self.limiter.acquire()
        headers, ssl_ctx = await self._headers(None)
        headers["Accept"] = accept
        session = await self._session_for()
        timeout = aiohttp.ClientTimeout(total=None, sock_connect=30, sock_read=read_timeout)
        # Until its headers arrive a watch is judged like a request for one object (the API server
        # answers a watch's headers at once): one sent on a dead pooled connection would otherwise wait
        # out its inactivity timeout, and the next one would take the next dead connection of the pool.
        # A watch with a short inactivity timeout fails before that check: its own silence is the
        # evidence then, if the server answers on a new connection.
        request_id = next(self._ids)
        self._inflight[request_id] = (time.monotonic(), session)
        self._watch_silence()
        answered = False
        try:
            async with session.get(self.config.server + path, params=_clean(params), headers=headers,
                                   ssl=ssl_ctx, timeout=timeout,
                                   server_hostname=self.config.tls_server_name) as resp:
                answered = True
                self._inflight.pop(request_id, None)
                async for event in self._events(session, resp):
                    yield event
        except _CONNECTION_ERRORS:
            if not answered and self._session is session and await self._server_answers():
                self._drop_pool(session, "to a watch while the server answers on a new connection "
                                         "(a half-open connection)")
            raise
        finally:
            self._inflight.pop(request_id, None)

    async def _events(self, session: aiohttp.ClientSession,
                      resp: aiohttp.ClientResponse) -> AsyncIterator[dict[str, Any]]:
        """The events of a watch whose headers arrived."""
        self._count(str(resp.status), "GET")
        if resp.status >= 400:
            if resp.status == 401:
                await self.config.auth.invalidate()
            raise error_from_status(resp.status, _decode(await resp.read()),
                                    _retry_after(resp.headers.get("Retry-After")))
        # Watch events are newline-delimited; a big object may exceed aiohttp's line limit, so
        # split ourselves on the raw byte stream.
        watch = (session, resp.content)
        self._watches.add(watch)
        try:
            async for event in json_lines(resp.content.iter_any()):
                yield event
        finally:
            self._watches.discard(watch)


async def json_lines(chunks: AsyncIterator[bytes]) -> AsyncIterator[Any]:
    """Decodes newline-delimited JSON from arbitrary chunks. One split per chunk: slicing the rest of
    the buffer after each line copied it once per event, quadratic in the events a chunk holds."""
    buf = b""
    async for chunk in chunks:
        *lines, buf = (buf + chunk if buf else chunk).split(b"\n")
        for line in lines:
            if line and not line.isspace():
                yield orjson.loads(line)


def _clean(params: dict[str, Any] | None) -> dict[str, str] | None:
    if not params:
        return None
    out = {}
    for key, value in params.items():
        if value is None or value is False:
            continue
        out[key] = "true" if value is True else str(value)
    return out or None


def _decode(raw: bytes) -> Any:
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        return raw.decode(errors="replace")


def _retry_after(value: str | None) -> float | None:
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        return None


def _policy_refusal(error: ApiError) -> bool:
    """A 429 that is an answer, not throttling: an eviction a PodDisruptionBudget forbids. Retrying it
    here would only block the caller for a minute; the caller decides whether to try again later."""
    return any(cause.get("reason") == "DisruptionBudget" for cause in error.causes)


def _backoff(attempt: int, base: float = 0.2, cap: float = 10.0) -> float:
    return min(cap, base * 2.0 ** (attempt - 1)) * (0.5 + random.random() / 2)


def _retry_delay(attempt: int, retry_after: float | None) -> float:
    """Retry-After is the server's floor, not a rendezvous: API Priority and Fairness answers every
    rejected request with the same ``Retry-After: 1``, so a crowd that waited exactly that long would come
    back together and be rejected together again. A jittered, growing backoff on top spreads it out."""
    return (retry_after or 0.0) + _backoff(attempt)


__all__ = ["ApiError", "RateLimiter", "Transport"]
