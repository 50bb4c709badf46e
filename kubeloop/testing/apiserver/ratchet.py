"""Validation ratcheting (CRDValidationRatcheting, on by default since Kubernetes 1.30, GA in 1.33): on an
update, a schema error is dropped when the value it was found at is unchanged from the old object, so a
custom resource stored before its schema was tightened can still be updated elsewhere.

An error belongs to the node whose check produced it: a missing required field to its parent, an
allOf/anyOf/oneOf/not failure (reported on ``<nil>``) to the field its message names; it is dropped when
that node, or a node above it, is unchanged (a node's result includes its descendants'). The old value
is found by correlation: object fields by name, a map list's items by their keys; the items of other
lists (sets too) do not correlate (only the whole list can be unchanged). CEL rules ratchet the same
way (``cel.py``), except transition rules, which see oldSelf.
"""

from __future__ import annotations

import re
from typing import Any

Cause = tuple[str, str, str]
_MISSING = object()
_STEP = re.compile(r"\.?([^.\[\]]+)|\[(\d+)\]")
_NAMED = re.compile(r'^Invalid value: "": "([^"]*)" must ')


def unchanged_dropped(causes: list[Cause], new: Any, old: Any, schema: dict[str, Any] | None) -> list[Cause]:
    """The causes of an update's schema validation, without those on values the update did not change."""
    return [c for c in causes if not _unchanged(_owner(c), new, old, schema)]


def _owner(cause: Cause) -> str:
    reason, field, message = cause
    if field == "<nil>":
        named = _NAMED.match(message)
        return named.group(1) if named else "\0"  # (unknown: never ratcheted)
    if reason == "FieldValueRequired":  # (the parent's "required" check)
        return field.rsplit(".", 1)[0] if "." in field else ""
    return "" if field in ("<root>", "") else field


def _unchanged(path: str, new: Any, old: Any, schema: dict[str, Any] | None) -> bool:
    """Whether a node on the way from the root's fields to ``path`` correlates with an equal old value."""
    if path == "\0":
        return False
    if path == "<root>":
        path = ""
    for name, index in _STEP.findall(path):
        if index:
            i = int(index)
            if not isinstance(new, list) or i >= len(new):
                return False
            item = new[i]
            old = _correlated(schema or {}, item, old)
            new, schema = item, (schema or {}).get("items")
        else:
            if not isinstance(new, dict) or name not in new:
                return False
            props = (schema or {}).get("properties") or {}
            extra = (schema or {}).get("additionalProperties")
            schema = props.get(name, extra if isinstance(extra, dict) else None)
            new = new[name]
            old = old.get(name, _MISSING) if isinstance(old, dict) else _MISSING
        if old is _MISSING:
            return False
        if old == new:  # (an unchanged node's result, its descendants' errors included, turns to warnings)
            return True
    return False


def _correlated(schema: dict[str, Any], item: Any, old: Any) -> Any:
    """The old item a list's item correlates with (``_MISSING`` when none)."""
    if not isinstance(old, list):
        return _MISSING
    if schema.get("x-kubernetes-list-type") == "map" and isinstance(item, dict):
        keys = schema.get("x-kubernetes-list-map-keys") or []
        return next((o for o in old if isinstance(o, dict) and all(o.get(k) == item.get(k) for k in keys)),
                    _MISSING)
    return _MISSING
