"""A typical operator test, written once against ``kube_target`` (the fake by default, the real local
control plane with ``--real-cluster``): the reloader annotates a Deployment's pod template when a
ConfigMap it mounts changes. Not collected by default (no ``test_`` prefix): ``side_by_side.py`` runs it
in both modes and prints the times. Repeated ``KUBELOOP_SIDE_BY_SIDE_RUNS`` times (default 5)."""

from __future__ import annotations

import os
from typing import Any

import pytest

from kubeloop.operators.reloader import build_operator
from kubeloop.operators.reloader.policy import HASH, TEMPLATE_HASH
from kubeloop.operators.reloader.settings import ReloaderSettings
from kubeloop.testing import wait_for

RUNS = int(os.environ.get("KUBELOOP_SIDE_BY_SIDE_RUNS", "5"))


def _hash(obj: dict[str, Any]) -> str | None:
    return (obj["spec"]["template"]["metadata"].get("annotations") or {}).get(TEMPLATE_HASH)


@pytest.mark.parametrize("run", range(RUNS))
async def test_reloader_rolls_on_data_change(kube_target: Any, run: int) -> None:
    op = build_operator()
    op.settings = ReloaderSettings(debounce_seconds=0.2)
    client, ns = kube_target.client, kube_target.namespace
    name = f"web-{run}"
    async with kube_target.run_operator(op):
        await client.create({"apiVersion": "v1", "kind": "ConfigMap", "data": {"conf": "a"},
                             "metadata": {"name": name, "namespace": ns}})
        await client.create({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {
            "name": name, "namespace": ns, "annotations": {"reloader.stakater.com/auto": "true"}},
            "spec": {"replicas": 1, "selector": {"matchLabels": {"app": name}}, "template": {
                "metadata": {"labels": {"app": name}}, "spec": {
                    "containers": [{"name": "app", "image": "nginx:1.27"}],
                    "volumes": [{"name": "conf", "configMap": {"name": name}}]}}}})
        await wait_for(client, "deployments.apps", name, ns,
                       lambda d: (d["metadata"].get("annotations") or {}).get(HASH) is not None, timeout=30)
        await client.patch("configmaps", name, {"data": {"conf": "b"}}, ns)
        rolled = await wait_for(client, "deployments.apps", name, ns, lambda d: _hash(d) is not None, timeout=30)
        assert rolled["metadata"]["generation"] >= 2
