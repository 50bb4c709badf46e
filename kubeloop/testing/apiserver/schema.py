"""CRD structural schemas: pruning of unknown fields, defaulting, and validation with the real server's
messages (``spec.copies in body should be greater than or equal to 0``).

Served: type, properties, additionalProperties, items, required, enum, minimum/maximum (and exclusive),
minLength/maxLength, minItems/maxItems, pattern, nullable, default, x-kubernetes-preserve-unknown-fields,
x-kubernetes-int-or-string. ``x-kubernetes-validations`` (CEL) are checked by ``cel.py`` when a CEL
library is installed, else the CRD is refused with 501.
"""

from __future__ import annotations

import copy
import json
import operator
import re
from typing import Any

Cause = tuple[str, str, str]  # (reason, field, message)
_TYPES = {"string": str, "object": dict, "array": list, "boolean": bool}


def prune(obj: Any, schema: dict[str, Any] | None, top: bool = True) -> Any:
    """Drops fields the schema does not declare (keeps apiVersion/kind/metadata at the top)."""
    if schema is None or schema.get("x-kubernetes-preserve-unknown-fields"):
        if isinstance(obj, dict) and schema and schema.get("properties"):
            return {k: prune(v, schema["properties"].get(k), False) if k in schema["properties"] else v
                    for k, v in obj.items()}
        return obj
    if isinstance(obj, dict) and (schema.get("type") == "object" or "properties" in schema):
        props = schema.get("properties") or {}
        extra = schema.get("additionalProperties")
        out = {}
        for key, value in obj.items():
            if top and key in ("apiVersion", "kind", "metadata"):
                out[key] = value
            elif key in props:
                out[key] = prune(value, props[key], False)
            elif isinstance(extra, dict):
                out[key] = prune(value, extra, False)
            elif extra is True:
                out[key] = value
        return out
    if isinstance(obj, list) and isinstance(schema.get("items"), dict):
        return [prune(v, schema["items"], False) for v in obj]
    return obj


def default(obj: Any, schema: dict[str, Any] | None) -> Any:
    """Fills ``default`` values of missing properties, depth first."""
    if not schema:
        return obj
    if isinstance(obj, dict):
        props = schema.get("properties") or {}
        for key, sub in props.items():
            if key not in obj and "default" in sub:
                obj[key] = copy.deepcopy(sub["default"])
            if key in obj:
                obj[key] = default(obj[key], sub)
        extra = schema.get("additionalProperties")
        if isinstance(extra, dict):
            for key in obj:
                if key not in props:
                    obj[key] = default(obj[key], extra)
    elif isinstance(obj, list) and isinstance(schema.get("items"), dict):
        return [default(v, schema["items"]) for v in obj]
    return obj


def _go(value: Any) -> str:
    """How Go's validation messages print a value."""
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value) if not isinstance(value, (dict, list)) else json.dumps(value, separators=(",", ":"))


def _type_of(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if value is None:
        return "null"
    for name, py in _TYPES.items():
        if isinstance(value, py):
            return name
    return "unknown"


def validate(obj: Any, schema: dict[str, Any] | None, path: str = "") -> list[Cause]:
    """Every violation of the schema, as (reason, field, message)."""
    if not schema:
        return []
    causes: list[Cause] = []
    where = path or "<root>"
    if obj is None:
        if schema.get("nullable"):
            return []
    want = schema.get("type")
    if want and not schema.get("x-kubernetes-int-or-string"):
        got = _type_of(obj)
        ok = got == want or (want == "number" and got == "integer")
        if not ok:
            return [("FieldValueTypeInvalid", where,
                     f'Invalid value: "{got}": {where} in body must be of type {want}: "{got}"')]
    if "enum" in schema and obj not in schema["enum"]:
        allowed = ", ".join(_go(v) for v in schema["enum"])
        causes.append(("FieldValueNotSupported", where,
                       f"Unsupported value: {_go(obj)}: supported values: {allowed}"))
    if isinstance(obj, (int, float)) and not isinstance(obj, bool):
        causes += _numeric(obj, schema, where)
    if isinstance(obj, str):
        causes += _string(obj, schema, where)
    if isinstance(obj, list):
        for limit, word, bad in (("minItems", "should have at least", operator.lt),
                                 ("maxItems", "Too many", operator.gt)):
            if limit in schema and bad(len(obj), schema[limit]):
                if limit == "minItems":
                    causes.append(("FieldValueInvalid", where, f"Invalid value: {len(obj)}: {where} in body "
                                   f"{word} {schema[limit]} items"))
                else:
                    causes.append(("FieldValueTooMany", where, f"Too many: {len(obj)}: must have at most "
                                   f"{schema[limit]} items"))
        if isinstance(schema.get("items"), dict):
            for i, item in enumerate(obj):
                causes += validate(item, schema["items"], f"{where}[{i}]")
    if isinstance(obj, dict):
        if "maxProperties" in schema and len(obj) > schema["maxProperties"]:  # said as of maxItems
            causes.append(("FieldValueTooMany", where, f"Too many: {len(obj)}: must have at most "
                           f"{schema['maxProperties']} items"))
        for req in schema.get("required") or []:
            if req not in obj:
                causes.append(("FieldValueRequired", _join(path, req), "Required value"))
        props = schema.get("properties") or {}
        nested: list[Cause] = []
        for key, value in sorted(obj.items()):
            sub = props.get(key)
            if sub is None and isinstance(schema.get("additionalProperties"), dict):
                sub = schema["additionalProperties"]
            if sub is not None and not (not path and key in ("apiVersion", "kind", "metadata")):
                nested += validate(value, sub, _join(path, key))
        # the real validator reports enum violations after the other errors of the same object
        causes += [c for c in nested if c[0] != "FieldValueNotSupported"]
        causes += [c for c in nested if c[0] == "FieldValueNotSupported"]
    return causes


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _numeric(obj: float, schema: dict[str, Any], where: str) -> list[Cause]:
    out: list[Cause] = []
    if "minimum" in schema:
        m = schema["minimum"]
        if obj < m or (schema.get("exclusiveMinimum") and obj == m):
            rel = "greater than" if schema.get("exclusiveMinimum") else "greater than or equal to"
            out.append(("FieldValueInvalid", where, f"Invalid value: {_go(obj)}: {where} in body should be "
                        f"{rel} {_go(m)}"))
    if "maximum" in schema:
        m = schema["maximum"]
        if obj > m or (schema.get("exclusiveMaximum") and obj == m):
            rel = "less than" if schema.get("exclusiveMaximum") else "less than or equal to"
            out.append(("FieldValueInvalid", where, f"Invalid value: {_go(obj)}: {where} in body should be "
                        f"{rel} {_go(m)}"))
    return out


def _string(obj: str, schema: dict[str, Any], where: str) -> list[Cause]:
    out: list[Cause] = []
    if "minLength" in schema and len(obj) < schema["minLength"]:
        out.append(("FieldValueInvalid", where, f"Invalid value: {_go(obj)}: {where} in body should be at "
                    f"least {schema['minLength']} chars long"))
    if "maxLength" in schema and len(obj) > schema["maxLength"]:
        out.append(("FieldValueTooLong", where, f"Too long: may not be more than {schema['maxLength']} bytes"))
    if "pattern" in schema and not re.search(schema["pattern"], obj):
        out.append(("FieldValueInvalid", where, f"Invalid value: {_go(obj)}: {where} in body should match "
                    f"'{schema['pattern']}'"))
    return out
