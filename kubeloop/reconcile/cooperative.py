"""Long pure computations that share the event loop: written as a generator that ``yield``\\ s at
checkpoints (say, once per item), and driven either to completion at once (:func:`to_completion`, for
tests and synchronous callers) or cooperatively (:func:`cooperatively`), handing the loop to its other work
whenever a time slice has passed since it last did.

Why not a thread (``ctx.run_in_thread``)? The computation stays on the loop, so it may read the cache's
structures, which the loop changes (a thread iterating an index while an event updates it can fail), and
nothing runs in parallel with it. What it costs: one generator step per checkpoint (about 0.1 µs) and one
clock read; what it bounds: no single stretch of it holds the loop much longer than ``slice`` plus one
step between checkpoints. The result is what the generator returns (``return value``).

Computations running at once take turns, one slice each, and only one of them computes in any pass of
the loop: between two slices the loop runs its I/O, timers and other tasks (without the turn, every ready
computation ran its slice in each pass). The turns are fair across namespaces, as the work queue is: a
computation inside a reconcile waits in its object's namespace's line, the lines take turns, and within
a line the computations take turns in arrival order. One tenant's ten large reconciles therefore take
every other slice while another tenant's small one computes, not ten of every eleven.
"""

from __future__ import annotations

import asyncio
import contextvars
import time
import typing
import weakref
from typing import Any, TypeVar

from kubeloop.helpers.lines import FairLines
from kubeloop.reconcile import logs

T = TypeVar("T")
# Seconds of computation between two hand-overs of the loop: a probe, a webhook on the loop, a watch
# event wait at most this long (plus one step) for each such computation running.
SLICE = 0.002



class _Turn:
    """The right to compute, shared by one loop's cooperative computations. It is handed on with
    ``call_soon``, so whoever gets it next runs in a later pass of the loop than the slice that gave it
    up: in between, the loop runs everything that was ready (an uncontended lock would let every ready
    computation take it in the same pass). Waiters stand in one line per lane (a namespace), and the
    lanes take the turn in rotation (``kubeloop.helpers.lines``)."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.busy = False
        self.waiting: FairLines[asyncio.Future[None]] = FairLines()

    async def take(self, lane: object) -> None:
        """Waits for the turn in ``lane``'s line (none to wait for if the turn is free)."""
        if not self.busy and not self.waiting:
            self.busy = True
            return
        await self._wait(lane)

    async def rejoin(self, lane: object) -> None:
        """The holder's slice is over: it stands in its line again first, then hands the turn on, so that
        its lane rotates behind the lanes already waiting, not ahead of them."""
        waiting = self._wait(lane)
        self.give()
        await waiting

    def _wait(self, lane: object) -> typing.Coroutine[Any, Any, None]:
        waiter = self.loop.create_future()
        self.waiting.push(lane, waiter)
        return self._until_handed(waiter)

    async def _until_handed(self, waiter: asyncio.Future[None]) -> None:
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
            waiter = self.waiting.pop()
            if not waiter.done():  # else cancelled while waiting
                waiter.set_result(None)  # it stays busy: the turn is theirs now
                return
        self.busy = False


def _lane() -> object:
    """The namespace of the object being reconciled (``""`` for a cluster-scoped one); ``None`` outside
    a reconcile."""
    ctx = logs.current.get()
    return ctx["object"].rpartition("/")[0] if ctx else None


class Meter:
    """Seconds computed by the cooperative computations of one unit of work (a reconcile, and the tasks it
    starts): the controller meters each reconcile so that its queue can tell a key that computes for long
    (its cool-down) from one that waits for long on a busy API server."""

    __slots__ = ("seconds",)

    def __init__(self) -> None:
        self.seconds = 0.0


# The meter of the work under way in this context (set by the controller around each reconcile).
metered: contextvars.ContextVar[Meter | None] = contextvars.ContextVar("kubeloop_metered", default=None)

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
    lane, meter = _lane(), metered.get()
    await turn.take(lane)
    while True:
        handed = clock()
        try:
            done, value = _one_slice(steps, slice, clock)
        except BaseException:
            turn.give()
            raise
        finally:
            if meter is not None:
                meter.seconds += clock() - handed
        if done:
            turn.give()
            return value  # type: ignore[return-value]
        await turn.rejoin(lane)  # the loop runs what is ready (timers due, I/O), then the others' slices


def _one_slice(steps: Steps[T], slice: float, clock: typing.Callable[[], float]) -> tuple[bool, T | None]:
    """Runs ``steps`` for ``slice`` seconds, and at least one step: (True, result) once they return."""
    handed = clock()
    while True:
        try:
            next(steps)
        except StopIteration as done:
            return True, done.value
        if clock() - handed >= slice:
            return False, None
