"""A de-duplicating, rate-limited work queue (client-go's workqueue semantics, on asyncio).

- A key waiting in the queue is stored once, however often it is added.
- A key being processed is never handed out again until ``done``; adds meanwhile mark it dirty
  and it is re-queued on ``done`` — so one key is never reconciled concurrently with itself.
- Failures back off per key (exponential, reset by ``forget``); ``add_after`` delays an add, and an
  ``add`` makes a key waiting out its backoff ready now (a newer event is worth a try at once).
- Failures caused by the environment (``transient=True``: 403, 429, 5xx, lost connections) back off on
  their own short, capped schedule, so a key is retried within seconds of the fault's end.
- Two priorities: fresh changes go before the startup backlog and periodic resyncs.
"""

from __future__ import annotations

import asyncio
import collections
import heapq
import itertools
import random
from collections.abc import Hashable

from kubeloop import metrics
from kubeloop.queue import clock

HIGH, LOW = 0, 1


class ShutDown(Exception):
    """The queue was shut down; workers should exit."""


class ExponentialBackoff:
    """Per-key failure backoff: ``base * 2**failures`` up to ``cap`` seconds."""

    def __init__(self, base: float = 0.005, cap: float = 300.0) -> None:
        self.base, self.cap = base, cap
        self._failures: dict[Hashable, int] = {}

    def when(self, key: Hashable) -> float:
        n = self._failures.get(key, 0)
        self._failures[key] = n + 1
        return min(self.cap, self.base * 2 ** n)

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


class WorkQueue:
    def __init__(self, name: str = "", backoff: ExponentialBackoff | None = None,
                 transient_backoff: ExponentialBackoff | None = None) -> None:
        self.name = name
        self.backoff = backoff or ExponentialBackoff()
        self.transient_backoff = transient_backoff or TransientBackoff()
        self._heap: list[tuple[int, int, Hashable]] = []
        self._priority: dict[Hashable, int] = {}  # keys waiting in the heap → their current priority
        self._added_at: dict[Hashable, float] = {}
        self._dirty_while_processing: dict[Hashable, int] = {}
        self._processing: dict[Hashable, float] = {}  # key → start time
        self._timers: dict[Hashable, tuple[float, asyncio.TimerHandle]] = {}
        self._seq = itertools.count()
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
        self._m_adds.inc()
        if key in self._processing:
            prev = self._dirty_while_processing.get(key, LOW)
            self._dirty_while_processing[key] = min(prev, priority)
            return
        current = self._priority.get(key)
        if current is not None and current <= priority:
            return  # already waiting, at the same or a better priority
        self._priority[key] = priority
        self._added_at.setdefault(key, clock.now())
        heapq.heappush(self._heap, (priority, next(self._seq), key))
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

    async def get(self) -> Hashable:
        """Waits for the next key and marks it as being processed."""
        while True:
            while self._heap:
                priority, _, key = heapq.heappop(self._heap)
                if self._priority.get(key) != priority:
                    continue  # a stale entry, superseded by a higher-priority add
                del self._priority[key]
                now = clock.now()
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

    def done(self, key: Hashable) -> None:
        started = self._processing.pop(key, None)
        if started is not None:
            self._m_work.observe(clock.now() - started)
        again = self._dirty_while_processing.pop(key, None)
        if again is not None:
            self.add(key, again)

    def update_gauges(self) -> None:
        """Refreshes the "stuck work" gauges (called periodically by the controller)."""
        now = clock.now()
        running = [now - t for t in self._processing.values()]
        self._m_unfinished.set(sum(running))
        self._m_longest.set(max(running, default=0.0))

    def shutdown(self) -> None:
        """Stops handing out work; waiting ``get`` calls raise ``ShutDown`` once the queue is empty."""
        self._shutting_down = True
        for _, handle in self._timers.values():
            handle.cancel()
        self._timers.clear()
        self._heap.clear()
        self._priority.clear()
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)
