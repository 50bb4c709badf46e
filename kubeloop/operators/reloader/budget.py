"""The regular expressions one namespace may have matched: a budget per namespace, not per match.

Each workload's expressions are matched against every ConfigMap or Secret name of its namespace, again
whenever one of them changes. RE2 makes each match linear and ``policy.MAX_PATTERNS`` bounds one
workload, but a tenant with many workloads would multiply the work. So the distinct expressions in use
across a namespace are bounded too: the first MAX_PER_NAMESPACE distinct ones (in the order workloads are
reconciled) are used; the expressions of a workload that do not fit match nothing (a Warning says so)
until others are removed. An expression several workloads share is counted once (it is compiled
and matched once: ``policy.name_matcher`` caches by content).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

MAX_PER_NAMESPACE = 64


@dataclass
class PatternBudget:
    """namespace → workload key → the expressions it was granted."""

    limit: int = MAX_PER_NAMESPACE
    granted: dict[str, dict[str, frozenset[str]]] = field(default_factory=dict)

    def admit(self, namespace: str, workload: str, patterns: frozenset[str],
              exists: Callable[[str], bool] = lambda key: True) -> frozenset[str]:
        """The subset of ``patterns`` the workload may use; the rest are over the namespace's budget.
        ``exists`` tells whether another workload is still there (deleted ones give their share back)."""
        holders = self.granted.setdefault(namespace, {})
        holders.pop(workload, None)
        in_use = set().union(*holders.values()) if holders else set()
        if len(in_use | patterns) > self.limit:
            for key in [k for k in holders if not exists(k)]:
                del holders[key]
            in_use = set().union(*holders.values()) if holders else set()
        room = self.limit - len(in_use)
        fresh = sorted(patterns - in_use)
        mine = frozenset(patterns & in_use) | frozenset(fresh[:max(room, 0)])
        if mine:
            holders[workload] = mine
        elif not holders:
            self.granted.pop(namespace, None)
        return mine

    def release(self, namespace: str, workload: str) -> None:
        holders = self.granted.get(namespace, {})
        holders.pop(workload, None)
        if not holders:
            self.granted.pop(namespace, None)
