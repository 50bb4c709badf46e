"""blackadder's version conversions (kubeloop/operators/blackadder/versions.py): the article's
manifests convert to the hub v1beta2 with the new names, and no object changes on a round trip
through any version, for generated specs and statuses."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from kubeloop.operators.blackadder import build_operator
from kubeloop.operators.blackadder.models import WEEKDAYS, ArticleSpec, ChaosAgent, ChaosAgentSpec
from kubeloop.operators.blackadder.versions import RENAMED
from kubeloop.webhooks import ConversionError, round_trip_failures

EXAMPLES = Path(__file__).parents[2] / "kubeloop" / "operators" / "blackadder" / "examples"
HUB, BETA1, ALPHA1 = "blackadder.io/v1beta2", "blackadder.io/v1beta1", "blackadder.io/v1alpha1"
CONVERTER = build_operator().hooks.conversions[0].converter()

selectors = st.one_of(st.none(), st.fixed_dictionaries({"matchLabels": st.dictionaries(
    st.sampled_from(["app", "tier", "chaos"]), st.sampled_from(["a", "b", "true"]), max_size=2)}))
times = st.tuples(st.integers(0, 23), st.integers(0, 59), st.integers(0, 23), st.integers(0, 59)).map(
    lambda t: f"{t[0]:02d}:{t[1]:02d}-{t[2]:02d}:{t[3]:02d}")
specs = st.fixed_dictionaries({}, optional={
    "tantrumMode": st.booleans(), "cancerMode": st.booleans(), "ipsumMode": st.booleans(),
    "minRunningPods": st.integers(0, 1000), "pauseSeconds": st.integers(1, 86400),
    "eagerness": st.integers(1, 100), "excludedNamespaces": st.lists(st.sampled_from(["a", "b", "kube-system"]),
                                                                     max_size=8),
    "dryRun": st.booleans(), "suspend": st.booleans(), "seed": st.none() | st.integers(0, 2**40),
    "minPodAgeSeconds": st.integers(0, 10**5), "gracePeriodSeconds": st.none() | st.integers(0, 600),
    "onePerOwner": st.booleans(), "killOrphans": st.booleans(), "respectPodDisruptionBudgets": st.booleans(),
    "maxExtraReplicasPerRound": st.integers(0, 50), "maxExtraReplicas": st.integers(0, 500),
    "restoreAfterSeconds": st.none() | st.integers(1, 10**5), "namespaceSelector": selectors,
    "podSelector": selectors, "deploymentSelector": selectors, "configMapSelector": selectors,
    "excludedWeekdays": st.lists(st.sampled_from(WEEKDAYS), unique=True),
    "excludedTimesOfDay": st.lists(times, max_size=8),
    "timezone": st.sampled_from(["UTC", "Europe/Berlin"])})
statuses = st.one_of(st.none(), st.fixed_dictionaries({}, optional={
    "round": st.integers(0, 10**6), "seed": st.integers(0, 2**40), "extraReplicas": st.integers(0, 100),
    "counters": st.fixed_dictionaries({"tantrum": st.integers(0, 99), "ipsum": st.integers(0, 99)}),
    "lastRoundTime": st.just("2026-11-24T15:00:00Z")}))


def hub_object(spec: dict[str, Any], status: dict[str, Any] | None) -> dict[str, Any]:
    """A v1beta2 agent as the API server holds it: defaults filled in, as the CRD's schema does."""
    raw = {"apiVersion": HUB, "kind": "ChaosAgent", "metadata": {"name": "agent", "uid": "u-1"}, "spec": spec}
    if status is not None:
        raw["status"] = status
    return ChaosAgent.model_validate(raw).to_dict()


@settings(max_examples=150, deadline=None)
@given(specs, statuses)
def test_hub_to_every_spoke_and_back_is_the_same_object(spec: dict[str, Any], status: dict[str, Any] | None) -> None:
    assert round_trip_failures(CONVERTER, [hub_object(spec, status)]) == []


@settings(max_examples=150, deadline=None)
@given(specs, statuses)
def test_spoke_to_hub_and_back_is_the_same_object(spec: dict[str, Any], status: dict[str, Any] | None) -> None:
    for version in (ALPHA1, BETA1):
        spoke = CONVERTER.convert(hub_object(spec, status), version)
        assert CONVERTER.convert(CONVERTER.convert(spoke, HUB), version) == spoke
        # and between the two spokes, through the hub
        other = BETA1 if version == ALPHA1 else ALPHA1
        assert CONVERTER.convert(CONVERTER.convert(spoke, other), version) == spoke


def test_the_articles_v1alpha1_manifest_reads_as_v1beta2_with_the_new_names() -> None:
    edmund = yaml.safe_load((EXAMPLES / "edmund.yaml").read_text())
    hub = CONVERTER.convert(edmund, HUB)
    assert hub["apiVersion"] == HUB and hub["metadata"] == edmund["metadata"]
    assert (hub["spec"]["tantrumMode"], hub["spec"]["minRunningPods"], hub["spec"]["pauseSeconds"]) == (True, 10, 30)
    assert "podTolerance" not in hub["spec"] and "pauseDuration" not in hub["spec"]
    back = CONVERTER.convert(hub, ALPHA1)
    assert (back["spec"]["podTolerance"], back["spec"]["pauseDuration"]) == (10, 30)
    assert "minRunningPods" not in back["spec"]


def test_the_articles_v1beta1_manifest_keeps_every_value_on_the_hub() -> None:
    edmund = yaml.safe_load((EXAMPLES / "edmund-v1beta1.yaml").read_text())
    hub = CONVERTER.convert(edmund, HUB)["spec"]
    for name, value in edmund["spec"].items():
        assert hub[RENAMED.get(name, name)] == value, name


def test_only_the_renamed_fields_differ_between_the_versions() -> None:
    # A field added to one spec model and not the other would be dropped by a conversion.
    article, hub = set(ArticleSpec.model_fields), set(ChaosAgentSpec.model_fields)
    assert article - hub == set(RENAMED) and hub - article == set(RENAMED.values())


def test_a_bad_value_in_a_spoke_fails_the_conversion_naming_the_field() -> None:
    bad = {"apiVersion": ALPHA1, "kind": "ChaosAgent", "metadata": {"name": "x"}, "spec": {"podTolerance": -1}}
    with pytest.raises(ConversionError, match="podTolerance"):
        CONVERTER.convert(bad, HUB)
