"""Daemons (``@op.daemon``) on the fake API server: owned by the manager run that started them (none alive
after ``run()`` returns, each of two managers starts its own), restarted with growing delays when they
raise (in virtual time), never when they return, reading the object's current version with
``ctx.current()``, and stopped once their object is marked for deletion."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

from kubeloop import Context, Operator
from kubeloop.client import Client
from kubeloop.controller.daemons import restart_delay
from kubeloop.resources.builtin import CONFIG_MAP
from kubeloop.testing import operator_running
from kubeloop.testing.apiserver import FakeApiServer
from kubeloop.testing.virtualtime import VirtualTime

WALL_BOUND = 60.0  # seconds: loose, only to fail instead of hanging


def cm(name: str, **data: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "default"},
            "data": data}


def ours(obj: Any) -> bool:
    """Not the namespace's own kube-root-ca.crt ConfigMap."""
    return obj["metadata"]["name"] != "kube-root-ca.crt"


@contextlib.asynccontextmanager
async def running(op: Operator, fake: FakeApiServer) -> AsyncIterator[None]:
    async with await fake.client(field_manager=op.name) as client:
        async with operator_running(op, client, namespaces=["default"]):
            yield


async def until(check: Callable[[], bool], timeout: float = 10.0) -> None:
    """Waits until ``check()`` (``timeout`` on the loop's clock, virtual under ``fake_clock``)."""
    wall = time.perf_counter()
    async with asyncio.timeout(timeout):
        while not check():
            assert time.perf_counter() - wall < WALL_BOUND, "time did not advance"
            await asyncio.sleep(0.05)


async def test_no_daemon_task_is_alive_after_the_manager_stopped(fake_api: FakeApiServer, fake_client: Client
                                                                  ) -> None:
    op, tasks = Operator("daemon-stop"), []

    @op.daemon(CONFIG_MAP)
    async def watch(obj: Any, ctx: Context) -> None:
        if ours(obj):
            tasks.append(asyncio.current_task())
            await asyncio.Event().wait()

    async with running(op, fake_api):
        await fake_client.create(cm("a"))
        await fake_client.create(cm("b"))
        await until(lambda: len(tasks) == 2)
    assert all(t.done() for t in tasks), "a daemon outlived its manager"
    assert all(t.cancelled() for t in tasks)


async def test_two_managers_of_one_operator_each_start_their_own(fake_api: FakeApiServer, fake_client: Client
                                                                 ) -> None:
    op, started, alive = Operator("daemon-twice"), [], []

    @op.daemon(CONFIG_MAP)
    async def watch(obj: Any, ctx: Context) -> None:
        if ours(obj):
            started.append(obj["metadata"]["name"])
            alive.append(asyncio.current_task())
            await asyncio.Event().wait()

    async with running(op, fake_api):
        async with running(op, fake_api):
            await fake_client.create(cm("a"))
            await until(lambda: len(started) == 2)
            assert started == ["a", "a"]
        await asyncio.sleep(0.2)
        assert sum(not t.done() for t in alive) == 1, "the inner manager stopped its daemon, the outer kept its"
    assert all(t.done() for t in alive)


async def test_a_raising_daemon_restarts_with_growing_delays_and_a_returning_one_does_not(
        fake_clock: VirtualTime, fake_api: FakeApiServer, fake_client: Client) -> None:
    op, starts, returned = Operator("daemon-restart"), [], []

    @op.daemon(CONFIG_MAP)
    async def flaky(obj: Any, ctx: Context) -> None:
        if ours(obj):
            starts.append(asyncio.get_running_loop().time())
            raise RuntimeError("cannot watch yet")

    @op.daemon(CONFIG_MAP)
    async def once(obj: Any, ctx: Context) -> None:
        if ours(obj):
            returned.append(obj["metadata"]["name"])

    async with running(op, fake_api):
        await fake_client.create(cm("a"))
        await until(lambda: len(starts) >= 6, timeout=600)
        await fake_client.patch(CONFIG_MAP, "a", {"data": {"k": "v"}}, "default")  # a reconcile again
        await asyncio.sleep(30)
    gaps = [round(b - a, 1) for a, b in zip(starts, starts[1:], strict=False)]
    print(f"restarts after {gaps} s (virtual)")
    assert gaps[:5] == [restart_delay(n) for n in range(1, 6)] == [1, 2, 4, 8, 16]
    assert returned == ["a"], "a daemon that returned was started again"


async def test_the_daemon_reads_the_current_object(fake_api: FakeApiServer, fake_client: Client) -> None:
    op, seen, first = Operator("daemon-live"), [], []

    @op.daemon(CONFIG_MAP)
    async def watch(obj: Any, ctx: Context) -> None:
        if not ours(obj):
            return
        first.append(obj["data"]["v"])
        while (now := ctx.current()) is not None:
            seen.append(now["data"]["v"])
            await asyncio.sleep(0.05)
        seen.append("gone")

    async with running(op, fake_api):
        await fake_client.create(cm("a", v="1"))
        await until(lambda: "1" in seen)
        await fake_client.patch(CONFIG_MAP, "a", {"data": {"v": "2"}}, "default")
        await until(lambda: "2" in seen)
    assert first == ["1"], "the daemon was restarted instead of reading the new version"


async def test_marking_the_object_for_deletion_stops_its_daemon(fake_api: FakeApiServer, fake_client: Client
                                                                ) -> None:
    op, events = Operator("daemon-delete"), []

    @op.daemon(CONFIG_MAP)
    async def watch(obj: Any, ctx: Context) -> None:
        if not ours(obj):
            return
        events.append("started")
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            events.append("cancelled")
            raise

    held = cm("a")
    held["metadata"]["finalizers"] = ["example.com/hold"]  # someone else's: the object stays, deleting
    async with running(op, fake_api):
        await fake_client.create(held)
        await until(lambda: events == ["started"])
        await fake_client.delete(CONFIG_MAP, "a", "default")
        await until(lambda: events == ["started", "cancelled"])
        await fake_client.patch(CONFIG_MAP, "a", {"metadata": {"labels": {"x": "y"}}}, "default")
        await asyncio.sleep(0.3)
        assert events == ["started", "cancelled"], "a daemon started for an object being deleted"
        await fake_client.patch(CONFIG_MAP, "a", {"metadata": {"finalizers": None}}, "default")
