"""A controller: cache events → keys in a work queue → ``reconcile`` on the current object.

Level-based: the reconcile function gets the object as it is now (from the cache), never the event
that woke it; a periodic resync re-checks everything as a safety net.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import random
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from kubeloop import metrics
from kubeloop.cache import Cache, Event, Informer
from kubeloop.cache.store import Obj
from kubeloop.client import Client, Conflict, Forbidden, NotFound, Resource, is_transient
from kubeloop.client.api import ResourceRef
from kubeloop.controller.predicates import Predicate
from kubeloop.helpers import finalizers
from kubeloop.helpers.events import EventRecorder
from kubeloop.queue import HIGH, LOW, ShutDown, WorkQueue
from kubeloop.queue.workqueue import ExponentialBackoff
from kubeloop.reconcile import logs
from kubeloop.reconcile.context import Context
from kubeloop.reconcile.result import Request, Result

log = logging.getLogger("kubeloop.controller")

ReconcileFn = Callable[[Any, Context], Awaitable[Result | None]]
CleanupFn = Callable[[Any, Context], Awaitable[Result | None]]
DeletedFn = Callable[[Request, Context | None], Awaitable[None]]
# Workers per controller. They are coroutines that spend their time waiting on the API server, so
# 16 cost next to nothing; with 4, a burst of events queued behind the round-trips (stream p99 twice
# the framework-free loop's in bench/). One key is still never reconciled twice at once.
DEFAULT_CONCURRENCY = 16

ErrorPolicy = Callable[[Exception, Request, int], float | None]
Mapper = Callable[[Obj], Iterable[str | Request | Obj]]


def default_error_policy(error: Exception, request: Request, failures: int) -> float | None:
    """None = requeue with the queue's per-key backoff: the short transient schedule for errors about
    the environment (``kubeloop.client.is_transient``), the exponential one (up to 5 minutes) for the rest."""
    return None



@dataclass
class Watch:
    """A secondary trigger: events of ``resource`` map to primary keys. ``mapper=None`` means "owned":
    the child's controller ownerReference names the primary."""

    resource: ResourceRef
    mapper: Mapper | None = None
    predicates: tuple[Predicate, ...] = ()
    label_selector: str | None = None
    field_selector: str | None = None
    metadata_only: bool = False
    all_namespaces: bool = False  # watch every namespace even when the manager is limited to some


@dataclass
class Controller:
    """Reconciles one resource: its informer and those of owned and watched kinds feed keys into a
    de-duplicating ``WorkQueue``; ``concurrency`` workers call ``reconcile`` (never twice at once for
    one key), send failures through ``error_policy`` and backoff, and run ``cleanup`` under
    ``finalizer``. Usually built by ``Operator.controllers`` rather than by hand.
    """

    name: str
    resource: ResourceRef
    reconcile: ReconcileFn
    model: Any = None  # a pydantic model with from_dict/model_validate; None = reconcile gets the dict
    owns: list[ResourceRef] = field(default_factory=list)
    watches: list[Watch] = field(default_factory=list)
    predicates: tuple[Predicate, ...] = ()
    label_selector: str | None = None
    field_selector: str | None = None
    resync: float | None = 600.0
    concurrency: int = DEFAULT_CONCURRENCY
    finalizer: str | None = None
    cleanup: CleanupFn | None = None
    on_deleted: DeletedFn | None = None
    error_policy: ErrorPolicy = default_error_policy
    backoff: ExponentialBackoff = field(default_factory=ExponentialBackoff)
    field_manager: str = ""

    def __post_init__(self) -> None:
        self.field_manager = self.field_manager or self.name
        self.queue = WorkQueue(self.name, self.backoff)
        self.owns_refs = list(self.owns)
        self._informer: Informer | None = None
        self._owned: dict[Resource, Informer] = {}
        self._client: Client | None = None
        self._cache: Cache | None = None
        self._events: EventRecorder | None = None
        self._resource: Resource | None = None
        self._tasks: list[asyncio.Task[None]] = []
        self._memory: dict[str, dict[str, Any]] = {}
        self._active = 0
        # Bound metric children: labels() lookups on every reconcile showed up in CPU profiles (the
        # work queue binds its children the same way); outcomes are bound on first use. The gauge is
        # read at scrape time instead of being set twice per reconcile.
        metrics.active_workers.labels(self.name).set_function(lambda: self._active)
        self._m_time = metrics.reconcile_time.labels(self.name)
        self._m_total: dict[str, Any] = {}

    # --- wiring ------------------------------------------------------------------------------------

    async def setup(self, client: Client, cache: Cache, events: EventRecorder) -> None:
        """Creates (or joins) the informers and subscribes the triggers. Events queue up from now on,
        even before ``start`` (a standby replica keeps its queue and caches warm)."""
        self._client, self._cache, self._events = client, cache, events
        self._informer = await cache.informer(self.resource, label_selector=self.label_selector,
                                              field_selector=self.field_selector)
        self._resource = self._informer.resource
        self._informer.subscribe(self._on_primary)
        for ref in self.owns:
            informer = await cache.informer(ref)
            self._owned[informer.resource] = informer
            informer.subscribe(self._on_owned)
        for watch in self.watches:
            informer = await cache.informer(watch.resource, label_selector=watch.label_selector,
                                            field_selector=watch.field_selector,
                                            metadata_only=watch.metadata_only,
                                            all_namespaces=watch.all_namespaces)
            informer.subscribe(self._mapped_handler(watch))
        metrics.max_concurrent_reconciles.labels(self.name).set(self.concurrency)

    @property
    def informer(self) -> Informer:
        """The informer (list+watch and store) of the primary resource."""
        assert self._informer is not None, "controller not set up"
        return self._informer

    @property
    def primary(self) -> Resource:
        """The primary ``Resource``, resolved through discovery at setup."""
        assert self._resource is not None, "controller not set up"
        return self._resource

    def owned_informer(self, ref: ResourceRef) -> Informer:
        """The informer of an owned kind (``KeyError`` naming the fix if ``ref`` is not in ``owns``)."""
        for res, informer in self._owned.items():
            if ref == res or ref in (res.kind, res.plural, res.group_resource) or (
                    hasattr(ref, "resource") and ref.resource() == res):  # type: ignore[union-attr]
                return informer
        raise KeyError(f"controller {self.name} does not own {ref}; add it to owns=[...]")

    def _on_primary(self, event: Event) -> None:
        # The event echoing our own status write comes here too, and reconciles again: deliberately
        # (see docs/PERFORMANCE.md, "the echo reconcile"), since a reconcile that ran on a cache
        # without that write, or a status-driven state machine, needs it.
        if event.type != "deleted" and not all(p(event) for p in self.predicates):
            return
        self.queue.add(_key(event.object), LOW if event.initial else HIGH)

    def _on_owned(self, event: Event) -> None:
        for obj in (event.object, event.old):
            key = self._owner_key(obj) if obj else None
            if key:
                self.queue.add(key, LOW if event.initial else HIGH)

    def _owner_key(self, child: Obj) -> str | None:
        primary = self.primary
        for ref in child.get("metadata", {}).get("ownerReferences") or ():
            if not ref.get("controller") or ref.get("kind") != primary.kind:
                continue
            if ref.get("apiVersion", "").rpartition("/")[0] != primary.group:
                continue
            owners = self.informer.store.index_keys("uid", ref["uid"])
            if owners:
                return owners[0]
            ns = child["metadata"].get("namespace") if primary.namespaced else None
            return f"{ns}/{ref['name']}" if ns else ref["name"]
        return None

    def _mapped_handler(self, watch: Watch) -> Callable[[Event], None]:
        def handle(event: Event) -> None:
            if event.type != "deleted" and not all(p(event) for p in watch.predicates):
                return
            objs = [event.object] if event.old is None else [event.object, event.old]
            for obj in objs:
                keys = self._owner_key_list(obj) if watch.mapper is None else watch.mapper(obj)
                for key in keys:
                    self.queue.add(_as_key(key), LOW if event.initial else HIGH)
        return handle

    def _owner_key_list(self, obj: Obj) -> list[str]:
        key = self._owner_key(obj)
        return [key] if key else []

    # --- running -----------------------------------------------------------------------------------

    def start(self) -> None:
        """Starts the workers (call when leading)."""
        for i in range(self.concurrency):
            self._tasks.append(asyncio.create_task(self._worker(), name=f"{self.name} worker {i}"))
        self._tasks.append(asyncio.create_task(self._housekeeping(), name=f"{self.name} housekeeping"))

    async def stop(self, deadline: float = 30.0) -> None:
        """Stops taking work and gives in-flight reconciles ``deadline`` seconds to finish."""
        self.queue.shutdown()
        workers = [t for t in self._tasks if not t.get_name().endswith("housekeeping")]
        for task in self._tasks:
            if task not in workers:
                task.cancel()
        if workers:
            _, pending = await asyncio.wait(workers, timeout=deadline)
            for task in pending:
                task.cancel()
            for task in pending:
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        self._tasks.clear()

    async def _housekeeping(self) -> None:
        """Periodic resync (with jitter, at low priority) and the stuck-work gauges."""
        next_resync = time.monotonic() + (self.resync or 0) * (0.9 + random.random() * 0.2)
        while True:
            await asyncio.sleep(1.0)
            self.queue.update_gauges()
            if self.resync and time.monotonic() >= next_resync:
                for key in self.informer.store.keys():
                    self.queue.add(key, LOW)
                next_resync = time.monotonic() + self.resync * (0.9 + random.random() * 0.2)

    async def _worker(self) -> None:
        while True:
            try:
                key = await self.queue.get()
            except ShutDown:
                return
            self._active += 1
            try:
                await self.process(str(key))
            finally:
                self._active -= 1
                self.queue.done(key)

    async def process(self, key: str) -> None:
        """One reconcile of one key, with metrics, logging context and the error policy."""
        request = Request.from_key(key)
        reconcile_id = os.urandom(16).hex()  # as random as uuid4().hex, a fifth of its CPU
        token = logs.current.set({"controller": self.name, "object": key, "reconcileID": reconcile_id,
                                  "kind": self.primary.kind})
        started = time.monotonic()
        outcome = "success"
        try:
            result = await self._reconcile_once(request, reconcile_id)
            if result is not None and result.requeue_after:
                outcome = "requeue_after"
                self.queue.forget(key)
                self.queue.add_after(key, result.requeue_after)
            elif result is not None and result.requeue:
                outcome = "requeue"
                self.queue.add_rate_limited(key)
            else:
                self.queue.forget(key)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # every failure goes through the error policy, never kills a worker
            outcome = "error"
            metrics.reconcile_errors.labels(self.name).inc()
            failures = self.queue.backoff.failures(key)
            delay = self.error_policy(exc, request, failures)
            if isinstance(exc, Conflict):
                log.info("conflict, will retry: %s", exc.message)
            elif isinstance(exc, Forbidden):  # a missing permission, not a bug: no traceback, say what to do
                log.error("reconcile failed: %s; grant it to the operator's role (kubeloop generate rbac), "
                          "retrying with backoff", exc.message)
            else:
                log.error("reconcile failed: %s", exc, exc_info=not isinstance(exc, NotFound))
            if delay is None:
                self.queue.add_rate_limited(key, transient=is_transient(exc))
            elif delay > 0:
                self.queue.add_after(key, delay)
        finally:
            total = self._m_total.get(outcome)
            if total is None:
                total = self._m_total[outcome] = metrics.reconcile_total.labels(self.name, outcome)
            total.inc()
            self._m_time.observe(time.monotonic() - started)
            logs.current.reset(token)

    async def _reconcile_once(self, request: Request, reconcile_id: str) -> Result | None:
        raw = self.informer.store.get(request.key)
        if raw is None:
            self._memory.pop(request.key, None)
            if self.on_deleted is not None:
                await self.on_deleted(request, None)
            return None
        ctx = self._context(request, raw, reconcile_id)
        if self.finalizer and self.cleanup:
            if finalizers.is_deleting(raw):
                if not finalizers.has_finalizer(raw, self.finalizer):
                    return None
                result = await self.cleanup(self._typed(raw), ctx)
                if result is None or not (result.requeue or result.requeue_after):
                    with contextlib.suppress(NotFound):  # a lagging cache re-ran cleanup: already gone
                        await finalizers.remove_finalizer(self._client_(), self.primary, raw, self.finalizer)
                return result
            if not finalizers.has_finalizer(raw, self.finalizer):
                # The finalizer goes on before any side effect, so cleanup can never be skipped.
                raw = await finalizers.add_finalizer(self._client_(), self.primary, raw, self.finalizer)
                ctx.raw = raw
        return await self.reconcile(self._typed(raw), ctx)

    def _typed(self, raw: Obj) -> Any:
        if self.model is None:
            return raw
        from_dict = getattr(self.model, "from_dict", None)
        return from_dict(raw) if from_dict else self.model.model_validate(raw)

    def _context(self, request: Request, raw: Obj, reconcile_id: str) -> Context:
        assert self._cache is not None and self._events is not None
        return Context(client=self._client_(), cache=self._cache, request=request, resource=self.primary,
                       controller=self, events=self._events, log=log, raw=raw, reconcile_id=reconcile_id,
                       memory=self._memory.setdefault(request.key, {}))

    def _client_(self) -> Client:
        assert self._client is not None, "controller not set up"
        return self._client


def _key(obj: Obj) -> str:
    meta = obj.get("metadata", {})
    ns = meta.get("namespace")
    return f"{ns}/{meta['name']}" if ns else meta["name"]


def _as_key(value: str | Request | Obj) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, Request):
        return value.key
    return _key(value)
