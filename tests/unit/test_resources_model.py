"""Declaring custom resources: class keywords, names, instances and the built-in resource table."""

from __future__ import annotations

import sys
from datetime import UTC, datetime
from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from kubeloop.client.resource import Resource
from kubeloop.resources import (
    CustomResource,
    ObjectMeta,
    builtin,
    custom_resources_in,
    default_plural,
    printer_column,
    scale_subresource,
)
from tests.chaos_agent import ChaosAgentSpec
from tests.chaos_agent import ChaosAgentStatus as SharedStatus


class ChaosAgentStatus(SharedStatus):
    observedGeneration: int | None = None


class ChaosAgent(
    CustomResource,
    group="blackadder.io",
    version="v1alpha1",
    kind="ChaosAgent",
    scope="Cluster",
    short_names=("ca",),
    categories=("chaos",),
    printer_columns=[printer_column("Tantrum", ".spec.tantrumMode", type="boolean")],
):
    spec: ChaosAgentSpec
    status: ChaosAgentStatus | None = None


SERVER_OBJECT: dict[str, Any] = {
    "apiVersion": "blackadder.io/v1alpha1",
    "kind": "ChaosAgent",
    "metadata": {
        "name": "baldrick",
        "uid": "0f0e",
        "resourceVersion": "42",
        "generation": 3,
        "creationTimestamp": "2024-05-01T12:00:00Z",
        "labels": {"a": "b"},
        "finalizers": ["blackadder.io/cleanup"],
        "ownerReferences": [
            {"apiVersion": "v1", "kind": "Namespace", "name": "ns", "uid": "1", "controller": True}
        ],
        "managedFields": [{"manager": "kubectl", "operation": "Apply"}],
    },
    "spec": {"tantrumMode": True, "eagerness": 50, "excludedNamespaces": ["kube-system"], "newField": 1},
    "status": {"observedGeneration": 3, "victims": 7},
}


@pytest.mark.parametrize(
    ("kind", "plural"),
    [
        ("ChaosAgent", "chaosagents"),
        ("Policy", "policies"),
        ("NetworkPolicy", "networkpolicies"),
        ("Gateway", "gateways"),  # vowel + y keeps the y
        ("Ingress", "ingresses"),
        ("Status", "statuses"),
        ("Box", "boxes"),
        ("Match", "matches"),
        ("Mesh", "meshes"),
        ("Quiz", "quizes"),
        ("Pod", "pods"),
    ],
)
def test_default_plural(kind: str, plural: str) -> None:
    assert default_plural(kind) == plural


def test_class_keywords_and_derived_names() -> None:
    info = ChaosAgent.crd_info()
    assert (info.group, info.version, info.kind) == ("blackadder.io", "v1alpha1", "ChaosAgent")
    assert (info.plural, info.singular, info.list_kind) == ("chaosagents", "chaosagent", "ChaosAgentList")
    assert info.scope == "Cluster" and not info.namespaced
    assert info.short_names == ("ca",) and info.categories == ("chaos",)
    assert info.served and info.storage and not info.deprecated
    assert info.crd_name == "chaosagents.blackadder.io"
    assert ChaosAgent.has_status_subresource()


def test_explicit_names_and_flags() -> None:
    class Octopus(
        CustomResource,
        group="sea.example.com",
        version="v1",
        kind="Octopus",
        plural="octopodes",
        singular="octo",
        list_kind="Octopodes",
        storage=False,
        deprecated=True,
        deprecation_warning="use v2",
        scale=scale_subresource(label_selector=".status.selector"),
        status_subresource=False,
    ):
        spec: dict[str, Any] = Field(default_factory=dict)
        status: dict[str, Any] | None = None

    info = Octopus.crd_info()
    assert (info.plural, info.singular, info.list_kind) == ("octopodes", "octo", "Octopodes")
    assert info.scope == "Namespaced" and not info.storage and info.deprecated
    assert not Octopus.has_status_subresource()
    assert Octopus.resource().subresources == frozenset({"scale"})


def test_resource() -> None:
    r = ChaosAgent.resource()
    assert isinstance(r, Resource)
    assert r == Resource("blackadder.io", "v1alpha1", "chaosagents", "ChaosAgent", namespaced=False)
    assert r.short_names == ("ca",) and r.singular == "chaosagent"
    assert r.subresources == frozenset({"status"})
    assert {"get", "list", "watch", "patch"} <= r.verbs
    assert (
        r.path(name="baldrick", subresource="status")
        == "/apis/blackadder.io/v1alpha1/chaosagents/baldrick/status"
    )


def test_no_status_field_means_no_status_subresource() -> None:
    class Note(CustomResource, group="n.example.com", version="v1", kind="Note"):
        spec: dict[str, str] = Field(default_factory=dict)

    assert not Note.has_status_subresource()
    assert Note.resource().namespaced


def test_abstract_base_and_inheritance() -> None:
    class Base(CustomResource):
        spec: ChaosAgentSpec

    assert Base.__kubeloop_crd__ is None
    with pytest.raises(TypeError, match="abstract"):
        Base.resource()

    class Concrete(Base, group="a.example.com", version="v1", kind="Thing", storage=False):
        pass

    class NextVersion(Concrete, version="v2"):
        pass

    class OtherKind(Concrete, kind="Widget"):
        pass

    assert Concrete.crd_info().plural == "things"
    assert NextVersion.crd_info().version == "v2"
    assert NextVersion.crd_info().storage  # per-version flags restart from the defaults
    assert NextVersion.crd_info().plural == "things"
    assert OtherKind.crd_info().plural == "widgets"  # names follow a new kind
    assert OtherKind.crd_info().list_kind == "WidgetList"
    assert not OtherKind.crd_info().storage  # same version: flags inherited


def test_incomplete_or_invalid_declarations() -> None:
    with pytest.raises(TypeError, match="missing: version, kind"):

        class Half(CustomResource, group="a.example.com"):
            pass

    with pytest.raises(TypeError, match="scope"):

        class BadScope(CustomResource, group="a.example.com", version="v1", kind="X", scope="Global"):  # type: ignore[arg-type]
            pass

    with pytest.raises(TypeError, match="CamelCase"):

        class Lower(CustomResource, group="a.example.com", version="v1", kind="thing"):
            pass

    with pytest.raises(ValueError, match="type must be one of"):
        printer_column("X", ".spec.x", type="float")
    with pytest.raises(ValueError, match="must start with '.'"):
        printer_column("X", "spec.x")


def test_instance_defaults_type_meta() -> None:
    agent = ChaosAgent(spec=ChaosAgentSpec(eagerness=5))
    assert agent.apiVersion == "blackadder.io/v1alpha1"
    assert agent.kind == "ChaosAgent"
    assert agent.metadata == ObjectMeta()
    assert agent.to_dict() == {
        "apiVersion": "blackadder.io/v1alpha1",
        "kind": "ChaosAgent",
        "metadata": {},
        "spec": {"tantrumMode": False, "eagerness": 5, "excludedNamespaces": []},
    }


def test_from_dict_tolerates_server_fields_and_round_trips() -> None:
    agent = ChaosAgent.from_dict(SERVER_OBJECT)
    assert agent.metadata.name == "baldrick"
    assert agent.metadata.generation == 3
    assert agent.metadata.creationTimestamp == datetime(2024, 5, 1, 12, tzinfo=UTC)
    assert agent.metadata.ownerReferences and agent.metadata.ownerReferences[0].controller is True
    assert agent.spec.eagerness == 50
    assert agent.status is not None and agent.status.victims == 7
    out = agent.to_dict()
    assert out["metadata"] == SERVER_OBJECT["metadata"]  # unknown metadata (managedFields) is kept
    assert "newField" not in out["spec"]  # the spec model ignores fields it does not declare
    assert out["status"] == {"observedGeneration": 3, "victims": 7}


def test_to_dict_exclude_unset_for_apply() -> None:
    agent = ChaosAgent(metadata={"name": "x"}, spec={"eagerness": 5})
    assert agent.to_dict(exclude_unset=True) == {
        "apiVersion": "blackadder.io/v1alpha1",
        "kind": "ChaosAgent",
        "metadata": {"name": "x"},
        "spec": {"eagerness": 5},
    }


def test_owner_reference() -> None:
    agent = ChaosAgent.from_dict(SERVER_OBJECT)
    ref = agent.owner_reference()
    assert ref.model_dump(exclude_none=True) == {
        "apiVersion": "blackadder.io/v1alpha1",
        "kind": "ChaosAgent",
        "name": "baldrick",
        "uid": "0f0e",
        "controller": True,
        "blockOwnerDeletion": True,
    }
    with pytest.raises(ValueError):
        ChaosAgent(spec={}).owner_reference()


class SnakeSpec(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True)
    tantrum_mode: bool = False
    excluded_namespaces: list[str] = Field(default_factory=list)


class SnakeAgent(CustomResource, group="blackadder.io", version="v1", kind="SnakeAgent"):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True)
    spec: SnakeSpec
    status_message: str | None = None


def test_alias_generator_on_the_resource_keeps_the_envelope() -> None:
    agent = SnakeAgent.from_dict(
        {
            "apiVersion": "blackadder.io/v1",
            "kind": "SnakeAgent",
            "metadata": {"name": "s"},
            "spec": {"tantrumMode": True, "excludedNamespaces": ["a"]},
            "statusMessage": "hi",
        }
    )
    assert (
        agent.spec.tantrum_mode and agent.spec.excluded_namespaces == ["a"] and agent.status_message == "hi"
    )
    assert agent.to_dict() == {
        "apiVersion": "blackadder.io/v1",
        "kind": "SnakeAgent",
        "metadata": {"name": "s"},
        "spec": {"tantrumMode": True, "excludedNamespaces": ["a"]},
        "statusMessage": "hi",
    }
    assert SnakeAgent(spec=SnakeSpec(tantrum_mode=True)).to_dict()["spec"]["tantrumMode"] is True


def test_custom_resources_in_module() -> None:
    found = custom_resources_in(sys.modules[__name__])
    assert found == [ChaosAgent, SnakeAgent]


@pytest.mark.parametrize(
    ("res", "group", "version", "plural", "kind", "namespaced"),
    [
        (builtin.POD, "", "v1", "pods", "Pod", True),
        (builtin.CONFIG_MAP, "", "v1", "configmaps", "ConfigMap", True),
        (builtin.SECRET, "", "v1", "secrets", "Secret", True),
        (builtin.NAMESPACE, "", "v1", "namespaces", "Namespace", False),
        (builtin.SERVICE, "", "v1", "services", "Service", True),
        (builtin.SERVICE_ACCOUNT, "", "v1", "serviceaccounts", "ServiceAccount", True),
        (builtin.EVENT, "events.k8s.io", "v1", "events", "Event", True),
        (builtin.LEASE, "coordination.k8s.io", "v1", "leases", "Lease", True),
        (builtin.DEPLOYMENT, "apps", "v1", "deployments", "Deployment", True),
        (builtin.REPLICA_SET, "apps", "v1", "replicasets", "ReplicaSet", True),
        (builtin.STATEFUL_SET, "apps", "v1", "statefulsets", "StatefulSet", True),
        (builtin.DAEMON_SET, "apps", "v1", "daemonsets", "DaemonSet", True),
        (builtin.CRON_JOB, "batch", "v1", "cronjobs", "CronJob", True),
        (builtin.JOB, "batch", "v1", "jobs", "Job", True),
        (
            builtin.HORIZONTAL_POD_AUTOSCALER,
            "autoscaling",
            "v2",
            "horizontalpodautoscalers",
            "HorizontalPodAutoscaler",
            True,
        ),
        (builtin.POD_DISRUPTION_BUDGET, "policy", "v1", "poddisruptionbudgets", "PodDisruptionBudget", True),
        (builtin.NODE, "", "v1", "nodes", "Node", False),
        (
            builtin.CUSTOM_RESOURCE_DEFINITION,
            "apiextensions.k8s.io",
            "v1",
            "customresourcedefinitions",
            "CustomResourceDefinition",
            False,
        ),
    ],
)
def test_builtin_resources(
    res: Resource, group: str, version: str, plural: str, kind: str, namespaced: bool
) -> None:
    assert (res.group, res.version, res.plural, res.kind, res.namespaced) == (
        group,
        version,
        plural,
        kind,
        namespaced,
    )
    assert res.singular == kind.lower()


def test_builtin_by_kind() -> None:
    assert builtin.by_kind("Deployment") is builtin.DEPLOYMENT
    assert builtin.by_kind("Event") is builtin.EVENT
    assert builtin.by_kind("Event", group="") is builtin.CORE_EVENT
    assert builtin.DEPLOYMENT.group_resource == "deployments.apps"
    with pytest.raises(KeyError):
        builtin.by_kind("Nope")
