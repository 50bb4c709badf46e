"""Below HTTP: the kernel probes idle connections, so a network path that silently drops packets fails
a quiet watch in seconds rather than after its inactivity timeout (half-open watches).

The real check needs a path that drops packets, which loopback never does: it runs in a network
namespace of its own (``unshare -n``, root) whose loopback is taken down once the watch is open, so
nothing more reaches either end and neither end is told (no FIN, no RST)."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from kubeloop.client.config import Config
from kubeloop.client.transport import Transport

REPO = Path(__file__).resolve().parents[2]


def test_connections_are_opened_with_keepalive_and_a_user_timeout() -> None:
    transport = Transport(Config(server="http://127.0.0.1:1"), keepalive=(5, 3, 3, 15))
    sock = transport._socket((socket.AF_INET, socket.SOCK_STREAM, 0, "", ("127.0.0.1", 1)))
    try:
        assert sock.getsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE) == 1
        assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPIDLE) == 5
        assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPINTVL) == 3
        assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPCNT) == 3
        assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_USER_TIMEOUT) == 15000
    finally:
        sock.close()


SCRIPT = textwrap.dedent('''
    import asyncio, subprocess, time
    from kubeloop.client.config import Config
    from kubeloop.client.transport import Transport

    async def main():
        subprocess.run(["ip", "link", "set", "lo", "up"], check=True)

        async def serve(reader, writer):  # a watch: headers, one event, then quiet (but alive)
            await reader.readuntil(b"\\r\\n\\r\\n")
            writer.write(b"HTTP/1.1 200 OK\\r\\nContent-Type: application/json\\r\\n"
                         b"Transfer-Encoding: chunked\\r\\n\\r\\n")
            event = b'{"type":"BOOKMARK","object":{}}\\n'
            writer.write(b"%x\\r\\n%s\\r\\n" % (len(event), event))
            await writer.drain()
            await asyncio.sleep(3600)

        server = await asyncio.start_server(serve, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        transport = Transport(Config(server=f"http://127.0.0.1:{port}"), keepalive=(1, 1, 2, 3))
        first = asyncio.Event()

        async def follow():
            async for _ in transport.stream("/watch", {}, read_timeout=120):
                first.set()

        task = asyncio.create_task(follow())
        await asyncio.wait_for(first.wait(), 10)
        subprocess.run(["ip", "link", "set", "lo", "down"], check=True)
        started = time.monotonic()
        try:
            await asyncio.wait_for(task, 30)
            print("ENDED", round(time.monotonic() - started, 1))
        except asyncio.TimeoutError:
            print("STILL-OPEN")
        except Exception as exc:
            print("FAILED", round(time.monotonic() - started, 1), type(exc).__name__)

    asyncio.run(main())
''')


def _can_blackhole() -> str | None:
    if os.geteuid() != 0:
        return "needs root (a network namespace of its own)"
    for tool in ("unshare", "ip"):
        if shutil.which(tool) is None:
            return f"needs {tool}"
    probe = subprocess.run(["unshare", "-n", "true"], capture_output=True)
    return None if probe.returncode == 0 else "unshare -n is not allowed here"


def test_a_quiet_watch_on_a_path_that_drops_packets_fails_within_seconds() -> None:
    reason = _can_blackhole()
    if reason:
        pytest.skip(reason)
    env = dict(os.environ, PYTHONPATH=str(REPO))
    proc = subprocess.run(["unshare", "-n", sys.executable, "-c", SCRIPT], capture_output=True, text=True,
                          timeout=90, env=env, cwd=REPO)
    assert proc.returncode == 0, proc.stderr[-2000:]
    verdict = proc.stdout.split()
    # Keepalive 1 s idle + 2 probes 1 s apart: the kernel gives up after ~3 s, not the 120 s read timeout.
    assert verdict and verdict[0] in ("ENDED", "FAILED"), proc.stdout + proc.stderr[-2000:]
    assert float(verdict[1]) < 15, proc.stdout
