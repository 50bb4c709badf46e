"""A ``helm`` binary built from its Go module into the kubeloop cache (no release downloads), the same
way ``kubeloop.envtest.build`` builds the control plane: ``<cache>/bin/helm-<version>/helm``."""

from __future__ import annotations

import contextlib
import os
import re
import threading
import time
from collections.abc import Iterator
from pathlib import Path

from kubeloop.envtest import versions
from kubeloop.envtest.build import (
    Builder,
    Logger,
    _stderr,
    _write_stamp,
    read_stamp,
    required_version,
    stamp_ok,
)

# Pinned, so charts lint and render the same on every machine.
HELM_VERSION = "3.17.4"
HELM_MODULE = "helm.sh/helm/v3"
HELM_MAIN = f"{HELM_MODULE}/cmd/helm"
ENV_HELM_VERSION = "KUBELOOP_HELM_VERSION"
# Bumped when the build itself changes (e.g. new ldflags), so older cached builds are redone.
RECIPE = 2


def helm_version(override: str | None = None) -> str:
    return versions.plain_version(override or os.environ.get(ENV_HELM_VERSION) or HELM_VERSION)


def helm_dir(version: str, layout: versions.Layout | None = None) -> Path:
    return (layout or versions.Layout.default()).root / "bin" / f"helm-{versions.plain_version(version)}"


def helm_ldflags(version: str, client_go: str | None) -> str:
    """What helm's Makefile stamps: the version, and the Kubernetes version ``helm template`` and
    ``helm lint`` assume without a cluster (else 1.20, which fails charts needing newer). Like the
    Makefile, it follows the client-go helm is built with: ``v0.32.2`` → 1.32."""
    pkg = "helm.sh/helm/v3/internal/version"
    flags = ["-s", "-w", f"-X {pkg}.version=v{version}", f"-X {pkg}.gitTreeState=clean"]
    if client_go and (m := re.match(r"v0\.(\d+)\.", client_go)):
        for var_pkg in ("helm.sh/helm/v3/pkg/chartutil", "helm.sh/helm/v3/pkg/lint/rules"):
            flags += [f"-X {var_pkg}.k8sVersionMajor=1", f"-X {var_pkg}.k8sVersionMinor={m.group(1)}"]
    return " ".join(flags)


def cached_helm(version: str | None = None, layout: versions.Layout | None = None) -> Path | None:
    ver = helm_version(version)
    out = helm_dir(ver, layout)
    fresh = stamp_ok(out, "helm", ver, ["helm"]) and (read_stamp(out) or {}).get("recipe") == RECIPE
    return out / "helm" if fresh else None


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
    go_mod = Path(builder._module_info(f"{HELM_MODULE}@v{ver}", work)["GoMod"]).read_text()
    ldflags = helm_ldflags(ver, required_version(go_mod, "k8s.io/client-go"))
    # `go install mod@version` honours the module's own go.mod (no wrapper needed: helm has no replaces).
    argv = ["go", "install", "-trimpath", "-ldflags", ldflags, f"{HELM_MAIN}@v{ver}"]
    with _heartbeat(log, f"helm v{ver}"):
        builder._step(f"helm v{ver}", argv, work, extra_env={"GOBIN": str(out)})
    _write_stamp(out, "helm", ver, recipe=RECIPE, go=builder._go_version())
    return out / "helm"


@contextlib.contextmanager
def _heartbeat(log: Logger, what: str, every: float = 60.0) -> Iterator[None]:
    """One `go install` is minutes of silence the first time; CI jobs that print nothing for long get
    killed, and people wonder whether it hangs."""
    done = threading.Event()
    started = time.monotonic()

    def beat() -> None:
        while not done.wait(every):
            log(f"{what}: still compiling ({time.monotonic() - started:.0f}s)")

    thread = threading.Thread(target=beat, daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join()


if __name__ == "__main__":  # `python -m kubeloop.packaging.helm`: build ahead of the tests (CI)
    print(ensure_helm())
