"""``python -m harness.bench.control_webhook``: a no-op admission webhook in a process of its own, the
noisy-neighbour benchmark's control.

The benchmark registers it beside copyrator's webhook, for the same CopyratorRule writes, so that the API
server times both in one run: what the API server and the shared machine cost a webhook that does
nothing else (no operator in its process, no GIL to share) against what copyrator's costs. It is the
ceiling server of the admission benchmark (:class:`harness.bench.admission_servers.CeilingServer`, plain
aiohttp, allowed, no patch) listening on 127.0.0.1 with a certificate of its own.

Prints one JSON line, ``{"port": ..., "ca_bundle": <base64 PEM>}``, once it listens; stops when its
standard input closes (the benchmark ending, or dying).
"""

from __future__ import annotations

import asyncio
import sys

import orjson

from harness.bench.admission_servers import PATHS, CeilingServer
from kubeloop.webhooks import WebhookCerts

PATH = PATHS[0]  # the validating route the benchmark registers


async def serve() -> None:
    certs = WebhookCerts()
    server = CeilingServer(certs)
    await server.start()
    print(orjson.dumps({"port": server.port, "ca_bundle": certs.ca_bundle_b64}).decode(), flush=True)
    loop = asyncio.get_running_loop()
    try:
        await loop.run_in_executor(None, sys.stdin.read)  # until the benchmark closes the pipe
    finally:
        await server.stop()
        certs.close()


if __name__ == "__main__":
    asyncio.run(serve())
