"""kubeloop.testing.FakeClient: the API server behaviour the other unit tests lean on (versions, errors,
finalizers, watches). What it leaves out is listed in its docstring."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from kubeloop.client import AlreadyExists, Client, Conflict, Invalid, NotFound
from kubeloop.helpers import finalizers
from kubeloop.resources.builtin import CONFIG_MAP, DEPLOYMENT, LEASE
from kubeloop.testing.fakeclient import FakeClient


def cm(name: str, ns: str = "ns", **data: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": ns}, "data": data}


async def test_writes_bump_one_resource_version_and_stale_writes_conflict() -> None:
    client = FakeClient(cm("a", k="1"))
    first = await client.get("configmaps", "a", "ns")
    assert first["metadata"]["resourceVersion"] == "1" and first["metadata"]["uid"]
    patched = await client.patch(CONFIG_MAP, "a", {"data": {"k": "2", "x": "y"}}, "ns")
    assert patched["metadata"]["resourceVersion"] == "2" and patched["data"] == {"k": "2", "x": "y"}
    with pytest.raises(Conflict):
        await client.replace({**first, "data": {"k": "old"}}, resource=CONFIG_MAP)
    with pytest.raises(Conflict):  # a merge patch naming a resourceVersion is conditional too
        await client.patch(CONFIG_MAP, "a", {"metadata": {"resourceVersion": "1"}, "data": {"k": "3"}}, "ns")
    same = await client.patch(CONFIG_MAP, "a", {"data": {"k": "2"}}, "ns")
    assert same["metadata"]["resourceVersion"] == "2", "a no-op write keeps the version"
    assert (await client.patch(CONFIG_MAP, "a", {"data": {"x": None}}, "ns"))["data"] == {"k": "2"}


async def test_missing_and_taken_names_raise_the_clients_errors() -> None:
    client = FakeClient(cm("a"))
    with pytest.raises(NotFound):
        await client.get(CONFIG_MAP, "b", "ns")
    with pytest.raises(AlreadyExists):
        await client.create(cm("a"))
    with pytest.raises(NotFound, match="resource type"):
        await client.resource("widgets.example.com")
    created = await client.create(cm("b"), resource="cm")
    assert created["metadata"]["namespace"] == "ns" and client.verbs() == ["get", "create", "create"]


async def test_spec_changes_bump_generation_status_writes_do_not() -> None:
    client = FakeClient({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d", "namespace": "ns"},
                         "spec": {"replicas": 1}})
    status = await client.patch_status(DEPLOYMENT, "d", {"readyReplicas": 1}, "ns")
    assert status["metadata"]["generation"] == 1 and status["status"] == {"readyReplicas": 1}
    scaled = await client.patch(DEPLOYMENT, "d", {"spec": {"replicas": 2}, "status": {"readyReplicas": 9}}, "ns")
    assert scaled["metadata"]["generation"] == 2
    assert scaled["status"] == {"readyReplicas": 1}, "the main resource cannot write its status subresource"


async def test_finalizers_hold_a_deleted_object_until_the_last_goes() -> None:
    client = FakeClient(cm("a"))
    obj = await finalizers.add_finalizer(client, CONFIG_MAP, await client.get(CONFIG_MAP, "a", "ns"), "x.io/f")
    assert obj["metadata"]["finalizers"] == ["x.io/f"]
    deleting = await client.delete(CONFIG_MAP, "a", "ns")
    assert deleting["metadata"]["deletionTimestamp"] and client.stored(CONFIG_MAP, "a", "ns") is not None
    await finalizers.remove_finalizer(client, CONFIG_MAP, deleting, "x.io/f")
    assert client.stored(CONFIG_MAP, "a", "ns") is None


async def test_a_failed_json_patch_test_is_invalid_and_delete_preconditions_conflict() -> None:
    client = FakeClient(cm("a"))
    with pytest.raises(Invalid):
        await client.patch(CONFIG_MAP, "a", [{"op": "test", "path": "/metadata/resourceVersion", "value": "9"},
                                             {"op": "add", "path": "/data/k", "value": "v"}], "ns", type="json")
    stored = client.stored(CONFIG_MAP, "a", "ns")
    assert stored is not None and "k" not in stored["data"], "a failed test op applies no op"
    with pytest.raises(Conflict):
        await client.delete(CONFIG_MAP, "a", "ns", uid="someone-else")


async def test_injected_failures_are_counted_and_recorded() -> None:
    client = FakeClient()
    client.fail("create", Conflict(409, "Conflict", "x"), times=2, resource=LEASE)
    lease = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": "l", "namespace": "ns"}}
    for _ in range(2):
        with pytest.raises(Conflict):
            await client.create(lease)
    await client.create(lease)
    assert [c.verb for c in client.calls] == ["create"] * 3


async def test_watch_streams_initial_events_then_changes_and_resumes_from_a_version() -> None:
    client = FakeClient(cm("a"), cm("other", ns="elsewhere"))
    stream = client.watch(CONFIG_MAP, "ns", send_initial_events=True)
    added, end = await anext(stream), await anext(stream)
    assert added["object"]["metadata"]["name"] == "a" and end["type"] == "BOOKMARK"
    assert end["object"]["metadata"]["annotations"] == {"k8s.io/initial-events-end": "true"}
    await client.create(cm("b"))
    await client.create(cm("c", ns="elsewhere"))  # not in the watched namespace
    await client.delete(CONFIG_MAP, "a", "ns")
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in [await anext(stream), await anext(stream)]] == [
        ("ADDED", "b"), ("DELETED", "a")]
    resumed = client.watch(CONFIG_MAP, "ns", resource_version=end["object"]["metadata"]["resourceVersion"])
    assert (await anext(resumed))["object"]["metadata"]["name"] == "b"
    client.close_watches()
    with pytest.raises(StopAsyncIteration):
        await asyncio.wait_for(anext(stream), 1)


async def test_a_watch_from_before_a_compaction_is_gone() -> None:
    client = FakeClient(cm("a"))
    await client.patch(CONFIG_MAP, "a", {"data": {"k": "v"}}, "ns")
    client.compact()
    (event,) = [e async for e in client.watch(CONFIG_MAP, "ns", resource_version="1")]
    assert event["type"] == "ERROR" and event["object"]["code"] == 410


def test_fixtures_may_name_their_resource_version_but_versions_only_grow() -> None:
    client = FakeClient()
    kept = client.add({**cm("a"), "metadata": {"name": "a", "namespace": "ns", "resourceVersion": "7"}})
    assert kept["metadata"]["resourceVersion"] == "7" and client.resource_version == 7
    assert client.add(cm("b"))["metadata"]["resourceVersion"] == "8"
    with pytest.raises(ValueError, match="resourceVersion '3' must be a number above the last one handed out"):
        client.add({**cm("c"), "metadata": {"name": "c", "namespace": "ns", "resourceVersion": "3"}})


async def test_names_resolve_as_discovery_resolves_them() -> None:
    client = FakeClient()
    for name in ("deployments", "deploy", "Deployment", "deployments.apps", "apps/v1/Deployment"):
        assert await client.resource(name) is DEPLOYMENT, name
        assert await client.registry.resolve(name) is DEPLOYMENT, name
    with pytest.raises(NotFound, match="argoproj.io/v1alpha1/Rollout"):
        await client.registry.resolve("argoproj.io/v1alpha1/Rollout")


# --8<-- [start:unit]
async def scale(client: Client, name: str, namespace: str, replicas: int) -> None:
    """The code under test: sets a Deployment's replicas unless they are already right."""
    deployment = await client.get(DEPLOYMENT, name, namespace)
    if deployment["spec"].get("replicas") != replicas:
        await client.patch(DEPLOYMENT, name, {"spec": {"replicas": replicas}}, namespace)


async def test_scale_writes_only_when_needed() -> None:
    client = FakeClient({"apiVersion": "apps/v1", "kind": "Deployment",
                         "metadata": {"name": "web", "namespace": "shop"}, "spec": {"replicas": 1}})
    await scale(client, "web", "shop", 3)
    await scale(client, "web", "shop", 3)
    stored = client.stored(DEPLOYMENT, "web", "shop")
    assert stored is not None and stored["spec"]["replicas"] == 3
    assert client.verbs() == ["get", "patch", "get"]
    client.fail("get", NotFound(404, "NotFound", 'deployments.apps "web" not found'))
    with pytest.raises(NotFound):
        await scale(client, "web", "shop", 4)
# --8<-- [end:unit]


def test_unknown_verbs_and_misplaced_options_are_refused_by_name() -> None:
    client = FakeClient()
    with pytest.raises(ValueError, match="fail\\('put'\\): the verbs are get, list, watch, create, update"):
        client.fail("put", Conflict(409, "Conflict", "x"))
    with pytest.raises(ValueError, match="fail\\(after=2\\) is for watches, not 'get'"):
        client.fail("get", Conflict(409, "Conflict", "x"), after=2)
