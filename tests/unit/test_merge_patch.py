"""kubeloop.client.merge.merge_patch: RFC 7386 applied locally, sharing nothing mutable with either side."""

from __future__ import annotations

from kubeloop.client.merge import merge_patch


def test_merge_replace_and_delete() -> None:
    target = {"a": 1, "b": {"c": 2, "d": 3}, "e": [1, 2]}
    patch = {"a": "x", "b": {"c": None, "f": 4.5}, "e": [3], "g": True}
    assert merge_patch(target, patch) == {"a": "x", "b": {"d": 3, "f": 4.5}, "e": [3], "g": True}
    assert target == {"a": 1, "b": {"c": 2, "d": 3}, "e": [1, 2]}  # unchanged


def test_the_result_shares_no_mutable_part_with_the_patch() -> None:
    patch = {"list": [{"k": "v"}], "nested": {"list": [1]}}
    out = merge_patch({}, patch)
    out["list"][0]["k"] = "changed"
    out["nested"]["list"].append(2)
    assert patch == {"list": [{"k": "v"}], "nested": {"list": [1]}}


def test_a_patch_that_is_not_an_object_replaces_the_target() -> None:
    assert merge_patch({"a": 1}, "text") == "text"
    assert merge_patch({"a": 1}, 7) == 7
    assert merge_patch({"a": 1}, [1, {"b": 2}]) == [1, {"b": 2}]
