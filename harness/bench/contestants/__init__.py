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

from harness.common.processes import kubeloop_run

HERE = Path(__file__).resolve().parent


@dataclass(frozen=True)
class Contestant:
    name: str
    description: str
    command: Callable[[str, str], list[str]]  # (kubeconfig, namespace) → argv
    needs: str | None = None  # an importable module it needs (e.g. "kopf")


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
]}
