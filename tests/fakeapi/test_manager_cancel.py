"""``manager.run()`` cancelled from outside (``task.cancel()``, as an embedding application or a task group
does) stops what it started: no worker, housekeeping or daemon task of its controllers outlives it, and
an in-flight reconcile is cancelled rather than left running."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from kubeloop import Context, Operator
from kubeloop.client import Client
from kubeloop.manager import Manager, ManagerOptions
from kubeloop.resources.builtin import CONFIG_MAP, SECRET
from kubeloop.testing.apiserver import FakeApiServer
from kubeloop.webhooks.runtime import WebhookOptions


def ours(name: str) -> bool:
    return name.startswith("cancelled-")


def controller_tasks(names: tuple[str, ...]) -> list[asyncio.Task[Any]]:
    """Every live task of these controllers: workers, housekeeping, daemons (by their task names)."""
    return [t for t in asyncio.all_tasks() if not t.done()
            and (t.get_name().startswith(names) or t.get_name().startswith("daemon "))]


async def test_a_cancelled_run_leaves_no_task_of_its_controllers(fake_api: FakeApiServer,
                                                                 fake_client: Client) -> None:
    op = Operator("cancelled")
    reconciling, daemon_running = asyncio.Event(), asyncio.Event()
    ended: list[str] = []

    @op.reconcile(CONFIG_MAP, resync=None)
    async def slow(obj: Any, ctx: Context) -> None:
        if ours(obj["metadata"]["name"]):
            reconciling.set()
            try:
                await asyncio.sleep(3600)
            except asyncio.CancelledError:
                ended.append("reconcile")
                raise

    @op.daemon(SECRET)
    async def watcher(obj: Any, ctx: Context) -> None:
        if not ours(obj["metadata"]["name"]):
            return
        daemon_running.set()
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            ended.append("daemon")
            raise

    async with await fake_api.client(field_manager=op.name) as client:
        manager = Manager(client, ManagerOptions(
            namespaces=["default"], metrics_bind_address="127.0.0.1:0", health_probe_bind_address="127.0.0.1:0",
            freeze_gc=False, webhook=WebhookOptions(port=0)), name=op.name)
        manager.add_operator(op)
        names = tuple(f"{spec.name} " for spec in manager.specs)
        run = asyncio.create_task(manager.run())
        await asyncio.wait_for(manager.started.wait(), 30)
        await fake_client.create({"apiVersion": "v1", "kind": "ConfigMap",
                                  "metadata": {"name": "cancelled-a", "namespace": "default"}})
        await fake_client.create({"apiVersion": "v1", "kind": "Secret",
                                  "metadata": {"name": "cancelled-b", "namespace": "default"}})
        await asyncio.wait_for(asyncio.gather(reconciling.wait(), daemon_running.wait()), 30)
        assert controller_tasks(names), "workers and the daemon run before the cancel"

        run.cancel()
        with pytest.raises(asyncio.CancelledError):
            await run
        await asyncio.sleep(0)  # let any task that is only now finishing finish
        left = controller_tasks(names)
        assert not left, f"still alive after the cancelled run: {[t.get_name() for t in left]}"
        assert sorted(ended) == ["daemon", "reconcile"]
