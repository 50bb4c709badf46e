"""A controller's own writes to its objects, so that their echoes need not wake it.

A write through the ``Context`` (``patch_status``, the finalizer added before the first reconcile or
removed after cleanup) comes back as a watch event. Reconciling on it would only find nothing to do;
skipping it naively is wrong, though: a reconcile that runs before the echo reaches the cache works off
an object without that write (docs/PERFORMANCE.md, "the echo reconcile"). So both halves go together:

- While a write is in flight, the object's events wait (``stash``): when it returns, its echo among
  them (same resourceVersion, change exactly ``change(old)``) is dropped, the others go on as usual.
- A write whose echo has not come yet is recorded with the resourceVersion it produced and what it
  changed (``change``: the object before → the object after).
- While a key has a recorded write the cache does not show yet, its reconciles wait (``hold``), for at
  most ``ECHO_WAIT`` seconds: a reconcile never runs on a cache that lacks this controller's last write.
- The event with the recorded resourceVersion whose change is exactly ``change(old)`` is the echo: it is
  dropped, unless a reconcile waited for it, which it then releases. Anything else about the object
  (another writer's change, a relist that jumped over the echo) wakes the key as usual.
- A deletion forgets the key's writes.

Writes to other objects (children applied with ``ctx.apply``) are not recorded: the server fills in
their defaults and other controllers their status, which the reconcile wants to see.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from kubeloop import clock
from kubeloop.cache import Event
from kubeloop.client.api import Obj

Change = Callable[[Obj], Obj]
Verdict = Literal["echo", "release", "event"]
# An echo normally arrives within milliseconds; this bounds a wait if it never comes as such (the
# object was overwritten and a relist jumped over it). Long enough for a watch that lags under load.
ECHO_WAIT = 30.0
_VOLATILE = ("resourceVersion", "managedFields")  # what the server changes besides our write


@dataclass
class _Write:
    version: str
    change: Change


@dataclass
class _Flight:
    writes: int = 0  # in flight for this key (a reconcile's and a daemon's may overlap)
    events: list[Event] = field(default_factory=list)  # seen meanwhile, judged when a write returns


@dataclass
class _Pending:
    writes: list[_Write] = field(default_factory=list)
    since: float = 0.0
    waiting: bool = False  # a reconcile was held back for these writes


class OwnWrites:
    """The writes of one controller whose echoes are still to come, by key."""

    def __init__(self, wait: float = ECHO_WAIT) -> None:
        self.wait = wait
        self._pending: dict[str, _Pending] = {}
        self._flying: dict[str, _Flight] = {}

    def begin(self, key: str) -> None:
        """A write to ``key`` is about to be sent: its events wait for ``end``."""
        self._flying.setdefault(key, _Flight()).writes += 1

    def stash(self, key: str, event: Event) -> bool:
        """Keeps ``event`` until the write in flight for ``key`` returns; False if there is none."""
        flight = self._flying.get(key)
        if flight is None:
            return False
        flight.events.append(event)
        return True

    def end(self, key: str, written: Any, change: Change, cached: Obj | None) -> list[Event]:
        """The write returned ``written`` (None if it failed); ``cached`` is the object in the cache
        now. Returns the events that waited and are not its echo, to be handled as usual."""
        flight = self._flying[key]
        flight.writes -= 1
        version = _version(written)
        echo = next((e for e in flight.events if version and _is_echo(e, version, change)), None)
        if echo is not None:
            flight.events.remove(echo)
        elif version:
            self.record(key, version, change, cached)
        if flight.writes:
            return []  # another write is in flight: its echo may be among them
        del self._flying[key]
        return flight.events

    def record(self, key: str, version: str, change: Change, cached: Obj | None) -> None:
        """A write to ``key`` produced ``version``, whose echo is still to come."""
        if cached is None or _shows(cached, change):
            return  # a no-op write (the cache had it all already), or the object is gone
        pending = self._pending.setdefault(key, _Pending())
        if not pending.writes:
            pending.since = clock.monotonic()
        pending.writes.append(_Write(version, change))

    def hold(self, key: str) -> bool:
        """Should a reconcile of ``key`` wait for an echo now? If so, the echo (or the time limit)
        releases it."""
        pending = self._pending.get(key)
        if pending is None:
            return False
        if clock.monotonic() - pending.since >= self.wait:
            del self._pending[key]
            return False
        pending.waiting = True
        return True

    def on_event(self, key: str, kind: str, obj: Obj, old: Obj | None) -> Verdict:
        """What an event of the primary object means for ``key``: "echo" (drop it), "release" (queue the
        key whatever the predicates say: a held reconcile may run now) or "event" (as usual)."""
        pending = self._pending.get(key)
        if pending is None:
            return "event"
        if kind == "deleted":
            del self._pending[key]
            return "event"
        version = obj.get("metadata", {}).get("resourceVersion")
        echo = False
        for i, write in enumerate(pending.writes):
            if write.version == version:
                echo = old is not None and _same(write.change(old), obj)
                del pending.writes[:i + 1]  # the server applied the earlier ones first
                break
        else:  # someone else's change, or a relist: forget the writes it already shows
            pending.writes = [w for w in pending.writes if not _shows(obj, w.change)]
        if pending.writes:
            return "echo" if echo else "event"  # a held reconcile waits for the rest of our echoes
        del self._pending[key]
        return "release" if pending.waiting else "echo" if echo else "event"

    def expired(self) -> list[str]:
        """Keys whose reconcile waited ``wait`` seconds for an echo that did not come: to be queued
        again (the writes of keys nobody waits for are just forgotten)."""
        now = clock.monotonic()
        late = [k for k, p in self._pending.items() if now - p.since >= self.wait]
        return [k for k in late if self._pending.pop(k).waiting]

    def __contains__(self, key: str) -> bool:
        return key in self._pending


def _version(written: Any) -> str | None:
    if not isinstance(written, dict):
        return None
    version = written.get("metadata", {}).get("resourceVersion")
    return str(version) if version else None


def _is_echo(event: Event, version: str, change: Change) -> bool:
    return (event.type == "modified" and event.old is not None
            and event.object.get("metadata", {}).get("resourceVersion") == version
            and _same(change(event.old), event.object))


def _shows(obj: Obj, change: Change) -> bool:
    """Does ``obj`` already have what the write changed (applying it again changes nothing)?"""
    return _same(change(obj), obj)


def _same(a: Obj, b: Obj) -> bool:
    """``a == b`` but for the metadata fields the server changes on every write (``_VOLATILE``); an
    absent metadata counts as empty. Compared in place: copying both objects without those fields
    (twice per write) cost more than the comparison."""
    if len(a) - ("metadata" in a) != len(b) - ("metadata" in b):
        return False
    for key, value in a.items():
        if key != "metadata" and (key not in b or b[key] != value):
            return False
    return _same_meta(a.get("metadata", {}), b.get("metadata", {}))


def _same_meta(a: Obj, b: Obj) -> bool:
    kept = 0
    for key, value in a.items():
        if key in _VOLATILE:
            continue
        if key not in b or b[key] != value:
            return False
        kept += 1
    return kept == len(b) - sum(key in b for key in _VOLATILE)
