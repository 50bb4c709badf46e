"""``FakeApiServer``: the fake's lifecycle — start on 127.0.0.1 (a free port), a kubeconfig for it,
compaction on demand, stop."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import yaml
from aiohttp import web

from kubeloop.testing.apiserver import events
from kubeloop.testing.apiserver.clock import Clock
from kubeloop.testing.apiserver.controllers import Controllers
from kubeloop.testing.apiserver.kinds import Kinds
from kubeloop.testing.apiserver.routes import Router
from kubeloop.testing.apiserver.store import Store, View
from kubeloop.testing.apiserver.verbs import Api

SYSTEM_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")


MAX_REQUEST_BYTES = 3 * 1024 * 1024  # kube-apiserver's limit on a request body: more is 413


class FakeApiServer:
    """An in-process API server for tests (see docs/reference/fake-api-server.md for what it serves).

    ``async with FakeApiServer() as fake:`` starts it; ``fake.url`` is its address, ``fake.client()`` a
    ``kubeloop.client.Client`` for it, ``fake.write_kubeconfig(path)`` a kubeconfig for kubectl.
    """

    def __init__(self, clock: Clock | None = None, *, kubelet: bool = False) -> None:
        """``kubelet=True`` runs a kwok-like kubelet: new pods are bound and reported Running and Ready."""
        self.clock = clock or Clock()
        self.kubelet = kubelet
        self.store = Store()
        self.store.views[("events.k8s.io", "events")] = View(("", "events"), events.to_core, events.from_core)
        self.kinds = Kinds()
        self._closing = asyncio.Event()
        self._controllers: Controllers | None = None
        self.api = Api(self.store, self.kinds, self.clock, self._kick)
        self._runner: web.AppRunner | None = None
        self.url = ""

    def _kick(self) -> None:
        if self._controllers is not None:
            self._controllers.kick()

    async def start(self) -> FakeApiServer:
        """Binds a free port on 127.0.0.1 and serves; the system namespaces exist when it returns."""
        self._controllers = Controllers(self.api, kubelet=self.kubelet)
        for name in SYSTEM_NAMESPACES:
            self.api.create(self.kinds.by_key(("", "namespaces")), "v1", None,
                            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}, "kube-apiserver")
        while self._controllers.sweep():  # default ServiceAccounts and root CA ConfigMaps, before serving
            pass
        for kind in self.kinds.all():  # the watch caches start here
            kind.watch_from = self.store.rv
        self._controllers.start()
        router = Router(self.api, self.kinds, self._closing)
        app = web.Application(client_max_size=MAX_REQUEST_BYTES)
        app.router.add_route("*", "/{tail:.*}", router.handle)
        self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.5)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]  # noqa: SLF001
        self.url = f"http://127.0.0.1:{port}"
        return self

    async def stop(self) -> None:
        """Ends open watches and stops serving."""
        self._closing.set()
        if self._controllers is not None:
            await self._controllers.stop()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> FakeApiServer:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    async def settle(self, timeout: float = 5.0) -> None:
        """Waits until the background controllers (GC, namespaces, CRDs) have nothing left to do."""
        assert self._controllers is not None
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while self._controllers.sweep():
            if loop.time() > deadline:
                raise TimeoutError("the fake API server's controllers did not settle")
            await asyncio.sleep(0)

    def compact(self, resource_version: int | None = None) -> int:
        """Forgets history up to ``resource_version`` (default: now), like etcd compaction: older watches,
        ``continue`` tokens and exact lists then answer 410 Gone. Returns the oldest RV still served."""
        return self.store.compact(resource_version)

    def kubeconfig(self, namespace: str = "default") -> dict[str, Any]:
        return {"apiVersion": "v1", "kind": "Config", "current-context": "fake",
                "clusters": [{"name": "fake", "cluster": {"server": self.url}}],
                "users": [{"name": "fake", "user": {"token": "fake"}}],
                "contexts": [{"name": "fake", "context": {"cluster": "fake", "user": "fake",
                                                          "namespace": namespace}}]}

    def write_kubeconfig(self, path: str | os.PathLike[str], namespace: str = "default") -> Path:
        """Writes a plain-HTTP kubeconfig (kubectl and kubeloop's Client accept it)."""
        out = Path(path)
        out.write_text(yaml.safe_dump(self.kubeconfig(namespace)))
        return out

    async def client(self, **kw: Any) -> Any:
        """A ``kubeloop.client.Client`` connected to this server."""
        from kubeloop.client import Client
        from kubeloop.client.config import Auth, Config, Credentials

        return Client(Config(server=self.url, auth=Auth(Credentials(token="fake")), source="fake API server"), **kw)
