"""The admission benchmark (``python -m harness.bench --admission``) end to end, tiny, on the test
session's cluster: both servers are called by the API server and the report has its shape. No timing
assertions: the figures are whatever this machine gives."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.bench import admission

# An end-to-end run of the harness: minutes on a loaded 2-core machine, beyond the default 300 s per test.
pytestmark = pytest.mark.time_limit(900)


async def test_admission_bench_smoke(kube_cluster, tmp_path: Path) -> None:
    options = admission.AdmissionOptions(rate=50, count=20, repeats=2, kubeconfig=str(kube_cluster.kubeconfig),
                                         results=tmp_path / "admission.json", log=lambda m: None)
    data = await admission.run(options)

    cases = data["cases"]
    # Interleaved: the second repeat runs the servers in the other order.
    assert [(c["server"], c["repeat"]) for c in cases] == [
        ("kubeloop", 0), ("ceiling", 0), ("ceiling", 1), ("kubeloop", 1)]
    for c in cases:
        assert c["errors"] == 0 and c["requests"] == 20, c
        # One create calls the mutating and the validating webhook: both were really in the path.
        assert c["webhook_calls"] >= 40, c
        assert 0 < c["client_p50_ms"] <= c["client_p99_ms"], c
        assert 0 < c["handling_p50_ms"] <= c["handling_p99_ms"], c
        assert c["requests_per_s"] > 0, c
    summary = data["summary"]
    assert set(summary["servers"]) == {"kubeloop", "ceiling"}
    assert set(summary["added_ms"]) == {"p50", "p99"} and isinstance(summary["goal_met"], bool)
    assert json.loads((tmp_path / "admission.json").read_text())["summary"] == summary
    text = admission.render(data)
    assert "| kubeloop |" in text and "| ceiling |" in text and "added over the ceiling" in text


def test_admission_flags_are_registered() -> None:
    from harness.bench.cli import parser

    args = parser().parse_args(["--admission", "--admission-rate", "100", "--admission-count", "50"])
    assert args.admission and args.admission_rate == 100 and args.admission_count == 50
