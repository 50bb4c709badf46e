"""A time limit per test phase (setup, call, teardown) that turns a hang into a failure with a cause.

When a phase runs past its limit, the stack of every asyncio task on the running event loop (each
followed down its chain of awaits, which ``Task.get_stack`` does not do) and of every thread is
written to the terminal at once and becomes the test's failure report. Then the test is stopped:

- on an event loop (async tests and fixtures), the task the loop is running to completion is
  cancelled, so the test's ``finally`` blocks and context managers clean up as on any cancellation;
- otherwise (a sync test blocked in a call), an exception is raised in the main thread.

If the test is still running ``GRACE`` seconds after a cancellation (it swallowed it, or its clean-up
hangs too), the exception is raised in the main thread all the same. Either way the session goes on
with the next test.

Implemented with ``SIGALRM`` (``signal.setitimer``) in the main thread: where that is unavailable
(Windows, or pytest not on the main thread) the limit is off and the plugin says so once.
"""

from __future__ import annotations

import asyncio
import contextlib
import linecache
import signal
import sys
import threading
import traceback
import types
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

GRACE = 30.0  # seconds a cancelled test has to finish its clean-up before it is interrupted outright


class TestTimeLimitExceeded(Exception):
    """Raised in the main thread when a phase ran past its limit and cancelling it did not end it."""

    __test__ = False  # not a test class, despite its name


def available() -> bool:
    return hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()


@dataclass
class Expiry:
    """What happened when a phase ran out of time: the report, and how it was stopped."""

    phase: str
    limit: float
    dump: str
    how: str = ""


@dataclass
class Watch:
    """One armed phase: ``expired`` is set by the signal handler when the limit passes."""

    phase: str
    limit: float
    expired: Expiry | None = None
    _task: asyncio.Task[Any] | None = field(default=None, repr=False)
    _hard_tries: int = 0

    def _on_alarm(self, signum: int, frame: types.FrameType | None) -> None:
        loop = _running_loop()
        if self.expired is None:
            task = _main_task(loop) if loop is not None else None
            self.expired = Expiry(self.phase, self.limit, dump_everything(loop, task))
            # Now, in case stopping it hangs too (the report comes when the phase ends).
            print(f"\nkubeloop: {self.phase} ran past its time limit of {self.limit:g}s: stopping it",
                  file=sys.__stderr__, flush=True)
            if task is not None and not task.done():
                self._task = task
                self.expired.how = "its task was cancelled"
                # From a signal handler: the threadsafe call also wakes a selector waiting in select().
                loop.call_soon_threadsafe(task.cancel, f"time limit of {self.limit:g}s exceeded")  # type: ignore[union-attr]
                signal.setitimer(signal.ITIMER_REAL, GRACE)
                return
        # No loop to cancel on, or the cancellation did not end the test within GRACE.
        current = asyncio.current_task(loop) if loop is not None else None
        if current is not None and self._task is not None and current is not self._task and self._hard_tries < 20:
            # Raising now would kill some other task (a background one) instead of the test: try again shortly.
            self._hard_tries += 1
            signal.setitimer(signal.ITIMER_REAL, 0.05)
            return
        self.expired.how = (self.expired.how + "; " if self.expired.how else "") + "it was interrupted"
        raise TestTimeLimitExceeded(f"{self.phase} ran past its time limit of {self.limit:g}s")

    def leftover_task(self) -> asyncio.Task[Any] | None:
        """The cancelled task, if an outright interruption left it pending on the loop."""
        return self._task if self._task is not None and not self._task.done() else None


@contextlib.contextmanager
def watching(phase: str, limit: float) -> Iterator[Watch]:
    """Arms the limit for the block (``limit`` <= 0: no limit)."""
    watch = Watch(phase, limit)
    if limit <= 0 or not available():
        yield watch
        return
    previous = signal.signal(signal.SIGALRM, watch._on_alarm)
    signal.setitimer(signal.ITIMER_REAL, limit)
    try:
        yield watch
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@contextlib.contextmanager
def extended(seconds: float) -> Iterator[None]:
    """Gives the running phase ``seconds`` from now instead of what it had left, for a known long step
    (building the control plane on first use), and the phase's usual remainder back afterwards."""
    if not available() or signal.getsignal(signal.SIGALRM) in (signal.SIG_DFL, signal.SIG_IGN, None):
        yield
        return
    left, _ = signal.getitimer(signal.ITIMER_REAL)
    if left == 0:  # no limit armed
        yield
        return
    signal.setitimer(signal.ITIMER_REAL, max(seconds, left))
    try:
        yield
    finally:
        still, _ = signal.getitimer(signal.ITIMER_REAL)
        if still:  # not expired meanwhile
            signal.setitimer(signal.ITIMER_REAL, max(left, 1.0))


def _running_loop() -> asyncio.AbstractEventLoop | None:
    return asyncio._get_running_loop()


def _main_task(loop: asyncio.AbstractEventLoop) -> asyncio.Task[Any] | None:
    """The task the loop is running to completion: the test's coroutine, or an async fixture's setup or
    finalizer (pytest-asyncio runs each with ``Runner.run`` → ``run_until_complete``)."""
    for task in _tasks(loop):
        for callback, *_ in getattr(task, "_callbacks", None) or ():
            if getattr(callback, "__name__", "") == "_run_until_complete_cb":
                return task
    return None


def _tasks(loop: asyncio.AbstractEventLoop) -> list[asyncio.Task[Any]]:
    for _ in range(10):  # the task set is weak: a task collected meanwhile changes its size
        with contextlib.suppress(RuntimeError):
            return sorted(asyncio.all_tasks(loop), key=lambda t: t.get_name())
    return []


# Frames of the test runner itself: every thread stack of the main thread starts with dozens of them.
_RUNNER_FILES = ("/_pytest/", "/pluggy/", "/pytest/__main__.py", "<frozen runpy>", "/pytest_asyncio/",
                 "/kubeloop/testing/timelimit.py")


def dump_everything(loop: asyncio.AbstractEventLoop | None, main: asyncio.Task[Any] | None = None) -> str:
    """Every asyncio task of ``loop`` with its await chain (``main``, the test's, first), then every
    thread's stack without the test runner's own frames."""
    parts = []
    if loop is not None:
        tasks = sorted(_tasks(loop), key=lambda t: t is not main)
        parts.append(f"--- {len(tasks)} asyncio task(s) on the running loop ---")
        parts += [format_task(t) + ("\n  (the task the test runs in)" if t is main else "") for t in tasks]
    else:
        parts.append("--- no event loop running in the main thread ---")
    frames = sys._current_frames()
    threads = {t.ident: t for t in threading.enumerate()}
    parts.append(f"--- {len(frames)} thread(s) ---")
    for ident, frame in frames.items():
        thread = threads.get(ident)
        name = thread.name if thread is not None else f"thread {ident}"
        stack = "".join(line for line in traceback.format_stack(frame)
                        if not any(f in line.split("\n", 1)[0] for f in _RUNNER_FILES))
        parts.append(f"Thread {name!r}{' (daemon)' if thread is not None and thread.daemon else ''}:\n{stack}")
    return "\n".join(parts)


def format_task(task: asyncio.Task[Any]) -> str:
    """A task's name, state and await chain, outermost first: where each coroutine is suspended, and
    the future (or other task) the innermost one waits for."""
    lines = [f"Task {task.get_name()!r}{' (done)' if task.done() else ''}:"]
    node: Any = task.get_coro()
    for _ in range(200):  # a chain is rarely deeper than a few dozen
        if node is None:
            break
        frame = getattr(node, "cr_frame", None) or getattr(node, "gi_frame", None) or getattr(node, "ag_frame", None)
        if frame is not None:
            code = frame.f_code
            line = linecache.getline(code.co_filename, frame.f_lineno).strip()
            lines.append(f'  File "{code.co_filename}", line {frame.f_lineno}, in {code.co_name}')
            if line:
                lines.append(f"    {line}")
            node = getattr(node, "cr_await", None) or getattr(node, "gi_yieldfrom", None) or getattr(
                node, "ag_await", None)
            continue
        break
    # The future the task is suspended on (a C future's iterator does not expose it; the task does).
    waiter = getattr(task, "_fut_waiter", None)
    if isinstance(waiter, asyncio.Task):
        lines.append(f"  awaiting task {waiter.get_name()!r}")
    elif waiter is not None:
        lines.append(f"  awaiting {waiter!r}")
    return "\n".join(lines)
