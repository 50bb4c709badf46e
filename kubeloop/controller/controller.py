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
from collections.abc import Awaitable
from dataclasses import dataclass
from typing import Any, TypeGuard

from kubeloop import clock, metrics
from kubeloop.cache import Cache, Event, Informer
from kubeloop.client import Client, Conflict, Forbidden, NotFound, Resource, is_transient
from kubeloop.client.api import Obj
from kubeloop.controller import handler
from kubeloop.controller.daemons import Daemons
from kubeloop.controller.echo import OwnWrites
from kubeloop.controller.gate import Fenced, GatedQueue, KeyGate
from kubeloop.controller.giveup import GaveUp, clear_stalled, stalled_here
from kubeloop.controller.predicates import passes
from kubeloop.controller.spec import ControllerSpec, Watch
from kubeloop.helpers import finalizers
from kubeloop.helpers.events import EventRecorder
from kubeloop.metrics import loop as loop_lag
from kubeloop.queue import HIGH, LOW, ShutDown, WorkQueue
from kubeloop.queue.workqueue import ExponentialBackoff
from kubeloop.reconcile import cooperative, logs
from kubeloop.reconcile.context import Change, Context, OwnWrite, send
from kubeloop.reconcile.result import GIVE_UP, PermanentError, Request, Result

log = logging.getLogger("kubeloop.controller")

__all__ = ["Controller", "Wiring"]


class Controller:
    """Reconciles one resource as its ``ControllerSpec`` says: its informer and those of owned and
    watched kinds feed keys (``handler.py``) into a de-duplicating ``WorkQueue``, through the shard gate
    when replicas share the work (``gate.py``); ``concurrency`` workers call ``reconcile`` (never twice
    at once for one key), send failures through ``error_policy`` and backoff, and run ``cleanup`` under
    ``finalizer``.

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
        self.gated = GatedQueue(self.queue, self.informer.store)  # the queue as this replica's shard sees it
        self.in_flight = self.gated.in_flight  # gated reconciles running now (see gate.py)
        self.own_writes = OwnWrites()
        self._tasks: list[asyncio.Task[None]] = []
        self._per_object: dict[str, dict[Any, Any]] = {}
        # Consecutive failed reconciles per key, whatever delay the error policy chose (the queue's
        # backoff counts only the retries it schedules itself); gone on the key's next success.
        self._failures: dict[str, int] = {}
        self.gave_up = GaveUp()  # keys left alone until their object changes (see giveup.py)
        self.daemons = Daemons(self.name, spec.daemons, self._daemon_args)  # this run's, stopped with it
        self._active = 0
        self.deps: Any = None  # the operator's dependencies (ctx.deps), set by the manager before it starts
        # Bound metric children: labels() lookups on every reconcile showed up in CPU profiles (the
        # work queue binds its children the same way); outcomes are bound on first use. The gauge is
        # read at scrape time instead of being set twice per reconcile.
        metrics.active_workers.labels(self.name).set_function(lambda: self._active)
        self._m_time = metrics.reconcile_time.labels(self.name)
        self._m_total: dict[str, Any] = {}
        metrics.max_concurrent_reconciles.labels(self.name).set(spec.concurrency)
        self.informer.subscribe(self._on_primary)
        owners = handler.OwnerKeys(self.primary, self.informer.store)
        for informer in self._owned.values():
            informer.subscribe(handler.for_owner(owners, self.gated.add))
        for watch, informer in wiring.watched:
            informer.subscribe(handler.for_watch(watch, owners, self.gated.add))

    @classmethod
    async def build(cls, spec: ControllerSpec, client: Client, cache: Cache,
                    events: EventRecorder) -> Controller:
        """Creates (or joins) the spec's informers on ``cache`` and the controller on them."""
        return cls(spec, client, cache, events, await Wiring.of(spec, cache))

    @property
    def gate(self) -> KeyGate | None:
        """Which keys this replica may reconcile: None (all of them) unless the manager sets its shard
        member here, when replicas share the work (gate.py)."""
        return self.gated.gate

    @gate.setter
    def gate(self, gate: KeyGate | None) -> None:
        self.gated.gate = gate

    def _on_primary(self, event: Event) -> None:
        """The primary informer's subscriber (server-side sharding recognises it by this name)."""
        key = handler.key_of(event.object)
        self.gated.note(key, event.object)
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
        self.gated.add(key, handler.priority(event))

    def owns_key(self, key: str) -> bool:
        """Whether this replica may reconcile ``key`` now (always, without a gate)."""
        return self.gated.owns(key)

    def key_hash(self, key: str) -> int | None:
        """The shard hash of ``key`` (None: never seen, so nothing of it to reconcile)."""
        return self.gated.hash_of(key)

    def owned_keys(self) -> list[str]:
        """The cached keys this replica owns now."""
        return self.gated.owned_keys()

    def requeue_owned(self) -> int:
        """Queues every cached key this replica owns now (slots were gained); returns how many."""
        return self.gated.requeue_owned()

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
            meter = cooperative.Meter()  # what its cooperative computations took: the queue's cool-down
            metered = cooperative.metered.set(meter)
            try:
                await self.process(str(key))
            finally:
                cooperative.metered.reset(metered)
                self._active -= 1
                self.queue.done(key, meter.seconds)

    async def process(self, key: str) -> None:
        """One reconcile of ``key``; with a gate, only if this replica owns it, and as a task a handoff
        can wait for or cancel (``in_flight``)."""
        await self.gated.run(key, self._reconcile_handler)

    async def _reconcile_handler(self, key: str) -> None:
        """Reconcile ``key``, then queue it as the result or the error says, with metrics and the
        logging context; none while the cache lacks this controller's last write to the object (its
        echo brings the key back)."""
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
            if (stalled := self._succeeded(key)) is not None:
                await clear_stalled(self.client, self.primary, stalled)
            outcome = self._requeue(key, result)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # every failure goes through the error policy, never kills a worker
            if self._deleted_meanwhile(exc, request):
                self._ignore_deleted(key, exc)
            else:
                outcome = "error"
                await self._failed(key, request, exc)
        finally:
            self._observe(outcome, started)
            logs.current.reset(token)
            loop_lag.holding.pop(task, None)

    def _succeeded(self, key: str) -> Obj | None:
        """A reconcile of ``key`` succeeded: its failures are over, and so is a give-up, even a past
        run's; returns the object if its ``Stalled`` condition is to be cleared."""
        self._failures.pop(key, None)
        raw = self.informer.store.get(key)
        return raw if raw is not None and stalled_here(raw) and key not in self.gave_up else None

    def _requeue(self, key: str, result: Result | None) -> str:
        """Queues ``key`` again as the reconcile's ``result`` asks; returns the outcome's metric label."""
        if result is not None and result.requeue_after:
            self.queue.forget(key)
            self.queue.add_after(key, result.requeue_after)
            return "requeue_after"
        if result is not None and result.requeue:
            self.queue.add_rate_limited(key)
            return "requeue"
        self.queue.forget(key)
        return "success"

    def _ignore_deleted(self, key: str, exc: NotFound) -> None:
        """controller-runtime's IgnoreNotFound: not a failure; its deletion event reconciles it."""
        log.info("the object was deleted during its reconcile: %s", exc.message)
        self.queue.forget(key)
        self._failures.pop(key, None)

    async def _failed(self, key: str, request: Request, exc: Exception) -> None:
        """A failed reconcile: logged, and retried when the error policy says (or given up)."""
        metrics.reconcile_errors.labels(self.name).inc()
        failures = self._failures[key] = self._failures.get(key, 0) + 1
        delay = GIVE_UP if isinstance(exc, PermanentError) else self.spec.error_policy(exc, request, failures)
        _log_failure(exc)
        if delay is None:
            self.queue.add_rate_limited(key, transient=is_transient(exc))
        elif delay == GIVE_UP:
            await self._give_up(key, exc, failures)
        elif delay > 0:
            self.queue.add_after(key, delay)

    def _observe(self, outcome: str, started: float) -> None:
        total = self._m_total.get(outcome)
        if total is None:
            total = self._m_total[outcome] = metrics.reconcile_total.labels(self.name, outcome)
        total.inc()
        self._m_time.observe(clock.monotonic() - started)

    def _deleted_meanwhile(self, exc: Exception, request: Request) -> TypeGuard[NotFound]:
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


def _log_failure(exc: Exception) -> None:
    if isinstance(exc, Conflict):
        log.info("conflict, will retry: %s", exc.message)
    elif isinstance(exc, Forbidden):  # a permission or a policy, not a bug: no traceback, say what to do
        log.error("reconcile failed: %s; %s", exc.message,
                  f"{exc.advice}; retrying with backoff" if exc.advice else "retrying with backoff")
    else:
        log.error("reconcile failed: %s", exc, exc_info=False if isinstance(exc, NotFound | PermanentError) else exc)
