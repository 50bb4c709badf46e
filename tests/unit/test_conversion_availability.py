"""An operator that converts a CRD's versions is generated so that a restart leaves them readable (two
replicas, a rolling update keeping both ready, anti-affinity, a PodDisruptionBudget), and only such an
operator; a replica asked to stop is unready at once and keeps answering through its drain."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import yaml
from click.testing import CliRunner

from kubeloop.cli.main import main
from kubeloop.manager.manager import Manager, ManagerOptions
from kubeloop.webhooks.runtime import WebhookOptions


def generate(*args: str) -> list[dict[str, Any]]:
    result = CliRunner().invoke(main, ["generate", "all", *args])
    assert result.exit_code == 0, result.output
    return [d for d in yaml.safe_load_all(result.output) if d]


def of(objs: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [o for o in objs if o["kind"] == kind]


def test_a_converting_operator_gets_two_replicas_a_safe_rollout_and_a_budget() -> None:
    objs = generate("blackadder")
    (deployment,) = of(objs, "Deployment")
    assert deployment["spec"]["replicas"] == 2
    assert deployment["spec"]["strategy"]["rollingUpdate"] == {"maxUnavailable": 0, "maxSurge": 1}
    term = deployment["spec"]["template"]["spec"]["affinity"]["podAntiAffinity"][
        "preferredDuringSchedulingIgnoredDuringExecution"][0]["podAffinityTerm"]
    assert term["labelSelector"]["matchLabels"] == deployment["spec"]["selector"]["matchLabels"]
    (pdb,) = of(objs, "PodDisruptionBudget")
    assert pdb["spec"] == {"maxUnavailable": 1, "selector": deployment["spec"]["selector"]}


def test_replicas_given_are_kept() -> None:
    (deployment,) = of(generate("blackadder", "--replicas", "1"), "Deployment")
    assert deployment["spec"]["replicas"] == 1


def test_operators_without_a_conversion_are_unchanged() -> None:
    for args in (["immortal"], ["copyrator", "--set", "check-author=true"]):  # the second: admission only
        objs = generate(*args)
        (deployment,) = of(objs, "Deployment")
        assert deployment["spec"]["replicas"] == 1 and "strategy" not in deployment["spec"], args
        assert not of(objs, "PodDisruptionBudget"), args


def test_the_chart_carries_the_same(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["generate", "chart", "blackadder", "-o", str(tmp_path / "b")])
    assert result.exit_code == 0, result.output
    values = yaml.safe_load((tmp_path / "b" / "values.yaml").read_text())
    assert values["replicaCount"] == 2 and "podAntiAffinity" in values["affinity"]
    assert "maxUnavailable: 0" in (tmp_path / "b" / "templates" / "deployment.yaml").read_text()
    assert "PodDisruptionBudget" in (tmp_path / "b" / "templates" / "webhook-pdb.yaml").read_text()
    result = CliRunner().invoke(main, ["generate", "chart", "immortal", "-o", str(tmp_path / "i")])
    assert result.exit_code == 0, result.output
    assert not (tmp_path / "i" / "templates" / "webhook-pdb.yaml").exists()


def test_drain_defaults_to_the_service_form_only() -> None:
    assert WebhookOptions().drain == 0.0
    assert WebhookOptions(service="x-webhook", namespace="ns").drain == 3.0
    assert WebhookOptions(service="x-webhook", namespace="ns", drain_seconds=0).drain == 0.0
    assert WebhookOptions(url_port=8443).endpoint(9443).url == "https://127.0.0.1:8443"


def test_a_replica_asked_to_stop_is_unready_at_once() -> None:
    async def check() -> None:
        manager = Manager(client=_SyncedClient(), options=ManagerOptions())  # type: ignore[arg-type]
        manager.cache.synced = lambda: True  # type: ignore[method-assign]
        assert manager.ready()
        manager.stop()
        assert not manager.ready()
    asyncio.run(check())


class _SyncedClient:
    """Enough of a client for a Manager that is never run."""

    default_namespace = "default"
    generated_rbac = None
