"""Finalizers never strand objects: deleting the CRD while the operator runs completes (the operator
cleans up and releases every finalizer), and the operator survives its resource disappearing."""

from __future__ import annotations

import asyncio
import copy

from kubeloop import Context, Manager, Operator
from kubeloop.client import Client, NotFound
from kubeloop.testing import wait_for, wait_for_deletion

from .conftest import ECHO_CRD, options, running


def doomed_crd() -> dict:
    crd = copy.deepcopy(ECHO_CRD)
    crd["metadata"]["name"] = "dooms.test.kubeloop.dev"
    crd["spec"]["names"] = {"kind": "Doom", "plural": "dooms", "singular": "doom", "listKind": "DoomList"}
    return crd


async def test_crd_deletion_completes_while_operator_runs(kube_client: Client, namespace: str) -> None:
    await kube_client.apply(doomed_crd(), field_manager="test")
    await wait_for(kube_client, "customresourcedefinitions", "dooms.test.kubeloop.dev", timeout=30,
                   predicate=lambda o: any(c["type"] == "Established" and c["status"] == "True"
                                           for c in (o.get("status") or {}).get("conditions") or []))
    await kube_client.registry.refresh()
    op = Operator("doom")
    cleaned: list[str] = []

    @op.reconcile("dooms.test.kubeloop.dev", resync=None)
    async def reconcile(obj: dict, ctx: Context) -> None:
        return None

    @op.finalize("dooms.test.kubeloop.dev")
    async def cleanup(obj: dict, ctx: Context) -> None:
        cleaned.append(obj["metadata"]["name"])

    manager = Manager(kube_client, options(namespace))
    manager.add_operator(op)
    async with running(manager) as task:
        for i in range(3):
            await kube_client.create({"apiVersion": "test.kubeloop.dev/v1", "kind": "Doom",
                                      "metadata": {"name": f"d{i}", "namespace": namespace}, "spec": {}})
            await wait_for(kube_client, "dooms.test.kubeloop.dev", f"d{i}", namespace, timeout=20,
                           predicate=lambda o: bool(o["metadata"].get("finalizers")))
        await kube_client.delete("customresourcedefinitions", "dooms.test.kubeloop.dev")
        await wait_for_deletion(kube_client, "customresourcedefinitions", "dooms.test.kubeloop.dev", timeout=60)
        assert sorted(cleaned) == ["d0", "d1", "d2"]
        await asyncio.sleep(1.5)  # the informer now gets 404s and backs off: the manager must live on
        assert not task.done()
        try:
            await kube_client.get("customresourcedefinitions", "dooms.test.kubeloop.dev")
            raise AssertionError("CRD still there")
        except NotFound:
            pass
