"""The receiving namespace decides: its policy ConfigMap, its copy limit, and copies edited in place."""

from __future__ import annotations

from typing import Any

import pytest

from kubeloop.operators.copyrator.models import CopyratorRule
from kubeloop.operators.copyrator.plan import build_copy, decide, edited_in_place, plan
from kubeloop.operators.copyrator.receiving import (
    LIMITED,
    POLICY_NAME,
    REFUSED,
    NamespacePolicy,
    Reception,
    read_policy,
)


def rule(name: str = "r", ns: str = "team-a") -> CopyratorRule:
    return CopyratorRule.from_dict({"apiVersion": "flant.com/v1", "kind": "CopyratorRule",
                                    "metadata": {"name": name, "namespace": ns, "generation": 1},
                                    "ruleType": "configmap", "selector": {"copy": "yes"}, "namespace": ns})


def cm(name: str, ns: str = "team-a", **extra: Any) -> dict[str, Any]:
    return {"kind": "ConfigMap", "metadata": {"name": name, "namespace": ns, "uid": f"u-{name}",
                                              "labels": {"copy": "yes"}}, "data": {"k": name}, **extra}


def namespaces(*names: str) -> list[dict[str, Any]]:
    return [{"metadata": {"name": n}} for n in names]


def policy_cm(**data: str) -> dict[str, Any]:
    return {"kind": "ConfigMap", "metadata": {"name": POLICY_NAME, "namespace": "b"}, "data": data}


@pytest.mark.parametrize(("data", "refused"), [
    ({}, False), ({"accept": "true"}, False), ({"accept": "*"}, False), ({"accept": "false"}, True),
    ({"accept": ""}, True), ({"accept": "team-a"}, False), ({"accept": "team-*"}, False),
    ({"accept": "team-a/r"}, False), ({"accept": "team-a/other"}, True), ({"accept": "ops"}, True),
    ({"max-copies": "ten"}, True),  # unreadable: nothing accepted until fixed (the owner meant to limit)
    ({"accept": ",".join(f"*x?{i}*" for i in range(17))}, True),  # beyond the bounds of a consent value
])
def test_the_policy_configmap_says_which_rules_may_copy_in(data: dict[str, str], refused: bool) -> None:
    policy = read_policy(policy_cm(**data))
    assert (policy.refusal("team-a", "team-a/r") is not None) is refused


def test_no_policy_accepts_everything_as_the_article_expects() -> None:
    assert read_policy(None) == NamespacePolicy() and NamespacePolicy().refusal("x", "x/y") is None
    assert read_policy(policy_cm(**{"max-copies": "3"})).max_copies == 3


def reception(refused: set[str] = frozenset(), room: dict[str, int] | None = None) -> Reception:
    return Reception(refusal=lambda r, ns: "no" if ns in refused else None,
                     room=lambda r, ns: (room or {}).get(ns))


def test_a_refusing_namespace_gets_no_copies_and_is_reported() -> None:
    desired = plan(rule(), [cm("x"), cm("y")], namespaces("team-a", "b", "c"), reception=reception({"b"}))
    assert sorted(desired.copies) == [("c", "x"), ("c", "y")]
    assert desired.declined == [("b", REFUSED, "no")]


def test_the_copy_limit_keeps_the_first_sources_and_says_so_once() -> None:
    sources = [cm(f"s{i}") for i in range(5)]
    desired = plan(rule(), sources, namespaces("b", "c"), reception=reception(room={"b": 2}))
    assert sorted(n for ns, n in desired.copies if ns == "b") == ["s0", "s1"]  # by name: no event order
    assert len([c for c in desired.copies if c[0] == "c"]) == 5  # no limit given there
    assert [d[:2] for d in desired.declined] == [("b", LIMITED)]


def test_a_copy_is_never_named_like_a_namespace_policy() -> None:
    desired = plan(rule(), [cm(POLICY_NAME)], namespaces("b"))
    assert desired.copies == {} and desired.skipped == [(f"team-a/{POLICY_NAME}", "ProtectedTargetName")]


def test_a_copy_edited_in_place_is_neither_reverted_nor_deleted() -> None:
    r = rule()
    desired = build_copy(r, cm("x"), "b", "x")
    assert not edited_in_place(desired)
    applied = {**desired, "data": {"k": "the owner's"}}  # `kubectl apply` of their own app-settings
    assert edited_in_place(applied)
    assert decide(r, applied, desired).reason == "EditedInPlace"
