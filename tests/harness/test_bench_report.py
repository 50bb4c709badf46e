"""The benchmark report's judgement (harness/bench/report.py) and the profile breakdown (harness/bench/cpuprofile.py):
profiled runs are shown in their own section, never in the results or the targets (a profiler slows a
contestant down); throughput is judged at the sizes the targets name."""

from __future__ import annotations

import cProfile
import time
from pathlib import Path
from typing import Any

import orjson

import harness.bench
import kubeloop.client.transport
from harness.bench import report
from harness.bench.cpuprofile import breakdown, part_of


def test_self_time_is_charged_to_where_the_code_lives() -> None:
    site = "/usr/lib/python3.11/site-packages"
    assert part_of(kubeloop.client.transport.__file__, "request") == "kubeloop"
    assert part_of(f"{site}/aiohttp/client.py", "_request") == "aiohttp"
    assert part_of(f"{site}/kopf/_core/reactor/queueing.py", "worker") == "Kopf"
    ceiling = str(Path(harness.bench.__file__).resolve().parent / "contestants" / "ceiling.py")
    assert part_of(ceiling, "worker") == "contestant's own code"
    assert part_of("/home/me/kubeloop/kubeloop-fork/other.py", "f") != "kubeloop"  # by directory, not by name
    assert part_of("~", "<built-in method orjson.loads>") == "orjson (JSON)"
    assert part_of("~", "<method 'read' of '_ssl._SSLSocket' objects>") == "TLS and sockets"
    assert part_of("/usr/lib/python3.11/asyncio/events.py", "_run") == "asyncio event loop"
    # A module body is an import wherever the module lives.
    assert part_of(kubeloop.client.transport.__file__, "<module>") == "imports"
    assert part_of("/usr/lib/python3.11/json/decoder.py", "decode") == "other (stdlib, yaml, ...)"


def test_breakdown_of_a_real_profile_sums_to_its_total(tmp_path: Path) -> None:
    payload = orjson.dumps({"items": [{"metadata": {"name": f"w{i}"}} for i in range(2000)]})
    profiler = cProfile.Profile(time.process_time)
    profiler.enable()
    for _ in range(200):
        orjson.loads(payload)
    profiler.disable()
    out = tmp_path / "p.pstats"
    profiler.dump_stats(str(out))

    parts = breakdown(str(out))
    assert parts["orjson (JSON)"] > 0
    assert abs(sum(v for k, v in parts.items() if k != "total") - parts["total"]) < 1e-3


def _run(contestant: str, scenario: str, n: int, *, ops: float, cpu_ms: float, **extra: Any) -> dict[str, Any]:
    return {
        "contestant": contestant, "scenario": scenario, "n": n, "repeat": 1, "converged": True,
        "converged_count": n, "seconds": n / ops, "objects_per_s": ops, "p50_ms": None, "p95_ms": None,
        "p99_ms": None, "peak_rss_mib": 50.0, "cpu_s": cpu_ms * n / 1000, "cpu_ms_per_object": cpu_ms,
        "requests": {"PATCH widgets/status": n}, "writes": n, "writes_per_object": 1.0,
        "extra": {"first_converged_s": 0.5, **extra}, "error": None,
    }


def _data() -> dict[str, Any]:
    profile = {
        "kubeloop": {"kubeloop": 0.6, "aiohttp": 2.0, "imports": 0.5, "total": 3.1},
        "ceiling": {"contestant's own code": 0.2, "aiohttp": 1.8, "imports": 0.4, "total": 2.4},
    }
    return {
        "meta": {
            "date": "2026-11-21 20:00 UTC", "invocation": "python -m harness.bench",
            "machine": {"nproc": 2, "cpu": "x", "memory_gib": 1, "kernel": "k", "loadavg_start": "0.1 0.1 0.1"},
            "versions": {"kubernetes": "v1.35.4", "python": "3.11", "kubeloop": "0.1.0"},
            "options": {"n": [1000], "repeats": 1, "scenarios": ["backlog"], "contestants": ["kubeloop", "ceiling"]},
            "appended": [{
                "invocation": "python -m harness.bench --append --profile cprofile", "date": "d", "machine": {},
                "options": {"n": [1000], "repeats": 1, "scenarios": ["backlog"], "operators": [],
                            "startup_n": 0, "profile": "cprofile"},
            }],
        },
        "results": [
            _run("kubeloop", "backlog", 1000, ops=500, cpu_ms=0.8),
            _run("ceiling", "backlog", 1000, ops=520, cpu_ms=0.7),
            # Under the profiler: far slower, and must not count.
            _run("kubeloop", "backlog", 1000, ops=90, cpu_ms=3.1, profiled="cprofile", profile=profile["kubeloop"]),
            _run("ceiling", "backlog", 1000, ops=95, cpu_ms=2.4, profiled="cprofile", profile=profile["ceiling"]),
        ],
    }


def test_profiled_runs_are_shown_apart_and_never_judged() -> None:
    text = report.render(_data(), None)
    results, profiles = text.split("## Profiles")
    # The results and targets only know the unprofiled runs.
    assert "| 1,000 | kubeloop | 500 |" in results and "| 1,000 | kubeloop | 90 |" not in results
    assert "| backlog: objects/s ≥ 90% of ceiling | 500 (96%) | 520 | met |" in results
    assert "under cprofile (in Profiles only, not in the results)" in results
    # µs of CPU per object per part: 0.6 s / 1,000 objects = 600 µs.
    assert "| kubeloop | 600 | 0 |" in profiles
    assert "| aiohttp | 2,000 | 1,800 |" in profiles
    assert "| **total under cProfile** | 3,100 | 2,400 |" in profiles
    assert "| without a profiler (results above, median) | 800 | 700 |" in profiles
    assert "kubeloop spent 3,100 µs of CPU per object under the profiler against the ceiling's 2,400" in profiles
    assert "kubeloop +600, aiohttp +200, imports +100 µs" in profiles


def test_no_profile_section_without_profiled_runs() -> None:
    data = _data()
    data["results"] = data["results"][:2]
    assert "## Profiles" not in report.render(data, None)


def test_throughput_is_judged_at_the_sizes_the_issue_names_and_reported_beyond() -> None:
    data = _data()
    data["results"] = [
        _run("kubeloop", "backlog", 5000, ops=400, cpu_ms=0.5),
        _run("ceiling", "backlog", 5000, ops=500, cpu_ms=0.4),
        _run("kubeloop", "backlog", 20000, ops=400, cpu_ms=0.5),
        _run("ceiling", "backlog", 20000, ops=500, cpu_ms=0.4),
    ]
    text = report.render(data, None)
    assert "| 5,000 | backlog: objects/s ≥ 90% of ceiling | 400 (80%) | 500 | **missed** |" in text
    assert "| 20,000 | backlog: objects/s ≥ 90% of ceiling (report only) | 400 (80%) | 500 | reported |" in text
    # Per N: RSS, CPU and writes are judged (3 targets each); throughput only at 5,000.
    assert "- **kubeloop**: 6 of 7 targets met, 1 missed" in text


def test_compiled_section_shows_start_up_api_server_cpu_and_the_python_floor() -> None:
    """With the ceiling present, its ratio to kube-rs-16 is shown; start-up and API server CPU rows too."""
    from harness.bench import compare

    def run(contestant: str, scenario: str, cpu: float, apiserver: float) -> dict:
        return {"contestant": contestant, "scenario": scenario, "n": 1000, "repeat": 1, "converged": True,
                "error": None, "objects_per_s": 500.0, "seconds": 0.5, "p50_ms": None, "p99_ms": None,
                "peak_rss_mib": 40.0, "cpu_s": cpu, "cpu_ms_per_object": cpu, "requests": {"PATCH": 1000},
                "extra": {"apiserver_cpu_s": apiserver, "first_converged_s": 0.25, "tcp_peak": 2, "tcp_seen": 2}}

    results = [run(c, s, cpu, 2.0) for s in ("backlog", "startup")
               for c, cpu in (("kubeloop", 0.8), ("ceiling", 0.6), ("kube-rs-16", 0.2))]
    text = "\n".join(compare.section({"results": results}))
    assert "| measure | kubeloop | ceiling | kube-rs-16 | kubeloop ÷ kube-rs-16 | ceiling ÷ kube-rs-16 |" in text
    assert "| CPU s | 0.80 | 0.60 | 0.20 | 4.00× | 3.00× |" in text
    assert "| API server CPU s | 2.00 | 2.00 | 2.00 | 1.00× | 1.00× |" in text
    assert "#### startup, N = 1,000" in text and "| sentinel converged s (start-up with N cached) |" in text
    assert "| first converged s (start-up to first reconcile) | 0.25 |" in text
