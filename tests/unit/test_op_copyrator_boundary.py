"""copyrator's security boundary as pure logic: closed namespaces, source consent,
take-over consent, trusted namespaces, and the rule that a rule's own sources are never written
over or deleted — the last also as a property over random layouts, run pass after pass."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubeloop.operators.copyrator import CopyratorRule
from kubeloop.operators.copyrator.boundary import Boundary, consents_to, has_consent
from kubeloop.operators.copyrator.plan import (
    CONSENT_ANNOTATION,
    SOURCE_ANNOTATION,
    TAKEOVER_ANNOTATION,
    build_copy,
    decide,
    matches_source,
    meta,
    owner_of,
    plan,
    released,
    target_namespaces,
)
from kubeloop.operators.copyrator.settings import CopyratorSettings as S

Obj = dict[str, Any]
_uids = itertools.count()


def rule(ns: str = "team-a", name: str = "r", **fields: Any) -> CopyratorRule:
    body = {"apiVersion": "flant.com/v1", "kind": "CopyratorRule",
            "metadata": {"name": name, "namespace": ns, "generation": 1, "uid": f"rule-{ns}-{name}"},
            "ruleType": "configmap", "selector": {"copy": "yes"}, "namespace": ns}
    return CopyratorRule.from_dict({**body, **fields})


def ns(name: str) -> Obj:
    return {"kind": "Namespace", "metadata": {"name": name, "labels": {}}, "status": {"phase": "Active"}}


def cm(name: str, namespace: str, data: str = "1", labelled: bool = True, **annotations: str) -> Obj:
    return {"apiVersion": "v1", "kind": "ConfigMap", "data": {"k": data},
            "metadata": {"name": name, "namespace": namespace, "uid": f"u{next(_uids)}",
                         "resourceVersion": "1", "labels": {"copy": "yes"} if labelled else {},
                         "annotations": dict(annotations)}}


NAMESPACES = [ns(n) for n in ("team-a", "team-b", "team-c", "kube-system", "kube-public", "kube-node-lease",
                              "copyrator")]


# --- where copies may go --------------------------------------------------------------------------


def test_system_and_operator_namespaces_are_closed_unless_allowed() -> None:
    r = rule()
    assert target_namespaces(r, NAMESPACES) == ["copyrator", "team-a", "team-b", "team-c"]
    own = Boundary(operator_namespace="copyrator")
    assert target_namespaces(r, NAMESPACES, own) == ["team-a", "team-b", "team-c"]
    opened = Boundary(operator_namespace="copyrator", allow_system=True)
    assert len(target_namespaces(r, NAMESPACES, opened)) == len(NAMESPACES)
    closed = Boundary(allow_system=True, closed_too=("team-b", "kube-*"))
    assert target_namespaces(r, NAMESPACES, closed) == ["copyrator", "team-a", "team-c"]
    # Even a desired copy that reached decide() is refused there.
    desired = build_copy(r, cm("x", "team-a"), "kube-system", "x")
    assert decide(r, None, desired).reason == "ClosedNamespace"
    assert decide(r, None, desired, opened).action == "create"


def test_boundary_from_flag_values() -> None:
    b = Boundary.from_settings(S(trusted_namespace=("platform, ops-*", "admin"), allow_system_namespaces=True,
                                 closed_namespace=("monitoring,ingress-*",)), "copyrator")
    assert b == Boundary(trusted=("platform", "ops-*", "admin"), allow_system=True, operator_namespace="copyrator",
                         closed_too=("monitoring", "ingress-*"))
    assert b.trusts(rule("ops-1")) and not b.trusts(rule("team-a"))
    assert Boundary.from_settings(S(), None) == Boundary()
    # By default the operator's own namespace is trusted (the article keeps its rules there); a list
    # given replaces that default, and "" trusts none.
    assert Boundary.from_settings(S(trusted_namespace=()), "copyrator").trusted == ("copyrator",)
    assert Boundary.from_settings(S(trusted_namespace=("",)), "copyrator").trusted == ()
    assert Boundary.from_settings(S(trusted_namespace=("ops",)), "copyrator").trusted == ("ops",)
    # Run in "default" (the article's manifests applied as they are), it trusts nobody unless told.
    assert Boundary.from_settings(S(trusted_namespace=()), "default").trusted == ()
    assert Boundary.from_settings(S(trusted_namespace=("default",)), "default").trusted == ("default",)


# --- what a rule may read -------------------------------------------------------------------------


def test_sources_of_other_namespaces_need_their_owners_consent() -> None:
    r = rule(namespace=["team-a", "team-b"])
    objects = [cm("mine", "team-a"), cm("private", "team-b"), cm("closed", "team-b", **{CONSENT_ANNOTATION: "false"}),
               cm("open", "team-b", **{CONSENT_ANNOTATION: "true"}),
               cm("to-a", "team-b", **{CONSENT_ANNOTATION: "team-a"})]
    p = plan(r, objects, NAMESPACES)
    assert sorted(p.sources) == [
        "team-a/mine", "team-b/open", "team-b/to-a"]
    assert {name for _, name in p.copies} == {"mine", "open", "to-a"}
    assert {n for n, name in p.copies if name == "to-a"} == {"team-a"}  # only where its owner allowed
    assert p.skipped == []
    # No consenting source there at all: the rule says so, without naming the objects it may not see.
    alone = plan(r, objects[:3], NAMESPACES)
    assert alone.skipped == [("team-b/*", "NoConsent")]
    # A trusted rule namespace reads without consent, but never against an explicit "false".
    trusted = plan(r, objects[:3], NAMESPACES, Boundary(trusted=("team-a",)))
    assert {name for _, name in trusted.copies} == {"mine", "private"}
    assert trusted.skipped == [("team-b/closed", "NoConsent")]


def test_a_configmap_saying_where_it_may_go_is_obeyed_in_its_own_namespace_too() -> None:
    p = plan(rule(), [cm("x", "team-a", **{CONSENT_ANNOTATION: "team-c"}),
                      cm("y", "team-a", **{CONSENT_ANNOTATION: "false"})], NAMESPACES)
    assert list(p.copies) == [("team-c", "x")] and p.skipped == [("team-a/y", "NoConsent")]


# --- what a rule may take over --------------------------------------------------------------------


@pytest.mark.parametrize(("value", "allowed"), [
    (None, False), ("", False), ("false", False), ("true", True), ("*", True), ("team-a", True),
    ("team-*", True), ("team-a/r", True), ("team-a/other", False), ("team-b, team-a/r", True), ("team-b", False),
])
def test_take_over_needs_the_targets_consent(value: str | None, allowed: bool) -> None:
    r = rule(conflictPolicy="Overwrite", targetName="victim")
    desired = build_copy(r, cm("src", "team-a"), "team-b", "victim")
    theirs = cm("victim", "team-b", data="theirs", labelled=False,
                **({TAKEOVER_ANNOTATION: value} if value is not None else {}))
    decision = decide(r, theirs, desired)
    assert (decision.action == "overwrite") is allowed
    if not allowed:
        assert decision.reason == "NoTakeoverConsent" and TAKEOVER_ANNOTATION in decision.message


def test_trust_takes_over_only_with_content_from_trusted_namespaces() -> None:
    """A trusted rule reading a tenant's namespace copies names and contents that tenant chose: those
    never take over an object without its consent; the trusted namespace's own sources still do."""
    r = rule("ops", conflictPolicy="Overwrite", namespace=["ops", "team-a"])
    trusted = Boundary(trusted=("ops",))
    theirs = cm("victim", "team-b", data="theirs", labelled=False)
    from_tenant = build_copy(r, cm("victim", "team-a", data="tenant"), "team-b", "victim")
    from_ops = build_copy(r, cm("victim", "ops", data="ops"), "team-b", "victim")
    assert decide(r, theirs, from_tenant, trusted).reason == "NoTakeoverConsent"
    assert decide(r, theirs, from_ops, trusted).action == "overwrite"
    assert decide(r, theirs, from_tenant, Boundary(trusted=("ops", "team-a"))).action == "overwrite"
    consenting = cm("victim", "team-b", labelled=False, **{TAKEOVER_ANNOTATION: "ops"})
    assert decide(r, consenting, from_tenant, trusted).action == "overwrite"


def test_no_copy_is_named_like_the_clusters_ca_bundle() -> None:
    p = plan(rule(targetName="kube-root-ca.crt"), [cm("x", "team-a")], NAMESPACES)
    assert not p.copies and p.skipped == [("team-a/x", "ProtectedTargetName")]
    p = plan(rule(targetName="{name}.crt"), [cm("kube-root-ca", "team-a")], NAMESPACES)
    assert not p.copies and p.skipped == [("team-a/kube-root-ca", "ProtectedTargetName")]


# --- a rule's sources are never its targets: the two-namespace layout ----------------------------


class Cluster:
    """ConfigMaps by (namespace, name), changed the way Sync changes them."""

    def __init__(self, objects: list[Obj]) -> None:
        self.objects = {(meta(o)["namespace"], meta(o)["name"]): o for o in objects}

    def sync(self, r: CopyratorRule, boundary: Boundary) -> list[tuple[str, tuple[str, str]]]:
        """One reconcile of ``r``; returns what it wrote or deleted: (verb, place)."""
        desired = plan(r, list(self.objects.values()), NAMESPACES, boundary)
        done = []
        for place, copy in desired.copies.items():
            existing = self.objects.get(place)
            action = decide(r, existing, copy, boundary).action
            if action in ("adopt", "overwrite"):  # only what consented (or for a trusted rule)
                source_ns = copy["metadata"]["labels"]["copyrator.flant.com/source-namespace"]
                assert existing is not None and boundary.may_take_over(r, existing, source_ns), (r.key, action, place)
            if action in ("create", "recreate"):
                self.objects[place] = {**copy, "metadata": {**copy["metadata"], "uid": f"u{next(_uids)}"}}
            elif action in ("update", "adopt", "overwrite"):
                assert existing is not None
                self.objects[place] = {**copy, "metadata": {**copy["metadata"], "uid": meta(existing)["uid"]}}
            if action not in ("none", "conflict"):
                done.append((action, place))
        for place, obj in list(self.objects.items()):
            if owner_of(obj) == r.key and place not in desired.copies:
                if r.orphanOnDelete:
                    patch = released(obj)["metadata"]
                    md = {**meta(obj)}
                    md["labels"] = {k: v for k, v in md["labels"].items() if k not in patch.get("labels", {})}
                    md["annotations"] = {k: v for k, v in md["annotations"].items()
                                         if k not in patch.get("annotations", {})}
                    self.objects[place] = {**obj, "metadata": md}
                    done.append(("release", place))
                else:
                    del self.objects[place]
                    done.append(("delete", place))
        return done


@pytest.mark.parametrize("policy", ["Adopt", "Overwrite"])
def test_two_source_namespaces_keep_both_originals(policy: str) -> None:
    """namespace: [a, b] with x in both (identical: Adopt applies; every consent given, so that only
    "a source is never a target" stands in the way): used to make each a copy of the other, then
    delete both on the next pass."""
    everything = {CONSENT_ANNOTATION: "true", TAKEOVER_ANNOTATION: "true"}
    a, b = cm("x", "team-a", **everything), cm("x", "team-b", **everything)
    cluster = Cluster([a, b])
    r = rule(namespace=["team-a", "team-b"], conflictPolicy=policy)
    for _ in range(3):
        cluster.sync(r, Boundary())
    assert cluster.objects[("team-a", "x")] is a and cluster.objects[("team-b", "x")] is b
    assert owner_of(cluster.objects[("team-c", "x")]) == r.key  # team-c still gets its copy (from team-a)
    status = plan(r, list(cluster.objects.values()), NAMESPACES)
    assert sorted(status.on_source) == [("team-a", "x", "team-b/x"), ("team-b", "x", "team-a/x")]
    assert decide(r, b, build_copy(r, a, "team-b", "x")).reason == "SourceInPlace"


# --- the same, as a property over random layouts -------------------------------------------------


def copied_from(copy: Obj, sources: dict[tuple[str, str], Obj], r: CopyratorRule, boundary: Boundary) -> None:
    """A copy comes from a source the rule may read, into a namespace that source allows."""
    src_ns, _, src_name = meta(copy)["annotations"][SOURCE_ANNOTATION].partition("/")
    source = sources[(src_ns, src_name)]
    assert src_ns == r.metadata.namespace or has_consent(source) or boundary.trusts(r), (r.key, src_ns)
    assert consents_to(source, meta(copy)["namespace"])

SPACES = ["team-a", "team-b", "team-c", "kube-system"]
consent = st.sampled_from([None, "true", "false", "team-a", "team-b", "team-c", "team-*"])
takeover = st.sampled_from([None, "true", "team-a", "team-b/r", "team-*"])


@st.composite
def layouts(draw: st.DrawFn) -> tuple[list[Obj], list[CopyratorRule], Boundary]:
    objects: dict[tuple[str, str], Obj] = {}
    for _ in range(draw(st.integers(1, 10))):
        space, name = draw(st.sampled_from(SPACES)), draw(st.sampled_from(["x", "y", "z"]))
        annotations = {k: v for k, v in ((CONSENT_ANNOTATION, draw(consent)),
                                         (TAKEOVER_ANNOTATION, draw(takeover))) if v is not None}
        objects[(space, name)] = cm(name, space, draw(st.sampled_from(["1", "2"])), draw(st.booleans()),
                                    **annotations)
    rules = []
    for name in draw(st.lists(st.sampled_from(["r", "s"]), min_size=1, max_size=2, unique=True)):
        sources = draw(st.lists(st.sampled_from(SPACES), min_size=1, max_size=3, unique=True))
        rules.append(rule(draw(st.sampled_from(["team-a", "team-b"])), name, namespace=sources,
                          targetName=draw(st.sampled_from([None, "x", "y", "{name}"])),
                          conflictPolicy=draw(st.sampled_from(["Skip", "Adopt", "Overwrite"])),
                          orphanOnDelete=draw(st.booleans())))
    boundary = Boundary(trusted=draw(st.sampled_from([(), ("team-a",)])))
    return list(objects.values()), rules, boundary


@settings(max_examples=400, deadline=None)
@given(layouts(), st.randoms(use_true_random=False))
def test_no_pass_ever_writes_over_or_deletes_a_source(layout: tuple[list[Obj], list[CopyratorRule], Boundary],
                                                      order: Any) -> None:
    """Random objects, consents and rules run pass after pass: no write or deletion ever lands on one
    of the rule's own sources; every copy comes from a source the rule may read, into a namespace
    that source allows; every take-over was consented to; kube-system is never touched."""
    objects, rules, boundary = layout
    cluster = Cluster(objects)
    system = {p: o for p, o in cluster.objects.items() if p[0] == "kube-system"}
    for _ in range(4):  # passes, the rules in a random order each time
        for r in order.sample(rules, len(rules)):
            sources = {p: o for p, o in cluster.objects.items() if matches_source(r, o)}
            for verb, place in cluster.sync(r, boundary):
                assert place not in sources, f"{r.key} did {verb} on its own source {place}"
                if verb in ("create", "recreate", "update", "adopt", "overwrite"):
                    copied_from(cluster.objects[place], sources, r, boundary)
    for place, original in system.items():  # not one byte of kube-system
        assert cluster.objects.get(place) is original
    assert not any(p[0] == "kube-system" for p, o in cluster.objects.items() if owner_of(o))


@pytest.mark.parametrize(("value", "to_team_c"), [
    (" TRUE ", True), ("False", False), (" false ", False), ("team-c\tteam-d", True), ("team-c,,", True),
    ("Team-C", False), ("team-[c]", True), ("team-c/*", False), ("yes", False), ("*", True), ("", True),
])
def test_consent_spellings(value: str, to_team_c: bool) -> None:
    """How the owner's allow-copy value reads: case-insensitive keywords,
    whitespace and commas separate, globs; namespace names are matched case-sensitively, so a
    misspelling consents to less, never more. ("" on a ConfigMap of the rule's namespace: no limit.)"""
    source = cm("x", "team-a", **({CONSENT_ANNOTATION: value} if value else {}))
    assert consents_to(source, "team-c") is to_team_c
