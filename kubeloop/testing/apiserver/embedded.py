"""Objects embedded in a custom resource (``x-kubernetes-embedded-resource: true``, a pod template, a
RawExtension), as apiextensions-apiserver's objectmeta package treats them:

- pruning keeps their ``apiVersion``, ``kind`` and ``metadata`` whatever the schema declares, and their
  metadata is coerced to an ObjectMeta: unknown keys are dropped, empty ones too (Go omits them when it
  re-encodes); a known one of another type, or an apiVersion or kind not a string, is a 400 (``Malformed``);
- validation requires ``apiVersion`` and ``kind`` (a group/version, a kind that lowercased is an RFC 1035
  label) and checks the metadata as ObjectMeta, the name as a path segment (any but ``.``, ``..``, or one
  holding ``/`` or ``%``), not as the name of a kind.

ObjectMeta fields whose coercion is not modelled (owner references, managed fields, timestamps) are
refused with 501 when an embedded object carries them.
"""

from __future__ import annotations

from typing import Any

from kubeloop.testing.apiserver import errors, names

Cause = tuple[str, str, str]
EMBEDDED = "x-kubernetes-embedded-resource"

# ObjectMeta's fields this module coerces, each with the JSON type it decodes from.
_SIMPLE: dict[str, type] = {"name": str, "generateName": str, "namespace": str, "selfLink": str, "uid": str,
                            "resourceVersion": str, "generation": int, "labels": dict, "annotations": dict,
                            "finalizers": list}
_NOT_MODELLED = ("ownerReferences", "managedFields", "creationTimestamp", "deletionTimestamp",
                 "deletionGracePeriodSeconds")


def is_embedded(schema: Any) -> bool:
    return isinstance(schema, dict) and schema.get(EMBEDDED) is True


class Malformed(Exception):
    """An embedded object the decoder cannot coerce: the request is a 400 naming the field."""


def coerce(obj: dict[str, Any], where: str) -> dict[str, Any]:
    """objectmeta.Coerce on one embedded object: apiVersion and kind strings, metadata an ObjectMeta."""
    for key in ("apiVersion", "kind"):
        if key in obj and not isinstance(obj[key], str):
            raise Malformed(f"{where}.{key}: Invalid value: {_json(obj[key])}: must be a string")
    if "metadata" not in obj:
        return obj
    return {**obj, "metadata": coerce_metadata(obj["metadata"], where)}


def coerce_metadata(meta: Any, where: str) -> dict[str, Any]:
    """An embedded object's metadata decoded into an ObjectMeta and encoded again: unknown and empty fields
    go, a known one of another type fails the decoding (as encoding/json words it)."""
    if meta is None:
        return {}
    if not isinstance(meta, dict):
        raise Malformed(f"{where}.metadata: Invalid value: {_json(meta)}: json: cannot unmarshal {_json_type(meta)} "
                        "into Go value of type v1.ObjectMeta")
    for key in _NOT_MODELLED:
        if key in meta:
            raise errors.not_served(f"metadata.{key} in an embedded resource (x-kubernetes-embedded-resource, at "
                                    f"{where}) of a custom resource")
    for key in sorted(k for k in meta if k in _SIMPLE):  # (the decoder meets them in the marshalled order)
        why = _type_error(key, meta[key])
        if why:
            raise Malformed(f"{where}.metadata: Invalid value: {_json(meta)}: json: cannot unmarshal {why}")
    return {key: meta[key] for key in _SIMPLE if meta.get(key)}


_GO_TYPES = {str: "string", int: "int64", dict: "map[string]string", list: "[]string"}


def _type_error(key: str, value: Any) -> str:
    """Why encoding/json cannot decode ``value`` into ObjectMeta's field ``key`` ("" if it can)."""
    want = _SIMPLE[key]
    if value is None:
        return ""
    if want is int and isinstance(value, float) and not value.is_integer():
        return f"number {value} into Go struct field ObjectMeta.{key} of type int64"
    if not isinstance(value, want) or isinstance(value, bool) and want is not bool:
        if not (want is int and isinstance(value, float)):
            return f"{_json_type(value)} into Go struct field ObjectMeta.{key} of type {_GO_TYPES[want]}"
    inner = value.values() if isinstance(value, dict) else value if isinstance(value, list) else ()
    bad = next((v for v in inner if v is not None and not isinstance(v, str)), None)
    return f"{_json_type(bad)} into Go struct field ObjectMeta.{key} of type string" if bad is not None else ""


def _json_type(value: Any) -> str:
    return "bool" if isinstance(value, bool) else "number" if isinstance(value, int | float) else \
        "string" if isinstance(value, str) else "array" if isinstance(value, list) else "object"


def _json(value: Any) -> str:
    import json

    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def causes(obj: Any, schema: Any, path: str) -> list[Cause]:
    """objectmeta.Validate below the root: every embedded object's apiVersion, kind and metadata."""
    if not isinstance(schema, dict):
        return []
    out: list[Cause] = []
    if isinstance(obj, dict):
        if is_embedded(schema) and path:
            out += _embedded(obj, path)
        props = schema.get("properties") or {}
        extra = schema.get("additionalProperties")
        for key, value in obj.items():
            if key in props:
                out += causes(value, props[key], f"{path}.{key}" if path else key)
            elif isinstance(extra, dict):
                out += causes(value, extra, f"{path}[{key}]")
    elif isinstance(obj, list) and isinstance(schema.get("items"), dict):
        for i, value in enumerate(obj):
            out += causes(value, schema["items"], f"{path}[{i}]")
    return out


def _embedded(obj: dict[str, Any], path: str) -> list[Cause]:
    out: list[Cause] = [("FieldValueRequired", f"{path}.{key}", "Required value")
                        for key in ("apiVersion", "kind") if key not in obj]
    api_version, kind = obj.get("apiVersion"), obj.get("kind")
    if "apiVersion" in obj:
        why = "must be a string" if not isinstance(api_version, str) else "must not be empty" if not api_version \
            else f"unexpected GroupVersion string: {api_version}" if api_version.count("/") > 1 else ""
        if why:
            out.append(_invalid(f"{path}.apiVersion", api_version, why))
    if "kind" in obj:
        errs = names.dns1035_label(kind.lower()) if isinstance(kind, str) and kind else []
        why = "must be a string" if not isinstance(kind, str) else "must not be empty" if not kind else \
            "may have mixed case, but should otherwise match: " + ",".join(errs) if errs else ""
        if why:
            out.append(_invalid(f"{path}.kind", kind, why))
    if isinstance(obj.get("metadata"), dict):
        out += _metadata(obj["metadata"], f"{path}.metadata")
    return out


def _metadata(meta: dict[str, Any], at: str) -> list[Cause]:
    """ValidateObjectMeta with path-segment names; a namespace, if any, an RFC 1123 label."""
    from kubeloop.testing.apiserver import validation

    out: list[Cause] = [_invalid(f"{at}.name", meta["name"], e) for e in _path_segment(meta.get("name") or "")]
    prefix = meta.get("generateName") or ""
    out += [_invalid(f"{at}.generateName", prefix, e) for e in _path_segment(prefix, prefix=True)]
    if meta.get("namespace"):
        out += [_invalid(f"{at}.namespace", meta["namespace"], e) for e in names.dns1123_label(meta["namespace"])]
    rest = {k: v for k, v in meta.items() if k in ("labels", "annotations", "finalizers")}
    return out + [(reason, at + field[len("metadata"):], message)
                  for reason, field, message in validation.metadata_causes(_ANY, rest, creating=False)]


def _path_segment(name: str, prefix: bool = False) -> list[str]:
    if not prefix and name in (".", ".."):
        return [f"may not be '{name}'"]
    return [f"may not contain '{ch}'" for ch in ("/", "%") if ch in name]


def _invalid(field: str, value: Any, msg: str) -> Cause:
    import json

    return ("FieldValueInvalid", field, f"Invalid value: {json.dumps(value, ensure_ascii=False)}: {msg}")


class _AnyKind:
    """Stands for the embedded object's kind, which metadata_causes asks only for finalizer rules."""

    key = ("", "")
    kind = ""
    group = ""
    crd: dict[str, Any] = {}  # (not a built-in: no core finalizer rules)


_ANY: Any = _AnyKind()
