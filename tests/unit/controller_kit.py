"""How the controller unit tests build, wire and tear down controllers on a FakeClient.

``Kit.unwired`` is the ONE place these tests describe a controller (a ``ControllerSpec``), and
``Kit._wire`` the one place they build it on a client, cache and event recorder (a Manager builds what
``unwired`` returns itself, in ``run``). Beyond them the tests rely on behaviour only:
``process(key)``, ``queue`` (get, done, len, processing, ``backoff`` and ``transient_backoff``
failures), ``start()``, ``stop(deadline)``, ``informer.store``/``.resource``, ``Operator.specs()`` for
cause handlers, and the spec's fields ``name``, ``resource``, ``reconcile``, ``finalizer``,
``cleanup``, ``on_deleted``, ``error_policy``, ``predicates``, ``resync`` and ``concurrency``.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Callable
from typing import Any

from kubeloop.builder import Operator
from kubeloop.cache import Cache, object_key
from kubeloop.client import Resource
from kubeloop.controller import Controller, ControllerSpec
from kubeloop.helpers.events import EventRecorder
from kubeloop.resources.builtin import CONFIG_MAP
from kubeloop.testing.fakeclient import FakeClient

_names = itertools.count()


async def until(condition: Callable[[], bool], what: str, timeout: float = 5.0) -> None:
    """Polls ``condition`` until true; fails naming ``what`` after ``timeout`` seconds."""
    deadline = asyncio.get_running_loop().time() + timeout
    while not condition():
        assert asyncio.get_running_loop().time() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.002)


async def _noop(obj: Any, ctx: Any) -> None:
    return None


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
        started: call ``process`` or ``start``). ``spec``: the ControllerSpec's other fields."""
        return await self._wire(self.unwired(reconcile, resource=resource, **spec))

    def unwired(self, reconcile: Any = None, *, resource: Resource = CONFIG_MAP, **spec: Any) -> ControllerSpec:
        """The spec of a controller, not yet built (for ``Manager.add``)."""
        spec.setdefault("name", f"unit-{next(_names)}")
        return ControllerSpec(resource=resource, reconcile=reconcile or _noop, **spec)

    async def operator_controller(self, operator: Operator) -> Controller:
        """The (single) controller an Operator compiles from its handlers, set up like ``controller``."""
        (spec,) = operator.specs()
        return await self._wire(spec)

    async def _wire(self, spec: ControllerSpec) -> Controller:
        cache = Cache(self.client, freeze_gc=False)
        controller = await Controller.build(spec, self.client, cache, EventRecorder(self.client, spec.name))
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
