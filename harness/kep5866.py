"""``python -m harness.kep5866``: one measured run of server-side sharding (KEP-5866) against client-side.

For each mode, a v1.36.3 control plane of its own (the same binaries; ``server``: with the
ShardedListAndWatch gate, ``client``: without), N Echo objects, and 3 replicas of ``kubeloop run
--shards auto`` as real processes that set each Echo's ``status.seen``. Once every object converged and
the caches settled it prints, per replica, the objects in its cache, its RSS and peak RSS, and the API
server's own counts for echoes: LIST and WATCH requests (``apiserver_request_total``; a WATCH is counted
when it ends), the watches open now, the watch events and bytes it sent, and the events its shard filter
dropped. Not a test: its figures go to docs/SHARDING.md with this command line.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import textwrap
import time
import urllib.request
from pathlib import Path
from typing import Any

from harness.bench import procs
from harness.common import prometheus
from harness.common.processes import ChildProcess, free_port, kubeloop_run
from kubeloop.client import Client
from kubeloop.envtest import LocalCluster

VERSION = "1.36.3"
CRD = "echoes.test.kubeloop.dev"
OPERATOR = textwrap.dedent('''
    from kubeloop import Context, Operator

    op = Operator("shardbench")

    @op.reconcile("echoes.test.kubeloop.dev", resync=None)
    async def reconcile(obj: dict, ctx: Context) -> None:
        if (obj.get("status") or {}).get("seen") != obj["spec"]["message"]:
            await ctx.patch_status({"seen": obj["spec"]["message"]})
''')


def _crd() -> dict[str, Any]:
    from tests.integration.conftest import ECHO_CRD  # the test suite's Echo kind, unchanged
    return ECHO_CRD


async def _create(client: Client, namespace: str, count: int, parallel: int = 32) -> None:
    names = iter(range(count))

    async def worker() -> None:
        for i in names:
            body = {"apiVersion": "test.kubeloop.dev/v1", "kind": "Echo",
                    "metadata": {"name": f"e{i}", "namespace": namespace}, "spec": {"message": "m0"}}
            await client.create(body, namespace)
    await asyncio.gather(*(worker() for _ in range(parallel)))


async def _patch_all(client: Client, namespace: str, count: int, parallel: int = 32) -> None:
    names = iter(range(count))

    async def worker() -> None:
        for i in names:
            await client.patch(CRD, f"e{i}", {"spec": {"message": "m1"}}, namespace)
    await asyncio.gather(*(worker() for _ in range(parallel)))


def _scrape(port: int) -> str:
    """A replica's /metrics; empty while it is still starting."""
    try:
        return urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10).read().decode()
    except OSError:
        return ""


def _api_counts(cluster: LocalCluster) -> dict[str, float]:
    text = cluster.kubectl("get", "--raw", "/metrics").stdout
    echoes = {"resource": "echoes"}
    return {
        "LIST requests (replicas)": prometheus.total(text, "apiserver_request_total", verb="LIST", **echoes)
        - OWN_LISTS[0],
        "WATCH requests (ended)": prometheus.total(text, "apiserver_request_total", verb="WATCH", **echoes),
        "watches open": prometheus.total(text, "apiserver_longrunning_requests", verb="WATCH", **echoes),
        "watch events sent": prometheus.total(text, "apiserver_watch_events_total", **echoes),
        "watch event bytes": prometheus.total(text, "apiserver_watch_events_sizes_sum", **echoes),
        "LIST response bytes": prometheus.total(text, "apiserver_response_sizes_sum", verb="LIST", **echoes),
        "events dropped by shard": prometheus.total(text, "apiserver_watch_filtered_events_total", **echoes),
        "API server CPU seconds": prometheus.total(text, "process_cpu_seconds_total"),
    }


OWN_LISTS = [0]  # LIST pages the harness itself sent (its convergence checks): not the replicas'


async def _converged(client: Client, namespace: str) -> bool:
    done = True
    async for page in client.list_pages(CRD, namespace, limit=500):
        OWN_LISTS[0] += 1
        done = done and all((o.get("status") or {}).get("seen") == o["spec"]["message"] for o in page["items"])
    return done


async def run_mode(mode: str, objects: int, replicas: int, workdir: Path) -> dict[str, Any]:
    gates = {"ShardedListAndWatch": True} if mode == "server" else {}
    cluster = LocalCluster(f"kep5866-bench-{mode}-{os.getpid()}", kubernetes_version=VERSION, nodes=1,
                           feature_gates=gates, log=lambda m: print(f"  {m}", file=sys.stderr))
    await asyncio.to_thread(cluster.up, timeout=300)
    children: list[tuple[str, ChildProcess, int]] = []
    client = await Client.from_kubeconfig(str(cluster.kubeconfig))
    try:
        await client.create(_crd())
        await asyncio.sleep(3)
        ns = "bench"
        await client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
        began = time.monotonic()
        await _create(client, ns, objects)
        print(f"[{mode}] created {objects} Echoes in {time.monotonic() - began:.0f}s", file=sys.stderr)
        (workdir / "op.py").write_text(OPERATOR)
        before = _api_counts(cluster)
        began = time.monotonic()
        for i in range(replicas):
            name, port = f"r{i + 1}", free_port()
            child = ChildProcess(workdir / f"{mode}-{name}.log")
            argv = kubeloop_run(str(workdir / "op.py"), cluster.kubeconfig, "--shards", "auto", "--namespace", ns,
                                "--leader-election-namespace", ns, metrics_port=port)
            await child.spawn(argv, {**os.environ, "POD_NAME": name}, header=f"# {mode} {name}\n")
            children.append((name, child, port))
        while True:
            await asyncio.sleep(5)  # a list of every object per check: not too often, it loads the server
            for name, child, _ in children:
                if not child.running:
                    raise RuntimeError(f"[{mode}] replica {name} exited:\n{child.log_text()[-3000:]}")
            cached = [prometheus.total(_scrape(p), "kubeloop_shard_cached_objects") for _, _, p in children]
            slots = [prometheus.total(_scrape(p), "kubeloop_shard_slots_owned") for _, _, p in children]
            settled = sum(slots) == 2048 and all(slots) and (sum(cached) == objects or set(cached) == {objects})
            if settled and await _converged(client, ns):
                break
            if time.monotonic() - began > 1200:
                raise TimeoutError(f"[{mode}] not converged after 20 min: cached {cached}, slots {slots}")
        took = time.monotonic() - began
        after = _api_counts(cluster)
        # Steady state: every object's spec changes once; each change and its status write reach the
        # watch of the one replica that caches it (server-side) or of all of them (client-side).
        steady_before = after
        began = time.monotonic()
        await _patch_all(client, ns, objects)
        while not await _converged(client, ns):
            await asyncio.sleep(5)
        steady_took = time.monotonic() - began
        steady = _api_counts(cluster)
        rows = []
        for name, child, port in children:
            text = _scrape(port)
            assert child.pid is not None
            rows.append({"replica": name, "cached": prometheus.total(text, "kubeloop_shard_cached_objects"),
                         "server_side": prometheus.total(text, "kubeloop_shard_server_side"),
                         "cpu_s": round(procs.tree_cpu_seconds(child.pid), 1),
                         "rss_mib": round(procs.tree_rss_mib(child.pid), 1),
                         "peak_rss_mib": round(procs.hwm_mib(child.pid), 1)})
        return {"mode": mode, "objects": objects, "converged_s": round(took, 1), "replicas": rows,
                "load_average": os.getloadavg()[0],
                "apiserver": {k: after[k] - before[k] if "open" not in k else after[k] for k in after},
                "steady_s": round(steady_took, 1),
                "steady": {k: steady[k] - steady_before[k] if "open" not in k else steady[k] for k in steady}}
    finally:
        for _, child, _ in children:
            await child.terminate()
        await client.close()
        await asyncio.to_thread(cluster.down, True)


def show(result: dict[str, Any]) -> None:
    print(f"\n{result['mode']}-side mode: {result['objects']} objects, converged and settled in "
          f"{result['converged_s']}s (machine load average {result['load_average']:.1f} at the end)")
    print("  replica  cached objects  RSS MiB  peak RSS MiB  CPU s (whole run)  server-side gauge")
    for r in result["replicas"]:
        print(f"  {r['replica']:<8} {r['cached']:>14.0f} {r['rss_mib']:>8} {r['peak_rss_mib']:>13} "
              f"{r['cpu_s']:>18} {r['server_side']:>18.0f}")
    print(f"  API server, echoes: from the replicas' start to convergence | then {result['objects']} spec "
          f"changes, converged in {result['steady_s']}s")
    for key, value in result["apiserver"].items():
        print(f"    {key:<26} {_num(value)} | {_num(result['steady'][key])}")


def _num(value: float) -> str:
    return f"{value:>14,.0f}" if float(value).is_integer() else f"{value:>14,.1f}"


async def main_async(args: argparse.Namespace) -> int:
    results = []
    with tempfile.TemporaryDirectory(prefix="kep5866-bench-") as tmp:
        for mode in args.modes:
            results.append(await run_mode(mode, args.objects, args.replicas, Path(tmp)))
            show(results[-1])
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n")
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m harness.kep5866", description=__doc__.split("\n")[0])
    p.add_argument("--objects", type=int, default=30_000)
    p.add_argument("--replicas", type=int, default=3)
    p.add_argument("--modes", nargs="+", choices=["server", "client"], default=["server", "client"])
    p.add_argument("--json", help="also write the figures to this file")
    return asyncio.run(main_async(p.parse_args(argv)))


if __name__ == "__main__":
    raise SystemExit(main())
