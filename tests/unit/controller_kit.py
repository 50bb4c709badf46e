"""How the controller unit tests build, wire and tear down controllers on a FakeClient.

``Kit.unwired`` is the ONE place these tests construct a ``Controller``, and ``Kit._wire`` the one
place they connect it to a client, cache and event recorder (a Manager wires what ``unwired`` returns
itself, in ``run``): when the constructor changes, adapt these two. Beyond them the tests rely on
behaviour only: ``process(key)``, ``queue`` (get, done, len, processing, ``backoff`` and
``transient_backoff`` failures), ``start()``, ``stop(deadline)``, ``informer.store``/``.resource``,
``Operator.controllers()`` for cause handlers, and the Controller settings ``name``, ``resource``,
``reconcile``, ``finalizer``, ``cleanup``, ``on_deleted``, ``error_policy``, ``predicates``,
``resync`` and ``concurrency``.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Callable
from typing import Any

from kubeloop.cache import Cache, object_key
from kubeloop.client import Resource
from kubeloop.controller import Controller
from kubeloop.helpers.events import EventRecorder
from kubeloop.operator import Operator
from kubeloop.resources.builtin import CONFIG_MAP
from kubeloop.testing.fakeclient import FakeClient

_names = itertools.count()


async def until(condition: Callable[[], bool], what: str, timeout: float = 5.0) -> None:
    """Polls ``condition`` until true; fails naming ``what`` after ``timeout`` seconds."""
    deadline = asyncio.get_running_loop().time() + timeout
    while not condition():
        assert asyncio.get_running_loop().time() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.002)


def cm(name: str, ns: str = "ns", **data: str) -> dict[str, Any]:
    """A ConfigMap body."""
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": ns}, "data": data}


class Kit:
    """One FakeClient, and every controller and cache a test made (stopped by ``close``)."""

    def __init__(self) -> None:
        self.client = FakeClient()
        self._controllers: list[Controller] = []
        self._caches: list[Cache] = []

    async def controller(self, reconcile: Any = None, *, resource: Resource = CONFIG_MAP,
                         **spec: Any) -> Controller:
        """A controller of ``resource`` calling ``reconcile``, set up with its cache synced (workers not
        started: call ``process`` or ``start``). ``spec``: the Controller's other settings."""
        return await self._wire(self.unwired(reconcile, resource=resource, **spec))

    def unwired(self, reconcile: Any = None, *, resource: Resource = CONFIG_MAP, **spec: Any) -> Controller:
        """A controller not yet set up (for ``Manager.add``)."""
        spec.setdefault("name", f"unit-{next(_names)}")
        return Controller(resource=resource, reconcile=reconcile, **spec)

    async def operator_controller(self, operator: Operator) -> Controller:
        """The (single) controller an Operator compiles from its handlers, set up like ``controller``."""
        (controller,) = operator.controllers()
        return await self._wire(controller)

    async def _wire(self, controller: Controller) -> Controller:
        cache = Cache(self.client, freeze_gc=False)
        await controller.setup(self.client, cache, EventRecorder(self.client, controller.name))
        cache.start()
        await cache.wait_synced(5)
        self._controllers.append(controller)
        self._caches.append(cache)
        return controller

    async def settled(self, controller: Controller) -> None:
        """Waits until the controller's cache holds what the FakeClient holds (every write seen)."""
        store = controller.informer.store
        resource = controller.informer.resource

        def same() -> bool:
            stored = {object_key(o): o["metadata"]["resourceVersion"] for o in self.client.objects(resource)}
            return stored == {object_key(o): o["metadata"]["resourceVersion"] for o in store}
        await until(same, "the cache to catch up with the client")

    async def close(self) -> None:
        for controller in self._controllers:
            await controller.stop(1)
            controller.queue.shutdown()
        for cache in self._caches:
            await cache.stop()


async def drain(controller: Controller) -> list[str]:
    """Takes every key waiting in the queue (marking each done); returns them."""
    keys = []
    while len(controller.queue):
        key = await controller.queue.get()
        controller.queue.done(key)
        keys.append(str(key))
    return keys
