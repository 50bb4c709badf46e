"""Where a process's CPU went, from a py-spy profile: ``python -m harness.bench.spysplit PROFILE CPU_S N``.

PROFILE is ``py-spy record -f raw`` output (collapsed stacks) of a whole contestant run; CPU_S its
measured CPU seconds (the run's ``cpu_s``), N its objects. Each sample is charged to the part its
innermost frame lives in (``PARTS``, first match wins); py-spy without ``--native`` charges time in C
(orjson, ssl) to the Python line that called it, which is how JSON decoding is told apart.

Samples whose innermost frame is the selector's ``select`` are dropped: py-spy counts part of the
event loop's wait for the network there as running (its samples then exceed the process's CPU time),
so the rest is scaled to the measured CPU seconds. The result is a split of CPU per object, not a
timing: it inherits the run's conditions (load, throughput).
"""

from __future__ import annotations

import argparse
from collections import Counter

PARTS = (
    ("JSON decode (orjson.loads call sites)", ("json_lines (", "transport.py:273)", "ceiling.py:106)",
                                               "ceiling.py:134)")),
    ("imports", ("<frozen importlib", "importlib/", "<module> (")),
    ("prometheus_client (metrics)", ("prometheus_client/",)),
    ("aiohttp (HTTP)", ("aiohttp/",)),
    ("multidict, yarl (headers, URLs)", ("multidict/", "yarl/")),
    ("TLS (ssl, asyncio sslproto)", ("(ssl.py", "sslproto.py")),
    ("asyncio event loop", ("asyncio/", "selectors.py")),
    ("kubeloop", ("kubeloop/",)),
    ("contestant's own code", ("contestants/",)),
)


def part_of(frame: str) -> str:
    for part, needles in PARTS:
        if any(needle in frame for needle in needles):
            return part
    return "other (stdlib, logging, click, ...)"


def split(path: str) -> tuple[Counter[str], int]:
    """Samples per part, and the samples dropped as the selector's wait."""
    parts: Counter[str] = Counter()
    waited = 0
    with open(path) as fh:
        for line in fh:
            stack, _, count = line.rstrip("\n").rpartition(" ")
            leaf = stack.rsplit(";", 1)[-1]
            if leaf.startswith("EpollSelector.select") or leaf.startswith("KqueueSelector.select"):
                waited += int(count)
            else:
                parts[part_of(leaf)] += int(count)
    return parts, waited


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="python -m harness.bench.spysplit", description=__doc__.splitlines()[0])
    p.add_argument("profile")
    p.add_argument("cpu_s", type=float)
    p.add_argument("n", type=int)
    args = p.parse_args(argv)
    parts, waited = split(args.profile)
    total = sum(parts.values())
    print(f"{total} samples ({waited} in select dropped); {1000 * args.cpu_s / args.n:.3f} ms CPU/object")
    for part, count in parts.most_common():
        print(f"| {part} | {100 * count / total:.1f} % | {1e6 * args.cpu_s * count / total / args.n:.0f} µs |")


if __name__ == "__main__":
    main()
