"""Charts lint with a real helm and apply (server dry-run) to the control plane; ``kubeloop deploy``
installs an operator and ``undeploy`` removes only what it installed."""

from __future__ import annotations

import json
import secrets
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from pydantic import BaseModel

import kubeloop.operators
from kubeloop import Context, Operator
from kubeloop.cli.generate import manifests
from kubeloop.cli.main import main
from kubeloop.cli.run import BUNDLED
from kubeloop.packaging.chart import write_chart
from kubeloop.packaging.deploy import FIELD_MANAGER
from kubeloop.packaging.helm import ensure_helm
from kubeloop.resources import CustomResource
from kubeloop.resources.builtin import CONFIG_MAP
from kubeloop.testing.plugin import _progress


class GearSpec(BaseModel):
    teeth: int = 12


class GearStatus(BaseModel):
    observedGeneration: int | None = None


class Gear(CustomResource, group="packaging.test.kubeloop.dev", version="v1", kind="Gear"):
    spec: GearSpec
    status: GearStatus | None = None


gears = Operator("kl-gears")


@gears.reconcile(Gear, owns=[CONFIG_MAP])
async def reconcile(obj: Gear, ctx: Context) -> None:  # pragma: no cover - the image never runs here
    pass


TARGET = f"{__name__}:gears"
CRD = "gears.packaging.test.kubeloop.dev"


class Bolt(CustomResource, group="packaging.test.kubeloop.dev", version="v1", kind="Bolt"):
    spec: GearSpec
    status: GearStatus | None = None


bolts = Operator("kl-bolts")
BOLT_FINALIZER = "packaging.test.kubeloop.dev/unscrew"


@bolts.reconcile(Bolt)
async def reconcile_bolt(obj: Bolt, ctx: Context) -> None:  # pragma: no cover - the image never runs here
    pass


@bolts.finalize(Bolt, finalizer=BOLT_FINALIZER)
async def unscrew(obj: Bolt, ctx: Context) -> None:  # pragma: no cover - the image never runs here
    pass


@pytest.fixture(scope="session")
def helm(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """Runs the helm built from source (once; cached in the kubeloop cache) with private helm homes."""
    binary = ensure_helm(log=_progress)
    home = tmp_path_factory.mktemp("helm-home")
    env = {f"HELM_{k}_HOME": str(home / k.lower()) for k in ("CACHE", "CONFIG", "DATA")}

    def run(*args: str) -> str:
        import os

        proc = subprocess.run([str(binary), *args], capture_output=True, text=True, timeout=120,
                              env={**os.environ, **env})
        assert proc.returncode == 0, f"helm {' '.join(args)}:\n{proc.stdout}\n{proc.stderr}"
        return proc.stdout

    yield run


@pytest.mark.parametrize("name", BUNDLED)
def test_bundled_operator_chart_lints_and_renders(name: str, helm: Any, tmp_path: Path) -> None:
    # The bundled operators land concurrently: one without its package yet is skipped, not failed.
    if not (Path(kubeloop.operators.__file__).parent / name / "__init__.py").exists():
        pytest.skip(f"kubeloop.operators.{name} does not exist yet")
    result = CliRunner().invoke(main, ["generate", "chart", name, "-o", str(tmp_path / name)])
    assert result.exit_code == 0, result.output
    helm("lint", "--strict", str(tmp_path / name))
    docs = [d for d in yaml.safe_load_all(helm("template", name, str(tmp_path / name), "-n", "ops")) if d]
    deployment = next(d for d in docs if d["kind"] == "Deployment")
    args = deployment["spec"]["template"]["spec"]["containers"][0]["args"]
    # An operator with webhooks (blackadder's conversion) gets the --webhook-* arguments right after its name.
    webhook = [a for a in args if a.startswith("--webhook-")]
    assert args[:2] == ["run", name] and args[2 + len(webhook)] == "--leader-elect"
    assert args[2:2 + len(webhook)] == webhook and bool(webhook) == (name == "blackadder")


def render(helm: Any, chart: Path, namespace: str, *sets: str) -> tuple[str, list[dict[str, Any]]]:
    text = helm("template", "rel", str(chart), "--namespace", namespace, *(f"--set={s}" for s in sets))
    return text, [d for d in yaml.safe_load_all(text) if d]


def test_chart_renders_and_applies_to_the_cluster(kube_cluster: Any, helm: Any, tmp_path: Path) -> None:
    chart = tmp_path / "kl-gears"
    write_chart(chart, "kl-gears", manifests(TARGET, gears, "unused", "reg.example/gears:2.0"))
    helm("lint", "--strict", str(chart))
    namespace = f"t-chart-{secrets.token_hex(3)}"
    kube_cluster.kubectl("create", "namespace", namespace)
    try:
        # CRDs for real (helm installs crds/ first too), so the CR below can be dry-run.
        kube_cluster.kubectl("apply", "--server-side", "--force-conflicts", "-f", str(chart / "crds"))
        kube_cluster.kubectl("wait", "--for=condition=Established", f"crd/{CRD}", "--timeout=60s")
        text, docs = render(helm, chart, namespace, "extraArgs={--log-format=json}",
                            "extraEnv[0].name=EXTRA", "extraEnv[0].value=yes", "replicaCount=2")
        gear = {"apiVersion": "packaging.test.kubeloop.dev/v1", "kind": "Gear",
                "metadata": {"name": "g", "namespace": namespace}, "spec": {"teeth": 3}}
        kube_cluster.kubectl("apply", "--dry-run=server", "-f", "-", input=text + "---\n" + json.dumps(gear))
        kinds = sorted(d["kind"] for d in docs)
        assert kinds == ["ClusterRole", "ClusterRoleBinding", "Deployment", "Role", "RoleBinding", "Service",
                         "ServiceAccount"]
        by_kind = {d["kind"]: d for d in docs}
        generated = {o["kind"]: o for o in manifests(TARGET, gears, namespace)}
        assert by_kind["ClusterRole"]["rules"] == generated["ClusterRole"]["rules"]
        assert by_kind["Role"]["rules"] == generated["Role"]["rules"]
        assert by_kind["ClusterRoleBinding"]["subjects"] == [
            {"kind": "ServiceAccount", "name": "rel-kl-gears", "namespace": namespace}]
        pod = by_kind["Deployment"]["spec"]["template"]["spec"]
        container = pod["containers"][0]
        assert by_kind["Deployment"]["spec"]["replicas"] == 2 and pod["serviceAccountName"] == "rel-kl-gears"
        assert container["image"] == "reg.example/gears:2.0"
        assert container["args"] == ["run", TARGET, "--leader-elect", "--metrics-bind-address=:8080",
                                     "--health-probe-bind-address=:8081", "--log-format=json"]
        assert {"name": "EXTRA", "value": "yes"} in container["env"]
        assert container["securityContext"] == generated["Deployment"]["spec"]["template"]["spec"][
            "containers"][0]["securityContext"]
        assert all(d["metadata"].get("namespace") in (namespace, None) for d in docs)

        # Everything optional off: the Deployment alone, on a ServiceAccount someone else provides.
        text, docs = render(helm, chart, namespace, "rbac.create=false", "leaderElection.enabled=false",
                            "metrics.service.enabled=false", "serviceAccount.create=false",
                            "serviceAccount.name=default", "image.digest=sha256:" + "0" * 64)
        kube_cluster.kubectl("apply", "--dry-run=server", "-f", "-", input=text)
        [deployment] = docs
        container = deployment["spec"]["template"]["spec"]["containers"][0]
        assert "--leader-elect" not in container["args"]
        assert container["image"] == "reg.example/gears@sha256:" + "0" * 64

        # The ServiceMonitor (no Prometheus Operator here: rendered, not applied) scrapes the Service.
        _, docs = render(helm, chart, namespace, "metrics.serviceMonitor.enabled=true",
                         "metrics.serviceMonitor.labels.release=prom")
        monitor = next(d for d in docs if d["kind"] == "ServiceMonitor")
        service = next(d for d in docs if d["kind"] == "Service")
        assert monitor["metadata"]["labels"]["release"] == "prom"
        assert monitor["spec"]["selector"]["matchLabels"].items() <= service["metadata"]["labels"].items()
        assert monitor["spec"]["endpoints"][0]["port"] == service["spec"]["ports"][0]["name"]
    finally:
        kube_cluster.kubectl("delete", "namespace", namespace, "--wait=false", check=False)


def _get(cluster: Any, *args: str) -> dict[str, Any] | None:
    proc = cluster.kubectl("get", *args, "-o", "json", "--show-managed-fields", check=False)
    return json.loads(proc.stdout) if proc.returncode == 0 else None


def test_deploy_and_undeploy(kube_cluster: Any) -> None:
    namespace = f"t-deploy-{secrets.token_hex(3)}"
    flags = ["--kubeconfig", str(kube_cluster.kubeconfig), "--namespace", namespace, "--timeout", "90"]
    cli = CliRunner()
    try:
        result = cli.invoke(main, ["deploy", TARGET, *flags, "--image", "reg.example/gears:1", "--wait"])
        assert result.exit_code == 0, result.output
        assert f"CustomResourceDefinition {CRD} established" in result.output
        for args in (("namespace", namespace), (f"crd/{CRD}",), ("clusterrole", "kl-gears"),
                     ("clusterrolebinding", "kl-gears"), ("-n", namespace, "role", "kl-gears"),
                     ("-n", namespace, "serviceaccount", "kl-gears"),
                     ("-n", namespace, "service", "kl-gears-metrics")):
            obj = _get(kube_cluster, *args)
            assert obj is not None, args
            assert any(m["manager"] == FIELD_MANAGER for m in obj["metadata"]["managedFields"]), args
        generated = {o["kind"]: o for o in manifests(TARGET, gears, namespace)}
        assert _get(kube_cluster, "clusterrole", "kl-gears")["rules"] == generated["ClusterRole"]["rules"]
        deployment = _get(kube_cluster, "-n", namespace, "deployment", "kl-gears")
        assert deployment["spec"]["template"]["spec"]["serviceAccountName"] == "kl-gears"
        conditions = deployment["status"]["conditions"]
        assert any(c["type"] == "Available" and c["status"] == "True" for c in conditions), conditions

        gear = {"apiVersion": "packaging.test.kubeloop.dev/v1", "kind": "Gear",
                "metadata": {"name": "user-gear", "namespace": namespace}, "spec": {"teeth": 3}}
        kube_cluster.kubectl("apply", "-f", "-", input=json.dumps(gear))
        kept = {**gear, "metadata": {**gear["metadata"], "name": "kept-gear"}}
        kube_cluster.kubectl("apply", "-f", "-", input=json.dumps(kept))
        # --keep-custom-resources: the custom resources stay, and are reported as remaining.
        result = cli.invoke(main, ["undeploy", TARGET, *flags, "--keep-custom-resources"])
        assert result.exit_code == 0, result.output
        assert f"Gear {namespace}/user-gear" in result.output
        assert _get(kube_cluster, "-n", namespace, CRD, "user-gear") is not None
        assert _get(kube_cluster, "-n", namespace, "deployment", "kl-gears") is None
        # By default the custom resources go first (while the operator could still release them).
        result = cli.invoke(main, ["undeploy", TARGET, *flags])
        assert result.exit_code == 0, result.output
        assert f"deleted Gear {namespace}/user-gear" in result.output
        assert f"kept CustomResourceDefinition {CRD} (pass --delete-crds" in result.output
        assert "remain" not in result.output
        assert _get(kube_cluster, "clusterrole", "kl-gears") is None
        assert _get(kube_cluster, "-n", namespace, "serviceaccount", "kl-gears") is None
        assert _get(kube_cluster, f"crd/{CRD}") is not None
        assert _get(kube_cluster, "-n", namespace, CRD, "user-gear") is None

        # A same-named object the deploy tool did not make is left alone.
        kube_cluster.kubectl("create", "serviceaccount", "kl-gears", "-n", namespace)
        result = cli.invoke(main, ["undeploy", TARGET, *flags, "--delete-crds", "--delete-namespace"])
        assert result.exit_code == 0, result.output
        assert f"kept ServiceAccount {namespace}/kl-gears (not applied by kubeloop deploy)" in result.output
        assert "remain" not in result.output
        assert _get(kube_cluster, f"crd/{CRD}") is None
        assert _get(kube_cluster, "namespace", namespace) is None
    finally:
        kube_cluster.kubectl("delete", "namespace", namespace, "--wait=false", check=False)


def test_undeploy_when_the_operator_is_gone(kube_cluster: Any) -> None:
    """kwok never runs the operator's image: its finalizers on the custom resources are never released,
    as when the operator crashed or was removed by hand. Undeploy must neither hang nor strand them."""
    namespace = f"t-undeploy-{secrets.token_hex(3)}"
    target, crd = f"{__name__}:bolts", "bolts.packaging.test.kubeloop.dev"
    stored = "bolts.v1.packaging.test.kubeloop.dev"  # what undeploy names: the storage version, no conversion
    flags = ["--kubeconfig", str(kube_cluster.kubeconfig), "--namespace", namespace]
    cli = CliRunner()

    def bolt(name: str, *finalizers: str) -> str:
        return json.dumps({"apiVersion": "packaging.test.kubeloop.dev/v1", "kind": "Bolt",
                           "metadata": {"name": name, "namespace": namespace, "finalizers": list(finalizers)},
                           "spec": {}})
    try:
        result = cli.invoke(main, ["deploy", target, *flags, "--image", "reg.example/bolts:1", "--wait"])
        assert result.exit_code == 0, result.output
        # What the operator would have added, plus another controller's finalizer on one of them.
        kube_cluster.kubectl("apply", "-f", "-", input=bolt("ours", BOLT_FINALIZER))
        kube_cluster.kubectl("apply", "-f", "-", input=bolt("shared", "example.com/other", BOLT_FINALIZER))

        result = cli.invoke(main, ["undeploy", target, *flags, "--timeout", "3"])
        assert result.exit_code == 1, result.output
        assert f"Bolt {namespace}/ours: finalizer {BOLT_FINALIZER}: release with kubectl patch {stored} ours " \
               f"-n {namespace} --type=json" in result.output
        assert "finalizer example.com/other (another controller's: left alone)" in result.output
        assert "--force-finalizers" in result.output
        assert _get(kube_cluster, "-n", namespace, "deployment", "kl-bolts") is not None  # left in place

        # The printed command works, and releases only that finalizer.
        line = next(x for x in result.output.splitlines() if "shared:" in x)
        command = line.split("release with kubectl ", 1)[1]
        args = command.split(" -p ")[0].split() + ["-p", command.split(" -p ")[1].strip("'")]
        kube_cluster.kubectl(*args)
        shared = _get(kube_cluster, "-n", namespace, crd, "shared")
        assert shared is not None and shared["metadata"]["finalizers"] == ["example.com/other"]

        result = cli.invoke(main, ["undeploy", target, *flags, "--timeout", "3", "--force-finalizers"])
        assert result.exit_code == 0, result.output
        assert f"removed finalizer {BOLT_FINALIZER} from Bolt {namespace}/ours" in result.output
        assert _get(kube_cluster, "-n", namespace, crd, "ours") is None
        shared = _get(kube_cluster, "-n", namespace, crd, "shared")  # another controller's: still held
        assert shared is not None and shared["metadata"]["finalizers"] == ["example.com/other"]
        assert _get(kube_cluster, "-n", namespace, "deployment", "kl-bolts") is None
    finally:
        kube_cluster.kubectl("patch", crd, "shared", "-n", namespace, "--type=merge", "-p",
                             '{"metadata":{"finalizers":null}}', check=False)
        kube_cluster.kubectl("delete", "namespace", namespace, "--wait=false", check=False)
        kube_cluster.kubectl("delete", "crd", crd, "--wait=false", check=False)


def test_webhook_chart_renders_and_applies(kube_cluster: Any, helm: Any, tmp_path: Path) -> None:
    """An operator with webhooks: the chart names the release's Service and namespace everywhere, and
    the API server accepts every object (server dry-run), the converted CRD included."""
    from tests.webhook_operator import op as gadgets

    chart = tmp_path / "gadgets"
    write_chart(chart, "gadgets", manifests("tests/webhook_operator.py", gadgets, "default"))
    helm("lint", "--strict", str(chart))
    namespace = f"t-hooks-{secrets.token_hex(3)}"
    kube_cluster.kubectl("create", "namespace", namespace)
    try:
        text, docs = render(helm, chart, namespace)
        kube_cluster.kubectl("apply", "--dry-run=server", "-f", "-", input=text)
        by_kind = {d["kind"]: d for d in docs}
        assert by_kind["Secret"]["metadata"]["name"] == "gadgets-webhook-ca" and "data" not in by_kind["Secret"]
        service = next(d for d in docs if d["kind"] == "Service" and d["metadata"]["name"].endswith("-webhook"))
        assert service["metadata"]["name"] == "rel-gadgets-webhook"
        assert service["spec"]["ports"][0] == {"name": "webhook", "port": 443, "targetPort": "webhook",
                                               "protocol": "TCP"}
        container = by_kind["Deployment"]["spec"]["template"]["spec"]["containers"][0]
        assert "--webhook-service=rel-gadgets-webhook" in container["args"]
        assert {"name": "webhook", "containerPort": 9443, "protocol": "TCP"} in container["ports"]
        for kind in ("ValidatingWebhookConfiguration", "MutatingWebhookConfiguration"):
            hook = by_kind[kind]["webhooks"][0]
            assert hook["clientConfig"]["service"]["name"] == "rel-gadgets-webhook"
            assert hook["clientConfig"]["service"]["namespace"] == namespace
            assert hook["namespaceSelector"]["matchExpressions"][0]["values"] == [namespace, "kube-system"]
        conversion = by_kind["CustomResourceDefinition"]["spec"]["conversion"]
        assert conversion["strategy"] == "Webhook"
        assert conversion["webhook"]["clientConfig"]["service"]["namespace"] == namespace
        role_rules = by_kind["Role"]["rules"]
        assert {"apiGroups": [""], "resources": ["secrets"], "verbs": ["get", "patch"],
                "resourceNames": ["gadgets-webhook-ca"]} in role_rules
    finally:
        kube_cluster.kubectl("delete", "namespace", namespace, "--wait=false", check=False)
