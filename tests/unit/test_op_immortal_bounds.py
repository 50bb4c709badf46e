"""immortal's bounds: every list, string and map of its CRD has a maximum the API server enforces, the
article's and the examples' manifests stay valid, one step beyond a bound is refused, and the cost of a
reconcile over the largest object the API server stores is one linear pass (timing printed, not
asserted)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubeloop.operators.immortal import models
from kubeloop.operators.immortal.models import ImmortalContainer
from kubeloop.operators.immortal.pods import desired_pod
from kubeloop.resources.crd import crd_for
from kubeloop.testing.apiserver.schema import validate
from tests.schema_bounds import schemas, unbounded

EXAMPLES = Path(models.__file__).parent / "examples"
(SCHEMA,) = schemas(crd_for(ImmortalContainer)).values()
ARTICLE = {"apiVersion": "immortalcontainer.flugel.it/v1alpha1", "kind": "ImmortalContainer",
           "metadata": {"name": "example-immortalcontainer"}, "spec": {"image": "nginx:latest"}}


def test_every_list_string_and_map_of_the_crd_has_a_maximum() -> None:
    assert unbounded(SCHEMA) == []
    spec = SCHEMA["properties"]["spec"]["properties"]
    template = spec["template"]["properties"]
    assert spec["image"]["maxLength"] == 1024
    assert template["labels"]["maxProperties"] == 64 and template["labels"]["additionalProperties"]["maxLength"] == 63
    assert template["labels"]["x-kubernetes-validations"][0]["rule"] == "self.all(k, size(k) <= 317)"
    assert template["annotations"]["additionalProperties"]["maxLength"] == 256 * 1024
    assert template["args"]["items"]["maxLength"] == 128 * 1024 and template["args"]["maxItems"] == 1024
    assert template["env"]["maxItems"] == 1024 and template["env"]["items"]["maxProperties"] == 32
    assert template["resources"]["maxProperties"] == 32 and template["serviceAccountName"]["maxLength"] == 253
    status = SCHEMA["properties"]["status"]["properties"]
    assert status["history"]["maxItems"] == 10 and status["currentPod"]["maxLength"] == 253


_FILES = sorted(EXAMPLES.glob("*.yaml"))


@pytest.mark.parametrize("manifest", [ARTICLE, *(yaml.safe_load(p.read_text()) for p in _FILES)],
                         ids=["article", *(p.name for p in _FILES)])
def test_the_articles_and_the_examples_manifests_stay_valid(manifest: dict[str, Any]) -> None:
    assert validate(manifest, SCHEMA) == []


@pytest.mark.parametrize(("field", "value"), [
    ("image", "r.example.com/" + "i" * 1011),
    ("template.labels", {"app": "v" * 64}),
    ("template.labels", {f"k{i}": "v" for i in range(65)}),
    ("template.args", ["a"] * 1025),
    ("template.command", ["c" * (128 * 1024 + 1)]),
    ("template.workingDir", "/" * 4097),
    ("template.env", [{"name": f"E{i}", "value": "x"} for i in range(1025)]),
    ("template.volumes", [{"name": f"v{i}", "emptyDir": {}} for i in range(257)]),
    ("template.securityContext", {f"f{i}": True for i in range(33)}),
    ("template.serviceAccountName", "s" * 254),
])
def test_one_beyond_a_bound_is_refused(field: str, value: Any) -> None:
    spec: dict[str, Any] = {"image": "nginx:1.27"}
    node = spec
    *parents, last = field.split(".")
    for part in parents:
        node = node.setdefault(part, {})
    node[last] = value
    causes = validate({**ARTICLE, "spec": spec}, SCHEMA)
    assert causes and all(c[0] in ("FieldValueTooLong", "FieldValueTooMany") for c in causes), causes


def test_the_largest_stored_object_costs_one_linear_pass() -> None:
    """An ImmortalContainer as large as etcd stores (1.5 MiB), spread over the fields a reconcile copies
    and hashes: the desired pod is built from it in one pass, whatever the fields' maxima allow."""
    template = {
        "labels": {f"example.com/l{i:02d}-" + "k" * 40: "v" * 63 for i in range(64)},
        "annotations": {f"example.com/a{i:02d}": "a" * 2048 for i in range(64)},
        "command": ["/bin/sh", "-c"], "args": ["x" * 4096] * 200,
        "env": [{"name": f"E{i}", "value": "v" * 256} for i in range(1024)],
        "volumes": [{"name": f"v{i}", "configMap": {"name": f"cm-{i}"}} for i in range(256)],
        "volumeMounts": [{"name": f"v{i}", "mountPath": f"/etc/v{i}"} for i in range(256)]}
    obj = {**ARTICLE, "metadata": {"name": "big", "namespace": "n", "uid": "u"},
           "spec": {"image": "nginx:1.27", "template": template}}
    size = len(yaml.safe_dump(obj))
    assert 1_000_000 < size < 1_600_000 and validate(obj, SCHEMA) == []
    ic = ImmortalContainer.model_validate(obj)
    started = time.perf_counter()
    pod = desired_pod(ic, obj)
    elapsed = time.perf_counter() - started
    assert len(pod["spec"]["containers"][0]["env"]) == 1024
    print(f"\nthe desired pod of a {size / 1e6:.1f} MB ImmortalContainer: {elapsed * 1000:.1f} ms")
