"""``python -m harness.bench``: one command that runs the benchmark and regenerates docs/BENCHMARKS.md.

python -m harness.bench                          # the full run (N=1,000 and 5,000, 3 repeats)
python -m harness.bench --quick                  # N=200, 1 repeat, 10 s idle: a few minutes
python -m harness.bench --scale                  # adds N=20,000 and start-up with 50,000 cached
python -m harness.bench --report-only            # re-render the report from the saved results
python -m harness.bench --kubeconfig PATH ...    # against an existing cluster instead of its own
python -m harness.bench --admission              # admission webhooks: kubeloop vs a plain aiohttp no-op
python -m harness.bench --scale-out [--n 20000]   # 1, 2 and 4 replicas with --shards auto on one backlog
python -m harness.bench --noisy-neighbour        # one tenant's convergence beside another's worst input
python -m harness.bench --cached [--n 10000]     # Pods, ConfigMaps cached by kubeloop, controller-runtime, kube-rs
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path

from harness.bench import admission, cached, noisy, report, runner, scaleout, scenarios
from harness.bench.contestants import CONTESTANTS
from harness.common import provenance
from harness.common.flags import add_run_flags

DOCS = provenance.REPO / "docs"
DEFAULT_RESULTS = Path(__file__).resolve().parent / "results" / "latest.json"


def _csv(value: str) -> list[str]:
    return [v.strip() for v in value.split(",") if v.strip()]


def _ints(value: str) -> list[int]:
    return [int(v.replace("_", "")) for v in _csv(value)]


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m harness.bench", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--n", type=_ints, default=None,
                   help="object counts, comma-separated (default 1000,5000; 0: none)")
    p.add_argument("--repeats", type=int, default=None, help="repeats of every run (default 3)")
    p.add_argument(
        "--scenarios",
        type=_csv,
        default=None,
        help=f"of {','.join(scenarios.ALL)} (default backlog,stream,update,idle)",
    )
    p.add_argument(
        "--contestants",
        type=_csv,
        default=None,
        help=f"of {','.join(CONTESTANTS)} (default {','.join(runner.DEFAULT_CONTESTANTS)})",
    )
    p.add_argument(
        "--operators",
        type=_csv,
        default=[],
        help="bundled-operator scenarios too: names from harness/bench/operators.py, or 'all' available",
    )
    p.add_argument("--operator-n", type=int, help="object count of every operator scenario (default: its own)")
    p.add_argument("--quick", action="store_true", help="N=200, 1 repeat, 10 s idle (unless given)")
    p.add_argument(
        "--scale",
        action="store_true",
        help="also N=20,000 and the start-up scenario with --startup-n cached objects",
    )
    p.add_argument(
        "--idle-seconds", type=float, default=None, help="length of the idle scenario (default 60)"
    )
    p.add_argument("--startup-n", type=int, default=50_000, help="cached objects in the start-up scenario")
    p.add_argument("--loader-concurrency", type=int, default=32, help="requests in flight of the loader")
    p.add_argument(
        "--min-rate",
        type=float,
        default=10.0,
        help="objects/s under which a run counts as stuck (timeout = N / rate, at least 90 s)",
    )
    p.add_argument(
        "--profile",
        choices=["pyinstrument", "cprofile"],
        help="profile contestants, reports in the log directory: pyinstrument (wall clock, kubeloop "
        "only) or cprofile (CPU clock, every contestant; better on a busy machine)",
    )
    add_run_flags(p, cluster_name="bench", results=DEFAULT_RESULTS, output=DOCS / "BENCHMARKS.md")
    p.add_argument("--chart", type=Path, default=DOCS / "benchmarks.png", help="the chart (PNG)")
    p.add_argument("--append", action="store_true",
                   help="add this run's results to those already in --results (the report shows both)")
    admission.add_flags(p)
    scaleout.add_flags(p)
    noisy.add_flags(p)
    cached.add_flags(p)
    return p


def options_from(args: argparse.Namespace, argv: list[str]) -> runner.Options:
    n = args.n if args.n is not None else ([200] if args.quick else [1000, 5000])
    n = [x for x in n if x > 0]  # --n 0: no widget runs (e.g. only --operators or the start-up scenario)
    if args.scale and 20_000 not in n:
        n = [*n, 20_000]
    chosen = args.scenarios or ["backlog", "stream", "update", "idle"]
    if args.scale and "startup" not in chosen:
        chosen = [*chosen, "startup"]
    return runner.Options(
        n=n,
        repeats=args.repeats or (1 if args.quick else 3),
        scenarios=chosen,
        contestants=args.contestants or list(runner.DEFAULT_CONTESTANTS),
        idle_seconds=args.idle_seconds if args.idle_seconds is not None else (10.0 if args.quick else 60.0),
        startup_n=args.startup_n,
        operators=args.operators,
        operator_n=args.operator_n or (100 if args.quick and args.operators else None),
        kubeconfig=args.kubeconfig,
        cluster_name=args.cluster_name,
        keep_cluster=args.keep_cluster,
        loader_concurrency=args.loader_concurrency,
        min_rate=args.min_rate,
        profile=args.profile,
        log_dir=args.log_dir,
        results=args.results,
        append=args.append,
        # The invocation goes into the committed report: the home directory as ~, and no log directory
        # (a path of this machine that changes nothing measured).
        invocation=provenance.invocation("python -m harness.bench", argv, {"--log-dir": True}),
    )


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    args = parser().parse_args(argv)
    if args.admission:  # its own run and results file (harness/bench/admission.py)
        return admission.main(args)
    if args.scale_out:  # its own run and results file (harness/bench/scaleout.py)
        return scaleout.main(args)
    if args.noisy_neighbour:  # its own run and results file (harness/bench/noisy.py)
        return noisy.main(args)
    if args.cached:  # its own run and results file (harness/bench/cached.py)
        return cached.main(args)
    if args.report_only:
        data = json.loads(args.results.read_text())
    else:
        data = asyncio.run(runner.run(options_from(args, argv)))
    if not args.no_report:
        report.write(data, args.output, args.chart)
        print(f"wrote {args.output} and {args.chart}", file=sys.stderr)
    failed = [r for r in data["results"] if r.get("error")]
    return 1 if failed and len(failed) == len(data["results"]) else 0
