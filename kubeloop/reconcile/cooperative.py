"""Long pure computations that share the event loop: written as a generator that ``yield``\\ s at
checkpoints (say, once per item), and driven either to completion at once (:func:`to_completion`, for
tests and synchronous callers) or cooperatively (:func:`cooperatively`), handing the loop to its other work
whenever a time slice has passed since it last did.

Why not a thread (``ctx.run_in_thread``)? The computation stays on the loop, so it may read the cache's
structures, which the loop changes (a thread iterating an index while an event updates it can fail), and
nothing runs in parallel with it. What it costs: one generator step per checkpoint (about 0.1 µs) and one
clock read; what it bounds: no single stretch of it holds the loop much longer than ``slice`` plus one
step between checkpoints. The result is what the generator returns (``return value``).
"""

from __future__ import annotations

import asyncio
import time
import typing
from typing import Any, TypeVar

T = TypeVar("T")
# Seconds of computation between two hand-overs of the loop: a probe, a webhook on the loop, a watch
# event wait at most this long (plus one step) for each such computation running.
SLICE = 0.002

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
    handed = clock()
    while True:
        try:
            next(steps)
        except StopIteration as done:
            return done.value  # type: ignore[no-any-return]
        if clock() - handed >= slice:
            await asyncio.sleep(0)  # the loop runs what is ready (timers due, I/O), then resumes here
            handed = clock()
