"""Finalizers, small and explicit: add one before the first side effect, remove it after cleanup.

Both edits are JSON patches guarded by a ``test`` op, so they never clobber finalizers that other
controllers add or remove at the same time (a merge patch would replace the whole list).
"""

from __future__ import annotations

from typing import Any

from kubeloop.client import Client, Conflict, Invalid, Resource
from kubeloop.client.api import Obj


def has_finalizer(obj: Obj, name: str) -> bool:
    """Whether ``obj`` carries the finalizer ``name``."""
    return name in (obj.get("metadata", {}).get("finalizers") or ())


def is_deleting(obj: Obj) -> bool:
    """Whether ``obj`` is being deleted (it has a ``deletionTimestamp``; finalizers hold it)."""
    return bool(obj.get("metadata", {}).get("deletionTimestamp"))


async def add_finalizer(client: Client, resource: Resource, obj: Obj, name: str) -> Obj:
    """Adds finalizer ``name`` to ``obj`` (no request if it is there); 409 Conflict if the
    finalizers changed since ``obj`` was read.
    """
    meta = obj["metadata"]
    current = meta.get("finalizers")
    if current and name in current:
        return obj
    if current:
        ops: list[dict[str, Any]] = [{"op": "test", "path": "/metadata/finalizers", "value": current},
                                     {"op": "add", "path": "/metadata/finalizers/-", "value": name}]
    else:
        ops = [{"op": "test", "path": "/metadata/resourceVersion", "value": meta["resourceVersion"]},
               {"op": "add", "path": "/metadata/finalizers", "value": [name]}]
    return await _guarded_patch(client, resource, meta, ops)


async def remove_finalizer(client: Client, resource: Resource, obj: Obj, name: str) -> Obj | None:
    """Removes finalizer ``name`` from ``obj``, leaving other controllers' finalizers alone; 409
    Conflict if the finalizers changed since ``obj`` was read.
    """
    meta = obj["metadata"]
    current = list(meta.get("finalizers") or ())
    if name not in current:
        return obj
    index = current.index(name)
    ops = [{"op": "test", "path": f"/metadata/finalizers/{index}", "value": name},
           {"op": "remove", "path": f"/metadata/finalizers/{index}"}]
    return await _guarded_patch(client, resource, meta, ops)


async def _guarded_patch(client: Client, resource: Resource, meta: Obj, ops: list[dict[str, Any]]) -> Obj:
    """A failed ``test`` op comes back as a bare 422 Invalid: the object changed since our (cached) read.
    That is a conflict — retried from a fresher cache — not a bad request."""
    try:
        return await client.patch(resource, meta["name"], ops, meta.get("namespace"), type="json")
    except Invalid as exc:
        raise Conflict(409, "Conflict", f"finalizers of {meta['name']} changed since they were read "
                                        "(stale cache); retrying", exc.body) from exc
