"""Long pure computations that share the event loop: written as a generator that ``yield``\\ s at
checkpoints (say, once per item), and driven either to completion at once (:func:`to_completion`, for
tests and synchronous callers) or cooperatively (:func:`cooperatively`), handing the loop to its other work
whenever a time slice has passed since it last did.

Why not a thread (``ctx.run_in_thread``)? The computation stays on the loop, so it may read the cache's
structures, which the loop changes (a thread iterating an index while an event updates it can fail), and
nothing runs in parallel with it. What it costs: one generator step per checkpoint (about 0.1 µs) and one
clock read; what it bounds: no single stretch of it holds the loop much longer than ``slice`` plus one
step between checkpoints. The result is what the generator returns (``return value``).

Computations running at once take turns, one slice each in arrival order, and only one of them computes
in any pass of the loop: between two slices the loop runs its I/O, timers and other tasks. Ten tenants'
large reconciles therefore delay another tenant's small one by about one slice at each of its awaits,
not by ten (without the turn, every ready computation ran its slice in each pass).
"""

from __future__ import annotations

import asyncio
import collections
import time
import typing
import weakref
from typing import Any, TypeVar

T = TypeVar("T")
# Seconds of computation between two hand-overs of the loop: a probe, a webhook on the loop, a watch
# event wait at most this long (plus one step) for each such computation running.
SLICE = 0.002



class _Turn:
    """The right to compute, shared by one loop's cooperative computations. It is handed on with
    ``call_soon``, so whoever gets it next runs in a later pass of the loop than the slice that gave it
    up: in between, the loop runs everything that was ready (an uncontended lock would let every ready
    computation take it in the same pass)."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.busy = False
        self.waiting: collections.deque[asyncio.Future[None]] = collections.deque()

    async def take(self) -> None:
        if not self.busy and not self.waiting:
            self.busy = True
            return
        waiter = self.loop.create_future()
        self.waiting.append(waiter)
        try:
            await waiter
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled():
                self.give()  # handed to us, then cancelled before we ran: pass it on
            raise

    def give(self) -> None:
        self.loop.call_soon(self._hand_on)

    def _hand_on(self) -> None:
        while self.waiting:
            waiter = self.waiting.popleft()
            if not waiter.done():
                waiter.set_result(None)  # it stays busy: the turn is theirs now
                return
        self.busy = False


# Per event loop (a webhook's loop in a thread has its own): the turn its cooperative computations share.
_turns: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Turn] = weakref.WeakKeyDictionary()

# typing's alias, not collections.abc's: only it takes a docstring (the API reference shows it).
Steps = typing.Generator[Any, None, T]  # noqa: UP006
Steps.__doc__ = """A computation written as a generator: it ``yield``s (nothing) wherever it may hand the
loop back, and ``return``s its result; ``cooperatively`` runs it in slices, ``to_completion`` at once."""


def to_completion(steps: Steps[T]) -> T:
    """Runs ``steps`` at once and returns its result."""
    while True:
        try:
            next(steps)
        except StopIteration as done:
            return done.value  # type: ignore[no-any-return]


async def cooperatively(steps: Steps[T], slice: float = SLICE) -> T:
    """Runs ``steps`` on the loop, letting the loop run its other work every ``slice`` seconds, and
    returns its result. The state the generator reads may change between slices (level-based code reads
    it again on the next reconcile)."""
    clock = time.perf_counter
    loop = asyncio.get_running_loop()
    turn = _turns.get(loop)
    if turn is None:
        turn = _turns[loop] = _Turn(loop)
    while True:
        await turn.take()  # FIFO: after the computations already waiting for theirs
        try:
            handed = clock()
            while True:  # at least one step per turn
                try:
                    next(steps)
                except StopIteration as done:
                    return done.value  # type: ignore[no-any-return]
                if clock() - handed >= slice:
                    break
        finally:
            turn.give()  # nothing awaits while the turn is held: a cancellation never keeps it
        await asyncio.sleep(0)  # the loop runs what is ready (timers due, I/O), then this waits its turn
