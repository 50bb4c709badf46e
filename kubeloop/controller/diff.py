"""Field diffs between two states of an object, for cause-based update handlers."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# What the server changes on its own: never a reason to call an update handler.
_IGNORED_META = {"resourceVersion", "managedFields", "generation", "uid", "creationTimestamp",
                 "selfLink", "deletionGracePeriodSeconds"}


@dataclass(frozen=True, slots=True)
class Change:
    op: str  # "add" | "change" | "remove"
    path: tuple[str, ...]
    old: Any
    new: Any


def essence(obj: dict[str, Any]) -> dict[str, Any]:
    """What a user means by "the object": everything but status and server bookkeeping."""
    meta = {k: v for k, v in (obj.get("metadata") or {}).items() if k not in _IGNORED_META}
    return {**{k: v for k, v in obj.items() if k not in ("status", "metadata")}, "metadata": meta}


def diff(old: Any, new: Any, path: tuple[str, ...] = ()) -> list[Change]:
    if isinstance(old, dict) and isinstance(new, dict):
        out: list[Change] = []
        for key in sorted(old.keys() | new.keys()):
            if key not in new:
                out.append(Change("remove", path + (key,), old[key], None))
            elif key not in old:
                out.append(Change("add", path + (key,), None, new[key]))
            else:
                out.extend(diff(old[key], new[key], path + (key,)))
        return out
    if old != new:
        return [Change("change", path, old, new)]
    return []


def under(changes: list[Change], field: str | None) -> list[Change]:
    """Changes at or below a dotted field path (``spec.image``); all of them when field is None."""
    if not field:
        return changes
    prefix = tuple(field.split("."))
    return [c for c in changes if c.path[:len(prefix)] == prefix or prefix[:len(c.path)] == c.path]
