"""How FakeClient applies requests as the API server does: selectors, preconditions, what a write may
change, and merge and JSON patches. Pure functions on plain dicts (see fakeclient.py for what is not
modelled)."""

from __future__ import annotations

import copy
import datetime as dt
from collections.abc import Callable
from typing import Any

from kubeloop.client.api import Obj, PatchType
from kubeloop.client.errors import Conflict, Invalid
from kubeloop.client.merge import merge_patch
from kubeloop.client.resource import Resource
from kubeloop.helpers import selectors


def matcher(namespace: str | None, label_selector: str | None,
            field_selector: str | None) -> Callable[[Obj], bool]:
    """Whether an object is in ``namespace`` (None: any) and matches both selectors."""
    requirements = selectors.parse(label_selector)
    fields = field_requirements(field_selector)

    def match(obj: Obj) -> bool:
        meta = obj.get("metadata") or {}
        if namespace and meta.get("namespace") != namespace:
            return False
        if not selectors.matches(requirements, meta.get("labels")):
            return False
        return all((meta.get(key) == value) == equal for key, equal, value in fields)
    return match


def field_requirements(selector: str | None) -> list[tuple[str, bool, str]]:
    """(metadata field, equal?, value) of each term; fields other than name and namespace are refused."""
    out = []
    for part in filter(None, (selector or "").split(",")):
        equal = "!=" not in part
        key, _, value = part.replace("!=", "=").replace("==", "=").partition("=")
        if key.strip() not in ("metadata.name", "metadata.namespace"):
            raise NotImplementedError(f"FakeClient: field selector {part!r}: only metadata.name and "
                                      "metadata.namespace are modelled")
        out.append((key.strip().removeprefix("metadata."), equal, value.strip()))
    return out


def only_status(subresource: str | None) -> None:
    """Refuses subresources the fake does not model (everything but ``status``)."""
    if subresource not in (None, "status"):
        raise NotImplementedError(f"FakeClient models the status subresource only, not {subresource!r}")


def check_version(current: Obj, resource_version: str | None) -> None:
    """A ``resourceVersion`` in a write is a precondition: 409 Conflict unless it is the current one."""
    if resource_version and resource_version != current["metadata"]["resourceVersion"]:
        raise Conflict(409, "Conflict", f"Operation cannot be fulfilled on {current['metadata']['name']}: the "
                                        "object has been modified; please apply your changes to the latest "
                                        "version and try again")


def written(res: Resource, current: Obj, new: Obj, subresource: str | None) -> Obj:
    """What a write keeps: a status write changes only ``status``; a write of the main resource of a
    kind with a status subresource cannot change it. Identity fields always stay the server's."""
    if subresource == "status":
        new = {**copy.deepcopy(current), "status": new.get("status")}
    elif "status" in res.subresources:
        new = {k: v for k, v in new.items() if k != "status"}
        if "status" in current:
            new["status"] = copy.deepcopy(current["status"])
    meta = new.setdefault("metadata", {})
    for key in ("uid", "creationTimestamp", "namespace", "name", "deletionTimestamp", "generation"):
        if key in current["metadata"]:
            meta[key] = current["metadata"][key]
    return new


def patched(current: Obj, patch: Any, type: PatchType) -> Obj:
    """``current`` with ``patch`` applied (the merge kinds check a ``resourceVersion`` they carry)."""
    if type == "json":
        return json_patch(current, patch)
    if type == "strategic" and has_list(patch):
        raise NotImplementedError("FakeClient applies a strategic merge patch as a JSON merge patch, which "
                                  "differs for lists (merge keys are not modelled): this one holds a list")
    rv = (patch.get("metadata") or {}).get("resourceVersion") if type in ("merge", "strategic") else None
    check_version(current, rv)
    merged: Obj = merge_patch(copy.deepcopy(current), patch)
    return merged


def has_list(value: Any) -> bool:
    """Whether a patch holds a list anywhere (where strategic and JSON merge patches differ)."""
    if isinstance(value, dict):
        return any(has_list(v) for v in value.values())
    return isinstance(value, list)


def json_patch(current: Obj, ops: list[dict[str, Any]]) -> Obj:
    """RFC 6902 add/remove/replace/test; a failed ``test`` is a 422 Invalid, as the API server says it."""
    doc = copy.deepcopy(current)
    for op in ops:
        *parents, last = [p.replace("~1", "/").replace("~0", "~") for p in op["path"].split("/")[1:]]
        node: Any = doc
        try:
            for part in parents:
                node = node[int(part)] if isinstance(node, list) else node[part]
            apply_op(node, last, op)
        except (KeyError, IndexError, ValueError, TypeError) as exc:
            raise Invalid(422, "Invalid", f"json patch {op['op']} {op['path']}: {exc!r}") from None
    return doc


def apply_op(node: Any, last: str, op: dict[str, Any]) -> None:
    """One JSON-patch operation on ``node``'s member ``last`` (a key, an index or ``-``)."""
    kind = op["op"]
    if isinstance(node, list):
        index = len(node) if last == "-" else int(last)
        if kind == "test" and node[index] != op["value"]:
            raise ValueError("test failed")
        if kind in ("remove", "replace"):
            node.pop(index)
        if kind in ("add", "replace"):
            node.insert(index, op["value"])
        return
    if kind == "test":
        if node[last] != op["value"]:
            raise ValueError("test failed")
    elif kind == "remove":
        del node[last]
    elif kind in ("add", "replace"):
        if kind == "replace" and last not in node:
            raise KeyError(last)
        node[last] = op["value"]
    else:
        raise ValueError(f"unsupported op {kind!r}")


def essence(obj: Obj) -> Obj:
    """What a change of bumps ``generation``: everything outside metadata and status."""
    return {k: v for k, v in obj.items() if k not in ("metadata", "status")}


def now() -> str:
    """A timestamp as the API server writes them (RFC 3339, seconds, UTC)."""
    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
