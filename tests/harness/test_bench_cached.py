"""The cached-objects benchmark (harness/bench/cached.py) end to end at a small N on the test session's
cluster: kwok runs the Pods, each of the three cache holders syncs every object, counts every event of both
paces, and gets its bytes per object. The compiled holders come from ``python -m harness.bench.build``
(.ci/run runs it); without them the test skips, naming the command."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.bench import cached
from harness.bench.contestants import compiled

pytestmark = pytest.mark.time_limit(900)


def test_a_pod_is_sent_bound_owned_and_without_what_the_server_writes() -> None:
    pod = cached._pod(120, {2: "uid-of-owner-2"})
    meta = pod["metadata"]
    assert pod["spec"]["nodeName"] == cached.NODE and "status" not in pod
    assert meta["ownerReferences"] == [{"apiVersion": "v1", "kind": "ConfigMap", "name": "owner-00002",
                                        "uid": "uid-of-owner-2", "controller": True, "blockOwnerDeletion": True}]
    assert not {"uid", "resourceVersion", "creationTimestamp", "managedFields", "namespace"} & set(meta)


async def test_every_holder_caches_every_object_and_counts_every_event(kube_cluster, tmp_path: Path) -> None:
    absent = [c for c in compiled.missing() if c in (compiled.CONTROLLER_RUNTIME_CACHE, compiled.KUBE_RS_CACHE)]
    if absent:
        pytest.skip(f"{', '.join(c.binary for c in absent)} not built for the current source: "
                    f"run `{compiled.BUILD_COMMAND}` first (.ci/run does)")
    n = 40
    options = cached.CachedOptions(n=[n], kinds=["pod", "configmap-1k"], burst=20, trickle=10, trickle_rate=20.0,
                                   settle_s=1.0, kubeconfig=str(kube_cluster.kubeconfig), log_dir=tmp_path / "logs",
                                   results=tmp_path / "cached.json", log=lambda msg: None)
    data = await cached.run(options)

    rows = {(r["kind"], r["contestant"], r["n"]): r for r in data["rows"]}
    assert set(rows) == {(k, c, size) for k in options.kinds for c in cached.CONTESTANTS for size in (0, n)}
    for key, r in rows.items():
        assert r["error"] is None, (key, r["error"])
        assert r["rss_synced_mib"] > 1, key
        if r["n"] == 0:
            continue
        # Every Pod (run by kwok), or every ConfigMap and the namespace's kube-root-ca.crt.
        assert r["cached"] == (n if r["kind"] == "pod" else n + 1), key
        assert 0 < r["first_reconcile_s"] <= r["all_reconciled_s"], key
        assert r["burst_events"] == 20 and r["trickle_events"] == 10, key
        # (Reaching those counts is what the run waited for; CPU is read in 10 ms ticks, so ten events may
        # cost a compiled holder none.)
        assert r["burst_cpu_ms_per_event"] >= 0 and r["trickle_cpu_ms_per_event"] >= 0, key
        assert "rss_bytes_per_object" in r and r["baseline_rss_mib"] > 1, key
    assert (tmp_path / "cached.json").exists()
    assert data["meta"]["contestants"]["kube-rs"].startswith("kube-rs 5.")
