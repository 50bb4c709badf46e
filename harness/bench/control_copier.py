"""``python -m harness.bench.control_copier KUBECONFIG SOURCE_NS NAME TARGET_NS TARGET_NAME``: the
noisy-neighbour benchmark's control for B's copy, a copier with nothing else to do in a process of its own.

It watches one ConfigMap and writes its data into another with one server-side apply per change. The
benchmark measures its copy of B's write beside copyrator's copy of the same write, so that one run shows
what the API server and the shared machine cost any copier (a watch event in, one write out, the write's
event to the measuring watch) against what copyrator costs, serving A's rules in the same process.

Prints one JSON line, ``{"ready": true}``, once its watch is open and the target holds the source's data;
stops when its standard input closes (the benchmark ending, or dying).
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any

import orjson

from kubeloop.client import Client


async def copy_once(client: Client, source: dict[str, Any], target_ns: str, target_name: str) -> None:
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": target_name, "namespace": target_ns},
            "data": source.get("data") or {}}
    await client.apply(body, field_manager="bench-control-copier", force=True)


async def follow(client: Client, source_ns: str, name: str, target_ns: str, target_name: str) -> None:
    """Copies the source at once, then at every change; a closed watch is opened again from the last
    version seen (an expired one from a fresh read)."""
    current = await client.get("configmaps", name, source_ns)
    await copy_once(client, current, target_ns, target_name)
    print(orjson.dumps({"ready": True}).decode(), flush=True)
    version = current["metadata"]["resourceVersion"]
    while True:
        try:
            async for event in client.watch("configmaps", source_ns, resource_version=version,
                                            field_selector=f"metadata.name={name}"):
                obj = event["object"]
                version = obj["metadata"]["resourceVersion"]
                if event["type"] in ("ADDED", "MODIFIED"):
                    await copy_once(client, obj, target_ns, target_name)
        except Exception as exc:  # a 410 or a dropped stream: read again, copy, and go on watching
            print(f"control copier: watch ended ({exc}); reading again", file=sys.stderr, flush=True)
            current = await client.get("configmaps", name, source_ns)
            version = current["metadata"]["resourceVersion"]
            await copy_once(client, current, target_ns, target_name)


async def main(kubeconfig: str, source_ns: str, name: str, target_ns: str, target_name: str) -> None:
    async with await Client.from_kubeconfig(kubeconfig, qps=0) as client:
        task = asyncio.create_task(follow(client, source_ns, name, target_ns, target_name))
        try:
            await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)  # until the pipe closes
        finally:
            task.cancel()


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:6]))
