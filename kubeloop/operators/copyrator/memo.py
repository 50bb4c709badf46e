"""Work kept between a rule's reconciles: per rule, one value per object, computed again only when the
object (or the rule) changed. A write to one of the thousands of objects a rule meets then costs that
object's work, not every object's again.

- A value is current while the object's resourceVersion, and the stamp of everything else it was
  computed from (the rule's generation, say), are those it was computed with. Objects without a uid or a
  resourceVersion (made by hand, never read from the API server) are never kept.
- Each pass over a rule (:meth:`PerRule.pass_for`) keeps the values of the objects it met, so objects
  gone since are dropped; :meth:`PerRule.forget` drops a rule's. Lifetime: one operator run (``World``).
- Only a rule's own reconcile makes a pass over it, and the work queue runs one reconcile per rule at a
  time: no two passes share a rule's values.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping
from typing import Any, Generic, TypeVar

V = TypeVar("V")
Kept = dict[str, tuple[str, V]]  # uid → (resourceVersion, value)


class PerRule(Generic[V]):
    def __init__(self) -> None:
        self._rules: dict[str, tuple[Hashable, Kept[V]]] = {}

    def pass_for(self, rule_key: str, stamp: Hashable,
                 compute: Callable[[Mapping[str, Any]], V]) -> Callable[[Mapping[str, Any]], V]:
        """``compute`` for one pass over the rule's objects, taken from the last pass where current."""
        before_stamp, before = self._rules.get(rule_key, (None, {}))
        if before_stamp != stamp:
            before = {}
        now: Kept[V] = {}
        self._rules[rule_key] = (stamp, now)

        def value(obj: Mapping[str, Any]) -> V:
            meta = obj.get("metadata") or {}
            uid, version = meta.get("uid"), meta.get("resourceVersion")
            if not uid or not version:
                return compute(obj)
            kept = now.get(uid) or before.get(uid)
            if kept is None or kept[0] != version:
                kept = (version, compute(obj))
            now[uid] = kept
            return kept[1]
        return value

    def kept(self, rule_key: str, stamp: Hashable, obj: Mapping[str, Any]) -> V | None:
        """The value the rule's last (or running) pass took for ``obj``'s uid, at whatever version; None if
        it took none or the rule's stamp has changed since."""
        entry = self._rules.get(rule_key)
        if entry is None or entry[0] != stamp:
            return None
        kept = entry[1].get((obj.get("metadata") or {}).get("uid") or "")
        return kept[1] if kept is not None else None

    def forget(self, rule_key: str) -> None:
        self._rules.pop(rule_key, None)
