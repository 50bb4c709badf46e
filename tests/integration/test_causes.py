"""Kopf-style cause handlers compiled onto the level-based engine, on the real API server."""

from __future__ import annotations

import asyncio

from kubeloop import Context, Manager, Operator
from kubeloop.client import Client
from kubeloop.testing import wait_for_deletion

from .conftest import echo, options, running


async def until(cond, timeout: float = 20) -> None:  # noqa: ANN001
    for _ in range(int(timeout / 0.05)):
        if cond():
            return
        await asyncio.sleep(0.05)
    raise AssertionError("condition not reached")


async def test_create_update_delete_timer_daemon(kube_client: Client, namespace: str, echo_crd: str) -> None:
    op = Operator("causes")
    log: list[tuple] = []
    ticks: list[str] = []
    daemon_state: dict[str, str] = {}

    @op.on_create(echo_crd)
    async def created(obj: dict, ctx: Context) -> None:
        log.append(("create", obj["metadata"]["name"]))

    @op.on_update(echo_crd, field="spec.message")
    async def message_changed(obj: dict, ctx: Context, changes: list) -> None:
        log.append(("update", [(c.path, c.old, c.new) for c in changes]))

    @op.on_delete(echo_crd)
    async def deleted(obj: dict, ctx: Context) -> None:
        log.append(("delete", obj["metadata"]["name"]))

    @op.timer(echo_crd, interval=0.3)
    async def tick(obj: dict, ctx: Context) -> None:
        ticks.append(obj["metadata"]["name"])

    @op.daemon(echo_crd)
    async def watcher(obj: dict, ctx: Context) -> None:
        daemon_state[obj["metadata"]["name"]] = "running"
        try:
            await asyncio.Event().wait()
        finally:
            daemon_state[obj["metadata"]["name"]] = "stopped"

    manager = Manager(kube_client, options(namespace))
    manager.add_operator(op)
    async with running(manager):
        await kube_client.create(echo("k1", namespace, "one"))
        await until(lambda: ("create", "k1") in log)
        await kube_client.patch(echo_crd, "k1", {"spec": {"copies": 2}}, namespace)  # not spec.message
        await kube_client.patch(echo_crd, "k1", {"spec": {"message": "two"}}, namespace)
        await until(lambda: any(e[0] == "update" for e in log))
        await until(lambda: ticks.count("k1") >= 3)
        assert daemon_state.get("k1") == "running"
        await kube_client.delete(echo_crd, "k1", namespace)
        await wait_for_deletion(kube_client, echo_crd, "k1", namespace, timeout=20)
        await until(lambda: daemon_state.get("k1") == "stopped")
    updates = [e for e in log if e[0] == "update"]
    assert updates == [("update", [(("spec", "message"), "one", "two")])]
    assert log[0] == ("create", "k1") and log[-1] == ("delete", "k1")
