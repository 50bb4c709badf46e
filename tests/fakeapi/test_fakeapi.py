"""The fake API server on its own (no cluster; milliseconds per test): kubeloop's real client, watcher
and kubectl against it, and the behaviours the real control plane cannot be made to show on demand
(410 Gone after compaction). Agreement with the real server is tested in tests/differential/."""

from __future__ import annotations

import asyncio
import importlib.util
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from kubeloop.client import Client, Conflict, Gone, Invalid, NotFound
from kubeloop.client.errors import ApiError
from kubeloop.testing.apiserver import FakeApiServer, FakeClock
from kubeloop.watch.watcher import Changed, Relisted, Watcher, WatchOptions

CM = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "namespace": "default"},
      "data": {"k": "v"}}
KUBECTL = next(iter(sorted(Path.home().glob(".cache/kubeloop/bin/k8s-*/kubectl"))), None)


async def test_starts_in_under_50_ms() -> None:
    started = time.perf_counter()
    server = await FakeApiServer().start()
    elapsed = time.perf_counter() - started
    await server.stop()
    assert elapsed < 0.05, f"started in {elapsed * 1000:.1f} ms"


async def test_client_crud_and_conflict(fake_client: Client) -> None:
    created = await fake_client.create(CM)
    assert created["metadata"]["resourceVersion"] and created["metadata"]["uid"]
    updated = await fake_client.patch("configmaps", "a", {"data": {"k": "w"}}, "default")
    assert int(updated["metadata"]["resourceVersion"]) > int(created["metadata"]["resourceVersion"])
    with pytest.raises(Conflict):
        await fake_client.replace(created)  # the stale resourceVersion
    await fake_client.delete("configmaps", "a", "default")
    with pytest.raises(NotFound):
        await fake_client.get("configmaps", "a", "default")


async def test_watcher_lists_then_streams(fake_api: FakeApiServer, fake_client: Client) -> None:
    res = await fake_client.resource("configmaps")
    events: list[Any] = []

    async def collect() -> None:
        async for event in Watcher(fake_client, res, WatchOptions(namespace="default")):
            events.append(event)
            if isinstance(event, Changed) and event.object["metadata"]["name"] == "a":
                return

    task = asyncio.create_task(collect())
    await asyncio.sleep(0.05)
    await fake_client.create(CM)
    await asyncio.wait_for(task, 5)
    assert isinstance(events[0], Relisted)  # the streaming list (sendInitialEvents) ended with its bookmark
    assert [e.type for e in events[1:]] == ["ADDED"]


async def test_watch_from_a_compacted_resource_version_is_gone(fake_api: FakeApiServer, fake_client: Client
                                                                ) -> None:
    first = await fake_client.create(CM)
    await fake_client.patch("configmaps", "a", {"data": {"k": "2"}}, "default")
    fake_api.compact()
    with pytest.raises(Gone) as caught:
        async for event in fake_client.watch("configmaps", "default",
                                             resource_version=first["metadata"]["resourceVersion"]):
            if event["type"] == "ERROR":
                obj = event["object"]
                raise Gone(obj["code"], obj["reason"], obj["message"], obj)
    assert caught.value.reason == "Expired"
    assert caught.value.message.startswith("too old resource version: ")


async def test_continue_token_and_exact_list_expire_with_compaction(fake_api: FakeApiServer,
                                                                    fake_client: Client) -> None:
    for name in "abc":
        await fake_client.create({**CM, "metadata": {"name": name, "namespace": "default", "labels": {"p": "1"}}})
    pages = fake_client.list_pages("configmaps", "default", label_selector="p=1", limit=1)
    page = await anext(pages)
    rv = page["metadata"]["resourceVersion"]
    await fake_client.create({**CM, "metadata": {"name": "d", "namespace": "default"}})
    fake_api.compact()  # the page's snapshot is now older than the oldest revision kept
    with pytest.raises(Gone):
        await anext(pages)
    with pytest.raises(Gone):
        await fake_client.transport.request("GET", "/api/v1/namespaces/default/configmaps", params={
            "resourceVersion": str(int(rv) - 1), "resourceVersionMatch": "Exact"})


async def test_unserved_answers_501(fake_api: FakeApiServer, fake_client: Client) -> None:
    await fake_client.create(CM)
    with pytest.raises(ApiError) as caught:
        await fake_client.get("pods", "p", "default", subresource="log")
    assert caught.value.status == 501 and "does not serve" in caught.value.message


async def test_a_dry_run_deletecollection_lists_what_it_would_delete(fake_client: Client) -> None:
    await fake_client.create(CM)
    answer = await fake_client.transport.request("DELETE", "/api/v1/namespaces/default/configmaps",
                                                 params={"dryRun": "All"})
    names = sorted(o["metadata"]["name"] for o in answer["items"])
    assert names == ["a", "kube-root-ca.crt"]
    left = sorted(o["metadata"]["name"] for o in (await fake_client.list("configmaps", "default"))["items"])
    assert left == names, "a dry run deletes nothing"


async def test_a_dry_run_patch_or_delete_answers_and_changes_nothing(fake_client: Client) -> None:
    await fake_client.create(CM)
    patched = await fake_client.patch("configmaps", "a", {"data": {"k": "w"}}, "default", dry_run=True)
    assert patched["data"] == {"k": "w"}
    await fake_client.delete("configmaps", "a", "default", dry_run=True)
    assert (await fake_client.get("configmaps", "a", "default"))["data"] == {"k": "v"}, "a dry run changes nothing"


async def test_a_dry_run_create_checks_everything_and_stores_nothing(fake_client: Client) -> None:
    probe = {**CM, "metadata": {"generateName": "a-", "namespace": "default"}}
    created = await fake_client.create(probe, dry_run=True)
    assert created["metadata"]["name"].startswith("a-") and created["metadata"]["uid"]
    assert [o["metadata"]["name"] for o in (await fake_client.list("configmaps", "default"))["items"]] == [
        "kube-root-ca.crt"]
    await fake_client.create(CM)
    with pytest.raises(ApiError) as taken:
        await fake_client.create(CM, dry_run=True)
    assert taken.value.status == 409
    with pytest.raises(Invalid):
        await fake_client.create({**CM, "metadata": {"name": "Not_A_Name", "namespace": "default"}}, dry_run=True)


async def test_cel_rules_are_checked_or_refused(fake_api: FakeApiServer, fake_client: Client) -> None:
    """With cel-python a failed rule is a 422 like the real server's; without it, 501 (never skipped)."""
    crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "metadata": {"name": "gadgets.x.dev"},
           "spec": {"group": "x.dev", "scope": "Namespaced", "names": {"kind": "Gadget", "plural": "gadgets"},
                    "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {
                        "type": "object", "properties": {"spec": {
                            "type": "object", "properties": {"size": {"type": "integer", "x-kubernetes-validations": [
                                {"rule": "self > 0", "message": "size must be positive"}]}}}}}}}]}}
    await fake_client.create(crd)
    await fake_api.settle()
    with pytest.raises(ApiError) as caught:
        await fake_client.create({"apiVersion": "x.dev/v1", "kind": "Gadget",
                                  "metadata": {"name": "g", "namespace": "default"}, "spec": {"size": 0}})
    if importlib.util.find_spec("celpy") is None:
        assert caught.value.status == 501 and "CEL" in caught.value.message
    else:
        assert caught.value.status == 422
        assert caught.value.causes == [{"reason": "FieldValueInvalid", "field": "spec.size",
                                        "message": "Invalid value: 0: size must be positive"}]


async def test_schema_defaults_and_validation(fake_api: FakeApiServer, fake_client: Client) -> None:
    crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "metadata": {"name": "things.x.dev"},
           "spec": {"group": "x.dev", "scope": "Namespaced", "names": {"kind": "Thing", "plural": "things"},
                    "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {
                        "type": "object", "properties": {"spec": {"type": "object", "properties": {
                            "mode": {"type": "string", "default": "slow", "enum": ["slow", "fast"]}}}}}}}]}}
    await fake_client.create(crd)
    await fake_api.settle()
    thing = {"apiVersion": "x.dev/v1", "kind": "Thing", "metadata": {"name": "t", "namespace": "default"},
             "spec": {"extra": 1}}
    created = await fake_client.create(thing)
    assert created["spec"] == {"mode": "slow"}  # pruned and defaulted
    with pytest.raises(Invalid) as caught:
        await fake_client.patch("things", "t", {"spec": {"mode": "medium"}}, "default")
    assert caught.value.causes[0]["field"] == "spec.mode"


async def test_kubeconfig_for_client(fake_api: FakeApiServer, tmp_path: Path) -> None:
    path = fake_api.write_kubeconfig(tmp_path / "kubeconfig")
    async with await Client.from_kubeconfig(str(path)) as client:
        namespaces = await client.list("namespaces")
    assert {"default", "kube-system"} <= {n["metadata"]["name"] for n in namespaces["items"]}


async def _kubectl(kubeconfig: Path, *args: str, stdin: bytes = b"") -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(str(KUBECTL), "--kubeconfig", str(kubeconfig), *args,
                                                stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                                stderr=subprocess.PIPE)
    out, err = await proc.communicate(stdin)
    return proc.returncode or 0, out.decode(), err.decode()


@pytest.mark.skipif(KUBECTL is None, reason="kubectl is not built (kubeloop cluster up builds it)")
async def test_kubectl_verbs(fake_api: FakeApiServer, tmp_path: Path) -> None:
    """kubectl create, server-side apply, get, patch, replace and delete work (with --validate=false: the
    fake serves no OpenAPI document)."""
    path = fake_api.write_kubeconfig(tmp_path / "kubeconfig")
    manifest = b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: k\ndata:\n  a: b\n"
    code, _, err = await _kubectl(path, "apply", "--server-side", "--validate=false", "-f", "-", stdin=manifest)
    assert code == 0, err
    code, out, err = await _kubectl(path, "get", "configmap", "k", "-o", "jsonpath={.data.a}")
    assert (code, out) == (0, "b"), err
    code, _, err = await _kubectl(path, "create", "--validate=false", "-f", "-",
                                  stdin=manifest.replace(b"name: k", b"name: c"))
    assert code == 0, err
    code, _, err = await _kubectl(path, "patch", "configmap", "c", "-p", '{"data":{"a":"p"}}')
    assert code == 0, err
    code, _, err = await _kubectl(path, "replace", "--validate=false", "-f", "-",
                                  stdin=manifest.replace(b"name: k", b"name: c").replace(b"a: b", b"a: r"))
    assert code == 0, err
    code, out, err = await _kubectl(path, "get", "configmap", "c", "-o", "jsonpath={.data.a}")
    assert (code, out) == (0, "r"), err
    code, _, err = await _kubectl(path, "delete", "configmap", "c")
    assert code == 0, err
    code, out, err = await _kubectl(path, "get", "configmaps", "-o", "name")
    assert code == 0 and "configmap/k" in out.split() and "configmap/c" not in out.split(), err


async def test_fake_clock_stamps_objects() -> None:
    clock = FakeClock()
    async with FakeApiServer(clock=clock) as server, await server.client() as client:
        first = await client.create(CM)
        clock.advance(90)
        await client.delete("configmaps", "a", "default")
        second = await client.create(CM)
    assert first["metadata"]["creationTimestamp"] == "2026-01-01T00:00:00Z"
    assert second["metadata"]["creationTimestamp"] == "2026-01-01T00:01:30Z"


async def test_namespace_deletion_and_garbage_collection(fake_api: FakeApiServer, fake_client: Client) -> None:
    await fake_client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "gone"}})
    owner = await fake_client.create({**CM, "metadata": {"name": "owner", "namespace": "gone"}})
    await fake_client.create({**CM, "metadata": {"name": "dep", "namespace": "gone", "ownerReferences": [
        {"apiVersion": "v1", "kind": "ConfigMap", "name": "owner", "uid": owner["metadata"]["uid"]}]}})
    await fake_client.delete("configmaps", "owner", "gone")
    await fake_api.settle()
    with pytest.raises(NotFound):
        await fake_client.get("configmaps", "dep", "gone")
    answer = await fake_client.delete("namespaces", "gone")
    assert answer["status"]["phase"] == "Terminating"
    await fake_api.settle()
    with pytest.raises(NotFound):
        await fake_client.get("namespaces", "gone")
