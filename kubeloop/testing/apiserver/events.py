"""An events.k8s.io/v1 Event's rules (core validation's ``ValidateEventCreate`` for that API, which
runs the legacy rules on the Event as core v1 sees it): the reporting fields, action and reason
required and at most 128 characters, a note of at most 1024, an event time, a type of Normal or
Warning, a series of at least 2, and none of the deprecated core fields. Causes name the core v1
fields (``message``, ``involvedObject``), as the real server reports them."""

from __future__ import annotations

from typing import Any

from kubeloop.testing.apiserver import names
from kubeloop.testing.apiserver.causes import Cause, invalid, required

_LIMITS = (("reportingInstance", "reportingInstance", 128), ("action", "action", 128), ("reason", "reason", 128))
_DEPRECATED = (("deprecatedFirstTimestamp", "firstTimestamp"), ("deprecatedLastTimestamp", "lastTimestamp"),
               ("deprecatedCount", "count"))


def causes(obj: dict[str, Any], ns: str, *, creating: bool = True) -> list[Cause]:
    """On update only the legacy rules (what may change is in ``validation``'s immutable fields)."""
    out = _legacy(obj, ns) if obj.get("eventTime") else _untimed(obj, ns)
    if not creating:
        return out
    series = obj.get("series")
    if isinstance(series, dict):
        if not isinstance(series.get("count"), int) or series["count"] < 2:
            out.append(invalid("series.count", "", "should be at least 2"))
        if not series.get("lastObservedTime"):
            out.append(required("series.lastObservedTime"))
    if not obj.get("eventTime"):
        out.append(required("eventTime"))
    if obj.get("type") not in ("Normal", "Warning"):
        out.append(invalid("type", "", f"has invalid value: {obj.get('type') or ''}"))
    out += [invalid(core, "", "needs to be unset") for field, core in _DEPRECATED if obj.get(field)]
    source = obj.get("deprecatedSource")
    if isinstance(source, dict) and (source.get("component") or source.get("host")):
        out.append(invalid("source", "", "needs to be unset"))
    return out


def _regarding_namespace(obj: dict[str, Any]) -> str:
    regarding = obj.get("regarding")
    return (regarding.get("namespace") or "") if isinstance(regarding, dict) else ""


def _untimed(obj: dict[str, Any], ns: str) -> list[Cause]:
    """Without an event time it is checked as an old Event: its object's namespace is its own."""
    involved = _regarding_namespace(obj)
    if (not involved and ns not in ("", "default")) or (involved and involved != ns):
        return [invalid("involvedObject.namespace", involved, "does not match event.namespace")]
    return []


def _legacy(obj: dict[str, Any], ns: str) -> list[Cause]:
    out: list[Cause] = []
    involved = _regarding_namespace(obj)
    if not involved and ns not in ("default", "kube-system"):
        out.append(invalid("involvedObject.namespace", involved, "does not match event.namespace"))
    controller = obj.get("reportingController") or ""
    if not controller:
        out.append(required("reportingController"))
    out += [invalid("reportingController", controller, e) for e in names.qualified_name(controller)]
    for field, shown, limit in _LIMITS:
        value = obj.get(field) or ""
        if not value:
            out.append(required(shown))
        elif len(value) > limit:
            out.append(invalid(shown, "", f"can have at most {limit} characters"))
    if len(obj.get("note") or "") > 1024:
        out.append(invalid("message", "", "can have at most 1024 characters"))
    return out
