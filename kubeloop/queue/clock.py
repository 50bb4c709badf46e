"""The runtime's one clock: the running event loop's.

Timers and delays (``loop.call_at``, ``asyncio.sleep``, timeouts) already run on the loop's clock, so every
"when" the runtime computes (requeues, backoff, resync, timers, echo waits, leases, durations) reads the
same clock: the two can never disagree, and a virtual-time loop in tests (kubeloop.testing's
``fake_clock``) drives all of it at once. By default the loop's clock is ``time.monotonic()``, so
production durations (metrics) are real seconds.
"""

from __future__ import annotations

import asyncio
import time


def now() -> float:
    """Seconds on the running loop's clock; ``time.monotonic()`` (the default loop's clock) when called
    outside a loop, e.g. by synchronous code in a unit test."""
    try:
        return asyncio.get_running_loop().time()
    except RuntimeError:
        return time.monotonic()
