"""Rules the fake enforces as the real server does, found by the differential fuzzer (tests/differential/
test_fuzz.py checks them against the real control plane; these run without it)."""

from __future__ import annotations

from typing import Any

import pytest

from kubeloop.client import Client
from kubeloop.client.errors import ApiError
from kubeloop.testing.apiserver import FakeApiServer

CMS = "/api/v1/namespaces/{ns}/configmaps"


def cm(name: str, ns: str = "default", **meta: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": ns, **meta},
            "data": {"k": "v"}}


async def refused(call: Any) -> ApiError:
    with pytest.raises(ApiError) as caught:
        await call
    return caught.value


def fields(err: ApiError) -> list[str]:
    return sorted(c.get("field", "") for c in err.causes or [])


@pytest.mark.parametrize(("meta", "field"), [
    ({"labels": {"app": "a b"}}, "metadata.labels"),
    ({"labels": {"app": "v" * 64}}, "metadata.labels"),
    ({"labels": {"-bad": "x"}}, "metadata.labels"),
    ({"annotations": {"bad key": "x"}}, "metadata.annotations"),
    ({"annotations": {"big": "x" * (256 * 1024)}}, "metadata.annotations"),
    ({"finalizers": ["x.dev/a b"]}, "metadata.finalizers"),
    ({"finalizers": ["nodomain"]}, "metadata.finalizers[0]"),
    ({"ownerReferences": [{"apiVersion": "v1", "kind": "ConfigMap", "name": "o"}]}, "metadata.ownerReferences.uid"),
])
async def test_bad_metadata_is_invalid(fake_client: Client, meta: dict[str, Any], field: str) -> None:
    err = await refused(fake_client.create(cm("a", **meta)))
    assert err.status == 422 and fields(err) == [field], err.causes


async def test_two_controllers_are_invalid(fake_client: Client) -> None:
    ref = {"apiVersion": "v1", "kind": "ConfigMap", "name": "o", "controller": True}
    refs = [{**ref, "uid": "0d6a1bc0-1111-4222-8333-444455556666"},
            {**ref, "name": "p", "uid": "1d6a1bc0-1111-4222-8333-444455556666"}]
    err = await refused(fake_client.create(cm("a", ownerReferences=refs)))
    assert err.status == 422 and fields(err) == ["metadata.ownerReferences"]


@pytest.mark.parametrize(("body", "field"), [
    ({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "1svc"}, "spec": {"ports": [{"port": 80}]}},
     "metadata.name"),
    ({"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "x" * 53}, "spec": {
        "schedule": "0 0 * * *", "jobTemplate": {"spec": {"template": {"spec": {
            "restartPolicy": "Never", "containers": [{"name": "c", "image": "i"}]}}}}}}, "metadata.name"),
    ({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": []}}, "spec.containers"),
    ({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"}, "spec": {"template": {
        "metadata": {"labels": {"a": "b"}}, "spec": {"containers": [{"name": "c", "image": "i"}]}}}},
     "spec.selector,spec.template.metadata.labels"),
])
async def test_kind_rules(fake_client: Client, body: dict[str, Any], field: str) -> None:
    body["metadata"]["namespace"] = "default"
    err = await refused(fake_client.create(body))
    assert err.status == 422 and fields(err) == field.split(","), err.causes


async def test_configmap_values_must_be_strings(fake_api: FakeApiServer, fake_client: Client) -> None:
    err = await refused(fake_client.create({**cm("a"), "data": {"k": 1}}))
    assert err.status == 400
    err = await refused(fake_client.create({"apiVersion": "v1", "kind": "Secret", "metadata": {
        "name": "s", "namespace": "default"}, "data": {"k": "not base64!"}}))
    assert err.status == 400


async def test_update_rules(fake_client: Client) -> None:
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
           "spec": {"containers": [{"name": "c", "image": "i"}]}}
    await fake_client.create(pod)
    err = await refused(fake_client.patch("pods", "p", {"spec": {"restartPolicy": "Never"}}, "default"))
    assert err.status == 422 and fields(err) == ["spec"]
    # A strategic patch merges containers by name (a merge patch would drop the token volume's mount
    # the ServiceAccount admission added, and be refused as a spec change, as on a real server).
    await fake_client.patch("pods", "p", {"spec": {"containers": [{"name": "c", "image": "j"}]}}, "default",
                            type="strategic")
    err = await refused(fake_client.patch("pods", "p", {"spec": {"containers": [{"name": "c", "image": "k"}]}},
                                          "default"))
    assert err.status == 422 and fields(err) == ["spec"]
    await fake_client.create(cm("f", finalizers=["x.dev/f"]))
    await fake_client.delete("configmaps", "f", "default")
    err = await refused(fake_client.patch("configmaps", "f", {"metadata": {"finalizers": ["x.dev/f", "x.dev/g"]}},
                                          "default"))
    assert err.status == 422 and fields(err) == ["metadata.finalizers"]
    err = await refused(fake_client.transport.request(
        "PUT", "/api/v1/namespaces/default/configmaps/f", body=cm("f", ns="kube-system")))
    assert err.status == 400
    err = await refused(fake_client.transport.request(
        "PUT", "/api/v1/namespaces/default/configmaps/f", body=cm("f", uid="0d6a1bc0-1111-4222-8333-444455556666")))
    assert err.status == 409


async def test_resource_version_on_create_is_refused(fake_client: Client) -> None:
    err = await refused(fake_client.create(cm("a", resourceVersion="1")))
    assert err.status == 500


async def test_paging_across_prefixed_namespaces(fake_client: Client) -> None:
    """``X`` and ``X-x1``: etcd orders ``X-x1/…`` before ``X/…``; a continue token must not skip either."""
    for ns in ("px", "px-x1"):
        await fake_client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
        for name in ("a", "b"):
            await fake_client.create(cm(name, ns, labels={"run": "p"}))
    seen, token = [], ""
    while True:
        params = {"labelSelector": "run=p", "limit": "1", **({"continue": token} if token else {})}
        page = await fake_client.transport.request("GET", "/api/v1/configmaps", params=params)
        seen += [f"{i['metadata']['namespace']}/{i['metadata']['name']}" for i in page["items"]]
        token = page["metadata"].get("continue")
        if not token:
            break
    assert seen == ["px-x1/a", "px-x1/b", "px/a", "px/b"]


@pytest.mark.parametrize("selector", ["app=a b", "app=" + "v" * 64, "a/b/c=x", "=x", "app=x,"])
async def test_invalid_selectors_are_400(fake_client: Client, selector: str) -> None:
    err = await refused(fake_client.transport.request("GET", "/api/v1/namespaces/default/configmaps",
                                                      params={"labelSelector": selector}))
    assert err.status == 400


async def test_watch_from_before_the_cache_is_410(fake_client: Client) -> None:
    events = []
    async for event in fake_client.transport.stream("/api/v1/namespaces/default/configmaps", params={
            "watch": "1", "resourceVersion": "1", "timeoutSeconds": "1"}, read_timeout=5):
        events.append(event)
    assert events and events[0]["type"] == "ERROR" and events[0]["object"]["code"] == 410


async def test_job_delete_orphans_its_pods_by_default(fake_api: FakeApiServer, fake_client: Client) -> None:
    job = await fake_client.create({"apiVersion": "batch/v1", "kind": "Job", "metadata": {
        "name": "j", "namespace": "default"}, "spec": {"template": {"spec": {
            "restartPolicy": "Never", "containers": [{"name": "c", "image": "i"}]}}}})
    assert job["spec"]["selector"]["matchLabels"] == {"batch.kubernetes.io/controller-uid": job["metadata"]["uid"]}
    ref = {"apiVersion": "batch/v1", "kind": "Job", "name": "j", "uid": job["metadata"]["uid"], "controller": True}
    await fake_client.create({"apiVersion": "v1", "kind": "Pod", "metadata": {
        "name": "p", "namespace": "default", "ownerReferences": [ref]}, "spec": {
            "containers": [{"name": "c", "image": "i"}]}})
    await fake_client.delete("jobs", "j", "default")
    await fake_api.settle()
    pod = await fake_client.get("pods", "p", "default")
    assert not pod["metadata"].get("ownerReferences")


async def test_request_over_3_mib_is_413(fake_client: Client) -> None:
    err = await refused(fake_client.create({**cm("a"), "data": {"k": "x" * (3 * 1024 * 1024 + 1)}}))
    assert err.status == 413


async def test_unmodelled_parameter_is_refused_by_name(fake_client: Client) -> None:
    err = await refused(fake_client.transport.request("GET", "/api/v1/namespaces/default/configmaps",
                                                      params={"shardSelector": "x"}))
    assert err.status == 501 and "shardSelector" in err.message and "--real-cluster" in err.message


@pytest.mark.parametrize("path", ["/api/v1/namespaces/default/pods/p/binding", "/api/v1/namespaces/default/bindings"])
async def test_unmodelled_parameter_of_a_binding_is_refused_by_name(fake_client: Client, path: str) -> None:
    binding = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "p"},
               "target": {"apiVersion": "v1", "kind": "Node", "name": "n"}}
    err = await refused(fake_client.transport.request("POST", path, body=binding, params={"fieldManager": "s"}))
    assert err.status == 501 and "fieldManager" in err.message and "--real-cluster" in err.message


async def test_gc_needs_uid_name_and_namespace(fake_api: FakeApiServer, fake_client: Client) -> None:
    """A dependent whose reference has the owner's uid but another name, or whose owner is in another
    namespace, is deleted as the real garbage collector does; a right reference keeps it."""
    owner = await fake_client.create(cm("owner"))
    ref = {"apiVersion": "v1", "kind": "ConfigMap", "name": "owner", "uid": owner["metadata"]["uid"]}
    await fake_client.create(cm("kept", ownerReferences=[ref]))
    await fake_client.create(cm("misnamed", ownerReferences=[{**ref, "name": "other"}]))
    await fake_client.create(cm("elsewhere", "kube-public", ownerReferences=[ref]))
    await fake_api.settle()
    await fake_client.get("configmaps", "kept", "default")
    for name, ns in (("misnamed", "default"), ("elsewhere", "kube-public")):
        err = await refused(fake_client.get("configmaps", name, ns))
        assert err.status == 404


async def test_system_namespaces_stay(fake_client: Client) -> None:
    for name in ("default", "kube-system", "kube-public"):
        err = await refused(fake_client.delete("namespaces", name))
        assert err.status == 403
    err = await refused(fake_client.transport.request("DELETE", "/api/v1/namespaces"))
    assert err.status == 405


async def test_status_counts_for_generation_without_a_status_subresource(fake_api: FakeApiServer,
                                                                        fake_client: Client) -> None:
    schema = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    await fake_client.create({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
                              "metadata": {"name": "things.x.dev"}, "spec": {
                                  "group": "x.dev", "scope": "Namespaced",
                                  "names": {"kind": "Thing", "plural": "things"},
                                  "versions": [{"name": "v1", "served": True, "storage": True,
                                                "schema": {"openAPIV3Schema": schema}}]}})
    await fake_api.settle()
    path = "/apis/x.dev/v1/namespaces/default/things"
    await fake_client.transport.request("POST", path, body={"apiVersion": "x.dev/v1", "kind": "Thing",
                                                            "metadata": {"name": "t"}})
    done = await fake_client.transport.request("PATCH", f"{path}/t", body={"status": {"ok": True}},
                                               content_type="application/merge-patch+json")
    assert done["metadata"]["generation"] == 2


async def test_bound_pods_are_deleted_gracefully(fake_client: Client) -> None:
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
           "spec": {"nodeName": "elsewhere", "containers": [{"name": "c", "image": "i"}]}}
    await fake_client.create(pod)
    marked = await fake_client.delete("pods", "p", "default")
    assert marked["metadata"]["deletionGracePeriodSeconds"] == 30  # no kubelet there: it stays
    assert (await fake_client.get("pods", "p", "default"))["metadata"]["deletionTimestamp"]
    await fake_client.transport.request("DELETE", "/api/v1/namespaces/default/pods/p",
                                        params={"gracePeriodSeconds": "0"})
    assert (await refused(fake_client.get("pods", "p", "default"))).status == 404


async def test_put_creates_services_and_leases_need_a_resource_version(fake_client: Client) -> None:
    svc = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s", "namespace": "default"},
           "spec": {"ports": [{"port": 80}]}}
    created = await fake_client.transport.request("PUT", "/api/v1/namespaces/default/services/s", body=svc)
    assert created["metadata"]["name"] == "s"
    lease = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {
        "name": "l", "namespace": "default", "finalizers": ["nodomain"]}, "spec": {}}
    await fake_client.create(lease)  # Leases take a finalizer without a domain
    err = await refused(fake_client.transport.request(
        "PUT", "/apis/coordination.k8s.io/v1/namespaces/default/leases/l", body=lease))
    assert err.status == 422 and fields(err) == ["metadata.resourceVersion"]


async def test_service_ports_merge_by_port_and_need_names(fake_client: Client) -> None:
    await fake_client.create({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s", "namespace": "default"},
                              "spec": {"ports": [{"port": 80}]}})
    err = await refused(fake_client.patch("services", "s", {"spec": {"ports": [{"port": 81}]}}, "default",
                                          type="strategic"))
    assert err.status == 422 and fields(err) == ["spec.ports[0].name", "spec.ports[1].name"]


async def test_quantities_are_canonical_in_stored_pods(fake_client: Client) -> None:
    pod = await fake_client.create({"apiVersion": "v1", "kind": "Pod", "metadata": {
        "name": "q", "namespace": "default"}, "spec": {"containers": [{"name": "c", "image": "i", "resources": {
            "requests": {"cpu": "1000m", "memory": "1024Mi"}}}]}})
    assert pod["spec"]["containers"][0]["resources"]["requests"] == {"cpu": "1", "memory": "1Gi"}
    err = await refused(fake_client.create({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {
        "name": "d", "namespace": "default"}, "spec": {"replicas": "3"}}))
    assert err.status == 400


async def test_generated_names_survive_a_seeded_random_and_a_taken_name(
        fake_client: Client, monkeypatch: pytest.MonkeyPatch) -> None:
    import random

    from kubeloop.testing.apiserver import objects

    made = []
    for _ in range(3):  # hypothesis seeds the random module before every example
        random.seed(1)
        made.append((await fake_client.create({**cm(""), "metadata": {"generateName": "g-", "namespace": "default"}}))
                    ["metadata"]["name"])
    assert len(set(made)) == 3
    picks = iter(list(made[0][2:]) + list("zzzzz"))  # the first name again, then a free one
    monkeypatch.setattr(objects.RNG, "choices", lambda alphabet, k: [next(picks) for _ in range(k)])
    again = await fake_client.create({**cm(""), "metadata": {"generateName": "g-", "namespace": "default"}})
    assert again["metadata"]["name"] == "g-zzzzz"


@pytest.mark.parametrize(("params", "causes"), [
    ({"resourceVersionMatch": "Exact"},
     ["Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided"]),
    ({"resourceVersionMatch": "Bogus", "resourceVersion": "5"},
     ['Unsupported value: "Bogus": supported values: "Exact", "NotOlderThan", ""']),
    ({"resourceVersionMatch": "Exact", "resourceVersion": "0"},
     ['Forbidden: resourceVersionMatch "exact" is forbidden for resourceVersion "0"']),
    ({"resourceVersionMatch": "NotOlderThan", "resourceVersion": "1", "continue": "x"},
     ["Forbidden: resourceVersionMatch is forbidden when continue is provided"]),
    ({"sendInitialEvents": "true"}, ["Forbidden: sendInitialEvents is forbidden for list"]),
    ({"watch": "1", "resourceVersionMatch": "NotOlderThan", "resourceVersion": "0"},
     ["Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided"]),
    ({"watch": "1", "sendInitialEvents": "false"},
     ["Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan"]),
])
async def test_invalid_list_options_are_422(fake_client: Client, params: dict[str, str], causes: list[str]) -> None:
    err = await refused(fake_client.transport.request("GET", "/api/v1/namespaces/default/configmaps", params=params))
    assert err.status == 422 and err.message.startswith('ListOptions.meta.k8s.io "" is invalid: ')
    assert [c["message"] for c in err.causes or []] == causes
    assert {c["field"] for c in err.causes or []} <= {"resourceVersionMatch", "sendInitialEvents"}


async def test_a_resource_version_that_is_not_a_number(fake_client: Client) -> None:
    why = 'resourceVersion: Invalid value: "abc": strconv.ParseUint: parsing "abc": invalid syntax'
    err = await refused(fake_client.transport.request("GET", "/api/v1/namespaces/default/configmaps",
                                                      params={"resourceVersion": "abc"}))
    assert (err.status, err.message) == (400, f"invalid resource version: {why}")
    err = await refused(fake_client.transport.request("GET", "/api/v1/namespaces/default/configmaps/kube-root-ca.crt",
                                                      params={"resourceVersion": "abc"}))
    assert (err.status, err.message) == (500, why)


async def test_send_initial_events_without_bookmarks_or_false(fake_client: Client) -> None:
    """The real server sends the initial state without ``allowWatchBookmarks`` (no bookmark then), and
    nothing of it for ``sendInitialEvents=false``."""
    await fake_client.create(cm("i", labels={"init": "x"}))
    base = {"watch": "1", "timeoutSeconds": "1", "resourceVersionMatch": "NotOlderThan", "labelSelector": "init=x"}
    seen = [e async for e in fake_client.transport.stream(CMS.format(ns="default"), params={
        **base, "sendInitialEvents": "true"}, read_timeout=5)]
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in seen] == [("ADDED", "i")]
    seen = [e async for e in fake_client.transport.stream(CMS.format(ns="default"), params={
        **base, "sendInitialEvents": "false"}, read_timeout=5)]
    assert seen == []


async def test_legacy_watch_paths_are_watches(fake_client: Client) -> None:
    await fake_client.create(cm("a"))
    await fake_client.create(cm("b"))
    seen = [e async for e in fake_client.transport.stream("/api/v1/watch/namespaces/default/configmaps/a",
                                                          params={"timeoutSeconds": "1"}, read_timeout=5)]
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in seen] == [("ADDED", "a")]
    seen = [e async for e in fake_client.transport.stream("/api/v1/watch/namespaces/default/configmaps",
                                                          params={"timeoutSeconds": "1"}, read_timeout=5)]
    assert {e["object"]["metadata"]["name"] for e in seen} == {"a", "b", "kube-root-ca.crt"}
    err = await refused(fake_client.transport.request("GET", "/api/v1/watch/namespaces/default/configmaps/a",
                                                      params={"fieldSelector": "metadata.name=b"}))
    assert (err.status, err.message) == (400, "fieldSelector metadata.name doesn't match requested name")
    err = await refused(fake_client.transport.request("POST", "/api/v1/watch/namespaces/default/configmaps",
                                                      body=cm("c")))
    assert err.status == 405


async def test_configmap_and_secret_data_hold_at_most_1_mib(fake_client: Client) -> None:
    await fake_client.create({**cm("full"), "data": {"k": "x" * 1048576}})
    err = await refused(fake_client.create({**cm("over"), "data": {"k": "x" * 1048577}}))
    assert err.status == 422 and err.causes == [
        {"reason": "FieldValueTooLong", "message": "Too long: may not be more than 1048576 bytes", "field": "[]"}]
    err = await refused(fake_client.create({**cm("dup"), "binaryData": {"k": "eA=="}}))
    assert err.status == 422 and fields(err) == ["data[k]"]
    secret = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s", "namespace": "default"},
              "data": {"k": "eHh4" * 349525}}  # 1048575 bytes decoded
    err = await refused(fake_client.create({**secret, "stringData": {"z": "yy"}}))
    assert err.status == 422 and fields(err) == ["data"]
    await fake_client.create(secret)


async def test_custom_resources_must_fit_etcd(fake_api: FakeApiServer, fake_client: Client) -> None:
    """About 1.5 MiB stored: the real server drops managedFields to make a create or patch fit (not an
    apply), then etcd refuses (500); over 2 MiB its client refuses to send."""
    await fake_client.create(_THINGS)
    await fake_api.settle()
    path = "/apis/x.dev/v1/namespaces/default/things"

    def thing(name: str, size: int) -> dict[str, Any]:
        return {"apiVersion": "x.dev/v1", "kind": "Thing", "metadata": {"name": name}, "spec": {"m": "x" * size}}

    made = await fake_client.transport.request("POST", path, body=thing("a", 1_400_000))
    assert made["metadata"]["managedFields"]
    made = await fake_client.transport.request("POST", path, body=thing("b", 1_572_450))
    assert "managedFields" not in made["metadata"]
    err = await refused(fake_client.transport.request("POST", path, body=thing("c", 1_600_000)))
    assert (err.status, err.message) == (500, "etcdserver: request is too large")
    err = await refused(fake_client.transport.request("POST", path, body=thing("d", 2_500_000)))
    assert err.status == 500 and "trying to send message larger than max" in err.message
    err = await refused(fake_client.transport.request(
        "PATCH", f"{path}/e", body=thing("e", 1_572_450), content_type="application/apply-patch+yaml",
        params={"fieldManager": "m"}))
    assert err.status == 500


_THINGS = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "metadata": {"name": "things.x.dev"}, "spec": {
               "group": "x.dev", "scope": "Namespaced", "names": {"kind": "Thing", "plural": "things"},
               "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {
                   "type": "object", "properties": {"spec": {"type": "object", "properties": {
                       "m": {"type": "string"}}}}}}}]}}


@pytest.mark.parametrize("path", [
    "/api/v1/nodes", "/api/v1/nodes/n", "/api/v1/watch/nodes", "/api/v1/namespaces/default/endpoints",
    "/api/v1/namespaces/default/persistentvolumeclaims/x", "/api/v1/namespaces/default/replicationcontrollers",
    "/api/v1/namespaces/default/podtemplates", "/api/v1/persistentvolumes",
    "/apis/networking.k8s.io/v1/namespaces/default/networkpolicies",
    "/apis/apps/v1/watch/namespaces/default/controllerrevisions",
    "/apis/apps/v1/namespaces/default/controllerrevisions/r",
    "/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers",
    "/apis/policy/v1", "/apis/policy/v1/namespaces/default/poddisruptionbudgets",
    "/apis/networking.k8s.io/v1/namespaces/default/ingresses", "/apis/rbac.authorization.k8s.io/v1/clusterroles",
    "/apis/discovery.k8s.io/v1/namespaces/default/endpointslices", "/apis/storage.k8s.io/v1/storageclasses",
])
@pytest.mark.parametrize("method", ["GET", "POST", "DELETE"])
async def test_unmodelled_kinds_are_refused_by_name(fake_client: Client, path: str, method: str) -> None:
    """Built-in kinds and groups the real server serves and the fake does not model: 501 naming them and
    --real-cluster, whatever the verb (never a 404, nor accepted)."""
    err = await refused(fake_client.transport.request(method, path, body={} if method == "POST" else None))
    assert err.status == 501 and "--real-cluster" in err.message
    named = path.split("/")[-2] if path.rsplit("/", 1)[-1] in ("n", "x", "r") else path.rsplit("/", 1)[-1]
    assert named in err.message


async def test_status_writes(fake_api: FakeApiServer, fake_client: Client) -> None:
    """A built-in's /status write keeps the writer's metadata (not a pod's owner references) and is
    checked by its status rules; a custom resource's status is pruned and checked by its schema."""
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
           "spec": {"nodeName": "n", "containers": [{"name": "c", "image": "i"}]}}
    await fake_client.create(pod)
    merge = "application/merge-patch+json"
    status = "/api/v1/namespaces/default/pods/p/status"
    ref = {"apiVersion": "v1", "kind": "ConfigMap", "name": "o", "uid": "0d6a1bc0-1111-4222-8333-444455556666"}
    done = await fake_client.transport.request("PATCH", status, content_type=merge, body={
        "metadata": {"labels": {"x": "y"}, "ownerReferences": [ref]}, "status": {"phase": "Running"}})
    assert done["metadata"]["labels"] == {"x": "y"} and "ownerReferences" not in done["metadata"]
    assert done["status"]["phase"] == "Running"
    err = await refused(fake_client.transport.request("PATCH", status, content_type=merge,
                                                      body={"status": {"podIP": "nope"}}))
    assert err.status == 422 and fields(err) == ["status.podIPs[0]"]
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d", "namespace": "default"},
                  "spec": {"selector": {"matchLabels": {"a": "b"}}, "template": {
                      "metadata": {"labels": {"a": "b"}}, "spec": {"containers": [{"name": "c", "image": "i"}]}}}}
    await fake_client.create(deployment)
    err = await refused(fake_client.transport.request(
        "PATCH", "/apis/apps/v1/namespaces/default/deployments/d/status", content_type=merge,
        body={"status": {"replicas": 1, "readyReplicas": 2}}))
    assert err.status == 422 and fields(err) == ["status.readyReplicas"]
    await fake_client.create(_THINGS | {"spec": {**_THINGS["spec"], "versions": [{
        **_THINGS["spec"]["versions"][0], "subresources": {"status": {}}, "schema": {"openAPIV3Schema": {
            "type": "object", "properties": {"spec": {"type": "object"}, "status": {
                "type": "object", "properties": {"seen": {"type": "string"}}}}}}}]}})
    await fake_api.settle()
    things = "/apis/x.dev/v1/namespaces/default/things"
    await fake_client.transport.request("POST", things, body={"apiVersion": "x.dev/v1", "kind": "Thing",
                                                              "metadata": {"name": "t"}})
    err = await refused(fake_client.transport.request("PATCH", f"{things}/t/status", content_type=merge,
                                                      body={"status": {"seen": 5}}))
    assert err.causes == [{"reason": "FieldValueTypeInvalid", "field": "status.seen",
                           "message": 'Invalid value: "integer": seen in body must be of type string: "integer"'}]
    done = await fake_client.transport.request("PATCH", f"{things}/t/status", content_type=merge,
                                               body={"status": {"seen": "x", "bogus": 1}})
    assert done["status"] == {"seen": "x"}
    err = await refused(fake_client.transport.request(
        "PATCH", f"{things}/t/status", content_type="application/apply-patch+yaml", params={"fieldManager": "m"},
        body={"status": {"seen": "y"}}))
    assert (err.status, err.message) == (400, "invalid object type: /, Kind=")


async def test_core_events(fake_client: Client) -> None:
    event = {"apiVersion": "v1", "kind": "Event", "metadata": {"name": "e", "namespace": "default"},
             "involvedObject": {"kind": "ConfigMap", "namespace": "default", "name": "a"}, "reason": "R"}
    made = await fake_client.create(event)
    assert made["firstTimestamp"] is None and made["source"] == {} and made["reportingComponent"] == ""
    err = await refused(fake_client.create({**event, "metadata": {"name": "f", "namespace": "default"},
                                            "involvedObject": {"kind": "ConfigMap", "namespace": "other"}}))
    assert err.status == 422 and fields(err) == ["involvedObject.namespace"]
    err = await refused(fake_client.create({**event, "metadata": {"name": "g", "namespace": "default"},
                                            "eventTime": "2026-01-01T00:00:00.000000Z"}))
    assert err.status == 422 and set(fields(err)) == {"action", "reportingComponent", "reportingInstance"}


async def test_deletecollection_takes_query_options_and_answers_what_it_read(fake_api: FakeApiServer,
                                                                            fake_client: Client) -> None:
    lease = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": "l", "namespace": "default"},
             "spec": {}}
    made = await fake_client.create(lease)
    ref = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "name": "l", "uid": made["metadata"]["uid"]}
    await fake_client.create(cm("dependent", ownerReferences=[ref]))
    gone = await fake_client.transport.request("DELETE", "/apis/coordination.k8s.io/v1/namespaces/default/leases",
                                               params={"propagationPolicy": "Orphan"})
    assert [i["metadata"].get("deletionTimestamp") for i in gone["items"]] == [None]  # as read before the delete
    await fake_api.settle()
    assert "ownerReferences" not in (await fake_client.get("configmaps", "dependent", "default"))["metadata"]


async def test_a_put_to_a_missing_services_status_creates_it(fake_client: Client) -> None:
    svc = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s", "namespace": "default"},
           "spec": {"ports": [{"port": 80}]}, "status": {"loadBalancer": {"ingress": [{"ip": "1.2.3.4"}]}}}
    made = await fake_client.transport.request("PUT", "/api/v1/namespaces/default/services/s/status", body=svc)
    assert made["status"] == {"loadBalancer": {}}


async def test_a_pod_deleted_at_once_is_marked_first(fake_client: Client) -> None:
    """As the real store does for a kind with graceful deletion: a write with the deletion timestamp (a
    MODIFIED event), then the delete (found by the fuzzer's watches, seed 3000)."""
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
           "spec": {"nodeName": "n", "containers": [{"name": "c", "image": "i"}]}}
    made = await fake_client.create(pod)
    await fake_client.transport.request("DELETE", "/api/v1/namespaces/default/pods/p",
                                        params={"gracePeriodSeconds": "0"})
    seen = [e async for e in fake_client.transport.stream("/api/v1/namespaces/default/pods", params={
        "watch": "1", "resourceVersion": made["metadata"]["resourceVersion"], "timeoutSeconds": "1"}, read_timeout=5)]
    assert [(e["type"], e["object"]["metadata"]["generation"]) for e in seen] == [("MODIFIED", 2), ("DELETED", 2)]


async def test_defaults_are_stored_and_owned_by_the_creator(fake_client: Client) -> None:
    template = {"metadata": {"labels": {"app": "w"}}, "spec": {"containers": [{"name": "c", "image": "i:1"}]}}
    sts = {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "s", "namespace": "default"},
           "spec": {"serviceName": "s", "selector": {"matchLabels": {"app": "w"}}, "template": template}}
    created = await fake_client.create(sts)
    assert created["spec"]["template"]["spec"]["restartPolicy"] == "Always"
    assert created["spec"]["updateStrategy"] == {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}}
    assert created["spec"]["replicas"] == 1
    never = {**sts, "spec": {**sts["spec"], "template": {**template, "spec": {**template["spec"],
                                                                               "restartPolicy": "Never"}}}}
    err = await refused(fake_client.apply(never, field_manager="other", force=False))
    assert err.status == 409 and fields(err) == [".spec.template.spec.restartPolicy"]
    job = await fake_client.create({"apiVersion": "batch/v1", "kind": "Job", "metadata": {
        "name": "j", "namespace": "default"}, "spec": {"template": {"spec": {
            "restartPolicy": "Never", "containers": [{"name": "c", "image": "i"}]}}}})
    assert {k: job["spec"][k] for k in ("completions", "parallelism", "backoffLimit", "suspend")} == {
        "completions": 1, "parallelism": 1, "backoffLimit": 6, "suspend": False}
