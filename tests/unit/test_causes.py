"""Cause handlers (create, update of a field, delete, timers, daemons) as an Operator compiles them onto
the level-based controller, driven through ``process(key)`` on the FakeClient.
(On the real API server: tests/integration/test_causes.py.)"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from kubeloop import Operator
from kubeloop.controller.diff import Change
from kubeloop.resources.builtin import CONFIG_MAP

from .controller_kit import Kit, cm, until

KEY = "ns/a"


def name_of(obj: dict[str, Any]) -> str:
    return obj["metadata"]["name"]


async def test_create_once_then_update_only_for_the_watched_field(kit: Kit) -> None:
    op = Operator("causes-update")
    log: list[Any] = []

    @op.on_create(CONFIG_MAP)
    async def created(obj: dict[str, Any], ctx: Any) -> None:
        log.append(("create", obj["data"]))

    @op.on_update(CONFIG_MAP, field="data.k")
    async def k_changed(obj: dict[str, Any], ctx: Any, changes: list[Change]) -> None:
        log.append(("update", [(c.op, c.path, c.old, c.new) for c in changes]))

    kit.client.add(cm("a", k="1"))
    controller = await kit.operator_controller(op)
    await controller.process(KEY)
    await controller.process(KEY)  # nothing changed: no handler
    for patch in ({"data": {"other": "x"}}, {"metadata": {"labels": {"l": "v"}}}, {"data": {"k": "2"}}):
        await kit.client.patch(CONFIG_MAP, "a", patch, "ns")
        await kit.settled(controller)
        await controller.process(KEY)
    assert log == [("create", {"k": "1"}), ("update", [("change", ("data", "k"), "1", "2")])]


async def test_a_failed_handler_runs_again_with_the_same_cause(kit: Kit) -> None:
    op = Operator("causes-retry")
    attempts: list[Any] = []

    @op.on_create(CONFIG_MAP)
    async def created(obj: dict[str, Any], ctx: Any) -> None:
        attempts.append("create")
        if attempts.count("create") == 1:
            raise RuntimeError("first create fails")

    @op.on_update(CONFIG_MAP)
    async def updated(obj: dict[str, Any], ctx: Any, changes: list[Change]) -> None:
        attempts.append([c.path for c in changes])
        if len(attempts) == 3:
            raise RuntimeError("first update fails")

    kit.client.add(cm("a", k="1"))
    controller = await kit.operator_controller(op)
    await controller.process(KEY)
    await controller.process(KEY)
    await kit.client.patch(CONFIG_MAP, "a", {"data": {"k": "2"}}, "ns")
    await kit.settled(controller)
    await controller.process(KEY)
    await controller.process(KEY)
    assert attempts == ["create", "create", [("data", "k")], [("data", "k")]]


async def test_after_a_restart_every_object_is_new_again(kit: Kit) -> None:
    created: list[str] = []

    def operator() -> Operator:
        op = Operator("causes-restart")

        @op.on_create(CONFIG_MAP)
        async def on_create(obj: dict[str, Any], ctx: Any) -> None:
            created.append(name_of(obj))
        return op

    kit.client.add(cm("a"))
    await (await kit.operator_controller(operator())).process(KEY)
    await (await kit.operator_controller(operator())).process(KEY)
    assert created == ["a", "a"], "state is kept in memory, never in the object"


async def test_delete_handlers_hold_a_finalizer_and_run_after_the_daemons_stop(kit: Kit) -> None:
    op = Operator("causes-delete")
    order: list[str] = []

    @op.on_create(CONFIG_MAP)
    async def created(obj: dict[str, Any], ctx: Any) -> None:
        stored = kit.client.stored(CONFIG_MAP, "a", "ns") or {}
        order.append(f"create with finalizers {stored['metadata'].get('finalizers')}")

    @op.daemon(CONFIG_MAP)
    async def daemon(obj: dict[str, Any], ctx: Any) -> None:
        order.append("daemon started")
        try:
            await asyncio.Event().wait()
        finally:
            order.append("daemon stopped")

    @op.on_delete(CONFIG_MAP)
    async def deleted(obj: dict[str, Any], ctx: Any) -> None:
        order.append("delete")

    kit.client.add(cm("a"))
    controller = await kit.operator_controller(op)
    await controller.process(KEY)
    await until(lambda: "daemon started" in order, "the daemon")
    await kit.client.delete(CONFIG_MAP, "a", "ns")
    await kit.settled(controller)
    await controller.process(KEY)
    assert order == ["create with finalizers ['kubeloop.dev/causes-delete']", "daemon started",
                     "daemon stopped", "delete"]
    assert kit.client.stored(CONFIG_MAP, "a", "ns") is None, "the finalizer went after the handler"


async def test_one_daemon_per_object_stopped_when_it_is_gone(kit: Kit, caplog: Any) -> None:
    op = Operator("causes-daemon")
    running: dict[str, int] = {}

    @op.daemon(CONFIG_MAP)
    async def daemon(obj: dict[str, Any], ctx: Any) -> None:
        running[name_of(obj)] = running.get(name_of(obj), 0) + 1
        try:
            await asyncio.Event().wait()
        finally:
            running[name_of(obj)] -= 1

    @op.daemon(CONFIG_MAP)
    async def crashing(obj: dict[str, Any], ctx: Any) -> None:
        raise RuntimeError("a daemon's bug")

    kit.client.add(cm("a"))
    kit.client.add(cm("b"))
    controller = await kit.operator_controller(op)
    with caplog.at_level(logging.ERROR, logger="kubeloop.causes"):
        for _ in range(3):
            await controller.process(KEY)
        await controller.process("ns/b")
        await until(lambda: running == {"a": 1, "b": 1}, "one daemon per object")
    assert any("daemon crashing for ns/a failed" in r.getMessage() for r in caplog.records), "logged"
    await kit.client.delete(CONFIG_MAP, "a", "ns")  # no delete handler: no finalizer, gone at once
    await kit.settled(controller)
    await controller.process(KEY)
    await until(lambda: running == {"a": 0, "b": 1}, "a's daemon stopped, b's still running")


async def test_timers_fire_when_due_and_ask_to_be_woken_for_the_next(kit: Kit) -> None:
    op = Operator("causes-timer")
    ticks: list[str] = []

    @op.timer(CONFIG_MAP, interval=0.2)
    async def tick(obj: dict[str, Any], ctx: Any) -> None:
        ticks.append(name_of(obj))

    kit.client.add(cm("a"))
    controller = await kit.operator_controller(op)
    await controller.process(KEY)
    await kit.client.patch(CONFIG_MAP, "a", {"data": {"k": "changed"}}, "ns")
    await kit.settled(controller)
    await controller.process(KEY)  # a reconcile for another reason before the interval: no tick
    assert ticks == ["a"]
    await asyncio.sleep(0.25)
    await controller.process(KEY)
    assert ticks == ["a", "a"]
    controller.start()  # from here on only the timer's requeue_after wakes the object
    await until(lambda: len(ticks) >= 4, "two more ticks, woken by requeue_after", timeout=2)
