"""When to act: a per-workload debounce (a burst of changes becomes one rollout) and a global token
bucket (a shared ConfigMap must not restart the whole cluster at once)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from kubeloop import clock as loop_clock

MAX_WINDOWS = 10  # a workload whose objects never stop changing still rolls after this many windows


@dataclass
class Pacing:
    """One workload's pace, kept between its reconciles: the burst of changes waiting to roll (the hash
    it leads to, when it started and last changed) and when its last rollouts happened."""

    pending: str | None = None
    changed_at: float = 0.0
    first_at: float | None = None
    rolled_at: list[float] = field(default_factory=list)


def settle(pace: Pacing, wanted: str, window: float, now: float, period: float | None = None) -> float:
    """Seconds to wait before rolling to hash ``wanted``: 0 once it has been stable for ``window``
    seconds (or the first change of the burst is MAX_WINDOWS windows old). A new hash restarts the
    window. With a ``period`` (Reloader's ``pause-period``) the rollout waits exactly that long after
    the first change of the burst, and takes every change made meanwhile."""
    if pace.pending != wanted:
        pace.pending, pace.changed_at = wanted, now
        if pace.first_at is None:
            pace.first_at = now
    first = pace.first_at if pace.first_at is not None else now
    if period is not None:
        return max(0.0, first + period - now)
    due = min(pace.changed_at + window, first + MAX_WINDOWS * window)
    return max(0.0, due - now)


def loop_suspected(pace: Pacing, changed_at: float, rollouts: int, window: float) -> bool:
    """A rollout loop: the workload's objects changed within ``window`` seconds after each of its last
    ``rollouts`` rollouts (a workload whose pods rewrite the configuration they read). ``rollouts`` 0
    turns the check off."""
    if rollouts <= 0 or len(pace.rolled_at) < rollouts:
        return False
    recent = [*pace.rolled_at[-rollouts:], changed_at]
    return all(0 <= b - a <= window for a, b in zip(recent, recent[1:], strict=False))


def rolled(pace: Pacing, now: float, keep: int) -> None:
    """Remembers a rollout (the last ``keep`` of them) for ``loop_suspected``."""
    pace.rolled_at = [*pace.rolled_at, now][-max(1, keep):]


def settled(pace: Pacing) -> None:
    """Forgets the pending burst (after acting on it, or when the contents went back)."""
    pace.pending, pace.changed_at, pace.first_at = None, 0.0, None


class TokenBucket:
    """``rate`` tokens per second up to ``burst``; ``rate`` 0 means unlimited."""

    def __init__(self, rate: float, burst: int, clock: Callable[[], float] = loop_clock.monotonic) -> None:
        self.rate, self.burst, self.clock = rate, max(1, burst), clock
        self._tokens = float(self.burst)
        self._at = clock()

    def take(self) -> float:
        """Takes a token and returns 0, or returns the seconds until one is available."""
        if self.rate <= 0:
            return 0.0
        now = self.clock()
        self._tokens = min(self.burst, self._tokens + (now - self._at) * self.rate)
        self._at = now
        if self._tokens >= 1:
            self._tokens -= 1
            return 0.0
        return (1 - self._tokens) / self.rate

    def give_back(self) -> None:
        """Returns a token that bought nothing (the rollout hit a conflict and will be retried)."""
        if self.rate > 0:
            self._tokens = min(self.burst, self._tokens + 1)
