"""The scale-out benchmark (``python -m harness.bench --scale-out``) at tiny N on the test session's
cluster: 1 and 2 sharded replicas converge every widget and the report carries every figure. No timing
assertions: the figures are whatever this machine gives."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.bench import scaleout

# An end-to-end run of the harness: minutes on a loaded 2-core machine, beyond the default 300 s per test.
pytestmark = pytest.mark.time_limit(900)


async def test_scale_out_smoke(kube_cluster, tmp_path: Path) -> None:
    options = scaleout.ScaleOutOptions(n=200, replicas=[1, 2], kubeconfig=str(kube_cluster.kubeconfig),
                                       log_dir=tmp_path / "logs", results=tmp_path / "scaleout.json",
                                       log=lambda msg: None)
    data = await scaleout.run(options)

    assert [c["replicas"] for c in data["cases"]] == [1, 2]
    for c in data["cases"]:
        where = f"{c['replicas']} replica(s): {c['error']} (logs in {tmp_path / 'logs'})"
        assert c["error"] is None, where
        assert c["converged"] and c["converged_count"] == 200 and c["unconverged_after"] == 0, where
        assert c["seconds"] > 0 and c["objects_per_s"] > 0, where
        assert len(c["per_replica"]) == c["replicas"], where
        for r in c["per_replica"]:
            assert r["peak_rss_mib"] > 10 and r["cpu_s"] > 0, (where, r)
            assert r["reconciles"] is not None and r["keys_owned"] is not None, (where, r)
        assert c["sum"]["reconciles"] >= 200, where  # every widget by someone, at least once
        # Once settled, the ring gives every key to exactly one replica, and each replica a share.
        assert c["keys_owned_settled"] is not None and len(c["keys_owned_settled"]) == c["replicas"], where
        assert c["sum"]["cpu_s"] == round(sum(r["cpu_s"] for r in c["per_replica"]), 1), where
    assert (tmp_path / "scaleout.json").exists()
    assert "obj/s" in scaleout.line(data["cases"][0])
