"""harness.sharding: the simulation's counting, checked against brute force, and a small run."""

from __future__ import annotations

import random
from collections import Counter
from pathlib import Path

from harness.sharding.cli import main
from harness.sharding.tiling import _owner, keys_moved, keys_per_member, ranges_per_member, slots_tiling, vnode_tiling
from kubeloop.sharding.ring import assign

_RNG = random.Random(5)
KEYS = sorted(_RNG.getrandbits(64) for _ in range(3000))


def test_slots_tiling_agrees_with_the_ring() -> None:
    members = ["a", "b", "c", "d"]
    tiling, ring = slots_tiling(members, 64), assign(members, 64)
    assert all(_owner(tiling, h) == ring.owner_of(h) for h in KEYS)
    assert keys_per_member(tiling, KEYS) == Counter(ring.owner_of(h) for h in KEYS)
    assert ranges_per_member(tiling) == Counter({m: len(ring.ranges(m)) for m in members})


def test_keys_moved_is_the_brute_force_count() -> None:
    for make in (lambda m: slots_tiling(m, 128), lambda m: vnode_tiling(m, 20)):
        before, after = make(["a", "b", "c"]), make(["a", "b", "c", "d"])
        assert keys_moved(before, after, KEYS) == sum(_owner(before, h) != _owner(after, h) for h in KEYS) > 0


def test_vnode_tiling_owner_is_the_next_point_clockwise() -> None:
    bounds, owners = vnode_tiling(["x", "y"], 3)
    assert bounds[0] == 0 and bounds[-1] == 1 << 64 and len(owners) == len(bounds) - 1
    assert all(o1 != o2 for o1, o2 in zip(owners, owners[1:], strict=False))  # merged


def test_a_small_run_prints_and_writes_the_page(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "SHARDING.md"
    assert main(["--keys", "2000", "--sizes", "2,5", "--output", str(out)]) == 0
    text = out.read_text()
    assert "| 2 → 3 |" in text and "| 6 → 5 |" in text and "consistent hashing, 100 virtual nodes" in text
    assert "--output" not in text and str(tmp_path) not in text
    assert "| 5 → 6 |" in capsys.readouterr().out


def test_a_rewrite_keeps_the_hand_measured_section(tmp_path: Path) -> None:
    out = tmp_path / "SHARDING.md"
    out.write_text("# old tables\n| 1 → 2 |\n\n## On a real API server\n\nmeasured: 30,000 objects\n")
    assert main(["--keys", "500", "--sizes", "2", "--output", str(out)]) == 0
    text = out.read_text()
    assert "| 1 → 2 |" not in text and "| 2 → 3 |" in text
    assert text.endswith("\n## On a real API server\n\nmeasured: 30,000 objects\n")
