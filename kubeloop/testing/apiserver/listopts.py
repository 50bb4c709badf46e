"""The real server's checks of a list's or watch's options (apimachinery's ``ValidateListOptions``), and of
a ``resourceVersion`` that is not a number: what kube-apiserver 1.35 answers, checked by the differential
suite (``list_options_are_validated``).

- A list: ``resourceVersionMatch`` needs a ``resourceVersion``, refuses a ``continue``, is ``Exact`` or
  ``NotOlderThan``, and ``Exact`` is refused for ``resourceVersion=0``; ``sendInitialEvents`` is for
  watches only. All causes in one 422 on ``ListOptions.meta.k8s.io``.
- A watch: ``sendInitialEvents`` (true or false) needs ``resourceVersionMatch=NotOlderThan``, and that
  match is only allowed with ``sendInitialEvents`` and without ``continue``.
- A ``resourceVersion`` that is not an unsigned integer: 400 on a list, 500 (no reason) on a watch or a
  get.
"""

from __future__ import annotations

import re
from typing import Any

from kubeloop.testing.apiserver import errors

_TRUE = {"1", "t", "T", "TRUE", "true", "True"}
_FALSE = {"0", "f", "F", "FALSE", "false", "False"}
_UINT64_MAX = 2**64 - 1


def truthy(value: str | None) -> bool:
    """Go's ``strconv.ParseBool`` of a query parameter, false when absent or not a boolean."""
    return (value or "") in _TRUE


def _forbidden(field: str, why: str) -> tuple[str, str, str]:
    return ("FieldValueForbidden", field, f"Forbidden: {why}")


def _not_supported(value: str, supported: tuple[str, ...]) -> tuple[str, str, str]:
    shown = ", ".join(f'"{s}"' for s in supported)
    return ("FieldValueNotSupported", "resourceVersionMatch",
            f'Unsupported value: "{value}": supported values: {shown}')


def causes(q: Any, watch: bool) -> list[tuple[str, str, str]]:
    match = q.get("resourceVersionMatch") or ""
    initial = "sendInitialEvents" in q
    out: list[tuple[str, str, str]] = []
    if watch:
        if initial and match != "NotOlderThan":
            out.append(_forbidden("resourceVersionMatch", "sendInitialEvents requires setting resourceVersionMatch "
                                                          "to NotOlderThan"))
        if match:
            if not initial:
                out.append(_forbidden("resourceVersionMatch", "resourceVersionMatch is forbidden for watch unless "
                                                              "sendInitialEvents is provided"))
            if match != "NotOlderThan":
                out.append(_not_supported(match, ("NotOlderThan",)))
            if q.get("continue"):
                out.append(_forbidden("resourceVersionMatch", "resourceVersionMatch is forbidden when continue is "
                                                              "provided"))
        return out
    if match:
        if not q.get("resourceVersion"):
            out.append(_forbidden("resourceVersionMatch", "resourceVersionMatch is forbidden unless resourceVersion "
                                                          "is provided"))
        if q.get("continue"):
            out.append(_forbidden("resourceVersionMatch", "resourceVersionMatch is forbidden when continue is "
                                                          "provided"))
        if match not in ("Exact", "NotOlderThan"):
            out.append(_not_supported(match, ("Exact", "NotOlderThan", "")))
        if match == "Exact" and q.get("resourceVersion") == "0":
            out.append(_forbidden("resourceVersionMatch", 'resourceVersionMatch "exact" is forbidden for '
                                                          'resourceVersion "0"'))
    if initial:
        out.append(_forbidden("sendInitialEvents", "sendInitialEvents is forbidden for list"))
    return out


def check(q: Any, watch: bool) -> None:
    """Raises the real 422 for invalid list or watch options."""
    found = causes(q, watch)
    if found:
        raise errors.invalid("ListOptions", "meta.k8s.io", "", found)


def parse_error(rv: str) -> str | None:
    """Go's ``strconv.ParseUint`` error for a resourceVersion that is not a uint64 (None if it is one)."""
    if not rv:
        return None
    if not re.fullmatch(r"[0-9]+", rv):
        return f'resourceVersion: Invalid value: "{rv}": strconv.ParseUint: parsing "{rv}": invalid syntax'
    if int(rv) > _UINT64_MAX:
        return f'resourceVersion: Invalid value: "{rv}": strconv.ParseUint: parsing "{rv}": value out of range'
    return None


def check_resource_version(rv: str | None, *, listing: bool) -> None:
    """A list answers 400 for a resourceVersion that does not parse; a watch or a get 500 (no reason)."""
    why = parse_error(rv or "")
    if why is None:
        return
    if listing:
        raise errors.bad_request(f"invalid resource version: {why}")
    raise errors.StatusError(500, "", why)
