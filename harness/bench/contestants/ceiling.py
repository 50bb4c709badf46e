"""The ceiling: what this API server can absorb for this job, with no framework at all.

Plain asyncio + aiohttp + orjson: list (paginated), watch from the list's resourceVersion (relist on
410), and a fixed number of workers merge-patching ``/status`` of widgets whose ``status.observed``
differs from ``spec.value``. A key waits in the queue at most once, and a value already written is
not written again while the watch catches up: one write per object per change. Deliberately not
importing kubeloop.

    python harness/bench/contestants/ceiling.py --kubeconfig KUBECONFIG --namespace NS [--concurrency 16]
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import os
import signal
import ssl
import tempfile
from pathlib import Path
from typing import Any

import aiohttp
import orjson
import yaml

API = "/apis/bench.example.com/v1"


def ssl_context(kubeconfig: str) -> tuple[str, ssl.SSLContext, dict[str, str]]:
    """Server, TLS context and auth headers of the kubeconfig's current context."""
    path = Path(kubeconfig)
    config = yaml.safe_load(path.read_text())
    ctx_name = config["current-context"]
    context = next(c["context"] for c in config["contexts"] if c["name"] == ctx_name)
    cluster = next(c["cluster"] for c in config["clusters"] if c["name"] == context["cluster"])
    user = next(u["user"] for u in config["users"] if u["name"] == context["user"])

    def data(section: dict[str, Any], key: str) -> bytes | None:
        if section.get(f"{key}-data"):
            return base64.b64decode(section[f"{key}-data"])
        if section.get(key):
            return (path.parent / section[key]).read_bytes()
        return None

    ctx = ssl.create_default_context()
    ca = data(cluster, "certificate-authority")
    if ca:
        ctx.load_verify_locations(cadata=ca.decode())
    cert, key = data(user, "client-certificate"), data(user, "client-key")
    if cert and key:
        with tempfile.TemporaryDirectory() as tmp:
            (Path(tmp) / "c").write_bytes(cert)
            (Path(tmp) / "k").write_bytes(key)
            ctx.load_cert_chain(str(Path(tmp) / "c"), str(Path(tmp) / "k"))
    headers = {"Authorization": f"Bearer {user['token']}"} if user.get("token") else {}
    return cluster["server"], ctx, headers


class Gone(Exception):
    pass


class Loop:
    def __init__(self, server: str, ctx: ssl.SSLContext, headers: dict[str, str], namespace: str,
                 concurrency: int) -> None:
        self.base = f"{server}{API}/namespaces/{namespace}/widgets"
        self.ctx, self.headers, self.concurrency = ctx, headers, concurrency
        self.objects: dict[str, tuple[Any, Any]] = {}  # name → (spec.value, status.observed)
        self.written: dict[str, Any] = {}  # name → the value last written, until the watch shows it
        self.queue: asyncio.Queue[str] = asyncio.Queue()
        self.queued: set[str] = set()

    def see(self, obj: dict[str, Any]) -> None:
        name = obj["metadata"]["name"]
        value, observed = (obj.get("spec") or {}).get("value"), (obj.get("status") or {}).get("observed")
        self.objects[name] = (value, observed)
        if value != observed and name not in self.queued:
            self.queued.add(name)
            self.queue.put_nowait(name)

    async def run(self) -> None:
        connector = aiohttp.TCPConnector(limit=self.concurrency + 4, ssl=self.ctx)
        async with aiohttp.ClientSession(connector=connector, headers=self.headers) as self.session:
            workers = [asyncio.create_task(self.worker()) for _ in range(self.concurrency)]
            try:
                rv = await self.list()
                while True:
                    try:
                        rv = await self.watch(rv)
                    except Gone:
                        rv = await self.list()
                    except (TimeoutError, aiohttp.ClientError):
                        await asyncio.sleep(1)
            finally:
                for w in workers:
                    w.cancel()

    async def list(self) -> str:
        params = {"limit": "500"}
        seen: set[str] = set()
        while True:
            async with self.session.get(self.base, params=params) as resp:
                resp.raise_for_status()
                page = orjson.loads(await resp.read())
            for obj in page["items"]:
                seen.add(obj["metadata"]["name"])
                self.see(obj)
            token = page["metadata"].get("continue")
            if not token:
                break
            params = {"limit": "500", "continue": token}
        for name in set(self.objects) - seen:
            self.objects.pop(name, None)
            self.written.pop(name, None)
        return str(page["metadata"]["resourceVersion"])

    async def watch(self, rv: str) -> str:
        params = {"watch": "true", "resourceVersion": rv, "allowWatchBookmarks": "true",
                  "timeoutSeconds": "600"}
        timeout = aiohttp.ClientTimeout(total=None, sock_read=700)
        async with self.session.get(self.base, params=params, timeout=timeout) as resp:
            if resp.status == 410:
                raise Gone
            resp.raise_for_status()
            buf = b""
            async for chunk in resp.content.iter_any():
                buf += chunk
                *lines, buf = buf.split(b"\n")
                for line in lines:
                    if not line:
                        continue
                    event = orjson.loads(line)
                    obj, etype = event["object"], event["type"]
                    if etype == "ERROR":
                        raise Gone if obj.get("code") == 410 else RuntimeError(obj)
                    rv = obj["metadata"]["resourceVersion"]
                    if etype == "DELETED":
                        self.objects.pop(obj["metadata"]["name"], None)
                        self.written.pop(obj["metadata"]["name"], None)
                    elif etype != "BOOKMARK":
                        self.see(obj)
        return rv

    async def worker(self) -> None:
        while True:
            name = await self.queue.get()
            self.queued.discard(name)
            value, observed = self.objects.get(name, (None, None))
            if name not in self.objects or value == observed or self.written.get(name) == value:
                continue
            self.written[name] = value
            try:
                async with self.session.patch(
                        f"{self.base}/{name}/status", data=orjson.dumps({"status": {"observed": value}}),
                        headers={"Content-Type": "application/merge-patch+json"}) as resp:
                    await resp.read()
                    ok = resp.status < 300 or resp.status == 404
            except (TimeoutError, aiohttp.ClientError):
                ok = False
            if not ok:  # retry after a pause
                self.written.pop(name, None)
                await asyncio.sleep(0.5)
                if name in self.objects:
                    self.see({"metadata": {"name": name}, "spec": {"value": self.objects[name][0]},
                              "status": {"observed": self.objects[name][1]}})


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kubeconfig", default=os.environ.get("KUBECONFIG"))
    parser.add_argument("--namespace", required=True)
    parser.add_argument("--concurrency", type=int, default=16)
    args = parser.parse_args()
    server, ctx, headers = ssl_context(args.kubeconfig)
    loop = Loop(server, ctx, headers, args.namespace, args.concurrency)
    task = asyncio.create_task(loop.run())
    for sig in (signal.SIGTERM, signal.SIGINT):
        asyncio.get_running_loop().add_signal_handler(sig, task.cancel)
    try:
        await task
    except asyncio.CancelledError:
        pass


if __name__ == "__main__":
    asyncio.run(main())
