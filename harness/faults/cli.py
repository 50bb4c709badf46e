"""``python -m harness.faults``: runs the fault scenarios and regenerates docs/RELIABILITY.md.

python -m harness.faults                          # every scenario under 5 seeds, N=200 widgets,
                                                  # 10 SIGKILL points (own cluster)
python -m harness.faults --full                   # the full run: 100 SIGKILL points, longer storms
python -m harness.faults --scenarios sigkill,conflicts --n 50 --kills 5 --seed 7   # one seed
python -m harness.faults --seeds 1,2,3            # each scenario under these seeds (default:
                                                  # 1,7,42,1234,99999)
python -m harness.faults --kubeconfig PATH        # an existing 127.0.0.1 cluster; scenarios that restart or
                                                  # compact the control plane are skipped
python -m harness.faults --report-only            # re-render the report from the saved results
python -m harness.faults --list                   # the scenarios
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import sys
from pathlib import Path

from harness.common import provenance
from harness.common.flags import add_run_flags
from harness.faults import report, runner
from harness.faults.rig import Size

DEFAULT_RESULTS = Path(__file__).resolve().parent / "results" / "latest.json"
DEFAULT_DOC = provenance.REPO / "docs" / "RELIABILITY.md"


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m harness.faults", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--scenarios", help="comma-separated scenario names (default: all; see --list)")
    p.add_argument("--list", action="store_true", help="list the scenarios and exit")
    p.add_argument("--full", action="store_true", help="100 SIGKILL points, 60 s storms, N=300")
    p.add_argument("--n", type=int, help="widgets per scenario (default 200)")
    p.add_argument("--kills", type=int, help="SIGKILL points per kill scenario (default 10; --full 100)")
    p.add_argument("--bundled-n", type=int, help="objects per bundled-operator scenario (default 30)")
    p.add_argument("--storm-seconds", type=float, help="length of the update storms (default 12)")
    p.add_argument("--seeds", type=_seeds, default=list(runner.DEFAULT_SEEDS),
                   help="comma-separated seeds; every scenario runs once under each (default "
                        f"{','.join(map(str, runner.DEFAULT_SEEDS))}); a failure under any seed is a failure")
    p.add_argument("--seed", type=int, help="one seed only (the same as --seeds N)")
    p.add_argument("--timeout", type=float, default=180.0, help="convergence deadline after a fault (s)")
    add_run_flags(p, cluster_name="faults", results=DEFAULT_RESULTS, output=DEFAULT_DOC,
                  kubeconfig_note=" (127.0.0.1 only; what restarts or compacts it is skipped)")
    p.add_argument("-v", "--verbose", action="store_true")
    return p


# Where files go, not what runs: left out of the recorded invocation (and so of the committed report,
# which must not name this machine's paths).
_OUTPUT_FLAGS = {"--log-dir": True, "--results": True, "--output": True, "--no-report": False}


def invocation(argv: list[str]) -> str:
    """The command as run, less the flags that only say where output goes."""
    return provenance.invocation("python -m harness.faults", argv, _OUTPUT_FLAGS)


def _seeds(text: str) -> list[int]:
    try:
        seeds = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"--seeds takes comma-separated integers, e.g. 1,7,42; got {text!r}") from None
    if not seeds:
        raise argparse.ArgumentTypeError("--seeds needs at least one seed")
    return seeds


def seeds_from(args: argparse.Namespace) -> list[int]:
    return [args.seed] if args.seed is not None else args.seeds


def size_from(args: argparse.Namespace) -> Size:
    size = Size(seed=seeds_from(args)[0], timeout=args.timeout)
    if args.full:
        size.n, size.kills, size.storm_seconds, size.bundled_n = 300, 100, 60.0, 60
    size.n = args.n or size.n
    size.kills = args.kills if args.kills is not None else size.kills
    size.bundled_n = args.bundled_n or size.bundled_n
    size.storm_seconds = args.storm_seconds or size.storm_seconds
    return size


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    args = parser().parse_args(argv)
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.WARNING,
                        format="%(asctime)s %(name)s %(levelname)s %(message)s")
    if args.list:
        for spec in runner.all_specs():
            flag = " (own cluster only)" if spec.destructive else ""
            print(f"{spec.name:24} {'/'.join(spec.operators):20} {spec.fault}{flag}")
        return 0
    if args.report_only:
        data = json.loads(args.results.read_text())
    else:
        options = runner.Options(
            size=size_from(args), seeds=seeds_from(args),
            scenarios=[s.strip() for s in args.scenarios.split(",")] if args.scenarios else None,
            kubeconfig=args.kubeconfig, cluster_name=args.cluster_name, keep_cluster=args.keep_cluster,
            log_dir=args.log_dir, results=args.results,
            invocation=invocation(argv))
        data = asyncio.run(runner.run(options))
    if not args.no_report:
        report.write(data, args.output)
        print(f"faults: wrote {args.output}", file=sys.stderr)
    failed = [r for r in data["results"] if not r.get("ok")]
    return 1 if failed else 0
