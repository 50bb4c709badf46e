"""A real local Kubernetes control plane (etcd, kube-apiserver, controller-manager, scheduler, kwok)
built from Go modules and run as plain processes on 127.0.0.1 — for tests and local development."""

from kubeloop.envtest.build import Builder, BuildError, Toolchain, ensure_built
from kubeloop.envtest.cluster import (
    ClusterError,
    ClusterStatus,
    ComponentStatus,
    ExternalCluster,
    LocalCluster,
)
from kubeloop.envtest.versions import ETCD_VERSION, KUBERNETES_VERSION, KWOK_VERSION

__all__ = [
    "ETCD_VERSION",
    "KUBERNETES_VERSION",
    "KWOK_VERSION",
    "BuildError",
    "Builder",
    "ClusterError",
    "ClusterStatus",
    "ComponentStatus",
    "ExternalCluster",
    "LocalCluster",
    "Toolchain",
    "ensure_built",
]
