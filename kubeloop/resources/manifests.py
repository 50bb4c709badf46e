"""Deployable manifests: stable multi-document YAML, a hardened manager Deployment, a kustomization,
and ``operator_manifests``/``write_manifests`` which ``kubeloop generate`` builds on."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

import yaml

from kubeloop.resources.crd import crds_for
from kubeloop.resources.model import CustomResource
from kubeloop.resources.rbac import Permission, render_rbac

__all__ = [
    "KIND_ORDER", "kustomization", "manager_deployment", "metrics_service", "operator_manifests",
    "render_yaml", "write_manifests",
]

# Apply order: what others depend on first (namespaces before namespaced objects, CRDs before CRs,
# service accounts and RBAC before the pods that use them).
KIND_ORDER = (
    "Namespace", "CustomResourceDefinition", "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role",
    "RoleBinding", "ConfigMap", "Secret", "Service", "Deployment",
)
HEALTH_PORT = 8081
METRICS_PORT = 8080


class _Dumper(yaml.SafeDumper):
    """No anchors/aliases (shared sub-dicts are written out in full); multi-line strings as blocks."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def _str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _str)


def _order(obj: Mapping[str, Any]) -> tuple[int, str, str, str]:
    kind = obj.get("kind", "")
    rank = KIND_ORDER.index(kind) if kind in KIND_ORDER else len(KIND_ORDER)
    meta = obj.get("metadata") or {}
    return (rank, kind, meta.get("namespace") or "", meta.get("name") or "")


def render_yaml(objs: Iterable[Mapping[str, Any]]) -> str:
    """Multi-document YAML in apply order (kind, then namespace, then name), keys sorted."""
    docs = sorted(objs, key=_order)
    return yaml.dump_all([dict(d) for d in docs], Dumper=_Dumper, sort_keys=True, default_flow_style=False,
                         explicit_start=True, allow_unicode=True, width=100)


def kustomization(files: Iterable[str], namespace: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"apiVersion": "kustomize.config.k8s.io/v1beta1", "kind": "Kustomization"}
    if namespace:
        out["namespace"] = namespace
    out["resources"] = list(files)
    return out


def _labels(name: str) -> dict[str, str]:
    return {"app.kubernetes.io/name": name, "app.kubernetes.io/managed-by": "kubeloop"}


def manager_deployment(
    name: str, namespace: str, image: str, args: Sequence[str] = (), *,
    command: Sequence[str] | None = None, replicas: int = 1, service_account: str | None = None,
    resources: Mapping[str, Any] | None = None, env: Mapping[str, str] | None = None,
    image_pull_policy: str = "IfNotPresent", metrics_port: int = METRICS_PORT, health_port: int = HEALTH_PORT,
) -> dict[str, Any]:
    """The operator's Deployment, locked down: non-root, read-only root, no capabilities, seccomp."""
    labels = _labels(name)
    selector = {"app.kubernetes.io/name": name}
    container_env: list[dict[str, Any]] = [
        {"name": "POD_NAMESPACE", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}},
        {"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
        # the root filesystem is read-only: don't let Python try to write .pyc files
        {"name": "PYTHONDONTWRITEBYTECODE", "value": "1"},
    ]
    container_env += [{"name": k, "value": v} for k, v in sorted((env or {}).items())]
    container: dict[str, Any] = {
        "name": "manager",
        "image": image,
        "imagePullPolicy": image_pull_policy,
        "args": list(args),
        "env": container_env,
        "ports": [
            {"name": "metrics", "containerPort": metrics_port, "protocol": "TCP"},
            {"name": "health", "containerPort": health_port, "protocol": "TCP"},
        ],
        "livenessProbe": {"httpGet": {"path": "/healthz", "port": "health"},
                          "initialDelaySeconds": 15, "periodSeconds": 20},
        "readinessProbe": {"httpGet": {"path": "/readyz", "port": "health"},
                           "initialDelaySeconds": 5, "periodSeconds": 10},
        "resources": dict(resources) if resources is not None else {
            "requests": {"cpu": "50m", "memory": "128Mi"},
            "limits": {"cpu": "500m", "memory": "512Mi"},
        },
        "securityContext": {
            "allowPrivilegeEscalation": False,
            "readOnlyRootFilesystem": True,
            "runAsNonRoot": True,
            "capabilities": {"drop": ["ALL"]},
            "seccompProfile": {"type": "RuntimeDefault"},
        },
        "volumeMounts": [{"name": "tmp", "mountPath": "/tmp"}],
    }
    if command is not None:
        container["command"] = list(command)
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": namespace, "labels": labels},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": selector},
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "serviceAccountName": service_account or name,
                    # a numeric user lets the kubelet verify runAsNonRoot whatever USER the image names
                    "securityContext": {"runAsNonRoot": True, "runAsUser": 65532, "runAsGroup": 65532,
                                        "fsGroup": 65532, "seccompProfile": {"type": "RuntimeDefault"}},
                    "terminationGracePeriodSeconds": 10,
                    "containers": [container],
                    "volumes": [{"name": "tmp", "emptyDir": {}}],
                },
            },
        },
    }


def metrics_service(name: str, namespace: str, port: int = METRICS_PORT) -> dict[str, Any]:
    """A ClusterIP Service in front of the manager's metrics port."""
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": f"{name}-metrics", "namespace": namespace, "labels": _labels(name)},
        "spec": {"selector": {"app.kubernetes.io/name": name},
                 "ports": [{"name": "metrics", "port": port, "targetPort": "metrics", "protocol": "TCP"}]},
    }


def operator_manifests(
    name: str, namespace: str, image: str, *, models: Iterable[type[CustomResource]] = (),
    cluster_permissions: Iterable[Permission] = (), namespaced_permissions: Iterable[Permission] = (),
    args: Sequence[str] = (), create_namespace: bool = True,
    events: Literal["namespace", "cluster"] = "namespace", shards: bool = False,
) -> list[dict[str, Any]]:
    """Everything to deploy an operator: Namespace, CRDs, RBAC, metrics Service, manager Deployment.
    ``shards``: its replicas run ``--shards auto`` (``args`` should say so), so RBAC covers that."""
    objs: list[dict[str, Any]] = []
    if create_namespace:
        # The Deployment below meets the "restricted" Pod Security Standard, so its namespace enforces it
        # (as hardened clusters do): nothing less locked down can be started there by mistake.
        objs.append({"apiVersion": "v1", "kind": "Namespace", "metadata": {
            "name": namespace, "labels": {"pod-security.kubernetes.io/enforce": "restricted"}}})
    objs += crds_for(models)
    objs += render_rbac(name, namespace, cluster_permissions, namespaced_permissions, events=events,
                        shards=shards)
    objs.append(metrics_service(name, namespace))
    objs.append(manager_deployment(name, namespace, image, args))
    return objs


_FILES = {"Namespace": "namespace.yaml", "CustomResourceDefinition": "crds.yaml", "Service": "manager.yaml",
          "Deployment": "manager.yaml"}
_FILES.update(dict.fromkeys(("ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"),
                            "rbac.yaml"))


def write_manifests(out_dir: str | Path, objs: Iterable[Mapping[str, Any]]) -> list[Path]:
    """Write ``objs`` split by purpose (namespace/crds/rbac/manager/other.yaml) plus kustomization.yaml."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    by_file: dict[str, list[Mapping[str, Any]]] = {}
    for obj in objs:
        by_file.setdefault(_FILES.get(obj.get("kind", ""), "other.yaml"), []).append(obj)
    order = ["namespace.yaml", "crds.yaml", "rbac.yaml", "manager.yaml", "other.yaml"]
    names = [f for f in order if f in by_file]
    written = []
    for fname in names:
        path = out / fname
        path.write_text(render_yaml(by_file[fname]))
        written.append(path)
    path = out / "kustomization.yaml"
    path.write_text(render_yaml([kustomization(names)]))
    written.append(path)
    return written
