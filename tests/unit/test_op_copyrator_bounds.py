"""copyrator's bounds: every list and string of the CRD has a maximum, the operator checks what the schema
cannot (the untyped namespace list, the consent annotations), and a plan over the worst admitted rule
compiles each list once and matches linearly (timings printed, not asserted)."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from kubeloop import cooperatively, to_completion
from kubeloop.operators.copyrator import globs
from kubeloop.operators.copyrator.boundary import CONSENT_ANNOTATION, MAX_CONSENT_ENTRIES, Boundary
from kubeloop.operators.copyrator.models import MAX_SOURCE_NAMESPACES, CopyratorRule
from kubeloop.operators.copyrator.plan import PlanMemo, plan, planning
from kubeloop.resources.crd import crd_for
from tests.copyrator_worst import worst_consent, worst_rule
from tests.schema_bounds import FRAMEWORK, unbounded

# Untyped on purpose (checked by the operator), beside what the framework writes: no bound from the schema.
SKIP = FRAMEWORK | {".namespace"}


def test_every_list_and_string_of_the_crd_has_a_maximum() -> None:
    schema = crd_for(CopyratorRule)["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    assert unbounded(schema, skip=SKIP) == []
    assert schema["properties"]["excludedNamespaces"]["maxItems"] == 256
    assert schema["properties"]["selector"]["x-kubernetes-validations"][0]["rule"] == "self.all(k, size(k) <= 317)"


def test_the_untyped_namespace_list_is_bounded_by_the_operator() -> None:
    base = {"apiVersion": "flant.com/v1", "kind": "CopyratorRule", "metadata": {"name": "r", "namespace": "a"},
            "ruleType": "configmap", "selector": {"x": "y"}}
    many = CopyratorRule.from_dict({**base, "namespace": [f"n{i}" for i in range(MAX_SOURCE_NAMESPACES + 1)]})
    assert "at most 64" in many.problems()[0]
    long = CopyratorRule.from_dict({**base, "namespace": ["n" * 64]})
    assert "longer than 63" in long.problems()[0]
    assert CopyratorRule.from_dict({**base, "namespace": [f"n{i}" for i in range(64)]}).problems() == []


def test_a_consent_beyond_its_bounds_grants_nothing_and_is_reported() -> None:
    rule = CopyratorRule.from_dict(worst_rule("r", "a", {"x": "y"}, match_labels=False))
    source = {"kind": "ConfigMap", "metadata": {"name": "s", "namespace": "a", "labels": {"x": "y"}, "uid": "u",
                                                "annotations": {CONSENT_ANNOTATION: ""}}, "data": {"k": "v"}}
    namespaces = [{"metadata": {"name": "b"}}]
    source["metadata"]["annotations"][CONSENT_ANNOTATION] = worst_consent(["b"])
    assert len(plan(rule, [source], namespaces, Boundary()).copies) == 1  # the largest accepted: honoured
    source["metadata"]["annotations"][CONSENT_ANNOTATION] = "x," * MAX_CONSENT_ENTRIES + "b"
    desired = plan(rule, [source], namespaces, Boundary())
    assert not desired.copies and desired.skipped[0] == ("a/s", "ConsentTooLong")


@pytest.mark.parametrize("namespaces", [1000])
def test_the_worst_admitted_rule_compiles_each_list_once(namespaces: int) -> None:
    """Every list at its maximum, of globs that need the general matcher, over many namespaces and a
    source with many labels and annotations: each list is compiled once, then matched linearly."""
    rule = CopyratorRule.from_dict(worst_rule("r", "a", {"x": "y"}, match_labels=False))
    labels = {f"example.com/l{i}-" + "k" * 200: "v" for i in range(64)} | {"x": "y"}
    source = {"kind": "ConfigMap", "metadata": {
        "name": "s", "namespace": "a", "uid": "u", "labels": labels,
        "annotations": {f"example.com/a{i}-" + "k" * 200: "v" for i in range(64)}
        | {CONSENT_ANNOTATION: worst_consent(["*"])}}, "data": {"k": "v"}}
    targets = [{"metadata": {"name": f"ns-{i:05d}-" + "q" * 40}} for i in range(namespaces)]
    globs._compiled.cache_clear()
    started = time.perf_counter()
    desired = plan(rule, [source], targets, Boundary())
    elapsed = time.perf_counter() - started
    # excludedNamespaces, copyLabels, copyAnnotations, the denied keys and the consent: one compilation
    # each, whatever the number of namespaces, labels and annotations matched against them.
    assert globs._compiled.cache_info().misses <= 5
    assert len(desired.copies) == namespaces
    assert all(isinstance(globs.compile_globs(rule.copyLabels).general, globs.re2._Regexp) for _ in (1,))
    print(f"\nplan of the worst admitted rule over {namespaces} namespaces, 130 keys: {elapsed * 1000:.1f} ms")


async def test_the_plan_over_thousands_of_sources_hands_the_loop_back() -> None:
    """A rule's sources are not bounded by any schema: its plan over 2,000 of them (the worst rule, long
    names) is the same computed in slices, and other work runs on the loop between the slices."""
    ns = "tenant-a"
    rule = CopyratorRule.from_dict(worst_rule("worst", ns, {"worst": "x"}, match_labels=False))
    sources = [{"apiVersion": "v1", "kind": "ConfigMap", "data": {"k": "0"},
                "metadata": {"name": f"{'a' * 244}{i:06d}", "namespace": ns, "labels": {"worst": "x"}}}
               for i in range(2000)]
    namespaces = [{"metadata": {"name": n}} for n in (ns, "tenant-b", "tenant-c")]
    at_once = plan(rule, sources, namespaces)
    beats = 0
    done = False

    async def other() -> None:
        nonlocal beats
        while not done:
            beats += 1
            await asyncio.sleep(0)

    task = asyncio.create_task(other())
    await asyncio.sleep(0)
    sliced = await cooperatively(planning(rule, sources, namespaces), slice=0)
    done = True
    await task
    assert sliced == at_once and len(sliced.sources) == 2000
    assert beats > 2000  # the other task ran at least once per candidate: the plan yields per candidate
    print(f"\n{await _held_at_most(rule, sources, namespaces)}")


async def _held_at_most(rule: CopyratorRule, sources: list[dict[str, Any]], namespaces: list[dict[str, Any]]) -> str:
    """Figures (printed, never asserted): the plan over 2,000 sources at once, and in the default slices with
    the longest stretch the loop was held between two turns of another task."""
    started = time.perf_counter()
    plan(rule, sources, namespaces)
    at_once = time.perf_counter() - started
    longest, done = 0.0, False

    async def other() -> None:
        nonlocal longest
        last = time.perf_counter()
        while not done:
            await asyncio.sleep(0)
            now = time.perf_counter()
            longest, last = max(longest, now - last), now

    task = asyncio.create_task(other())
    await asyncio.sleep(0)
    began = time.perf_counter()
    await cooperatively(planning(rule, sources, namespaces))
    total = time.perf_counter() - began
    done = True
    await task
    return (f"the worst rule over 2,000 sources: {at_once * 1000:.0f} ms at once; in slices {total * 1000:.0f} ms, "
            f"the loop held at most {longest * 1000:.1f} ms at a time; {_one_changed(rule, sources, namespaces)}")


def _one_changed(rule: CopyratorRule, sources: list[dict[str, Any]], namespaces: list[dict[str, Any]]) -> str:
    """Figures (printed): the plan again after one source changed, with the memo the operator keeps."""
    rule = CopyratorRule.from_dict({**rule.to_dict(), "metadata": {**rule.to_dict()["metadata"], "uid": "r",
                                                                     "generation": 1}})
    read = [{**s, "metadata": {**s["metadata"], "uid": f"u{i}", "resourceVersion": "1"}} for i, s in enumerate(sources)]
    memo = PlanMemo()
    first = to_completion(planning(rule, read, namespaces, memo=memo))
    read[7] = {**read[7], "data": {"k": "1"}, "metadata": {**read[7]["metadata"], "resourceVersion": "2"}}
    started = time.perf_counter()
    again = to_completion(planning(rule, read, namespaces, memo=memo))
    took = time.perf_counter() - started
    assert again.skipped == first.skipped and again.copies.keys() == first.copies.keys()
    # Every source here is skipped (the worst targetName makes names too long): the change makes the same
    # plan, which the memo tells from the views alone.
    return f"after one source's data changed, with the rule's memo: {took * 1000:.1f} ms"
