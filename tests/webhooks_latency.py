"""Admission latency of kubeloop's webhook server against a no-op webhook in plain aiohttp (the ceiling).

Not a test (pytest does not collect it) and not the benchmark suite: a small measurement, run by hand::

    PYTHONPATH=. python tests/webhooks_latency.py [--rate 200] [--seconds 5]

It starts a throwaway local cluster, then sends dry-run ConfigMap creates at a fixed rate (open loop)
through the API server with: no webhook, the plain-aiohttp no-op webhook, kubeloop's no-op validating
webhook, and kubeloop's defaulting (mutating) webhook; and posts reviews straight to each server, without
the API server. It prints p50/p99 per case.
"""

from __future__ import annotations

import argparse
import asyncio
import ssl
import statistics
import time
from collections.abc import Awaitable, Callable
from typing import Any

import aiohttp
import orjson
from aiohttp import web

from kubeloop.client import Client
from kubeloop.envtest import LocalCluster
from kubeloop.webhooks import (
    AdmissionRequest,
    Endpoint,
    Rule,
    WebhookCerts,
    WebhookServer,
    WebhookSpec,
    mutating_configuration,
    validating_configuration,
)

NS = "latency"
RULE = Rule(("",), ("v1",), ("configmaps",), ("CREATE",))


async def noop(req: AdmissionRequest) -> None:
    return None


async def defaulting(req: AdmissionRequest) -> dict[str, Any]:
    obj = req.object or {}
    obj.setdefault("data", {})["mode"] = "standard"
    return obj


async def plain_server(certs: WebhookCerts) -> tuple[web.AppRunner, int]:
    """The ceiling: decode, answer allowed, encode — nothing else."""
    async def handle(request: web.Request) -> web.Response:
        review = orjson.loads(await request.read())
        return web.Response(body=orjson.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
                                               "response": {"uid": review["request"]["uid"], "allowed": True}}),
                            content_type="application/json")
    app = web.Application()
    app.router.add_post("/noop", handle)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0, ssl_context=certs.ssl_context)
    await site.start()
    return runner, site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]  # noqa: SLF001


async def open_loop(send: Callable[[int], Awaitable[None]], rate: float, seconds: float) -> list[float]:
    """Starts request i at i/rate regardless of earlier answers; returns the latencies in ms."""
    latencies: list[float] = []
    loop = asyncio.get_running_loop()
    start = loop.time()

    async def one(i: int) -> None:
        await asyncio.sleep(max(0.0, start + i / rate - loop.time()))
        t = time.perf_counter()
        await send(i)
        latencies.append((time.perf_counter() - t) * 1000)

    await asyncio.gather(*(one(i) for i in range(int(rate * seconds))))
    return latencies


def summary(name: str, ms: list[float]) -> str:
    q = statistics.quantiles(ms, n=100)
    return f"{name:<34} n={len(ms):<5} p50={q[49]:6.2f} ms  p99={q[98]:6.2f} ms"


def config(kind: str, path: str, url: str, ca: str) -> dict[str, Any]:
    spec = WebhookSpec(f"{path.strip('/')}.latency.kubeloop.dev", path, (RULE,),
                       namespace_selector={"matchLabels": {"kubernetes.io/metadata.name": NS}})
    make = validating_configuration if kind == "validating" else mutating_configuration
    return make(f"latency{path.replace('/', '-')}", [spec], Endpoint(url=url), operator_namespace="none",
                ca_bundle=ca)


async def through_apiserver(client: Client, name: str, cfg: dict[str, Any] | None, args: argparse.Namespace) -> str:
    if cfg:
        await client.create(cfg)
        await asyncio.sleep(3)  # the API server loads new webhook configurations asynchronously

    async def send(i: int) -> None:
        await client.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"c{i}"}, "data": {}},
                            NS, dry_run=True)

    await open_loop(send, args.rate, 1)  # warm-up: connections, caches
    line = summary(name, await open_loop(send, args.rate, args.seconds))
    if cfg:
        await client.delete(await client.resource_of(cfg), cfg["metadata"]["name"])
    return line


async def direct(name: str, url: str, ca: bytes, args: argparse.Namespace) -> str:
    ctx = ssl.create_default_context(cadata=ca.decode())
    body = orjson.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {
        "uid": "u", "operation": "CREATE", "kind": {"group": "", "version": "v1", "kind": "ConfigMap"},
        "resource": {"group": "", "version": "v1", "resource": "configmaps"}, "namespace": NS,
        "userInfo": {"username": "x"}, "object": {"metadata": {"name": "c"}, "data": {}}}})
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(ssl=ctx, limit=32)) as session:
        async def send(i: int) -> None:
            async with session.post(url, data=body, headers={"Content-Type": "application/json"}) as r:
                await r.read()
        await open_loop(send, args.rate, 1)
        return summary(name, await open_loop(send, args.rate, args.seconds))


async def main(args: argparse.Namespace) -> None:
    certs = WebhookCerts()
    server = WebhookServer(certs)
    server.validating("/noop", noop)
    server.mutating("/default", defaulting)
    await server.start()
    plain, plain_port = await plain_server(certs)
    ca, plain_url = certs.ca_bundle_b64, f"https://127.0.0.1:{plain_port}"
    cluster = LocalCluster("webhook-latency")
    await asyncio.to_thread(cluster.up)
    try:
        async with await Client.from_kubeconfig(str(cluster.kubeconfig), qps=0) as client:
            await client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})
            lines = [
                await direct("direct: plain aiohttp no-op", plain_url + "/noop", certs.ca_bundle, args),
                await direct("direct: kubeloop validating no-op", server.url("/noop"), certs.ca_bundle, args),
                await direct("direct: kubeloop mutating", server.url("/default"), certs.ca_bundle, args),
                await through_apiserver(client, "apiserver: no webhook", None, args),
                await through_apiserver(client, "apiserver: plain aiohttp no-op",
                                        config("validating", "/noop", plain_url, ca), args),
                await through_apiserver(client, "apiserver: kubeloop validating no-op",
                                        config("validating", "/noop", server.url(""), ca), args),
                await through_apiserver(client, "apiserver: kubeloop mutating",
                                        config("mutating", "/default", server.url(""), ca), args),
            ]
    finally:
        await asyncio.to_thread(cluster.down, wipe=True)
        await plain.cleanup()
        await server.stop()
        certs.close()
    print(f"rate {args.rate}/s for {args.seconds}s per case")
    print("\n".join(lines))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rate", type=float, default=200)
    parser.add_argument("--seconds", type=float, default=5)
    asyncio.run(main(parser.parse_args()))
