"""The noisy-neighbour scenario (``python -m harness.bench --noisy-neighbour``) end to end, tiny, on the test
session's cluster: copyrator and reloader run as processes under their generated RBAC, both tenants act
through their own tokens, every phase is measured and the report has its shape. No timing assertions:
the figures (and so the verdict) are whatever this machine gives."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.bench import noisy
from kubeloop.client import Client, NotFound

# An end-to-end run of the harness: minutes on a loaded 2-core machine, beyond the default 300 s per test.
pytestmark = pytest.mark.time_limit(900)


async def test_noisy_neighbour_smoke(kube_cluster, kube_client: Client, tmp_path: Path) -> None:
    options = noisy.NoisyOptions(repeats=2, keys=20, rules=1, deployments=1, samples=1, creates=5, timeout=90,
                                 kubeconfig=str(kube_cluster.kubeconfig), log_dir=tmp_path / "logs",
                                 results=tmp_path / "noisy.json", log=lambda m: None)
    data = await noisy.run(options)

    # The baseline once, then unloaded and loaded interleaved.
    assert [(p["phase"], p["repeat"]) for p in data["phases"]] == [
        ("empty", 0), ("unloaded", 0), ("loaded", 0), ("unloaded", 1), ("loaded", 1)]
    for p in data["phases"]:
        # Every one of B's copies and rollouts converged, every rule create was answered.
        assert len(p["copy_s"]) == 1 and all(s is not None and s > 0 for s in p["copy_s"]), p
        # and the control copier (its own process) copied the same write
        assert len(p["control_copy_s"]) == 1 and all(s is not None and s > 0 for s in p["control_copy_s"]), p
        assert len(p["rollout_s"]) == 1 and all(s is not None and s > 0 for s in p["rollout_s"]), p
        assert p["webhook_errors"] == 0 and len(p["webhook_ms"]) == 5, p
        # copyrator's webhook was in the path: every answer carries the author record it writes.
        assert p["webhook_recorded"] == 5, p
        assert set(p["loop_lag"]) == {"copyrator", "reloader"}, p
        # The control webhook (its own process) was called for the same rule writes as copyrator's.
        assert p["webhook_timed"]["control"]["calls"] >= 5 and p["webhook_timed"]["apiserver"]["calls"] >= 5, p
    assert data["a_writes"] > 0  # A's load really ran
    summary = data["summary"]
    assert set(summary["phases"]) == {"empty", "unloaded", "loaded"}
    assert set(summary["verdict"]) == {"copy_within_2x", "rollout_within_2x", "webhook_p99_under_100ms",
                                       "client_seen_p99_under_100ms", "control_p99_under_100ms",
                                       "control_copy_within_2x"}
    assert summary["copy_to_control_copier_loaded"] > 0
    assert all(isinstance(v, bool) for v in summary["verdict"].values())
    assert json.loads((tmp_path / "noisy.json").read_text())["summary"] == summary
    text = noisy.render(data)
    assert "| unloaded |" in text and "| loaded |" in text and "goals (" in text

    # What the run added to the shared cluster is gone again (its webhook would refuse rule writes), and
    # the control's process has ended.
    for kind in ("mutatingwebhookconfigurations.admissionregistration.k8s.io",):
        with pytest.raises(NotFound):
            await kube_client.get(kind, "copyrator-mutating")
    controls = (await kube_client.list("validatingwebhookconfigurations.admissionregistration.k8s.io"))["items"]
    assert not [c for c in controls if c["metadata"]["name"].startswith("bench-noisy-control-")]
    assert data["control_exit"] is not None and data["copier_exit"] is not None


def test_noisy_flags_are_registered() -> None:
    from harness.bench.cli import parser

    args = parser().parse_args(["--noisy-neighbour", "--noisy-keys", "100", "--noisy-rules", "2"])
    assert args.noisy_neighbour and args.noisy_keys == 100 and args.noisy_rules == 2
