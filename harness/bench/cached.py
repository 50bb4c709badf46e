"""``python -m harness.bench --cached``: what caching realistic objects costs kubeloop, controller-runtime and
kube-rs, side by side on the local control plane.

- The objects (harness/bench/objmem.py's, as an API server holds them): Pods bound to a kwok node, which
  reports them running as a kubelet would (status, conditions, IPs), each with a controller reference
  (to a ConfigMap per 50 Pods: a ReplicaSet would be reconciled by kube-controller-manager); ConfigMaps
  of 1, 4 and 32 KiB. One namespace per kind, topped up to each size in turn.
- The contestants are cache holders, each written as its framework documents, managedFields dropped
  from the cache (``contestants/kubeloop_cache.py``, ``controller_runtime_cache/``, ``kube_rs_cache/``):
  a controller for the kind whose reconcile only counts. Each runs alone, in its own process, in a
  rotating order per size.
- Per run: start-up to the first reconcile and to the last of the N; RSS once synced and settled, the
  peak; then two paces of events, each a label patch of distinct objects: a **burst** (as fast as 16
  requests in flight allow) and a **trickle** (a fixed rate, so that events arrive one by one); CPU per
  event of each, from the process's CPU time between the first patch and the last reconcile (plus the
  second its report takes): in 10 ms ticks (``utime + stime``), in nanoseconds (schedstat), and the latter
  less the program's idle CPU over the same window (its rate measured over ``idle_s`` before the paces).
- Per object: (RSS synced − RSS of the same program on an empty namespace) ÷ N.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.bench import objmem
from harness.bench.contestants import HERE as CONTESTANTS_DIR
from harness.bench.contestants.compiled import CONTROLLER_RUNTIME_CACHE, KUBE_RS_CACHE, crate_version, go_module_version
from harness.bench.procs import TreeSampler, tree_cpu_ns
from harness.bench.runner import machine, versions
from harness.common.cluster import cluster_for
from harness.common.concurrency import bounded
from harness.common.processes import ChildProcess, kubeloop_run
from harness.common.provenance import save_json
from kubeloop.client import Client
from kubeloop.envtest.versions import cache_dir

RESULTS = Path(__file__).resolve().parent / "results" / "cached.json"
KINDS = ("pod", "configmap-1k", "configmap-4k", "configmap-32k")
CONTESTANTS = ("kubeloop", "controller-runtime", "kube-rs")
NODE = "kwok-node-0"
PODS_PER_OWNER = 50
TOUCH = "bench.example.com/touch"
# etcd's default quota is 2 GiB: 32 KiB ConfigMaps stop at 20,000 (640 MiB, with their history below it).
MAX_N = {"configmap-32k": 20_000}
REPORTED = re.compile(r"^reconciled (\d+)$", re.M)
FIRST = re.compile(r"^first$", re.M)


@dataclass
class CachedOptions:
    n: list[int] = field(default_factory=lambda: [10_000])
    kinds: list[str] = field(default_factory=lambda: list(KINDS))
    contestants: list[str] = field(default_factory=lambda: list(CONTESTANTS))
    burst: int = 2_000  # events of the burst (at most N)
    trickle: int = 300  # events of the trickle (at most N)
    trickle_rate: float = 50.0  # events/s of the trickle
    idle_s: float = 5.0  # the idle CPU rate is measured over this window before the paces
    settle_s: float = 5.0
    kubeconfig: str | None = None
    cluster_name: str = "bench"
    keep_cluster: bool = False
    log_dir: Path = field(default_factory=lambda: cache_dir() / "bench" / "cached-logs")
    results: Path | None = RESULTS
    log: Callable[[str], None] = print


def add_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--cached", action="store_true",
                   help="memory, start-up and CPU per event of kubeloop, controller-runtime and kube-rs caching "
                        "realistic Pods and ConfigMaps (harness/bench/cached.py; --n sizes, default 10000)")
    p.add_argument("--cached-kinds", default=",".join(KINDS),
                   help=f"kinds of the --cached benchmark, of {','.join(KINDS)}")
    p.add_argument("--cached-trickle", type=int, default=300, help="events of the trickle (default 300)")
    p.add_argument("--cached-trickle-rate", type=float, default=50.0, help="events/s of the trickle (default 50)")


def _kind_resource(kind: str) -> str:
    return "pods" if kind == "pod" else "configmaps"


def _pod(i: int, owners: dict[int, str]) -> dict[str, Any]:
    """objmem's Pod as a client sends it: bound to the kwok node, owned by a ConfigMap; kwok writes status."""
    obj = objmem.pod(i)
    meta = obj["metadata"]
    group = i // PODS_PER_OWNER
    meta["ownerReferences"] = [{"apiVersion": "v1", "kind": "ConfigMap", "name": f"owner-{group:05d}",
                                "uid": owners[group], "controller": True, "blockOwnerDeletion": True}]
    for key in ("uid", "resourceVersion", "creationTimestamp", "managedFields", "namespace", "generateName"):
        meta.pop(key, None)
    obj["spec"]["nodeName"] = NODE
    del obj["status"]
    return obj


def _configmap(kind: str, i: int) -> dict[str, Any]:
    obj = objmem.MAKERS[kind](i)
    for key in ("uid", "resourceVersion", "creationTimestamp", "managedFields", "namespace"):
        obj["metadata"].pop(key, None)
    return obj


class Objects:
    """One kind's namespace, topped up to a size; the pods' owner ConfigMaps made as needed."""

    def __init__(self, client: Client, kind: str, namespace: str) -> None:
        self.client, self.kind, self.namespace = client, kind, namespace
        self.made = 0
        self.owners: dict[int, str] = {}

    async def top_up(self, n: int) -> None:
        if self.kind == "pod":
            async def owner(group: int) -> None:
                made = await self.client.create({"apiVersion": "v1", "kind": "ConfigMap",
                                                 "metadata": {"name": f"owner-{group:05d}"}}, self.namespace)
                self.owners[group] = made["metadata"]["uid"]
            await bounded([g for g in range((n + PODS_PER_OWNER - 1) // PODS_PER_OWNER) if g not in self.owners],
                          owner, 16)

        async def one(i: int) -> None:
            body = _pod(i, self.owners) if self.kind == "pod" else _configmap(self.kind, i)
            await self.client.create(body, self.namespace)

        await bounded(range(self.made, n), one, 32)
        self.made = n
        if self.kind == "pod":
            await self._wait_running(n)

    async def _wait_running(self, n: int, timeout: float = 900.0) -> None:
        """Until kwok has reported every pod running (its status write is part of the object cached)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            running = 0
            async for page in self.client.list_pages("pods", self.namespace, field_selector="status.phase=Running",
                                                     limit=5000, metadata_only=True):
                running += len(page.get("items") or [])
            if running >= n:
                return
            await asyncio.sleep(3.0)
        raise RuntimeError(f"kwok reported {running} of {n} pods running after {timeout:.0f} s")

    async def count(self) -> int:
        total = 0
        async for page in self.client.list_pages(_kind_resource(self.kind), self.namespace, limit=5000,
                                                 metadata_only=True):
            total += len(page.get("items") or [])
        return total

    async def touch(self, first: int, count: int, mark: str, rate: float | None) -> None:
        """A label patch of objects ``first .. first+count-1`` (mod made): at ``rate``/s, or as fast as
        16 in flight allow."""
        resource = _kind_resource(self.kind)
        targets = [self._name((first + k) % self.made) for k in range(count)]
        patch = {"metadata": {"labels": {TOUCH: mark}}}
        if rate is None:
            await bounded(targets, lambda name: self.client.patch(resource, name, patch, self.namespace), 16)
            return
        start = time.monotonic()
        for k, name in enumerate(targets):
            await asyncio.sleep(max(0.0, start + k / rate - time.monotonic()))
            await self.client.patch(resource, name, patch, self.namespace)

    def _name(self, i: int) -> str:
        made = _pod(i, {i // PODS_PER_OWNER: ""}) if self.kind == "pod" else objmem.MAKERS[self.kind](i)
        return str(made["metadata"]["name"])


class Holder(ChildProcess):
    """One cache holder's process, its stdout protocol read from its log."""

    def __init__(self, contestant: str, log_path: Path) -> None:
        super().__init__(log_path)
        self.contestant = contestant
        self.sampler: TreeSampler | None = None
        self._offset = 0

    async def start(self, kubeconfig: str, namespace: str, kind: str, expect: int) -> None:
        resource = _kind_resource(kind)
        env = {**os.environ, "KUBECONFIG": kubeconfig, "PYTHONUNBUFFERED": "1"}
        if self.contestant == "kubeloop":
            argv = kubeloop_run(str(CONTESTANTS_DIR / "kubeloop_cache.py"), kubeconfig, "--namespace", namespace)
            env.update(BENCH_KIND=resource, BENCH_EXPECT=str(expect))
        else:
            program = CONTROLLER_RUNTIME_CACHE if self.contestant == "controller-runtime" else KUBE_RS_CACHE
            argv = [str(program.build()), "--namespace", namespace, "--kind", resource, "--expect", str(expect)]
        self._offset = self.log_path.stat().st_size if self.log_path.exists() else 0
        await self.spawn(argv, env, header=f"$ {' '.join(argv)}\n")
        assert self.proc is not None
        self.sampler = TreeSampler(self.proc.pid)
        self.sampler.start()

    def _output(self) -> str:
        return self.log_text()[self._offset:]

    def reconciled(self) -> int:
        found = REPORTED.findall(self._output())
        return max((int(v) for v in found), default=0)

    async def wait(self, what: Callable[[], bool], timeout: float, label: str) -> float:
        """Polls until ``what()``; returns the monotonic time it was first seen true."""
        deadline = time.monotonic() + timeout
        while not what():
            if self.proc is not None and self.proc.returncode is not None:
                raise RuntimeError(f"{self.contestant} exited ({self.proc.returncode}) waiting for {label}:\n"
                                   f"{self.tail()}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"{self.contestant}: no {label} within {timeout:.0f} s:\n{self.tail()}")
            await asyncio.sleep(0.05)
        return time.monotonic()

    async def stop(self) -> None:
        if self.sampler:
            await self.sampler.stop()
        await self.terminate(20.0)


def _mib(sample_mib: float) -> float:
    return round(sample_mib, 1)


async def one_run(objects: Objects, kubeconfig: str, contestant: str, n: int, options: CachedOptions,
                  touched: list[int]) -> dict[str, Any]:
    """One contestant on ``n`` objects of one kind: start-up, RSS, CPU per event at both paces."""
    expect = await objects.count()
    row: dict[str, Any] = {"kind": objects.kind, "n": n, "cached": expect, "contestant": contestant, "error": None}
    holder = Holder(contestant, options.log_dir / f"{objects.namespace}-{contestant}.log")
    try:
        await holder.start(kubeconfig, objects.namespace, objects.kind, expect)
        assert holder.sampler is not None
        timeout = max(120.0, expect / 100)
        if expect:
            first = await holder.wait(lambda: FIRST.search(holder._output()) is not None, timeout, "first reconcile")
            synced = await holder.wait(lambda: holder.reconciled() >= expect, timeout, f"{expect} reconciles")
            row["first_reconcile_s"] = round(first - holder.started_at, 2)
            row["all_reconciled_s"] = round(synced - holder.started_at, 2)
        await asyncio.sleep(options.settle_s)
        settled = holder.sampler.mark()
        row["rss_synced_mib"] = _mib(settled.rss_mib)
        row["peak_rss_mib"] = _mib(settled.peak_rss_mib)
        row["cpu_startup_s"] = round(settled.cpu_s, 2)
        if n:
            # The program's CPU at rest (its timers, its once-a-second report): each pace's window holds some,
            # which the idle-corrected figure takes out. Read in nanoseconds (schedstat), not 10 ms ticks.
            idle0, i0 = tree_cpu_ns(holder.sampler.root), time.monotonic()
            await asyncio.sleep(options.idle_s)
            idle_ns_per_s = (tree_cpu_ns(holder.sampler.root) - idle0) / (time.monotonic() - i0)
            row["idle_cpu_ms_per_s"] = round(idle_ns_per_s / 1e6, 3)
            for pace, count, rate in (("burst", options.burst, None),
                                      ("trickle", options.trickle, options.trickle_rate)):
                count = min(count, n)
                ns0 = tree_cpu_ns(holder.sampler.root)
                before, cpu0, t0 = holder.reconciled(), holder.sampler.mark().cpu_s, time.monotonic()
                await objects.touch(touched[0], count, f"{contestant}-{pace}-{t0:.0f}", rate)
                touched[0] += count
                goal = before + count
                done = await holder.wait(lambda goal=goal: holder.reconciled() >= goal, timeout,  # type: ignore[misc]
                                         f"{count} more reconciles ({pace})")
                await asyncio.sleep(1.0)  # the report line comes once a second; its CPU is the program's too
                cpu1, ns1, window = holder.sampler.mark().cpu_s, tree_cpu_ns(holder.sampler.root), time.monotonic() - t0
                row[f"{pace}_events"] = count
                row[f"{pace}_seconds"] = round(done - t0, 2)
                row[f"{pace}_cpu_ms_per_event"] = round((cpu1 - cpu0) * 1000 / count, 3)
                row[f"{pace}_cpu_ns_ms_per_event"] = round((ns1 - ns0) / 1e6 / count, 4)
                row[f"{pace}_busy_ms_per_event"] = round((ns1 - ns0 - idle_ns_per_s * window) / 1e6 / count, 4)
            await asyncio.sleep(options.settle_s)
            after = holder.sampler.mark()
            row["rss_after_events_mib"] = _mib(after.rss_mib)
            row["peak_rss_mib"] = _mib(after.peak_rss_mib)
    except Exception as exc:
        row["error"] = f"{type(exc).__name__}: {exc}"
    finally:
        await holder.stop()
    return row


def _per_object(rows: list[dict[str, Any]]) -> None:
    """Adds bytes per cached object: (RSS synced − the same program's on the empty namespace) ÷ N."""
    base = {(r["kind"], r["contestant"]): r for r in rows if r["n"] == 0 and not r["error"]}
    for r in rows:
        b = base.get((r["kind"], r["contestant"]))
        if r["n"] and b and not r["error"]:
            r["baseline_rss_mib"] = b["rss_synced_mib"]
            r["rss_bytes_per_object"] = round((r["rss_synced_mib"] - b["rss_synced_mib"]) * 2**20 / r["n"])


async def run(options: CachedOptions) -> dict[str, Any]:
    options.log_dir.mkdir(parents=True, exist_ok=True)
    for name in options.contestants:
        if name not in CONTESTANTS:
            raise SystemExit(f"--contestants: {name!r} is not one of {', '.join(CONTESTANTS)} for --cached")
        if name != "kubeloop":  # built before any timing (a cold build takes minutes)
            (CONTROLLER_RUNTIME_CACHE if name == "controller-runtime" else KUBE_RS_CACHE).build(log=options.log)
    async with cluster_for(options.kubeconfig, options.cluster_name, keep=options.keep_cluster,
                           log=options.log, nodes=1) as (cluster, _own):
        kubeconfig = str(cluster.kubeconfig)
        async with await Client.from_kubeconfig(kubeconfig, qps=0) as client:
            data: dict[str, Any] = {"meta": {
                "n": options.n, "kinds": options.kinds, "burst": options.burst, "trickle": options.trickle,
                "trickle_rate": options.trickle_rate, "machine": machine(), "versions": await versions(client),
                "contestants": {
                    "controller-runtime": f"controller-runtime {go_module_version('sigs.k8s.io/controller-runtime')}",
                    "kube-rs": f"kube-rs {crate_version('kube')}"}}, "rows": []}
            began = time.monotonic()
            for kind in options.kinds:
                await _one_kind(client, kubeconfig, kind, options, data)
            data["meta"]["duration_s"] = round(time.monotonic() - began)
            data["meta"]["machine"]["loadavg_end"] = " ".join(Path("/proc/loadavg").read_text().split()[:3])
    if options.results:
        save_json(data, options.results)
    return data


async def _one_kind(client: Client, kubeconfig: str, kind: str, options: CachedOptions,
                    data: dict[str, Any]) -> None:
    namespace = f"bench-cached-{kind}-{os.urandom(3).hex()}"
    await client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}})
    objects = Objects(client, kind, namespace)
    touched = [0]
    try:
        sizes = [n for n in sorted(options.n) if n <= MAX_N.get(kind, n)]
        if len(sizes) < len(options.n):
            options.log(f"{kind}: sizes above {MAX_N[kind]:,} left out (etcd's 2 GiB quota)")
        for step, n in enumerate([0, *sizes]):
            t0 = time.monotonic()
            await objects.top_up(n)
            options.log(f"{kind}: {n} objects in {namespace} ({time.monotonic() - t0:.0f} s)")
            await asyncio.sleep(3.0)  # the last status writes and the loader's connections wind down
            order = options.contestants[step % len(options.contestants):] + \
                options.contestants[:step % len(options.contestants)]
            for contestant in order:
                row = await one_run(objects, kubeconfig, contestant, n, options, touched)
                data["rows"].append(row)
                _per_object(data["rows"])
                options.log("  " + line(row))
                if options.results:
                    save_json(data, options.results)
    finally:
        with contextlib.suppress(Exception):
            await client.delete("namespaces", namespace)


def line(r: dict[str, Any]) -> str:
    if r["error"]:
        return f"{r['contestant']} {r['kind']} n={r['n']}: ERROR {r['error'].splitlines()[0]}"
    parts = [f"{r['contestant']} {r['kind']} n={r['n']}: rss {r['rss_synced_mib']} MiB (peak {r['peak_rss_mib']})"]
    if "rss_bytes_per_object" in r:
        parts.append(f"{r['rss_bytes_per_object']} B/object")
    if "all_reconciled_s" in r:
        parts.append(f"first {r['first_reconcile_s']} s, all {r['all_reconciled_s']} s")
    for pace in ("burst", "trickle"):
        if f"{pace}_cpu_ms_per_event" in r:
            parts.append(f"{pace} {r[f'{pace}_cpu_ms_per_event']} ms CPU/event")
        if f"{pace}_busy_ms_per_event" in r:
            parts.append(f"({r[f'{pace}_cpu_ns_ms_per_event']} by schedstat, {r[f'{pace}_busy_ms_per_event']} "
                         f"less the idle {r['idle_cpu_ms_per_s']} ms/s)")
    return ", ".join(parts)


def main(args: argparse.Namespace) -> int:
    """Entry from ``python -m harness.bench --cached``."""
    from harness.bench.cli import DEFAULT_RESULTS

    kinds = [k.strip() for k in args.cached_kinds.split(",") if k.strip()]
    unknown = [k for k in kinds if k not in KINDS]
    if unknown:
        raise SystemExit(f"--cached-kinds: {', '.join(unknown)} not of {', '.join(KINDS)}")
    options = CachedOptions(n=[n for n in (args.n or [10_000]) if n > 0], kinds=kinds,
                            contestants=args.contestants or list(CONTESTANTS),
                            kubeconfig=args.kubeconfig, cluster_name=args.cluster_name,
                            keep_cluster=args.keep_cluster, log_dir=args.log_dir or CachedOptions().log_dir,
                            trickle=args.cached_trickle, trickle_rate=args.cached_trickle_rate,
                            results=RESULTS if args.results == DEFAULT_RESULTS else args.results)
    data = asyncio.run(run(options))
    return 1 if any(r["error"] for r in data["rows"]) else 0
