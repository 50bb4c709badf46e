"""Reconnect backoff with client-go's reflector defaults: 0.8 s doubling to 30 s, full jitter,
reset once a connection has stayed healthy for a while."""

from __future__ import annotations

import random

from kubeloop import clock


class Backoff:
    def __init__(self, initial: float = 0.8, cap: float = 30.0, reset_after: float = 120.0,
                 jitter: float = 1.0) -> None:
        self.initial, self.cap, self.reset_after, self.jitter = initial, cap, reset_after, jitter
        self._current = 0.0
        self._healthy_since: float | None = None

    def healthy(self) -> None:
        """Marks the start of a working connection; enough healthy time resets the backoff."""
        self._healthy_since = clock.monotonic()

    def next(self) -> float:
        if self._healthy_since is not None and clock.monotonic() - self._healthy_since >= self.reset_after:
            self._current = 0.0
        self._healthy_since = None
        self._current = self.initial if not self._current else min(self.cap, self._current * 2)
        return self._current * (1 + self.jitter * random.random())

    def reset(self) -> None:
        self._current = 0.0
