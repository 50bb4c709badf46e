"""The scenarios. Each run starts the contestant as its own process, drives the workload, and
returns one ``RunResult`` per scenario measured.

- ``backlog``: N widgets exist, then the operator starts: time from process start until all converged.
- ``stream``: the operator is ready (a sentinel widget has converged); the loader creates N widgets
  as fast as it can; time from the first create until all converged, and per-object latency.
- ``update``: ``spec.value += 1`` on all N (same process, right after ``stream``).
- ``idle``: N converged widgets, nothing changes: CPU and API requests over ``idle_seconds``.
- ``startup``: N widgets exist *already converged* (the harness writes their status), then the
  operator starts: time until it converges a sentinel created right after start, and its RSS —
  the cost of a big cache. One namespace of N is shared by every start-up run (made once; each run
  deletes its sentinel); writes beyond the sentinel's would show in the run's writes.

Every run also records the API server's CPU seconds over its window (``extra["apiserver_cpu_s"]``,
read from /proc when the API server is a local process): the harness's own loader and watch are in
it too, the same for every contestant, so differences between contestants are theirs.

stream, update and idle share one operator process; backlog and startup get their own.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from harness.bench import apimetrics, cpuprofile
from harness.bench.contestants import Contestant
from harness.bench.procs import Sample, TreeSampler, tree_cpu_seconds
from harness.bench.tracker import Tracker
from harness.bench.workload import GROUP, Workload, names
from harness.common.processes import ChildProcess
from harness.common.stats import percentile
from kubeloop.client import Client

LIVE = ("stream", "update", "idle")
ALL = ("backlog", *LIVE, "startup")
SENTINEL = "bench-ready"


@dataclass
class RunResult:
    contestant: str
    scenario: str
    n: int
    repeat: int
    converged: bool = False
    converged_count: int = 0
    seconds: float | None = None
    objects_per_s: float | None = None
    p50_ms: float | None = None
    p95_ms: float | None = None
    p99_ms: float | None = None
    peak_rss_mib: float | None = None
    cpu_s: float | None = None
    cpu_ms_per_object: float | None = None
    requests: dict[str, int] = field(default_factory=dict)
    writes: int | None = None
    writes_per_object: float | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    error: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


class OperatorDied(RuntimeError):
    pass


class OperatorProcess(ChildProcess):
    """One contestant process, its output in a log file, its tree sampled from /proc."""

    def __init__(self, contestant: Contestant, kubeconfig: str, namespace: str, log_path: Path,
                 argv: list[str] | None = None) -> None:
        super().__init__(log_path)
        self.contestant = contestant
        self.argv = argv or contestant.command(kubeconfig, namespace)
        self.kubeconfig = kubeconfig
        self.sampler: TreeSampler | None = None
        self.profiler: str | None = None  # run under a profiler: its figures are not the contestant's own
        self.pstats: Path | None = None  # the cProfile output, once the process has exited

    async def start(self) -> float:
        """Starts the contestant; returns the moment just before (a backlog is timed from it)."""
        env = {**os.environ, "KUBECONFIG": self.kubeconfig, "PYTHONUNBUFFERED": "1"}
        started = await self.spawn(self.argv, env, header=f"$ {' '.join(self.argv)}\n")
        assert self.proc is not None
        self.sampler = TreeSampler(self.proc.pid)
        self.sampler.start()
        return started

    def sample(self) -> Sample:
        assert self.sampler is not None
        self.sampler.mark_tcp()  # a short run may end between two of the sampler's TCP looks
        return self.sampler.mark()

    def check_alive(self) -> None:
        if self.proc is not None and self.proc.returncode is not None:
            raise OperatorDied(f"{self.contestant.name} exited with code {self.proc.returncode}; "
                               f"end of {self.log_path}:\n{self.tail()}")

    async def stop(self, grace: float = 20.0) -> None:
        if self.sampler:
            await self.sampler.stop()
        await self.terminate(grace)


@dataclass
class Settings:
    idle_seconds: float = 60.0
    min_rate: float = 10.0  # objects/s below which a run is declared stuck (timeout = n / min_rate)
    min_timeout: float = 90.0
    ready_timeout: float = 180.0
    log_dir: Path = Path("/tmp")
    profile: str | None = None  # "pyinstrument" (wall clock) or "cprofile" (CPU clock): kubeloop contestants
    # run under it; the reports land in log_dir
    apiserver_pid: int | None = None  # a local kube-apiserver: its CPU is read around every run


class Session:
    """Runs scenarios for one (contestant, n, repeat) against one cluster."""

    def __init__(self, client: Client, workload: Workload, kubeconfig: str, settings: Settings) -> None:
        self.client, self.workload, self.kubeconfig, self.settings = client, workload, kubeconfig, settings

    def _timeout(self, n: int) -> float:
        return max(self.settings.min_timeout, n / self.settings.min_rate)

    def _process(self, contestant: Contestant, namespace: str, tag: str) -> OperatorProcess:
        log = self.settings.log_dir / f"{namespace}-{tag}.log"
        argv = contestant.command(self.kubeconfig, namespace)
        profiler, pstats = None, None
        if self.settings.profile == "pyinstrument" and contestant.name.startswith("kubeloop"):
            # python -m pyinstrument -r text -o OUT -m kubeloop.cli.main run ... (written on SIGTERM exit)
            out = self.settings.log_dir / f"{namespace}-{tag}.pyinstrument.txt"
            argv = [argv[0], "-m", "pyinstrument", "-r", "text", "-o", str(out), *argv[1:]]
            profiler = "pyinstrument"
        elif self.settings.profile == "cprofile" and contestant.build is None:  # every Python contestant
            pstats = self.settings.log_dir / f"{namespace}-{tag}.pstats"
            argv = [argv[0], str(Path(__file__).with_name("cpuprofile.py")), str(pstats), *argv[1:]]
            profiler = "cprofile"
        proc = OperatorProcess(contestant, self.kubeconfig, namespace, log, argv)
        proc.profiler, proc.pstats = profiler, pstats
        return proc

    @staticmethod
    def _profiled(result: RunResult, proc: OperatorProcess | None) -> None:
        """Marks a run made under a profiler (the report keeps it out of the results and targets) and
        stores the CPU profile's breakdown of a whole-process run (backlog, start-up) with it."""
        if proc is None or proc.profiler is None:
            return
        result.extra["profiled"] = proc.profiler
        if proc.pstats is not None and proc.pstats.exists() and result.scenario not in LIVE:
            result.extra["profile"] = cpuprofile.breakdown(str(proc.pstats))

    async def _wait(self, tracker: Tracker, proc: OperatorProcess, timeout: float) -> bool:
        """Waits for the tracker's round to converge; fails fast if the operator dies or the tracker's
        view of the widgets ends."""
        waiter = asyncio.ensure_future(tracker.wait(timeout))
        try:
            while not waiter.done():
                proc.check_alive()
                tracker.check()
                await asyncio.wait({waiter}, timeout=0.5)
            return waiter.result()
        finally:
            waiter.cancel()

    @contextlib.asynccontextmanager
    async def _window(self) -> AsyncIterator[dict[str, Any]]:
        """API request counters around a block: ``out["requests"]`` after it, and ``out["extra"]`` with
        the API server's CPU seconds in the block (when its process is known)."""
        out: dict[str, Any] = {"extra": {}}
        pid = self.settings.apiserver_pid
        cpu0 = tree_cpu_seconds(pid) if pid else None
        before, h_before = await apimetrics.scrape(self.client), self.workload.counter.snapshot()
        yield out
        after, h_after = await apimetrics.scrape(self.client), self.workload.counter.snapshot()
        out["requests"] = apimetrics.operator_requests(before, after, h_before, h_after, GROUP)
        if pid and cpu0:  # 0: the process is gone (restarted?): no figure rather than a wrong one
            cpu1 = tree_cpu_seconds(pid)
            if cpu1 >= cpu0:
                out["extra"]["apiserver_cpu_s"] = round(cpu1 - cpu0, 2)

    @staticmethod
    def _fill(result: RunResult, tracker: Tracker, n: int, t0: float, cpu: float, peak: float,
              requests: dict[str, int], changes: int) -> None:
        lat = tracker.latencies()
        result.converged_count = len(tracker.converged)
        result.converged = result.converged_count >= n
        last = tracker.last_converged()
        if last is not None and result.converged:
            result.seconds = last - t0
            result.objects_per_s = n / result.seconds if result.seconds > 0 else None
        result.p50_ms, result.p95_ms, result.p99_ms = percentiles_ms(lat)
        result.cpu_s = cpu
        result.cpu_ms_per_object = 1000 * cpu / n if n else None
        result.peak_rss_mib = peak
        result.requests = requests
        result.writes = apimetrics.writes(requests)
        result.writes_per_object = result.writes / changes if changes else None

    # --- backlog ---------------------------------------------------------------------------------

    async def backlog(self, contestant: Contestant, n: int, repeat: int) -> list[RunResult]:
        result = RunResult(contestant.name, "backlog", n, repeat)
        ns = await self.workload.new_namespace(f"{contestant.name}-{n}-backlog")
        proc: OperatorProcess | None = None
        tracker = Tracker(self.client, ns, self.workload.counter)
        try:
            values = {name: random.randint(1, 1_000_000) for name in names(n)}
            await self.workload.create(ns, values)
            await tracker.start()
            proc = self._process(contestant, ns, "backlog")
            async with self._window() as window:
                t0 = await proc.start()
                tracker.expect(values, started=t0)
                await self._wait(tracker, proc, self._timeout(n))
                sample = proc.sample()
            self._fill(result, tracker, n, t0, sample.cpu_s, sample.peak_rss_mib, window["requests"], n)
            result.extra.update(tcp_peak=sample.tcp_peak, tcp_seen=sample.tcp_seen, **window["extra"])
            result.extra["first_converged_s"] = min(tracker.converged.values(), default=t0) - t0
            result.extra["unconverged_after"] = len(await self.workload.unconverged(ns))
        except Exception as exc:
            result.error = f"{type(exc).__name__}: {exc}"
        finally:
            await tracker.stop()
            if proc:
                await proc.stop()
                self._profiled(result, proc)
            await self.workload.delete_namespace(ns)
        return [result]

    # --- stream, update, idle (one process) ----------------------------------------------------

    async def _burst(self, result: RunResult, tracker: Tracker, proc: OperatorProcess, values: dict[str, int],
                     load: Callable[[dict[str, int], Callable[[str, float], None]], Awaitable[None]]) -> None:
        """Times one burst of changes (stream: creates; update: patches) until all have converged."""
        n = len(values)
        s0 = proc.sample()
        async with self._window() as window:
            tracker.expect(values)
            t0 = time.monotonic()
            await load(values, tracker.mark_started)
            result.extra["load_s"] = time.monotonic() - t0
            await self._wait(tracker, proc, self._timeout(n))
            s1 = proc.sample()
        self._fill(result, tracker, n, t0, s1.cpu_s - s0.cpu_s, s1.peak_rss_mib, window["requests"], n)
        result.extra.update(tcp_peak=s1.tcp_peak, tcp_seen=s1.tcp_seen - s0.tcp_seen, **window["extra"])

    async def live(self, contestant: Contestant, n: int, repeat: int, scenarios: set[str]) -> list[RunResult]:
        results: list[RunResult] = []
        ns = await self.workload.new_namespace(f"{contestant.name}-{n}-live")
        proc = self._process(contestant, ns, "live")
        tracker = Tracker(self.client, ns, self.workload.counter)
        current: RunResult | None = None
        try:
            await tracker.start()
            t_start = await proc.start()
            tracker.expect({SENTINEL: 1})
            await self.workload.create(ns, {SENTINEL: 1})
            if not await self._wait(tracker, proc, self.settings.ready_timeout):
                raise TimeoutError(f"{contestant.name} did not converge the sentinel widget within "
                                   f"{self.settings.ready_timeout:.0f}s of starting")
            ready_s = tracker.converged[SENTINEL] - t_start
            await asyncio.sleep(1.0)  # let the sentinel's follow-up events settle out of the window

            values = {name: random.randint(1, 1_000_000) for name in names(n)}
            current = RunResult(contestant.name, "stream", n, repeat, extra={"ready_s": ready_s})
            await self._burst(current, tracker, proc, values,
                              lambda v, mark: self.workload.create(ns, v, on_created=mark))
            if "stream" in scenarios:
                results.append(current)
            if not current.converged:
                raise TimeoutError(f"stream: {current.converged_count}/{n} converged")

            if "update" in scenarios or "idle" in scenarios:
                await asyncio.sleep(1.0)
                values = {name: v + 1 for name, v in values.items()}
                current = RunResult(contestant.name, "update", n, repeat)
                await self._burst(current, tracker, proc, values,
                                  lambda v, mark: self.workload.set_values(ns, v, on_changed=mark))
                if "update" in scenarios:
                    results.append(current)

            if "idle" in scenarios:
                await asyncio.sleep(2.0)  # stragglers of the update round
                current = RunResult(contestant.name, "idle", n, repeat)
                s0 = proc.sample()
                async with self._window() as window:
                    await asyncio.sleep(self.settings.idle_seconds)
                    proc.check_alive()
                    s1 = proc.sample()
                cpu = s1.cpu_s - s0.cpu_s
                current.converged, current.converged_count = True, n
                current.seconds = self.settings.idle_seconds
                current.cpu_s = cpu
                current.peak_rss_mib = s1.peak_rss_mib
                current.requests = window["requests"]
                current.writes = apimetrics.writes(current.requests)
                current.extra["cpu_percent_of_core"] = 100 * cpu / self.settings.idle_seconds
                current.extra["rss_mib"] = s1.rss_mib
                current.extra.update(window["extra"])
                results.append(current)
            current = None
        except Exception as exc:
            if current is not None and current.scenario in scenarios:
                current.error = f"{type(exc).__name__}: {exc}"
                if current not in results:
                    results.append(current)
            elif not results or results[-1].error is None:
                failed = RunResult(contestant.name, next(s for s in LIVE if s in scenarios), n, repeat,
                                   error=f"{type(exc).__name__}: {exc}")
                results.append(failed)
        finally:
            await tracker.stop()
            await proc.stop()
            for r in results:
                self._profiled(r, proc)
            await self.workload.delete_namespace(ns)
        return results

    # --- startup with a big cache ----------------------------------------------------------------

    async def startup_namespace(self, n: int) -> str:
        """A namespace with ``n`` converged widgets, shared by every start-up run that follows: each
        contestant then starts against the same objects, and 50,000 of them are made once, not per run
        (the runs write nothing to them; each removes its sentinel)."""
        ns = await self.workload.new_namespace(f"startup-{n}")
        await self.workload.create(ns, {name: random.randint(1, 1_000_000) for name in names(n)}, with_status=True)
        return ns

    async def startup(self, contestant: Contestant, n: int, repeat: int, namespace: str | None = None
                      ) -> list[RunResult]:
        """``namespace``: one made by ``startup_namespace(n)`` (kept); None: a fresh one for this run."""
        result = RunResult(contestant.name, "startup", n, repeat)
        ns = namespace or await self.startup_namespace(n)
        proc = self._process(contestant, ns, f"startup-{contestant.name}-{repeat}")
        tracker = Tracker(self.client, ns, self.workload.counter)
        try:
            await tracker.start()
            async with self._window() as window:
                t0 = await proc.start()
                tracker.expect({SENTINEL: 1}, started=t0)
                await self.workload.create(ns, {SENTINEL: 1})
                ok = await self._wait(tracker, proc, self._timeout(n))
                result.converged = ok
                if ok:
                    result.seconds = tracker.converged[SENTINEL] - t0
                await asyncio.sleep(10.0)  # let it work through the cached objects (no writes needed)
                sample = proc.sample()
            result.converged_count = n if ok else 0
            result.cpu_s = sample.cpu_s
            result.cpu_ms_per_object = 1000 * sample.cpu_s / n
            result.peak_rss_mib = sample.peak_rss_mib
            result.extra["rss_mib"] = sample.rss_mib
            result.extra.update(tcp_peak=sample.tcp_peak, tcp_seen=sample.tcp_seen, **window["extra"])
            result.requests = window["requests"]
            result.writes = apimetrics.writes(result.requests)
        except Exception as exc:
            result.error = f"{type(exc).__name__}: {exc}"
        finally:
            await tracker.stop()
            await proc.stop()
            self._profiled(result, proc)
            if namespace:
                await self.workload.delete_widget(ns, SENTINEL)
            else:
                await self.workload.delete_namespace(ns)
        return [result]


def percentiles_ms(seconds: list[float]) -> tuple[float | None, float | None, float | None]:
    """p50, p95 and p99 of latencies in seconds, in milliseconds (None for no latencies)."""

    def ms(q: float) -> float | None:
        p = percentile(seconds, q)
        return None if p is None else 1000 * p

    return ms(50), ms(95), ms(99)
