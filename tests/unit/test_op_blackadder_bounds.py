"""blackadder's bounds: every list and string of every version of its CRD has a maximum the API server
enforces (the same in each, so a conversion never makes an object invalid), the article's and the
examples' manifests stay valid, one step beyond a bound is refused, and what the operator writes stays
inside them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from kubeloop.operators.blackadder import models
from kubeloop.operators.blackadder.chaos import Action
from kubeloop.operators.blackadder.models import ChaosAgent, ChaosAgentV1Alpha1, ChaosAgentV1Beta1
from kubeloop.operators.blackadder.settings import BlackadderSettings
from kubeloop.resources.crd import crd_for
from kubeloop.testing.apiserver.schema import validate
from tests.schema_bounds import schemas, unbounded

EXAMPLES = Path(models.__file__).parent / "examples"
SCHEMAS = schemas(crd_for(ChaosAgent, ChaosAgentV1Beta1, ChaosAgentV1Alpha1))
# The article's agents (seed 003): k8s/edmund.yml, and the one its kubectl patch leaves.
ARTICLE = [
    {"apiVersion": "blackadder.io/v1alpha1", "kind": "ChaosAgent", "metadata": {"name": "princeedmund"},
     "spec": {"tantrumMode": True, "podTolerance": 10}},
    {"apiVersion": "blackadder.io/v1beta1", "kind": "ChaosAgent", "metadata": {"name": "princeedmund"},
     "spec": {"tantrumMode": True, "podTolerance": 10, "cancerMode": False, "ipsumMode": True, "eagerness": 20,
              "pauseDuration": 30, "excludedNamespaces": ["kube-system", "chaos-operator"]}},
]
# The examples as applied: the merge patch onto the article's agent; the too-eager one is refused for
# its eagerness (the article's own validation example), which is all it may be refused for.
_FILES = {p.name: yaml.safe_load(p.read_text()) for p in sorted(EXAMPLES.glob("*.yaml"))}
_PATCHED = {**ARTICLE[0], "spec": {**ARTICLE[0]["spec"], **_FILES.pop("edmund-exclude-operator-patch.yaml")["spec"]}}
_TOO_EAGER = _FILES.pop("edmund-v1beta1-too-eager.yaml")
MANIFESTS = {"article-edmund": ARTICLE[0], "article-patched": ARTICLE[1], "example-patch": _PATCHED, **_FILES}


def schema_of(manifest: dict[str, Any]) -> dict[str, Any]:
    return SCHEMAS[manifest["apiVersion"].rpartition("/")[2]]


def test_every_list_and_string_of_every_version_has_a_maximum() -> None:
    assert set(SCHEMAS) == {"v1alpha1", "v1beta1", "v1beta2"}
    for version, schema in SCHEMAS.items():
        assert unbounded(schema) == [], version
        spec = schema["properties"]["spec"]["properties"]
        assert spec["excludedNamespaces"]["maxItems"] == 128
        assert spec["excludedNamespaces"]["items"]["maxLength"] == 63
        assert spec["timezone"]["maxLength"] == 64 and spec["excludedTimesOfDay"]["items"]["maxLength"] == 11
        selector = spec["podSelector"]["properties"]
        assert selector["matchLabels"]["maxProperties"] == 32 and selector["matchExpressions"]["maxItems"] == 16
        status = schema["properties"]["status"]["properties"]
        assert status["recentActions"]["maxItems"] == 100
    strip = {"v1alpha1": {"podTolerance", "pauseDuration"}, "v1beta1": {"podTolerance", "pauseDuration"},
             "v1beta2": {"minRunningPods", "pauseSeconds"}}
    shared = [{k: v for k, v in s["properties"]["spec"]["properties"].items() if k not in strip[name]}
              for name, s in SCHEMAS.items()]
    assert shared[0] == shared[1] == shared[2], "the same bounds in every version"


@pytest.mark.parametrize("name", sorted(MANIFESTS))
def test_the_articles_and_the_examples_manifests_stay_valid(name: str) -> None:
    assert validate(MANIFESTS[name], schema_of(MANIFESTS[name])) == []


def test_the_articles_refused_example_is_refused_for_its_eagerness_only() -> None:
    assert [c[1] for c in validate(_TOO_EAGER, schema_of(_TOO_EAGER))] == ["spec.eagerness"]


@pytest.mark.parametrize(("field", "value"), [
    ("excludedNamespaces", [f"ns-{i}" for i in range(129)]),
    ("excludedNamespaces", ["n" * 64]),
    ("excludedTimesOfDay", ["00:00-01:00"] * 25),
    ("timezone", "Z" * 65),
    ("podSelector", {"matchLabels": {f"k{i}": "v" for i in range(33)}}),
    ("namespaceSelector", {"matchLabels": {"k": "v" * 64}}),
    ("configMapSelector", {"matchExpressions": [{"key": "k", "operator": "Exists"}] * 17}),
    ("deploymentSelector", {"matchExpressions": [{"key": "k", "operator": "In", "values": ["v"] * 65}]}),
])
def test_one_beyond_a_bound_is_refused(field: str, value: Any) -> None:
    for version in SCHEMAS:
        manifest = {"apiVersion": f"blackadder.io/{version}", "kind": "ChaosAgent", "metadata": {"name": "a"},
                    "spec": {field: value}}
        causes = validate(manifest, schema_of(manifest))
        assert causes and all(c[0] in ("FieldValueTooLong", "FieldValueTooMany") for c in causes), (version, causes)


def test_what_the_operator_writes_stays_inside_the_bounds() -> None:
    pod = {"kind": "Pod", "metadata": {"name": "p" * 253, "namespace": "n" * 63}}
    record = Action("tantrum", "spared", pod, "eviction refused: " + "x" * 5000).record(7, "2026-11-24T15:00:00Z")
    assert len(record["detail"]) == models.MAX_DETAIL
    status = {"recentActions": [record] * models.MAX_RECENT_ACTIONS}
    manifest = {"apiVersion": "blackadder.io/v1beta2", "kind": "ChaosAgent", "metadata": {"name": "a"},
                "spec": {}, "status": status}
    assert validate(manifest, schema_of(manifest)) == []
    assert BlackadderSettings(recent_actions=models.MAX_RECENT_ACTIONS).recent_actions == 100
    with pytest.raises(ValueError):
        BlackadderSettings(recent_actions=models.MAX_RECENT_ACTIONS + 1)  # status.recentActions could not hold them
