"""The HTTPS server the API server calls: one route per webhook path.

- Every well-formed review is answered. A handler that raises (other than :class:`Denied`) or runs past
  its deadline is logged with the object's key and answered per the webhook's ``failure_policy``:
  ``Fail`` denies with a message saying so, ``Ignore`` allows with a warning. The process lives on.
- The deadline is shorter than the webhook's ``timeoutSeconds`` (see :func:`deadline_for`), so the API
  server gets *our* answer, not its own timeout (which it would turn into the configured policy blindly).
- A body that is not JSON or not a v1 review gets 400 with the reason. Bodies are read up to
  ``MAX_BODY``: an UPDATE of the largest object etcd stores, at the API server's worst JSON escaping.
- ``/readyz`` answers 200 only once a serving certificate is loaded and the listener is up.
- Metrics use controller-runtime's names (``controller_runtime_webhook_*``), labelled with the path.
- ``threaded=True`` serves from a thread of its own, on its own event loop: TLS, reading and parsing the
  review, and answering happen there, while the operator's loop may be held by a reconcile that computes
  (the thread gets the GIL every ``sys.getswitchinterval()``, 5 ms). Where a handler runs is the hook's
  ``loop_free``: a loop-free handler decides from the review alone (validation, defaulting, the author
  guard) and runs on the server's loop, so it is answered whatever the operator's loop is doing; any
  other handler is sent to the operator's loop (``run_coroutine_threadsafe``), where it may await the
  operator's client, cache and events as without the thread, and waits for that loop like them (the
  deadline still holds: a held loop is answered per the failure policy, never by the API server's
  timeout). Conversions are pure functions of the review and run on the server's loop.
"""

from __future__ import annotations

import asyncio
import copy
import inspect
import logging
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal

import orjson
from aiohttp import web

from kubeloop import metrics
from kubeloop.loopthread import LoopThread
from kubeloop.webhooks.admission import AdmissionRequest, Denied, MalformedReview, allow, deny, parse_admission
from kubeloop.webhooks.cert_dir import MountedCerts
from kubeloop.webhooks.certs import WebhookCerts
from kubeloop.webhooks.conversion import Converter

log = logging.getLogger(__name__)

FailurePolicy = Literal["Fail", "Ignore"]
Kind = Literal["validating", "mutating"]
Handler = Callable[[AdmissionRequest], Awaitable[Any] | Any]
# A review carries the object twice on UPDATE (object, oldObject), as JSON in which the API server
# escapes ``<``, ``>``, ``&`` and control characters as six bytes: an object within etcd's 1.5 MiB
# (stored as protobuf for built-in kinds) can take six times that, 9 MiB, here. Refusing a review (413)
# with failurePolicy Fail would leave such an object unchangeable, its finalizers never removed.
MAX_BODY = 2 * 6 * (3 * 1024 * 1024 // 2) + 64 * 1024


def deadline_for(timeout_seconds: int) -> float:
    """How long a handler may run: a quarter of the timeout (at most 1 s) is kept to send the answer."""
    return timeout_seconds - min(1.0, timeout_seconds / 4)


@dataclass(frozen=True)
class Webhook:
    """An admission webhook served at ``path``."""

    path: str
    kind: Kind
    handler: Handler
    failure_policy: FailurePolicy = "Fail"
    timeout_seconds: int = 5
    # The handler decides from the review alone: it never awaits what belongs to the operator's loop (its
    # client, cache waits, events, asyncio primitives created there), so a threaded server runs it on its
    # own loop. False: a threaded server runs it on the operator's loop.
    loop_free: bool = False

    @property
    def deadline(self) -> float:
        """Seconds the handler may take before the server answers for it."""
        return deadline_for(self.timeout_seconds)


def _check(path: str, failure_policy: str, timeout_seconds: int, taken: set[str]) -> None:
    if not path.startswith("/"):
        raise ValueError(f"webhook path {path!r} must start with '/'")
    if path in taken or path == "/readyz":
        raise ValueError(f"webhook path {path!r} is already used; give each webhook its own path")
    if failure_policy not in ("Fail", "Ignore"):
        raise ValueError(f"failure_policy {failure_policy!r} must be 'Fail' or 'Ignore'")
    if not 1 <= timeout_seconds <= 30:
        raise ValueError(f"timeout_seconds {timeout_seconds} must be between 1 and 30 (the API server's range)")


class WebhookServer:
    """Serves admission and conversion webhooks over HTTPS with ``certs``; ``port=0`` picks a free port."""

    def __init__(self, certs: WebhookCerts | MountedCerts, *, host: str = "127.0.0.1", port: int = 0,
                 rotation_check_every: float = 3600.0, threaded: bool = False) -> None:
        self.certs, self.host, self.port = certs, host, port
        self.rotation_check_every = rotation_check_every
        self.threaded = threaded
        self._thread = LoopThread("kubeloop webhooks")  # its owner, the operator's loop, runs non-loop-free handlers
        self.webhooks: dict[str, Webhook] = {}
        self.converters: dict[str, Converter] = {}
        self.answered: Counter[str] = Counter()  # reviews answered per path (the test kit waits on it)
        self._runner: web.AppRunner | None = None
        self._rotation: asyncio.Task[None] | None = None

    # registration -------------------------------------------------------------------------------

    def validating(self, path: str, handler: Handler, *, failure_policy: FailurePolicy = "Fail",
                   timeout_seconds: int = 5, loop_free: bool = False) -> Webhook:
        """Serves a validating handler: it returns nothing, raises :class:`Denied`, may ``req.warn()``."""
        return self._add(Webhook(path, "validating", handler, failure_policy, timeout_seconds, loop_free))

    def mutating(self, path: str, handler: Handler, *, failure_policy: FailurePolicy = "Fail",
                 timeout_seconds: int = 5, loop_free: bool = False) -> Webhook:
        """Serves a mutating handler: it returns the changed object (a dict) or ``None`` for no change."""
        return self._add(Webhook(path, "mutating", handler, failure_policy, timeout_seconds, loop_free))

    def conversion(self, path: str, converter: Converter) -> None:
        """Serves a CRD's ConversionReview at ``path``."""
        _check(path, "Fail", 1, set(self.webhooks) | set(self.converters))
        self.converters[path] = converter

    def _add(self, hook: Webhook) -> Webhook:
        _check(hook.path, hook.failure_policy, hook.timeout_seconds, set(self.webhooks) | set(self.converters))
        self.webhooks[hook.path] = hook
        return hook

    # lifecycle ----------------------------------------------------------------------------------

    @property
    def ready(self) -> bool:
        """True once certificates are loaded and the listener is up."""
        return self._runner is not None and self.certs.loaded

    def url(self, path: str) -> str:
        """The URL the API server calls for ``path`` when it reaches this process directly."""
        return f"https://{self.host}:{self.port}{path}"

    async def start(self) -> None:
        """Binds the listener (learning the port when 0) and starts the rotation loop; with ``threaded``,
        in the server's own thread (a bind error is raised here all the same)."""
        if self.threaded:
            await self._thread.start(self._listen, self._close)
        else:
            await self._listen()

    async def _listen(self) -> None:
        app = web.Application(client_max_size=MAX_BODY)
        for path, hook in self.webhooks.items():
            app.router.add_post(path, self._admission_route(hook))
        for path, converter in self.converters.items():
            app.router.add_post(path, self._conversion_route(path, converter))
        app.router.add_get("/readyz", self._readyz)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, self.host, self.port, ssl_context=self.certs.ssl_context)
        try:
            await site.start()
        except BaseException:
            await runner.cleanup()
            raise
        sockets = getattr(site._server, "sockets", None) or []  # noqa: SLF001 - the port ":0" picked
        if sockets:
            self.port = sockets[0].getsockname()[1]
        self._runner = runner
        self._rotation = asyncio.create_task(self.certs.keep_fresh(self.rotation_check_every))

    async def stop(self) -> None:
        """Stops listening (open requests are finished by aiohttp's shutdown) and the rotation loop."""
        if self._thread.running:
            await self._thread.stop()
        else:
            await self._close()

    async def _close(self) -> None:
        if self._rotation:
            self._rotation.cancel()
            await asyncio.gather(self._rotation, return_exceptions=True)
        if self._runner:
            await self._runner.cleanup()
        self._runner = self._rotation = None

    async def _readyz(self, request: web.Request) -> web.Response:
        return web.Response(text="ok") if self.ready else web.Response(status=503, text="certificates not loaded")

    # serving ------------------------------------------------------------------------------------

    def _admission_route(self, hook: Webhook) -> Callable[[web.Request], Awaitable[web.Response]]:
        async def route(request: web.Request) -> web.Response:
            return await self._measured(hook.path, request, lambda body: self._admit(hook, parse_admission(body)))
        return route

    def _conversion_route(self, path: str, converter: Converter) -> Callable[[web.Request], Awaitable[web.Response]]:
        async def route(request: web.Request) -> web.Response:
            async def answer(body: Any) -> dict[str, Any]:
                return converter.review(body)
            return await self._measured(path, request, answer)
        return route

    async def _measured(self, path: str, request: web.Request,
                        answer: Callable[[Any], Awaitable[dict[str, Any]]]) -> web.Response:
        started = time.monotonic()
        self._began(path)
        code = 500
        try:
            try:
                review = await answer(orjson.loads(await request.read()))
            except (orjson.JSONDecodeError, MalformedReview) as exc:
                code = 400
                log.warning("webhook %s: malformed review: %s", path, exc)
                return web.Response(status=400, text=f"malformed review: {exc}")
            code = 200
            return web.Response(body=orjson.dumps(review), content_type="application/json")
        finally:
            self._ended(path, code, time.monotonic() - started)

    def _began(self, path: str) -> None:
        """A review arrived (a webhook process of its own reports it to its parent instead)."""
        metrics.webhook_in_flight.labels(path).inc()

    def _ended(self, path: str, code: int, seconds: float) -> None:
        """A review was answered with ``code`` after ``seconds``."""
        self.answered[path] += 1
        metrics.webhook_in_flight.labels(path).dec()
        metrics.webhook_requests.labels(path, str(code)).inc()
        metrics.webhook_latency.labels(path).observe(seconds)

    async def _admit(self, hook: Webhook, req: AdmissionRequest) -> dict[str, Any]:
        # The handler may edit req.object in place; the patch is computed against what was sent.
        original = copy.deepcopy(req.object) if hook.kind == "mutating" else None
        try:
            async with asyncio.timeout(hook.deadline) as deadline:
                result = await self._call(hook, req)
        except Denied as denied:
            return deny(req, denied)
        except TimeoutError:
            if not deadline.expired():
                raise
            log.error("webhook %s: handler for %s %s did not answer within %.1fs",
                      hook.path, req.operation, req.key, hook.deadline)
            return _failed(hook, req, f"the handler did not answer within {hook.deadline:g}s")
        except Exception as exc:  # noqa: BLE001 - any handler bug is answered, never crashes the server
            log.exception("webhook %s: handler for %s %s raised", hook.path, req.operation, req.key)
            return _failed(hook, req, f"the handler raised {type(exc).__name__} (details in the operator's log)")
        return _result(hook, req, result, original)

    async def _call(self, hook: Webhook, req: AdmissionRequest) -> Any:
        """The handler's result, on the loop it belongs to (see the module docstring)."""
        owner = self._thread.owner
        if not self._thread.running or hook.loop_free or owner is None or owner.is_closed():
            return await _invoke(hook.handler, req)
        # Cancelling the wrapper (the deadline) cancels the handler's task on the operator's loop.
        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(_invoke(hook.handler, req), owner))


async def _invoke(handler: Handler, req: AdmissionRequest) -> Any:
    result = handler(req)
    return await result if inspect.isawaitable(result) else result


def _result(hook: Webhook, req: AdmissionRequest, result: Any, original: dict[str, Any] | None) -> dict[str, Any]:
    if result is None:
        return allow(req)
    if hook.kind == "mutating" and isinstance(result, dict):
        return allow(req, result, original)
    expected = "the changed object (a dict) or None" if hook.kind == "mutating" else "None"
    log.error("webhook %s: handler for %s %s returned %s; it must return %s",
              hook.path, req.operation, req.key, type(result).__name__, expected)
    return _failed(hook, req, f"the handler returned {type(result).__name__}, not {expected}")


def _failed(hook: Webhook, req: AdmissionRequest, why: str) -> dict[str, Any]:
    """The answer for a handler that could not decide, as its ``failure_policy`` says."""
    if hook.failure_policy == "Ignore":
        req.warn(f"webhook {hook.path} failed ({why}); allowed because its failurePolicy is Ignore")
        return allow(req)
    return deny(req, Denied(f"webhook {hook.path} failed: {why}; refused because its failurePolicy is Fail",
                            code=500))
