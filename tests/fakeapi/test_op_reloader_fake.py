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


async def test_an_annotated_job_is_recreated_as_reloader_does(cluster: Client) -> None:
    """The Job strategy's generated selector and labels are the old Job's: the copy goes without them and
    gets its own (the fake API server generates them as the real one does, and refuses a stale one). A
    Job created without labels, as `kubectl create job` makes them, has its template's as its own, the
    generated ones included: the copy's are the new Job's."""
    client = cluster
    await client.create({"apiVersion": "v1", "kind": "ConfigMap", "data": {"k": "1"},
                         "metadata": {"name": "job-conf", "namespace": "default"}})
    await client.create({"apiVersion": "batch/v1", "kind": "Job", "metadata": {
        "name": "migrate", "namespace": "default",
        "annotations": {"configmap.reloader.stakater.com/reload": "job-conf"}},
        "spec": {"suspend": True, "template": {"metadata": {"labels": {"app": "db"}}, "spec": {
            "restartPolicy": "Never", "containers": [{"name": "m", "image": "busybox:1.36", "envFrom": [
                {"configMapRef": {"name": "job-conf"}}]}]}}}})
    first = await wait_for(client, "jobs.batch", "migrate", "default", lambda j: recorded(j) is not None,
                           timeout=10)
    old_uid = first["metadata"]["uid"]
    assert first["spec"]["selector"]["matchLabels"]["batch.kubernetes.io/controller-uid"] == old_uid
    assert first["metadata"]["labels"]["controller-uid"] == old_uid
    await client.patch("configmaps", "job-conf", {"data": {"k": "2"}}, "default")
    new = await wait_for(client, "jobs.batch", "migrate", "default",
                         lambda j: j["metadata"]["uid"] != old_uid and recorded(j) != recorded(first), timeout=10)
    uid = new["metadata"]["uid"]
    assert new["spec"]["selector"] == {"matchLabels": {"batch.kubernetes.io/controller-uid": uid}}
    assert new["spec"]["template"]["metadata"]["labels"]["controller-uid"] == uid
    assert new["metadata"]["labels"] == new["spec"]["template"]["metadata"]["labels"]
    assert new["metadata"]["labels"]["app"] == "db" and new["spec"]["suspend"] is True
    assert template_hash(new) == recorded(new)
    await asyncio.sleep(0.6)  # three debounce windows: the copy carries its hash, so it is not recreated again
    assert (await client.get("jobs.batch", "migrate", "default"))["metadata"]["uid"] == uid
