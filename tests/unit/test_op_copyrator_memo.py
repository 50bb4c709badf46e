"""copyrator's memos (``memo.PerRule``): a plan made with the source memo equals the plan made afresh,
whatever changed in between, and only what changed is looked at again; likewise the copies' hashes."""

from __future__ import annotations

import random
from typing import Any

import pytest

from kubeloop import to_completion
from kubeloop.operators.copyrator import plan as plan_module
from kubeloop.operators.copyrator.boundary import CONSENT_ANNOTATION, STRICT, Boundary
from kubeloop.operators.copyrator.memo import PerRule
from kubeloop.operators.copyrator.plan import Plan, Seen, build_copy, content_hash, decide, planning
from tests.unit.test_op_copyrator import cm, ns, rule

NAMESPACES = [ns("default"), ns("team-b"), ns("team-c", {"x": "1"})]


def planned(r: Any, sources: list[dict[str, Any]], memo: PerRule[Seen] | None = None,
            boundary: Boundary = STRICT) -> Plan:
    return to_completion(planning(r, sources, NAMESPACES, boundary, None, memo))


def same(a: Plan, b: Plan) -> bool:
    return (a.copies == b.copies and a.skipped == b.skipped and a.shadowed == b.shadowed
            and a.on_source == b.on_source and a.foreign == b.foreign and a.sources == b.sources)


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
    memo: PerRule[Seen] = PerRule()
    version = 100
    for _ in range(30):
        for _ in range(rng.randint(1, 5)):
            version += 1
            i = rng.randrange(len(sources))
            sources[i] = changed(sources[i], rng, version)
        if rng.random() < 0.1:
            sources.pop(rng.randrange(len(sources)))
        assert same(planned(r, sources, memo), planned(r, sources))


def test_only_changed_sources_are_viewed_again(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    real = plan_module.view

    def counting(r: Any, source: dict[str, Any], boundary: Boundary = STRICT) -> Any:
        calls.append(source["metadata"]["name"])
        return real(r, source, boundary)

    monkeypatch.setattr(plan_module, "view", counting)
    r, memo = rule(), PerRule[Seen]()
    sources = [cm(f"s{i}") for i in range(100)]
    planned(r, sources, memo)
    assert len(calls) == 100
    calls.clear()
    sources[7] = changed(sources[7], random.Random(0), 2)
    planned(r, sources, memo)
    assert calls == ["s7"]


def test_a_new_rule_generation_or_boundary_views_everything_again() -> None:
    r, memo = rule(namespace=["default", "team-b"]), PerRule[Seen]()
    sources = [cm("a"), cm("b", "team-b")]  # b: another namespace's, without consent
    assert [s["metadata"]["name"] for s in planned(r, sources, memo).sources] == ["a"]
    trusted = Boundary(trusted=("default",))  # the rule's namespace trusted: it reads b too
    assert [s["metadata"]["name"] for s in planned(r, sources, memo, trusted).sources] == ["a", "b"]
    edited = rule(namespace=["default", "team-b"], targetName="x-{name}",
                  metadata={"name": "main-rule", "namespace": "default", "generation": 2, "uid": "r-1"})
    assert set(planned(edited, sources, memo).copies) == {("team-b", "x-a"), ("team-c", "x-a")}


def test_objects_without_a_version_are_never_kept() -> None:
    r, memo = rule(), PerRule[Seen]()
    a = cm("a", data={"k": "1"})
    del a["metadata"]["resourceVersion"]
    planned(r, [a], memo)
    a["data"] = {"k": "2"}  # changed in place, same (absent) version: must not be served from the memo
    assert planned(r, [a], memo).copies[("team-b", "a")]["data"] == {"k": "2"}


def test_forget_drops_the_rules_entries(monkeypatch: pytest.MonkeyPatch) -> None:
    r, memo = rule(), PerRule[Seen]()
    planned(r, [cm("a")], memo)
    memo.forget(r.key)
    seen: list[str] = []
    real = plan_module.view

    def counting(r: Any, source: dict[str, Any], boundary: Boundary = STRICT) -> Any:
        seen.append(source["metadata"]["name"])
        return real(r, source, boundary)

    monkeypatch.setattr(plan_module, "view", counting)
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
