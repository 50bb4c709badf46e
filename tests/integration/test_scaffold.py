"""A freshly scaffolded project's own tests pass out of the box: on kubeloop's in-process fake API server
by default (no cluster at all), and with ``--real-cluster`` on the control plane under test."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

import kubeloop
from kubeloop.scaffold import create_api, init_project
from kubeloop.testing.plugin import ENV_KEEP, ENV_KUBECONFIG
from kubeloop.testing.target import ENV_REAL

# A pytest session in a subprocess (its own limit is 600 s): beyond the default 300 s per test.
pytestmark = pytest.mark.time_limit(900)


def scaffold(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    project = tmp_path / "scaffold-check"
    init_project("scaffold-check", project)
    create_api(project, "Gizmo")
    # The project imports the kubeloop under test (this checkout), not whichever one is installed.
    under_test = str(Path(kubeloop.__file__).resolve().parents[1])
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(project), under_test]), PYTHONDONTWRITEBYTECODE="1")
    env.pop(ENV_REAL, None)
    return project, env


def run_pytest(project: Path, env: dict[str, str], *args: str) -> str:
    started = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args], cwd=project,
                          env=env, capture_output=True, text=True, timeout=600)
    print(f"the scaffold's tests {' '.join(args) or '(fake)'}: {time.perf_counter() - started:.1f}s of wall time")
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    return proc.stdout


def test_scaffolded_project_tests_pass_on_the_fake_by_default(tmp_path: Path) -> None:
    project, env = scaffold(tmp_path)
    # A cluster the tests must not touch: if the default mode used one, the session would fail on this.
    env[ENV_KUBECONFIG] = str(tmp_path / "no-such-kubeconfig")
    assert "2 passed" in run_pytest(project, env)


def test_scaffolded_project_tests_pass_on_the_real_cluster(kube_cluster: Any, tmp_path: Path) -> None:
    project, env = scaffold(tmp_path)
    if env.get(ENV_KEEP, "") in ("", "0", "false") and not env.get(ENV_KUBECONFIG):
        # This session's cluster is private to it: point the inner session at it instead of a new one.
        env[ENV_KUBECONFIG] = str(kube_cluster.kubeconfig)
    assert "2 passed" in run_pytest(project, env, "--real-cluster")
