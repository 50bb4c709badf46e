"""Runs the whole benchmark: cluster, CRD, interleaved contestants, repeats; saves raw results."""

from __future__ import annotations

import compileall
import dataclasses
import datetime as dt
import json
import os
import platform
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.bench import operators, procs, scenarios
from harness.bench.contestants import CONTESTANTS, Contestant
from harness.bench.contestants.compiled import BuildError
from harness.bench.scenarios import RunResult, Session, Settings
from harness.bench.workload import LABEL, Workload
from harness.common.cluster import cluster_for
from harness.common.provenance import REPO, dist_version, git_revision, save_json, without_home
from kubeloop.client import Client

DEFAULT_CONTESTANTS = ("kubeloop", "kopf", "ceiling")


@dataclass
class Options:
    n: list[int] = field(default_factory=lambda: [1000, 5000])
    repeats: int = 3
    scenarios: list[str] = field(default_factory=lambda: ["backlog", "stream", "update", "idle"])
    contestants: list[str] = field(default_factory=lambda: list(DEFAULT_CONTESTANTS))
    idle_seconds: float = 60.0
    startup_n: int = 50_000
    operators: list[str] = field(default_factory=list)  # bundled-operator scenarios (harness.bench.operators)
    operator_n: int | None = None  # overrides each operator scenario's object count (quick runs)
    kubeconfig: str | None = None  # an existing cluster; None = start LocalCluster(cluster_name)
    cluster_name: str = "bench"
    keep_cluster: bool = False
    loader_concurrency: int = 32
    min_rate: float = 10.0
    profile: str | None = None  # pyinstrument | cprofile
    log_dir: Path | None = None
    results: Path | None = None  # raw results (JSON), rewritten after every run
    append: bool = False  # add to the results already in ``results`` (e.g. the --scale part later)
    invocation: str = ""
    log: Any = None  # callable(str) for progress lines


def _say(options: Options, msg: str) -> None:
    (options.log or (lambda m: print(m, file=sys.stderr, flush=True)))(msg)


def machine() -> dict[str, Any]:
    mem_kib = 0
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemTotal:"):
            mem_kib = int(line.split()[1])
    cpu = next(
        (
            line.split(":", 1)[1].strip()
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if line.startswith("model name")
        ),
        platform.processor(),
    )
    return {
        "nproc": os.cpu_count(),
        "memory_gib": round(mem_kib / 1024 / 1024, 1),
        "cpu": cpu,
        "kernel": platform.release(),
        "loadavg_start": _loadavg(),
    }


def _loadavg() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


async def versions(client: Client) -> dict[str, Any]:
    import kubeloop

    server = await client.transport.request("GET", "/version")
    return {
        "kubernetes": server.get("gitVersion"),
        "python": platform.python_version(),
        "kubeloop": f"{kubeloop.__version__} ({git_revision()})",
        "kopf": dist_version("kopf"),
        "aiohttp": dist_version("aiohttp"),
        "orjson": dist_version("orjson"),
    }


def check_contestants(names: list[str]) -> list[Contestant]:
    out = []
    for name in names:
        if name not in CONTESTANTS:
            raise SystemExit(f"unknown contestant {name!r}; known: {', '.join(CONTESTANTS)}")
        c = CONTESTANTS[name]
        if c.needs:
            try:
                __import__(c.needs)
            except ImportError:
                raise SystemExit(f"contestant {name} needs {c.needs}: pip install -e '.[bench]'") from None
        if c.build:  # compiled: build now (minutes, the first time), not inside a timed run
            try:
                c.build.build()
            except BuildError as e:
                raise SystemExit(f"contestant {name}: {e}") from None
        out.append(c)
    return out


def compile_bytecode(dirs: list[Path] | None = None) -> list[str]:
    """Byte-compiles kubeloop and the contestants' sources into their ``__pycache__``, as pip does when it
    installs a package (and so in every operator image). A machine that forbids Python to write bytecode
    (``PYTHONDONTWRITEBYTECODE=1``, as this one does) would otherwise have every contestant start compile
    kubeloop's ~90 modules again from source: ~0.05 s of CPU and a fifth of its import instructions, a
    cost no installed operator pays. ``dirs``: kubeloop's package and the contestants' directory unless
    given. Returns the directories compiled (for the report)."""
    import kubeloop

    dirs = dirs or [Path(kubeloop.__file__).resolve().parent, Path(__file__).resolve().parent / "contestants"]
    for d in dirs:
        if not compileall.compile_dir(str(d), quiet=1):
            raise SystemExit(f"byte-compiling {d} failed (a syntax error?); see the output above")
    return [str(d.relative_to(REPO)) if d.is_relative_to(REPO) else without_home(str(d)) for d in dirs]


async def run(options: Options) -> dict[str, Any]:
    """Runs everything asked for and returns ``{"meta": ..., "results": [...]}`` (also saved as JSON)."""
    contestants = check_contestants(options.contestants)
    op_scenarios = operators.selected(options.operators) if options.operators else []
    if options.operator_n:
        op_scenarios = [dataclasses.replace(s, n=options.operator_n) for s in op_scenarios]
    unknown = set(options.scenarios) - set(scenarios.ALL)
    if unknown:
        raise SystemExit(f"unknown scenarios {sorted(unknown)}; known: {', '.join(scenarios.ALL)}")
    log_dir = options.log_dir or Path(tempfile.mkdtemp(prefix="kubeloop-bench-"))
    log_dir.mkdir(parents=True, exist_ok=True)
    _say(options, f"operator logs in {log_dir}")
    async with cluster_for(options.kubeconfig, options.cluster_name, keep=options.keep_cluster,
                           log=lambda m: _say(options, m), nodes=1) as (cluster, own):
        client = await Client.from_kubeconfig(str(cluster.kubeconfig), qps=0)
        try:
            return await _run_on(client, cluster, own, options, contestants, op_scenarios, log_dir)
        finally:
            await client.close()


async def _run_on(client: Client, cluster: Any, own: bool, options: Options, contestants: list[Contestant],
                  op_scenarios: list[operators.OperatorScenario], log_dir: Path) -> dict[str, Any]:
    workload = Workload(client, options.loader_concurrency)
    await workload.install_crd()
    meta = await _meta(client, cluster, own, options, contestants, op_scenarios)
    meta["bytecode"] = f"compiled before the runs (as pip does at install): {', '.join(compile_bytecode())}"
    data: dict[str, Any] = {"meta": meta, "results": []}
    if options.append and options.results and options.results.exists():
        data = json.loads(options.results.read_text())
        if data["meta"]:  # the first run's meta stays the report's header
            data["meta"].setdefault("appended", []).append(meta)
            data["meta"]["contestants"] = {**data["meta"].get("contestants", {}), **meta["contestants"]}
        else:
            data["meta"] = meta
    pid = _apiserver_pid(client)
    meta["apiserver_cpu"] = (f"measured: kube-apiserver pid {pid}" if pid else "not measured: the API server "
                             "is not a process of this machine visible to this user")
    settings = Settings(idle_seconds=options.idle_seconds, min_rate=options.min_rate, log_dir=log_dir,
                        profile=options.profile, apiserver_pid=pid)
    session = Session(client, workload, str(cluster.kubeconfig), settings)

    def record(results: list[RunResult]) -> None:
        for r in results:
            data["results"].append(r.as_dict())
            _say(options, "  " + line(r))
        if options.results:
            save_json(data, options.results)

    began = time.monotonic()
    await _measure(session, options, contestants, op_scenarios, record)
    meta["machine"]["loadavg_end"] = _loadavg()
    meta["duration_s"] = round(time.monotonic() - began)
    if options.results:
        save_json(data, options.results)
    return data


def _apiserver_pid(client: Client) -> int | None:
    """The local process serving the client's API server port (None for a remote server)."""
    host, _, port = client.transport.host.rpartition(":")
    if host.strip("[]") not in ("127.0.0.1", "localhost", "::1") or not port.isdigit():
        return None
    return procs.listener_pid(int(port))


async def _meta(client: Client, cluster: Any, own: bool, options: Options, contestants: list[Contestant],
                op_scenarios: list[operators.OperatorScenario]) -> dict[str, Any]:
    """What the saved results say about this run, and a warning if another harness shares the cluster."""
    # The API server's request counters have no namespace label: a second harness on the same
    # cluster would be counted as this run's operators. Its namespaces carry our label.
    others = [ns["metadata"]["name"] for ns in (await client.list("namespaces", label_selector=LABEL))["items"]]
    if others:
        _say(options, f"WARNING: other benchmark namespaces exist ({', '.join(others[:5])}): another harness "
                      "may be running on this cluster, and its requests would be counted here")
    return {
        "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "invocation": options.invocation,
        "machine": machine(),
        "versions": await versions(client),
        "cluster": f"LocalCluster {options.cluster_name}" if own
        else f"existing ({without_home(str(cluster.kubeconfig))})",
        "options": {
            "n": options.n,
            "repeats": options.repeats,
            "scenarios": options.scenarios,
            "operators": [s.name for s in op_scenarios],
            "contestants": options.contestants,
            "idle_seconds": options.idle_seconds,
            "startup_n": options.startup_n,
            "loader_concurrency": options.loader_concurrency,
            "profile": options.profile,
        },
        "contestants": {c.name: c.description for c in contestants},
        "warnings": [f"benchmark namespaces of another run existed at start: {', '.join(others[:5])}"]
        if others else [],
    }


async def _measure(session: Session, options: Options, contestants: list[Contestant],
                   op_scenarios: list[operators.OperatorScenario], record: Callable[[list[RunResult]], None]) -> None:
    """Every run asked for: contestants interleaved (A B C A B C ...) within each size and repeat."""
    began = time.monotonic()

    def say(what: str) -> None:
        _say(options, f"[{time.monotonic() - began:6.0f}s] {what}")

    live = {s for s in options.scenarios if s in scenarios.LIVE}
    for n in options.n:
        for repeat in range(1, options.repeats + 1):
            for c in contestants:
                say(f"{c.name} n={n} repeat {repeat}")
                if "backlog" in options.scenarios:
                    record(await session.backlog(c, n, repeat))
                if live:
                    record(await session.live(c, n, repeat, live))
    if "startup" in options.scenarios:
        say(f"startup: creating {options.startup_n:,} converged widgets (shared by every start-up run)")
        shared = await session.startup_namespace(options.startup_n)
        try:
            for repeat in range(1, options.repeats + 1):
                for c in contestants:
                    say(f"{c.name} startup n={options.startup_n} repeat {repeat}")
                    record(await session.startup(c, options.startup_n, repeat, shared))
        finally:
            await session.workload.delete_namespace(shared)
    for repeat in range(1, options.repeats + 1):
        for op in op_scenarios:
            say(f"operator {op.name} n={op.n} repeat {repeat}")
            record([await operators.run_operator(session, op, repeat)])


def line(r: RunResult) -> str:
    if r.error:
        return f"{r.contestant:<10} {r.scenario:<8} n={r.n:<6} ERROR {r.error.splitlines()[0]}"
    rate = f"{r.objects_per_s:7.1f} obj/s" if r.objects_per_s else " " * 13
    p99 = f" p99 {r.p99_ms:7.0f} ms" if r.p99_ms is not None and r.scenario in ("stream", "update") else ""
    extra = ""
    if r.scenario == "idle":
        extra = f" cpu {r.extra.get('cpu_percent_of_core', 0):.2f}% of a core"
    if r.scenario == "startup" and r.seconds is not None:
        extra = f" ready in {r.seconds:.1f}s"
    wpo = (
        f" writes/obj {r.writes_per_object:.2f}" if r.writes_per_object is not None else f" writes {r.writes}"
    )
    if r.extra.get("apiserver_cpu_s") is not None:
        extra += f" apiserver cpu {r.extra['apiserver_cpu_s']:.1f}s"
    return (
        f"{r.contestant:<10} {r.scenario:<8} n={r.n:<6} {rate}{p99} rss {r.peak_rss_mib or 0:6.0f} MiB "
        f"cpu {r.cpu_s or 0:6.1f}s{wpo}{extra}"
        + ("" if r.converged else f" NOT CONVERGED ({r.converged_count}/{r.n})")
    )
