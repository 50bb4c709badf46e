"""``kubeloop generate --shards auto``: the Deployment runs ``--shards auto`` instead of ``--leader-elect``,
and the Role in the operator's namespace adds exactly ``list`` and ``delete`` on Leases (nothing
cluster-wide); the chart carries it as ``sharding.enabled``. The default output is unchanged."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from click.testing import CliRunner

from kubeloop.cli.main import main
from kubeloop.packaging import chart

from .test_packaging import TARGET

LEASE_VERBS = {"get", "create", "update"}


def generate(*args: str) -> list[dict[str, Any]]:
    result = CliRunner().invoke(main, ["generate", *args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return [d for d in yaml.safe_load_all(result.output) if d]


def lease_verbs(objs: list[dict[str, Any]], kind: str) -> set[str]:
    return {v for o in objs if o["kind"] == kind for r in o["rules"]
            if "leases" in r["resources"] for v in r["verbs"]}


def test_shards_auto_adds_exactly_list_and_delete_on_leases_in_the_namespace() -> None:
    plain, sharded = generate("rbac", TARGET), generate("rbac", TARGET, "--shards", "auto")
    assert lease_verbs(plain, "Role") == LEASE_VERBS
    assert lease_verbs(sharded, "Role") == LEASE_VERBS | {"list", "delete"}
    assert lease_verbs(sharded, "ClusterRole") == set()  # never cluster-wide
    role = next(o for o in sharded if o["kind"] == "Role")
    assert role["metadata"]["namespace"] == "widgets-system"
    # everything else is the same as without --shards
    strip = [{**o, "rules": [r for r in o.get("rules", []) if "leases" not in r["resources"]]} for o in sharded]
    assert strip == [{**o, "rules": [r for r in o.get("rules", []) if "leases" not in r["resources"]]}
                     for o in plain]


def test_shards_auto_is_the_deployments_mode() -> None:
    [deployment] = [o for o in generate("manager", TARGET, "--shards", "auto", "--replicas", "3")
                    if o["kind"] == "Deployment"]
    args = deployment["spec"]["template"]["spec"]["containers"][0]["args"]
    assert args[:4] == ["run", TARGET, "--shards", "auto"] and "--leader-elect" not in args
    assert deployment["spec"]["replicas"] == 3
    [default] = [o for o in generate("manager", TARGET) if o["kind"] == "Deployment"]
    assert default["spec"]["template"]["spec"]["containers"][0]["args"][:3] == ["run", TARGET, "--leader-elect"]


def test_a_bad_shards_value_is_refused_by_name() -> None:
    result = CliRunner().invoke(main, ["generate", "rbac", TARGET, "--shards", "3"])
    assert result.exit_code == 2 and "--shards" in result.output and "'auto'" in result.output


def test_sharded_chart_values_and_templates(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["generate", "chart", TARGET, "--shards", "auto", "-o", str(tmp_path)],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    values = yaml.safe_load((tmp_path / "values.yaml").read_text())
    assert values["sharding"] == {"enabled": True} and values["leaderElection"] == {"enabled": False}
    deployment = (tmp_path / "templates/deployment.yaml").read_text()
    assert '"--shards"' not in deployment and '"auto"' not in deployment  # the values choose, not RUN_ARGS
    assert "{{- if .Values.sharding.enabled }}\n            - --shards=auto\n" in deployment
    assert "leaderElection.enabled and sharding.enabled are exclusive" in deployment
    rbac = (tmp_path / "templates/rbac.yaml").read_text()
    assert "{{- if .Values.sharding.enabled }}\n" + yaml.safe_dump([chart.SHARDING_LEASE_RULE]) in rbac


def test_run_args_without_the_mode() -> None:
    assert chart._without_mode(["run", "x", "--shards", "auto", "--v"]) == ["run", "x", "--v"]
    assert chart._without_mode(["run", "x", "--shards=auto"]) == ["run", "x"]
    assert chart._without_mode(["run", "x", "--leader-elect"]) == ["run", "x"]
