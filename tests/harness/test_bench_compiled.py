"""The compiled contestants (controller-runtime in Go, kube-rs in Rust) end to end at N=50 on the test
session's cluster: each, built from its committed source into ~/.cache/kubeloop/bench beforehand (by
``python -m harness.bench.build``, as .ci/run does: a cargo release build takes many minutes
and never runs inside the tests), converges every widget, and gets its row and ratios in the report. A
contestant not built for its current source skips the test, naming the command."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.bench import apimetrics, report, runner
from harness.bench.contestants import compiled

# An end-to-end run of the harness: minutes on a loaded 2-core machine, beyond the default 300 s per test.
pytestmark = pytest.mark.time_limit(900)


N = 50
COMPILED = ["controller-runtime", "kube-rs", "kube-rs-16"]


def _need_builds() -> None:
    absent = compiled.missing()
    if absent:
        pytest.skip(f"{', '.join(c.binary for c in absent)} not built for the current source: "
                    f"run `{compiled.BUILD_COMMAND}` first (.ci/run does)")


async def test_compiled_contestants_converge_and_are_reported(kube_cluster, tmp_path: Path) -> None:
    _need_builds()
    options = runner.Options(
        n=[N], repeats=1, scenarios=["backlog", "stream", "startup"], startup_n=N,
        contestants=["kubeloop", *COMPILED],
        kubeconfig=str(kube_cluster.kubeconfig), results=tmp_path / "results.json", log_dir=tmp_path / "logs",
        invocation="pytest tests/harness/test_bench_compiled.py", log=lambda msg: None)
    data = await runner.run(options)  # builds each compiled contestant first, unless cached

    results = {(r["contestant"], r["scenario"]): r for r in data["results"]}
    assert set(results) == {(c, s) for c in ["kubeloop", *COMPILED] for s in ("backlog", "stream", "startup")}
    assert data["meta"]["apiserver_cpu"].startswith("measured: kube-apiserver pid ")
    for (contestant, scenario), r in results.items():
        where = f"{contestant}/{scenario}: {r.get('error')} (logs in {tmp_path / 'logs'})"
        assert r["error"] is None, where
        assert r["converged"] and r["converged_count"] == N, where
        assert r["peak_rss_mib"] > 1 and r["cpu_s"] >= 0, where
        # The API server served at least the harness's watch and the contestant's list in the window.
        assert r["extra"]["apiserver_cpu_s"] > 0, where
        if scenario == "startup":  # N already converged: only the sentinel needs a write
            # (Events are counted by resource, not by client: on the shared test cluster another component's
            # Event in the window counts too, and no contestant here records any.)
            own = {k: n for k, n in r["requests"].items() if k.split()[-1] != "events"}
            assert r["seconds"] > 0 and apimetrics.writes(own) <= 2, (where, r["requests"])
            continue
        # A merge patch of /status per widget, whoever sends it; the harness's own requests are not counted.
        assert r["requests"].get("PATCH widgets/status", 0) >= N, (where, r["requests"])
        # Each holds at least one connection to the API server (its watch) while it runs.
        assert r["extra"]["tcp_peak"] >= 1, where
    # The report names each compiled contestant's version and its non-default settings.
    assert "controller-runtime v0." in data["meta"]["contestants"]["controller-runtime"]
    assert "kube-rs 5." in data["meta"]["contestants"]["kube-rs-16"]

    text = report.render(data, None)
    assert "## Against the compiled frameworks" in text
    assert "#### backlog, N = 50" in text and "| 50 | controller-runtime |" in text
    assert "#### startup, N = 50" in text and "| sentinel converged s (start-up with N cached) |" in text
    assert "kubeloop ÷ controller-runtime" in text and "kubeloop ÷ kube-rs-16" in text
    for measure in ("peak RSS MiB", "API requests/object", "new TCP connections/object (seen)",
                    "API server CPU s", "first converged s (start-up to first reconcile)"):
        assert f"| {measure} |" in text, measure


def test_missing_toolchain_is_named(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No cached build and no cargo on PATH: the error names the toolchain and the source, nothing runs."""
    monkeypatch.setattr(compiled, "CACHE", tmp_path)
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(compiled.BuildError, match=r"needs the `cargo` toolchain on PATH .*kube_rs_widget"):
        compiled.KUBE_RS.build()
    assert not list(tmp_path.iterdir())


def test_absent_builds_are_listed_and_never_built_by_the_test(monkeypatch: pytest.MonkeyPatch, tmp_path: Path
                                                            ) -> None:
    """An empty cache: every compiled contestant is missing, and the skip names the build command."""
    monkeypatch.setattr(compiled, "CACHE", tmp_path)
    assert [c.binary for c in compiled.missing()] == ["controller-runtime-widget", "kube-rs-widget",
                                                     "controller-runtime-cache", "kube-rs-cache"]
    with pytest.raises(pytest.skip.Exception, match=r"run `python -m harness.bench.build` first"):
        _need_builds()
    assert not list(tmp_path.iterdir())


def test_build_cache_is_keyed_by_the_source(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A changed source file gives another cache path (so it is rebuilt); the same source, the same path."""
    monkeypatch.setattr(compiled, "HERE", tmp_path)
    program = compiled.Compiled("x", "go", "x-bin")
    (tmp_path / "x").mkdir()
    (tmp_path / "x" / "main.go").write_text("package main\n")
    first = program.path()
    assert program.path() == first
    (tmp_path / "x" / "main.go").write_text("package main // edited\n")
    assert program.path() != first and program.path().name == "x-bin"
