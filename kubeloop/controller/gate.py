"""Which keys this replica may reconcile, when the work is split between replicas (``--shards``).

A controller's ``GatedQueue`` wraps its ``WorkQueue`` with the ``KeyGate`` (the manager's shard member):

- Without a gate every key passes: one replica (or the leader) reconciles everything.
- ``add`` (an event's key): a key this replica does not own is not queued. It is dropped, not retried:
  its owner reconciles it.
- ``run`` (the fence, just before the reconcile): ownership may have moved while the key waited; a key
  it no longer owns is dropped and its backoff forgotten. Keys the controller queues on the
  ``WorkQueue`` itself (resync, its own retries, a held reconcile released) pass this fence too.
- A key's hash is the 64-bit hash of its object's ``metadata.uid``, which never changes, so an object
  changes owner only by a handoff of its slot, never because it was edited. Children follow their
  parent for free: their events queue the parent's key.
- The hash of a key whose object is gone from the cache is the one last seen (``note``), so a deletion
  is reconciled by the replica that owned the object; it is forgotten once the key is neither cached
  nor running.
- While a gated reconcile runs it is listed in ``in_flight`` (key → hash, task): a handoff waits for
  those of the slots it gives away, and cancels them after its timeout. A cancelled reconcile ends
  quietly; the worker that ran it lives on.
- A write through ``ctx.own_write`` (finalizers, status, children) checks ownership again and raises
  ``Fenced`` instead of sending when it no longer holds.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Protocol

from kubeloop.cache import Store
from kubeloop.client.api import Obj
from kubeloop.queue import LOW, WorkQueue

log = logging.getLogger("kubeloop.controller")


class KeyGate(Protocol):
    """What a controller asks of the shard member; the manager sets ``Controller.gate`` to one."""

    def owns(self, h: int) -> bool:
        """Whether this replica may reconcile (and write for) an object of hash ``h`` now."""
        ...

    def hash(self, uid: str) -> int:
        """The hash of an object's uid, the one the API server's ``shardRange`` uses."""
        ...


class Fenced(RuntimeError):
    """A write of a reconcile whose object this replica no longer owns: not sent."""


class GatedQueue:
    """A controller's ``queue`` as this replica sees it through ``gate``; ``store`` is the primary's."""

    def __init__(self, queue: WorkQueue, store: Store) -> None:
        self.queue, self.store = queue, store
        self.gate: KeyGate | None = None
        self.in_flight: dict[str, tuple[int, asyncio.Task[None]]] = {}
        self._hashes: dict[str, int] = {}  # key → hash of its object's uid, kept while the key may run

    def note(self, key: str, obj: Obj) -> None:
        """Remembers the hash of ``obj``, the primary object of ``key`` as an event shows it."""
        if self.gate is not None and (uid := obj.get("metadata", {}).get("uid")):
            self._hashes[key] = self.gate.hash(uid)

    def add(self, key: str, priority: int) -> None:
        """Queues ``key`` unless another replica owns it."""
        if self.gate is None or self.owns(key):
            self.queue.add(key, priority)
        else:
            self._forget_if_gone(key)  # its owner reconciles the deletion

    def owns(self, key: str) -> bool:
        """Whether this replica may reconcile ``key`` now (always, without a gate)."""
        if self.gate is None:
            return True
        h = self.hash_of(key)
        return h is not None and self.gate.owns(h)

    def hash_of(self, key: str) -> int | None:
        """The shard hash of ``key`` (None: never seen, so nothing of it to reconcile)."""
        h = self._hashes.get(key)
        if h is None and self.gate is not None and (obj := self.store.get(key)) is not None:
            h = self._hashes[key] = self.gate.hash(obj["metadata"]["uid"])
        return h

    def owned_keys(self) -> list[str]:
        """The cached keys this replica owns now."""
        return [k for k in self.store.keys() if self.owns(k)]

    def requeue_owned(self) -> int:
        """Queues every cached key this replica owns now (slots were gained); returns how many."""
        keys = self.owned_keys()
        for key in keys:
            self.queue.add(key, LOW)
        return len(keys)

    def run(self, key: str, reconcile: Callable[[str], Awaitable[None]]) -> Awaitable[None]:
        """``reconcile(key)`` if this replica owns ``key`` when awaited, as a task listed in ``in_flight``."""
        if self.gate is None:
            return reconcile(key)  # no fence to pass: not wrapped in one more coroutine (the hot path)
        return self._fenced(key, self.gate, reconcile)

    async def _fenced(self, key: str, gate: KeyGate, reconcile: Callable[[str], Awaitable[None]]) -> None:
        h = self.hash_of(key)
        if h is None or not gate.owns(h):
            self.queue.forget(key)  # its owner reconciles it
            self._forget_if_gone(key)
            return None
        task = asyncio.ensure_future(reconcile(key))
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
            self._forget_if_gone(key)
        return None

    def _forget_if_gone(self, key: str) -> None:
        if self.store.get(key) is None:
            self._hashes.pop(key, None)
