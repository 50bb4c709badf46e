"""``kubeloop generate --webhook-cert-secret`` and the chart's ``webhook.certSecret``: the Deployment
mounts the Secret and passes ``--webhook-cert-dir``; without them the output is what it was. The chart
is rendered by a real helm (built once, cached) and the Deployment applied as a server dry-run."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import yaml

from kubeloop.cli.generate import manifests
from kubeloop.cli.run import load_operator
from kubeloop.client import Client
from kubeloop.packaging.chart import write_chart
from kubeloop.packaging.helm import ensure_helm
from kubeloop.webhooks.deploy import CERT_DIR

TARGET = "tests/webhook_operator.py"


def deployment(objs: list[dict[str, Any]]) -> dict[str, Any]:
    [dep] = [o for o in objs if o["kind"] == "Deployment"]
    return dep


def mounted(dep: dict[str, Any]) -> tuple[list[str], list[Any], list[Any]]:
    pod = dep["spec"]["template"]["spec"]
    container = pod["containers"][0]
    return ([a for a in container["args"] if a.startswith("--webhook-cert-dir")],
            [m for m in container.get("volumeMounts", []) if m["name"] == "webhook-cert"],
            [v for v in pod.get("volumes", []) if v["name"] == "webhook-cert"])


def test_generate_mounts_the_secret_only_when_asked() -> None:
    op = load_operator(TARGET)
    assert mounted(deployment(manifests(TARGET, op, "ns"))) == ([], [], [])
    args, mounts, volumes = mounted(deployment(manifests(TARGET, op, "ns", cert_secret="gadgets-tls")))
    assert args == [f"--webhook-cert-dir={CERT_DIR}"]
    assert mounts == [{"name": "webhook-cert", "mountPath": CERT_DIR, "readOnly": True}]
    assert volumes == [{"name": "webhook-cert", "secret": {"secretName": "gadgets-tls"}}]


async def test_chart_value_renders_and_applies(tmp_path: Path, kube_client: Client, namespace: str) -> None:
    op = load_operator(TARGET)
    write_chart(tmp_path / "chart", "gadgets", manifests(TARGET, op, "default"))
    binary = ensure_helm()
    env = {**os.environ, **{f"HELM_{k}_HOME": str(tmp_path / k.lower()) for k in ("CACHE", "CONFIG", "DATA")}}

    def template(*extra: str) -> dict[str, Any]:
        proc = subprocess.run([str(binary), "template", "rel", str(tmp_path / "chart"), "-n", namespace, *extra],
                              capture_output=True, text=True, timeout=120, env=env)
        assert proc.returncode == 0, proc.stderr
        return deployment([d for d in yaml.safe_load_all(proc.stdout) if d])

    assert mounted(template()) == ([], [], [])
    dep = template("--set", "webhook.certSecret=gadgets-tls")
    args, mounts, volumes = mounted(dep)
    assert args == [f"--webhook-cert-dir={CERT_DIR}"] and mounts and volumes[0]["secret"] == {
        "secretName": "gadgets-tls"}
    out = await kube_client.create(dep, namespace, dry_run=True)  # the API server accepts the rendered pod
    assert mounted(out)[2][0]["secret"]["secretName"] == "gadgets-tls"


def test_the_option_is_refused_for_an_operator_without_webhooks() -> None:
    from click.testing import CliRunner

    from kubeloop.cli.main import main

    result = CliRunner().invoke(main, ["generate", "all", "reloader", "--webhook-cert-secret", "x"])
    assert result.exit_code == 2 and "--webhook-cert-secret" in result.output
    assert "reloader declares no webhooks" in result.output
