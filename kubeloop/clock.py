"""The one clock of kubeloop and of the operators built on it: monotonic seconds and wall time.

``monotonic()`` is the running event loop's clock. Timers and delays (``loop.call_at``, ``asyncio.sleep``,
timeouts) already run on it, so every "when" the runtime and an operator compute (requeues, backoff,
resyncs, timers, debounce windows, leases, durations) reads the same clock as the waits: the two never
disagree. By default the loop's clock is ``time.monotonic()``, so production durations are real seconds.

``now()`` (an aware UTC ``datetime``) and ``time()`` (seconds since the epoch) are wall time: what an
operator writes into objects (``lastTransitionTime``, ``restartedAt``) or compares with times read from
them (a schedule, a creation timestamp).

Under the test kit's virtual time (``kubeloop.testing``'s ``fake_clock``) the loop's clock jumps ahead
while the loop is idle; both clocks here move with it, so a reconciler that reads them sees hours pass in
moments of wall time. Code that reads ``time.monotonic()``, ``time.time()`` or ``datetime.now()``
directly does not: use this module instead.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import time as _time

# The attribute of an event loop under which the test kit installs its virtual time; this module adds its
# ``wall_offset`` (the seconds skipped while it is on) to wall time, to move it as the loop's clock moves.
VIRTUAL_TIME_ATTR = "_kubeloop_virtual_time"


def monotonic() -> float:
    """Seconds on the running loop's clock (only differences mean anything); ``time.monotonic()``, the
    default loop's clock, when called outside a loop, e.g. by synchronous code in a unit test."""
    try:
        return asyncio.get_running_loop().time()
    except RuntimeError:
        return _time.monotonic()


def time() -> float:
    """Wall time in seconds since the epoch (under virtual time, moved ahead by the time it skipped)."""
    return _time.time() + _skipped()


def now() -> dt.datetime:
    """Wall time as an aware UTC ``datetime`` (see ``time()``)."""
    return dt.datetime.fromtimestamp(time(), dt.UTC)


def _skipped() -> float:
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return 0.0
    virtual = getattr(loop, VIRTUAL_TIME_ATTR, None)
    return float(virtual.wall_offset) if virtual is not None else 0.0
