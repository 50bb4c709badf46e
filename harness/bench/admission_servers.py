"""The two webhooks the admission benchmark puts behind the API server, each timing its own handling.

- ``kubeloop``: :class:`kubeloop.webhooks.WebhookServer` with a validating and a mutating webhook whose
  handlers do nothing (allowed, no patch): what the framework itself adds.
- ``ceiling``: plain aiohttp, the same TLS context (same certificate, same cipher negotiation), one
  route that reads the review and answers allowed. Nothing can answer faster in Python.
- Both record "handling time": from the route being entered to the response being built (reading the
  body, decoding, answering, encoding), in ms. aiohttp's HTTP parsing and TLS are outside it, and
  the same for both.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Any

import orjson
from aiohttp import web

from kubeloop.webhooks import AdmissionRequest, WebhookCerts, WebhookServer

PATHS = ("/validate", "/mutate")


async def _nothing(req: AdmissionRequest) -> None:
    """The trivial handler: allowed, and (as a mutating handler) no change."""
    return None


class TimedWebhookServer(WebhookServer):
    """kubeloop's server, recording each review's handling time (the bench's only addition)."""

    def __init__(self, certs: WebhookCerts) -> None:
        super().__init__(certs)
        self.handling_ms: list[float] = []
        self.validating(PATHS[0], _nothing)
        self.mutating(PATHS[1], _nothing)

    async def _measured(self, path: str, request: web.Request,
                        answer: Callable[[Any], Awaitable[dict[str, Any]]]) -> web.Response:
        # The server's own measured section (metrics included) is what is timed: no private state touched.
        started = time.perf_counter()
        try:
            return await super()._measured(path, request, answer)
        finally:
            self.handling_ms.append((time.perf_counter() - started) * 1000)


class CeilingServer:
    """A no-op admission webhook in plain aiohttp: decode, answer allowed, encode."""

    def __init__(self, certs: WebhookCerts) -> None:
        self.certs = certs
        self.handling_ms: list[float] = []
        self.port = 0
        self._runner: web.AppRunner | None = None

    def url(self, path: str) -> str:
        return f"https://127.0.0.1:{self.port}{path}"

    async def _handle(self, request: web.Request) -> web.Response:
        started = time.perf_counter()
        review = orjson.loads(await request.read())
        body = orjson.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
                             "response": {"uid": review["request"]["uid"], "allowed": True}})
        response = web.Response(body=body, content_type="application/json")
        self.handling_ms.append((time.perf_counter() - started) * 1000)
        return response

    async def start(self) -> None:
        app = web.Application()
        for path in PATHS:
            app.router.add_post(path, self._handle)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0, ssl_context=self.certs.ssl_context)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]  # noqa: SLF001

    async def stop(self) -> None:
        if self._runner:
            await self._runner.cleanup()
