"""Finalizers, small and explicit: add one before the first side effect, remove it after cleanup.

Both edits are JSON patches guarded by a ``test`` op, so they never clobber finalizers that other
controllers add or remove at the same time (a merge patch would replace the whole list).
"""

from __future__ import annotations

from typing import Any

from kubeloop.client import Client, Resource

Obj = dict[str, Any]


def has_finalizer(obj: Obj, name: str) -> bool:
    return name in (obj.get("metadata", {}).get("finalizers") or ())


def is_deleting(obj: Obj) -> bool:
    return bool(obj.get("metadata", {}).get("deletionTimestamp"))


async def add_finalizer(client: Client, resource: Resource, obj: Obj, name: str) -> Obj:
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
    return await client.patch(resource, meta["name"], ops, meta.get("namespace"), type="json")


async def remove_finalizer(client: Client, resource: Resource, obj: Obj, name: str) -> Obj | None:
    meta = obj["metadata"]
    current = list(meta.get("finalizers") or ())
    if name not in current:
        return obj
    index = current.index(name)
    ops = [{"op": "test", "path": f"/metadata/finalizers/{index}", "value": name},
           {"op": "remove", "path": f"/metadata/finalizers/{index}"}]
    return await client.patch(resource, meta["name"], ops, meta.get("namespace"), type="json")
