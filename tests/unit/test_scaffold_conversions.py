"""A project made by ``kubeloop init`` carries a round-trip test of its conversions: with none declared it
runs no case; once the operator declares one, the project's own pytest run checks it, passing for a
conversion that keeps every field and failing for one that loses a field."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import kubeloop
from kubeloop.scaffold import init_project

# A v1alpha1 that called the v1 hub's spec.message "text"; appended to the scaffolded models.py.
SPOKE = '''

class ConvAlphaSpec(BaseModel):
    text: str = Field(min_length=1)


class ConvAlpha(CustomResource, group="conv-check.example.com", version="v1alpha1", kind="ConvCheck"):
    spec: ConvAlphaSpec
    status: ConvCheckStatus | None = None
'''

# Appended to reconcile.py; LOSE is replaced by what from_hub does with the status.
CONVERSION = '''

from conv_check.models import ConvAlpha  # noqa: E402


def to_hub(old: ConvAlpha) -> ConvCheck:
    data = old.to_dict()
    data["spec"] = {"message": data["spec"].pop("text")}
    return ConvCheck.model_validate(data)


def from_hub(hub: ConvCheck) -> ConvAlpha:
    data = hub.to_dict()
    data["spec"] = {"text": data["spec"].pop("message")}
    LOSE
    return ConvAlpha.model_validate(data)


operator.convert(ConvCheck, spokes={ConvAlpha: (to_hub, from_hub)})
'''


def project_pytest(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    under_test = str(Path(kubeloop.__file__).resolve().parents[1])
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(project), under_test]), PYTHONDONTWRITEBYTECODE="1")
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args], cwd=project,
                          env=env, capture_output=True, text=True, timeout=300)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "conv-check"
    init_project("conv-check", root)
    assert (root / "tests" / "test_conversions.py").is_file()
    return root


def test_without_conversions_the_test_runs_no_case(project: Path) -> None:
    proc = project_pytest(project, "tests/test_conversions.py")
    assert proc.returncode == 0 and "1 skipped" in proc.stdout, proc.stdout + proc.stderr


@pytest.mark.parametrize(("lose", "passes"), [("pass", True), ('data["status"].pop("configMap", None)', False)])
def test_a_declared_conversion_is_round_tripped(project: Path, lose: str, passes: bool) -> None:
    pkg = project / "conv_check"
    (pkg / "models.py").write_text((pkg / "models.py").read_text() + SPOKE)
    (pkg / "reconcile.py").write_text((pkg / "reconcile.py").read_text() + CONVERSION.replace("LOSE", lose))
    proc = project_pytest(project, "tests/test_conversions.py")
    out = proc.stdout + proc.stderr
    if passes:
        assert proc.returncode == 0 and "1 passed" in out, out
    else:
        assert proc.returncode == 1 and "1 failed" in out, out
        assert "hub -> conv-check.example.com/v1alpha1 -> hub changed the object" in out, out
