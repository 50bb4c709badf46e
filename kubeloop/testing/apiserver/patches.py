"""Patch flavours: JSON merge patch (RFC 7386), JSON patch (RFC 6902, with ``test``) and strategic merge
patch for built-in kinds (lists merged by their patch key). Server-side apply lives in ``apply.py``.

Like kube-apiserver, a JSON patch that cannot be applied (a failed ``test``, a missing path, an unknown
op) answers 422 with the generic "rejected" message; a ``replace`` of a missing object member adds it
(the real server's JSON-patch library does the same).
"""

from __future__ import annotations

import copy
from typing import Any

from kubeloop.client.merge import merge_patch as merge_patch  # re-exported: one RFC 7386 for all
from kubeloop.testing.apiserver.errors import StatusError, bad_request, rejected

MERGE = "application/merge-patch+json"
JSON = "application/json-patch+json"
STRATEGIC = "application/strategic-merge-patch+json"
APPLY = "application/apply-patch+yaml"


def json_patch(doc: Any, ops: Any) -> Any:
    """RFC 6902 on a copy of ``doc``; any failure is the real server's 422."""
    if not isinstance(ops, list):
        # (decoded first to count its operations, into the handler's own type)
        kind = {dict: "object", str: "string", bool: "bool"}.get(type(ops), "number")
        raise bad_request(f"error decoding patch: json: cannot unmarshal {kind} into Go value of type "
                          "[]handlers.jsonPatchOp")
    doc = copy.deepcopy(doc)
    for op in ops:
        try:
            doc = _apply_op(doc, op)
        except StatusError:
            raise
        except (KeyError, IndexError, ValueError, TypeError):
            raise rejected() from None
    return doc


def _pointer(path: str) -> list[str]:
    if path == "":
        return []
    if not path.startswith("/"):
        raise ValueError(path)
    return [p.replace("~1", "/").replace("~0", "~") for p in path[1:].split("/")]


def _parent(doc: Any, parts: list[str]) -> tuple[Any, str]:
    cur = doc
    for p in parts[:-1]:
        cur = cur[int(p)] if isinstance(cur, list) else cur[p]
    return cur, parts[-1]


def _get(doc: Any, parts: list[str]) -> Any:
    cur = doc
    for p in parts:
        cur = cur[int(p)] if isinstance(cur, list) else cur[p]
    return cur


def _tested(doc: Any, parts: list[str]) -> Any:
    """What a ``test`` compares: a member missing from an object that exists is null (the real server's
    JSON-patch library), so ``test /metadata/finalizers null`` passes on an object without finalizers."""
    if parts:
        parent, last = _parent(doc, parts)
        if isinstance(parent, dict) and last not in parent:
            return None
    return _get(doc, parts)


def _add(doc: Any, parts: list[str], value: Any, replace: bool = False) -> Any:
    if not parts:
        return copy.deepcopy(value)
    parent, last = _parent(doc, parts)
    if isinstance(parent, list):
        if last == "-":
            parent.append(copy.deepcopy(value))
            return doc
        index = int(last)
        if index < 0 or index > len(parent) or (replace and index >= len(parent)):
            raise IndexError(index)
        if replace:
            parent[index] = copy.deepcopy(value)
        else:
            parent.insert(index, copy.deepcopy(value))
    elif isinstance(parent, dict):
        parent[last] = copy.deepcopy(value)
    else:
        raise TypeError(last)
    return doc


def _remove(doc: Any, parts: list[str]) -> Any:
    parent, last = _parent(doc, parts)
    if isinstance(parent, list):
        index = int(last)
        if index < 0:
            raise IndexError(index)
        del parent[index]
    else:
        del parent[last]
    return doc


def _apply_op(doc: Any, op: dict[str, Any]) -> Any:
    name, parts = op.get("op"), _pointer(op.get("path", ""))
    if name == "add":
        return _add(doc, parts, op["value"])
    if name == "replace":
        return _add(doc, parts, op["value"], replace=True)
    if name == "remove":
        return _remove(doc, parts)
    if name == "test":
        if _tested(doc, parts) != op.get("value"):
            raise rejected()
        return doc
    if name in ("move", "copy"):
        source = _pointer(op["from"])
        value = copy.deepcopy(_get(doc, source))
        if name == "move":
            doc = _remove(doc, source)
        return _add(doc, parts, value)
    raise ValueError(name)


# Strategic merge: list fields of built-in kinds merged by a key instead of replaced.
_MERGE_KEYS = {"containers": "name", "initContainers": "name", "ephemeralContainers": "name", "env": "name",
               "volumes": "name", "volumeMounts": "mountPath", "ports": "containerPort",
               "imagePullSecrets": "name", "ownerReferences": "uid", "conditions": "type",
               "tolerations": None, "finalizers": None, "schedulingGates": "name"}


# A kind's own top-level lists whose patch strategy differs from the field name's elsewhere (a
# ServiceAccount's imagePullSecrets are replaced, its secrets merged by name; a pod spec merges the former).
KIND_KEYS: dict[tuple[str, str], dict[str, str | None]] = {
    ("", "serviceaccounts"): {"imagePullSecrets": "", "secrets": "name"},
}


def strategic_merge(target: Any, patch: Any, field: str | None = None,
                    keys: dict[str, str | None] | None = None) -> Any:
    """Strategic merge patch for the built-in kinds: maps as in a merge patch, lists with a patch key
    merged element by element (``$patch: delete`` removes one), ``$patch: replace`` replaces a map,
    ``$retainKeys`` keeps only the keys it lists. ``keys``: merge keys of this map's own lists that
    override the table (``""``: replaced)."""
    if not isinstance(patch, dict):
        merge_keys = {**_MERGE_KEYS, **(keys or {})}
        if isinstance(patch, list) and isinstance(target, list) and field in merge_keys and \
                merge_keys[field] != "":
            key = merge_keys[field]
            if field == "ports" and not any(isinstance(p, dict) and "containerPort" in p for p in patch):
                key = "port"  # a Service's ports (a container's are keyed by containerPort)
            return _merge_list(target, patch, key)
        return copy.deepcopy(patch)
    if patch.get("$patch") == "replace":
        return {k: v for k, v in copy.deepcopy(patch).items() if k != "$patch"}
    if patch.get("$patch") == "delete":
        return None
    if "$patch" in patch:  # a map's directive is replace or delete; any other (merge too) is the real 500
        raise StatusError(500, "", f"unknown patch type: {patch['$patch']} in map: {go_map(patch)}")
    out = dict(target) if isinstance(target, dict) else {}
    retain = patch.get("$retainKeys")
    if "$retainKeys" in patch and (not isinstance(retain, list) or any(  # applyRetainKeysDirective: every key
            k not in retain for k, v in patch.items() if v is not None and k != "$retainKeys" and  # the patch
            not k.startswith(("$deleteFromPrimitiveList/", "$setElementOrder/")))):  # sets must be retained
        raise StatusError(400, "BadRequest", "invalid patch format of retainKeys")
    for key, value in patch.items():
        if key == "$retainKeys":
            continue
        if key.startswith("$deleteFromPrimitiveList/"):
            listed = key.partition("/")[2]
            if isinstance(out.get(listed), list) and isinstance(value, list):
                out[listed] = [x for x in out[listed] if x not in value]
            continue
        if key.startswith("$setElementOrder/"):
            continue  # (applied once the list is merged, below)
        if value is None:
            out.pop(key, None)
        else:
            own = keys if keys and key in keys else None
            out[key] = strategic_merge(out.get(key), value, key, own)
    for key, order in patch.items():
        listed = key.partition("/")[2]
        if key.startswith("$setElementOrder/") and isinstance(out.get(listed), list) and isinstance(order, list):
            out[listed] = _ordered(out[listed], order, {**_MERGE_KEYS, **(keys or {})}.get(listed))
    if isinstance(retain, list):  # (a union's other members go: a Deployment's strategy)
        out = {k: v for k, v in out.items() if k in retain}
    return out


def go_map(value: Any) -> str:
    """A decoded JSON value as Go's ``%v`` prints it (maps with their keys sorted)."""
    if isinstance(value, dict):
        return "map[" + " ".join(f"{k}:{go_map(v)}" for k, v in sorted(value.items())) + "]"
    if isinstance(value, list):
        return "[" + " ".join(go_map(v) for v in value) + "]"
    if value is None:
        return "<nil>"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _merge_list(target: list[Any], patch: list[Any], key: str | None) -> list[Any]:
    if any(isinstance(item, dict) and item.get("$patch") == "replace" for item in patch):
        return [copy.deepcopy(x) for x in patch if not (isinstance(x, dict) and "$patch" in x)]
    if key is None and any(isinstance(x, dict) for x in patch):
        return copy.deepcopy(patch)  # an unkeyed list of objects is replaced
    for item in patch if key is not None else []:
        if isinstance(item, dict) and key not in item and item.get("$patch") != "delete":
            raise StatusError(500, "", f"map: {go_map(item)} does not contain declared merge key: {key}")
    if key is not None and any(not isinstance(item, dict) for item in patch):
        return copy.deepcopy(patch)

    def ident(item: Any) -> Any:
        return item.get(key) if key is not None and isinstance(item, dict) else item

    originals = {ident(x): x for x in target}
    merged: list[Any] = []
    for item in patch:
        if isinstance(item, dict) and item.get("$patch") == "delete":
            continue
        if any(ident(m) == ident(item) for m in merged):
            continue
        found = originals.get(ident(item))
        merged.append(strategic_merge(found, item) if key is not None and found is not None else copy.deepcopy(item))
    named = {ident(item) for item in patch}
    server_only = [copy.deepcopy(x) for x in target if ident(x) not in named]
    return _in_server_order(server_only, merged, [ident(x) for x in target], ident)


def _ordered(items: list[Any], order: list[Any], key: str | None) -> list[Any]:
    """``$setElementOrder``: the elements it names in its order, then the others as they were."""
    def ident(item: Any) -> Any:
        return item.get(key) if key and isinstance(item, dict) else item

    wanted = [ident(x) for x in order]
    named = sorted((x for x in items if ident(x) in wanted), key=lambda x: wanted.index(ident(x)))
    return named + [x for x in items if ident(x) not in wanted]


def _in_server_order(left: list[Any], right: list[Any], order: list[Any], ident: Any) -> list[Any]:
    """The real merge's interleaving of the original elements the patch does not name (``left``) with
    the patch's (``right``): the left one goes first only when both are in the original and it came
    first there; an element new to the list goes before the original ones still waiting."""
    out: list[Any] = []
    i = j = 0
    while i < len(left) or j < len(right):
        if j >= len(right) or (i < len(left) and ident(right[j]) in order and
                               order.index(ident(left[i])) < order.index(ident(right[j]))):
            out.append(left[i])
            i += 1
        else:
            out.append(right[j])
            j += 1
    return out
