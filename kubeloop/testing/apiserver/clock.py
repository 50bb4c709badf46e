"""A clock for timestamps, real by default; ``FakeClock`` makes them (and kubeloop timers driven by it)
advance only when a test says so."""

from __future__ import annotations

import datetime as dt


class Clock:
    """Wall-clock time in UTC."""

    def now(self) -> dt.datetime:
        return dt.datetime.now(dt.UTC)

    def stamp(self) -> str:
        """RFC 3339 to the second, as metadata timestamps are."""
        return self.now().strftime("%Y-%m-%dT%H:%M:%SZ")


class FakeClock(Clock):
    """Time that moves only by ``advance()``: deterministic timestamps in tests."""

    def __init__(self, start: dt.datetime | None = None) -> None:
        self._now = start or dt.datetime(2026, 1, 1, tzinfo=dt.UTC)

    def now(self) -> dt.datetime:
        return self._now

    def advance(self, seconds: float) -> None:
        self._now += dt.timedelta(seconds=seconds)
