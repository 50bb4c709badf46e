"""A freshly scaffolded project's own tests pass out of the box, on the control plane under test."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import kubeloop
from kubeloop.scaffold import create_api, init_project
from kubeloop.testing.plugin import ENV_KEEP, ENV_KUBECONFIG


def test_scaffolded_project_tests_pass(kube_cluster: Any, tmp_path: Path) -> None:
    project = tmp_path / "scaffold-check"
    init_project("scaffold-check", project)
    create_api(project, "Gizmo")
    # The project imports the kubeloop under test (this checkout), not whichever one is installed.
    under_test = str(Path(kubeloop.__file__).resolve().parents[1])
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(project), under_test]), PYTHONDONTWRITEBYTECODE="1")
    if env.get(ENV_KEEP, "") in ("", "0", "false") and not env.get(ENV_KUBECONFIG):
        # This session's cluster is private to it: point the inner session at it instead of a new one.
        env[ENV_KUBECONFIG] = str(kube_cluster.kubeconfig)
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=project,
                          env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert "2 passed" in proc.stdout, proc.stdout[-2000:]
