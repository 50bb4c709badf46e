"""Runs the chosen scenarios against a cluster and collects their rows (saved after each scenario)."""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
import os
import platform
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from harness.common.cluster import cluster_for
from harness.common.provenance import dist_version, git_revision, save_json
from harness.faults.env import Env
from harness.faults.results import Row
from harness.faults.rig import Size

log = logging.getLogger("faults")


# The seeds of a default run: one lucky seed proves nothing, so every scenario runs under each.
DEFAULT_SEEDS = (1, 7, 42, 1234, 99999)


@dataclass
class Options:
    size: Size = field(default_factory=Size)
    seeds: list[int] = field(default_factory=lambda: list(DEFAULT_SEEDS))
    scenarios: list[str] | None = None  # None: all
    kubeconfig: str | None = None  # an existing cluster (destructive scenarios are skipped)
    cluster_name: str = "faults"
    keep_cluster: bool = False
    log_dir: Path | None = None
    results: Path | None = None
    invocation: str = "python -m harness.faults"
    scenario_timeout: float = 900.0
    say: Callable[[str], None] = field(default=lambda msg: print(f"faults: {msg}", file=sys.stderr, flush=True))


def all_specs() -> list[Any]:
    from harness.faults.bundled import BUNDLED_SCENARIOS
    from harness.faults.scenarios import WIDGET_SCENARIOS
    return [*WIDGET_SCENARIOS, *BUNDLED_SCENARIOS]


async def versions(env: Env) -> dict[str, Any]:
    from kubeloop.envtest import versions as pinned
    server = {}
    try:
        server = await env.admin.transport.request("GET", "/version")
    except Exception:  # noqa: BLE001 - informative only
        pass
    out = {"kubeloop": dist_version("kubeloop") or "?", "python": platform.python_version(),
           "aiohttp": dist_version("aiohttp") or "?", "kubernetes": server.get("gitVersion", "?"),
           "etcd": pinned.etcd_version() or pinned.ETCD_VERSION, "kwok": pinned.kwok_version()}
    return out


async def run(options: Options) -> dict[str, Any]:
    say = options.say
    specs = all_specs()
    if options.scenarios:
        unknown = set(options.scenarios) - {s.name for s in specs}
        if unknown:
            raise SystemExit(f"unknown scenarios: {', '.join(sorted(unknown))} (known: "
                             f"{', '.join(s.name for s in specs)})")
        specs = [s for s in specs if s.name in options.scenarios]
    log_dir = options.log_dir or Path(tempfile.mkdtemp(prefix="kubeloop-faults-"))
    say(f"operator logs go to {log_dir}")
    async with cluster_for(options.kubeconfig, options.cluster_name, keep=options.keep_cluster, log=say) as (
            cluster, own):
        env = await Env.connect(cluster, log_dir, destructive=own)
        try:
            return await _run_all(specs, env, options, log_dir, own)
        finally:
            await env.close()


async def _run_all(specs: list[Any], env: Env, options: Options, log_dir: Path, own: bool) -> dict[str, Any]:
    """Every chosen scenario under every seed; the results saved after each, so that a long run stopped
    half-way keeps what it measured."""
    data: dict[str, Any] = {"meta": {
        "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "invocation": options.invocation, "git": git_revision(), "versions": await versions(env),
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform()},
        "size": options.size.__dict__, "seeds": options.seeds,
        "cluster": "own LocalCluster" if own else "given kubeconfig",
    }, "results": []}
    for spec in specs:
        if spec.destructive and not env.destructive:
            options.say(f"{spec.name}: skipped (restarts or compacts the control plane: needs the harness's own "
                        "cluster)")
            continue
        for seed in options.seeds:
            rows = await _run_one(spec, env, replace(options.size, seed=seed), options, log_dir)
            data["results"].extend(row.to_dict() for row in rows)
            if options.results:
                save_json(data, options.results)
    return data


async def _run_one(spec: Any, env: Env, size: Size, options: Options, log_dir: Path) -> list[Row]:
    """One scenario under one seed; a scenario that raises is a failed row, and the run goes on."""
    say = options.say
    say(f"{spec.name} (seed {size.seed}): {spec.fault} ...")
    env.log_dir = log_dir / f"seed-{size.seed}"  # each seed's operator logs apart: counts are read from them
    env.log_dir.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    try:
        rows = await asyncio.wait_for(spec.run(env, size), options.scenario_timeout)
    except Exception as exc:  # noqa: BLE001 - a broken scenario is reported, the run goes on
        (log_dir / f"{spec.name}-seed{size.seed}.traceback").write_text(traceback.format_exc())
        rows = [Row(spec.name, ",".join(spec.operators), spec.fault, error=f"{type(exc).__name__}: {exc}"[:300],
                    seconds=round(time.monotonic() - started, 1))]
    for row in rows:
        row.seed = size.seed
        verdict = "ok" if row.ok else "FAILED"
        say(f"  {row.scenario} [{row.operator}]: {verdict}: {row.objects} objects, "
            f"{row.never_converged} never converged, {row.duplicates} duplicated, "
            f"p99 {_s(row.converge_p99_s)}, max {_s(row.converge_max_s)}, {row.restarts} restarts, "
            f"{row.crashes} crashes{'; ' + row.error if row.error else ''}")
    return rows


def _s(seconds: float | None) -> str:
    return "–" if seconds is None else f"{seconds:g}s"

