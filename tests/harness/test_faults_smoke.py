"""`python -m harness.faults` at tiny size on the test session's cluster: the synthetic operator is SIGKILLed
mid-storm and has its connections reset mid-stream, and loses and duplicates nothing. Correctness is
asserted; timings are only reported (the full run writes docs/RELIABILITY.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.faults import report
from harness.faults.env import Env
from harness.faults.rig import Size
from harness.faults.scenarios import sigkill, watch_reset
from kubeloop.client import Client

# An end-to-end run of the harness: minutes on a loaded 2-core machine, beyond the default 300 s per test.
pytestmark = pytest.mark.time_limit(900)


async def test_faults_smoke(kube_cluster, kube_client: Client, tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    env = Env(kube_cluster, kube_client, logs, destructive=False)  # never restarts the shared cluster
    size = Size(n=12, kills=2, storm_seconds=2.0, timeout=60, namespaces=1, seed=3)
    rows = [*await sigkill(env, size), *await watch_reset(env, size)]
    for row in rows:
        assert row.ok, f"{row.scenario}: {row.to_dict()} (operator logs in {logs})"
        assert row.objects == 12 and row.never_converged == 0 and row.duplicates == 0 and row.crashes == 0
    killed, cut = rows
    assert killed.restarts == 2, killed.to_dict()
    assert cut.details["connections_reset"] > 0, cut.to_dict()
    text = report.render({"meta": {"invocation": "pytest"}, "results": [r.to_dict() for r in rows]})
    assert "| sigkill | widget | 12 | 0 | 0 |" in text and "**Nothing**" in text
