"""Which keys this replica may reconcile, when the work is split between replicas (``--shards``).

- The controller asks a ``KeyGate`` (the manager's shard member) twice per key: when an event would
  queue it (a key it does not own is not queued) and again just before the reconcile starts (the
  fence: ownership may have moved while the key waited). A key it does not own is dropped, not retried:
  its owner reconciles it.
- A key's hash is the 64-bit hash of its object's ``metadata.uid``, which never changes, so an object
  changes owner only by a handoff of its slot, never because it was edited. Children follow their
  parent for free: their events queue the parent's key.
- The hash of a key whose object is gone from the cache is the one last seen, so a deletion is
  reconciled by the replica that owned the object.
- While a gated reconcile runs it is listed in ``Controller.in_flight`` (key → hash, task): a handoff
  waits for those of the slots it gives away, and cancels them after its timeout.
- A write through ``ctx.own_write`` (finalizers, status, children) checks ownership again and raises
  ``Fenced`` instead of sending when it no longer holds.
"""

from __future__ import annotations

from typing import Protocol


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
