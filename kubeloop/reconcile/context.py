"""What a reconcile function gets besides its object: the client, the cache and helpers bound to
the object being reconciled."""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import logging
import os
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from typing_extensions import TypeVar as DefaultedTypeVar

from kubeloop.cache import Cache, Informer
from kubeloop.client import Client, NotFound, Resource
from kubeloop.client.api import Obj, ResourceRef
from kubeloop.client.merge import merge_patch
from kubeloop.helpers import conditions
from kubeloop.helpers.events import EventRecorder
from kubeloop.helpers.ownership import set_controller
from kubeloop.reconcile.result import Request

T = TypeVar("T")
D = DefaultedTypeVar("D", default=Any)  # the operator's dependencies (``Operator(deps=...)``)
Change = Callable[[Obj], Obj]  # what a write did to the object: before -> after
# Sends a write to the reconciled object (the awaitable) that makes ``change``; returns its result.
OwnWrite = Callable[[Awaitable[Any], Change], Awaitable[Any]]


async def send(write: Awaitable[Any], change: Change) -> Any:
    """The plain ``OwnWrite``: just sends it (a context outside a controller, or echoes reconciled)."""
    return await write


@dataclass
class Context(Generic[D]):
    """What a reconcile gets besides its object: the client, the shared cache, and helpers bound to
    the object being reconciled (its status, conditions, events and owned children).

    ``raw`` is the object as cached (a dict), also when the reconciler's ``obj`` is a typed model.
    State kept for this object across its reconciles is declared with ``kubeloop.State`` (its storage
    is ``per_object``, dropped when the object is deleted). A context knows only what it uses of its
    controller: the field manager, the owned kinds and their informers, and ``own_write``, which sends
    its writes to the object so that the controller knows their echoes.

    ``deps`` is the operator's dependency object, built once per run before the first reconcile by the
    factory given to ``Operator(deps=...)`` (None without one); ``Context[MyDeps]`` types it.
    """

    client: Client
    cache: Cache
    request: Request
    resource: Resource
    events: EventRecorder
    log: logging.Logger
    raw: Obj  # the object as cached (a dict); the reconcile's ``obj`` may be its typed model
    reconcile_id: str = ""
    field_manager: str = ""  # the server-side apply field manager of this controller's writes
    owns: tuple[ResourceRef, ...] = ()  # the kinds the controller owns, as declared
    owned_informers: Mapping[Resource, Informer] = field(default_factory=dict)
    per_object: dict[Any, Any] = field(default_factory=dict)  # behind ``State.of``; kept across reconciles
    own_write: OwnWrite = send
    # The cache's current version of the object (typed like the handler's obj, and as a dict); None: gone.
    reader: Callable[[], tuple[Any, Obj] | None] | None = field(default=None, repr=False)
    deps: D = field(default=None, repr=False)  # type: ignore[assignment]  # None only without a factory

    @property
    def name(self) -> str:
        """The reconciled object's name."""
        return self.request.name

    @property
    def namespace(self) -> str | None:
        """The reconciled object's namespace (None if cluster-scoped)."""
        return self.request.namespace

    def current(self) -> Any:
        """The object as the cache holds it now (a model or a dict, as the handler's ``obj``), None once it
        is gone; ``raw`` becomes that version too, so ``patch_status`` and ``condition`` compare with it.
        For code that runs long, such as a daemon, whose ``obj`` is the object as it was when it started."""
        if self.reader is None:
            raise RuntimeError("ctx.current() needs a context made by a controller (this one has no cache reader)")
        now = self.reader()
        if now is None:
            return None
        typed, self.raw = now
        return typed

    # --- status ------------------------------------------------------------------------------------

    async def patch_status(self, status: dict[str, Any], *, guarded: bool = False) -> Obj:
        """Merge-patches ``status`` on the object's status subresource; skipped when nothing changes,
        so a steady-state reconcile writes nothing. ``guarded``: only if the object is still the version
        this reconcile read (else 409 Conflict, retried on a fresher cache) — for status computed from
        the old one, such as counters, which a stale cache must never apply twice."""
        current = self.raw.get("status") or {}
        if all(current.get(k) == v for k, v in status.items()):
            return self.raw
        body: dict[str, Any] = {"status": status}
        if guarded:
            body["metadata"] = {"resourceVersion": self.raw["metadata"]["resourceVersion"]}
        written: Obj = await self.own_write(
            self.client.patch(self.resource, self.request.name, body, self.request.namespace,
                              subresource="status"),
            lambda obj: merge_patch(obj, {"status": status}))
        return written

    def condition(self, type: str, status: bool | str, reason: str, message: str = "",
                  conditions_list: list[dict[str, Any]] | None = None) -> list[dict[str, Any]]:
        """The object's conditions with one set (observedGeneration filled in); pass the result to
        ``patch_status``."""
        base = conditions_list if conditions_list is not None else (self.raw.get("status") or {}).get(
            "conditions")
        return conditions.set_condition(base, type, status, reason, message,
                                        self.raw.get("metadata", {}).get("generation"))

    # --- events ------------------------------------------------------------------------------------

    async def event(self, type: str, reason: str, note: str, regarding: Obj | None = None) -> None:
        """Records an Event (``type`` "Normal" or "Warning") on this object, or on ``regarding``;
        repeats of the same event are counted on one Event object instead of creating more. It is
        queued and sent in the background, in order, as client-go's recorder does: the reconcile does
        not wait for the API server's answer."""
        self.events.record(regarding or self.raw, type, reason, note)

    # --- children ----------------------------------------------------------------------------------

    def owned(self, ref: ResourceRef) -> list[Obj]:
        """Children of this object (by controller ownerReference UID) from the cache."""
        informer = self._owned_informer(ref)
        return informer.store.by_index("controller", self.raw["metadata"]["uid"])

    async def apply(self, child: Obj, *, own: bool = True, force: bool = True) -> Obj:
        """Server-side applies a child with this controller's field manager, owned by this object."""
        child.setdefault("metadata", {})
        if own:
            set_controller(child, self.raw)
            if self.resource.namespaced:
                child["metadata"].setdefault("namespace", self.request.namespace)
        return await self.client.apply(child, field_manager=self.field_manager, force=force)

    async def apply_children(self, desired: list[Obj], kinds: list[ResourceRef] | None = None) -> list[Obj]:
        """Declarative children: applies ``desired`` and deletes owned children of the given kinds
        (default: every kind the controller owns) that are no longer desired."""
        applied = [await self.apply(c) for c in desired]
        wanted = {(c["kind"], c["metadata"].get("namespace"), c["metadata"]["name"]) for c in applied}
        for ref in kinds if kinds is not None else self.owns:
            res = await self.client.resource(ref)
            for child in self.owned(res):
                meta = child["metadata"]
                if (child.get("kind", res.kind), meta.get("namespace"), meta["name"]) not in wanted:
                    try:
                        await self.client.delete(res, meta["name"], meta.get("namespace"), uid=meta["uid"],
                                                 propagation_policy="Background")
                        self.log.info("pruned %s %s", res.kind, meta["name"])
                    except NotFound:
                        pass
        return applied

    # --- work off the loop ---------------------------------------------------------------------------

    async def run_in_thread(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
        """Runs ``fn(*args, **kwargs)`` in a worker thread and returns its result; meanwhile the event
        loop serves other reconciles, watches and webhooks. What it buys depends on ``fn``:

        - blocking calls (a synchronous library's I/O) and C code that releases the GIL (hashlib, zlib,
          orjson of large bodies, google-re2, numpy): real parallelism;
        - pure-Python computation: *responsiveness*, not speed. The thread holds the GIL and hands it
          over every ``sys.getswitchinterval()`` (5 ms), so the loop still runs, each of its wake-ups
          a few ms later, and the CPU time is the same. For parallel speed use ``run_in_process``.

        ``fn`` runs outside the loop: it may read the objects it is given but must not change cached
        objects in place, call the async client or touch ``ctx``."""
        return await asyncio.to_thread(fn, *args, **kwargs)

    async def run_in_process(self, fn: Callable[..., T], /, *args: Any) -> T:
        """Runs ``fn(*args)`` in a worker process (a pool of ``os.cpu_count()`` processes shared by the
        operator, started on first use with the ``spawn`` method, so no lock of this process's threads
        is inherited) and returns its result: pure-Python computation in parallel, free of the GIL.
        ``fn`` must be a module-level function; it, its arguments and its result are pickled, so pass
        plain data (the dicts of ``obj``), not ``ctx`` or a client. Starting a process costs ~0.1 s
        once; each call costs the pickling of its data."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(_process_pool(), functools.partial(fn, *args))

    def _owned_informer(self, ref: ResourceRef) -> Informer:
        """The informer of an owned kind (``KeyError`` naming the fix if ``ref`` is not owned)."""
        for res, informer in self.owned_informers.items():
            if ref == res or ref in (res.kind, res.plural, res.group_resource) or (
                    hasattr(ref, "resource") and ref.resource() == res):
                return informer
        raise KeyError(f"the controller of {self.resource.kind} does not own {ref}; add it to owns=[...]")


def close_process_pool() -> None:
    """Stops the processes of ``run_in_process``, if any were started (the manager does it on stop)."""
    if _process_pool.cache_info().currsize:
        _process_pool().shutdown(cancel_futures=True)
        _process_pool.cache_clear()


@functools.cache
def _process_pool() -> concurrent.futures.ProcessPoolExecutor:
    """The operator's one process pool, started on first use."""
    import multiprocessing  # here: most operators never start a process

    return concurrent.futures.ProcessPoolExecutor(os.cpu_count() or 1, mp_context=multiprocessing.get_context("spawn"))
