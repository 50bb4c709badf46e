"""Build progress: each step's duration is recorded, so the next build can say how long a step took
last time and how much is left, instead of printing nothing for minutes."""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO

HEARTBEAT = 15.0  # seconds between "still building" lines


class StepTimes:
    """Seconds each build step took last time, in a small JSON file in the cache."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def _read(self) -> dict[str, float]:
        try:
            data = json.loads(self.path.read_text())
        except (OSError, ValueError):
            return {}
        return {k: float(v) for k, v in data.items() if isinstance(v, int | float)} if isinstance(data, dict) else {}

    def get(self, step: str) -> float | None:
        return self._read().get(step)

    def record(self, step: str, seconds: float) -> None:
        data = self._read()
        data[step] = round(seconds, 1)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.path.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
        except OSError:
            pass  # estimates are a nicety: a read-only cache must not fail the build


def progress_line(what: str, elapsed: float, estimate: float | None) -> str:
    if not estimate:
        return f"still building {what}: {elapsed:.0f}s elapsed (no earlier build to estimate from)"
    left = estimate - elapsed
    if left > 0:
        return f"still building {what}: {elapsed:.0f}s elapsed, about {left:.0f}s left ({estimate:.0f}s last time)"
    return f"still building {what}: {elapsed:.0f}s elapsed, longer than last time ({estimate:.0f}s)"


def run_with_progress(argv: list[str], cwd: Path, env: dict[str, str], output: IO[str], what: str,
                      estimate: float | None, log: Callable[[str], None], heartbeat: float = HEARTBEAT) -> int:
    """Runs a build command with its output in ``output``, logging a progress line every ``heartbeat``
    seconds; returns its exit code."""
    started = time.monotonic()
    proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=output, stderr=subprocess.STDOUT, text=True)
    while True:
        try:
            return proc.wait(timeout=heartbeat)
        except subprocess.TimeoutExpired:
            log(progress_line(what, time.monotonic() - started, estimate))
