"""Runs the chosen scenarios against a cluster and collects their rows (saved after each scenario)."""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import logging
import os
import platform
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from importlib import metadata
from pathlib import Path
from typing import Any

from harness.faults.env import REPO, Env
from harness.faults.results import Row
from harness.faults.rig import Size

log = logging.getLogger("faults")


# The seeds of a default run: one lucky seed proves nothing (issue 24), so every scenario runs under each.
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


def _git() -> str:
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True,
                              timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=REPO,
                               capture_output=True, text=True, timeout=10).stdout.strip()
        return head + (" (with uncommitted changes)" if dirty else "")
    except (OSError, subprocess.SubprocessError):
        return "unknown"


async def versions(env: Env) -> dict[str, Any]:
    from kubeloop.envtest import versions as pinned
    server = {}
    try:
        server = await env.admin.transport.request("GET", "/version")
    except Exception:  # noqa: BLE001 - informative only
        pass
    out = {"kubeloop": _dist_version("kubeloop"), "python": platform.python_version(),
           "aiohttp": _dist_version("aiohttp"), "kubernetes": server.get("gitVersion", "?"),
           "etcd": pinned.etcd_version() or pinned.ETCD_VERSION, "kwok": pinned.kwok_version()}
    return out


def _dist_version(name: str) -> str:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "?"


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
    cluster: Any
    own = options.kubeconfig is None
    if own:
        from kubeloop.envtest import LocalCluster
        cluster = LocalCluster(options.cluster_name, log=say)
        await asyncio.to_thread(cluster.up)
    else:
        from kubeloop.envtest import ExternalCluster
        cluster = ExternalCluster(options.kubeconfig)  # type: ignore[arg-type]
    env = await Env.connect(cluster, log_dir, destructive=own)
    data: dict[str, Any] = {"meta": {}, "results": []}
    try:
        data["meta"] = {
            "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
            "invocation": options.invocation, "git": _git(), "versions": await versions(env),
            "machine": {"cpus": os.cpu_count(), "platform": platform.platform()},
            "size": options.size.__dict__, "seeds": options.seeds,
            "cluster": "own LocalCluster" if own else "given kubeconfig",
        }
        for spec in specs:
            if spec.destructive and not env.destructive:
                say(f"{spec.name}: skipped (restarts or compacts the control plane: needs the harness's own cluster)")
                continue
            for seed in options.seeds:
                rows = await _run_one(spec, env, replace(options.size, seed=seed), options, log_dir)
                data["results"].extend(row.to_dict() for row in rows)
                if options.results:
                    save(data, options.results)
    finally:
        await env.close()
        if own and not options.keep_cluster:
            await asyncio.to_thread(cluster.down, True)
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


def save(data: dict[str, Any], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1, default=str) + "\n")
