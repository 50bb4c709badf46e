"""A de-duplicating, rate-limited, fair work queue (client-go's workqueue semantics, on asyncio).

- A key waiting in the queue is stored once, however often it is added.
- A key being processed is never handed out again until ``done``; adds meanwhile mark it dirty
  and it is re-queued on ``done`` — so one key is never reconciled concurrently with itself.
- A dirty key whose processing computed for longer than ``COOLDOWN_AFTER`` cools down first, as long
  as the processing took (at most ``COOLDOWN_CAP``); adds meanwhile only mark it. A key whose events
  never stop (a rule over thousands of sources being rewritten) then runs at most about half the time,
  and its next run reads every change at once. What it computed is the loop time of its cooperative
  computations, as ``done`` is told (the controller meters each reconcile), else its wall time: a
  reconcile that only waited long on a busy API server is re-queued at once, as short work is.
- Failures back off per key (exponential, reset by ``forget``); ``add_after`` delays an add, and an
  ``add`` makes a key waiting out its backoff ready now (a newer event is worth a try at once).
- Failures caused by the environment (``transient=True``: 403, 429, 5xx, lost connections) back off on
  their own short, capped schedule, so a key is retried within seconds of the fault's end.
- Two priorities: fresh changes go before the startup backlog and periodic resyncs.
- Fair across namespaces: within a priority, each namespace (a *lane*; cluster-scoped keys share one)
  keeps its keys in arrival order, and the lanes take turns, one key each. A namespace with 10,000
  waiting keys delays another namespace's one key by at most one key per busier lane, not by 10,000.
"""

from __future__ import annotations

import asyncio
import collections
import random
from collections.abc import Callable, Hashable

from kubeloop import clock, metrics

HIGH, LOW = 0, 1
_PRIORITIES = (HIGH, LOW)
# Cool-down of a key dirtied while it was processed: work that computed less than this is re-queued at once
# (most reconciles: a few API calls); work that computed longer waits as long as it took, up to the cap (a
# key whose events keep coming still runs at least every cap + its own time).
COOLDOWN_AFTER = 0.02
COOLDOWN_CAP = 1.0


class ShutDown(Exception):
    """The queue was shut down; workers should exit."""


def namespace_of(key: Hashable) -> Hashable:
    """A key's fairness lane: the namespace of a ``namespace/name`` key; ``""`` (one lane shared by all,
    never a namespace's name) for a cluster-scoped ``name`` or a key that is not a string."""
    return key.rpartition("/")[0] if isinstance(key, str) else ""


class ExponentialBackoff:
    """Per-key failure backoff: ``base * 2**failures`` up to ``cap`` seconds."""

    def __init__(self, base: float = 0.005, cap: float = 300.0) -> None:
        self.base, self.cap = base, cap
        self._failures: dict[Hashable, int] = {}

    def when(self, key: Hashable) -> float:
        n = self._failures.get(key, 0)
        self._failures[key] = n + 1
        # 2**n is a float overflow past n = 1023 (a key failing at the cap for days): the cap is reached
        # long before 2**64, so the exponent stops growing there.
        return min(self.cap, self.base * 2.0 ** min(n, 64))

    def forget(self, key: Hashable) -> None:
        self._failures.pop(key, None)

    def failures(self, key: Hashable) -> int:
        return self._failures.get(key, 0)


class TransientBackoff(ExponentialBackoff):
    """Backoff for failures that are about the environment, not the object: a permission taken away, a
    throttled or restarting API server, a dropped connection. Such a fault ends for every key at once,
    so a key must not still be waiting minutes later: the delay grows as the object backoff's does but
    stops at a short ``cap`` (the bound between a fault's end and the next try), jittered so that keys
    failing together do not all come back in the same instant."""

    def __init__(self, base: float = 0.005, cap: float = 8.0) -> None:
        super().__init__(base, cap)

    def when(self, key: Hashable) -> float:
        return super().when(key) * random.uniform(0.75, 1.0)


class _Level:
    """The keys waiting at one priority: a FIFO per lane, and the lanes that have keys, in turn order
    (``WorkQueue.add`` appends to them).

    Entries can be stale (the key was promoted to a better priority, or handed out through a newer
    entry): ``WorkQueue._pop`` skips them, so promotion costs one append instead of a search.
    """

    __slots__ = ("lanes", "turns")

    def __init__(self) -> None:
        self.lanes: dict[Hashable, collections.deque[Hashable]] = {}
        self.turns: collections.deque[Hashable] = collections.deque()

    def clear(self) -> None:
        self.lanes.clear()
        self.turns.clear()


class WorkQueue:
    """See the module docstring. ``lane_of`` maps a key to its fairness lane (``namespace_of`` by
    default; a constant function makes the queue plain FIFO within a priority)."""

    def __init__(self, name: str = "", backoff: ExponentialBackoff | None = None,
                 transient_backoff: ExponentialBackoff | None = None,
                 lane_of: Callable[[Hashable], Hashable] = namespace_of) -> None:
        self.name = name
        self.backoff = backoff or ExponentialBackoff()
        self.transient_backoff = transient_backoff or TransientBackoff()
        self.lane_of = lane_of
        self._by_namespace = lane_of is namespace_of
        self._levels = tuple(_Level() for _ in _PRIORITIES)  # indexed by priority
        self._priority: dict[Hashable, int] = {}  # keys waiting → their current priority
        self._added_at: dict[Hashable, float] = {}
        self._dirty_while_processing: dict[Hashable, int] = {}
        self._processing: dict[Hashable, float] = {}  # key → start time
        self._timers: dict[Hashable, tuple[float, asyncio.TimerHandle]] = {}
        self._cooling: dict[Hashable, int] = {}  # keys cooling down → the best priority added meanwhile
        self._cooling_timers: dict[Hashable, asyncio.TimerHandle] = {}
        self._waiters: collections.deque[asyncio.Future[None]] = collections.deque()
        self._shutting_down = False
        # Bound metric children once: label lookups on every add/get would sit on the hot path.
        labels = (name, name)
        self._m_adds = metrics.workqueue_adds.labels(*labels)
        # Gauges read at scrape time rather than set on every add and get.
        metrics.workqueue_depth.labels(*labels).set_function(self.__len__)
        self._m_queue = metrics.workqueue_queue_duration.labels(*labels)
        self._m_work = metrics.workqueue_work_duration.labels(*labels)
        self._m_retries = metrics.workqueue_retries.labels(*labels)
        self._m_unfinished = metrics.workqueue_unfinished_work.labels(*labels)
        self._m_longest = metrics.workqueue_longest_running.labels(*labels)

    def __len__(self) -> int:
        return len(self._priority)

    @property
    def processing(self) -> int:
        return len(self._processing)

    def add(self, key: Hashable, priority: int = HIGH) -> None:
        if self._shutting_down:
            return
        if priority not in _PRIORITIES:
            raise ValueError(f"work queue priority {priority!r} must be HIGH (0) or LOW (1)")
        self._m_adds.inc()
        if key in self._processing:
            prev = self._dirty_while_processing.get(key, LOW)
            self._dirty_while_processing[key] = min(prev, priority)
            return
        if key in self._cooling:
            self._cooling[key] = min(self._cooling[key], priority)
            return
        current = self._priority.get(key)
        if current is not None and current <= priority:
            return  # already waiting, at the same or a better priority
        self._priority[key] = priority
        self._added_at.setdefault(key, clock.monotonic())
        level = self._levels[priority]  # _Level.push, inlined: this is the hot path
        # namespace_of, inlined for the default and the usual "namespace/name" string keys
        lane = key.rpartition("/")[0] if self._by_namespace and type(key) is str else self.lane_of(key)
        keys = level.lanes.get(lane)
        if keys is None:
            keys = level.lanes[lane] = collections.deque()
            level.turns.append(lane)
        keys.append(key)
        if self._waiters:
            self._notify()

    def add_after(self, key: Hashable, delay: float, priority: int = HIGH) -> None:
        """Adds the key after ``delay`` seconds; an earlier pending timer for the key wins."""
        if delay <= 0:
            self.add(key, priority)
            return
        loop = asyncio.get_running_loop()
        due = loop.time() + delay
        pending = self._timers.get(key)
        if pending is not None:
            if pending[0] <= due:
                return
            pending[1].cancel()
        self._timers[key] = (due, loop.call_at(due, self._fire, key, priority))

    def add_rate_limited(self, key: Hashable, transient: bool = False) -> float:
        """Re-adds a failed key after its backoff (the transient schedule if the environment failed);
        returns the delay."""
        delay = (self.transient_backoff if transient else self.backoff).when(key)
        self._m_retries.inc()
        self.add_after(key, delay)
        return delay

    def forget(self, key: Hashable) -> None:
        """The key succeeded: both its failure counts start again from zero."""
        self.backoff.forget(key)
        self.transient_backoff.forget(key)

    def _fire(self, key: Hashable, priority: int) -> None:
        self._timers.pop(key, None)
        self.add(key, priority)

    def _notify(self) -> None:
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)
                return

    def _pop(self) -> Hashable | None:
        """The next waiting key: the best priority first, and within it the next lane's turn."""
        waiting = self._priority
        for priority, level in enumerate(self._levels):
            turns, lanes = level.turns, level.lanes
            while turns:
                lane = turns.popleft()
                keys = lanes[lane]
                while keys:
                    key = keys.popleft()
                    if waiting.get(key) == priority:  # else stale: promoted, or handed out already
                        if keys:
                            turns.append(lane)  # its next key waits for the other lanes' turns
                        else:
                            del lanes[lane]
                        del waiting[key]
                        return key
                del lanes[lane]
        return None

    async def get(self) -> Hashable:
        """Waits for the next key and marks it as being processed."""
        while True:
            if self._priority:
                key = self._pop()
                if key is not None:
                    now = clock.monotonic()
                    self._processing[key] = now
                    added = self._added_at.pop(key, None)
                    if added is not None:
                        self._m_queue.observe(now - added)
                    return key
            if self._shutting_down:
                raise ShutDown
            waiter = asyncio.get_running_loop().create_future()
            self._waiters.append(waiter)
            try:
                await waiter
            except asyncio.CancelledError:
                if waiter.done() and not waiter.cancelled():
                    self._notify()  # pass the wake-up we consumed on to another worker
                raise

    def done(self, key: Hashable, computed: float | None = None) -> None:
        """The key's processing ended: if it was added meanwhile, it is queued again, at once or after
        its cool-down (the module docstring). ``computed``: the seconds it computed on the loop, if
        metered; else its wall time counts."""
        started = self._processing.pop(key, None)
        took = 0.0
        if started is not None:
            took = clock.monotonic() - started
            self._m_work.observe(took)
        again = self._dirty_while_processing.pop(key, None)
        if again is None:
            return
        if (took if computed is None else computed) < COOLDOWN_AFTER or self._shutting_down:
            self.add(key, again)
            return
        self._cooling[key] = again
        loop = asyncio.get_running_loop()
        self._cooling_timers[key] = loop.call_at(loop.time() + min(took, COOLDOWN_CAP), self._cooled, key)

    def _cooled(self, key: Hashable) -> None:
        self._cooling_timers.pop(key, None)
        priority = self._cooling.pop(key, None)
        if priority is not None:
            self.add(key, priority)

    def update_gauges(self) -> None:
        """Refreshes the "stuck work" gauges (called periodically by the controller)."""
        now = clock.monotonic()
        running = [now - t for t in self._processing.values()]
        self._m_unfinished.set(sum(running))
        self._m_longest.set(max(running, default=0.0))

    def shutdown(self) -> None:
        """Stops handing out work; waiting ``get`` calls raise ``ShutDown`` once the queue is empty."""
        self._shutting_down = True
        for _, handle in self._timers.values():
            handle.cancel()
        self._timers.clear()
        for handle in self._cooling_timers.values():
            handle.cancel()
        self._cooling_timers.clear()
        self._cooling.clear()
        for level in self._levels:
            level.clear()
        self._priority.clear()
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)
