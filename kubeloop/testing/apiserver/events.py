"""An events.k8s.io/v1 Event's rules (core validation's ``ValidateEventCreate`` for that API, which
runs the legacy rules on the Event as core v1 sees it): the reporting fields, action and reason
required and at most 128 characters, a note of at most 1024, an event time, a type of Normal or
Warning, a series of at least 2, and none of the deprecated core fields. Causes name the core v1
fields (``message``, ``involvedObject``), as the real server reports them."""

from __future__ import annotations

from typing import Any

from kubeloop.testing.apiserver import names
from kubeloop.testing.apiserver.causes import Cause, invalid, required

_DEPRECATED = (("deprecatedFirstTimestamp", "firstTimestamp"), ("deprecatedLastTimestamp", "lastTimestamp"),
               ("deprecatedCount", "count"))


def causes(obj: dict[str, Any], ns: str, *, creating: bool = True) -> list[Cause]:
    """On update only the legacy rules (what may change is in ``validation``'s immutable fields)."""
    involved = _regarding_namespace(obj)
    out = (timed(obj, ns, involved=involved, reporter="reportingController", note=("note", 1024))
           if obj.get("eventTime") else untimed(involved, ns))
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


def untimed(involved: str, ns: str) -> list[Cause]:
    """An Event without an event time is checked as an old one: its object's namespace is its own."""
    if (not involved and ns not in ("", "default")) or (involved and involved != ns):
        return [invalid("involvedObject.namespace", involved, "does not match event.namespace")]
    return []


def timed(obj: dict[str, Any], ns: str, *, involved: str, reporter: str, note: tuple[str, int]) -> list[Cause]:
    """An Event with an event time, in either API (legacyValidateEvent): its object's namespace given (or
    a system namespace), the reporter (``reporter``: each API's name for it) a qualified name, the
    reporting instance, action and reason required and at most 128 characters, the note (``note``: each
    API's field and limit) reported as core v1's ``message``."""
    out: list[Cause] = []
    if not involved and ns not in ("default", "kube-system"):
        out.append(invalid("involvedObject.namespace", involved, "does not match event.namespace"))
    value = obj.get(reporter) or ""
    if not value:
        out.append(required(reporter))
    out += [invalid(reporter, value, e) for e in names.qualified_name(value)]
    for field in ("reportingInstance", "action", "reason"):
        value = obj.get(field) or ""
        if not value:
            out.append(required(field))
        elif len(value) > 128:
            out.append(invalid(field, "", "can have at most 128 characters"))
    field, limit = note
    if len(obj.get(field) or "") > limit:
        out.append(invalid("message", "", f"can have at most {limit} characters"))
    return out


# events.k8s.io/v1 field → core v1 field (pkg/apis/events/v1's conversion); the others keep their names.
_RENAMED = (("regarding", "involvedObject"), ("note", "message"), ("deprecatedSource", "source"),
            ("reportingController", "reportingComponent"), *_DEPRECATED)
_SAME = ("metadata", "eventTime", "series", "related", "action", "reason", "type", "reportingInstance")


def to_core(event: dict[str, Any]) -> dict[str, Any]:
    """An events.k8s.io/v1 Event as the core v1 Event it is stored as."""
    out: dict[str, Any] = {"apiVersion": "v1", "kind": "Event"}
    out.update({k: event[k] for k in _SAME if k in event})
    out.update({core: event[v1] for v1, core in _RENAMED if v1 in event})
    return out


def from_core(event: dict[str, Any]) -> dict[str, Any]:
    """A stored core v1 Event as events.k8s.io/v1 has it (empty fields left out: what Go writes even when
    empty is added when it is served, by ``objects.serialized``)."""
    out: dict[str, Any] = {"apiVersion": "events.k8s.io/v1", "kind": "Event"}
    out.update({k: event[k] for k in _SAME if k in event})
    out.update({v1: event[core] for v1, core in _RENAMED if core in event and event[core] not in ({}, None, 0, "")})
    return out
