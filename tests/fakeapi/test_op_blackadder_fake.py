"""blackadder's ipsum mode on the fake API server: an agent rewrites the ConfigMaps it reaches (backing
up one too big for an annotation), leaves immutable and opted-out ones alone, and puts everything back
when the mode is switched off. The pod and Deployment modes need the real control plane's controllers."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio

from kubeloop.client import Client
from kubeloop.operators.blackadder import build_operator, marks
from kubeloop.operators.blackadder.settings import BlackadderSettings
from kubeloop.resources.crd import crds_for
from kubeloop.testing import install_crds, operator_running, wait_for
from kubeloop.testing.apiserver import FakeApiServer

AGENTS = "chaosagents.blackadder.io"
op = build_operator()
if "x-kubernetes-validations" in str(crds_for(op.custom_resources())):
    pytest.importorskip("celpy", reason="blackadder's CRD has CEL rules: pip install kubeloop[fake]")


@pytest_asyncio.fixture(loop_scope="session")
async def cluster() -> AsyncIterator[Client]:
    async with FakeApiServer() as fake, await fake.client() as admin:
        await install_crds(admin, op)
        for name in ("home", "victims"):
            await admin.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
        op.settings = BlackadderSettings(operator_namespace="home")
        async with await fake.client(field_manager=op.name) as client:
            async with operator_running(op, client):
                yield admin


def configmap(name: str, data: dict[str, str], **extra: Any) -> dict[str, Any]:
    meta = {"name": name, "namespace": "victims", "labels": {"t": "ipsum"}, **extra.pop("metadata", {})}
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": data, **extra}


async def test_ipsum_rewrites_and_restores(cluster: Client) -> None:
    client = cluster
    plain, big = {"a": "1", "b": "two\nlines"}, {"blob": "x" * (70 * 1024)}
    await client.create(configmap("plain", plain))
    await client.create(configmap("big", big))
    await client.create(configmap("frozen", {"k": "v"}, immutable=True))
    await client.create(configmap("opted-out", {"k": "v"},
                                  metadata={"annotations": {"blackadder.io/exclude": "true"}}))
    # In v1beta2, the version the operator reads: the fake API server does no webhook conversion (it
    # only changes apiVersion), so v1beta1's pauseDuration would not reach the operator as pauseSeconds.
    agent = {"apiVersion": "blackadder.io/v1beta2", "kind": "ChaosAgent", "metadata": {"name": "ipsum"},
             "spec": {"namespaceSelector": {"matchExpressions": [
                 {"key": "kubernetes.io/metadata.name", "operator": "In", "values": ["victims"]}]},
                 "configMapSelector": {"matchLabels": {"t": "ipsum"}}, "pauseSeconds": 1,
                 "minPodAgeSeconds": 0, "eagerness": 100, "ipsumMode": True}}
    await client.create(agent)
    await wait_for(client, AGENTS, "ipsum", timeout=15,
                   predicate=lambda a: ((a.get("status") or {}).get("counters") or {}).get("ipsum", 0) >= 2)
    for name in ("plain", "big"):
        rewritten = await client.get("configmaps", name, "victims")
        assert all(v.startswith("Lorem ipsum") for v in rewritten["data"].values()), name
    backups = (await client.list("configmaps", "home", label_selector=f"{marks.BACKUP_FOR}=ipsum"))["items"]
    assert [b["data"] for b in backups] == [big]
    for name in ("frozen", "opted-out"):
        assert (await client.get("configmaps", name, "victims"))["data"] == {"k": "v"}, name

    await client.patch(AGENTS, "ipsum", {"spec": {"ipsumMode": False}})
    for name, data in (("plain", plain), ("big", big)):
        await wait_for(client, "configmaps", name, "victims", timeout=15,
                       predicate=lambda c, data=data: c.get("data") == data)
    assert not (await client.list("configmaps", "home", label_selector=f"{marks.BACKUP_FOR}=ipsum"))["items"]


def deployment(name: str, replicas: int) -> dict[str, Any]:
    labels = {"app": name, "t": "cancer"}
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name, "namespace": "victims", "labels": labels},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": labels},
                                  "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}


async def test_cancer_grows_and_restores(cluster: Client) -> None:
    """cancerMode doubles a Deployment's replicas (marking the original) and puts them back exactly when
    switched off; a Deployment at 0 is left alone. The fake runs no Deployment controller, so this is the
    operator's own part: the scale writes and the marks."""
    client = cluster
    await client.create(deployment("grow", 3))
    await client.create(deployment("zero", 0))
    agent = {"apiVersion": "blackadder.io/v1beta2", "kind": "ChaosAgent", "metadata": {"name": "cancer"},
             "spec": {"namespaceSelector": {"matchExpressions": [
                 {"key": "kubernetes.io/metadata.name", "operator": "In", "values": ["victims"]}]},
                 "deploymentSelector": {"matchLabels": {"t": "cancer"}}, "pauseSeconds": 1,
                 "eagerness": 100, "cancerMode": True}}
    await client.create(agent)
    grown = await wait_for(client, "deployments.apps", "grow", "victims", timeout=15,
                           predicate=lambda d: d["spec"]["replicas"] > 3, description="more replicas")
    assert grown["metadata"]["annotations"][marks.ORIGINAL_REPLICAS] == "3"
    assert (await client.get("deployments.apps", "zero", "victims"))["spec"]["replicas"] == 0

    await client.patch(AGENTS, "cancer", {"spec": {"cancerMode": False}})
    restored = await wait_for(client, "deployments.apps", "grow", "victims", timeout=15,
                              predicate=lambda d: d["spec"]["replicas"] == 3, description="3 again")
    assert not set(restored["metadata"].get("annotations") or {}) & set(marks.ANNOTATIONS)
