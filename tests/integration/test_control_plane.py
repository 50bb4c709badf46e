"""The local control plane behaves like a real cluster: CRDs with status, watches, garbage
collection, Deployments on kwok nodes, namespace finalization and RBAC — no mocks."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from kubeloop.client import AlreadyExists, Client, Forbidden
from kubeloop.envtest import KUBERNETES_VERSION
from kubeloop.testing import wait_for, wait_for_crd, wait_for_deletion
from kubeloop.testing.podsecurity import restricted

pytestmark = pytest.mark.cluster

GROUP = "kubeloop.test"
CRD_NAME = f"widgets.{GROUP}"


def _configmap(name: str, namespace: str, **meta: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": namespace, **meta}, "data": {"k": "v"}}


def _condition(obj: dict[str, Any], kind: str) -> bool:
    conditions = (obj.get("status") or {}).get("conditions") or []
    return any(c["type"] == kind and c["status"] == "True" for c in conditions)


def test_version_is_the_built_release(kube_cluster: Any) -> None:
    version = json.loads(kube_cluster.kubectl("get", "--raw", "/version").stdout)
    assert version["gitVersion"] == f"v{KUBERNETES_VERSION}"
    assert version["minor"] == KUBERNETES_VERSION.split(".")[1]


def test_nodes_are_ready_kwok_nodes(kube_cluster: Any) -> None:
    # The cluster's own nodes (other tests may add Node objects of their own, e.g. the fuzzer's idle ones).
    nodes = [n for n in json.loads(kube_cluster.kubectl("get", "nodes", "-o", "json").stdout)["items"]
             if n["metadata"]["name"].startswith("kwok-node-")]
    assert len(nodes) >= 3
    for node in nodes:
        assert node["metadata"]["annotations"]["kwok.x-k8s.io/node"] == "fake"
        assert _condition(node, "Ready"), node["metadata"]["name"]


async def test_crd_status_subresource_does_not_bump_generation(kube_client: Client, namespace: str) -> None:
    crd = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": CRD_NAME},
        "spec": {
            "group": GROUP,
            "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
            "versions": [{
                "name": "v1", "served": True, "storage": True,
                "subresources": {"status": {}},
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object", "properties": {"size": {"type": "integer"}}},
                    "status": {"type": "object", "properties": {"phase": {"type": "string"}}},
                }}},
            }],
        },
    }
    try:
        await kube_client.create(crd)
    except AlreadyExists:
        pass
    await wait_for_crd(kube_client, CRD_NAME)

    body = {"apiVersion": f"{GROUP}/v1", "kind": "Widget", "metadata": {"name": "w1"}, "spec": {"size": 1}}
    created = await kube_client.create(body, namespace)
    assert created["metadata"]["generation"] == 1

    # Writing status through the main resource is ignored when the status subresource is on ...
    await kube_client.patch(f"{GROUP}/v1/Widget", "w1", {"status": {"phase": "Ignored"}}, namespace)
    # ... and writing it through /status leaves the generation alone.
    after_status = await kube_client.patch_status(f"{GROUP}/v1/Widget", "w1", {"phase": "Ready"}, namespace)
    assert after_status["status"] == {"phase": "Ready"}
    assert after_status["metadata"]["generation"] == 1

    after_spec = await kube_client.patch(f"{GROUP}/v1/Widget", "w1", {"spec": {"size": 2}}, namespace)
    assert after_spec["metadata"]["generation"] == 2
    assert after_spec["status"] == {"phase": "Ready"}


async def test_watch_sees_added_modified_deleted(kube_client: Client, namespace: str) -> None:
    listing = await kube_client.list("configmaps", namespace)
    rv = listing["metadata"]["resourceVersion"]
    seen: list[tuple[str, str]] = []

    async def watch() -> None:
        events = kube_client.watch("configmaps", namespace, resource_version=rv, timeout_seconds=60)
        async for event in events:
            if event["type"] == "BOOKMARK" or event["object"]["metadata"]["name"] != "watched":
                continue
            seen.append((event["type"], event["object"]["data"]["k"]))
            if event["type"] == "DELETED":
                return

    task = asyncio.create_task(watch())
    await kube_client.create(_configmap("watched", namespace))
    await kube_client.patch("configmaps", "watched", {"data": {"k": "v2"}}, namespace)
    await kube_client.delete("configmaps", "watched", namespace)
    async with asyncio.timeout(20):
        await task
    assert seen == [("ADDED", "v"), ("MODIFIED", "v2"), ("DELETED", "v2")]


async def test_garbage_collector_deletes_dependents(kube_client: Client, namespace: str) -> None:
    owner = await kube_client.create(_configmap("owner", namespace))
    ref = {"apiVersion": "v1", "kind": "ConfigMap", "name": "owner", "uid": owner["metadata"]["uid"]}
    await kube_client.create(_configmap("dependent", namespace, ownerReferences=[ref]))
    await kube_client.delete("configmaps", "owner", namespace)
    await wait_for_deletion(kube_client, "configmaps", "dependent", namespace, timeout=60)


async def test_deployment_becomes_available_on_kwok_nodes(kube_cluster: Any, kube_client: Client,
                                                          namespace: str) -> None:
    # kubectl create deployment cannot set a securityContext; the namespace enforces "restricted".
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": namespace},
                  "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web"}}, "template": {
                      "metadata": {"labels": {"app": "web"}},
                      "spec": restricted({"containers": [{"name": "nginx", "image": "nginx"}]})}}}
    kube_cluster.kubectl("apply", "-f", "-", input=json.dumps(deployment))
    deployment = await wait_for(
        kube_client, "deployments.apps", "web", namespace,
        lambda d: d.get("status", {}).get("availableReplicas") == 3, timeout=90, description="3/3 available")
    assert deployment["status"]["readyReplicas"] == 3
    pods = (await kube_client.list("pods", namespace, label_selector="app=web"))["items"]
    assert len(pods) == 3
    assert {p["status"]["phase"] for p in pods} == {"Running"}
    assert all(p["spec"]["nodeName"].startswith("kwok-node-") for p in pods)


async def test_namespace_deletion_is_finalized(kube_client: Client) -> None:
    name = "t-ns-finalize"
    await kube_client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    await kube_client.create(_configmap("content", name))
    await kube_client.delete("namespaces", name)
    # The namespace controller must empty it and remove the `kubernetes` finalizer.
    await wait_for_deletion(kube_client, "namespaces", name, timeout=90)


async def test_service_account_rbac(kube_cluster: Any, kube_client: Client, namespace: str,
                                    tmp_path: Any) -> None:
    await kube_client.create({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "reader"}},
                             namespace)
    await kube_client.create({
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": {"name": "cm-reader"},
        "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list", "watch"]}],
    }, namespace)
    await kube_client.create({
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding", "metadata": {"name": "reader"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "cm-reader"},
        "subjects": [{"kind": "ServiceAccount", "name": "reader", "namespace": namespace}],
    }, namespace)
    await kube_client.create(_configmap("visible", namespace))

    path = kube_cluster.service_account_kubeconfig(namespace, "reader", tmp_path / "reader.kubeconfig")
    sa_client = await Client.from_kubeconfig(str(path))
    try:
        # The RBAC authorizer learns about new bindings through an informer: allow it a moment.
        async with asyncio.timeout(10):
            while True:
                try:
                    got = await sa_client.get("configmaps", "visible", namespace)
                    break
                except Forbidden:
                    await asyncio.sleep(0.1)
        assert got["data"] == {"k": "v"}
        listed = await sa_client.list("configmaps", namespace)
        assert "visible" in {i["metadata"]["name"] for i in listed["items"]}

        with pytest.raises(Forbidden) as denied:
            await sa_client.list("secrets", namespace)
        assert denied.value.status == 403
        with pytest.raises(Forbidden):
            await sa_client.create(_configmap("nope", namespace))
        with pytest.raises(Forbidden):
            await sa_client.list("configmaps", "default")  # other namespaces stay closed
    finally:
        await sa_client.close()


async def test_wait_for_reports_the_expectation_and_last_object(kube_client: Client, namespace: str) -> None:
    await kube_client.create(_configmap("slow", namespace))
    # Already true: returns at once from the initial LIST.
    found = await wait_for(kube_client, "configmaps", "slow", namespace, lambda cm: cm["data"]["k"] == "v")
    assert found["metadata"]["name"] == "slow"
    with pytest.raises(AssertionError) as failure:
        await wait_for(kube_client, "configmaps", "slow", namespace, lambda cm: cm["data"]["k"] == "never",
                       timeout=1, description="k == never")
    message = str(failure.value)
    assert "k == never" in message and f"configmaps {namespace}/slow" in message
    assert '"data":{"k":"v"}' in message and "managedFields" not in message
