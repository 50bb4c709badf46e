"""A controller with a shard gate (kubeloop/controller/gate.py): it queues and reconciles only the keys
it owns, judged by the hash of the object's uid, checks again when a key is dequeued (the fence), lists
a running reconcile in ``in_flight``, survives that reconcile's cancellation, and refuses its own
writes once ownership is gone."""

from __future__ import annotations

import asyncio
import zlib
from typing import Any

from kubeloop.controller.gate import Fenced

from .controller_kit import Kit, cm, drain, until


class Gate:
    """Owns the hashes in ``owned`` (the test's stand-in for the shard member)."""

    def __init__(self) -> None:
        self.owned: set[int] = set()

    def hash(self, uid: str) -> int:
        return zlib.crc32(uid.encode())

    def owns(self, h: int) -> bool:
        return h in self.owned


async def gated(kit: Kit, reconcile: Any = None, **spec: Any) -> tuple[Any, Gate]:
    controller = await kit.controller(reconcile, **spec)
    controller.gate = gate = Gate()
    await drain(controller)  # the initial list was queued before the gate was set
    return controller, gate


async def test_only_owned_keys_are_queued_and_reconciled(kit: Kit) -> None:
    seen: list[str] = []

    async def reconcile(obj: dict, ctx: Any) -> None:
        seen.append(obj["metadata"]["name"])

    await kit.client.create(cm("mine"))
    await kit.client.create(cm("theirs"))
    controller, gate = await gated(kit, reconcile)
    mine = controller.informer.store.get("ns/mine")
    gate.owned = {gate.hash(mine["metadata"]["uid"])}
    assert controller.requeue_owned() == 1 and await drain(controller) == ["ns/mine"]
    await controller.process("ns/theirs")  # queued before the slot moved: the fence drops it
    await controller.process("ns/mine")
    assert seen == ["mine"]
    await kit.client.patch("configmaps", "theirs", {"data": {"k": "v"}}, "ns")
    await kit.client.patch("configmaps", "mine", {"data": {"k": "v"}}, "ns")
    await kit.settled(controller)
    assert await drain(controller) == ["ns/mine"], "an event of a key it does not own queues nothing"


async def test_in_flight_is_listed_and_a_cancelled_reconcile_spares_the_worker(kit: Kit) -> None:
    entered, never = asyncio.Event(), asyncio.Event()

    async def reconcile(obj: dict, ctx: Any) -> None:
        entered.set()
        await never.wait()

    await kit.client.create(cm("a"))
    controller, gate = await gated(kit, reconcile)
    gate.owned = {controller.key_hash("ns/a")}
    running = asyncio.create_task(controller.process("ns/a"))
    await entered.wait()
    h, task = controller.in_flight["ns/a"]
    assert h == controller.key_hash("ns/a")
    task.cancel()  # what a handoff does after its timeout
    await asyncio.wait_for(running, 1)  # the worker's call returns; it is not cancelled itself
    assert controller.in_flight == {}


async def test_own_writes_are_fenced_once_the_key_moved(kit: Kit) -> None:
    errors: list[BaseException] = []

    async def reconcile(obj: dict, ctx: Any) -> None:
        gate.owned.clear()  # the slot moves while the reconcile runs
        try:
            await ctx.patch_status({"x": "y"})
        except Fenced as exc:
            errors.append(exc)
            raise

    await kit.client.create(cm("a"))
    controller, gate = await gated(kit, reconcile)
    gate.owned = {controller.key_hash("ns/a")}
    await controller.process("ns/a")
    assert errors and "no longer owns" in str(errors[0])


async def test_a_deleted_key_it_does_not_own_leaves_no_hash_behind(kit: Kit) -> None:
    await kit.client.create(cm("theirs"))
    controller, _ = await gated(kit)
    assert controller.key_hash("ns/theirs") is not None
    await kit.client.delete("configmaps", "theirs", "ns")
    await kit.settled(controller)
    assert controller.key_hash("ns/theirs") is None and await drain(controller) == []


async def test_a_handoff_cancels_and_awaits_the_daemons_of_the_keys_that_moved(kit: Kit) -> None:
    ran: dict[str, str] = {}

    async def daemon(obj: dict, ctx: Any) -> None:
        name = obj["metadata"]["name"]
        ran[name] = "running"
        try:
            await asyncio.Event().wait()
        finally:
            ran[name] = "stopped"

    await kit.client.create(cm("stays"))
    await kit.client.create(cm("moves"))
    controller, gate = await gated(kit, daemons=(daemon,))
    gate.owned = {controller.key_hash("ns/stays"), controller.key_hash("ns/moves")}
    await controller.process("ns/stays")
    await controller.process("ns/moves")
    await until(lambda: ran == {"stays": "running", "moves": "running"}, "both daemons")
    gate.owned = {controller.key_hash("ns/stays")}  # the slot of "moves" was handed off
    assert await controller.stop_unowned_daemons() == 1
    assert ran == {"stays": "running", "moves": "stopped"}, "awaited, not merely cancelled"
    await controller.stop()
    assert ran["stays"] == "stopped"
