"""Label selectors, in both spellings Kubernetes uses: the query string (``a=b,c!=d,e in (x,y),g,!h``)
and the structured ``LabelSelector`` of API objects. Either becomes requirements that match labels of
cached objects; a ``LabelSelector`` also renders as a query string for server-side filtering."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # a type only: the models (pydantic) are not loaded for a dict-only run
    from kubeloop.resources.types import LabelSelector

_SET = re.compile(r"^\s*(!?)\s*([^\s!=(),]+)\s*(?:(in|notin)\s*\(([^)]*)\)|(==|=|!=)\s*([^\s,()]*))?\s*$")


@dataclass(frozen=True)
class Requirement:
    key: str
    op: str  # "in", "notin", "exists", "!"
    values: frozenset[str] = frozenset()

    def matches(self, labels: Mapping[str, str]) -> bool:
        if self.op == "exists":
            return self.key in labels
        if self.op == "!":
            return self.key not in labels
        if self.op == "in":
            return labels.get(self.key) in self.values
        return labels.get(self.key) not in self.values


def parse(selector: str | None) -> tuple[Requirement, ...]:
    """Raises ValueError on a malformed selector (a bad setting should stop the operator at once)."""
    out = []
    for part in split(selector or ""):
        m = _SET.match(part)
        if not m:
            raise ValueError(f"invalid label selector requirement {part!r} in {selector!r}")
        negate, key, set_op, set_values, op, value = m.groups()
        if negate and (set_op or op):
            raise ValueError(f"invalid label selector requirement {part!r} in {selector!r}")
        if set_op:
            values = frozenset(v.strip() for v in set_values.split(",") if v.strip())
            out.append(Requirement(key, set_op, values))
        elif op:
            out.append(Requirement(key, "notin" if op == "!=" else "in", frozenset((value,))))
        else:
            out.append(Requirement(key, "!" if negate else "exists"))
    return tuple(out)


def matches(requirements: tuple[Requirement, ...], labels: Mapping[str, str] | None) -> bool:
    return all(r.matches(labels or {}) for r in requirements)


def split(selector: str) -> list[str]:
    """Splits on the commas that are not inside ``in (...)`` value lists."""
    parts, depth, current = [], 0, ""
    for ch in selector:
        depth += (ch == "(") - (ch == ")")
        if ch == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += ch
    parts.append(current)
    return [p for p in parts if p.strip()]


_QUERY = {"In": "{key} in ({values})", "NotIn": "{key} notin ({values})", "Exists": "{key}",
          "DoesNotExist": "!{key}"}
_OPS = {"In": "in", "NotIn": "notin", "Exists": "exists", "DoesNotExist": "!"}


def to_query(selector: LabelSelector | None) -> str | None:
    """A LabelSelector in the query syntax the API server filters with (None: no filter)."""
    if selector is None:
        return None
    terms = [f"{k}={v}" for k, v in sorted((selector.matchLabels or {}).items())]
    terms += [_QUERY[r.operator].format(key=r.key, values=",".join(r.values or ()))
              for r in selector.matchExpressions or ()]
    return ",".join(terms) or None


def requirements(selector: LabelSelector | None) -> tuple[Requirement, ...]:
    """A LabelSelector as requirements, to match cached objects client-side."""
    if selector is None:
        return ()
    out = [Requirement(k, "in", frozenset((v,))) for k, v in sorted((selector.matchLabels or {}).items())]
    out += [Requirement(r.key, _OPS[r.operator], frozenset(r.values or ()))
            for r in selector.matchExpressions or ()]
    return tuple(out)
