"""CPU time and memory of a whole process tree, read from /proc (Linux only).

CPU is ``utime + stime`` of every live process in the tree plus ``cutime + cstime`` of the root
(children it has already reaped). RSS is the sum of ``VmRSS`` over the tree, sampled periodically;
the peak is the largest sample, or the root's ``VmHWM`` (the kernel's own high-water mark, which
catches spikes between samples) when that is larger.

TCP connections are the tree's established sockets (``/proc/PID/fd`` matched against the root's
``/proc/PID/net/tcp{,6}``), sampled every half second: the peak open at once, and every distinct
connection seen. A connection opened and closed between two samples is missed, so "seen" is a lower
bound of the connections a process opened.

``listener_pid`` finds the process listening on a TCP port (the local API server), so that its CPU
time can be read around each run the same way as a contestant's.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from dataclasses import dataclass
from pathlib import Path

CLK_TCK = os.sysconf("SC_CLK_TCK")


def _stat_fields(pid: int) -> list[str] | None:
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return text[text.rindex(")") + 2:].split()  # after "pid (comm) "; comm may hold spaces


def _status_kib(pid: int, field: str) -> int:
    with contextlib.suppress(OSError, ValueError, IndexError):
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def descendants(root: int) -> list[int]:
    """``root`` and every process below it (via /proc/PID/task/TID/children)."""
    out, todo = [], [root]
    while todo:
        pid = todo.pop()
        out.append(pid)
        with contextlib.suppress(OSError):
            for task in os.listdir(f"/proc/{pid}/task"):
                with contextlib.suppress(OSError, ValueError):
                    todo += [int(c) for c in Path(f"/proc/{pid}/task/{task}/children").read_text().split()]
    return out


def tree_cpu_seconds(root: int) -> float:
    ticks = 0
    for pid in descendants(root):
        fields = _stat_fields(pid)
        if fields is None:
            continue
        ticks += int(fields[11]) + int(fields[12])  # utime, stime
        if pid == root:
            ticks += int(fields[13]) + int(fields[14])  # cutime, cstime: reaped children
    return ticks / CLK_TCK


def tree_cpu_ns(root: int) -> int:
    """CPU time of every live thread in the tree, in nanoseconds (``/proc/PID/task/TID/schedstat``, the
    scheduler's own accounting): for short windows, where ``utime + stime`` in 10 ms ticks is too coarse.
    Reaped children are not counted."""
    total = 0
    for pid in descendants(root):
        with contextlib.suppress(OSError):
            for task in os.listdir(f"/proc/{pid}/task"):
                with contextlib.suppress(OSError, ValueError, IndexError):
                    total += int(Path(f"/proc/{pid}/task/{task}/schedstat").read_text().split()[0])
    return total


def tree_rss_mib(root: int) -> float:
    return sum(_status_kib(pid, "VmRSS") for pid in descendants(root)) / 1024


def hwm_mib(root: int) -> float:
    return sum(_status_kib(pid, "VmHWM") for pid in descendants(root)) / 1024


def _socket_inodes(pid: int) -> set[int]:
    out = set()
    with contextlib.suppress(OSError):
        for fd in os.listdir(f"/proc/{pid}/fd"):
            with contextlib.suppress(OSError):
                link = os.readlink(f"/proc/{pid}/fd/{fd}")
                if link.startswith("socket:["):
                    out.add(int(link[8:-1]))
    return out


def _established(root: int) -> set[int]:
    """Inodes of the established TCP sockets in the root's network namespace."""
    out = set()
    for table in ("tcp", "tcp6"):
        with contextlib.suppress(OSError):
            for line in Path(f"/proc/{root}/net/{table}").read_text().splitlines()[1:]:
                fields = line.split()
                if len(fields) > 9 and fields[3] == "01":  # 01: ESTABLISHED
                    out.add(int(fields[9]))
    return out


def _listening_inodes(port: int) -> set[int]:
    out = set()
    for table in ("tcp", "tcp6"):
        with contextlib.suppress(OSError):
            for line in Path(f"/proc/net/{table}").read_text().splitlines()[1:]:
                fields = line.split()
                if len(fields) > 9 and fields[3] == "0A" and int(fields[1].rsplit(":", 1)[1], 16) == port:
                    out.add(int(fields[9]))  # 0A: LISTEN
    return out


def listener_pid(port: int) -> int | None:
    """The process that holds a socket listening on TCP ``port`` here, or None (not local, or not
    visible to this user). Scans every process's descriptors: call it once, not per sample."""
    inodes = _listening_inodes(port)
    if not inodes:
        return None
    for entry in os.listdir("/proc"):
        if entry.isdigit() and _socket_inodes(int(entry)) & inodes:
            return int(entry)
    return None


def tree_tcp_connections(root: int) -> set[int]:
    """The established TCP connections (socket inodes) the process tree holds now."""
    held: set[int] = set()
    for pid in descendants(root):
        held |= _socket_inodes(pid)
    return held & _established(root) if held else set()


@dataclass
class Sample:
    cpu_s: float
    rss_mib: float
    peak_rss_mib: float
    tcp_peak: int = 0  # most established TCP connections open at once, so far
    tcp_seen: int = 0  # distinct TCP connections seen so far (a lower bound of those opened)


class TreeSampler:
    """Samples a process tree every ``interval`` seconds in the background; ``mark()`` reads it now.
    The peak is since the process started (VmHWM cannot be reset), which is what "peak RSS" means."""

    def __init__(self, root: int, interval: float = 0.1) -> None:
        self.root = root
        self.interval = interval
        self.peak_rss_mib = 0.0
        self.last_cpu_s = 0.0
        self.tcp_peak = 0
        self.tcp_seen: set[int] = set()
        self._ticks = 0
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.create_task(self._loop(), name=f"sampler {self.root}")

    async def stop(self) -> None:
        if self._task:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    def mark(self) -> Sample:
        rss = tree_rss_mib(self.root)
        cpu = tree_cpu_seconds(self.root)
        if cpu:
            self.last_cpu_s = cpu
        self.peak_rss_mib = max(self.peak_rss_mib, rss, hwm_mib(self.root))
        return Sample(self.last_cpu_s, rss, self.peak_rss_mib, self.tcp_peak, len(self.tcp_seen))

    def mark_tcp(self) -> None:
        conns = tree_tcp_connections(self.root)
        self.tcp_peak = max(self.tcp_peak, len(conns))
        self.tcp_seen |= conns

    async def _loop(self) -> None:
        while True:
            if self._ticks % 5 == 0:  # every 0.5 s: listing a process's sockets costs more than its RSS
                self.mark_tcp()
            self._ticks += 1
            self.mark()
            await asyncio.sleep(self.interval)
