"""copyrator's main scenario on the fake API server: a rule copies a labelled ConfigMap into the
namespaces its namespaceSelector picks, keeps the copies in step and removes them with the source.
(Its CRD carries CEL rules, so this needs cel-python: ``pip install kubeloop[fake]``.)"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
import pytest_asyncio

from kubeloop.client import Client
from kubeloop.operators.copyrator import operator
from kubeloop.testing import install_crds, operator_running, wait_for, wait_for_deletion
from kubeloop.testing.apiserver import FakeApiServer

pytest.importorskip("celpy", reason="copyrator's CRD has CEL rules: pip install kubeloop[fake]")


@pytest_asyncio.fixture(loop_scope="session")
async def cluster() -> AsyncIterator[Client]:
    async with FakeApiServer() as fake, await fake.client() as admin:
        await install_crds(admin, operator)
        for name, scope in (("src", "no"), ("t1", "yes"), ("t2", "yes"), ("other", "no")):
            await admin.create({"apiVersion": "v1", "kind": "Namespace",
                                "metadata": {"name": name, "labels": {"copy-here": scope}}})
        async with await fake.client(field_manager=operator.name) as client:
            async with operator_running(operator, client):
                yield admin


async def test_rule_copies_updates_and_removes(cluster: Client) -> None:
    client = cluster
    await client.create({"apiVersion": "v1", "kind": "ConfigMap", "data": {"v": "1"},
                         "metadata": {"name": "app", "namespace": "src", "labels": {"copyrator": "true"}}})
    await client.create({"apiVersion": "flant.com/v1", "kind": "CopyratorRule",
                         "metadata": {"name": "r", "namespace": "src"}, "ruleType": "configmap",
                         "selector": {"copyrator": "true"}, "namespace": "src",
                         "namespaceSelector": {"matchLabels": {"copy-here": "yes"}}})
    for ns in ("t1", "t2"):
        await wait_for(client, "configmaps", "app", ns, lambda o: o.get("data") == {"v": "1"}, timeout=10)
    await client.patch("configmaps", "app", {"data": {"v": "2"}}, "src")
    for ns in ("t1", "t2"):
        await wait_for(client, "configmaps", "app", ns, lambda o: o.get("data") == {"v": "2"}, timeout=10)
    assert not [c for c in (await client.list("configmaps", "other"))["items"] if c["metadata"]["name"] == "app"]
    await client.delete("configmaps", "app", "src")
    for ns in ("t1", "t2"):
        await wait_for_deletion(client, "configmaps", "app", ns, timeout=10)
