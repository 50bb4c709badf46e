"""An operator as a child process, the way both harnesses run one: its ``kubeloop run`` command line
on free loopback ports, stdin from /dev/null, stdout and stderr appended to one log file, stopped with
SIGTERM and, past a grace period, SIGKILL.

Why a process and not a task in the harness's loop: the figures (CPU, RSS, what a SIGKILL loses) are
the operator's own only if it has its own interpreter, as it has in a cluster.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import socket
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now (the OS picks it)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def kubeloop_run(target: str, kubeconfig: str | Path, *args: str, metrics_port: int | None = None,
                 probe_port: int | None = None) -> list[str]:
    """``kubeloop run TARGET`` with this interpreter, its metrics and health probes on loopback ports
    (free ones unless given: several operators run side by side on one machine)."""
    metrics_port = metrics_port or free_port()
    probe_port = probe_port or free_port()
    return [sys.executable, "-m", "kubeloop.cli.main", "run", target, "--kubeconfig", str(kubeconfig),
            "--metrics-bind-address", f"127.0.0.1:{metrics_port}",
            "--health-probe-bind-address", f"127.0.0.1:{probe_port}", *args]


class ChildProcess:
    """One child process at a time, its output in ``log_path`` (appended: a restarted process writes
    below its predecessor)."""

    def __init__(self, log_path: Path) -> None:
        self.log_path = log_path
        self.proc: asyncio.subprocess.Process | None = None
        self.started_at = 0.0  # time.monotonic() just before the exec: when a measurement from start begins

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc else None

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.returncode is None

    async def spawn(self, argv: Sequence[str], env: Mapping[str, str], *, header: str,
                    cwd: Path | None = None) -> float:
        """Starts ``argv`` after writing ``header`` to the log; returns ``started_at``."""
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        with self.log_path.open("ab") as log:
            log.write(header.encode())
            log.flush()  # before the child writes to the same file
            self.started_at = time.monotonic()
            self.proc = await asyncio.create_subprocess_exec(
                *argv, stdin=asyncio.subprocess.DEVNULL, stdout=log, stderr=log, env=dict(env),
                cwd=str(cwd) if cwd else None)
        return self.started_at

    def send(self, sig: int) -> None:
        """Sends ``sig`` if the process still runs (it may exit at any moment: no error if it has)."""
        if self.proc is not None and self.proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                self.proc.send_signal(sig)

    async def terminate(self, grace: float = 20.0) -> None:
        """SIGTERM, then SIGKILL if it has not exited after ``grace`` seconds; returns once it has exited."""
        if self.proc is None or self.proc.returncode is not None:
            return
        self.send(signal.SIGTERM)
        try:
            await asyncio.wait_for(self.proc.wait(), grace)
        except TimeoutError:
            self.send(signal.SIGKILL)
            await self.proc.wait()

    def log_text(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")
        except OSError:
            return ""

    def tail(self, lines: int = 15) -> str:
        """The last ``lines`` lines of the log, for an error message."""
        return "\n".join(self.log_text().splitlines()[-lines:])
