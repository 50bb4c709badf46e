"""``python -m harness.bench --scale-out``: one kubeloop operator as 1, 2 and 4 replicas with ``--shards
auto`` on the same backlog, each replica its own process as in a cluster.

- A case: N widgets exist unconverged in a fresh namespace, then R replicas of the widget contestant
  (``harness/bench/contestants/kubeloop_widget.py``) start together with ``--shards auto`` and their
  Leases in that namespace. Timed from just before the first replica starts until the harness's own
  watch has seen every widget converged: ring formation and handoffs are part of the time, as they are
  for a real rollout.
- Per replica: peak RSS and CPU of its process tree (``procs.TreeSampler``), and the reconciles it did
  and the keys it owned when all had converged (its ``/metrics``); per case their sum, and objects/s.
  After the measurement, the split of the keys once the ring has settled (``keys_owned_settled``).
- Cases run in the order asked (1, 2, 4 by default), each repeat through all of them, so a noisy moment
  of a shared machine does not fall on one replica count only. Everything shares one API server: on a
  small machine it bounds the total, which is the point of reporting the per-replica cost separately.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import random
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.bench.contestants import HERE as CONTESTANTS_DIR
from harness.bench.procs import TreeSampler
from harness.bench.runner import machine, versions
from harness.bench.tracker import Tracker
from harness.bench.workload import Workload, names
from harness.common import prometheus
from harness.common.cluster import cluster_for
from harness.common.processes import ChildProcess, free_port, kubeloop_run
from harness.common.provenance import save_json
from kubeloop.client import Client
from kubeloop.envtest.versions import cache_dir

RESULTS = Path(__file__).resolve().parent / "results" / "scaleout.json"
TARGET = str(CONTESTANTS_DIR / "kubeloop_widget.py")
RECONCILED = "controller_runtime_reconcile_total"
KEYS_OWNED = "kubeloop_shard_keys_owned"


@dataclass
class ScaleOutOptions:
    n: int = 20_000
    replicas: list[int] = field(default_factory=lambda: [1, 2, 4])
    repeats: int = 1
    min_rate: float = 10.0  # objects/s under which a case counts as stuck (timeout = n / rate, >= 120 s)
    kubeconfig: str | None = None
    cluster_name: str = "bench"
    keep_cluster: bool = False
    # Beside the bench's other build and run output, under the kubeloop cache (not a fixed machine path).
    log_dir: Path = field(default_factory=lambda: cache_dir() / "bench" / "scaleout-logs")
    results: Path | None = RESULTS
    log: Callable[[str], None] = field(default=lambda m: print(m, file=sys.stderr, flush=True))


def add_flags(p: argparse.ArgumentParser) -> None:
    """The flags of this benchmark, on ``python -m harness.bench`` (``--n`` and ``--repeats`` are shared)."""
    p.add_argument("--scale-out", action="store_true",
                   help="run only the scale-out benchmark: 1, 2 and 4 replicas with --shards auto on one "
                        "backlog (--n, default 20000); results in harness/bench/results/scaleout.json")
    p.add_argument("--scale-out-replicas", default="1,2,4",
                   help="replica counts of the scale-out benchmark, comma-separated (default 1,2,4)")


class Replica(ChildProcess):
    """One ``kubeloop run --shards auto`` process, its tree sampled, its metrics on a known port."""

    def __init__(self, log_path: Path) -> None:
        super().__init__(log_path)
        self.metrics_port = free_port()
        self.sampler: TreeSampler | None = None

    async def start(self, kubeconfig: str, namespace: str) -> None:
        argv = kubeloop_run(TARGET, kubeconfig, "--namespace", namespace, "--shards", "auto",
                            "--leader-election-namespace", namespace, metrics_port=self.metrics_port)
        await self.spawn(argv, {**os.environ, "PYTHONUNBUFFERED": "1"}, header=f"$ {' '.join(argv)}\n")
        assert self.proc is not None
        self.sampler = TreeSampler(self.proc.pid)
        self.sampler.start()

    def check_alive(self) -> None:
        if self.proc is not None and self.proc.returncode is not None:
            raise RuntimeError(f"a replica exited with code {self.proc.returncode}; see {self.log_path}")

    async def metrics(self) -> dict[str, int]:
        """The reconciles it did and the keys it owns now (summed over controllers), from its ``/metrics``."""
        reader, writer = await asyncio.open_connection("127.0.0.1", self.metrics_port)
        writer.write(b"GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
        text = (await reader.read()).decode(errors="replace")
        writer.close()
        return {name: int(prometheus.total(text, name)) for name in (RECONCILED, KEYS_OWNED)}

    async def stop(self) -> None:
        if self.sampler:
            await self.sampler.stop()
        await self.terminate(20.0)


async def case(client: Client, workload: Workload, kubeconfig: str, n: int, replicas: int, repeat: int,
               options: ScaleOutOptions) -> dict[str, Any]:
    """One backlog of ``n`` converged by ``replicas`` sharded replicas; the figures as a dict."""
    result: dict[str, Any] = {"n": n, "replicas": replicas, "repeat": repeat, "converged": False,
                              "converged_count": 0, "seconds": None, "objects_per_s": None, "error": None}
    ns = await workload.new_namespace(f"scaleout-{replicas}r-{n}")
    tracker = Tracker(client, ns, workload.counter)
    procs = [Replica(options.log_dir / f"{ns}-r{i}.log") for i in range(replicas)]
    try:
        values = {name: random.randint(1, 1_000_000) for name in names(n)}
        await workload.create(ns, values)
        await tracker.start()
        t0 = time.monotonic()
        tracker.expect(values, started=t0)
        for proc in procs:
            await proc.start(kubeconfig, ns)
        waiter = asyncio.ensure_future(tracker.wait(max(120.0, n / options.min_rate)))
        while not waiter.done():
            for proc in procs:
                proc.check_alive()
            await asyncio.wait({waiter}, timeout=0.5)
        done = waiter.result()
        result["converged_count"] = len(tracker.converged)
        result["converged"] = done and len(tracker.converged) >= n
        last = tracker.last_converged()
        if result["converged"] and last is not None:
            result["seconds"] = round(last - t0, 2)
            result["objects_per_s"] = round(n / (last - t0), 1)
        # A reconcile is counted after its status write, which is what convergence sees: let the last be counted.
        await asyncio.sleep(1.0)
        result["per_replica"] = [await _figures(proc) for proc in procs]
        result["sum"] = {k: round(sum(r[k] for r in result["per_replica"]), 1)
                         for k in ("peak_rss_mib", "cpu_s", "reconciles")}
        result["unconverged_after"] = len(await workload.unconverged(ns))
        result["keys_owned_settled"] = await _settled_split(procs, n)
    except Exception as exc:
        result["error"] = f"{type(exc).__name__}: {exc}"
    finally:
        await tracker.stop()
        for proc in procs:
            await proc.stop()
        await workload.delete_namespace(ns)
    return result


async def _figures(proc: Replica) -> dict[str, Any]:
    """One replica's figures at convergence: RSS and CPU of its tree, and what its /metrics says."""
    assert proc.sampler is not None
    sample = proc.sampler.mark()
    scraped = await proc.metrics()  # an operator that cannot answer now is an error of the case
    return {"peak_rss_mib": round(sample.peak_rss_mib, 1), "cpu_s": round(sample.cpu_s, 2),
            "reconciles": scraped[RECONCILED], "keys_owned": scraped[KEYS_OWNED]}


async def _settled_split(procs: list[Replica], n: int, timeout: float = 30.0) -> list[int] | None:
    """Keys owned per replica once the ring has settled (every replica owns some, together all ``n``),
    read after the measurement; None if it did not settle within ``timeout`` (a replica starting late
    joins after the others converged everything, so the split at convergence may still be moving)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError):
            owned = [(await proc.metrics())[KEYS_OWNED] for proc in procs]
            if sum(owned) == n and min(owned) > 0:
                return owned
        await asyncio.sleep(0.5)
    return None


async def run(options: ScaleOutOptions) -> dict[str, Any]:
    """Every case, every repeat; returns ``{"meta", "cases"}`` (saved to ``options.results`` after each)."""
    if options.n < 1 or not options.replicas or min(options.replicas) < 1:
        raise SystemExit("--n must be >= 1 and --scale-out-replicas a list of counts >= 1 (e.g. 1,2,4)")
    options.log_dir.mkdir(parents=True, exist_ok=True)
    options.log(f"replica logs in {options.log_dir}")
    async with cluster_for(options.kubeconfig, options.cluster_name, keep=options.keep_cluster,
                           log=options.log, nodes=1) as (cluster, _own):
        async with await Client.from_kubeconfig(str(cluster.kubeconfig), qps=0) as client:
            workload = Workload(client)
            await workload.install_crd()
            began = time.monotonic()
            data: dict[str, Any] = {"meta": {"n": options.n, "replicas": options.replicas,
                                             "repeats": options.repeats, "machine": machine(),
                                             "versions": await versions(client)}, "cases": []}
            for repeat in range(1, options.repeats + 1):
                for count in options.replicas:
                    options.log(f"scale-out: {count} replica(s), n={options.n}, repeat {repeat}")
                    data["cases"].append(await case(client, workload, str(cluster.kubeconfig), options.n,
                                                    count, repeat, options))
                    options.log("  " + line(data["cases"][-1]))
                    if options.results:
                        save_json(data, options.results)
            data["meta"]["duration_s"] = round(time.monotonic() - began)
            data["meta"]["machine"]["loadavg_end"] = " ".join(Path("/proc/loadavg").read_text().split()[:3])
    if options.results:
        save_json(data, options.results)
    return data


def line(c: dict[str, Any]) -> str:
    if c["error"]:
        return f"{c['replicas']} replica(s): ERROR {c['error'].splitlines()[0]}"
    each = ", ".join(f"{r['peak_rss_mib']:.0f} MiB/{r['cpu_s']:.1f}s/{r['reconciles']}"
                     for r in c.get("per_replica", []))
    rate = f"{c['objects_per_s']:.0f} obj/s in {c['seconds']:.1f}s" if c["objects_per_s"] else "not converged"
    return (f"{c['replicas']} replica(s): {rate} ({c['converged_count']}/{c['n']}); per replica "
            f"rss/cpu/reconciles: {each}")


def main(args: argparse.Namespace) -> int:
    """Entry from ``python -m harness.bench --scale-out``."""
    try:
        replicas = [int(v) for v in args.scale_out_replicas.split(",") if v.strip()]
    except ValueError:
        raise SystemExit(f"--scale-out-replicas {args.scale_out_replicas!r}: give counts like 1,2,4") from None
    if args.n is not None and len(args.n) != 1:
        raise SystemExit("--scale-out takes one object count: --n 20000")
    from harness.bench.cli import DEFAULT_RESULTS

    options = ScaleOutOptions(n=args.n[0] if args.n else 20_000, replicas=replicas, repeats=args.repeats or 1,
                              kubeconfig=args.kubeconfig, cluster_name=args.cluster_name,
                              keep_cluster=args.keep_cluster, log_dir=args.log_dir or ScaleOutOptions().log_dir,
                              results=RESULTS if args.results == DEFAULT_RESULTS else args.results)
    data = asyncio.run(run(options))
    for c in data["cases"]:
        print(line(c))
    return 0 if all(c["converged"] for c in data["cases"]) else 1
