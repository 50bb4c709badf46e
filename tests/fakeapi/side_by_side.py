"""Times one typical operator test (timed_scenario.py) on the fake API server and on the real local control
plane, setup and teardown included, and prints both side by side::

    python tests/fakeapi/side_by_side.py            # KUBELOOP_SIDE_BY_SIDE_RUNS=5 repetitions per mode

The first real test's setup includes starting the control plane: it is shown apart, not in the median.
Needs the local control plane (kubeloop cluster build). Prints figures; asserts nothing about them.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
PLUGIN = '''
import json, os
PHASES = {}
def pytest_runtest_logreport(report):
    PHASES.setdefault(report.nodeid, {})[report.when] = report.duration
    if report.failed:
        PHASES[report.nodeid]["failed"] = True
def pytest_sessionfinish(session):
    with open(os.environ["SIDE_BY_SIDE_OUT"], "w") as out:
        json.dump(PHASES, out)
'''


def run(mode: str, tmp: Path) -> dict[str, dict[str, float]]:
    out = tmp / f"{mode}.json"
    (tmp / "sbs_timer.py").write_text(PLUGIN)
    args = [sys.executable, "-m", "pytest", str(HERE / "timed_scenario.py"), "-q", "-p", "no:cacheprovider",
            "-p", "sbs_timer"] + (["--real-cluster"] if mode == "real" else [])
    env = {**os.environ, "SIDE_BY_SIDE_OUT": str(out), "PYTHONPATH": f"{tmp}{os.pathsep}{ROOT}"}
    done = subprocess.run(args, cwd=ROOT, env=env, capture_output=True, text=True)
    if done.returncode:
        print(done.stdout[-3000:], done.stderr[-2000:], file=sys.stderr)
        raise SystemExit(f"{mode}: the scenario failed")
    return json.loads(out.read_text())


def summary(phases: dict[str, dict[str, float]]) -> tuple[float, list[float], dict[str, float]]:
    tests = list(phases.values())
    totals = [sum(p.get(w, 0.0) for w in ("setup", "call", "teardown")) for p in tests]
    rest = tests[1:] or tests
    parts = {w: statistics.median(p.get(w, 0.0) for p in rest) for w in ("setup", "call", "teardown")}
    return tests[0].get("setup", 0.0), totals, parts


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        results = {mode: summary(run(mode, Path(tmp))) for mode in ("fake", "real")}
    print(f"{'':22}{'fake':>10}{'real':>10}")
    for label, pick in (("first setup (s)", lambda r: r[0]),
                        ("median test (s)", lambda r: statistics.median(r[1][1:] or r[1])),
                        ("  of which setup", lambda r: r[2]["setup"]),
                        ("  of which call", lambda r: r[2]["call"]),
                        ("  of which teardown", lambda r: r[2]["teardown"]),
                        ("all runs (s)", lambda r: sum(r[1]))):
        print(f"{label:22}{pick(results['fake']):>10.2f}{pick(results['real']):>10.2f}")
    print(f"runs per mode: {len(results['fake'][1])}")


if __name__ == "__main__":
    main()
