"""The operators under test and how each is started as its own OS process.

Every contestant makes ``status.observed == spec.value`` for every widget of one namespace. Each is
written the way its framework's documentation suggests, with default settings unless a variant's
name says otherwise; the harness only chooses the namespace, the kubeconfig and free ports.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from harness.bench.contestants.compiled import (
    CONTROLLER_RUNTIME,
    KUBE_RS,
    Compiled,
    crate_version,
    go_module_version,
)
from harness.common.processes import kubeloop_run

HERE = Path(__file__).resolve().parent


@dataclass(frozen=True)
class Contestant:
    name: str
    description: str
    command: Callable[[str, str], list[str]]  # (kubeconfig, namespace) → argv
    needs: str | None = None  # an importable module it needs (e.g. "kopf")
    build: Compiled | None = None  # a compiled contestant: built (or found in the cache) before the runs


def _kubeloop(*extra: str) -> Callable[[str, str], list[str]]:
    def argv(kubeconfig: str, namespace: str) -> list[str]:
        return kubeloop_run(str(HERE / "kubeloop_widget.py"), kubeconfig, "--namespace", namespace, *extra)
    return argv


def _kopf(kubeconfig: str, namespace: str) -> list[str]:
    # Kopf reads the kubeconfig from $KUBECONFIG (set by the harness); --standalone: no peering.
    return [sys.executable, "-m", "kopf", "run", "--standalone", "--namespace", namespace,
            str(HERE / "kopf_widget.py")]


def _ceiling(concurrency: int) -> Callable[[str, str], list[str]]:
    def argv(kubeconfig: str, namespace: str) -> list[str]:
        return [sys.executable, str(HERE / "ceiling.py"), "--kubeconfig", kubeconfig,
                "--namespace", namespace,
                "--concurrency", str(concurrency)]
    return argv


def _compiled(build: Compiled, *flags: str) -> Callable[[str, str], list[str]]:
    # The kubeconfig reaches both programs through $KUBECONFIG, which the harness sets.
    def argv(kubeconfig: str, namespace: str) -> list[str]:
        return [str(build.build()), "--namespace", namespace, *flags]
    return argv


def _controller_runtime() -> Contestant:
    version = go_module_version("sigs.k8s.io/controller-runtime")
    return Contestant(
        "controller-runtime",
        f"controller-runtime {version} (client-go {go_module_version('k8s.io/client-go')}, Go): typed Widget, "
        "one reconciler, merge patch of /status; non-default: MaxConcurrentReconciles 16 (kubeloop's "
        "default; controller-runtime's is 1), metrics server off, cache of one namespace",
        _compiled(CONTROLLER_RUNTIME, "--max-concurrent-reconciles", "16"), build=CONTROLLER_RUNTIME)


def _kube_rs(concurrency: int) -> Contestant:
    base = (f"kube-rs {crate_version('kube')} (k8s-openapi {crate_version('k8s-openapi')}, rustls, Rust): "
            "derived CustomResource, `Controller::run`, merge patch of /status")
    if not concurrency:
        return Contestant("kube-rs", f"{base}; all defaults (concurrency unbounded)", _compiled(KUBE_RS),
                          build=KUBE_RS)
    return Contestant(f"kube-rs-{concurrency}", f"{base}; non-default: `Config::concurrency({concurrency})`",
                      _compiled(KUBE_RS, "--concurrency", str(concurrency)), build=KUBE_RS)


CONTESTANTS: dict[str, Contestant] = {c.name: c for c in [
    Contestant("kubeloop", "kubeloop with its defaults: `kubeloop run`, 16 workers per controller",
               _kubeloop()),
    Contestant("kubeloop-4", "kubeloop with `--max-concurrent-reconciles 4` (the default before 2026-11-21)",
               _kubeloop("--max-concurrent-reconciles", "4")),
    Contestant("kubeloop-qps200", "kubeloop with a client-side rate limit: `--qps 200 --burst 400`",
               _kubeloop("--qps", "200", "--burst", "400")),
    Contestant("kopf", "Kopf defaults: `kopf run --standalone`, @on.create + @on.update", _kopf,
               needs="kopf"),
    Contestant("ceiling", "framework-free asyncio + aiohttp: list, watch, merge-patch /status, 16 in flight",
               _ceiling(16)),
    _controller_runtime(),
    _kube_rs(0),
    _kube_rs(16),
]}
