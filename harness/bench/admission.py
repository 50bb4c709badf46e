"""``python -m harness.bench --admission``: the API server's create latency through kubeloop's admission
webhooks, side by side with a no-op webhook in plain aiohttp (the ceiling), at a fixed offered rate.

- Each case registers a validating and a mutating webhook (ConfigMap CREATE, this run's namespace only)
  pointing at one server (see :mod:`harness.bench.admission_servers`), waits until the API server calls
  both, then sends ``count`` dry-run ConfigMap creates open loop: create i starts at ``i / rate`` s
  whatever the earlier ones did, so a slow webhook shows as latency, not as a lower offered rate.
  Dry run: admission runs in full (the webhooks have ``sideEffects: None``), etcd is left out.
- Repeats are interleaved (kubeloop, ceiling, then ceiling, kubeloop, ...) so a noisy moment of a
  shared machine falls on both. Everything listens on 127.0.0.1; each case is bounded in time.
- Reported per case: p50/p99 of the create latency seen by the client and of the webhook's handling
  time (both webhooks' calls), requests/s achieved, errors; per server the median over repeats; and
  "added over the ceiling" (kubeloop minus ceiling). The goal: p99 added < 10 ms at 200/s.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.bench.admission_servers import PATHS, CeilingServer, TimedWebhookServer
from harness.common.cluster import cluster_for
from harness.common.provenance import save_json
from harness.common.stats import percentile
from kubeloop.client import ApiError, Client
from kubeloop.webhooks import (
    Endpoint,
    Rule,
    WebhookCerts,
    WebhookSpec,
    mutating_configuration,
    validating_configuration,
)

NAMESPACE = "bench-admission"
RESULTS = Path(__file__).resolve().parent / "results" / "admission.json"
GOAL_ADDED_P99_MS = 10.0
SERVERS = ("kubeloop", "ceiling")
Server = TimedWebhookServer | CeilingServer


@dataclass
class AdmissionOptions:
    rate: float = 200.0  # creates offered per second
    count: int = 1000  # creates measured per case (after a warm-up of rate/2)
    repeats: int = 3
    kubeconfig: str | None = None
    cluster_name: str = "bench"
    keep_cluster: bool = False
    results: Path | None = RESULTS
    log: Callable[[str], None] = field(default=lambda m: print(m, file=sys.stderr, flush=True))


def add_flags(p: argparse.ArgumentParser) -> None:
    """The flags of this benchmark, on ``python -m harness.bench``."""
    p.add_argument("--admission", action="store_true",
                   help="run only the admission-webhook benchmark (kubeloop vs a plain aiohttp no-op); "
                        "results in harness/bench/results/admission.json")
    p.add_argument("--admission-rate", type=float, default=200.0, help="creates offered per second (default 200)")
    p.add_argument("--admission-count", type=int, default=1000, help="creates measured per case (default 1000)")


def _ms(values: list[float], q: float) -> float | None:
    p = percentile(values, q)
    return None if p is None else round(p, 2)


async def _open_loop(client: Client, rate: float, count: int, first: int) -> tuple[list[float], int, float]:
    """(latencies in ms, errors, seconds from the first start to the last answer)."""
    latencies: list[float] = []
    errors = 0
    loop = asyncio.get_running_loop()
    start = loop.time()

    async def one(i: int) -> None:
        nonlocal errors
        await asyncio.sleep(max(0.0, start + i / rate - loop.time()))
        t = time.perf_counter()
        try:
            await client.create({"apiVersion": "v1", "kind": "ConfigMap",
                                 "metadata": {"name": f"c{first + i}"}}, NAMESPACE, dry_run=True)
            latencies.append((time.perf_counter() - t) * 1000)
        except (TimeoutError, ApiError, OSError):
            errors += 1

    async with asyncio.timeout(count / rate * 3 + 30):  # bounded even if the webhook hangs
        await asyncio.gather(*(one(i) for i in range(count)))
    return latencies, errors, loop.time() - start


def _configurations(server: Server, ca: str) -> list[dict[str, Any]]:
    selector = {"matchLabels": {"kubernetes.io/metadata.name": NAMESPACE}}
    rule = Rule(("",), ("v1",), ("configmaps",), ("CREATE",))
    endpoint = Endpoint(url=server.url(""))
    return [build(f"bench-admission-{verb}", [WebhookSpec(f"{verb}.bench.kubeloop.dev", path, (rule,),
                                                           namespace_selector=selector)],
                  endpoint, operator_namespace="kube-system", ca_bundle=ca)
            for verb, path, build in (("validating", PATHS[0], validating_configuration),
                                      ("mutating", PATHS[1], mutating_configuration))]


async def _until_called(client: Client, server: Server) -> None:
    """The API server loads new configurations asynchronously: wait until one create reaches both."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        before = len(server.handling_ms)
        with contextlib.suppress(ApiError):
            await client.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "probe"}},
                                NAMESPACE, dry_run=True)
        if len(server.handling_ms) - before >= 2:
            return
        await asyncio.sleep(0.2)
    raise RuntimeError("the API server did not call both benchmark webhooks within 30 s")


async def _case(client: Client, name: str, server: Server, ca: str, options: AdmissionOptions,
                repeat: int) -> dict[str, Any]:
    configs = _configurations(server, ca)
    for cfg in configs:
        await client.apply(cfg, field_manager="bench-admission", force=True)
    try:
        await _until_called(client, server)
        await _open_loop(client, options.rate, max(1, int(options.rate / 2)), 0)  # warm-up: connections
        server.handling_ms.clear()
        latencies, errors, seconds = await _open_loop(client, options.rate, options.count, 10**6)
    finally:
        for cfg in configs:
            with contextlib.suppress(ApiError):
                await client.delete(await client.resource_of(cfg), cfg["metadata"]["name"])
    return {"server": name, "repeat": repeat, "requests": options.count, "errors": errors,
            "requests_per_s": round(len(latencies) / seconds, 1) if seconds else None,
            "client_p50_ms": _ms(latencies, 50), "client_p99_ms": _ms(latencies, 99),
            "webhook_calls": len(server.handling_ms),
            "handling_p50_ms": _ms(server.handling_ms, 50), "handling_p99_ms": _ms(server.handling_ms, 99)}


def summarise(cases: list[dict[str, Any]], rate: float) -> dict[str, Any]:
    """Per server the median over repeats; ``added`` is kubeloop minus the ceiling (client-seen)."""
    keys = ("client_p50_ms", "client_p99_ms", "handling_p50_ms", "handling_p99_ms", "requests_per_s")
    per: dict[str, dict[str, float | None]] = {}
    for name in SERVERS:
        mine = [c for c in cases if c["server"] == name]
        per[name] = {k: (round(statistics.median(v), 2) if (v := [c[k] for c in mine if c[k] is not None])
                         else None) for k in keys}
        per[name]["errors"] = sum(c["errors"] for c in mine)
    added = {q: (round(per["kubeloop"][f"client_{q}_ms"] - per["ceiling"][f"client_{q}_ms"], 2)  # type: ignore[operator]
                 if per["kubeloop"][f"client_{q}_ms"] is not None and per["ceiling"][f"client_{q}_ms"] is not None
                 else None) for q in ("p50", "p99")}
    met = added["p99"] is not None and added["p99"] < GOAL_ADDED_P99_MS
    return {"rate": rate, "servers": per, "added_ms": added,
            "goal": f"p99 added < {GOAL_ADDED_P99_MS:g} ms at {rate:g}/s", "goal_met": met}


def render(data: dict[str, Any]) -> str:
    """The figures as a markdown table (printed, and what docs/PERFORMANCE.md quotes)."""
    s = data["summary"]
    lines = [f"admission at {s['rate']:g} creates/s offered, {data['meta']['count']} per case, "
             f"{data['meta']['repeats']} interleaved repeats (median over repeats)", "",
             "| webhook | create p50 | create p99 | handling p50 | handling p99 | req/s | errors |",
             "|---|---|---|---|---|---|---|"]
    for name, r in s["servers"].items():
        lines.append(f"| {name} | {r['client_p50_ms']} ms | {r['client_p99_ms']} ms | {r['handling_p50_ms']} ms "
                     f"| {r['handling_p99_ms']} ms | {r['requests_per_s']} | {r['errors']} |")
    lines += ["", f"added over the ceiling: p50 {s['added_ms']['p50']} ms, p99 {s['added_ms']['p99']} ms "
                  f"(goal {s['goal']}: {'met' if s['goal_met'] else 'NOT met'})"]
    return "\n".join(lines)


async def run(options: AdmissionOptions) -> dict[str, Any]:
    """Runs every case and returns ``{"meta", "cases", "summary"}`` (saved to ``options.results``)."""
    certs = WebhookCerts()  # one certificate for both servers: the same TLS work
    servers: dict[str, Server] = {"kubeloop": TimedWebhookServer(certs), "ceiling": CeilingServer(certs)}
    for server in servers.values():
        await server.start()
    cases: list[dict[str, Any]] = []
    try:
        async with cluster_for(options.kubeconfig, options.cluster_name, keep=options.keep_cluster,
                               log=options.log, nodes=1) as (cluster, _own):
            async with await Client.from_kubeconfig(str(cluster.kubeconfig), qps=0) as client:
                with contextlib.suppress(ApiError):  # already there when run twice on one cluster
                    await client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}})
                for repeat in range(options.repeats):
                    order = SERVERS if repeat % 2 == 0 else SERVERS[::-1]
                    for name in order:
                        cases.append(await _case(client, name, servers[name], certs.ca_bundle_b64, options, repeat))
                        options.log(f"admission {name} #{repeat}: {cases[-1]}")
    finally:
        for server in servers.values():
            await server.stop()
        certs.close()
    data = {"meta": {"rate": options.rate, "count": options.count, "repeats": options.repeats, "dry_run": True},
            "cases": cases, "summary": summarise(cases, options.rate)}
    if options.results:
        save_json(data, options.results)
    return data


def main(args: argparse.Namespace) -> int:
    """Entry from ``python -m harness.bench --admission``."""
    options = AdmissionOptions(rate=args.admission_rate, count=args.admission_count, repeats=args.repeats or 3,
                               kubeconfig=args.kubeconfig, cluster_name=args.cluster_name,
                               keep_cluster=args.keep_cluster,
                               results=RESULTS if args.results == _default_results() else args.results)
    data = asyncio.run(run(options))
    print(render(data))
    return 0 if all(c["errors"] == 0 for c in data["cases"]) else 1


def _default_results() -> Path:
    from harness.bench.cli import DEFAULT_RESULTS

    return DEFAULT_RESULTS

