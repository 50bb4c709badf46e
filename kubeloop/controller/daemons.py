"""Daemons: a long-running task per object and handler, owned by the controller run that started it.

- Owned by the run: the tasks live here, in the ``Controller`` a manager built, never in the operator
  definition; two managers running one operator each start their own, and stopping a controller
  cancels and awaits every one of them.
- Stopped when the object is marked for deletion or gone, when its key moves to another replica (shard
  handoff, fencing) and when the controller stops (manager stop, lost leadership): cancelled
  (``asyncio.CancelledError`` at an ``await``) and awaited.
- Restarted when it raises, after 1 s, doubling per consecutive failure up to 5 minutes (a run that
  lasted longer than that counts as a fresh start). Kopf retries a failed daemon like any handler, after
  its ``backoff=`` (60 s by default); the exponential delay here is the work queue's manner, and starts
  shorter. A daemon that returns is done for the object's life in this run (Kopf does not restart it
  either); cancellation is not a failure.
- Each (re)start gets the object as the cache holds it then; ``ctx.current()`` reads it again at any time.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from kubeloop import clock
from kubeloop.reconcile import logs

log = logging.getLogger("kubeloop.daemons")

DaemonFn = Callable[..., Awaitable[Any]]
# The arguments of a (re)start: the object and its context as the cache holds it now; None once gone.
StartArgs = Callable[[str], tuple[Any, Any] | None]

RESTART_BASE = 1.0  # seconds before the first restart of a daemon that raised
RESTART_CAP = 300.0  # the longest delay between restarts


def restart_delay(failures: int) -> float:
    """Seconds before restarting a daemon after its ``failures``-th consecutive failure (1, 2, ...)."""
    return min(RESTART_CAP, RESTART_BASE * 2.0 ** max(0, failures - 1))


class Daemons:
    """The daemon tasks of one controller: per key, one supervised task per daemon function."""

    def __init__(self, controller: str, fns: Sequence[DaemonFn], start_args: StartArgs) -> None:
        self.controller = controller
        self.fns = tuple(fns)
        self._start_args = start_args
        self._tasks: dict[str, tuple[str, list[asyncio.Task[None]]]] = {}  # key → (uid, tasks)
        self._stopping: set[asyncio.Task[None]] = set()

    def __contains__(self, key: str) -> bool:
        return key in self._tasks

    def keys(self) -> list[str]:
        return list(self._tasks)

    def tasks(self) -> list[asyncio.Task[None]]:
        """Every task started and not yet stopped (a daemon that returned is listed, done, until then)."""
        return [t for _, tasks in self._tasks.values() for t in tasks]

    async def ensure(self, key: str, uid: str) -> None:
        """Starts the daemons of ``key`` unless they run already for this object (``uid``); those of an
        earlier object of the same name are stopped first."""
        if not self.fns:
            return
        running = self._tasks.get(key)
        if running is not None:
            if running[0] == uid:
                return
            await self.stop(key)
        self._tasks[key] = (uid, [asyncio.create_task(self._supervise(fn, key), name=f"daemon {fn.__name__} {key}")
                                  for fn in self.fns])

    async def stop(self, key: str) -> None:
        """Cancels and awaits the daemons of ``key`` (none: nothing to do)."""
        _, tasks = self._tasks.pop(key, ("", []))
        await _cancel(tasks)

    def stop_soon(self, key: str) -> None:
        """``stop`` from synchronous code (an event handler); ``stop_all`` awaits it."""
        if key in self._tasks:
            task = asyncio.create_task(self.stop(key), name=f"stop daemons {key}")
            self._stopping.add(task)
            task.add_done_callback(self._stopping.discard)

    async def stop_where(self, drop: Callable[[str], bool]) -> int:
        """Stops the daemons of every key ``drop(key)`` is true for; returns how many keys."""
        keys = [key for key in self._tasks if drop(key)]
        await asyncio.gather(*(self.stop(key) for key in keys))
        return len(keys)

    async def stop_all(self) -> None:
        await self.stop_where(lambda key: True)
        if self._stopping:
            await asyncio.wait(set(self._stopping))

    async def _supervise(self, fn: DaemonFn, key: str) -> None:
        logs.current.set({"controller": self.controller, "object": key, "reconcileID": f"daemon {fn.__name__}"})
        failures = 0
        while (args := self._start_args(key)) is not None:
            began = clock.monotonic()
            try:
                await fn(*args)
                return
            except Exception as exc:  # CancelledError is no Exception: it ends the task, as it should
                failures = 1 if clock.monotonic() - began >= RESTART_CAP else failures + 1
                delay = restart_delay(failures)
                log.error("daemon %s for %s failed (%d in a row), restarting in %.0fs: %s",
                          fn.__name__, key, failures, delay, exc, exc_info=True)
                await asyncio.sleep(delay)


async def _cancel(tasks: list[asyncio.Task[None]]) -> None:
    for task in tasks:
        task.cancel()
    for task in tasks:
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await task
