"""Manifest rendering: stable YAML, the hardened manager Deployment, kustomization and the bundle."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, Field

from kubeloop.resources import (
    CustomResource,
    kustomization,
    manager_deployment,
    operator_manifests,
    reconcile_permissions,
    render_yaml,
    write_manifests,
)


class Spec(BaseModel):
    """A spec whose description
    spans lines."""

    eagerness: int = Field(20, ge=1, le=100)


class ChaosAgent(
    CustomResource, group="blackadder.io", version="v1alpha1", kind="ChaosAgent", scope="Cluster"
):
    spec: Spec


def _obj(kind: str, name: str, namespace: str | None = None, api: str = "v1") -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if namespace:
        meta["namespace"] = namespace
    return {"kind": kind, "apiVersion": api, "metadata": meta}


def test_object_order_is_apply_order_and_input_independent() -> None:
    objs = [
        _obj("Deployment", "op", "ns", "apps/v1"),
        _obj("Widget", "w", "ns", "x.example.com/v1"),
        _obj("RoleBinding", "op", "ns"),
        _obj("Service", "op", "ns"),
        _obj("ConfigMap", "b", "ns"),
        _obj("ConfigMap", "a", "ns"),
        _obj("Role", "op", "ns"),
        _obj("ClusterRoleBinding", "op"),
        _obj("ClusterRole", "op"),
        _obj("ServiceAccount", "op", "ns"),
        _obj("CustomResourceDefinition", "widgets.x.example.com"),
        _obj("Namespace", "ns"),
    ]
    text = render_yaml(objs)
    docs = list(yaml.safe_load_all(text))
    assert [(d["kind"], d["metadata"]["name"]) for d in docs] == [
        ("Namespace", "ns"),
        ("CustomResourceDefinition", "widgets.x.example.com"),
        ("ServiceAccount", "op"),
        ("ClusterRole", "op"),
        ("ClusterRoleBinding", "op"),
        ("Role", "op"),
        ("RoleBinding", "op"),
        ("ConfigMap", "a"),
        ("ConfigMap", "b"),
        ("Service", "op"),
        ("Deployment", "op"),
        ("Widget", "w"),
    ]
    assert render_yaml(reversed(objs)) == text


def test_yaml_keys_sorted_no_aliases_and_block_strings() -> None:
    shared = {"app": "x"}
    obj = {
        "metadata": {"name": "a", "labels": shared},
        "kind": "ConfigMap",
        "apiVersion": "v1",
        "data": {"z": "1", "a": "line one\nline two\n"},
        "extra": shared,
    }
    text = render_yaml([obj])
    assert "&" not in text and "*" not in text
    assert text.startswith("---\napiVersion: v1\ndata:\n  a: |\n    line one\n    line two\n  z: '1'\nextra:")
    assert yaml.safe_load(text) == obj


def test_kustomization() -> None:
    assert kustomization(["crds.yaml", "rbac.yaml"], namespace="ns") == {
        "apiVersion": "kustomize.config.k8s.io/v1beta1",
        "kind": "Kustomization",
        "namespace": "ns",
        "resources": ["crds.yaml", "rbac.yaml"],
    }


def test_manager_deployment_is_locked_down() -> None:
    dep = manager_deployment("chaos", "chaos-system", "example.org/chaos:1.0", ["run", "--leader-elect"])
    assert dep["metadata"] == {
        "name": "chaos",
        "namespace": "chaos-system",
        "labels": {"app.kubernetes.io/name": "chaos", "app.kubernetes.io/managed-by": "kubeloop"},
    }
    pod = dep["spec"]["template"]["spec"]
    assert (
        dep["spec"]["selector"]["matchLabels"].items()
        <= dep["spec"]["template"]["metadata"]["labels"].items()
    )
    assert pod["serviceAccountName"] == "chaos"
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert pod["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
    [c] = pod["containers"]
    assert c["image"] == "example.org/chaos:1.0" and c["args"] == ["run", "--leader-elect"]
    assert c["securityContext"] == {
        "allowPrivilegeEscalation": False,
        "readOnlyRootFilesystem": True,
        "runAsNonRoot": True,
        "capabilities": {"drop": ["ALL"]},
        "seccompProfile": {"type": "RuntimeDefault"},
    }
    assert c["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": "health"}
    assert c["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": "health"}
    ports = {p["name"]: p["containerPort"] for p in c["ports"]}
    assert ports == {"metrics": 8080, "health": 8081}
    env = {e["name"]: e for e in c["env"]}
    assert env["POD_NAMESPACE"]["valueFrom"] == {"fieldRef": {"fieldPath": "metadata.namespace"}}
    assert env["POD_NAME"]["valueFrom"] == {"fieldRef": {"fieldPath": "metadata.name"}}
    assert set(c["resources"]) == {"requests", "limits"}
    # a read-only root still needs a writable /tmp
    assert {"name": "tmp", "mountPath": "/tmp"} in c["volumeMounts"]
    assert {"name": "tmp", "emptyDir": {}} in pod["volumes"]


def test_manager_deployment_options() -> None:
    dep = manager_deployment(
        "op",
        "ns",
        "img",
        command=["python", "-m", "op"],
        replicas=2,
        service_account="sa",
        resources={"limits": {"memory": "1Gi"}},
        env={"B": "2", "A": "1"},
    )
    pod = dep["spec"]["template"]["spec"]
    [c] = pod["containers"]
    assert dep["spec"]["replicas"] == 2 and pod["serviceAccountName"] == "sa"
    assert c["command"] == ["python", "-m", "op"] and c["resources"] == {"limits": {"memory": "1Gi"}}
    assert [e["name"] for e in c["env"]][-2:] == ["A", "B"]


def test_operator_manifests_and_write(tmp_path: Path) -> None:
    objs = operator_manifests(
        "chaos",
        "chaos-system",
        "img:1",
        models=[ChaosAgent],
        cluster_permissions=reconcile_permissions(ChaosAgent),
        args=["run"],
    )
    kinds = [o["kind"] for o in objs]
    assert kinds == [
        "Namespace",
        "CustomResourceDefinition",
        "ServiceAccount",
        "ClusterRole",
        "ClusterRoleBinding",
        "Role",
        "RoleBinding",
        "Service",
        "Deployment",
    ]
    paths = write_manifests(tmp_path / "deploy", objs)
    assert [p.name for p in paths] == [
        "namespace.yaml",
        "crds.yaml",
        "rbac.yaml",
        "manager.yaml",
        "kustomization.yaml",
    ]
    assert yaml.safe_load((tmp_path / "deploy" / "kustomization.yaml").read_text())["resources"] == [
        "namespace.yaml",
        "crds.yaml",
        "rbac.yaml",
        "manager.yaml",
    ]
    crd = yaml.safe_load((tmp_path / "deploy" / "crds.yaml").read_text())
    spec = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    assert spec["description"] == "A spec whose description\nspans lines."
    assert "description: |-\n" in (tmp_path / "deploy" / "crds.yaml").read_text()
    rbac = list(yaml.safe_load_all((tmp_path / "deploy" / "rbac.yaml").read_text()))
    assert [d["kind"] for d in rbac] == [
        "ServiceAccount",
        "ClusterRole",
        "ClusterRoleBinding",
        "Role",
        "RoleBinding",
    ]
    # writing twice gives byte-identical files
    before = {p.name: p.read_text() for p in paths}
    write_manifests(tmp_path / "deploy", list(reversed(objs)))
    assert {p.name: p.read_text() for p in paths} == before
