"""The benchmark harness (``python -m harness.bench``) end to end at tiny N on the test session's cluster:
it converges and reports numbers. No timing assertions: the figures are whatever this machine gives."""

from __future__ import annotations

import contextlib
import importlib.util
from pathlib import Path

import pytest

from harness.bench import report, runner
from kubeloop.client import ApiError, Client
from kubeloop.testing import wait_for_deletion

# An end-to-end run of the harness: minutes on a loaded 2-core machine, beyond the default 300 s per test.
pytestmark = pytest.mark.time_limit(900)


async def test_bench_harness_smoke(kube_cluster, tmp_path: Path) -> None:
    options = runner.Options(
        n=[20], repeats=1, scenarios=["backlog", "stream"], contestants=["kubeloop", "ceiling"],
        kubeconfig=str(kube_cluster.kubeconfig), results=tmp_path / "results.json", log_dir=tmp_path / "logs",
        invocation="pytest tests/harness/test_bench_smoke.py", log=lambda msg: None)
    data = await runner.run(options)

    results = {(r["contestant"], r["scenario"]): r for r in data["results"]}
    assert set(results) == {(c, s) for c in ("kubeloop", "ceiling") for s in ("backlog", "stream")}
    for (contestant, scenario), r in results.items():
        where = f"{contestant}/{scenario}: {r.get('error')} (logs in {tmp_path / 'logs'})"
        assert r["error"] is None, where
        assert r["converged"] and r["converged_count"] == 20, where
        assert r["objects_per_s"] > 0 and r["seconds"] > 0, where
        assert r["peak_rss_mib"] > 10 and r["cpu_s"] >= 0, where
        # Every widget needs exactly one status write; the harness's own requests are not counted.
        assert r["requests"].get("PATCH widgets/status", 0) >= 20, (where, r["requests"])
        assert r["writes_per_object"] >= 1, where
        if scenario == "stream":
            assert 0 <= r["p50_ms"] <= r["p95_ms"] <= r["p99_ms"], where
    assert data["meta"]["versions"]["kubernetes"].startswith("v1.")
    assert (tmp_path / "results.json").exists()

    chart = tmp_path / "benchmarks.png" if importlib.util.find_spec("matplotlib") else None
    report.write(data, tmp_path / "BENCHMARKS.md", chart)
    text = (tmp_path / "BENCHMARKS.md").read_text()
    assert "### backlog" in text and "### stream" in text and "| 20 | kubeloop |" in text
    assert "## Targets" in text
    if chart:
        assert chart.stat().st_size > 1000


async def test_bench_operator_scenarios_smoke(kube_cluster, kube_client: Client, tmp_path: Path) -> None:
    """``--operators all --operator-n 20``: each bundled operator's scenario completes and its requests
    are attributed (about 40 s)."""
    options = runner.Options(
        n=[], repeats=1, scenarios=[], contestants=["kubeloop"], operators=["all"], operator_n=20,
        kubeconfig=str(kube_cluster.kubeconfig), results=None, log_dir=tmp_path / "logs",
        invocation="pytest tests/harness/test_bench_smoke.py", log=lambda msg: None)
    try:
        data = await runner.run(options)
    finally:
        # As test_bad_input does: the ChaosAgent CRD's stored version (v1beta1) would keep
        # test_crd_generation from installing its own v1alpha1-only ChaosAgent on this cluster.
        with contextlib.suppress(ApiError):
            await kube_client.delete("customresourcedefinitions", "chaosagents.blackadder.io")
            await wait_for_deletion(kube_client, "customresourcedefinitions", "chaosagents.blackadder.io",
                                    timeout=60)

    results = {r["contestant"]: r for r in data["results"]}
    assert set(results) == {"immortal", "copyrator", "reloader", "blackadder"}
    for name, r in results.items():
        where = f"{name}: {r.get('error')} {r['extra'].get('progress', '')} (logs in {tmp_path / 'logs'})"
        assert r["error"] is None and r["converged"], where
        assert r["seconds"] > 0 and r["objects_per_s"] > 0 and r["peak_rss_mib"] > 10, where
        assert r["p50_ms"] <= r["p99_ms"], where
    assert results["copyrator"]["requests"]["POST configmaps"] == 20  # 1 namespace × 20 copies
    assert results["reloader"]["requests"]["PATCH deployments"] == 40  # first sight + rollout
    blackadder = results["blackadder"]
    assert blackadder["extra"]["rounds"] == 3
    # Its pod DELETEs are its PodKilled events (kwok and the ReplicaSet controller delete pods too).
    assert blackadder["requests"]["DELETE pods"] == blackadder["extra"]["events"]["PodKilled"] > 0
    # Events are posted after each rollout's write, best-effort: the last may land after the harness has
    # read them (seen once: 19 of 20), while the writes above are exact.
    assert set(results["reloader"]["extra"]["events"]) == {"Reloaded"}
    assert 15 <= results["reloader"]["extra"]["events"]["Reloaded"] <= 20
    report.write(data, tmp_path / "BENCHMARKS.md", None)
    assert "### bundled operators" in (tmp_path / "BENCHMARKS.md").read_text()


async def test_bench_profiled_runs_carry_their_breakdown(kube_cluster, tmp_path: Path) -> None:
    """``--profile cprofile``: each contestant runs under cProfile, its breakdown is stored with the run
    and the report shows it in Profiles only, never in the results."""
    options = runner.Options(
        n=[20], repeats=1, scenarios=["backlog"], contestants=["kubeloop", "ceiling"], profile="cprofile",
        kubeconfig=str(kube_cluster.kubeconfig), results=None, log_dir=tmp_path / "logs",
        invocation="pytest tests/harness/test_bench_smoke.py", log=lambda msg: None)
    data = await runner.run(options)

    runs = {r["contestant"]: r for r in data["results"]}
    assert set(runs) == {"kubeloop", "ceiling"}
    for name, r in runs.items():
        assert r["error"] is None and r["converged"], f"{name}: {r.get('error')} (logs in {tmp_path / 'logs'})"
        profile = r["extra"]["profile"]
        assert r["extra"]["profiled"] == "cprofile" and profile["total"] > 0, profile
    assert runs["kubeloop"]["extra"]["profile"]["kubeloop"] > 0
    assert "kubeloop" not in runs["ceiling"]["extra"]["profile"]  # the ceiling never imports kubeloop
    assert runs["ceiling"]["extra"]["profile"]["contestant's own code"] > 0

    text = report.render(data, None)
    assert "### backlog, N=20" in text and "| **total under cProfile** |" in text
    assert "| 20 | kubeloop |" not in text  # no row in the results: a profiled run is slower by design
