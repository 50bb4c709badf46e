"""What a run's imports cost, in instructions: ``python -m harness.bench.imports``.

Each step is a fresh interpreter under ``valgrind --tool=callgrind`` importing one more group than
the step before, so the differences are each group's own cost. Instructions, not seconds: the count
repeats to well under 1 % whatever else the machine is doing (seconds at this size do not), which is
why the import figures in docs/PERFORMANCE.md come from here. Bytecode is compiled first (as pip does
at install), else the count is mostly the compiler.

The steps end with what ``kubeloop run`` imports for an operator on plain dicts, and then what an
operator with typed models (pydantic) adds; the first step is the Python ceiling's own imports.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

from harness.bench.runner import compile_bytecode

RUN = "kubeloop.cli.main, kubeloop.cli.run, kubeloop.cli.runner, kubeloop.manager.http"
STEPS: list[tuple[str, str]] = [
    ("the interpreter alone", "pass"),
    ("+ asyncio, ssl, aiohttp, orjson (the ceiling's imports)", "import asyncio, ssl, aiohttp, orjson"),
    ("+ yaml (a kubeconfig; not read in a cluster)", "import yaml"),
    ("+ click (the command line)", "import click"),
    ("+ what `kubeloop run` imports for an operator on plain dicts", f"import {RUN}"),
    ("+ a typed model (pydantic, the CRD generator)", "import kubeloop.resources.model"),
]


def instructions(code: str) -> int:
    """Instructions one interpreter spends running ``code``, counted by callgrind."""
    with tempfile.TemporaryDirectory() as tmp:
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        out = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={tmp}/cg.out",
                              sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    found = re.search(r"Collected : (\d+)", out.stderr)
    if found is None:
        raise RuntimeError(f"callgrind printed no count:\n{out.stderr[-2000:]}")
    return int(found.group(1))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=len(STEPS), help="measure only the first N steps")
    args = parser.parse_args(argv)
    if shutil.which("valgrind") is None:
        print("valgrind is not installed (apt-get install valgrind)", file=sys.stderr)
        return 2
    compile_bytecode()
    code, before = "", 0
    print("| imported | instructions, cumulative | the step |\n|---|---|---|")
    for label, statement in STEPS[:args.steps]:
        code = f"{code}\n{statement}" if code else statement
        total = instructions(code)
        print(f"| {label} | {total / 1e6:,.0f} M | {(total - before) / 1e6:+,.0f} M |", flush=True)
        before = total
    return 0


if __name__ == "__main__":
    sys.exit(main())
