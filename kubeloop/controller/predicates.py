"""Predicates decide which cache events are worth a reconcile. Each takes an ``Event`` of any type:
``added``, ``modified`` and ``deleted`` (a predicate that returns False for a deletion keeps it from
the reconciler and ``on_deleted``; the ones here pass deletions)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any

from kubeloop.cache.informer import Event

Predicate = Callable[[Event], bool]

log = logging.getLogger("kubeloop.predicates")


def passes(predicates: Sequence[Predicate], event: Event) -> bool:
    """Whether every predicate passes ``event``. Each is asked on its own: one that raises is logged and
    counts as passing (an extra level-based reconcile is harmless, a missed one is not), and the
    others still decide."""
    ok = True
    for predicate in predicates:
        try:
            ok = bool(predicate(event)) and ok
        except Exception:
            name = getattr(predicate, "__name__", repr(predicate))
            meta = (event.object or {}).get("metadata", {})
            log.exception("predicate %s raised on the %s event of %s/%s; counted as passing", name, event.type,
                          meta.get("namespace", ""), meta.get("name"))
    return ok


def _meta(obj: dict[str, Any] | None, field: str) -> object:
    return (obj or {}).get("metadata", {}).get(field)


def generation_changed(event: Event) -> bool:
    """Skips updates that did not change ``metadata.generation`` (status-only or metadata-only)."""
    if event.type != "modified" or event.old is None:
        return True
    return _meta(event.old, "generation") != _meta(event.object, "generation")


def labels_changed(event: Event) -> bool:
    """Skips updates that did not change ``metadata.labels``."""
    return event.type != "modified" or _meta(event.old, "labels") != _meta(event.object, "labels")


def annotations_changed(event: Event) -> bool:
    """Skips updates that did not change ``metadata.annotations``."""
    return event.type != "modified" or _meta(event.old, "annotations") != _meta(event.object, "annotations")


def any_of(*predicates: Predicate) -> Predicate:
    """Passes an event when any of ``predicates`` passes it."""
    return lambda event: any(p(event) for p in predicates)


def has_label(key: str, value: str | None = None) -> Predicate:
    """Passes events of objects labelled ``key`` (with ``value``, when given)."""
    def check(event: Event) -> bool:
        labels = _meta(event.object, "labels") or {}
        return key in labels and (value is None or labels[key] == value)  # type: ignore[operator,index]
    return check
