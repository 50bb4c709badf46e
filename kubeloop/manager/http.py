"""The manager's HTTP endpoints: ``/metrics`` (Prometheus text), ``/healthz`` and ``/readyz``."""

from __future__ import annotations

from collections.abc import Callable

from aiohttp import web

from kubeloop.metrics import REGISTRY

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


def _split(address: str) -> tuple[str, int]:
    host, _, port = address.rpartition(":")
    return (host or "0.0.0.0"), int(port)


class HttpServer:
    """Serves metrics and probes. ``address`` "0" disables a listener (controller-runtime's convention)."""

    def __init__(self, metrics_address: str, probe_address: str, ready: Callable[[], bool],
                 healthy: Callable[[], bool] = lambda: True) -> None:
        self.metrics_address, self.probe_address = metrics_address, probe_address
        self.ready, self.healthy = ready, healthy
        self._runners: list[web.AppRunner] = []
        self.bound: dict[str, int] = {}  # "metrics"/"probes" → actual port (useful with port 0)

    async def start(self) -> None:
        metrics_app = web.Application()
        metrics_app.router.add_get("/metrics", self._metrics)
        probe_app = web.Application()
        probe_app.router.add_get("/healthz", self._healthz)
        probe_app.router.add_get("/readyz", self._readyz)
        if self.metrics_address == self.probe_address and self.metrics_address != "0":
            metrics_app.router.add_get("/healthz", self._healthz)
            metrics_app.router.add_get("/readyz", self._readyz)
            await self._serve("metrics", metrics_app, self.metrics_address)
            self.bound["probes"] = self.bound["metrics"]
            return
        if self.metrics_address != "0":
            await self._serve("metrics", metrics_app, self.metrics_address)
        if self.probe_address != "0":
            await self._serve("probes", probe_app, self.probe_address)

    async def _serve(self, name: str, app: web.Application, address: str) -> None:
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        host, port = _split(address)
        site = web.TCPSite(runner, host, port)
        await site.start()
        server = site._server  # noqa: SLF001 - the only way to learn which port ":0" picked
        sockets = getattr(server, "sockets", None) or []
        self.bound[name] = sockets[0].getsockname()[1] if sockets else port
        self._runners.append(runner)

    async def stop(self) -> None:
        for runner in self._runners:
            await runner.cleanup()
        self._runners.clear()

    async def _metrics(self, request: web.Request) -> web.Response:
        return web.Response(body=REGISTRY.expose(), headers={"Content-Type": CONTENT_TYPE})

    async def _healthz(self, request: web.Request) -> web.Response:
        return web.Response(text="ok") if self.healthy() else web.Response(status=500, text="unhealthy")

    async def _readyz(self, request: web.Request) -> web.Response:
        return web.Response(text="ok") if self.ready() else web.Response(status=503, text="caches not synced")
