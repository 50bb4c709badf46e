"""Informers keep a Store in sync with the API server and tell subscribers what changed.

One informer per (resource, namespaces, selectors), shared by every controller through ``Cache``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kubeloop.cache.store import IndexFunc, Store, object_key
from kubeloop.client import Client, Resource
from kubeloop.client.api import Obj
from kubeloop.client.transport import WATCH_INACTIVITY_TIMEOUT
from kubeloop.watch.watcher import Changed, Relisted, Transform, Watcher, WatchOptions

log = logging.getLogger("kubeloop.cache")


@dataclass(frozen=True, slots=True)
class Event:
    """A change seen by an informer. ``initial`` marks objects of the first list (startup backlog)."""

    type: str  # "added" | "modified" | "deleted"
    object: Obj
    old: Obj | None = None
    initial: bool = False


Handler = Callable[[Event], None]


@dataclass(frozen=True, slots=True)
class InformerKey:
    resource: Resource
    namespaces: tuple[str, ...] | None
    label_selector: str | None = None
    field_selector: str | None = None
    metadata_only: bool = False


class Informer:
    """One list+watch of one ``InformerKey`` into a ``Store``, telling subscribers each change (``Event``).

    Shared: the ``Cache`` hands the same informer to every controller asking for the same key. After a
    410 or a broken watch it lists again and replaces the store, sending the differences as events.
    """

    def __init__(self, client: Client, key: InformerKey, *, transform: Transform | None = None,
                 indexes: dict[str, IndexFunc] | None = None, page_size: int = 500,
                 inactivity_timeout: float = WATCH_INACTIVITY_TIMEOUT) -> None:
        self.client = client
        self.key = key
        self.resource = key.resource
        self.store = Store(indexes)
        self.synced = asyncio.Event()
        self._handlers: list[Handler] = []
        namespaces: tuple[str | None, ...] = (
            key.namespaces if key.namespaces and self.resource.namespaced else (None,))
        self.watchers = [Watcher(client, self.resource, WatchOptions(
            namespace=ns, label_selector=key.label_selector, field_selector=key.field_selector,
            page_size=page_size, metadata_only=key.metadata_only, transform=transform,
            inactivity_timeout=inactivity_timeout)) for ns in namespaces]
        self._synced_watchers: set[int] = set()
        self._task: asyncio.Task[None] | None = None

    def subscribe(self, handler: Handler) -> None:
        """Handlers run synchronously on each change (keep them cheap: enqueue a key). A handler added
        after the first sync is replayed the current contents as ``initial`` adds."""
        self._handlers.append(handler)
        if self.synced.is_set():
            for obj in self.store:
                handler(Event("added", obj, None, True))

    def start(self) -> asyncio.Task[None]:
        """Starts listing and watching (once; later calls return the same task)."""
        if self._task is None:
            self._task = asyncio.create_task(self._run(), name=f"informer {self.resource}")
        return self._task

    async def stop(self) -> None:
        """Stops watching; the store keeps what it holds."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    @property
    def handlers(self) -> tuple[Handler, ...]:
        """Who subscribed (the shard member checks an informer serves only primaries before filtering it)."""
        return tuple(self._handlers)

    def reselect(self, shard_selector: str | None, keep: Callable[[Obj], bool]) -> None:
        """Lists and watches again with another KEP-5866 shard selector (this replica's hash ranges changed).

        Objects ``keep`` rejects leave the store *without* events: they were not deleted, another replica
        caches them now. The relist then adds the newly selected ones as initial events (backlog
        priority). Every watcher restarts; the ``synced`` flag stays set (the cache was whole for the old
        ranges, and the gate never lets a key be reconciled outside the ranges it holds).
        """
        for watcher in self.watchers:
            watcher.options.shard_selector = shard_selector
            watcher.resource_version = None
        for obj in [o for o in self.store if not keep(o)]:
            self.store.remove(object_key(obj))
        self._synced_watchers.clear()
        if self._task is not None:
            self._task.cancel()  # it is parked at an await: it handles no further event
            self._task = asyncio.create_task(self._run(), name=f"informer {self.resource}")

    async def wait_synced(self, timeout: float | None = None) -> None:
        """Waits until the first list is in the store (``TimeoutError`` after ``timeout`` seconds)."""
        await asyncio.wait_for(self.synced.wait(), timeout)

    async def _run(self) -> None:
        await asyncio.gather(*(self._follow(i, w) for i, w in enumerate(self.watchers)))

    async def _follow(self, index: int, watcher: Watcher) -> None:
        async for event in watcher:
            if isinstance(event, Relisted):
                initial = index not in self._synced_watchers
                self._replace(event.items, watcher.options.namespace, initial)
                self._synced_watchers.add(index)
                if len(self._synced_watchers) == len(self.watchers):
                    self.synced.set()
            else:
                self._apply(event)

    def _apply(self, event: Changed) -> None:
        obj = event.object
        if event.type == "DELETED":
            old = self.store.remove(object_key(obj))
            self._emit(Event("deleted", obj, old))
        else:
            old = self.store.upsert(obj)
            self._emit(Event("added" if old is None else "modified", obj, old))

    def _replace(self, items: list[Obj], namespace: str | None, initial: bool) -> None:
        """Swaps in a fresh list for one namespace (or all): anything that vanished is deleted."""
        fresh = {object_key(o): o for o in items}
        in_scope = self.store.keys() if namespace is None else [
            k for k in self.store.keys() if k.startswith(namespace + "/")]
        for key in in_scope:
            if key not in fresh:
                old = self.store.remove(key)
                if old is not None:
                    self._emit(Event("deleted", old, old))
        for obj in fresh.values():
            old = self.store.upsert(obj)
            if old is None:
                self._emit(Event("added", obj, None, initial))
            elif _rv(old) != _rv(obj):
                self._emit(Event("modified", obj, old))

    def _emit(self, event: Event) -> None:
        for handler in self._handlers:
            try:
                handler(event)
            except Exception:  # a broken handler must not stop the cache
                log.exception("%s: event handler failed", self.resource)


def _rv(obj: Obj) -> Any:
    return (obj.get("metadata") or {}).get("resourceVersion")
