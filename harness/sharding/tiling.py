"""Assignments as tilings of the hash space, and the figures the simulation reports on them.

A tiling is ``(bounds, owners)``: range ``i`` is ``[bounds[i], bounds[i+1])`` and belongs to
``owners[i]``; adjacent ranges of one owner are merged, so a member's range count is its selector's
term count. Keys are sorted 64-bit hashes; counting them per range is two binary searches.
"""

from __future__ import annotations

import bisect
from collections import Counter
from collections.abc import Sequence

from kubeloop.sharding.hashing import SPACE, fnv1a64
from kubeloop.sharding.ring import _mix, assign, slot_bounds

Tiling = tuple[list[int], list[str]]


def _merged(bounds: list[int], owners: list[str]) -> Tiling:
    out_b, out_o = [bounds[0]], [owners[0]]
    for start, owner in zip(bounds[1:-1], owners[1:], strict=True):
        if owner != out_o[-1]:
            out_b.append(start)
            out_o.append(owner)
    out_b.append(bounds[-1])
    return out_b, out_o


def slots_tiling(members: Sequence[str], slots: int) -> Tiling:
    """kubeloop's ring: fixed slots, bounded-load rendezvous."""
    a = assign(members, slots)
    return _merged([slot_bounds(i, slots)[0] for i in range(slots)] + [SPACE], list(a.owners))


def vnode_tiling(members: Sequence[str], vnodes: int) -> Tiling:
    """Consistent hashing: ``vnodes`` points per member; a hash belongs to the next point clockwise."""
    # Mixed after FNV: FNV-1a alone clusters strings that differ only at the end ("m#1", "m#2").
    points = sorted((_mix(fnv1a64(f"{m}#{i}")), m) for m in members for i in range(vnodes))
    bounds = [0] + [p for p, _ in points] + [SPACE]
    owners = [m for _, m in points] + [points[0][1]]  # the last arc wraps to the first point
    return _merged(bounds, owners)


def keys_per_member(t: Tiling, keys: list[int]) -> Counter[str]:
    bounds, owners = t
    load: Counter[str] = Counter()
    for i, owner in enumerate(owners):
        load[owner] += bisect.bisect_left(keys, bounds[i + 1]) - bisect.bisect_left(keys, bounds[i])
    return load


def ranges_per_member(t: Tiling) -> Counter[str]:
    """Ranges per member, counting the wrap-around ``[x, 2^64) + [0, y)`` of one owner as two, as a
    selector must (a shardRange cannot wrap)."""
    return Counter(t[1])


def keys_moved(a: Tiling, b: Tiling, keys: list[int]) -> int:
    """Keys whose owner differs between ``a`` and ``b`` (walks the union of both tilings' bounds)."""
    cuts = sorted(set(a[0]) | set(b[0]))
    moved = 0
    for start, end in zip(cuts, cuts[1:], strict=False):
        if _owner(a, start) != _owner(b, start):
            moved += bisect.bisect_left(keys, end) - bisect.bisect_left(keys, start)
    return moved


def _owner(t: Tiling, h: int) -> str:
    return t[1][bisect.bisect_right(t[0], h) - 1]
