"""The webhook server called by the real kube-apiserver on 127.0.0.1 (no tunnel): admission (denial with a
field path, defaulting, warnings, dry-run, UPDATE's old object, failure policies when down), conversion of
a two-version CRD, and certificate rotation in the middle of a stream of requests.

Every webhook configuration is scoped to the test's namespace and deleted afterwards, so the rest of the
suite (same cluster) never goes through it. kubectl runs in a thread: the server shares the test's loop.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import socket
from collections.abc import AsyncIterator, Callable
from typing import Any

import aiohttp
import pytest
import pytest_asyncio

from kubeloop.client import ApiError, Client, Invalid, NotFound
from kubeloop.client.resource import Resource
from kubeloop.client.wait import wait_for_crd
from kubeloop.envtest import LocalCluster
from kubeloop.testing import wait_for
from kubeloop.webhooks import (
    AdmissionRequest,
    Converter,
    Denied,
    Endpoint,
    Rule,
    WebhookCerts,
    WebhookServer,
    WebhookSpec,
    mutating_configuration,
    validating_configuration,
    with_conversion,
)
from kubeloop.webhooks.migration import migrate_storage
from tests.integration.polling import eventually

SEEN: list[AdmissionRequest] = []
CONFIGMAPS = Rule(("",), ("v1",), ("configmaps",), ("CREATE", "UPDATE"))
GROUP = "webhooks.test.kubeloop.dev"


async def validate(req: AdmissionRequest) -> None:
    """Rules for ConfigMaps: replicas ≤ 10, ``immutable`` never changes; ``deprecated`` warns."""
    SEEN.append(req)
    data = (req.object or {}).get("data") or {}
    if "deprecated" in data:
        req.warn("data.deprecated is deprecated; use data.current")
    if int(data.get("replicas", "0")) > 10:
        raise Denied(f"must be at most 10, got {data['replicas']}", field="data.replicas")
    old = ((req.old_object or {}).get("data") or {}).get("immutable")
    if req.operation == "UPDATE" and old is not None and data.get("immutable") != old:
        raise Denied(f"is immutable (was {old!r})", field="data.immutable")


async def default(req: AdmissionRequest) -> dict[str, Any]:
    obj = req.object or {}
    obj.setdefault("data", {}).setdefault("mode", "standard")
    return obj


def rename(src: str, dst: str) -> Callable[[dict[str, Any]], dict[str, Any]]:
    def fn(obj: dict[str, Any]) -> dict[str, Any]:
        spec = dict(obj.get("spec") or {})
        if src in spec:
            spec[dst] = spec.pop(src)
        return {**obj, "spec": spec}
    return fn


NOTES = Converter(f"{GROUP}/v1beta1")  # v1beta1 renamed v1alpha1's spec.message to spec.text
NOTES.spoke(f"{GROUP}/v1alpha1", to_hub=rename("message", "text"), from_hub=rename("text", "message"))


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def server() -> AsyncIterator[WebhookServer]:
    certs = WebhookCerts()
    srv = WebhookServer(certs)
    srv.validating("/validate-configmaps", validate)
    srv.mutating("/default-configmaps", default)
    srv.conversion("/convert-notes", NOTES)
    await srv.start()
    yield srv
    await srv.stop()
    certs.close()


def only(namespace: str) -> dict[str, Any]:
    return {"matchLabels": {"kubernetes.io/metadata.name": namespace}}


def configmap(name: str, namespace: str, **data: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": namespace},
            "data": data}


async def refused(client: Client, body: dict[str, Any]) -> bool:
    try:
        await client.create(body, dry_run=True)
    except ApiError:
        return True
    return False


@contextlib.asynccontextmanager
async def installed(client: Client, *configs: dict[str, Any]) -> AsyncIterator[None]:
    for config in configs:
        await client.create(config)
    try:
        yield
    finally:
        for config in configs:
            res = await client.resource_of(config)
            with contextlib.suppress(NotFound):
                await client.delete(res, config["metadata"]["name"])


def validating(srv: WebhookServer, namespace: str, *extra: WebhookSpec, name: str = "") -> dict[str, Any]:
    spec = WebhookSpec("configmaps.validate.kubeloop.dev", "/validate-configmaps", (CONFIGMAPS,),
                       namespace_selector=only(namespace))
    return validating_configuration(name or f"v-{namespace}", [spec, *extra], Endpoint(url=srv.url("")),
                                    operator_namespace="kubeloop-system", ca_bundle=srv.certs.ca_bundle_b64)


def mutating(srv: WebhookServer, namespace: str) -> dict[str, Any]:
    spec = WebhookSpec("configmaps.default.kubeloop.dev", "/default-configmaps", (CONFIGMAPS,),
                       namespace_selector=only(namespace))
    return mutating_configuration(f"m-{namespace}", [spec], Endpoint(url=srv.url("")),
                                  operator_namespace="kubeloop-system", ca_bundle=srv.certs.ca_bundle_b64)


async def kubectl(cluster: Any, *args: str, input: str | None = None, check: bool = True) -> Any:
    return await asyncio.to_thread(cluster.kubectl, *args, input=input, check=check)


async def test_denial_names_the_field_path(kube_client: Client, kube_cluster: Any, namespace: str,
                                           server: WebhookServer) -> None:
    async with installed(kube_client, validating(server, namespace)):
        await eventually(lambda: refused(kube_client, configmap("probe", namespace, replicas="99")),
                         "the validating webhook to be called")
        with pytest.raises(Invalid) as err:
            await kube_client.create(configmap("big", namespace, replicas="11"))
        assert "data.replicas: must be at most 10, got 11" in err.value.message
        assert [c.get("field") for c in err.value.causes] == ["data.replicas"]
        proc = await kubectl(kube_cluster, "apply", "-f", "-", check=False,
                             input=json.dumps(configmap("big", namespace, replicas="12")))
        assert proc.returncode != 0 and "data.replicas: must be at most 10, got 12" in proc.stderr
        await kube_client.create(configmap("small", namespace, replicas="3"))


async def test_defaulting_is_stored_and_warnings_reach_kubectl(kube_client: Client, kube_cluster: Any,
                                                               namespace: str, server: WebhookServer) -> None:
    async def defaulted() -> bool:
        out = await kube_client.create(configmap("probe", namespace), dry_run=True)
        return out["data"].get("mode") == "standard"

    async with installed(kube_client, mutating(server, namespace), validating(server, namespace)):
        await eventually(defaulted, "the mutating webhook to be called")
        await eventually(lambda: refused(kube_client, configmap("probe", namespace, replicas="99")),
                         "the validating webhook to be called")
        proc = await kubectl(kube_cluster, "apply", "-f", "-",
                             input=json.dumps(configmap("old", namespace, deprecated="1")))
        assert "Warning: data.deprecated is deprecated; use data.current" in proc.stderr
        stored = await kube_client.get("configmaps", "old", namespace)
        assert stored["data"] == {"deprecated": "1", "mode": "standard"}
        await kube_client.create(configmap("explicit", namespace, mode="fast"))
        assert (await kube_client.get("configmaps", "explicit", namespace))["data"]["mode"] == "fast"


async def test_dry_run_is_seen_and_nothing_is_stored(kube_client: Client, namespace: str,
                                                     server: WebhookServer) -> None:
    async with installed(kube_client, mutating(server, namespace), validating(server, namespace)):
        await eventually(lambda: refused(kube_client, configmap("probe", namespace, replicas="99")),
                         "the validating webhook to be called")
        SEEN.clear()
        out = await kube_client.create(configmap("dry", namespace, replicas="2"), dry_run=True)
        assert out["data"]["mode"] == "standard", "the mutation applies to the dry-run answer"
        assert [(r.name, r.dry_run) for r in SEEN] == [("dry", True)]
        with pytest.raises(NotFound):
            await kube_client.get("configmaps", "dry", namespace)


async def test_update_sees_the_old_object(kube_client: Client, namespace: str, server: WebhookServer) -> None:
    await kube_client.create(configmap("cfg", namespace, immutable="a", replicas="1"))
    async with installed(kube_client, validating(server, namespace)):
        await eventually(lambda: refused(kube_client, configmap("probe", namespace, replicas="99")),
                         "the validating webhook to be called")
        SEEN.clear()
        await kube_client.patch("configmaps", "cfg", {"data": {"replicas": "2"}}, namespace)
        update = [r for r in SEEN if r.operation == "UPDATE"]
        assert update and update[0].old_object["data"]["replicas"] == "1"  # type: ignore[index]
        assert update[0].object["data"]["replicas"] == "2"  # type: ignore[index]
        assert update[0].user.username == "kubeloop-admin" and "system:masters" in update[0].user.groups
        with pytest.raises(Invalid) as err:
            await kube_client.patch("configmaps", "cfg", {"data": {"immutable": "b"}}, namespace)
        assert "data.immutable: is immutable (was 'a')" in err.value.message


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.parametrize("policy", ["Ignore", "Fail"])
async def test_webhook_down_follows_the_failure_policy(kube_client: Client, namespace: str, server: WebhookServer,
                                                       policy: str) -> None:
    """A live webhook proves the configuration is in effect; its sibling points at a closed port."""
    down = WebhookSpec("down.validate.kubeloop.dev", "/validate-configmaps", (CONFIGMAPS,),
                       failure_policy=policy, namespace_selector=only(namespace))
    config = validating(server, namespace, down)
    config["webhooks"][1]["clientConfig"]["url"] = f"https://127.0.0.1:{_closed_port()}/validate-configmaps"
    async with installed(kube_client, config):
        await eventually(lambda: refused(kube_client, configmap("probe", namespace, replicas="99")),
                         "the live webhook to be called")
        if policy == "Ignore":
            await kube_client.create(configmap("ok", namespace, replicas="1"))
            return
        with pytest.raises(ApiError) as err:
            await kube_client.create(configmap("ok", namespace, replicas="1"))
        assert 'failed calling webhook "down.validate.kubeloop.dev"' in err.value.message


NOTES_CRD: dict[str, Any] = {
    "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
    "metadata": {"name": f"notes.{GROUP}"},
    "spec": {"group": GROUP, "scope": "Namespaced",
             "names": {"kind": "Note", "plural": "notes", "singular": "note", "listKind": "NoteList"},
             "versions": [
                 {"name": "v1alpha1", "served": True, "storage": False, "schema": {"openAPIV3Schema": {
                     "type": "object", "properties": {"spec": {"type": "object", "properties": {
                         "message": {"type": "string"}}}}}}},
                 {"name": "v1beta1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {
                     "type": "object", "properties": {"spec": {"type": "object", "properties": {
                         "text": {"type": "string"}}}}}}}]}}


async def test_conversion_between_versions(kube_client: Client, kube_cluster: Any, namespace: str,
                                           server: WebhookServer) -> None:
    crd = with_conversion(NOTES_CRD, Endpoint(url=server.url("")), "/convert-notes",
                          ca_bundle=server.certs.ca_bundle_b64)
    await kube_client.create(crd)
    try:
        await wait_for(kube_client, "customresourcedefinitions", crd["metadata"]["name"], timeout=30,
                       predicate=lambda o: any(c["type"] == "Established" and c["status"] == "True"
                                               for c in o.get("status", {}).get("conditions") or []),
                       description="the Note CRD to be Established")
        alpha = {"apiVersion": f"{GROUP}/v1alpha1", "kind": "Note",
                 "metadata": {"name": "n1", "namespace": namespace}, "spec": {"message": "hello"}}
        await kubectl(kube_cluster, "apply", "-f", "-", input=json.dumps(alpha))
        beta = json.loads((await kubectl(kube_cluster, "get", f"notes.v1beta1.{GROUP}", "n1", "-n", namespace,
                                         "-o", "json")).stdout)
        assert beta["apiVersion"] == f"{GROUP}/v1beta1" and beta["spec"] == {"text": "hello"}
        beta["spec"]["text"] = "changed in v1beta1"
        await kube_client.replace(beta, resource=Resource(GROUP, "v1beta1", "notes", "Note"))
        back = await kube_client.get(Resource(GROUP, "v1alpha1", "notes", "Note"), "n1", namespace)
        assert back["spec"] == {"message": "changed in v1beta1"}
        assert back["metadata"]["uid"] == beta["metadata"]["uid"]
        listed = json.loads((await kubectl(kube_cluster, "get", f"notes.v1alpha1.{GROUP}", "-n", namespace,
                                           "-o", "json")).stdout)
        assert [i["spec"] for i in listed["items"]] == [{"message": "changed in v1beta1"}]
    finally:
        await kube_client.delete("customresourcedefinitions", crd["metadata"]["name"])


async def test_rotation_mid_traffic_fails_no_request(kube_client: Client, namespace: str,
                                                     server: WebhookServer) -> None:
    handshakes: list[int] = []  # the rotation count at each TLS handshake the API server makes
    server.certs.ssl_context.sni_callback = lambda *_: handshakes.append(server.certs.rotations)
    try:
        async with installed(kube_client, mutating(server, namespace), validating(server, namespace)):
            await eventually(lambda: refused(kube_client, configmap("probe", namespace, replicas="99")),
                             "the validating webhook to be called")
            start = server.certs.rotations
            failures: list[str] = []
            answered = 0

            async def one(i: int) -> None:
                nonlocal answered
                try:
                    out = await kube_client.create(configmap(f"c{i}", namespace, replicas="1"), dry_run=True)
                    answered += out["data"].get("mode") == "standard"
                except ApiError as exc:
                    failures.append(exc.message)

            for wave in range(6):
                await asyncio.gather(*(one(wave * 30 + i) for i in range(30)))
                server.certs.rotate()
            assert failures == [] and answered == 180
            assert server.certs.rotations == start + 6
            # The API server keeps its connections alive, so it may not have shaken hands again; a new
            # connection must meet the rotated certificate.
            await asyncio.to_thread(_handshake, server.host, server.port)
            assert any(h > start for h in handshakes), f"no handshake after a rotation: {handshakes}"
    finally:
        server.certs.ssl_context.sni_callback = None


def _handshake(host: str, port: int) -> None:
    """One TLS handshake with the server (what it presents is not checked here: the SNI callback counts)."""
    import ssl

    context = ssl.create_default_context()
    context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
    with socket.create_connection((host, port), timeout=10) as raw, \
            context.wrap_socket(raw, server_hostname="kubeloop-webhook.local"):
        pass


async def stored_api_versions(kube_cluster: Any, keys: list[str]) -> list[str]:
    """The apiVersion each object is encoded in, read from etcd itself (CRs are stored as JSON)."""
    port = kube_cluster._state()["ports"]["etcd"]  # noqa: SLF001 - the test cluster's own etcd
    out = []
    async with aiohttp.ClientSession() as session:
        for key in keys:
            body = {"key": base64.b64encode(key.encode()).decode()}
            async with session.post(f"http://127.0.0.1:{port}/v3/kv/range", json=body) as resp:
                kvs = (await resp.json()).get("kvs") or []
            assert kvs, f"{key} is not in etcd"
            out.append(json.loads(base64.b64decode(kvs[0]["value"]))["apiVersion"])
    return out


async def test_storage_version_migration(kube_client: Client, kube_cluster: Any, namespace: str,
                                         server: WebhookServer) -> None:
    if not isinstance(kube_cluster, LocalCluster):
        pytest.skip("reads etcd directly: needs the local cluster")
    crd = with_conversion(NOTES_CRD, Endpoint(url=server.url("")), "/convert-notes",
                          ca_bundle=server.certs.ca_bundle_b64)
    crd["metadata"]["name"] = f"memos.{GROUP}"
    crd["spec"]["names"] = {"kind": "Memo", "plural": "memos", "singular": "memo", "listKind": "MemoList"}
    name = crd["metadata"]["name"]
    alpha = Resource(GROUP, "v1alpha1", "memos", "Memo")
    await kube_client.create(crd)
    try:
        await wait_for_crd(kube_client, name, timeout=30)
        for i in range(3):
            await kube_client.create({"apiVersion": f"{GROUP}/v1alpha1", "kind": "Memo", "metadata": {
                "name": f"m{i}", "namespace": namespace}, "spec": {"message": f"memo {i}"}}, resource=alpha)
        keys = [f"/registry/{GROUP}/memos/{namespace}/m{i}" for i in range(3)]
        assert await stored_api_versions(kube_cluster, keys) == [f"{GROUP}/v1beta1"] * 3

        versions = crd["spec"]["versions"]
        for v in versions:
            v["storage"] = v["name"] == "v1alpha1"
        await kube_client.patch("customresourcedefinitions", name, {"spec": {"versions": versions}})

        async def migrated() -> bool:
            # Re-running is safe; it is repeated until the API server writes in the new storage version.
            assert await migrate_storage(kube_client, name) == 3
            return await stored_api_versions(kube_cluster, keys) == [f"{GROUP}/v1alpha1"] * 3

        await eventually(migrated, "the objects to be re-encoded as v1alpha1")
        crd_now = await kube_client.get("customresourcedefinitions", name)
        assert crd_now["status"]["storedVersions"] == ["v1alpha1"]
        beta = json.loads((await kubectl(kube_cluster, "get", f"memos.v1beta1.{GROUP}", "-n", namespace,
                                         "-o", "json")).stdout)
        assert sorted(i["spec"]["text"] for i in beta["items"]) == ["memo 0", "memo 1", "memo 2"]
    finally:
        await kube_client.delete("customresourcedefinitions", name)
