"""The side-by-side: kubeloop against the compiled frameworks, per object, with ratios.

- One table per scenario and N: a row per measure, a column per contestant present, then the ratios
  kubeloop ÷ controller-runtime and kubeloop ÷ kube-rs-16 (same concurrency as kubeloop's default),
  and, when the framework-free Python loop ran too, ceiling ÷ kube-rs-16.
- Every cell is the median of the repeats with the range (worst and best) beside it; the ratios are of
  medians. Nothing is shown for a contestant that did not run.
- Per object: CPU ms, API requests (the API server's count, watches excluded) and TCP connections
  newly seen in the run's window by the harness's sampler: a lower bound), and the peak open at once.
- The API server's CPU seconds over each run's window (the harness's loader and watch included, the
  same for everyone), and per object.
- Start-up: backlog's "first converged s" (process start to the first widget converged: imports,
  connection, cache sync, one reconcile) and the startup scenario (N widgets already converged and
  cached before a sentinel is reconciled: time, peak RSS, CPU).
- "Memory per 10,000 cached objects": the backlog's peak RSS grows with N; the slope between the
  smallest and largest N run, scaled to 10,000, is what each cached object costs (the fixed cost of
  the runtime cancels out).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from harness.bench.report import R, fmt, group, stat

COMPILED = ("controller-runtime", "kube-rs", "kube-rs-16")
SCENARIOS = ("backlog", "stream", "update", "startup")


def _requests(r: R) -> float | None:
    return sum(r["requests"].values()) / r["n"] if r["n"] else None


def _extra(key: str) -> Callable[[R], float | None]:
    return lambda r: r["extra"].get(key)


def _per_object(key: str) -> Callable[[R], float | None]:
    return lambda r: 1000 * r["extra"][key] / r["n"] if r["extra"].get(key) is not None and r["n"] else None


def _conns(r: R) -> float | None:
    seen = r["extra"].get("tcp_seen")
    return seen / r["n"] if seen is not None and r["n"] else None


ANY = ("backlog", "stream", "update", "startup")
MEASURES: list[tuple[str, Callable[[R], float | None], int, tuple[str, ...]]] = [
    # (label, value of one run, digits, the scenarios it is shown for)
    ("objects/s", lambda r: r["objects_per_s"], 0, ("backlog", "stream", "update")),
    # A backlog's latency is its duration (every object waited from the start): no p50/p99 there.
    ("p50 ms", lambda r: r["p50_ms"], 0, ("stream", "update")),
    ("p99 ms", lambda r: r["p99_ms"], 0, ("stream", "update")),
    ("first converged s (start-up to first reconcile)", _extra("first_converged_s"), 2, ("backlog",)),
    ("sentinel converged s (start-up with N cached)", lambda r: r["seconds"], 2, ("startup",)),
    ("peak RSS MiB", lambda r: r["peak_rss_mib"], 0, ANY),
    ("CPU s", lambda r: r["cpu_s"], 2, ANY),
    ("CPU ms/object", lambda r: r["cpu_ms_per_object"], 3, ANY),
    ("API requests/object", _requests, 2, ANY),
    ("TCP connections, peak open", _extra("tcp_peak"), 0, ANY),
    ("new TCP connections/object (seen)", _conns, 3, ANY),
    ("API server CPU s", _extra("apiserver_cpu_s"), 2, ANY),
    ("API server CPU ms/object", _per_object("apiserver_cpu_s"), 3, ANY),
]


def _ratio(a: tuple[float, float, float] | None, b: tuple[float, float, float] | None) -> str:
    if a is None or b is None or not b[0]:
        return "–"
    return f"{a[0] / b[0]:.2f}×"


# The ratios shown when both sides ran: kubeloop against each reference, and the framework-free Python
# loop (the ceiling, when it ran) against kube-rs at the same concurrency: what Python on aiohttp costs
# before any framework code.
RATIOS = (("kubeloop", "controller-runtime"), ("kubeloop", "kube-rs-16"), ("ceiling", "kube-rs-16"))


def _table(g: dict[tuple[str, int, str], list[R]], scenario: str, n: int, names: list[str]) -> list[str]:
    head = ["measure", *names]
    refs = [(a, b) for a, b in RATIOS if a in names and b in names]
    head += [f"{a} ÷ {b}" for a, b in refs]
    out = [f"#### {scenario}, N = {n:,}", "", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for label, get, digits, shown in MEASURES:
        if scenario not in shown:
            continue
        stats = {c: stat(g.get((scenario, n, c), []), get) for c in names}
        if all(s is None for s in stats.values()):
            continue
        row = [label, *(fmt(stats[c], digits) for c in names)]
        row += [_ratio(stats[a], stats[b]) for a, b in refs]
        out.append("| " + " | ".join(row) + " |")
    return [*out, ""]


def memory_per_10k(g: dict[tuple[str, int, str], list[R]], names: list[str], ns: list[int]) -> list[str]:
    """Peak RSS slope of the backlog between the smallest and largest N, per 10,000 objects."""
    if len(ns) < 2:
        return []
    lo, hi = ns[0], ns[-1]
    row = [f"memory per 10,000 cached objects, MiB (backlog peak RSS, N {lo:,}→{hi:,})"]
    for c in names:
        a = stat(g.get(("backlog", lo, c), []), lambda r: r["peak_rss_mib"])
        b = stat(g.get(("backlog", hi, c), []), lambda r: r["peak_rss_mib"])
        row.append("–" if a is None or b is None else f"{(b[0] - a[0]) * 10_000 / (hi - lo):.1f}")
    return ["| measure | " + " | ".join(names) + " |", "|" + "---|" * (len(names) + 1),
            "| " + " | ".join(row) + " |", ""]


def section(data: dict[str, Any]) -> list[str]:
    """The "Compiled frameworks" section of the report, or nothing if none of them ran."""
    present = {r["contestant"] for r in data["results"]}
    if not present & set(COMPILED):
        return []
    names = [c for c in ("kubeloop", "ceiling", *COMPILED) if c in present]
    g = group(data["results"])
    ns = sorted({r["n"] for r in data["results"] if r["scenario"] == "backlog" and r["contestant"] in names})
    out = ["## Against the compiled frameworks", "",
           "Median of the repeats (worst–best in brackets); ratios are of medians. Requests: the API "
           "server's count (watches excluded). New TCP connections: those the sampler saw (every 0.5 s and "
           "at the end) that were not open before the run's window, a lower bound.", ""]
    for scenario in SCENARIOS:
        for n in sorted({k[1] for k in g if k[0] == scenario}):
            if any((scenario, n, c) in g for c in names):
                out += _table(g, scenario, n, names)
    return out + memory_per_10k(g, names, ns)
