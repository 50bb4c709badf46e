"""CPU time and memory of a whole process tree, read from /proc (Linux only).

CPU is ``utime + stime`` of every live process in the tree plus ``cutime + cstime`` of the root
(children it has already reaped). RSS is the sum of ``VmRSS`` over the tree, sampled periodically;
the peak is the largest sample, or the root's ``VmHWM`` (the kernel's own high-water mark, which
catches spikes between samples) when that is larger.
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


def tree_rss_mib(root: int) -> float:
    return sum(_status_kib(pid, "VmRSS") for pid in descendants(root)) / 1024


def hwm_mib(root: int) -> float:
    return sum(_status_kib(pid, "VmHWM") for pid in descendants(root)) / 1024


@dataclass
class Sample:
    cpu_s: float
    rss_mib: float
    peak_rss_mib: float


class TreeSampler:
    """Samples a process tree every ``interval`` seconds in the background; ``mark()`` reads it now.
    The peak is since the process started (VmHWM cannot be reset), which is what "peak RSS" means."""

    def __init__(self, root: int, interval: float = 0.1) -> None:
        self.root = root
        self.interval = interval
        self.peak_rss_mib = 0.0
        self.last_cpu_s = 0.0
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
        return Sample(self.last_cpu_s, rss, self.peak_rss_mib)

    async def _loop(self) -> None:
        while True:
            self.mark()
            await asyncio.sleep(self.interval)
