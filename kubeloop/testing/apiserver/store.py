"""Storage: a small MVCC store like etcd behind kube-apiserver.

- One global ``resourceVersion`` counter; every write takes the next number (object and list RVs).
- Each object keeps its versions, so a list at an older RV (``continue`` pages, ``Exact`` lists) sees the
  snapshot it was started at, as the real server does.
- The change log feeds watches from a resourceVersion; ``compact()`` drops everything older (on demand,
  never by itself), after which such a watch or list answers 410 Gone.
- Watchers get (type, old, new) on every change and decide themselves what they show (selectors).
- A kind may be a ``View`` of another's storage (events.k8s.io Events are core Events, as in etcd):
  read and written through it, converted both ways; its changes are the stored kind's.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from kubeloop.client.api import Obj as Obj  # the fake server's modules take it from here

KindKey = tuple[str, str]  # (group, plural)
ObjKey = tuple[str, str]   # (namespace or "", name)


@dataclass(frozen=True)
class View:
    """A kind served from another kind's storage."""

    storage: KindKey
    to_storage: Callable[[Obj], Obj]
    from_storage: Callable[[Obj], Obj]


@dataclass(frozen=True)
class Change:
    rv: int
    type: str  # ADDED, MODIFIED, DELETED
    kind: KindKey
    old: Obj | None
    new: Obj  # for DELETED: the last state, stamped with the deletion's RV


class Store:
    """Objects by kind and key, with history back to the last compaction."""

    def __init__(self, first_rv: int = 1) -> None:
        self.rv = first_rv
        self.compacted = first_rv  # the oldest RV still answerable
        self._versions: dict[KindKey, dict[ObjKey, list[tuple[int, Obj | None]]]] = {}
        self._log: list[Change] = []
        self._watchers: set[Callable[[Change], None]] = set()
        self.views: dict[KindKey, View] = {}

    def seen_as(self, kind: KindKey, change: Change) -> Change | None:
        """``change`` as a watcher of ``kind`` sees it (None: not of that kind)."""
        view = self.views.get(kind)
        if view is None:
            return change if change.kind == kind else None
        if change.kind != view.storage:
            return None
        return Change(change.rv, change.type, kind, None if change.old is None else view.from_storage(change.old),
                      view.from_storage(change.new))

    # --- reads --------------------------------------------------------------------------------------

    def get(self, kind: KindKey, key: ObjKey) -> Obj | None:
        view = self.views.get(kind)
        if view is not None:
            stored = self.get(view.storage, key)
            return None if stored is None else view.from_storage(stored)
        versions = self._versions.get(kind, {}).get(key)
        return versions[-1][1] if versions else None

    def items(self, kind: KindKey, at: int | None = None) -> list[Obj]:
        """Objects of a kind in etcd's key order (the string ``namespace/name``: ``X-x1/a`` sorts before
        ``X/a``, which a continue token relies on), as of RV ``at`` (default now)."""
        view = self.views.get(kind)
        if view is not None:
            return [view.from_storage(o) for o in self.items(view.storage, at)]
        out = []
        for key in sorted(self._versions.get(kind, {}), key=lambda k: f"{k[0]}/{k[1]}"):
            obj = self._at(self._versions[kind][key], at)
            if obj is not None:
                out.append(obj)
        return out

    @staticmethod
    def _at(versions: list[tuple[int, Obj | None]], at: int | None) -> Obj | None:
        if at is None:
            return versions[-1][1]
        found = None
        for rv, obj in versions:
            if rv > at:
                break
            found = obj
        return found

    def changes_since(self, rv: int) -> list[Change]:
        return [c for c in self._log if c.rv > rv]

    # --- writes -------------------------------------------------------------------------------------

    def next_rv(self) -> int:
        self.rv += 1
        return self.rv

    def put(self, kind: KindKey, key: ObjKey, obj: Obj) -> Obj:
        """Stores ``obj`` (ADDED or MODIFIED) under a fresh resourceVersion and tells the watchers."""
        view = self.views.get(kind)
        if view is not None:
            return view.from_storage(self.put(view.storage, key, view.to_storage(obj)))
        old = self.get(kind, key)
        rv = self.next_rv()
        obj["metadata"]["resourceVersion"] = str(rv)
        self._versions.setdefault(kind, {}).setdefault(key, []).append((rv, obj))
        self._emit(Change(rv, "ADDED" if old is None else "MODIFIED", kind, old, obj))
        return obj

    def remove(self, kind: KindKey, key: ObjKey) -> Obj:
        """Deletes an object; the DELETED event carries its last state at the deletion's RV."""
        view = self.views.get(kind)
        if view is not None:
            return view.from_storage(self.remove(view.storage, key))
        old = self.get(kind, key)
        assert old is not None
        rv = self.next_rv()
        last = {**old, "metadata": {**old["metadata"], "resourceVersion": str(rv)}}
        self._versions[kind][key].append((rv, None))
        self._emit(Change(rv, "DELETED", kind, old, last))
        return old

    def drop_kind(self, kind: KindKey) -> None:
        """Forgets every object of a kind at once (a CRD deleted), without events."""
        self._versions.pop(kind, None)

    def compact(self, rv: int | None = None) -> int:
        """Forgets history up to ``rv`` (default: now), as etcd compaction does; returns the new floor."""
        floor = self.rv if rv is None else min(rv, self.rv)
        self.compacted = max(self.compacted, floor)
        self._log = [c for c in self._log if c.rv > self.compacted]
        for objects in self._versions.values():
            for key, versions in list(objects.items()):
                kept = [v for v in versions if v[0] > self.compacted]
                older = [v for v in versions if v[0] <= self.compacted]
                if older and older[-1][1] is not None:
                    kept.insert(0, older[-1])
                if kept:
                    objects[key] = kept
                else:
                    del objects[key]
        return self.compacted

    # --- watchers -----------------------------------------------------------------------------------

    def subscribe(self, callback: Callable[[Change], None]) -> Callable[[], None]:
        self._watchers.add(callback)
        return lambda: self._watchers.discard(callback)

    def _emit(self, change: Change) -> None:
        self._log.append(change)
        for watcher in list(self._watchers):
            watcher(change)
