"""``--shards auto`` under the RBAC that ``kubeloop generate --shards auto`` and its Helm chart grant:
two replicas, each authenticated as the operator's ServiceAccount, both join the ring (Leases listed,
created, renewed, and deleted on a clean stop) with nothing missing, and nothing granted cluster-wide
for Leases. The chart renders the same rules, the ``--shards=auto`` argument, and refuses both modes."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubeloop import Context, Operator
from kubeloop.cli.generate import manifests
from kubeloop.client import Client
from kubeloop.manager import ManagerOptions
from kubeloop.packaging.chart import SHARDING_LEASE_RULE, write_chart
from kubeloop.resources import RbacAudit, render_rbac
from kubeloop.sharding.membership import HOLDS, LABEL
from kubeloop.testing.operator import run_operator

from .test_packaging import TARGET, gears, helm, render  # noqa: F401  (helm: the fixture)

LEASES = "leases.coordination.k8s.io"
op = Operator("shardrbac")
reconciled: dict[str, int] = {}


@op.reconcile("configmaps", resync=None)
async def reconcile(obj: dict[str, Any], ctx: Context) -> None:
    reconciled[f"{ctx.namespace}/{ctx.name}"] = reconciled.get(f"{ctx.namespace}/{ctx.name}", 0) + 1


def sharded(namespace: str, identity: str) -> ManagerOptions:
    return ManagerOptions(namespaces=[namespace], metrics_bind_address="127.0.0.1:0",
                          health_probe_bind_address="127.0.0.1:0", graceful_shutdown_timeout=5,
                          freeze_gc=False, leader_election_namespace=namespace, shards=True, identity=identity,
                          lease_duration=4, renew_deadline=3, retry_period=0.5)


async def ring(client: Client, namespace: str) -> dict[str, str]:
    leases = await client.list(LEASES, namespace, label_selector=f"{LABEL}={op.name}")
    return {le["spec"]["holderIdentity"]: le["metadata"]["annotations"].get(HOLDS, "")
            for le in leases["items"] if le["spec"].get("holderIdentity")}


async def test_two_replicas_join_the_ring_under_the_generated_rbac(kube_cluster: Any, kube_client: Client,
                                                                  namespace: str) -> None:
    for i in range(10):
        await kube_client.create({"apiVersion": "v1", "kind": "ConfigMap",
                                  "metadata": {"name": f"c{i}", "namespace": namespace}, "data": {"i": str(i)}})
    async with run_operator(kube_cluster, kube_client, op, namespace, options=sharded(namespace, "a")) as one, \
            run_operator(kube_cluster, kube_client, op, namespace, options=sharded(namespace, "b")) as two:
        deadline = asyncio.get_running_loop().time() + 30
        while True:
            members = await ring(kube_client, namespace)
            if set(members) == {"a", "b"} and all(members.values()):
                break
            assert asyncio.get_running_loop().time() < deadline, f"both replicas did not join: {members}"
            await asyncio.sleep(0.3)
        while not all(f"{namespace}/c{i}" in reconciled for i in range(10)):
            assert asyncio.get_running_loop().time() < deadline + 15, f"not all reconciled: {reconciled}"
            await asyncio.sleep(0.3)
    # A clean stop deletes each replica's Lease (the delete verb), so a successor takes over at once.
    assert await ring(kube_client, namespace) == {}
    for running in (one, two):
        assert running.audit().ok, running.audit().message
        role = next(o for o in running.rbac if o["kind"] == "Role")
        assert role["metadata"]["namespace"] == namespace and SHARDING_LEASE_RULE in role["rules"]
        cluster_role = [o for o in running.rbac if o["kind"] == "ClusterRole"]
        assert not any("leases" in r["resources"] for c in cluster_role for r in c["rules"])
        # Leader election's Lease rule alone would not do: the audit names what is missing.
        narrow = RbacAudit.from_manifests(render_rbac(op.name, namespace, op.permissions(),
                                                      op.namespaced_permissions(), events="cluster"))
        report = narrow.check(running.client.used_permissions or ())
        assert {(m.verb, m.resource) for m in report.missing} == {("list", "leases"), ("delete", "leases")}


def test_sharded_chart_renders_the_sharding_rules_and_argument(helm: Any, tmp_path: Path) -> None:  # noqa: F811
    chart = tmp_path / "kl-gears"
    write_chart(chart, "kl-gears", manifests(TARGET, gears, "default", "reg.example/gears:2.0", 3, shards=True))
    helm("lint", "--strict", str(chart))
    values = yaml.safe_load((chart / "values.yaml").read_text())
    assert values["sharding"] == {"enabled": True} and values["leaderElection"] == {"enabled": False}
    _, docs = render(helm, chart, "ops")
    by_kind = {d["kind"]: d for d in docs}
    generated = {o["kind"]: o for o in manifests(TARGET, gears, "ops", shards=True)}
    assert by_kind["Role"]["rules"] == generated["Role"]["rules"]
    assert SHARDING_LEASE_RULE in by_kind["Role"]["rules"]
    args = by_kind["Deployment"]["spec"]["template"]["spec"]["containers"][0]["args"]
    assert args[:3] == ["run", TARGET, "--shards=auto"] and "--leader-elect" not in args
    assert by_kind["Deployment"]["spec"]["replicas"] == 3

    # A chart generated for leader election switches with two values; both on is refused, by name.
    plain = tmp_path / "plain"
    write_chart(plain, "kl-gears", manifests(TARGET, gears, "default"))
    _, docs = render(helm, plain, "ops", "sharding.enabled=true", "leaderElection.enabled=false")
    assert {d["kind"]: d for d in docs}["Role"]["rules"] == generated["Role"]["rules"]
    with pytest.raises(AssertionError, match="leaderElection.enabled and sharding.enabled are exclusive"):
        render(helm, plain, "ops", "sharding.enabled=true")
