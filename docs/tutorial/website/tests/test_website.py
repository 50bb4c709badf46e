"""Website against a real control plane (kubeloop's pytest plugin starts or reuses one), with the
operator running under its generated RBAC: a permission it lacks fails the test with a 403."""

from __future__ import annotations

from typing import Any

import pytest
from kubeloop.client import Client, Invalid
from kubeloop.testing import wait_for, wait_for_deletion
from kubeloop.testing.operator import run_operator

from website import operator
from website.models import Website
from website.reconcile import INDEX

RESOURCE = Website.resource()


def new_website(name: str, namespace: str, title: str, replicas: int = 1) -> dict[str, Any]:
    return {"apiVersion": "tutorial.kubeloop.dev/v1", "kind": "Website",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"title": title, "body": "<p>Hello!</p>", "replicas": replicas}}


def ready(obj: dict[str, Any]) -> bool:
    status = obj.get("status") or {}
    return (status.get("observedGeneration") == obj["metadata"]["generation"]
            and any(c["type"] == "Ready" and c["status"] == "True" for c in status.get("conditions") or []))


async def test_website_is_served_listed_and_unlisted(
    kube_cluster: Any, kube_client: Client, namespace: str
) -> None:
    # --8<-- [start:run]
    async with run_operator(kube_cluster, kube_client, operator, namespace) as running:
        await kube_client.create(new_website("home", namespace, "Home & garden"))
        # --8<-- [end:run]
        page = await wait_for(kube_client, "configmaps", "home-page", namespace, timeout=30)
        assert "<title>Home &amp; garden</title>" in page["data"]["index.html"]
        # Ready only once the Deployment's web servers are available.
        await wait_for(kube_client, RESOURCE, "home", namespace, ready, timeout=60)
        await wait_for(kube_client, "configmaps", INDEX, namespace,
                       lambda o: o.get("data") == {"home": "Home & garden"}, timeout=30)

        # A new spec is a new generation: the Deployment follows, and Ready is reported for it.
        await kube_client.patch(RESOURCE, "home", {"spec": {"replicas": 2}}, namespace)
        await wait_for(kube_client, "deployments", "home", namespace,
                       lambda o: o["spec"]["replicas"] == 2, timeout=30)
        site = await wait_for(kube_client, RESOURCE, "home", namespace, ready, timeout=60)
        assert site["status"]["availableReplicas"] == 2

        # The CRD's schema comes from the model: the API server refuses what the model forbids.
        with pytest.raises(Invalid, match="spec.replicas"):
            await kube_client.create(new_website("huge", namespace, "Huge", replicas=50))

        # A second Website gets its own entry in the shared index, next to the first one's.
        await kube_client.create(new_website("blog", namespace, "Blog"))
        await wait_for(kube_client, "configmaps", INDEX, namespace,
                       lambda o: o.get("data") == {"home": "Home & garden", "blog": "Blog"}, timeout=30)

        # Deleting a Website runs the finalizer: its entry leaves the index, then the object goes.
        await kube_client.delete(RESOURCE, "home", namespace)
        await wait_for_deletion(kube_client, RESOURCE, "home", namespace, timeout=30)
        index = await kube_client.get("configmaps", INDEX, namespace)
        assert index["data"] == {"blog": "Blog"}
        # Delete what the test made while the operator still runs: once it stops, nothing would
        # remove the finalizer, and the namespace would stay Terminating.
        await kube_client.delete(RESOURCE, "blog", namespace)
        await wait_for_deletion(kube_client, RESOURCE, "blog", namespace, timeout=30)
    # --8<-- [start:audit]
    report = running.audit()  # what the operator used, against what its generated RBAC grants
    assert report.ok, report.message
    # --8<-- [end:audit]
