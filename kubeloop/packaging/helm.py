"""A ``helm`` binary built from its Go module into the kubeloop cache (no release downloads), the same
way ``kubeloop.envtest.build`` builds the control plane: ``<cache>/bin/helm-<version>/helm``."""

from __future__ import annotations

import os
from pathlib import Path

from kubeloop.envtest import versions
from kubeloop.envtest.build import Builder, Logger, _stderr, _write_stamp, stamp_ok

# 3.17.x: the newest minor the brief allows that Go 1.26 builds; pinned so charts lint the same everywhere.
HELM_VERSION = "3.17.4"
HELM_MAIN = "helm.sh/helm/v3/cmd/helm"
ENV_HELM_VERSION = "KUBELOOP_HELM_VERSION"


def helm_version(override: str | None = None) -> str:
    return versions.plain_version(override or os.environ.get(ENV_HELM_VERSION) or HELM_VERSION)


def helm_dir(version: str, layout: versions.Layout | None = None) -> Path:
    return (layout or versions.Layout.default()).root / "bin" / f"helm-{versions.plain_version(version)}"


def helm_ldflags(version: str) -> str:
    # What helm's Makefile stamps, so `helm version` tells which build this is.
    pkg = "helm.sh/helm/v3/internal/version"
    return f"-s -w -X {pkg}.version=v{version} -X {pkg}.gitTreeState=clean"


def cached_helm(version: str | None = None, layout: versions.Layout | None = None) -> Path | None:
    ver = helm_version(version)
    out = helm_dir(ver, layout)
    return out / "helm" if stamp_ok(out, "helm", ver, ["helm"]) else None


def ensure_helm(version: str | None = None, *, force: bool = False, log: Logger = _stderr,
                layout: versions.Layout | None = None) -> Path:
    """The path of a built helm, compiling it first if needed (a few minutes once, then instant)."""
    ver = helm_version(version)
    if not force and (found := cached_helm(ver, layout)):
        return found
    builder = Builder(layout, log=log)
    out = helm_dir(ver, builder.layout)
    out.mkdir(parents=True, exist_ok=True)
    work = builder._fresh_work_dir("helm", ver)
    log(f"building helm v{ver} from {HELM_MAIN} (first time only; takes a few minutes)")
    # `go install mod@version` honours the module's own go.mod (no wrapper needed: helm has no replaces).
    argv = ["go", "install", "-trimpath", "-ldflags", helm_ldflags(ver), f"{HELM_MAIN}@v{ver}"]
    builder._step(f"helm v{ver}", argv, work, extra_env={"GOBIN": str(out)})
    _write_stamp(out, "helm", ver, go=builder._go_version())
    return out / "helm"
