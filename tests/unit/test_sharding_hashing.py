"""kubeloop.sharding.hashing: the API server's hash and selector syntax (KEP-5866)."""

from __future__ import annotations

import pytest

from kubeloop.sharding.hashing import SPACE, contains, fnv1a64, merge, parse_selector, parse_shard_info, selector

# Printed by a Go program (go1 `hash/fnv`: fnv.New64a, Write, Sum64 as %016x), run on this machine for
# this test -- the API server's HashField does exactly that. Not computed by the code under test.
GO_FNV64A = {
    "": 0xCBF29CE484222325,
    "a": 0xAF63DC4C8601EC8C,
    "default": 0xEBADA5168620C5FE,
    "3f2504e0-4f89-11d3-9a0c-0305e82c3301": 0xA6FBB9057C9867A0,
    "8c1b7d0e-5b7a-4b7e-9a55-2f6f0c1e9d10": 0x7B123224942080B7,
    "kube-system": 0xDF65C7BC1D82B35E,
}


@pytest.mark.parametrize("value", sorted(GO_FNV64A))
def test_fnv1a64_matches_go(value: str) -> None:
    assert fnv1a64(value) == GO_FNV64A[value]


def test_selector_normalizes_merges_and_joins() -> None:
    half = 1 << 63
    text = selector([(half, SPACE), (0, 1 << 60), (1 << 60, 1 << 61)])
    assert text == ("shardRange(object.metadata.uid, '0x0000000000000000', '0x2000000000000000') || "
                    "shardRange(object.metadata.uid, '0x8000000000000000', '0x10000000000000000')")


def test_selector_of_everything_is_empty_and_of_nothing_is_an_error() -> None:
    assert selector([(0, 1 << 63), (1 << 63, SPACE)]) == ""
    with pytest.raises(ValueError, match="no shard ranges"):
        selector([])


@pytest.mark.parametrize("bad", [[(5, 5)], [(0, SPACE + 1)], [(-1, 3)]])
def test_bad_ranges_are_refused(bad: list[tuple[int, int]]) -> None:
    with pytest.raises(ValueError, match="shard range"):
        selector(bad)


def test_bad_field_is_refused() -> None:
    with pytest.raises(ValueError, match="object.metadata.name"):
        selector([(0, 5)], field="object.metadata.name")


def test_namespace_field_and_round_trip() -> None:
    ranges = [(3, 9), (1 << 62, (1 << 62) + 77)]
    assert parse_selector(selector(ranges, "object.metadata.namespace")) == ("object.metadata.namespace", ranges)


def test_shard_info_echo() -> None:
    echo = {"metadata": {"resourceVersion": "5", "shardInfo": {
        "selector": "shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')"}}}
    assert parse_shard_info(echo) == ("object.metadata.uid", [(0, 1 << 63)])
    assert parse_shard_info({"metadata": {"resourceVersion": "5"}}) is None  # server did not filter


@pytest.mark.parametrize("text", [
    "shardRange(object.metadata.uid, '0x0', '0x8000000000000000')",  # the server wants 16 digits too
    "shardRange(object.metadata.uid, '0x00', '0x80') && x",
    "shardRange(object.metadata.uid, '0x0000000000000000', '0x0000000000000001') || "
    "shardRange(object.metadata.namespace, '0x0000000000000001', '0x0000000000000002')",
])
def test_malformed_echo_is_an_error(text: str) -> None:
    with pytest.raises(ValueError, match="shard selector"):
        parse_shard_info({"metadata": {"shardInfo": {"selector": text}}})


def test_contains_is_half_open() -> None:
    assert contains([(10, 20)], 10) and contains([(10, 20)], 19)
    assert not contains([(10, 20)], 20) and not contains([(10, 20)], 9)
    assert merge([(0, 5), (3, 9), (9, 10), (12, 13)]) == [(0, 10), (12, 13)]
