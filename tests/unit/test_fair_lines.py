"""``kubeloop.helpers.lines.FairLines``: one line per lane, the lanes taking turns."""

from __future__ import annotations

import pytest

from kubeloop.helpers.lines import FairLines


def test_lanes_take_turns_and_each_line_keeps_its_order() -> None:
    lines: FairLines[str] = FairLines()
    for i in range(3):
        lines.push("a", f"a{i}")
    lines.push("b", "b0")
    lines.push("c", "c0")
    lines.push("b", "b1")
    assert len(lines) == 6 and lines.waiting("a") == 3 and lines.waiting("z") == 0
    assert [lines.pop() for _ in range(6)] == ["a0", "b0", "c0", "a1", "b1", "a2"]
    assert len(lines) == 0
    with pytest.raises(IndexError):
        lines.pop()


def test_a_lane_that_empties_joins_the_rotation_last_when_it_comes_back() -> None:
    lines: FairLines[str] = FairLines()
    lines.push("a", "a0")
    lines.push("b", "b0")
    lines.push("b", "b1")
    assert lines.pop() == "a0"
    lines.push("a", "a1")  # behind b, which is waiting already
    assert [lines.pop() for _ in range(3)] == ["b0", "a1", "b1"]
    lines.push("x", "x0")
    lines.clear()
    assert len(lines) == 0 and lines.waiting("x") == 0
