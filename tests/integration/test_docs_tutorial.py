"""The tutorial (docs/tutorial/), run as a reader would: every shell block is a file under
docs/tutorial/shell/ and every Python file is one under docs/tutorial/website/; the pages include
them, and this test runs them in that order on the control plane under test, so the tutorial cannot
drift from what kubeloop does."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from kubeloop.testing.plugin import ENV_KEEP, ENV_KUBECONFIG

# A pytest session in a subprocess (its own limit is 600 s): beyond the default 300 s per test.
pytestmark = pytest.mark.time_limit(900)

TUTORIAL = Path(__file__).resolve().parents[2] / "docs" / "tutorial"
SHELL = TUTORIAL / "shell"
CODE = TUTORIAL / "website"


def _shims(bin_dir: Path) -> None:
    """`kubeloop` and `python` on PATH as a reader's virtualenv has them, for this interpreter."""
    bin_dir.mkdir()
    for name, module in (("kubeloop", "-m kubeloop.cli.main"), ("python", "")):
        shim = bin_dir / name
        shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" {module} "$@"\n')
        shim.chmod(0o755)


def _env(tmp_path: Path, project: Path, cluster: Any) -> dict[str, str]:
    _shims(tmp_path / "bin")
    repo = str(TUTORIAL.parents[1])
    env = dict(os.environ, PATH=f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}",
               PYTHONPATH=os.pathsep.join([str(project), repo]), PYTHONDONTWRITEBYTECODE="1",
               KUBECONFIG=str(cluster.kubeconfig))
    if env.get(ENV_KEEP, "") in ("", "0", "false") and not env.get(ENV_KUBECONFIG):
        # This session's cluster is private to it: the project's own test session uses it too.
        env[ENV_KUBECONFIG] = str(cluster.kubeconfig)
    return env


def _step(script: str, cwd: Path, env: dict[str, str], timeout: float = 300) -> str:
    proc = subprocess.run(["bash", "-euo", "pipefail", str(SHELL / script)], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, f"{script} failed:\n{proc.stdout[-4000:]}\n{proc.stderr[-3000:]}"
    return proc.stdout


def _replace_generated_files(project: Path) -> None:
    """The tutorial's pages say "replace FILE with": each of its files must stand where `kubeloop init`
    put one, or the page would be telling the reader to edit a file they do not have."""
    for source in sorted(p for p in CODE.rglob("*.py") if "__pycache__" not in p.parts):
        target = project / source.relative_to(CODE)
        assert target.is_file(), f"the tutorial replaces {target.relative_to(project)}, which init did not make"
        shutil.copyfile(source, target)


def test_tutorial_runs_as_written(kube_cluster: Any, tmp_path: Path) -> None:
    project = tmp_path / "website"
    env = _env(tmp_path, project, kube_cluster)

    # 1. kubeloop init: the files it prints are the ones the tutorial lists.
    assert _step("init.sh", tmp_path, env) == (SHELL / "init.out").read_text()

    # 2-4. The model, the reconciler and the test; the project's own test passes on the cluster.
    _replace_generated_files(project)
    out = _step("test.sh", project, env, timeout=600)
    assert "1 passed" in out, out[-2000:]

    # 5. Manifests and chart, then deploy and undeploy on the same cluster.
    out = _step("generate.sh", project, env)
    assert "name: websites.tutorial.kubeloop.dev" in out
    assert (project / "config" / "kustomization.yaml").is_file()
    assert (project / "charts" / "website" / "Chart.yaml").is_file()
    try:
        out = _step("deploy.sh", project, env)
        assert "CustomResourceDefinition websites.tutorial.kubeloop.dev established" in out, out
        deployment = kube_cluster.kubectl("get", "-n", "website-system", "deployment", "website",
                                          "-o", "jsonpath={.spec.template.spec.containers[0].image}")
        assert deployment.stdout == "registry.example.com/website:0.1.0"
    finally:
        _step("undeploy.sh", project, env)
    crd = kube_cluster.kubectl("get", "crd", "websites.tutorial.kubeloop.dev", check=False)
    assert crd.returncode != 0, "undeploy --delete-crds left the CRD"
