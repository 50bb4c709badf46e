"""Which member owns which part of the 2^64 hash space: fixed slots, bounded-load rendezvous hashing.

The space is cut into ``slots`` equal slots (a power of two; slot ``i`` is ``[i*2^64/S, (i+1)*2^64/S)``).
Every (member, slot) pair gets a pseudo-random score; pairs are taken best score first, and a pair is
taken when its slot is still free and its member holds fewer than ``ceil(S/N)`` slots.

- **Deterministic, no leader**: the result depends only on the set of member names, so every member
  computes the same assignment from the same Lease list.
- **Balanced**: no member holds more than ``ceil(S/N)`` slots, so slot balance is at most
  ``ceil(S/N)/(S/N)`` (1.0005 at 3 members, 1.07 at 200 with 2048 slots); key balance adds only the
  sampling noise of the keys themselves.
- **Little movement**: a member's best-scored slots stay its own when others join or leave (rendezvous),
  so a change moves the newcomer's (or leaver's) 1/N share, plus slots the changed cap pushes between
  other members: ~1x the 1/N ideal at a few members, 1.5–3x at 25–200 (docs/SHARDING.md).
- **A modest selector**: each member's slots merge into contiguous ranges, one ``shardRange`` each, and
  the whole set is ONE ``shardSelector`` on every list and watch. Scattered slots give about
  ``S/N * (1 - 1/N)`` ranges, ~79 characters each: ~41 kB at 2 members, ~15 kB at 10, ~1.7 kB at 100
  with 2048 slots (the API server accepts request lines up to 1 MiB). That cost is why ``slots`` is not
  larger; measured in ``python -m harness.sharding``.

Chosen by measurement (docs/SHARDING.md) over consistent hashing with virtual nodes, the usual ring:
with V points per member its balance is ~1 + 3/sqrt(V): 1.06–1.32 at V=100; V=1000 reaches ~1.1 and
moves only the ideal 1/N, but gives every member up to 1000 ranges (a 40–79 kB selector at any size).
The slots match it at 2–3 members and are 5–90x shorter from 10 members on, for 1.5–3x the movement.

**Owned objects follow their owner** (:func:`shard_key`): an object's key is the uid of its controller
ownerReference when it has one, else its own uid, so a parent and its children land on one member. The
API server can filter only on an object's own uid or namespace, so children are filtered on the client.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from kubeloop.sharding.hashing import SPACE, Range, fnv1a64, merge

DEFAULT_SLOTS = 2048
_MASK = SPACE - 1


def _mix(x: int) -> int:
    """splitmix64's finalizer: spreads a 64-bit value so neighbouring slot numbers score independently."""
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & _MASK
    return x ^ (x >> 31)


def slot_bounds(slot: int, slots: int) -> Range:
    """The hash range ``[start, end)`` of ``slot``."""
    return slot * SPACE // slots, (slot + 1) * SPACE // slots


def slot_of(h: int, slots: int) -> int:
    """The slot of hash ``h`` (exact because ``slots`` is a power of two)."""
    return (h * slots) >> 64


@dataclass(frozen=True)
class Assignment:
    """The owner of every slot, computed by :func:`assign`."""

    members: tuple[str, ...]
    owners: tuple[str, ...]  # owners[slot]

    @property
    def slots(self) -> int:
        return len(self.owners)

    def slots_of(self, member: str) -> list[int]:
        return [i for i, owner in enumerate(self.owners) if owner == member]

    def ranges(self, member: str) -> list[Range]:
        """``member``'s part of the hash space as merged contiguous ranges (one selector term each)."""
        return merge(slot_bounds(i, self.slots) for i in self.slots_of(member))

    def owner_of(self, h: int) -> str:
        return self.owners[slot_of(h, self.slots)]


def assign(members: Iterable[str], slots: int = DEFAULT_SLOTS) -> Assignment:
    """Every slot to one member: best (member, slot) score first, at most ``ceil(slots/N)`` per member."""
    names = tuple(sorted(set(members)))
    if not names:
        raise ValueError("no members: at least one live member is needed to own the hash space")
    if slots < 1 or slots & (slots - 1):
        raise ValueError(f"slots={slots}: use a power of two (e.g. {DEFAULT_SLOTS})")
    cap = -(-slots // len(names))
    seeds = [fnv1a64(name) for name in names]
    pairs = sorted(((_mix(seed ^ _mix(slot)), m, slot) for m, seed in enumerate(seeds)
                    for slot in range(slots)), reverse=True)
    owner: list[int] = [-1] * slots
    held = [0] * len(names)
    free = slots
    for _, m, slot in pairs:
        if owner[slot] < 0 and held[m] < cap:
            owner[slot], held[m], free = m, held[m] + 1, free - 1
            if not free:
                break
    return Assignment(names, tuple(names[m] for m in owner))


def shard_key(obj: Mapping[str, Any]) -> str:
    """The value an object is hashed by: its controller owner's uid if it has one, else its own uid.

    Children thereby follow their parent (one member sees both in its cache). Raises ValueError for an
    object with no uid (not yet created), since its shard cannot be known.
    """
    meta = obj.get("metadata") or {}
    for ref in meta.get("ownerReferences") or ():
        if ref.get("controller") and ref.get("uid"):
            return str(ref["uid"])
    if not meta.get("uid"):
        raise ValueError("metadata.uid is missing: an object is sharded only once the API server made it")
    return str(meta["uid"])


def owns(ranges: list[Range], h: int) -> bool:
    """Whether hash ``h`` lies in merged, sorted ``ranges`` (binary search: members may own many)."""
    i = bisect.bisect_right(ranges, (h, SPACE + 1)) - 1
    return i >= 0 and ranges[i][0] <= h < ranges[i][1]
