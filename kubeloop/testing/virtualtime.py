"""Virtual time for an asyncio event loop: while the loop is idle, its clock jumps to the next timer.

kubeloop's runtime and its operators read one clock, the running loop's (``kubeloop.clock``), and wait with
the loop's timers, so speeding up the loop's clock speeds up requeues, backoff, resyncs, timers and leases
together. The contract:

- Wall time (``kubeloop.clock.now()``/``time()``) moves by the same jumps while virtual time is on, and
  is real again once it is off (tests after it on a shared loop meet a real cluster's timestamps).
- The clock is the loop's real clock plus the time skipped so far: it never goes backwards, also when
  virtual time is turned off again (a shared session loop keeps one consistent clock).
- Time jumps only when the loop has nothing to run and a poll of its sockets finds nothing ready, and
  only up to the next timer: I/O is never waited for in virtual time. On loopback (the in-process
  ``FakeApiServer``) bytes sent are readable at once; before a jump longer than ``settle_above`` the loop
  also waits ``settle`` of real time, so a request is never cut by its own timeout jumping ahead.
- While work sent to a thread (``run_in_executor``, ``asyncio.to_thread``, DNS lookups) is unfinished,
  time is real: the loop waits for it as usual.
- Work outside the loop that it does not know about (a subprocess, a real cluster) is not waited for:
  use real time for such tests.
"""

from __future__ import annotations

import asyncio
import contextlib
import weakref
from collections.abc import Callable, Iterator
from typing import Any

from kubeloop.clock import VIRTUAL_TIME_ATTR


class VirtualTime:
    """Installed once per loop (``VirtualTime.of(loop)``); ``running()`` turns the jumps on."""

    def __init__(self, loop: asyncio.AbstractEventLoop, *, settle: float = 0.001,
                 settle_above: float = 1.0) -> None:
        selector = getattr(loop, "_selector", None)
        if selector is None:
            raise TypeError(f"virtual time needs a selector event loop (asyncio's default), not {type(loop)!r}")
        self.loop, self.settle, self.settle_above = loop, settle, settle_above
        self.skipped = 0.0  # seconds the clock has jumped in total
        self.jumps = 0
        self._depth = 0
        self._skipped_before = 0.0  # ``skipped`` when the outermost ``running()`` began
        self._threads: weakref.WeakSet[asyncio.Future[Any]] = weakref.WeakSet()
        self._real_time: Callable[[], float] = loop.time
        self._real_select: Callable[[float | None], list[Any]] = selector.select
        self._real_run_in_executor = loop.run_in_executor
        # Instance attributes shadow the loop's methods: its run loop calls self.time() and
        # self._selector.select(), so both see the virtual clock.
        loop.time = self.time  # type: ignore[method-assign]
        selector.select = self._select
        loop.run_in_executor = self._run_in_executor  # type: ignore[method-assign,assignment]

    @classmethod
    def of(cls, loop: asyncio.AbstractEventLoop | None = None) -> VirtualTime:
        """The loop's virtual time, installed (turned off) on first use."""
        loop = loop or asyncio.get_running_loop()
        existing = getattr(loop, VIRTUAL_TIME_ATTR, None)
        if existing is None:
            existing = cls(loop)
            setattr(loop, VIRTUAL_TIME_ATTR, existing)
        return existing

    @property
    def on(self) -> bool:
        return self._depth > 0

    @contextlib.contextmanager
    def running(self) -> Iterator[VirtualTime]:
        """Virtual time inside the block (nestable)."""
        if self._depth == 0:
            self._skipped_before = self.skipped
        self._depth += 1
        try:
            yield self
        finally:
            self._depth -= 1

    @property
    def wall_offset(self) -> float:
        """Seconds to add to real wall time (``kubeloop.clock`` reads it): the jumps of this run."""
        return self.skipped - self._skipped_before if self.on else 0.0

    def time(self) -> float:
        """The loop's clock: real monotonic seconds plus every jump so far."""
        return self._real_time() + self.skipped

    def _run_in_executor(self, executor: Any, func: Callable[..., Any], *args: Any) -> asyncio.Future[Any]:
        future = self._real_run_in_executor(executor, func, *args)
        self._threads.add(future)
        return future

    def _select(self, timeout: float | None) -> list[Any]:
        if not self.on or timeout is None or timeout <= 0 or any(not f.done() for f in self._threads):
            return self._real_select(timeout)  # real time: nothing to skip to, or threads at work
        ready = self._real_select(0)
        if ready:
            return ready
        if timeout > self.settle_above:
            started = self._real_time()
            ready = self._real_select(min(self.settle, timeout))
            if ready:
                return ready
            timeout = max(0.0, timeout - (self._real_time() - started))
        self.skipped += timeout  # idle: the next timer is due now
        self.jumps += 1
        return []
