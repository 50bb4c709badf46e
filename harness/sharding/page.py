"""docs/SHARDING.md: the simulation's tables with what they measure and how to read them."""

from __future__ import annotations

from collections.abc import Sequence

INTRO = """# Sharding: the assignment, simulated

How kubeloop splits the 2^64 hash space of KEP-5866 server-side sharding among the replicas of one
operator (`kubeloop/sharding/ring.py`), measured without a cluster. Written by
`python -m harness.sharding`; do not edit by hand, except the section "On a real API server" at the
end, which that command keeps as it is.

## What is measured

- **Keys**: {keys:,} random version-4 uids, hashed with 64-bit FNV-1a as the API server does.
- **Membership**: for each sampled size N ({sizes}), a join N → N+1, and on the way back a leave
  N+1 → N of a random member. Sizes are sampled between 2 and 200 (every size would take ~5 minutes).
- **balance**: max/mean keys per member after the change (1.000 is perfect). Part of it is the keys'
  own sampling noise: with {keys:,} keys and 200 members a member's mean is {per200:,} keys.
- **keys moved**: keys whose owner changed. At least the newcomer's (or leaver's) share must move: the
  **ideal** is keys/(N+1); **moved / ideal** 1.00 means nothing else moved.
- **ranges per member**: contiguous ranges of the member with most of them. Each becomes one
  `shardRange(object.metadata.uid, '0x…', '0x…')` term (~82 characters) of the one `shardSelector`
  sent on every list and watch; **selector chars** is that selector's length.
- **ms per assignment**: time to compute the assignment after the change, in pure Python, on a machine
  shared with other work (every member computes it from the Lease list on each membership change).

## Reading it

- The ring puts every member within `ceil(S/N)` slots of S = 2048, so its balance stays near 1 until
  S/N gets small; consistent hashing's balance is ~1 + 3/sqrt(V) however many members there are.
- Movement: the ring moves the changed member's share plus slots its lowered (or raised) cap pushes
  between other members (a displaced slot goes to its next-best member, which may displace another),
  so moved / ideal climbs from ~1 at a few members to 1.5–3 as S/N shrinks. Consistent hashing stays
  near 1 at any size: that is its one advantage here.
- Selector: the ring's slots of one member are scattered, so a member has ~S/N ranges: long selectors
  for few members, short ones for many. Consistent hashing has V ranges per member at any N.
- Cost: the ring sorts N x S scores; at 200 members that is the slowest column, still well under the
  Lease retry period.

## The choice

kubeloop uses the ring because the goal is max/mean ≤ 1.1 from 3 members on, and a modest
selector. With 100 virtual nodes consistent hashing misses the balance at most sizes; with 1000 it
meets it (and moves only the ideal share) by giving every member up to 1000 ranges: a 40–80 kB
selector on every list and watch at any size. The ring's selector is as long at 2–3 members and
shrinks as members join (under 2 kB from 100 members); its price is up to ~3x the ideal movement
from ~25 members on, where each change moves a small share in absolute terms. The API server parses
at most 100,000 characters of a selector (its CEL parser's limit, pinned on 1.36.3 by
tests/integration/test_sharding_serverside.py); with 2048 slots the longest possible, every other slot,
is ~81,000, so every member's selector fits.

## Results

"""

FOOTER = """
## Run

`{run}` at commit {commit}, Python {python}, {elapsed:.0f} s.
"""


# The measured section (python -m harness.kep5866, by hand) starts at this line and survives a rewrite.
KEPT = "## On a real API server"


def kept(old_page: str) -> str:
    """The hand-kept tail of the page being replaced (empty if it has none)."""
    at = old_page.find("\n" + KEPT)
    return old_page[at:] if at >= 0 else ""


def page(sections: Sequence[str], run: str, keys: int, sizes: Sequence[int], commit: str, python: str,
         elapsed: float, tail: str = "") -> str:
    head = INTRO.format(keys=keys, sizes=", ".join(map(str, sizes)), per200=keys // 200)
    return (head + "\n".join(sections) + FOOTER.format(run=run, commit=commit, python=python, elapsed=elapsed)
            + tail)
