"""Exponential backoff of recreations, so a pod that keeps dying does not make the operator hot-loop.

A pod that had been Ready for ``stable_after`` seconds earns a fresh start: the next recreation is
immediate. After that each quick recreation waits twice as long as the previous one: 1 s, 2 s, 4 s, …
up to 15 minutes. Replacements the user asked for (a new image or template) are never delayed.

The state is kept per object in memory (``controller.Remembered``, the operator's per-object state):
after an operator restart the first recreation is immediate again, which is harmless.
"""

from __future__ import annotations

from dataclasses import dataclass

from kubeloop import Settings, setting


@dataclass(frozen=True)
class BackoffPolicy:
    initial: float = 1.0  # seconds before the second quick recreation
    cap: float = 15 * 60.0
    stable_after: float = 120.0  # seconds Ready after which the pod counts as healthy

    def delay(self, streak: int) -> float:
        """Seconds to wait before a recreation when ``streak`` recreations happened since the pod was last
        healthy: 0, then initial, 2·initial, 4·initial, … capped."""
        if streak <= 0:
            return 0.0
        return min(self.cap, self.initial * 2.0 ** min(streak - 1, 64))


@dataclass
class Backoff:
    """Per-object state: quick recreations in a row and when the last pod started (monotonic seconds)."""

    streak: int = 0
    last_start: float | None = None

    def wait(self, policy: BackoffPolicy, now: float) -> float:
        """Seconds left before the next recreation may happen (0 = go)."""
        if self.last_start is None:
            return 0.0
        return max(0.0, self.last_start + policy.delay(self.streak) - now)

    def started(self, now: float, *, counts: bool) -> None:
        """A pod started; ``counts`` is False for starts the user asked for (first pod, new template)."""
        self.last_start = now
        if counts:
            self.streak += 1

    def healthy(self) -> None:
        """The pod was Ready long enough: forgive the previous failures."""
        self.streak = 0


class ImmortalSettings(Settings):
    """``kubeloop run immortal``'s flags: the backoff's numbers. A zero first wait would recreate a
    failing pod (or retry a refused create) in a hot loop, so it is refused rather than replaced."""

    backoff_initial: float = setting(1.0, "Seconds before the second quick recreation of a pod; doubles each "
                                     "time.", gt=0)
    backoff_max: float = setting(900.0, "Longest wait between recreations, in seconds.", gt=0)
    backoff_reset_after: float = setting(120.0, "Seconds a pod must stay Ready before its recreations start "
                                         "over without delay.", ge=0)

    @property
    def backoff(self) -> BackoffPolicy:
        return BackoffPolicy(self.backoff_initial, self.backoff_max, self.backoff_reset_after)
