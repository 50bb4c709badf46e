"""Decoding built-in kinds as kube-apiserver's typed decoder does, from the OpenAPI v3 schemas captured
from a real server (builtin_schemas.json, written by tests/differential/capture_real.py):

- a value of the wrong JSON type (a number where a string goes, a string for an integer, base64 that
  does not decode for a ``byte`` field) is a 400 naming the field, where the real decoder fails;
- fields the schema does not declare are dropped (the real server ignores them, with a warning), and
  ``fieldValidation=Strict`` names the first one (400);
- quantities (``resource.Quantity``) accept a string or a number and are stored in canonical form
  (quantity.py); int-or-string fields accept either.
"""

from __future__ import annotations

import base64
import binascii
import functools
import json
from pathlib import Path
from typing import Any

from kubeloop.testing.apiserver import errors, godecode, gotime, quantity, schema
from kubeloop.testing.apiserver.kinds import Kind

_FILE = Path(__file__).with_name("builtin_schemas.json")


@functools.cache
def _data() -> dict[str, Any]:
    return json.loads(_FILE.read_text()) if _FILE.exists() else {"kinds": {}, "definitions": {}}


@functools.cache
def _resolved() -> dict[str, dict[str, Any]]:
    """Every definition with its ``$ref``s replaced by the (shared) definitions they name."""
    defs = _data()["definitions"]
    out: dict[str, dict[str, Any]] = {name: {} for name in defs}

    def resolve(node: Any) -> Any:
        if isinstance(node, dict):
            if "$ref" in node:
                return out.get(node["$ref"], {})
            return {k: resolve(v) for k, v in node.items()}
        return node

    for name, node in defs.items():
        out[name].update(resolve(node))
        out[name]["x-ref"] = name  # (the Go type a decoding error names)
    return out


def schema_of(kind: Kind, version: str) -> dict[str, Any] | None:
    """The captured schema of a built-in kind at ``version`` (None: none captured, nothing checked)."""
    if kind.crd is not None:
        return None
    key = f"{kind.group}/{version}/{kind.kind}" if kind.group else f"{version}/{kind.kind}"
    name = _data()["kinds"].get(key)
    return _resolved().get(name) if name else None


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "number"
    names: dict[type, str] = {str: "string", list: "array", dict: "object"}
    return names.get(type(value), "value")


def _wrong(value: Any, node: dict[str, Any]) -> str | None:
    """Why ``value`` cannot decode into ``node``'s type (None: it can)."""
    kind = node.get("type")
    if value is None:
        return None
    if node.get("x-kubernetes-int-or-string") or node.get("format") == "int-or-string":
        ok = isinstance(value, (str, int)) and not isinstance(value, bool)
    elif kind == "quantity":
        ok = isinstance(value, (str, int, float)) and not isinstance(value, bool)
    elif kind == "string":
        ok = isinstance(value, str)
        if ok and node.get("format") == "byte" and value:
            try:
                base64.b64decode(value, validate=True)
            except (binascii.Error, ValueError):
                return "illegal base64 data"
    elif kind == "integer":
        ok = isinstance(value, int) and not isinstance(value, bool)
    elif kind == "number":
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    elif kind == "boolean":
        ok = isinstance(value, bool)
    elif kind == "array":
        ok = isinstance(value, list)
    elif kind == "object" or "properties" in node or "additionalProperties" in node:
        ok = isinstance(value, dict)
    else:
        return None
    return None if ok else f"cannot unmarshal {_json_type(value)} into a field of type {kind}"


def _first_type_error(value: Any, node: dict[str, Any], path: str) -> tuple[str, str] | None:
    why = _wrong(value, node)
    if why:
        return path, why
    if isinstance(value, dict):
        props, extra = node.get("properties") or {}, node.get("additionalProperties")
        for key, sub in value.items():
            child = props.get(key) if key in props else extra if isinstance(extra, dict) else None
            if child is not None:
                found = _first_type_error(sub, child, f"{path}.{key}" if path else key)
                if found:
                    return found
    elif isinstance(value, list) and isinstance(node.get("items"), dict):
        for i, item in enumerate(value):
            found = _first_type_error(item, node["items"], f"{path}[{i}]")
            if found:
                return found
    return None


def check_types(kind: Kind, version: str, obj: dict[str, Any]) -> None:
    """The typed decoder's verdict on a request body, before anything else looks at it: 400 on the
    first value of the wrong type, in ``encoding/json``'s words (``godecode``)."""
    spec = schema_of(kind, version)
    why = godecode.error({k: v for k, v in obj.items() if k not in ("apiVersion", "kind")}, spec) \
        if spec is not None else None
    if why:
        raise errors.bad_request(f'{kind.kind} in version "{version}" cannot be handled as a {kind.kind}: {why}')


def decode(kind: Kind, version: str, obj: dict[str, Any]) -> dict[str, Any]:
    """Type checks (400 on the first wrong value) and pruning of undeclared fields."""
    spec = schema_of(kind, version)
    if spec is None:
        return obj
    check_types(kind, version, obj)
    try:
        decoded: dict[str, Any] = _canonical(schema.prune(obj, spec), spec)
        return decoded
    except ValueError as exc:
        raise errors.bad_request(f'{kind.kind} in version "{version}" cannot be handled as a {kind.kind}: '
                                 f"{exc}") from None


_SMD_EXPECTED = {"integer": "numeric (int or float)", "number": "numeric (int or float)", "string": "string",
                 "boolean": "boolean", "array": "list", "object": "map"}


def _keyed_list_error(value: Any, node: Any, path: str) -> str | None:
    """structured-merge-diff's refusal of an applied x-kubernetes-list-type map: an item with none of the
    key fields (and no default for them), or two items with the same key."""
    if not isinstance(node, dict):
        return None
    if isinstance(value, dict):
        props = node.get("properties") or {}
        for key, sub in value.items():
            found = _keyed_list_error(sub, props.get(key), f"{path}.{key}")
            if found:
                return found
    if not isinstance(value, list) or not isinstance(node.get("items"), dict):
        return None
    keys = list(node.get("x-kubernetes-list-map-keys") or []) if node.get("x-kubernetes-list-type") == "map" else []
    defaults = {k: v["default"] for k, v in (node["items"].get("properties") or {}).items()
                if isinstance(v, dict) and "default" in v}
    seen: set[str] = set()
    for i, item in enumerate(value):
        if keys and isinstance(item, dict):
            named = {k: item[k] if k in item else defaults[k] for k in keys if k in item or k in defaults}
            if not named:
                listed = "[" + " ".join(json.dumps(k) for k in keys) + "]"
                return (f"{path}: element {i}: associative list with keys has an element that omits all key fields "
                        f"{listed} (and doesn't have default values for any key fields)")
            shown = "[" + ",".join(f"{k}={json.dumps(v, separators=(',', ':'))}"
                                   for k, v in sorted(named.items())) + "]"
            if shown in seen:
                return f"{path}: duplicate entries for key {shown}"
            seen.add(shown)
        found = _keyed_list_error(item, node["items"], f"{path}[{i}]")
        if found:
            return found
    return None


def check_applied(kind: Kind, version: str, name: str, config: dict[str, Any]) -> None:
    """A server-side apply's configuration is made a typed object before anything else; a value of the
    wrong type or a field the schema does not declare is a 500 there (structured-merge-diff's message;
    list items are named by index, where the real server names them by key)."""
    spec = schema_of(kind, version)
    found = _first_type_error(config, spec, "") if spec is not None else None
    who = f"{(config.get('metadata') or {}).get('namespace') or ''}/{name}"
    failed = f"failed to create typed patch object ({who}; {kind.group}/{version}, Kind={kind.kind})"
    if kind.crd is not None:  # a custom resource's configuration is typed by its CRD version's schema
        from kubeloop.testing.apiserver.strict import first_pruned

        declared = kind.schema(version)
        unknown = first_pruned(config, schema.prune(config, declared)) if declared is not None else None
        if unknown:
            raise errors.StatusError(500, "", f"{failed}: .{unknown}: field not declared in schema")
        keyed = _keyed_list_error(config, declared, "") if declared is not None else None
        if keyed:
            raise errors.StatusError(500, "", f"{failed}: {keyed}")
        found = _first_type_error({k: v for k, v in config.items() if k != "metadata"}, declared, "") \
            if declared is not None else None
        if not found or found[1] == "illegal base64 data":  # (a format is no type to structured-merge-diff)
            return
        spec = declared
    if kind.crd is None and (not found or found[1] == "illegal base64 data"):  # a string, to structured-merge-diff
        unknown = first_unknown(kind, version, config)
        if unknown:
            raise errors.StatusError(500, "", f"{failed}: .{unknown}: field not declared in schema")
        if found:  # ... but not to the typed object the merged result is then converted to
            value: Any = config
            for part in found[0].split("."):
                value = value[part]
            raise errors.StatusError(500, "", f"failed to convert new object ({who}; {kind.group}/{version}, "
                                     f"Kind={kind.kind}) to proper version: unable to convert unstructured object "
                                     f"to {kind.group}/{version}, Kind={kind.kind}: error decoding from json: "
                                     f"illegal base64 data at input byte {godecode.bad_base64_byte(value)}")
        return
    assert found is not None  # (a custom resource's without one returned above)
    where, _ = found
    node: Any = spec
    value = config
    for part in where.replace("[", ".[").split("."):
        index = part[1:-1] if part.startswith("[") else None
        node = (node.get("items") if index is not None else
                (node.get("properties") or {}).get(part, node.get("additionalProperties"))) or {}
        value = value[int(index)] if index is not None else value[part]
    # structured-merge-diff's words: the configuration's own namespace (none → empty), Go's names of values
    expected = _SMD_EXPECTED.get(node.get("type") or "object", "a value of the schema's type")
    if expected.startswith("numeric"):
        got = {"string": "string", "bool": "bool", "object": "map[string]interface {}",
               "array": "[]interface {}"}.get(_json_type(value), _json_type(value))
    else:
        got = "&value.valueUnstructured{Value:" + json.dumps(value) + "}"
    raise errors.StatusError(500, "", f"{failed}: .{where}: expected {expected}, got {got}")


def _canonical(value: Any, node: dict[str, Any]) -> Any:
    """Quantities rewritten in canonical form, timestamps in UTC, nulls and Go's omitted empty lists and
    maps dropped, as the real server stores them."""
    if node.get("type") == "quantity" and value is not None:
        return quantity.canonical(value)
    ref = node.get("x-ref") or ""
    if isinstance(value, str) and ref.endswith((".meta.v1.Time", ".meta.v1.MicroTime")):
        layout = gotime.RFC3339 if ref.endswith(".Time") else gotime.RFC3339_MICRO
        parsed = gotime.parse(value, layout)
        return value if isinstance(parsed, str) else gotime.written(parsed, layout)
    if isinstance(value, dict):
        props, extra = node.get("properties") or {}, node.get("additionalProperties")
        if not props and isinstance(extra, dict) and extra.get("type") == "quantity":
            # a ResourceList (a map of quantities): SetDefaults_ResourceList rounds each up to milli units
            return {k: quantity.canonical(v, milli=True) if v is not None else v for k, v in value.items()}
        for key, sub in list(value.items()):
            child = props.get(key) if key in props else extra if isinstance(extra, dict) else None
            if sub is None and props and key in props:
                del value[key]  # a null decodes to the field's zero value: as if it had not been sent
                continue
            if child:
                value[key] = _canonical(sub, child)
                if props and _omitted_when_empty(value[key], child) and key not in (node.get("required") or ()) \
                        and key != "managedFields":  # (an empty list sent resets them: seen by the writer)
                    del value[key]  # Go's omitempty: an empty list or map is not written
    elif isinstance(value, list) and isinstance(node.get("items"), dict):
        return [_canonical(v, node["items"]) for v in value]
    return value


def _omitted_when_empty(value: Any, node: dict[str, Any]) -> bool:
    """An empty list, or an empty map (not a struct: Go writes those), of a field the schema does not
    require (the generated OpenAPI requires exactly the fields without ``omitempty``)."""
    if value == [] and node.get("type") == "array":
        return True
    return value == {} and isinstance(node.get("additionalProperties"), dict) and not node.get("properties")


def first_unknown(kind: Kind, version: str, body: dict[str, Any]) -> str | None:
    """For ``fieldValidation=Strict``: the first field the schema does not declare (None: all known;
    also None when no schema was captured)."""
    from kubeloop.testing.apiserver.strict import first_pruned

    spec = schema_of(kind, version)
    if spec is None:
        return None
    return first_pruned(body, schema.prune(body, spec))
