"""The flags both commands share: which cluster to run on, and where logs, raw results and the report
go. Said once so that ``python -m harness.bench`` and ``python -m harness.faults`` read the same."""

from __future__ import annotations

import argparse
from pathlib import Path

from harness.common.provenance import REPO


def add_run_flags(p: argparse.ArgumentParser, *, cluster_name: str, results: Path, output: Path,
                  kubeconfig_note: str = "") -> None:
    """``--kubeconfig``, ``--cluster-name``, ``--keep-cluster``, ``--log-dir``, ``--results``,
    ``--output``, ``--no-report``, ``--report-only``."""
    p.add_argument("--kubeconfig",
                   help=f"use this cluster{kubeconfig_note} instead of starting LocalCluster('{cluster_name}')")
    p.add_argument("--cluster-name", default=cluster_name, help=f"its own LocalCluster's name (default {cluster_name})")
    p.add_argument("--keep-cluster", action="store_true", help="leave its own cluster running afterwards")
    p.add_argument("--log-dir", type=Path, help="operator logs (default: a new temporary directory)")
    p.add_argument("--results", type=Path, default=results, help=f"the raw results, JSON (default {_shown(results)})")
    p.add_argument("--output", type=Path, default=output, help=f"the report, markdown (default {_shown(output)})")
    p.add_argument("--no-report", action="store_true", help="only print and save the raw results")
    p.add_argument("--report-only", action="store_true", help="render the report from --results, run nothing")


def _shown(path: Path) -> str:
    """A default path as the repository names it (the same on every machine)."""
    return str(path.relative_to(REPO)) if path.is_relative_to(REPO) else str(path)
