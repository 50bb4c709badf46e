"""Runs a module under cProfile with a CPU-time clock and writes the stats when it exits.

    python bench/cpuprofile.py OUT.pstats -m kubeloop.cli.main run ...
    python bench/cpuprofile.py OUT.pstats bench/contestants/ceiling.py ...

A CPU clock (``time.process_time``) rather than wall time, so that a busy machine (the API server
and the loader share the cores) does not blame whatever code was running when the process was
descheduled. Read with ``python -m pstats OUT.pstats`` or ``bench.cpuprofile.summary``.
"""

from __future__ import annotations

import cProfile
import io
import pstats
import runpy
import sys
import time
from pathlib import Path


def summary(path: str, limit: int = 40) -> str:
    out = io.StringIO()
    stats = pstats.Stats(path, stream=out)
    stats.sort_stats("tottime").print_stats(limit)
    stats.sort_stats("cumulative").print_stats(limit)
    return out.getvalue()


def main() -> None:
    out, target, *args = sys.argv[1:]
    if target == "-m":
        target, *args = args
        sys.argv = [target, *args]
        run = lambda: runpy.run_module(target, run_name="__main__", alter_sys=True)  # noqa: E731
    else:
        sys.argv = [target, *args]
        sys.path.insert(0, str(Path(target).resolve().parent))
        run = lambda: runpy.run_path(target, run_name="__main__")  # noqa: E731
    profiler = cProfile.Profile(time.process_time)
    profiler.enable()
    try:
        run()
    except SystemExit:
        pass
    finally:
        profiler.disable()
        profiler.dump_stats(out)
        with open(out + ".txt", "w") as fh:
            fh.write(summary(out))


if __name__ == "__main__":
    main()
