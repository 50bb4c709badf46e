"""Event-loop lag: how late the loop runs what is due, and what held it.

Every reconcile, watch, webhook and timer of a process shares one event loop: a reconcile (or an event
handler, a predicate, a mapper) that computes for a second without awaiting delays all of them by that
second. The monitor measures it cheaply and names the holder:

- a *beat* is scheduled on the loop every ``interval`` seconds; how late each one runs is observed in
  ``kubeloop_event_loop_lag_seconds`` (near 0 on a healthy loop; its sum/count is the mean lag);
- a watchdog thread, which runs while the loop is held (the GIL is handed over every
  ``sys.getswitchinterval()``, 5 ms), sees a beat overdue by more than ``warn_after`` and logs one
  WARNING naming what the loop is running: for a reconcile, its controller and object (the controller
  notes them in :data:`holding`), otherwise the task's name, with the innermost line executing; once
  the loop is free, a second WARNING gives the stall's length, and ``kubeloop_event_loop_stalls_total``
  counts it by controller.

All times are the loop's clock (kubeloop/clock.py): under virtual time nothing is ever late.
Cost: one timer callback per ``interval`` on the loop, a dict set and pop per reconcile, and a thread
that wakes ``1 / poll`` times a second and reads two floats.
"""

from __future__ import annotations

import asyncio
import logging
import sys
import threading
from collections.abc import Hashable

from kubeloop.metrics import REGISTRY
from kubeloop.metrics.core import Counter, Histogram

log = logging.getLogger("kubeloop.loop")

event_loop_lag = Histogram(
    "kubeloop_event_loop_lag_seconds",
    "How late the event loop ran a callback that was due: the time it was held by other work.",
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60), registry=REGISTRY)
event_loop_stalls = Counter(
    "kubeloop_event_loop_stalls",
    "Times the event loop was held longer than the warning threshold, by the controller whose reconcile "
    "held it (empty: other work).", ["controller"], registry=REGISTRY)

# The reconcile each task is running now: task → (controller, key). The controller sets and pops its
# entry itself (two dict operations per reconcile; function calls here cost three times as much); the
# watchdog thread reads it (a dict lookup, atomic under the GIL).
holding: dict[asyncio.Task[object] | None, tuple[str, Hashable]] = {}


def holder_of(task: asyncio.Task[object] | None) -> tuple[str, Hashable] | None:
    """(controller, key) of the reconcile ``task`` runs, if it runs one."""
    return holding.get(task) if task is not None else None


class LoopMonitor:
    """Measures the running loop's lag and warns, naming the holder, when it exceeds ``warn_after``."""

    def __init__(self, interval: float = 0.25, warn_after: float = 1.0) -> None:
        if interval <= 0 or warn_after <= 0:
            raise ValueError(f"loop monitor: interval ({interval}) and warn_after ({warn_after}) must be > 0")
        self.interval, self.warn_after = interval, warn_after
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread_id = 0
        self._timer: asyncio.TimerHandle | None = None
        self._watchdog: threading.Thread | None = None
        self._stopping = threading.Event()
        self._lock = threading.Lock()
        self._due = 0.0  # loop clock: when the pending beat should run
        self._stall: tuple[str, str] | None = None  # (controller, description) named during this stall
        self.last_beat = 0.0  # loop clock: when a beat last ran (the probes read it)

    def start(self) -> None:
        """Starts beating on the running loop, and the watchdog thread."""
        self._loop = asyncio.get_running_loop()
        self._thread_id = threading.get_ident()
        self._stopping.clear()
        self.last_beat = self._loop.time()
        self._schedule()
        self._watchdog = threading.Thread(target=self._watch, name="kubeloop loop watchdog", daemon=True)
        self._watchdog.start()

    def stop(self) -> None:
        self._stopping.set()
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._watchdog = None  # it sees _stopping within a poll and ends; not joined: that would block the loop

    def blocked_for(self) -> float:
        """Seconds the loop has been held past its pending beat (0 when it is keeping up); any thread."""
        if self._loop is None or self._stopping.is_set():
            return 0.0
        return max(0.0, self._loop.time() - self._due)

    def _schedule(self) -> None:
        assert self._loop is not None
        self._due = self._loop.time() + self.interval
        self._timer = self._loop.call_at(self._due, self._beat)

    def _beat(self) -> None:
        assert self._loop is not None
        now = self._loop.time()
        lag = max(0.0, now - self._due)
        event_loop_lag.observe(lag)
        self.last_beat = now
        with self._lock:
            stall, self._stall = self._stall, None
            self._schedule()
        if lag >= self.warn_after:
            controller, what = stall or ("", "work that ended before the watchdog sampled it")
            event_loop_stalls.labels(controller).inc()
            log.warning("event loop was held for %.2fs by %s; nothing else ran meanwhile (webhooks, probes "
                        "answered by this loop, other reconciles, watches)", lag, what)

    def _watch(self) -> None:
        poll = min(self.interval, self.warn_after / 4)
        while not self._stopping.wait(poll):
            held = self.blocked_for()
            if held < self.warn_after:
                continue
            with self._lock:
                if self._stall is not None:
                    continue  # named once per stall
                self._stall = self._describe()
            log.warning("event loop held for %.2fs so far by %s", held, self._stall[1])

    def _describe(self) -> tuple[str, str]:
        """(controller, description) of what the loop thread is running now."""
        assert self._loop is not None
        task = asyncio.current_task(self._loop)
        frame = sys._current_frames().get(self._thread_id)  # noqa: SLF001 - the loop thread's innermost frame
        where = f" at {frame.f_code.co_filename}:{frame.f_lineno} in {frame.f_code.co_name}" if frame else ""
        held = holder_of(task)
        if held is not None:
            return held[0], f"the reconcile of {held[1]} (controller {held[0]}){where}"
        if task is not None:
            return "", f"task {task.get_name()!r}{where}"
        return "", f"a callback outside any task{where}"
