"""Plays a module's request sequences on the real control plane only, twice, for the author of a blind suite::

    python -m tests.differential.play_real tests.differential.sequences_blind3 <kubeconfig> [name ...] [--out F]

Each sequence runs in two fresh namespaces, one after the other; the normalised outcomes are printed step by
step, with ``UNSTABLE`` where the two runs differ (such a step cannot judge the fake: drop it or pick its
stable fields). ``--out`` writes the first run's normalised outcomes as JSON. The fake is never contacted,
so a suite written with this tool alone stays blind to it. The namespaces are deleted at the end."""

from __future__ import annotations

import argparse
import asyncio
import importlib
import json
from typing import Any

import aiohttp
import orjson

from kubeloop.client.config import Config
from tests.differential.conftest import _idle_nodes, _install_echo
from tests.differential.harness import Backend, differences, new_namespace, normalise, run


async def play(module: str, kubeconfig: str, names: list[str], out: str | None) -> int:
    sequences: dict[str, Any] = importlib.import_module(module).SEQUENCES
    chosen = names or list(sequences)
    unknown = [n for n in chosen if n not in sequences]
    if unknown:
        raise SystemExit(f"no such sequence(s) in {module}: {', '.join(unknown)}")
    unstable, saved, spaces = 0, {}, []
    async with aiohttp.ClientSession() as http:
        real = Backend("real", Config.from_kubeconfig(kubeconfig), http)
        await _install_echo(real)
        await _idle_nodes(real)
        for name in chosen:
            steps = sequences[name]
            runs = []
            for _ in range(2):
                ns = new_namespace()
                spaces.append(ns)
                runs.append(normalise(ns, await run(real, steps, ns)))
            diffs = differences(runs[0], runs[1], steps)
            unstable += len(diffs)
            saved[name] = runs[0]
            print(f"\n=== {name}: {len(steps)} steps, {len(diffs)} unstable")
            for i, (step, got) in enumerate(zip(steps, runs[0], strict=True)):
                flag = "UNSTABLE " if runs[0][i] != runs[1][i] else ""
                print(f"--- {flag}step {i} {step}\n    {orjson.dumps(got).decode()[:3000]}")
        for ns in spaces:
            await real.request("DELETE", f"/api/v1/namespaces/{ns}")
    if out:
        with open(out, "w") as f:
            json.dump(saved, f, indent=1)
    print(f"\n{len(chosen)} sequence(s), {unstable} unstable step(s)")
    return 1 if unstable else 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("module")
    parser.add_argument("kubeconfig")
    parser.add_argument("names", nargs="*")
    parser.add_argument("--out")
    args = parser.parse_args()
    raise SystemExit(asyncio.run(play(args.module, args.kubeconfig, args.names, args.out)))


if __name__ == "__main__":
    main()
