"""The examples of docs/howto/testing.md ("Tests without a cluster"), included from here so that the page
shows code that runs: ``kube_target`` on the fake (and on the real control plane with --real-cluster),
and ``fake_clock`` with ``fake_api``."""

from __future__ import annotations

import asyncio
from typing import Any

from kubeloop import Context, Operator, Result
from kubeloop.resources.builtin import CONFIG_MAP
from kubeloop.testing import operator_running, wait_for
from kubeloop.testing.target import KubeTarget

# --8<-- [start:target]
copier = Operator("copier")


@copier.reconcile(CONFIG_MAP, owns=[CONFIG_MAP])  # owns=: it may write ConfigMaps it owns
async def copy_a(obj: dict[str, Any], ctx: Context) -> None:
    if obj["metadata"]["name"] == "a":
        await ctx.apply({"apiVersion": "v1", "kind": "ConfigMap",
                         "metadata": {"name": "a-copy"}, "data": obj.get("data") or {}})


async def test_copies_configmap_a(kube_target: KubeTarget) -> None:
    client, namespace = kube_target.client, kube_target.namespace
    async with kube_target.run_operator(copier) as running:
        await client.create({"apiVersion": "v1", "kind": "ConfigMap",
                             "metadata": {"name": "a", "namespace": namespace}, "data": {"k": "v"}})
        copy = await wait_for(client, "configmaps", "a-copy", namespace, timeout=30)
        assert copy["data"] == {"k": "v"}
    report = running.audit()  # every request it made is in its generated RBAC
    assert report.ok, report.message
# --8<-- [end:target]


# --8<-- [start:clock]
async def test_requeue_after_an_hour(fake_clock: Any, fake_api: Any, fake_client: Any) -> None:
    op, seen = Operator("hourly"), []

    @op.reconcile(CONFIG_MAP, resync=None)
    async def reconcile(obj: dict[str, Any], ctx: Context) -> Result | None:
        if obj["metadata"]["name"] != "a":
            return None
        seen.append(asyncio.get_running_loop().time())  # the loop's clock: virtual under fake_clock
        return Result(requeue_after=3600)

    async with operator_running(op, fake_client, namespaces=["default"]):
        await fake_client.create({"apiVersion": "v1", "kind": "ConfigMap",
                                  "metadata": {"name": "a", "namespace": "default"}})
        async with asyncio.timeout(3 * 3600):  # three virtual hours, well under a second of wall time
            while len(seen) < 3:
                await asyncio.sleep(1)
    assert [round(b - a) for a, b in zip(seen, seen[1:], strict=False)][:2] == [3600, 3600]
# --8<-- [end:clock]
