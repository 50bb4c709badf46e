"""``python -m harness.sharding``: 1,000,000 keys, membership 2 → 200 (joins) and back (leaves).

For each sampled size N it measures the change N → N+1 (a join) and N+1 → N (a random member
leaves), for kubeloop's ring and for consistent hashing with virtual nodes: balance (max/mean keys per
member, after the change), keys moved (absolute, and against the 1/(N+1) share that must move at least),
ranges per member (max: the terms of its one selector), the longest selector in characters, and the
time to compute one assignment. Sizes are sampled (every size 2..10, then 23 in all up to 199): every
size to 200 would take ~5 minutes here.
"""

from __future__ import annotations

import argparse
import platform
import random
import sys
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from harness.common.provenance import REPO, git_revision, invocation
from harness.sharding.tiling import Tiling, keys_moved, keys_per_member, ranges_per_member, slots_tiling, vnode_tiling
from kubeloop.sharding.hashing import fnv1a64, selector
from kubeloop.sharding.ring import DEFAULT_SLOTS

SIZES = (2, 3, 4, 5, 6, 7, 8, 9, 10, 12, 16, 20, 25, 32, 40, 50, 64, 80, 100, 128, 150, 175, 199)
ALGORITHMS: dict[str, Callable[[Sequence[str]], Tiling]] = {
    f"kubeloop ring: {DEFAULT_SLOTS} slots, bounded-load rendezvous": lambda m: slots_tiling(m, DEFAULT_SLOTS),
    "consistent hashing, 100 virtual nodes": lambda m: vnode_tiling(m, 100),
    "consistent hashing, 1000 virtual nodes": lambda m: vnode_tiling(m, 1000),
}


@dataclass
class Row:
    change: str  # "3 → 4"
    balance: float
    moved: int
    ideal: float
    ranges: int
    selector_chars: int
    ms: float


def _keys(n: int, seed: int) -> list[int]:
    rng = random.Random(seed)  # random version-4 uids, as the API server makes them
    return sorted(fnv1a64(str(uuid.UUID(int=rng.getrandbits(128), version=4))) for _ in range(n))


def _timed(algo: Callable[[Sequence[str]], Tiling], members: Sequence[str]) -> tuple[Tiling, float]:
    start = time.perf_counter()
    tiling = algo(members)
    return tiling, (time.perf_counter() - start) * 1000


def _row(before: Tiling, after: Tiling, keys: list[int], change: str, share: int, ms: float) -> Row:
    load = keys_per_member(after, keys)
    ranges = ranges_per_member(after)
    widest = max(ranges, key=ranges.__getitem__)
    bounds, owners = after
    text = selector((bounds[i], bounds[i + 1]) for i, o in enumerate(owners) if o == widest)
    return Row(change, max(load.values()) / (len(keys) / len(load)), keys_moved(before, after, keys),
               len(keys) / share, max(ranges.values()), len(text), ms)


def measure(algo: Callable[[Sequence[str]], Tiling], keys: list[int], sizes: Sequence[int],
            seed: int) -> tuple[list[Row], list[Row]]:
    """(joins, leaves): N → N+1 for each size, then N+1 → N with a random member leaving."""
    rng = random.Random(seed)
    joins, leaves = [], []
    for n in sizes:
        small, _ = _timed(algo, [f"replica-{i}" for i in range(n)])
        big, ms = _timed(algo, [f"replica-{i}" for i in range(n + 1)])
        joins.append(_row(small, big, keys, f"{n} → {n + 1}", n + 1, ms))
    for n in reversed(sizes):
        members = [f"replica-{i}" for i in range(n + 1)]
        members.remove(rng.choice(members))
        before, _ = _timed(algo, [f"replica-{i}" for i in range(n + 1)])
        after, ms = _timed(algo, members)
        leaves.append(_row(before, after, keys, f"{n + 1} → {n}", n + 1, ms))
    return joins, leaves


def table(rows: list[Row]) -> str:
    head = ("| change | balance (max/mean) | keys moved | moved / ideal | ranges per member (max) "
            "| selector chars (max) | ms per assignment |\n|---|---:|---:|---:|---:|---:|---:|\n")
    return head + "".join(
        f"| {r.change} | {r.balance:.3f} | {r.moved:,} | {r.moved / r.ideal:.2f} | {r.ranges} "
        f"| {r.selector_chars:,} | {r.ms:.0f} |\n" for r in rows)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m harness.sharding", description=__doc__.split("\n")[0])
    p.add_argument("--keys", type=int, default=1_000_000, help="number of simulated object uids")
    p.add_argument("--sizes", default=",".join(map(str, SIZES)), help="membership sizes N (N → N+1 → N)")
    p.add_argument("--seed", type=int, default=20)
    p.add_argument("--output", type=Path, default=REPO / "docs" / "SHARDING.md",
                   help="the page written (--output '' prints only)")
    args = p.parse_args(argv)
    try:
        sizes = [int(s) for s in args.sizes.split(",")]
    except ValueError:
        p.error(f"--sizes {args.sizes!r}: give membership sizes as integers, e.g. 2,3,10")
    if args.keys < 1 or any(n < 1 for n in sizes):
        p.error("--keys and every --sizes value must be at least 1")
    started = time.perf_counter()
    keys = _keys(args.keys, args.seed)
    sections = []
    for name, algo in ALGORITHMS.items():
        joins, leaves = measure(algo, keys, sizes, args.seed)
        section = f"### {name}\n\nJoins:\n\n{table(joins)}\nLeaves:\n\n{table(leaves)}"
        print(section, flush=True)
        sections.append(section)
    elapsed = time.perf_counter() - started
    if str(args.output) not in ("", "."):
        from harness.sharding.page import kept, page  # noqa: PLC0415 - only when writing
        run = invocation("python -m harness.sharding", sys.argv[1:] if argv is None else argv, {"--output": True})
        tail = kept(args.output.read_text()) if args.output.exists() else ""
        args.output.write_text(page(sections, run, args.keys, sizes, git_revision(), platform.python_version(),
                                    elapsed, tail))
        print(f"wrote {args.output}")
    return 0
