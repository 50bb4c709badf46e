"""The causes of a 422 Invalid, worded as apimachinery's ``field.Error`` words them: (reason, field,
message). Shared by the validation modules, so that each kind's rules read like the real server's."""

from __future__ import annotations

import json
from typing import Any

Cause = tuple[str, str, str]


def shown(value: Any) -> str:
    """A bad value as Go's validation prints it: strings quoted, maps and lists as compact JSON."""
    if isinstance(value, (dict, list)):
        return json.dumps(value, separators=(",", ":"))
    if isinstance(value, bool):
        return "true" if value else "false"
    return f'"{value}"' if isinstance(value, str) else "null" if value is None else str(value).replace("'", '"')


def invalid(field: str, value: Any, msg: str) -> Cause:
    return ("FieldValueInvalid", field, f"Invalid value: {shown(value)}: {msg}")


def required(field: str, msg: str = "") -> Cause:
    return ("FieldValueRequired", field, "Required value" + (f": {msg}" if msg else ""))


def unsupported(field: str, value: Any, supported: list[str]) -> Cause:
    listed = ", ".join(f'"{s}"' for s in supported)
    return ("FieldValueNotSupported", field, f"Unsupported value: {shown(value)}: supported values: {listed}")


def forbidden(field: str, msg: str) -> Cause:
    return ("FieldValueForbidden", field, f"Forbidden: {msg}")


def duplicate(field: str, value: Any) -> Cause:
    return ("FieldValueDuplicate", field, f"Duplicate value: {shown(value)}")


def mapping(value: Any) -> dict[str, Any]:
    """``value`` if it is an object, else an empty one (a wrong type is the decoder's to refuse)."""
    return value if isinstance(value, dict) else {}


def listing(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []
