"""What the agent never touches, whatever its spec says: system namespaces, its own namespace and
pods, opted-out objects, and (per mode) objects that cannot be changed back safely."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from kubeloop import Obj, ownership

ALWAYS_EXCLUDED = ("kube-system", "kube-public", "kube-node-lease")
OPT_OUT = "blackadder.io/exclude"  # annotation "true" on any object or namespace: always wins
NEVER_REWRITTEN = frozenset({"kube-root-ca.crt"})  # every namespace's CA bundle: clusters depend on it
# Mounted into every pod that runs under a ServiceAccount: the pod's own namespace.
POD_NAMESPACE_FILE = Path("/var/run/secrets/kubernetes.io/serviceaccount/namespace")


@dataclass(frozen=True)
class Settings:
    """The operator-wide settings (``kubeloop run blackadder --help``), resolved for one reconcile."""

    operator: str = "blackadder"
    operator_namespace: str | None = None  # None: run outside a cluster, nothing given
    protected_namespaces: tuple[str, ...] = ()
    max_concurrent_actions: int = 8
    recent_actions: int = 20
    annotation_limit: int = 64 * 1024  # larger originals go to a backup ConfigMap
    own_pod: tuple[str, str] | None = field(default_factory=lambda: _own_pod())

    @property
    def excluded_namespaces(self) -> tuple[str, ...]:
        own = (self.operator_namespace,) if self.operator_namespace else ()
        return tuple(sorted({*ALWAYS_EXCLUDED, *own, *self.protected_namespaces}))


def operator_namespace(given: str | None) -> str | None:
    """The operator's own namespace: the one given (flag or environment), else, inside a pod, the pod's.
    Never the kubeconfig's context namespace: that says where a person works, not where the operator
    lives (taking it made the article's demo in ``default`` do nothing)."""
    if given:
        return given
    try:
        return POD_NAMESPACE_FILE.read_text().strip() or None
    except OSError:
        return None


def _own_pod() -> tuple[str, str] | None:
    # Set through the downward API in the generated Deployment; absent when run outside a pod.
    name, namespace = os.environ.get("POD_NAME"), os.environ.get("POD_NAMESPACE")
    return (namespace, name) if name and namespace else None


def opted_out(obj: Obj) -> bool:
    annotations = obj.get("metadata", {}).get("annotations") or {}
    return str(annotations.get(OPT_OUT, "")).lower() == "true"


def is_own(obj: Obj, settings: Settings) -> bool:
    """The operator's own pods and Deployment (by name or by the labels kubeloop's manifests set)."""
    meta = obj.get("metadata", {})
    if settings.own_pod and (meta.get("namespace"), meta.get("name")) == settings.own_pod:
        return True
    labels = meta.get("labels") or {}
    return (labels.get("app.kubernetes.io/name") == settings.operator
            and labels.get("app.kubernetes.io/managed-by") == "kubeloop")


def untouchable(obj: Obj, settings: Settings) -> bool:
    """Defence in depth: the listing already left these out server-side."""
    return (obj["metadata"].get("namespace") in settings.excluded_namespaces or opted_out(obj)
            or is_own(obj, settings))


def rewritable_configmap(cm: Obj) -> bool:
    """Immutable ConfigMaps cannot be changed back; controller-owned ones would be fought over (and
    their controller already restores them); the CA bundle is everyone's trust root."""
    return (cm["metadata"]["name"] not in NEVER_REWRITTEN and not cm.get("immutable")
            and ownership.controller_of(cm) is None and bool(cm.get("data")))
