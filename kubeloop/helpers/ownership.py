"""Owner references: the controller reference that lets the garbage collector and our own
triggers tie a child to its parent.

A reference with ``blockOwnerDeletion: true`` (what these helpers write) needs ``update`` on the owner's
``finalizers`` subresource wherever the API server runs the admission plugin
OwnerReferencesPermissionEnforcement (OpenShift, hardened distributions, ``kubeloop cluster up``): the
generated RBAC has it for every kind reconciled with ``owns=``; an operator that sets references by hand on
other children declares the owner's kind with ``op.owner_references_to(Owner)``, and the generated RBAC
(``kubeloop generate rbac``) then has it too."""

from __future__ import annotations

from typing import Any

from kubeloop.client.api import Obj


def controller_reference(owner: Obj, *, block_owner_deletion: bool = True) -> dict[str, Any]:
    """An ownerReference to ``owner`` with ``controller: true``: garbage collection deletes the
    child with its owner (``blockOwnerDeletion`` holds a foreground deletion of the owner until then).
    """
    meta = owner["metadata"]
    return {"apiVersion": owner["apiVersion"], "kind": owner["kind"], "name": meta["name"],
            "uid": meta["uid"], "controller": True, "blockOwnerDeletion": block_owner_deletion}


def controller_of(obj: Obj) -> dict[str, Any] | None:
    """The ownerReference of ``obj`` that has ``controller: true``, or None."""
    refs: list[dict[str, Any]] = obj.get("metadata", {}).get("ownerReferences") or []
    for ref in refs:
        if ref.get("controller"):
            return ref
    return None


def is_controlled_by(obj: Obj, owner: Obj) -> bool:
    """Whether ``owner`` (by UID) is the controller of ``obj``."""
    ref = controller_of(obj)
    return bool(ref and ref.get("uid") == owner["metadata"]["uid"])


def set_controller(child: Obj, owner: Obj) -> Obj:
    """Sets ``owner`` as the child's controller (in place); refuses to steal a child that another
    object controls."""
    current = controller_of(child)
    if current and current.get("uid") != owner["metadata"]["uid"]:
        raise ValueError(f"{child['kind']} {child['metadata'].get('name')} is already controlled by "
                         f"{current['kind']} {current['name']}")
    refs = [r for r in child.setdefault("metadata", {}).get("ownerReferences") or ()
            if r.get("uid") != owner["metadata"]["uid"]]
    refs.append(controller_reference(owner))
    child["metadata"]["ownerReferences"] = refs
    return child


def adoption_patch(child: Obj, owner: Obj) -> list[dict[str, Any]]:
    """A JSON patch that adopts an orphan, guarded by its resourceVersion so that a concurrent change
    (someone else adopting it) makes the patch fail with 409 rather than overwrite."""
    meta = child["metadata"]
    ops: list[dict[str, Any]] = [{"op": "test", "path": "/metadata/resourceVersion",
                                  "value": meta["resourceVersion"]}]
    if meta.get("ownerReferences"):
        ops.append({"op": "add", "path": "/metadata/ownerReferences/-", "value": controller_reference(owner)})
    else:
        ops.append({"op": "add", "path": "/metadata/ownerReferences", "value": [controller_reference(owner)]})
    return ops
