"""ResourceQuotas and LimitRanges on the fake (tests/differential/sequences.py judges them against the real
server): what the fake does not count or add up is refused with 501, never half-enforced."""

from __future__ import annotations

from typing import Any

import pytest

from kubeloop.client import Client
from kubeloop.client.errors import ApiError
from kubeloop.testing.apiserver import FakeApiServer

NS = "/api/v1/namespaces/default"


def quota(name: str, hard: dict[str, str], **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": name}, "spec": {"hard": hard, **spec}}


def pod(name: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": {
        "containers": [{"name": "c", "image": "busybox:1"}], "schedulingGates": [{"name": "example.com/g"}], **spec}}


async def refused(call: Any) -> ApiError:
    with pytest.raises(ApiError) as caught:
        await call
    return caught.value


@pytest.mark.parametrize(("body", "named"), [
    (quota("np", {"services.nodeports": "1"}), "services.nodeports"),
    (quota("st", {"requests.storage": "1Gi"}), "requests.storage"),
    (quota("cr", {"count/controllerrevisions.apps": "1"}), "count/controllerrevisions.apps"),
    (quota("sc", {"pods": "1"}, scopes=["BestEffort"]), "scopes"),
])
async def test_a_quota_the_fake_would_not_count_is_refused(fake_client: Client, body: dict[str, Any],
                                                           named: str) -> None:
    err = await refused(fake_client.transport.request("POST", f"{NS}/resourcequotas", body=body))
    assert err.status == 501 and named in err.message and "--real-cluster" in err.message


async def test_quota_status_and_admission(fake_api: FakeApiServer, fake_client: Client) -> None:
    hard = {"count/leases.coordination.k8s.io": "1", "pods": "1"}
    await fake_client.transport.request("POST", f"{NS}/resourcequotas", body=quota("q", hard))
    await fake_api.settle()
    got = await fake_client.transport.request("GET", f"{NS}/resourcequotas/q")
    assert got["status"] == {"hard": {"count/leases.coordination.k8s.io": "1", "pods": "1"},
                             "used": {"count/leases.coordination.k8s.io": "0", "pods": "0"}}
    await fake_client.transport.request("POST", f"{NS}/pods", body=pod("a"))
    err = await refused(fake_client.transport.request("POST", f"{NS}/pods", body=pod("b")))
    assert err.status == 403 and err.message == ('pods "b" is forbidden: exceeded quota: q, requested: pods=1, '
                                                 "used: pods=1, limited: pods=1")


async def test_a_pod_limit_range_over_sidecars_is_refused(fake_client: Client) -> None:
    await fake_client.transport.request("POST", f"{NS}/limitranges", body={
        "apiVersion": "v1", "kind": "LimitRange", "metadata": {"name": "p"},
        "spec": {"limits": [{"type": "Pod", "max": {"cpu": "1"}}]}})
    sidecar = {"name": "s", "image": "busybox:1", "restartPolicy": "Always"}
    err = await refused(fake_client.transport.request("POST", f"{NS}/pods", body=pod("p", initContainers=[sidecar])))
    assert err.status == 501 and "sidecar" in err.message


async def test_ephemeral_containers_apply_is_refused(fake_client: Client) -> None:
    """Server-side apply of the ephemeralcontainers subresource is not modelled (merge, JSON and strategic
    patches and PUT are)."""
    await fake_client.transport.request("POST", f"{NS}/pods", body=pod("p"))
    body = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
            "spec": {"ephemeralContainers": [{"name": "e", "image": "busybox:1"}]}}
    err = await refused(fake_client.transport.request(
        "PATCH", f"{NS}/pods/p/ephemeralcontainers", body=body, params={"fieldManager": "me"},
        content_type="application/apply-patch+yaml"))
    assert err.status == 501 and "ephemeralcontainers" in err.message


async def test_pod_security_refuses_what_it_does_not_check(fake_client: Client) -> None:
    """In a namespace enforcing a PodSecurity level, a pod using a field whose check the fake does not model
    (SELinux options, here) is refused with 501, not admitted unchecked; a pinned enforce version too."""
    await fake_client.transport.request("PATCH", NS, body={"metadata": {"labels": {
        "pod-security.kubernetes.io/enforce": "baseline"}}}, content_type="application/merge-patch+json")
    err = await refused(fake_client.transport.request("POST", f"{NS}/pods", body=pod(
        "p", securityContext={"seLinuxOptions": {"level": "s0"}})))
    assert err.status == 501 and "seLinuxOptions" in err.message
    await fake_client.transport.request("PATCH", NS, body={"metadata": {"labels": {
        "pod-security.kubernetes.io/enforce-version": "v1.30"}}}, content_type="application/merge-patch+json")
    err = await refused(fake_client.transport.request("POST", f"{NS}/pods", body=pod("q")))
    assert err.status == 501 and "enforce-version" in err.message
