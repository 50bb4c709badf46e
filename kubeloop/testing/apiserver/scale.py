"""The ``scale`` subresource: an ``autoscaling/v1`` Scale view of a Deployment, a StatefulSet or a custom
resource whose CRD declares ``subresources.scale`` (its ``specReplicasPath``, ``statusReplicasPath`` and
``labelSelectorPath``). Writing it changes only the replicas of the object behind it."""

from __future__ import annotations

import copy
from typing import Any

from kubeloop.testing.apiserver import errors, patches
from kubeloop.testing.apiserver.causes import shown
from kubeloop.testing.apiserver.kinds import Kind
from kubeloop.testing.apiserver.store import Obj

_BUILTIN = {"spec": ".spec.replicas", "status": ".status.replicas", "selector": None}


def _paths(kind: Kind) -> dict[str, str | None]:
    if kind.crd is None:
        return _BUILTIN
    for version in kind.crd["spec"].get("versions", []):
        scale = (version.get("subresources") or {}).get("scale")
        if scale:
            return {"spec": scale.get("specReplicasPath"), "status": scale.get("statusReplicasPath"),
                    "selector": scale.get("labelSelectorPath")}
    return _BUILTIN


def _get(obj: Any, path: str | None) -> Any:
    """The value at a CRD's JSON path (``.spec.replicas``); None for no path."""
    if not path:
        return None
    for part in path.strip(".").split("."):
        obj = obj.get(part) if isinstance(obj, dict) else None
    return obj


def _selector(obj: Obj) -> str:
    """A built-in's ``spec.selector`` as the label-selector string the Scale shows."""
    sel = (obj.get("spec") or {}).get("selector") or {}
    terms = [f"{k}={v}" for k, v in sorted((sel.get("matchLabels") or {}).items())]
    for expr in sel.get("matchExpressions") or []:
        op, key = expr.get("operator"), expr.get("key")
        if op in ("In", "NotIn"):
            terms.append(f"{key} {op.lower()} ({','.join(sorted(expr.get('values') or []))})")
        else:
            terms.append(key if op == "Exists" else f"!{key}")
    return ",".join(terms)


def view(kind: Kind, obj: Obj) -> dict[str, Any]:
    """The Scale of ``obj``."""
    paths = _paths(kind)
    meta = {k: obj["metadata"][k] for k in ("name", "namespace", "uid", "resourceVersion", "creationTimestamp")
            if k in obj["metadata"]}
    status: dict[str, Any] = {"replicas": _get(obj, paths["status"]) or 0}
    selector = _selector(obj) if kind.crd is None else _get(obj, paths["selector"])
    if selector:
        status["selector"] = selector
    replicas = _get(obj, paths["spec"]) or 0
    return {"kind": "Scale", "apiVersion": "autoscaling/v1", "metadata": meta,  # (spec.replicas: omitempty)
            "spec": {"replicas": replicas} if replicas else {}, "status": status}


def updated(kind: Kind, obj: Obj, scale: Any, content_type: str | None) -> Obj:
    """``obj`` with the replicas of a PUT Scale body or of a patch applied to the current Scale."""
    current = view(kind, obj)
    if content_type == patches.MERGE:
        scale = patches.merge_patch(current, scale)
    elif content_type == patches.JSON:
        scale = patches.json_patch(current, scale)
    elif content_type is not None:
        if content_type == patches.APPLY and isinstance(scale, dict) and not (scale.get("apiVersion") and
                                                                            scale.get("kind")):
            group, _, asked = str(scale.get("apiVersion") or "").rpartition("/")  # (an applied object names its
            raise errors.bad_request(f"invalid object type: {group}/{asked}, Kind={scale.get('kind') or ''}")  # type)
        raise errors.not_served(f"{content_type} patches of the scale subresource")
    if not isinstance(scale, dict):
        raise errors.bad_request("the body of a Scale must be an object")
    rv = (scale.get("metadata") or {}).get("resourceVersion")
    if rv and rv != obj["metadata"]["resourceVersion"]:
        raise errors.conflict(kind.plural, kind.group, obj["metadata"]["name"])
    replicas = (scale.get("spec") or {}).get("replicas", 0)
    name = obj["metadata"]["name"]
    if isinstance(replicas, bool) or not isinstance(replicas, int):  # the patched Scale does not decode
        words = {str: "string", float: "number", bool: "bool", dict: "object", list: "array"}
        word = words.get(type(replicas), "value")
        raise errors.invalid("Scale", "autoscaling", name, [
            ("FieldValueInvalid", "patch", f"Invalid value: {shown(scale)}: json: cannot unmarshal {word} into Go "
             "struct field ScaleSpec.spec.replicas of type int32")])
    if replicas < 0 and kind.crd is None:  # (ValidateScale: the Scale is what is invalid)
        raise errors.invalid("Scale", "autoscaling", name, [
            ("FieldValueInvalid", "spec.replicas", f"Invalid value: {replicas}: must be greater than or equal to 0")])
    if replicas < 0:  # a custom resource's: its own validation, at the replicas path its CRD declares
        field = _paths(kind)["spec"] or ".spec.replicas"
        raise errors.invalid(kind.kind, kind.group, name, [
            ("FieldValueInvalid", field, f"Invalid value: {replicas}: should be a non-negative integer")])
    out = copy.deepcopy(obj)
    target = out
    parts = (_paths(kind)["spec"] or ".spec.replicas").strip(".").split(".")
    for part in parts[:-1]:
        target = target.setdefault(part, {})
    target[parts[-1]] = replicas
    return out
