"""The shared cache: one informer per (resource, namespaces, selectors), reused by every controller."""

from __future__ import annotations

import asyncio
import gc
import logging
from collections.abc import Mapping
from typing import Any

from kubeloop.cache.informer import Informer, InformerKey
from kubeloop.cache.store import IndexFunc
from kubeloop.client import Client
from kubeloop.client.api import Obj, ResourceRef
from kubeloop.client.transport import WATCH_INACTIVITY_TIMEOUT
from kubeloop.watch.watcher import Transform, describe_error

log = logging.getLogger("kubeloop.cache")


class CacheSyncTimeout(TimeoutError):
    """Some informers never completed their first list (RBAC, a missing CRD, an unreachable server)."""


def _last_error(informer: Informer) -> str:
    errors = [describe_error(w.last_error) for w in informer.watchers if w.last_error is not None]
    return "; ".join(errors) or "no error seen yet"


class Cache:
    """Informers by key. ``namespaces=None`` watches all namespaces; otherwise namespaced resources are
    watched in just those namespaces (one watch each), cluster-scoped ones everywhere."""

    def __init__(self, client: Client, namespaces: list[str] | None = None, *,
                 freeze_gc: bool = True, page_size: int = 500, inactivity_timeout: float = WATCH_INACTIVITY_TIMEOUT,
                 strip_managed_fields: bool = True) -> None:
        self.client = client
        self.namespaces = tuple(namespaces) if namespaces else None
        self.freeze_gc = freeze_gc
        # managedFields are the API server's server-side-apply bookkeeping: reconcilers do not read
        # them, and they are often a third of a small object's memory. An update (PUT) of a cached
        # object without them keeps the server's (only an explicit empty list would reset them).
        self.strip_managed_fields = strip_managed_fields
        self.page_size = page_size
        # A watch silent this long (not even a bookmark) is taken for a dead, half-open connection.
        self.inactivity_timeout = inactivity_timeout
        self._informers: dict[InformerKey, Informer] = {}
        self._transforms: dict[InformerKey, Transform] = {}  # the transform each informer was declared with
        self._started = False

    async def informer(self, ref: ResourceRef, *, label_selector: str | None = None,
                       field_selector: str | None = None, metadata_only: bool = False,
                       transform: Transform | None = None, indexes: Mapping[str, IndexFunc] | None = None,
                       namespaces: list[str] | None = None, all_namespaces: bool = False) -> Informer:
        """The shared informer for this resource and selectors, created on first use (and started
        at once if the cache is already running). ``all_namespaces`` watches the whole cluster even
        when the cache is limited to some namespaces (for operators that act across namespaces).

        ``transform`` rewrites every object before it is stored (e.g. drops data no one reads). It
        belongs to the informer, which every user of the same key shares: declare it where the informer
        is first asked for (a ``Watch``, ``@op.reconcile(transform=...)``). A request without one joins
        the informer as it is; a request with a transform other than the informer's raises ``ValueError``
        (it would otherwise be silently dropped). Indexes add up; one name with two functions raises."""
        resource = await self.client.resource(ref)
        scope = None if all_namespaces else (tuple(namespaces) if namespaces else self.namespaces)
        key = InformerKey(resource, scope if resource.namespaced else None, label_selector, field_selector,
                          metadata_only)
        informer = self._informers.get(key)
        if informer is not None and transform is not None and self._transforms.get(key) is not transform:
            had = self._transforms.get(key)
            raise ValueError(f"the informer of {_describe(key)} already exists "
                             f"{'with the transform ' + _name(had) if had else 'without a transform'}; "
                             f"{_name(transform)} cannot be applied to it as well. Declare one transform for "
                             "this resource and selectors, the same function everywhere it is watched (or "
                             "watch it with other selectors for an informer of its own)")
        if informer is None:
            if transform is not None:
                self._transforms[key] = transform
            if self.strip_managed_fields:
                transform = _without_managed_fields(transform)
            informer = Informer(self.client, key, transform=transform, indexes=dict(indexes or {}),
                                page_size=self.page_size, inactivity_timeout=self.inactivity_timeout)
            self._informers[key] = informer
            if self._started:
                informer.start()
        else:
            for name, func in (indexes or {}).items():
                informer.store.add_index(name, func)
        return informer

    @property
    def informers(self) -> list[Informer]:
        """Every informer created so far."""
        return list(self._informers.values())

    def start(self) -> None:
        """Starts every informer (and those created later, at once)."""
        if self.freeze_gc and not self._started:
            # What exists now (the imported modules: some 50,000 objects) lives as long as the process:
            # frozen here, the full collection at sync scans only what the lists brought (at N=1,000 it
            # spent ~27 ms on the modules alone). Not collected first: that would be the same scan again.
            gc.freeze()
        self._started = True
        for informer in self._informers.values():
            informer.start()

    async def wait_synced(self, timeout: float | None = None) -> None:
        """Waits for every informer's first list; on timeout says which did not sync and why."""
        try:
            await asyncio.wait_for(asyncio.gather(*(i.synced.wait() for i in self.informers)), timeout)
        except TimeoutError:
            stuck = [f"{i.resource} ({_last_error(i)})" for i in self.informers if not i.synced.is_set()]
            raise CacheSyncTimeout(f"caches not synced after {timeout}s: {'; '.join(stuck)}") from None
        if self.freeze_gc:
            # The initial lists are long-lived dicts: move them out of the GC's generations so full
            # collections do not rescan them again and again.
            gc.collect()
            gc.freeze()

    def synced(self) -> bool:
        """Whether every informer has completed its first list (what ``/readyz`` reports)."""
        return all(i.synced.is_set() for i in self._informers.values())

    async def stop(self) -> None:
        """Stops every informer's watches."""
        await asyncio.gather(*(i.stop() for i in self._informers.values()))
        self._started = False

    async def get(self, ref: ResourceRef, name: str, namespace: str | None = None, **kw: Any) -> Obj | None:
        """An object from the cache (its informer is created and synced if needed)."""
        informer = await self.informer(ref, **kw)
        if not informer.synced.is_set():
            informer.start()
            await informer.wait_synced()
        return informer.store.get_by(name, namespace if informer.resource.namespaced else None)

    async def list(self, ref: ResourceRef, namespace: str | None = None, **kw: Any) -> list[Obj]:
        """The cached objects of a resource, in ``namespace`` if given (its informer is created and synced
        if needed).
        """
        informer = await self.informer(ref, **kw)
        if not informer.synced.is_set():
            informer.start()
            await informer.wait_synced()
        if namespace and informer.resource.namespaced:
            return informer.store.by_index("namespace", namespace)
        return list(informer.store)


def _name(func: Transform | None) -> str:
    return getattr(func, "__qualname__", None) or repr(func)


def _describe(key: InformerKey) -> str:
    parts = [str(key.resource)]
    if key.namespaces:
        parts.append(f"in namespaces {', '.join(key.namespaces)}")
    if key.label_selector:
        parts.append(f"labels {key.label_selector!r}")
    if key.field_selector:
        parts.append(f"fields {key.field_selector!r}")
    if key.metadata_only:
        parts.append("metadata only")
    return " ".join(parts)


def _without_managed_fields(then: Transform | None) -> Transform:
    def transform(obj: Obj) -> Obj:
        meta = obj.get("metadata")
        if meta:
            meta.pop("managedFields", None)
        return then(obj) if then else obj
    return transform
