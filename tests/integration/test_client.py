"""The client against the real API server: verbs, typed errors, pagination, apply, subresources."""

from __future__ import annotations

import pytest

from kubeloop.client import AlreadyExists, Client, Conflict, Invalid, NotFound

from .conftest import echo


def cm(name: str, ns: str, **data: str) -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": ns}, "data": data}


async def test_crud_and_typed_errors(kube_client: Client, namespace: str) -> None:
    created = await kube_client.create(cm("a", namespace, k="1"))
    assert created["metadata"]["uid"]
    with pytest.raises(AlreadyExists):
        await kube_client.create(cm("a", namespace))
    got = await kube_client.get("configmaps", "a", namespace)
    assert got["data"] == {"k": "1"}
    # A stale resourceVersion makes a replace fail with 409 instead of overwriting.
    await kube_client.patch("ConfigMap", "a", {"data": {"k": "2"}}, namespace)
    with pytest.raises(Conflict) as err:
        await kube_client.replace({**got, "data": {"k": "3"}})
    assert err.value.status == 409 and not isinstance(err.value, AlreadyExists)
    # Delete preconditions: a wrong uid refuses to delete.
    with pytest.raises(Conflict):
        await kube_client.delete("configmaps", "a", namespace, uid="00000000-0000-0000-0000-000000000000")
    await kube_client.delete("configmaps", "a", namespace)
    with pytest.raises(NotFound):
        await kube_client.get("configmaps", "a", namespace)


async def test_invalid_names_the_field(kube_client: Client, namespace: str, echo_crd: str) -> None:
    with pytest.raises(Invalid) as err:
        await kube_client.create(echo("bad", namespace, copies=-1))
    assert any(c.get("field") == "spec.copies" for c in err.value.causes), err.value.causes


async def test_paginated_list(kube_client: Client, namespace: str) -> None:
    for i in range(7):
        await kube_client.create(cm(f"p{i}", namespace))
    pages = [p async for p in kube_client.list_pages("configmaps", namespace, limit=3)]
    assert len(pages) >= 3
    names = {o["metadata"]["name"] for p in pages for o in p["items"]}
    assert {f"p{i}" for i in range(7)} <= names
    merged = await kube_client.list("configmaps", namespace, limit=3)
    assert {o["metadata"]["name"] for o in merged["items"]} == names


async def test_patch_types_and_dry_run(kube_client: Client, namespace: str) -> None:
    await kube_client.create(cm("p", namespace, a="1", b="2"))
    out = await kube_client.patch("configmaps", "p", [{"op": "test", "path": "/data/a", "value": "1"},
                                                      {"op": "remove", "path": "/data/b"}], namespace,
                                  type="json")
    assert out["data"] == {"a": "1"}
    with pytest.raises(Invalid):  # a failed JSON-patch test op is 422
        await kube_client.patch("configmaps", "p", [{"op": "test", "path": "/data/a", "value": "x"}],
                                namespace, type="json")
    dry = await kube_client.patch("configmaps", "p", {"data": {"a": "dry"}}, namespace, dry_run=True)
    assert dry["data"]["a"] == "dry"
    assert (await kube_client.get("configmaps", "p", namespace))["data"]["a"] == "1"


async def test_server_side_apply_owns_and_removes_fields(kube_client: Client, namespace: str) -> None:
    body = cm("ssa", namespace, x="1", y="2")
    await kube_client.apply(body, field_manager="mgr-a")
    await kube_client.patch("configmaps", "ssa", {"data": {"other": "keep"}}, namespace)  # another manager
    await kube_client.apply(cm("ssa", namespace, x="1"), field_manager="mgr-a")  # y no longer applied
    data = (await kube_client.get("configmaps", "ssa", namespace))["data"]
    assert data == {"x": "1", "other": "keep"}


async def test_status_subresource_does_not_bump_generation(kube_client: Client, namespace: str,
                                                           echo_crd: str) -> None:
    obj = await kube_client.create(echo("s", namespace))
    gen = obj["metadata"]["generation"]
    out = await kube_client.patch_status(echo_crd, "s", {"seen": "yes"}, namespace)
    assert out["status"]["seen"] == "yes" and out["metadata"]["generation"] == gen
    # Writing status through the main resource is ignored by the server.
    out = await kube_client.patch(echo_crd, "s", {"status": {"seen": "no"}}, namespace)
    assert out["status"]["seen"] == "yes"


async def test_scale_subresource(kube_client: Client, namespace: str) -> None:
    dep = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d", "namespace": namespace},
           "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "d"}}, "template": {
               "metadata": {"labels": {"app": "d"}},
               "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}
    await kube_client.create(dep)
    scale = await kube_client.get("deployments.apps", "d", namespace, subresource="scale")
    assert scale["spec"]["replicas"] == 1
    await kube_client.patch("deployments.apps", "d", {"spec": {"replicas": 3}}, namespace, subresource="scale")
    assert (await kube_client.get("deployments", "d", namespace))["spec"]["replicas"] == 3


async def test_discovery_finds_a_crd_installed_after_start(kube_client: Client, echo_crd: str) -> None:
    for name in ("echoes", "Echo", "echo", "echoes.test.kubeloop.dev", "test.kubeloop.dev/v1/Echo"):
        res = await kube_client.resource(name)
        assert (res.group, res.plural, res.namespaced) == ("test.kubeloop.dev", "echoes", True)
    deploy = await kube_client.resource("deploy")
    assert deploy.group_resource == "deployments.apps" and "scale" in deploy.subresources
