"""The reloader's main scenario on the fake API server: a Deployment that uses a ConfigMap gets its pod
template annotated when the ConfigMap's data changes (not when only its labels do). The fake runs no
Deployment controller, so the rollout itself is the real control plane's test (test_op_reloader.py)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest_asyncio

from kubeloop.client import Client
from kubeloop.operators.reloader import build_operator
from kubeloop.operators.reloader.policy import HASH, TEMPLATE_HASH
from kubeloop.operators.reloader.settings import ReloaderSettings
from kubeloop.testing import operator_running, wait_for
from kubeloop.testing.apiserver import FakeApiServer

Obj = dict[str, Any]


@pytest_asyncio.fixture(loop_scope="session")
async def cluster() -> AsyncIterator[Client]:
    op = build_operator()
    op.settings = ReloaderSettings(debounce_seconds=0.2)
    async with FakeApiServer() as fake, await fake.client() as admin:
        async with await fake.client(field_manager=op.name) as client:
            async with operator_running(op, client, namespaces=["default"]):
                yield admin


def recorded(obj: Obj) -> str | None:
    return (obj["metadata"].get("annotations") or {}).get(HASH)


def template_hash(obj: Obj) -> str | None:
    return (obj["spec"]["template"]["metadata"].get("annotations") or {}).get(TEMPLATE_HASH)


async def test_configmap_data_change_annotates_the_template(cluster: Client) -> None:
    client = cluster
    await client.create({"apiVersion": "v1", "kind": "ConfigMap", "data": {"nginx.conf": "worker_processes 1;"},
                         "metadata": {"name": "nginx-conf", "namespace": "default"}})
    container = {"name": "app", "image": "nginx:1.27", "volumeMounts": [{"name": "conf", "mountPath": "/etc/nginx"}]}
    await client.create({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {
        "name": "nginx", "namespace": "default", "annotations": {"reloader.stakater.com/auto": "true"}},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "nginx"}}, "template": {
            "metadata": {"labels": {"app": "nginx"}}, "spec": {
                "containers": [container], "volumes": [{"name": "conf", "configMap": {"name": "nginx-conf"}}]}}}})
    first = await wait_for(client, "deployments.apps", "nginx", "default", lambda d: recorded(d) is not None,
                           timeout=10)
    assert template_hash(first) is None, "recording the hash must not roll"

    await client.patch("configmaps", "nginx-conf", {"metadata": {"labels": {"team": "web"}}}, "default")
    await asyncio.sleep(0.6)  # three debounce windows: a label change must not roll
    assert template_hash(await client.get("deployments.apps", "nginx", "default")) is None
    await client.patch("configmaps", "nginx-conf", {"data": {"nginx.conf": "worker_processes 4;"}}, "default")
    rolled = await wait_for(client, "deployments.apps", "nginx", "default",
                            lambda d: template_hash(d) is not None, timeout=10)
    assert template_hash(rolled) == recorded(rolled) != recorded(first)
    assert rolled["metadata"]["generation"] == first["metadata"]["generation"] + 1
