"""Runs a module under cProfile with a CPU-time clock and writes the stats when it exits.

    python harness/bench/cpuprofile.py OUT.pstats -m kubeloop.cli.main run ...
    python harness/bench/cpuprofile.py OUT.pstats harness/bench/contestants/ceiling.py ...

A CPU clock (``time.process_time``) rather than wall time, so that a busy machine (the API server
and the loader share the cores) does not blame whatever code was running when the process was
descheduled. Read with ``python -m pstats OUT.pstats`` or ``harness.bench.cpuprofile.summary``; the harness
stores ``breakdown`` of it with the run, and the report compares contestants with it.
"""

from __future__ import annotations

import cProfile
import io
import pstats
import runpy
import sys
import time
from importlib.util import find_spec
from pathlib import Path


def summary(path: str, limit: int = 40) -> str:
    out = io.StringIO()
    stats = pstats.Stats(path, stream=out)
    stats.sort_stats("tottime").print_stats(limit)
    stats.sort_stats("cumulative").print_stats(limit)
    return out.getvalue()


# Where self time is charged, first match wins: (part, substrings of the file name or of a built-in's name).
# Module bodies and the import machinery count as imports wherever the module lives; kubeloop and the
# contestants by their directories (a checkout may well live under a directory named kubeloop).
PARTS = (
    ("imports", ("importlib", "<frozen", "marshal.", "<module>")),
    ("contestant's own code", (str(Path(__file__).resolve().parent / "contestants") + "/",)),
    ("kubeloop", (str(Path(getattr(find_spec("kubeloop"), "origin", None) or "/kubeloop/_").parent) + "/",)),
    ("Kopf", ("/kopf/",)),
    ("prometheus_client (metrics)", ("/prometheus_client/",)),
    ("aiohttp", ("/aiohttp/",)),
    ("multidict, yarl (headers, URLs)", ("/multidict/", "/yarl/")),
    ("orjson (JSON)", ("orjson",)),
    ("TLS and sockets", ("ssl", "socket", "/selectors.py", "epoll")),
    ("asyncio event loop", ("/asyncio/", "_asyncio")),
)


def part_of(filename: str, funcname: str) -> str:
    where = funcname if funcname == "<module>" or filename == "~" else filename
    for part, needles in PARTS:
        if any(needle in where for needle in needles):
            return part
    return "other (stdlib, yaml, ...)"


def breakdown(path: str) -> dict[str, float]:
    """CPU seconds of self time per part (``PARTS``) of one profile, and ``total``: sums to the total."""
    stats = pstats.Stats(path).stats  # type: ignore[attr-defined]
    out: dict[str, float] = {}
    for (filename, _line, funcname), (_cc, _nc, tottime, _ct, _callers) in stats.items():
        part = part_of(filename, funcname)
        out[part] = out.get(part, 0.0) + tottime
    out["total"] = sum(out.values())
    return {k: round(v, 4) for k, v in out.items()}


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
