"""CRD structural schemas: pruning of unknown fields, defaulting, and validation with the real server's
messages (``spec.copies in body should be greater than or equal to 0``).

Validated: type, format (``formats.py``), enum, minimum/maximum (and exclusive), multipleOf,
minLength/maxLength, pattern, minItems/maxItems, minProperties/maxProperties, required, properties,
additionalProperties, items, allOf/anyOf/oneOf/not, nullable, default, x-kubernetes-preserve-unknown-fields,
x-kubernetes-int-or-string, x-kubernetes-list-type ``set`` and ``map`` (``list_causes``: no duplicate
items or keys). ``x-kubernetes-validations`` (CEL) are checked by ``cel.py``. A CRD naming any other
keyword is refused by ``crds.py`` (``KEYWORDS``).
"""

from __future__ import annotations

import copy
import json
import operator
import re
from typing import Any

from kubeloop.testing.apiserver import formats

Cause = tuple[str, str, str]  # (reason, field, message)
_TYPES = {"string": str, "object": dict, "array": list, "boolean": bool}


def prune(obj: Any, schema: dict[str, Any] | None, top: bool = True, path: str = "") -> Any:
    """Drops fields the schema does not declare (keeps apiVersion/kind/metadata at the top, and those of
    an embedded object, whose metadata is coerced to an ObjectMeta: ``embedded``)."""
    from kubeloop.testing.apiserver import embedded

    nested = not top and embedded.is_embedded(schema) and isinstance(obj, dict)
    if nested:
        obj = embedded.coerce(obj, path)
    if schema is None or schema.get("x-kubernetes-preserve-unknown-fields"):
        if isinstance(obj, dict) and schema and schema.get("properties"):
            return {k: prune(v, schema["properties"].get(k), False, _child(path, k))
                    if k in schema["properties"] and not (nested and k in _META_FIELDS) else v
                    for k, v in obj.items()}
        return obj
    if isinstance(obj, dict) and (schema.get("type") == "object" or "properties" in schema):
        props = schema.get("properties") or {}
        extra = schema.get("additionalProperties")
        out = {}
        for key, value in obj.items():
            if (top or nested) and key in _META_FIELDS:
                out[key] = value
            elif key in props:
                out[key] = prune(value, props[key], False, _child(path, key))
            elif isinstance(extra, dict):
                out[key] = prune(value, extra, False, f"{path}[{key}]")
            elif extra is True:
                out[key] = value
        return out
    if isinstance(obj, list) and isinstance(schema.get("items"), dict):
        return [prune(v, schema["items"], False, f"{path}[{i}]") for i, v in enumerate(obj)]
    return obj


_META_FIELDS = ("apiVersion", "kind", "metadata")


def _child(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def default(obj: Any, schema: dict[str, Any] | None) -> Any:
    """Fills ``default`` values of missing properties (and of nulls where null is not allowed), depth first,
    then drops the nulls that are not allowed and have no default (the real server's defaulting and
    ``PruneNonNullableNullsWithoutDefaults``)."""
    if not schema:
        return obj
    if isinstance(obj, dict):
        props = schema.get("properties") or {}
        extra = schema.get("additionalProperties")
        for key, sub in props.items():
            if "default" in sub and (key not in obj or _null_not_allowed(obj[key], sub)):
                obj[key] = copy.deepcopy(sub["default"])
        for key in list(obj):
            sub = props.get(key, extra if isinstance(extra, dict) else None)
            if not isinstance(sub, dict):
                continue
            if _null_not_allowed(obj[key], sub) and "default" in sub:
                obj[key] = copy.deepcopy(sub["default"])
            if _null_not_allowed(obj[key], sub):
                del obj[key]
            else:
                obj[key] = default(obj[key], sub)
    elif isinstance(obj, list) and isinstance(schema.get("items"), dict):
        items = schema["items"]
        return [copy.deepcopy(items["default"]) if _null_not_allowed(v, items) and "default" in items else
                default(v, items) for v in obj]
    return obj


def _null_not_allowed(value: Any, schema: dict[str, Any]) -> bool:
    return value is None and not schema.get("nullable")


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
    return _validate(obj, schema, path)[0]


def _validate(obj: Any, schema: dict[str, Any] | None, path: str = "") -> tuple[list[Cause], int]:
    """The violations, and how many checks passed (go-openapi's match count, which picks the errors an
    ``anyOf`` or ``oneOf`` reports: those of its branch that matched most, the first on a tie)."""
    if not schema:
        return [], 0
    causes: list[Cause] = []
    where = path or "<root>"
    if obj is None and schema.get("nullable"):
        return [], 1
    matched = 0
    want = schema.get("type")
    if schema.get("x-kubernetes-int-or-string") and _type_of(obj) not in ("integer", "string"):
        return _not_int_or_string(obj, schema, where), 0
    if want and not schema.get("x-kubernetes-int-or-string"):
        got = _type_of(obj)
        ok = got == want or (want == "number" and got == "integer")
        if not ok:
            return [("FieldValueTypeInvalid", where,
                     f'Invalid value: "{got}": {where} in body must be of type {want}: "{got}"')], 0
        matched += 1
    if isinstance(obj, str) and "format" in schema:
        check = formats.checker(schema["format"])
        if check is not None and not check(obj):
            return [("FieldValueTypeInvalid", where, f"Invalid value: {_go(obj)}: {where} in body must be of type "
                     f"{schema['format']}: {_go(obj)}")], matched
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
                                   f"{_items(schema[limit])}"))
        if isinstance(schema.get("items"), dict):
            for i, item in enumerate(obj):
                found, n = _validate(item, schema["items"], f"{where}[{i}]")
                causes += found
                matched += n
    if isinstance(obj, dict):
        if "maxProperties" in schema and len(obj) > schema["maxProperties"]:
            causes.append(("FieldValueTooMany", where, f"Too many: {len(obj)}: must have at most "
                           f"{_items(schema['maxProperties'])}"))
        if "minProperties" in schema and len(obj) < schema["minProperties"]:
            causes.append(("FieldValueInvalid", where, f"Invalid value: {len(obj)}: {where} in body should have at "
                           f"least {schema['minProperties']} properties"))
        for req in schema.get("required") or []:
            if req not in obj:
                causes.append(("FieldValueRequired", _join(path, req), "Required value"))
            else:
                matched += 1
        props = schema.get("properties") or {}
        nested: list[Cause] = []
        for key, value in sorted(obj.items()):
            sub = props.get(key)
            if sub is None and isinstance(schema.get("additionalProperties"), dict):
                sub = schema["additionalProperties"]
            if sub is not None and not (not path and key in ("apiVersion", "kind", "metadata")):
                found, n = _validate(value, sub, _join(path, key))
                nested += found
                matched += n if found else n + 1
        # the real validator reports enum violations after the other errors of the same object
        causes += [c for c in nested if c[0] != "FieldValueNotSupported"]
        causes += [c for c in nested if c[0] == "FieldValueNotSupported"]
    causes += _junctors(obj, schema, path, where)
    return causes, matched + (0 if causes else 1)


def _not_int_or_string(obj: Any, schema: dict[str, Any], where: str) -> list[Cause]:
    """An int-or-string holding something else: its type's error, and with the usual anyOf pattern that
    pattern's errors too (none of its branches holds; the first, integer, is the one reported)."""
    got = _type_of(obj)
    def typed(want: str) -> Cause:
        return ("FieldValueTypeInvalid", where, f'Invalid value: "{got}": {where} in body must be of type {want}: '
                f'"{got}"')
    if schema.get("anyOf") == [{"type": "integer"}, {"type": "string"}]:
        return [("FieldValueInvalid", "<nil>", f'Invalid value: "": "{where}" must validate at least one schema '
                 "(anyOf)"), typed("integer,string"), typed("integer")]
    return [typed("integer,string")]


def _junctors(obj: Any, schema: dict[str, Any], path: str, where: str) -> list[Cause]:
    """allOf, anyOf, oneOf and not, with go-openapi's messages (on the field ``<nil>``) and the errors it
    keeps: every failing branch of an allOf, the best failing branch of an anyOf or a oneOf."""
    def nil(why: str) -> Cause:
        return ("FieldValueInvalid", "<nil>", f'Invalid value: "": "{where}" {why}')

    out: list[Cause] = []
    if schema.get("x-kubernetes-int-or-string") and schema.get("anyOf") in (
            [{"type": "integer"}, {"type": "string"}], [{"type": "string"}, {"type": "integer"}]):
        branches_of_any: list[Any] = []  # the int-or-string pattern, not a constraint
    else:
        branches_of_any = [b for b in schema.get("anyOf") or [] if isinstance(b, dict)]
    if isinstance(schema.get("allOf"), list):
        failed = [_validate(obj, b, path)[0] for b in schema["allOf"] if isinstance(b, dict)]
        if any(failed):
            out.append(nil("must validate all the schemas (allOf)"))
            out += [c for f in failed for c in f]
    for key, branches in (("anyOf", branches_of_any), ("oneOf", [b for b in schema.get("oneOf") or []
                                                                if isinstance(b, dict)])):
        if not branches:
            continue
        results = [_validate(obj, b, path) for b in branches]
        valid = sum(1 for found, _ in results if not found)
        best: list[Cause] | None = None
        best_n = -1
        for found, n in results:
            if found and n > best_n:
                best, best_n = found, n
        if key == "anyOf" and not valid:
            out += [nil("must validate at least one schema (anyOf)"), *(best or [])]
        elif key == "oneOf" and valid != 1:
            if valid:
                out.append(nil(f"must validate one and only one schema (oneOf). Found {valid} valid alternatives"))
            else:
                out += [nil("must validate one and only one schema (oneOf). Found none valid"), *(best or [])]
    if isinstance(schema.get("not"), dict) and not _validate(obj, schema["not"], path)[0]:
        out.append(nil("must not validate the schema (not)"))
    return out


def list_causes(obj: Any, schema: dict[str, Any] | None, path: str = "") -> list[Cause]:
    """x-kubernetes-list-type: no item of a ``set`` twice, no key of a ``map`` twice (each second
    appearance reported, as the real server's listtype validation does)."""
    if not isinstance(schema, dict):
        return []
    out: list[Cause] = []
    if isinstance(obj, dict):
        props = schema.get("properties") or {}
        extra = schema.get("additionalProperties") if isinstance(schema.get("additionalProperties"), dict) else None
        for key, value in obj.items():
            if not path and key in ("apiVersion", "kind", "metadata"):
                continue
            sub = props.get(key, extra)
            out += list_causes(value, sub, _join(path, key))
    elif isinstance(obj, list):
        kind = schema.get("x-kubernetes-list-type")
        if kind == "set":
            out += [("FieldValueDuplicate", f"{path}[{i}]", f"Duplicate value: {_dup(obj[i])}")
                    for i in _second_appearances(obj)]
        elif kind == "map":
            out += _map_duplicates(obj, schema.get("x-kubernetes-list-map-keys") or [], path)
        for i, item in enumerate(obj):
            out += list_causes(item, schema.get("items"), f"{path}[{i}]")
    return out


def _identity(value: Any) -> Any:
    if isinstance(value, (dict, list)):
        return ("json", json.dumps(value, sort_keys=True, separators=(",", ":")))
    return (type(value).__name__, value)


def _second_appearances(items: list[Any]) -> list[int]:
    seen: dict[Any, int] = {}
    out = []
    for i, item in enumerate(items):
        key = _identity(item)
        seen[key] = seen.get(key, 0) + 1
        if seen[key] == 2:
            out.append(i)
    return out


def _dup(value: Any) -> str:
    if isinstance(value, (dict, list)):
        return json.dumps(value, sort_keys=True, separators=(",", ":"))
    return _go(value)


def _map_duplicates(items: list[Any], keys: list[str], path: str) -> list[Cause]:
    for i, item in enumerate(items):
        if item is not None and not isinstance(item, dict):
            return [("FieldValueInvalid", f"{path}[{i}]", f"Invalid value: {_dup(item)}: must be an object for an "
                     "array of list-type map")]
    if len(items) <= 1:
        return []
    found = [{k: item[k] for k in keys if k in item} if isinstance(item, dict) else {} for item in items]
    return [("FieldValueDuplicate", f"{path}[{i}]", f"Duplicate value: {_dup(found[i])}")
            for i in _second_appearances(found)]


def _items(n: int) -> str:
    return "1 item" if n == 1 else f"{n} items"


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
    if isinstance(schema.get("multipleOf"), (int, float)) and not isinstance(schema["multipleOf"], bool):
        out += _multiple_of(obj, schema["multipleOf"], where)
    return out


def _multiple_of(obj: float, factor: float, where: str) -> list[Cause]:
    """go-openapi's: an integer value against the factor truncated to an integer (``multipleOf: 2.5``
    refuses 7 as not a multiple of 2; ``0.1`` as a factor that is not positive), a number within a
    relative 1e-9."""
    import math

    if isinstance(obj, int):
        factor = int(factor)
    if factor <= 0:
        return [("FieldValueInvalid", where, f"Invalid value: {_go(factor)}: factor MultipleOf declared for {where} "
                 f"must be positive: {_go(factor)}")]
    if isinstance(obj, int):
        ok = obj % int(factor) == 0
    else:
        mult = (1 / factor) * obj if factor < 1 else obj / factor
        whole = float(math.trunc(mult)) if math.isfinite(mult) else math.nan
        ok = mult == whole or (whole != 0 and abs(mult - whole) / (abs(mult) + abs(whole)) < 1e-9)
    if ok:
        return []
    return [("FieldValueInvalid", where, f"Invalid value: {_go(obj)}: {where} in body should be a multiple of "
             f"{_go(factor)}")]


def _string(obj: str, schema: dict[str, Any], where: str) -> list[Cause]:
    out: list[Cause] = []
    if "minLength" in schema and len(obj) < schema["minLength"]:
        out.append(("FieldValueInvalid", where, f"Invalid value: {_go(obj)}: {where} in body should be at "
                    f"least {schema['minLength']} chars long"))
    if "maxLength" in schema and len(obj) > schema["maxLength"]:
        unit = "byte" if schema["maxLength"] == 1 else "bytes"
        out.append(("FieldValueTooLong", where, f"Too long: may not be more than {schema['maxLength']} {unit}"))
    if "pattern" in schema and not re.search(schema["pattern"], obj):
        out.append(("FieldValueInvalid", where, f"Invalid value: {_go(obj)}: {where} in body should match "
                    f"'{schema['pattern']}'"))
    return out
