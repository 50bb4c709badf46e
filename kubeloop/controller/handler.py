"""From cache events to the keys of primary objects: what wakes which reconcile.

- Called synchronously by the informers (the cache never awaits a subscriber): every function here is
  pure and fast, with no I/O, and so must be the mappers and predicates it calls.
- The primary's own event wakes the object's own key (``key_of``); the controller passes it through the
  echo of its own writes and its predicates first (``Controller._on_primary``).
- An owned child (``owns``) wakes the primary its *controller* ownerReference names, if that reference
  is of the primary's kind and group: found by uid in the primary store when cached there, else by the
  reference's name (in the child's namespace for a namespaced primary). Both the object and, on an
  update, the object before count, so a child that changed owner wakes both.
- A watched kind (``Watch``) wakes the keys its ``mapper`` returns for the object and for the object
  before (keys, ``Request``\\ s or objects), or with no mapper, the owner as for an owned child; events
  that fail the watch's ``predicates`` wake nothing.
- Priority: the objects of an informer's first list are a backlog (``LOW``); every later change is
  fresh (``HIGH``) and goes first.
"""

from __future__ import annotations

from collections.abc import Callable

from kubeloop.cache import Event, Store
from kubeloop.client import Resource
from kubeloop.client.api import Obj
from kubeloop.controller.predicates import passes
from kubeloop.controller.spec import Mapper, Watch
from kubeloop.queue import HIGH, LOW
from kubeloop.reconcile.result import Request

Handler = Callable[[Event], None]
Enqueue = Callable[[str, int], None]  # (key, priority): where a handler's keys go


def key_of(obj: Obj) -> str:
    """``namespace/name`` of a namespaced object, ``name`` of a cluster-scoped one."""
    meta = obj.get("metadata", {})
    ns = meta.get("namespace")
    return f"{ns}/{meta['name']}" if ns else meta["name"]


def as_key(value: str | Request | Obj) -> str:
    """What a mapper returned for one primary (a key, a ``Request`` or an object) as its key."""
    if isinstance(value, str):
        return value
    if isinstance(value, Request):
        return value.key
    return key_of(value)


def priority(event: Event) -> int:
    """``LOW`` for the startup backlog (an informer's first list), ``HIGH`` for a change."""
    return LOW if event.initial else HIGH


class OwnerKeys:
    """The key of the primary that controls a child, by the child's controller ownerReference."""

    def __init__(self, primary: Resource, store: Store) -> None:
        self.primary, self.store = primary, store

    def key(self, child: Obj) -> str | None:
        """The controlling primary's key; None if no controller reference names the primary's kind."""
        primary = self.primary
        for ref in child.get("metadata", {}).get("ownerReferences") or ():
            if not ref.get("controller") or ref.get("kind") != primary.kind:
                continue
            if ref.get("apiVersion", "").rpartition("/")[0] != primary.group:
                continue
            owners = self.store.index_keys("uid", ref["uid"])
            if owners:
                return owners[0]
            ns = child["metadata"].get("namespace") if primary.namespaced else None
            return f"{ns}/{ref['name']}" if ns else ref["name"]
        return None

    def keys(self, child: Obj) -> list[str]:
        """``key`` as a list of zero or one keys (a mapper's shape)."""
        key = self.key(child)
        return [key] if key else []


def for_owner(owners: OwnerKeys, enqueue: Enqueue) -> Handler:
    """The subscriber of an owned kind's informer: each event wakes the primary controlling the child."""
    def handle(event: Event) -> None:
        for obj in (event.object, event.old):
            key = owners.key(obj) if obj else None
            if key:
                enqueue(key, priority(event))
    return handle


def for_watch(watch: Watch, owners: OwnerKeys, enqueue: Enqueue) -> Handler:
    """The subscriber of a watched kind's informer: the events that pass the watch's predicates wake
    the keys its mapper returns (by default the controlling primary's)."""
    mapper: Mapper = owners.keys if watch.mapper is None else watch.mapper

    def handle(event: Event) -> None:
        if watch.predicates and not passes(watch.predicates, event):
            return
        objs = [event.object] if event.old is None else [event.object, event.old]
        for obj in objs:
            for key in mapper(obj):
                enqueue(as_key(key), priority(event))
    return handle
