"""Helm chart, Dockerfile, deploy and helm-build pieces that need no cluster and no helm binary."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from pydantic import BaseModel

from kubeloop import Context, Operator
from kubeloop.cli.generate import manifests, run_args
from kubeloop.cli.main import main
from kubeloop.cli.run import load_operator
from kubeloop.envtest.versions import Layout
from kubeloop.packaging import chart, deploy, dockerfile, helm
from kubeloop.resources import CustomResource, crds_for
from kubeloop.resources.builtin import CONFIG_MAP


class WidgetSpec(BaseModel):
    size: int = 1


class WidgetStatus(BaseModel):
    observedGeneration: int | None = None


class Widget(CustomResource, group="packaging.test.kubeloop.dev", version="v1", kind="Widget"):
    spec: WidgetSpec
    status: WidgetStatus | None = None


widgets = Operator("widgets")


@widgets.reconcile(Widget, owns=[CONFIG_MAP])
async def reconcile(obj: Widget, ctx: Context) -> None:  # pragma: no cover - never run here
    pass


TARGET = f"{__name__}:widgets"


def objs(image: str | None = None, replicas: int = 1) -> list[dict[str, Any]]:
    return manifests(TARGET, widgets, "widgets-system", image, replicas)


# --- chart -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(("image", "expected"), [
    ("ghcr.io/x/op:1.2", ("ghcr.io/x/op", "1.2", "")),
    ("localhost:5000/op", ("localhost:5000/op", "", "")),
    ("localhost:5000/op:v1", ("localhost:5000/op", "v1", "")),
    ("op@sha256:abc", ("op", "", "sha256:abc")),
    ("op:1@sha256:abc", ("op", "1", "sha256:abc")),
])
def test_split_image(image: str, expected: tuple[str, str, str]) -> None:
    assert chart.split_image(image) == expected


def test_chart_layout_values_and_crds(tmp_path: Path) -> None:
    written = chart.write_chart(tmp_path, "widgets", objs("reg.example/widgets:0.3", replicas=2))
    rel = sorted(str(p.relative_to(tmp_path)) for p in written)
    assert rel == [".helmignore", "Chart.yaml", "crds/widgets.packaging.test.kubeloop.dev.yaml",
                   "templates/NOTES.txt", "templates/_helpers.tpl", "templates/deployment.yaml",
                   "templates/rbac.yaml", "templates/service.yaml", "templates/serviceaccount.yaml",
                   "templates/servicemonitor.yaml", "values.yaml"]
    meta = yaml.safe_load((tmp_path / "Chart.yaml").read_text())
    assert meta["apiVersion"] == "v2" and meta["name"] == "widgets" and meta["appVersion"] == "0.3"
    values = yaml.safe_load((tmp_path / "values.yaml").read_text())
    assert values["image"] == {"repository": "reg.example/widgets", "tag": "", "digest": "",
                               "pullPolicy": "IfNotPresent"}
    assert values["replicaCount"] == 2 and values["leaderElection"] == {"enabled": True}
    assert values["rbac"]["create"] is True and values["serviceAccount"]["name"] == ""
    assert values["metrics"]["serviceMonitor"]["enabled"] is False
    assert values["metrics"]["service"]["enabled"] is True
    deployment = next(o for o in objs() if o["kind"] == "Deployment")
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    # the chart's defaults are the generated Deployment's
    assert values["resources"] == container["resources"]
    assert values["livenessProbe"] == container["livenessProbe"]
    assert values["securityContext"] == container["securityContext"]
    assert values["podSecurityContext"]["runAsUser"] == 65532
    crd = yaml.safe_load((tmp_path / "crds/widgets.packaging.test.kubeloop.dev.yaml").read_text())
    assert crd == crds_for([Widget])[0]
    for path in written:  # every placeholder was filled in
        assert not re.search(r"@[A-Z_]+@", path.read_text()), path


def test_chart_templates_carry_the_generated_rules_and_run_args(tmp_path: Path) -> None:
    chart.write_chart(tmp_path, "widgets", objs())
    rbac = (tmp_path / "templates/rbac.yaml").read_text()
    cluster_role = next(o for o in objs() if o["kind"] == "ClusterRole")
    assert yaml.safe_dump(cluster_role["rules"], sort_keys=True) in rbac
    # no other namespaced rules: the Role exists only for leader election or sharding
    assert rbac.count("{{- if (or .Values.leaderElection.enabled .Values.sharding.enabled) }}") == 1
    assert rbac.count("{{- if .Values.leaderElection.enabled }}") == 1
    deployment = (tmp_path / "templates/deployment.yaml").read_text()
    assert f'            - "run"\n            - "{TARGET}"\n' in deployment
    assert '"--leader-elect"' not in deployment and "- --leader-elect" in deployment
    helpers = (tmp_path / "templates/_helpers.tpl").read_text()
    assert 'define "widgets.fullname"' in helpers


def test_regenerating_a_chart_drops_stale_crds(tmp_path: Path) -> None:
    chart.write_chart(tmp_path, "widgets", objs())
    (tmp_path / "crds/old.yaml").write_text("{}")
    chart.write_chart(tmp_path, "widgets", objs())
    assert not (tmp_path / "crds/old.yaml").exists()


def test_generate_chart_needs_an_output_dir() -> None:
    result = CliRunner().invoke(main, ["generate", "chart", TARGET])
    assert result.exit_code != 0 and "-o DIR" in result.output


# --- dockerfile ------------------------------------------------------------------------------------


def stages(text: str) -> list[list[tuple[str, str]]]:
    """Instructions per FROM stage (the first item: what comes before any FROM), continuation lines
    joined, comments dropped."""
    joined = re.sub(r"\\\n", " ", text)
    out: list[list[tuple[str, str]]] = [[]]
    for line in joined.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        op, _, arg = line.partition(" ")
        if op.upper() == "FROM":
            out.append([])
        out[-1].append((op.upper(), arg.strip()))
    return out


def test_dockerfile_is_multi_stage_non_root_and_runs_the_target() -> None:
    preamble, builder, final = stages(dockerfile.dockerfile(TARGET))
    # the base is a build argument whose default is the slim Python image
    assert preamble == [("ARG", "BASE_IMAGE=python:3.12-slim")]
    assert builder[0] == ("FROM", "${BASE_IMAGE} AS builder")
    assert any(op == "RUN" and "pip wheel" in arg for op, arg in builder)
    # a private index is a builder-stage argument: it never reaches the final image
    assert {arg for op, arg in builder if op == "ARG"} == {"PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_FIND_LINKS"}
    assert final[0] == ("FROM", "${BASE_IMAGE}")
    assert not [arg for op, arg in final if op == "ARG"]
    # the final stage copies what the builder installed (a copy is cached by content, by any builder)
    venv = dockerfile.VENV
    assert ("COPY", f"--from=builder {venv} {venv}") in final
    assert any(op == "RUN" and f"pip --python {venv}/bin/python install" in arg and "--no-index" in arg
               for op, arg in builder)
    text = " ".join(arg for _, arg in final)
    assert not re.search(r"gcc|build-essential|apt-get", text)
    ops = dict(final)
    assert "HEALTHCHECK" not in ops
    user = ops["USER"].split(":")
    assert all(part.isdigit() and int(part) != 0 for part in user)
    assert ops["EXPOSE"].split() == ["8080", "8081"]
    assert json.loads(ops["ENTRYPOINT"]) == ["kubeloop"]
    cmd = json.loads(ops["CMD"])
    assert cmd[0] == "run" and cmd[2:] == ["--leader-elect"]
    assert load_operator(cmd[1]) is widgets


def test_dockerfile_refuses_file_targets(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="module path"):
        dockerfile.dockerfile("echo.py")
    written = dockerfile.write_dockerfile(tmp_path, TARGET)
    assert [p.name for p in written] == ["Dockerfile", ".dockerignore"]
    assert ".git" in (tmp_path / ".dockerignore").read_text().split()


def test_run_args_keep_a_module_target_importable() -> None:
    assert run_args(TARGET, widgets) == ["run", TARGET, "--leader-elect"]
    assert run_args("op.py", widgets) == ["run", "widgets", "--leader-elect"]


# --- deploy ----------------------------------------------------------------------------------------


def test_deploy_order_and_ownership() -> None:
    kinds = [o["kind"] for o in sorted(objs(), key=deploy._rank)]
    assert kinds[:2] == ["Namespace", "CustomResourceDefinition"] and kinds[-1] == "Deployment"
    ours = {"metadata": {"managedFields": [{"manager": "kubectl"}, {"manager": deploy.FIELD_MANAGER}]}}
    assert deploy.deployed_by_us(ours)
    assert not deploy.deployed_by_us({"metadata": {"managedFields": [{"manager": "kubectl"}]}})
    assert deploy.describe({"kind": "Role", "metadata": {"name": "r", "namespace": "n"}}) == "Role n/r"


def test_cli_lists_the_new_commands() -> None:
    result = CliRunner().invoke(main, ["--help"])
    for name in ("deploy", "undeploy", "init", "create"):
        assert re.search(rf"^\s+{name}\s", result.output, re.MULTILINE), result.output
    assert "--delete-crds" in CliRunner().invoke(main, ["undeploy", "--help"]).output


# --- helm build ------------------------------------------------------------------------------------


def test_helm_is_cached_per_version(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    layout = Layout(tmp_path)
    monkeypatch.delenv(helm.ENV_HELM_VERSION, raising=False)
    assert helm.helm_version() == helm.HELM_VERSION
    assert helm.helm_version("v3.16.4") == "3.16.4"
    assert helm.helm_dir("3.16.4", layout) == tmp_path / "bin" / "helm-3.16.4"
    assert helm.cached_helm("3.16.4", layout) is None
    out = helm.helm_dir("3.16.4", layout)
    out.mkdir(parents=True)
    (out / "helm").write_text("#!/bin/sh\n")
    (out / "helm").chmod(0o755)
    (out / ".kubeloop-stamp.json").write_text(json.dumps({"component": "helm", "version": "3.16.4",
                                                                   "recipe": helm.RECIPE}))
    assert helm.cached_helm("3.16.4", layout) == out / "helm"
    assert helm.ensure_helm("3.16.4", layout=layout) == out / "helm"  # no Go involved
    flags = helm.helm_ldflags("3.16.4", "v0.31.3")
    assert "internal/version.version=v3.16.4" in flags and "chartutil.k8sVersionMinor=31" in flags
    assert "k8sVersion" not in helm.helm_ldflags("3.16.4", None)


@pytest.mark.parametrize("name", ["immortal", "blackadder", "copyrator", "reloader"])
def test_bundled_operator_dockerfiles_run_a_loadable_target(name: str) -> None:
    import kubeloop.operators

    # The bundled operators land concurrently: one without its package yet is skipped.
    if not (Path(kubeloop.operators.__file__).parent / name / "__init__.py").exists():
        pytest.skip(f"kubeloop.operators.{name} does not exist yet")
    result = CliRunner().invoke(main, ["generate", "dockerfile", name])
    assert result.exit_code == 0, result.output
    cmd = json.loads(dict(stages(result.output)[-1])["CMD"])
    assert load_operator(cmd[1]).name == name


@pytest.mark.parametrize("flag", ["--delete-crds", "--force-finalizers"])
def test_undeploy_refuses_contradictory_flags(flag: str) -> None:
    result = CliRunner().invoke(main, ["undeploy", "blackadder", "--keep-custom-resources", flag])
    assert result.exit_code == 2
    assert f"--keep-custom-resources and {flag} contradict" in result.output


def test_stuck_line_offers_a_guarded_release_of_our_finalizer_only() -> None:
    obj = {"kind": "ChaosAgent", "metadata": {"name": "edmund", "finalizers": ["other.io/x", "blackadder.io/restore"]}}
    line = deploy.stuck_line("chaosagents.blackadder.io", obj, {"blackadder.io/restore"})
    assert line.startswith("ChaosAgent edmund: finalizer other.io/x (another controller's: left alone); ")
    ops = json.loads(line.split(" -p ")[1].strip("'"))
    assert ops == [{"op": "test", "path": "/metadata/finalizers/1", "value": "blackadder.io/restore"},
                   {"op": "remove", "path": "/metadata/finalizers/1"}]
    assert "kubectl patch chaosagents.blackadder.io edmund --type=json" in line and " -n " not in line


def test_custom_resources_are_read_and_released_in_their_storage_version() -> None:
    # blackadder's hub (v1beta2) is not its storage version (v1beta1): with the operator gone, only
    # the storage version reads without its conversion webhook, in the client and in kubectl.
    crd = next(o for o in manifests("blackadder", load_operator("blackadder"), "ns")
               if o["kind"] == "CustomResourceDefinition")
    assert deploy.crd_ref(crd) == "blackadder.io/v1beta1/chaosagents"
    obj = {"kind": "ChaosAgent", "metadata": {"name": "edmund", "finalizers": ["blackadder.io/restore"]}}
    line = deploy.stuck_line(deploy.crd_ref(crd), obj, {"blackadder.io/restore"})
    assert "kubectl patch chaosagents.v1beta1.blackadder.io edmund --type=json" in line
