"""copyrator's memos: a plan made with the rule's memo (``plan.PlanMemo``) equals the plan made afresh,
whatever changed in between, only what changed is looked at again, and a plan made of the same is the
last one; likewise the copies' hashes (``memo.PerRule``). And ``Plan.without``, which the author check
uses instead of a second plan."""

from __future__ import annotations

import random
from typing import Any

import pytest

from kubeloop import to_completion
from kubeloop.operators.copyrator import plan as plan_module
from kubeloop.operators.copyrator.boundary import CONSENT_ANNOTATION, STRICT, Boundary
from kubeloop.operators.copyrator.memo import PerRule
from kubeloop.operators.copyrator.plan import Plan, PlanMemo, build_copy, content_hash, decide, planning
from kubeloop.operators.copyrator.receiving import Reception
from tests.unit.test_op_copyrator import cm, ns, rule
from tests.unit.test_op_copyrator_receiving import reception

NAMESPACES = [ns("default"), ns("team-b"), ns("team-c", {"x": "1"})]


def planned(r: Any, sources: list[dict[str, Any]], memo: PlanMemo | None = None,
            boundary: Boundary = STRICT, namespaces: list[dict[str, Any]] = NAMESPACES,
            receiving: Reception | None = None) -> Plan:
    return to_completion(planning(r, sources, namespaces, boundary, receiving, memo))


def same(a: Plan, b: Plan) -> bool:
    return (a.copies == b.copies and a.skipped == b.skipped and a.shadowed == b.shadowed
            and a.on_source == b.on_source and a.foreign == b.foreign and a.sources == b.sources
            and a.declined == b.declined and a.room == b.room)


def changed(obj: dict[str, Any], rng: random.Random, version: int) -> dict[str, Any]:
    """One of the changes a tenant makes to a source, with the new resourceVersion the API server gives it."""
    m = {**obj["metadata"], "resourceVersion": str(version)}
    body = {**obj, "metadata": m}
    what = rng.choice(["data", "label", "unlabel", "consent", "foreign", "name-only-rv"])
    if what == "data":
        body["data"] = {"k": f"v{version}"}
    elif what == "label":
        m["labels"] = {**m.get("labels", {}), "copyrator": "true", "team": str(version)}
    elif what == "unlabel":
        m["labels"] = {}
    elif what == "consent":
        m["annotations"] = {**(m.get("annotations") or {}), CONSENT_ANNOTATION: rng.choice(["team-b", "false", "*"])}
    elif what == "foreign":
        m["annotations"] = {**(m.get("annotations") or {}),
                            "reflector.v1.k8s.emberstack.com/reflection-allowed": "true"}
    return body


@pytest.mark.parametrize("seed", range(8))
def test_memo_plans_equal_fresh_plans_under_random_changes(seed: int) -> None:
    rng = random.Random(seed)
    r = rule(namespace=["default", "team-b"], targetName="copy-{name}")
    sources = [cm(f"s{i}", rng.choice(["default", "team-b"])) for i in range(40)]
    memo = PlanMemo()
    version = 100
    for _ in range(30):
        for _ in range(rng.choice([0, 0, 1, 3, 5])):  # none: only the namespaces or reception change
            version += 1
            i = rng.randrange(len(sources))
            sources[i] = changed(sources[i], rng, version)
        if rng.random() < 0.1:
            sources.pop(rng.randrange(len(sources)))
        namespaces = [n for n in NAMESPACES + [ns("team-d"), ns("default-x")] if rng.random() < 0.8]
        receiving = rng.choice([None, reception({"team-d"} if rng.random() < 0.3 else set(),
                                                {"team-b": rng.randint(0, 3)} if rng.random() < 0.3 else None)])
        assert same(planned(r, sources, memo, namespaces=namespaces, receiving=receiving),
                    planned(r, sources, namespaces=namespaces, receiving=receiving))


def viewed(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the sources ``plan.view`` is asked about from now on, in order."""
    calls: list[str] = []
    real = plan_module.view

    def counting(r: Any, source: dict[str, Any], boundary: Boundary = STRICT) -> Any:
        calls.append(source["metadata"]["name"])
        return real(r, source, boundary)

    monkeypatch.setattr(plan_module, "view", counting)
    return calls


def test_only_changed_sources_are_viewed_again(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = viewed(monkeypatch)
    r, memo = rule(), PlanMemo()
    sources = [cm(f"s{i}") for i in range(100)]
    first = planned(r, sources, memo)
    assert len(calls) == 100
    calls.clear()
    sources[7] = {**sources[7], "metadata": {**sources[7]["metadata"], "resourceVersion": "2"}}
    assert planned(r, sources, memo) is first  # rewritten to no effect on the rule: the same plan
    sources[8] = {**sources[8], "data": {"k": "new"}, "metadata": {**sources[8]["metadata"], "resourceVersion": "2"}}
    again = planned(r, sources, memo)
    assert calls == ["s7", "s8"] and again is not first and again.copies[("team-b", "s8")]["data"] == {"k": "new"}


def test_a_new_rule_generation_or_boundary_views_everything_again() -> None:
    r, memo = rule(namespace=["default", "team-b"]), PlanMemo()
    sources = [cm("a"), cm("b", "team-b")]  # b: another namespace's, without consent
    assert planned(r, sources, memo).sources == ["default/a"]
    trusted = Boundary(trusted=("default",))  # the rule's namespace trusted: it reads b too
    assert planned(r, sources, memo, trusted).sources == ["default/a", "team-b/b"]
    edited = rule(namespace=["default", "team-b"], targetName="x-{name}",
                  metadata={"name": "main-rule", "namespace": "default", "generation": 2, "uid": "r-1"})
    assert set(planned(edited, sources, memo).copies) == {("team-b", "x-a"), ("team-c", "x-a")}


def test_objects_without_a_version_are_never_kept() -> None:
    r, memo = rule(), PlanMemo()
    a = cm("a", data={"k": "1"})
    del a["metadata"]["resourceVersion"]
    planned(r, [a], memo)
    a["data"] = {"k": "2"}  # changed in place, same (absent) version: must not be served from the memo
    assert planned(r, [a], memo).copies[("team-b", "a")]["data"] == {"k": "2"}


def test_forget_drops_the_rules_entries(monkeypatch: pytest.MonkeyPatch) -> None:
    r, memo = rule(), PlanMemo()
    planned(r, [cm("a")], memo)
    memo.forget(r.key)
    seen = viewed(monkeypatch)
    planned(r, [cm("a")], memo)
    assert seen == ["a"]


def test_copies_are_hashed_again_only_when_they_changed() -> None:
    hashed: list[str] = []

    def counting(obj: dict[str, Any]) -> str:
        hashed.append(obj["metadata"]["name"])
        return content_hash(obj)

    r, hashes = rule(), PerRule[str]()
    copies = []
    for i in range(3):
        c = build_copy(r, cm(f"s{i}"), "team-b", f"s{i}")
        c["metadata"].update(uid=f"c{i}", resourceVersion="5")
        copies.append(c)
    hash_of = hashes.pass_for(r.key, None, counting)
    assert [decide(r, c, c, hash_of=hash_of).action for c in copies] == ["none"] * 3
    edited = {**copies[1], "data": {"k": "mine"}, "metadata": {**copies[1]["metadata"], "resourceVersion": "6"}}
    hash_of = hashes.pass_for(r.key, None, counting)
    assert decide(r, copies[0], copies[0], hash_of=hash_of).action == "none"
    assert decide(r, edited, copies[1], hash_of=hash_of).reason == "EditedInPlace"
    assert hashed == ["s0", "s1", "s2", "s1"]


@pytest.mark.parametrize("seed", range(6))
def test_a_plan_without_some_namespaces_is_the_plan_over_the_others(seed: int) -> None:
    rng = random.Random(seed)
    namespaces = [ns(f"t{i}") for i in range(6)] + [ns("default")]
    r = rule(namespace=["default", "t0"], targetName=rng.choice(["{name}", "x"]))  # "x": every source one name
    sources = [cm(f"s{i}", rng.choice(["default", "t0"]),
                  **({"metadata": {"annotations": {CONSENT_ANNOTATION: "t1,t2,t3"}}} if rng.random() < 0.3 else {}))
               for i in range(12)]
    left_out = {f"t{i}" for i in range(6) if rng.random() < 0.5}
    full = planned(r, sources, namespaces=namespaces)
    rest = planned(r, sources, namespaces=[n for n in namespaces if n["metadata"]["name"] not in left_out])
    assert same(full.without(left_out), rest)
