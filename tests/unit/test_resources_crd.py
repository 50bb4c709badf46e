"""CRDs from CustomResource classes: the Blackadder ChaosAgent, multi-version CRDs and their checks."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel, Field

from kubeloop.resources import (
    CustomResource,
    crd_for,
    crds_for,
    printer_column,
    scale_subresource,
    structural_problems,
    validation,
    version_priority,
)
from tests.chaos_agent import ChaosAgentSpec, ChaosAgentStatus

COLUMNS = [
    printer_column("Tantrum", ".spec.tantrumMode", type="boolean"),
    printer_column("Eagerness", ".spec.eagerness", type="integer", description="How eager."),
    printer_column("Age", ".metadata.creationTimestamp", type="date", priority=1),
]


class ChaosAgent(
    CustomResource,
    group="blackadder.io",
    version="v1alpha1",
    kind="ChaosAgent",
    scope="Cluster",
    short_names=("ca",),
    categories=("chaos",),
    printer_columns=COLUMNS,
):
    spec: ChaosAgentSpec
    status: ChaosAgentStatus | None = None


def test_chaos_agent_crd() -> None:
    crd = crd_for(ChaosAgent)
    assert crd["apiVersion"] == "apiextensions.k8s.io/v1"
    assert crd["kind"] == "CustomResourceDefinition"
    assert crd["metadata"] == {"name": "chaosagents.blackadder.io"}
    spec = crd["spec"]
    assert spec["group"] == "blackadder.io"
    assert spec["scope"] == "Cluster"
    assert spec["names"] == {
        "kind": "ChaosAgent",
        "listKind": "ChaosAgentList",
        "plural": "chaosagents",
        "singular": "chaosagent",
        "shortNames": ["ca"],
        "categories": ["chaos"],
    }
    [version] = spec["versions"]
    assert version["name"] == "v1alpha1"
    assert version["served"] is True and version["storage"] is True
    assert "deprecated" not in version
    assert version["subresources"] == {"status": {}}
    assert version["additionalPrinterColumns"] == [
        {"name": "Tantrum", "type": "boolean", "jsonPath": ".spec.tantrumMode"},
        {"name": "Eagerness", "type": "integer", "jsonPath": ".spec.eagerness", "description": "How eager."},
        {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp", "priority": 1},
    ]
    root = version["schema"]["openAPIV3Schema"]
    assert structural_problems(root) == []
    assert root["type"] == "object"
    assert root["required"] == ["spec"]
    assert root["properties"]["metadata"] == {"type": "object"}
    assert root["properties"]["apiVersion"] == {"type": "string"}
    assert root["properties"]["kind"] == {"type": "string"}
    assert root["properties"]["spec"] == {
        "type": "object",
        "description": "Settings of one chaos agent.",
        "properties": {
            "tantrumMode": {"type": "boolean", "default": False},
            "eagerness": {
                "type": "integer",
                "minimum": 1,
                "maximum": 100,
                "default": 20,
                "description": "Probability in % of acting on each object.",
            },
            "excludedNamespaces": {"type": "array", "items": {"type": "string"}},
        },
    }
    assert root["properties"]["status"] == {
        "type": "object",
        "properties": {"victims": {"type": "integer", "default": 0}},
    }


def test_root_level_validations_and_scale() -> None:
    class Pool(
        CustomResource,
        group="pools.example.com",
        version="v1",
        kind="Pool",
        scale=scale_subresource(label_selector=".status.selector"),
    ):
        __validations__ = [validation("self.metadata.name.size() <= 20", message="name too long")]

        class Spec(BaseModel):
            replicas: int = 1

        class Status(BaseModel):
            replicas: int = 0
            selector: str = ""

        spec: Spec = Field(default_factory=Spec)
        status: Status | None = None

    version = crd_for(Pool)["spec"]["versions"][0]
    assert version["subresources"] == {
        "status": {},
        "scale": {
            "specReplicasPath": ".spec.replicas",
            "statusReplicasPath": ".status.replicas",
            "labelSelectorPath": ".status.selector",
        },
    }
    root = version["schema"]["openAPIV3Schema"]
    assert root["x-kubernetes-validations"] == [
        {"rule": "self.metadata.name.size() <= 20", "message": "name too long"}
    ]
    assert "required" not in root
    assert crd_for(Pool)["spec"]["scope"] == "Namespaced"


# ---------------------------------------------------------------------------------- several versions


class SpecV1(BaseModel):
    size: int = 1


class SpecV2(BaseModel):
    size: int = 1
    color: str = "red"


class WidgetV1Alpha1(
    CustomResource,
    group="shop.example.com",
    version="v1alpha1",
    kind="Widget",
    storage=False,
    deprecated=True,
    deprecation_warning="shop.example.com/v1alpha1 is going away",
):
    spec: SpecV1


class WidgetV1(CustomResource, group="shop.example.com", version="v1", kind="Widget", storage=False):
    spec: SpecV1


class WidgetV2(
    CustomResource,
    group="shop.example.com",
    version="v2",
    kind="Widget",
    printer_columns=[printer_column("Color", ".spec.color")],
):
    spec: SpecV2
    status: dict[str, Any] | None = None


def test_multi_version_crd() -> None:
    crd = crd_for(WidgetV1Alpha1, WidgetV2, WidgetV1)
    versions = crd["spec"]["versions"]
    assert [v["name"] for v in versions] == ["v2", "v1", "v1alpha1"]  # by Kubernetes version priority
    v2, v1, alpha = versions
    assert (v2["storage"], v1["storage"], alpha["storage"]) == (True, False, False)
    assert alpha["deprecated"] is True
    assert alpha["deprecationWarning"] == "shop.example.com/v1alpha1 is going away"
    assert "deprecated" not in v1
    assert "color" in v2["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]
    assert "color" not in v1["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]
    assert v2["subresources"] == {"status": {}}
    assert "subresources" not in v1
    assert v2["additionalPrinterColumns"] == [{"name": "Color", "type": "string", "jsonPath": ".spec.color"}]
    assert "additionalPrinterColumns" not in v1


def test_two_storage_versions_are_refused() -> None:
    class WidgetV3(CustomResource, group="shop.example.com", version="v3", kind="Widget"):
        spec: SpecV2

    with pytest.raises(
        ValueError,
        match=r"WidgetV2 \(v2\) and WidgetV3 \(v3\) are all storage versions.*"
        r"storage=False to all but one",
    ):
        crd_for(WidgetV1, WidgetV2, WidgetV3)


def test_no_storage_version_is_refused() -> None:
    with pytest.raises(
        ValueError,
        match=r"none of WidgetV1Alpha1 \(v1alpha1\), WidgetV1 \(v1\) is the storage "
        r"version.*storage=True to exactly one",
    ):
        crd_for(WidgetV1Alpha1, WidgetV1)


def test_mismatched_scope_names_the_class_and_the_fix() -> None:
    class WidgetCluster(
        CustomResource, group="shop.example.com", version="v3", kind="Widget", scope="Cluster", storage=False
    ):
        spec: SpecV2

    with pytest.raises(
        ValueError,
        match=r"WidgetCluster declares scope='Cluster' but WidgetV2 declares "
        r"'Namespaced'.*set scope='Namespaced' on WidgetCluster",
    ):
        crd_for(WidgetV2, WidgetCluster)


@pytest.mark.parametrize(
    ("keywords", "field"),
    [
        ({"group": "other.example.com"}, "group"),
        ({"kind": "Gadget"}, "kind"),
        ({"plural": "widgetz"}, "plural"),
        ({"short_names": ("w",)}, "short_names"),
    ],
)
def test_mismatched_names_are_refused(keywords: dict[str, Any], field: str) -> None:
    base = {"group": "shop.example.com", "version": "v9", "kind": "Widget", "storage": False}

    class Odd(CustomResource, **{**base, **keywords}):  # type: ignore[call-arg]
        spec: SpecV1

    with pytest.raises(ValueError, match=rf"Odd declares {field}=.*set {field}="):
        crd_for(WidgetV2, Odd)


def test_duplicate_versions_are_refused() -> None:
    class WidgetV2Again(CustomResource, group="shop.example.com", version="v2", kind="Widget", storage=False):
        spec: SpecV2

    with pytest.raises(ValueError, match="WidgetV2 and WidgetV2Again both declare version 'v2'"):
        crd_for(WidgetV2, WidgetV2Again)


def test_other_refusals() -> None:
    with pytest.raises(ValueError, match="at least one"):
        crd_for()

    class Plain(BaseModel):
        pass

    with pytest.raises(ValueError, match="not a declared CustomResource"):
        crd_for(Plain)  # type: ignore[arg-type]

    class Dotless(CustomResource, group="local", version="v1", kind="Thing"):
        spec: SpecV1

    with pytest.raises(ValueError, match="at least one dot"):
        crd_for(Dotless)

    class Warned(
        CustomResource, group="a.example.com", version="v1", kind="Thing", deprecation_warning="bye"
    ):
        spec: SpecV1

    with pytest.raises(ValueError, match="deprecation_warning needs deprecated=True"):
        crd_for(Warned)


def test_crds_for_groups_versions_by_kind() -> None:
    crds = crds_for([WidgetV2, ChaosAgent, WidgetV1, WidgetV2])
    assert [c["metadata"]["name"] for c in crds] == ["chaosagents.blackadder.io", "widgets.shop.example.com"]
    assert [v["name"] for v in crds[1]["spec"]["versions"]] == ["v2", "v1"]


def test_version_priority() -> None:
    versions = [
        "v1alpha1",
        "foo1",
        "v11alpha2",
        "v10",
        "v1",
        "v2",
        "v10beta3",
        "v3beta1",
        "v12alpha1",
        "foo10",
    ]
    assert sorted(versions, key=version_priority) == [
        "v10",
        "v2",
        "v1",
        "v10beta3",
        "v3beta1",
        "v12alpha1",
        "v11alpha2",
        "v1alpha1",
        "foo1",
        "foo10",
    ]
