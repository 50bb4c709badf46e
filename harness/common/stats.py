"""The one percentile of the harness: nearest rank, so that every figure is a value that was measured."""

from __future__ import annotations

import math
from collections.abc import Iterable


def percentile(values: Iterable[float], q: float) -> float | None:
    """The q-th percentile (0..100) by the nearest-rank method; None for no values.

    Rank ``ceil(q·n/100)``, at least 1. ``q * n / 100`` rather than ``q / 100 * n``: with whole q and n
    it is exact, where ``7 / 100 * 100`` is 7.000000000000001 and would pick the 8th value.
    """
    data = sorted(values)
    if not data:
        return None
    rank = max(1, math.ceil(q * len(data) / 100))
    return data[min(rank, len(data)) - 1]
