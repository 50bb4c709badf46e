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
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from kubeloop import clock, metrics
from kubeloop.cache import Cache, Event, Informer
from kubeloop.client import Client, Conflict, Forbidden, NotFound, Resource, is_transient
from kubeloop.client.api import Obj
from kubeloop.controller.daemons import Daemons
from kubeloop.controller.echo import OwnWrites
from kubeloop.controller.gate import Fenced, KeyGate
from kubeloop.controller.giveup import GaveUp, clear_stalled, stalled_here
from kubeloop.controller.predicates import passes
from kubeloop.controller.spec import ControllerSpec, Watch
from kubeloop.helpers import finalizers
from kubeloop.helpers.events import EventRecorder
from kubeloop.metrics import loop as loop_lag
from kubeloop.queue import HIGH, LOW, ShutDown, WorkQueue
from kubeloop.queue.workqueue import ExponentialBackoff
from kubeloop.reconcile import logs
from kubeloop.reconcile.context import Change, Context, OwnWrite, send
from kubeloop.reconcile.result import GIVE_UP, PermanentError, Request, Result

log = logging.getLogger("kubeloop.controller")

__all__ = ["Controller", "Wiring"]


class Controller:
    """Reconciles one resource as its ``ControllerSpec`` says: its informer and those of owned and
    watched kinds feed keys into a de-duplicating ``WorkQueue``; ``concurrency`` workers call
    ``reconcile`` (never twice at once for one key), send failures through ``error_policy`` and
    backoff, and run ``cleanup`` under ``finalizer``.

    Built with ``await Controller.build(spec, client, cache, events)`` (the manager does it when it
    starts): the informers exist and events queue up from then on, even before ``start`` (a standby
    replica keeps its queue and caches warm). A controller that exists is ready to run.
    """

    def __init__(self, spec: ControllerSpec, client: Client, cache: Cache, events: EventRecorder,
                 wiring: Wiring) -> None:
        self.spec = spec
        self.name = spec.name
        self.client, self.cache, self.events = client, cache, events
        self.informer = wiring.primary  # list+watch and store of the primary resource
        self.primary: Resource = wiring.primary.resource  # resolved through discovery
        self._owned = wiring.owned
        self.queue = WorkQueue(self.name, ExponentialBackoff(spec.backoff_base, spec.backoff_cap))
        self.own_writes = OwnWrites()
        self._tasks: list[asyncio.Task[None]] = []
        self._per_object: dict[str, dict[Any, Any]] = {}
        # Consecutive failed reconciles per key, whatever delay the error policy chose (the queue's
        # backoff counts only the retries it schedules itself); gone on the key's next success.
        self._failures: dict[str, int] = {}
        self.gave_up = GaveUp()  # keys left alone until their object changes (see giveup.py)
        self.daemons = Daemons(self.name, spec.daemons, self._daemon_args)  # this run's, stopped with it
        self._active = 0
        self.gate: KeyGate | None = None  # set by the manager when replicas share the work (gate.py)
        self.deps: Any = None  # the operator's dependencies (ctx.deps), set by the manager before it starts
        self._hashes: dict[str, int] = {}  # key → hash of its object's uid, kept while the key may run
        self.in_flight: dict[str, tuple[int, asyncio.Task[None]]] = {}  # gated reconciles running now
        # Bound metric children: labels() lookups on every reconcile showed up in CPU profiles (the
        # work queue binds its children the same way); outcomes are bound on first use. The gauge is
        # read at scrape time instead of being set twice per reconcile.
        metrics.active_workers.labels(self.name).set_function(lambda: self._active)
        self._m_time = metrics.reconcile_time.labels(self.name)
        self._m_total: dict[str, Any] = {}
        metrics.max_concurrent_reconciles.labels(self.name).set(spec.concurrency)
        self.informer.subscribe(self._on_primary)
        for informer in self._owned.values():
            informer.subscribe(self._on_owned)
        for watch, informer in wiring.watched:
            informer.subscribe(self._mapped_handler(watch))

    @classmethod
    async def build(cls, spec: ControllerSpec, client: Client, cache: Cache,
                    events: EventRecorder) -> Controller:
        """Creates (or joins) the spec's informers on ``cache`` and the controller on them."""
        return cls(spec, client, cache, events, await Wiring.of(spec, cache))

    def _on_primary(self, event: Event) -> None:
        key = _key(event.object)
        if self.gate is not None and (uid := event.object.get("metadata", {}).get("uid")):
            self._hashes[key] = self.gate.hash(uid)
        if not self.own_writes.stash(key, event):  # else judged once our write in flight returns
            self._primary_event(key, event)

    def _primary_event(self, key: str, event: Event) -> None:
        # The echo of our own write wakes the key only if a reconcile waits for it (see echo.py).
        if key in self.own_writes:
            verdict = self.own_writes.on_event(key, event.type, event.object, event.old)
            if verdict == "echo":
                return
            if verdict == "release":
                self.queue.add(key, HIGH)  # a held reconcile: whatever the predicates say of the event
                return
        if self.spec.predicates and not passes(self.spec.predicates, event):
            if event.type == "deleted":  # kept from the reconciler, but nothing of the key is kept here
                self.daemons.stop_soon(key)
                self._per_object.pop(key, None)
                self._failures.pop(key, None)
                self.gave_up.forget(key)
            return
        self._add(key, LOW if event.initial else HIGH)

    def _on_owned(self, event: Event) -> None:
        for obj in (event.object, event.old):
            key = self._owner_key(obj) if obj else None
            if key:
                self._add(key, LOW if event.initial else HIGH)

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
            if watch.predicates and not passes(watch.predicates, event):
                return
            objs = [event.object] if event.old is None else [event.object, event.old]
            for obj in objs:
                keys = self._owner_key_list(obj) if watch.mapper is None else watch.mapper(obj)
                for key in keys:
                    self._add(_as_key(key), LOW if event.initial else HIGH)
        return handle

    def _add(self, key: str, priority: int) -> None:
        """Queues ``key`` unless another replica owns it (see gate.py)."""
        if self.gate is None or self.owns_key(key):
            self.queue.add(key, priority)
        elif self.informer.store.get(key) is None:
            self._hashes.pop(key, None)  # gone, and its owner reconciles the deletion

    def owns_key(self, key: str) -> bool:
        """Whether this replica may reconcile ``key`` now (always, without a gate)."""
        if self.gate is None:
            return True
        h = self.key_hash(key)
        return h is not None and self.gate.owns(h)

    def key_hash(self, key: str) -> int | None:
        """The shard hash of ``key`` (None: never seen, so nothing of it to reconcile)."""
        h = self._hashes.get(key)
        if h is None and self.gate is not None and (obj := self.informer.store.get(key)) is not None:
            h = self._hashes[key] = self.gate.hash(obj["metadata"]["uid"])
        return h

    def owned_keys(self) -> list[str]:
        """The cached keys this replica owns now."""
        return [k for k in self.informer.store.keys() if self.owns_key(k)]

    def requeue_owned(self) -> int:
        """Queues every cached key this replica owns now (slots were gained); returns how many."""
        keys = self.owned_keys()
        for key in keys:
            self.queue.add(key, LOW)
        return len(keys)

    def _owner_key_list(self, obj: Obj) -> list[str]:
        key = self._owner_key(obj)
        return [key] if key else []

    # --- running -----------------------------------------------------------------------------------

    def start(self) -> None:
        """Starts the workers (call when leading)."""
        for i in range(self.spec.concurrency):
            self._tasks.append(asyncio.create_task(self._worker(), name=f"{self.name} worker {i}"))
        self._tasks.append(asyncio.create_task(self._housekeeping(), name=f"{self.name} housekeeping"))

    async def stop(self, deadline: float = 30.0) -> None:
        """Stops taking work, gives in-flight reconciles ``deadline`` seconds to finish, then cancels and
        awaits the daemons."""
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
        await self.daemons.stop_all()

    async def stop_unowned_daemons(self) -> int:
        """Cancels and awaits the daemons of the keys this replica no longer owns (a shard handoff, a
        fence); returns how many keys had some."""
        return await self.daemons.stop_where(lambda key: not self.owns_key(key))

    async def _housekeeping(self) -> None:
        """Periodic resync (with jitter, at low priority) and the stuck-work gauges."""
        resync = self.spec.resync
        next_resync = clock.monotonic() + (resync or 0) * (0.9 + random.random() * 0.2)
        while True:
            await asyncio.sleep(1.0)
            self.queue.update_gauges()
            for key in self.own_writes.expired():  # held for an echo that never came as such
                self.queue.add(key, HIGH)
            if resync and clock.monotonic() >= next_resync:
                for key in self.informer.store.keys():
                    self.queue.add(key, LOW)
                next_resync = clock.monotonic() + resync * (0.9 + random.random() * 0.2)

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
        """One reconcile of ``key``; with a gate, only if this replica owns it, and as a task a handoff
        can wait for or cancel (``in_flight``)."""
        if self.gate is None:
            return await self._process(key)
        h = self.key_hash(key)
        if h is None or not self.gate.owns(h):
            self.queue.forget(key)  # its owner reconciles it
            if self.informer.store.get(key) is None:
                self._hashes.pop(key, None)
            return None
        task = asyncio.ensure_future(self._process(key))
        self.in_flight[key] = (h, task)
        try:
            await task
        except asyncio.CancelledError:
            if asyncio.current_task().cancelling():  # type: ignore[union-attr]  # the worker itself stops
                task.cancel()
                raise
            log.warning("reconcile of %s cancelled: its slot was handed off or this replica was fenced", key)
        finally:
            del self.in_flight[key]
            if self.informer.store.get(key) is None:
                self._hashes.pop(key, None)
        return None

    async def _process(self, key: str) -> None:
        """One reconcile of one key, with metrics, logging context and the error policy; none while the
        cache lacks this controller's last write to the object (its echo brings the key back)."""
        if self.spec.skip_own_writes and self.own_writes.hold(key):
            return  # its failures (backoff) are kept: the released reconcile may fail again
        request = Request.from_key(key)
        reconcile_id = os.urandom(16).hex()  # as random as uuid4().hex, a fifth of its CPU
        token = logs.current.set({"controller": self.name, "object": key, "reconcileID": reconcile_id,
                                  "kind": self.primary.kind})
        task = asyncio.current_task()
        loop_lag.holding[task] = (self.name, key)  # what the loop monitor names if this holds the loop
        started = clock.monotonic()
        outcome = "success"
        try:
            result = await self._reconcile_once(request, reconcile_id)
            self._failures.pop(key, None)
            raw = self.informer.store.get(key)
            if raw is not None and stalled_here(raw) and key not in self.gave_up:
                await clear_stalled(self.client, self.primary, raw)  # a give-up, even a past run's, is over
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
            if self._deleted_meanwhile(exc, request):
                # controller-runtime's IgnoreNotFound: not a failure; its deletion event reconciles it.
                log.info("the object was deleted during its reconcile: %s", exc.message)
                self.queue.forget(key)
                self._failures.pop(key, None)
                return
            outcome = "error"
            metrics.reconcile_errors.labels(self.name).inc()
            failures = self._failures[key] = self._failures.get(key, 0) + 1
            delay = GIVE_UP if isinstance(exc, PermanentError) else self.spec.error_policy(exc, request, failures)
            if isinstance(exc, Conflict):
                log.info("conflict, will retry: %s", exc.message)
            elif isinstance(exc, Forbidden):  # a permission or a policy, not a bug: no traceback, say what to do
                log.error("reconcile failed: %s; %s", exc.message,
                          f"{exc.advice}; retrying with backoff" if exc.advice else "retrying with backoff")
            else:
                log.error("reconcile failed: %s", exc, exc_info=not isinstance(exc, NotFound | PermanentError))
            if delay is None:
                self.queue.add_rate_limited(key, transient=is_transient(exc))
            elif delay == GIVE_UP:
                await self._give_up(key, exc, failures)
            elif delay > 0:
                self.queue.add_after(key, delay)
        finally:
            total = self._m_total.get(outcome)
            if total is None:
                total = self._m_total[outcome] = metrics.reconcile_total.labels(self.name, outcome)
            total.inc()
            self._m_time.observe(clock.monotonic() - started)
            logs.current.reset(token)
            loop_lag.holding.pop(task, None)

    def _deleted_meanwhile(self, exc: Exception, request: Request) -> bool:
        """A 404 naming the reconciled object itself: it was deleted while its reconcile ran."""
        if not isinstance(exc, NotFound):
            return False
        details = exc.details
        return (details.get("name") == request.name and details.get("kind") == self.primary.plural
                and (details.get("group") or "") == self.primary.group)

    async def _give_up(self, key: str, error: Exception, failures: int) -> None:
        self.queue.forget(key)
        self._failures.pop(key, None)
        raw = self.informer.store.get(key)
        if raw is not None:
            await self.gave_up.record(key, raw, error, failures, self.client, self.primary, self.events)

    async def _reconcile_once(self, request: Request, reconcile_id: str) -> Result | None:
        spec = self.spec
        raw = self.informer.store.get(request.key)
        if raw is None:
            await self.daemons.stop(request.key)
            self._per_object.pop(request.key, None)
            self.gave_up.forget(request.key)
            if spec.on_deleted is not None:
                await spec.on_deleted(request, None)
            return None
        if self.gave_up.unchanged(request.key, raw):
            return None  # the same object would fail the same way: only a change is worth a retry
        ctx = self._context(request, raw, reconcile_id)
        deleting = finalizers.is_deleting(raw)
        if deleting:  # Kopf stops an object's daemons once it is marked for deletion
            await self.daemons.stop(request.key)
        if spec.finalizer and spec.cleanup:
            if deleting:
                if not finalizers.has_finalizer(raw, spec.finalizer):
                    return None
                result = await spec.cleanup(self._typed(raw), ctx)
                if result is None or not (result.requeue or result.requeue_after):
                    with contextlib.suppress(NotFound):  # a lagging cache re-ran cleanup: already gone
                        await ctx.own_write(finalizers.remove_finalizer(
                            self.client, self.primary, raw, spec.finalizer), _without_finalizer(spec.finalizer))
                return result
            if not finalizers.has_finalizer(raw, spec.finalizer):
                # The finalizer goes on before any side effect, so cleanup can never be skipped.
                raw = await ctx.own_write(finalizers.add_finalizer(self.client, self.primary, raw, spec.finalizer),
                                          _with_finalizer(spec.finalizer))
                ctx.raw = raw
        result = await spec.reconcile(self._typed(raw), ctx)
        if spec.daemons and not deleting:
            await self.daemons.ensure(request.key, raw["metadata"].get("uid", ""))
        return result

    def _daemon_args(self, key: str) -> tuple[Any, Context] | None:
        """A daemon's (re)start: the object as cached now and a context that reads it again
        (``ctx.current()``); None once it is gone, marked for deletion or owned by another replica."""
        raw = self.informer.store.get(key)
        if raw is None or finalizers.is_deleting(raw) or not self.owns_key(key):
            return None
        ctx = self._context(Request.from_key(key), raw, "")
        return self._typed(raw), ctx

    def _typed(self, raw: Obj) -> Any:
        model = self.spec.model
        if model is None:
            return raw
        from_dict = getattr(model, "from_dict", None)
        return from_dict(raw) if from_dict else model.model_validate(raw)

    def _context(self, request: Request, raw: Obj, reconcile_id: str) -> Context:
        return Context(client=self.client, cache=self.cache, request=request, resource=self.primary,
                       events=self.events, log=log, raw=raw, reconcile_id=reconcile_id,
                       field_manager=self.spec.field_manager, owns=self.spec.owns,
                       owned_informers=self._owned,
                       per_object=self._per_object.setdefault(request.key, {}),
                       own_write=self._writer(request.key) if self.spec.skip_own_writes else send,
                       reader=lambda: self._current(request.key), deps=self.deps)

    def _current(self, key: str) -> tuple[Any, Obj] | None:
        raw = self.informer.store.get(key)
        return None if raw is None else (self._typed(raw), raw)

    def _writer(self, key: str) -> OwnWrite:
        """How the context sends its writes to the object: noted in ``own_writes`` (see echo.py)."""
        async def write(request: Awaitable[Any], change: Change) -> Any:
            if not self.owns_key(key):  # fenced: another replica may own it by now
                if asyncio.iscoroutine(request):
                    request.close()
                raise Fenced(f"{key}: this replica no longer owns its shard; the write was not sent")
            self.own_writes.begin(key)
            written = None
            try:
                written = await request
                return written
            finally:
                for event in self.own_writes.end(key, written, change, self.informer.store.get(key)):
                    self._primary_event(key, event)
        return write


@dataclass(frozen=True)
class Wiring:
    """The informers a spec needs, resolved on the cache: what a ``Controller`` subscribes to."""

    primary: Informer
    owned: dict[Resource, Informer]
    watched: list[tuple[Watch, Informer]]

    @classmethod
    async def of(cls, spec: ControllerSpec, cache: Cache) -> Wiring:
        primary = await cache.informer(spec.resource, label_selector=spec.label_selector,
                                       field_selector=spec.field_selector, transform=spec.transform,
                                       indexes=dict(spec.indexes))
        owned: dict[Resource, Informer] = {}
        for ref in spec.owns:
            informer = await cache.informer(ref)
            owned[informer.resource] = informer
        watched = []
        for watch in spec.watches:
            informer = await cache.informer(watch.resource, label_selector=watch.label_selector,
                                            field_selector=watch.field_selector,
                                            metadata_only=watch.metadata_only,
                                            all_namespaces=watch.all_namespaces,
                                            transform=watch.transform, indexes=dict(watch.indexes))
            watched.append((watch, informer))
        return cls(primary, owned, watched)


def _with_finalizer(name: str) -> Change:
    def change(obj: Obj) -> Obj:
        meta = obj.get("metadata", {})
        names = list(meta.get("finalizers") or [])
        return obj if name in names else {**obj, "metadata": {**meta, "finalizers": [*names, name]}}
    return change


def _without_finalizer(name: str) -> Change:
    def change(obj: Obj) -> Obj:
        meta = obj.get("metadata", {})
        names = [n for n in meta.get("finalizers") or [] if n != name]
        return {**obj, "metadata": {**meta, "finalizers": names}} if names else {
            **obj, "metadata": {k: v for k, v in meta.items() if k != "finalizers"}}
    return change


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
