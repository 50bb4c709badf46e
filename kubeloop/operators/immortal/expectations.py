"""Creation expectations, as the ReplicaSet controller keeps them: after creating a pod, do not decide
anything about "the pod is missing" until the cache has seen that pod (or the time limit passed).

Without them, a reconcile woken by some other event right after a create would find no pod in a cache
that lags behind, and try to create it again.
"""

from __future__ import annotations

from collections.abc import Callable

from kubeloop import clock as loop_clock


class Expectations:
    def __init__(self, ttl: float = 30.0, clock: Callable[[], float] = loop_clock.monotonic) -> None:
        self.ttl = ttl  # a watch event can be lost to a relist; never wait forever for it
        self.clock = clock
        self._pending: dict[str, tuple[str, float]] = {}  # object key → (pod UID, deadline)

    def expect(self, key: str, pod_uid: str) -> None:
        now = self.clock()
        # Entries of objects deleted before their pod was seen would stay forever: drop expired ones.
        for stale in [k for k, (_, deadline) in self._pending.items() if deadline <= now]:
            del self._pending[stale]
        self._pending[key] = (pod_uid, now + self.ttl)

    def observe(self, key: str, pod_uid: str) -> None:
        """The cache delivered an event about pod ``pod_uid`` (added, changed or deleted)."""
        pending = self._pending.get(key)
        if pending and pending[0] == pod_uid:
            del self._pending[key]

    def waiting(self, key: str) -> float:
        """Seconds left to wait for the cache (0 = nothing pending, go ahead)."""
        pending = self._pending.get(key)
        if pending is None:
            return 0.0
        left = pending[1] - self.clock()
        if left <= 0:
            del self._pending[key]
            return 0.0
        return left

    def forget(self, key: str) -> None:
        self._pending.pop(key, None)

    def clear(self) -> None:
        self._pending.clear()
