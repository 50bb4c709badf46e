"""The controller loop on the FakeClient, through ``process(key)`` and the queue: what each outcome does
to the key, the error policy and the two backoffs, finalizers, deletion, resync, stopping, and the rule
that one key is never reconciled twice at once. (On the real API server: tests/integration/.)"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest

from kubeloop.client import Conflict, Forbidden
from kubeloop.client.errors import ServerError
from kubeloop.reconcile import Request, Result
from kubeloop.resources.builtin import CONFIG_MAP

from .controller_kit import Kit, cm, drain, until

FINALIZER = "unit.kubeloop.dev/cleanup"


class Calls:
    """A reconcile (or cleanup) that records what it saw and returns/raises what it is told."""

    def __init__(self, *outcomes: Any) -> None:
        self.outcomes = list(outcomes)
        self.seen: list[dict[str, Any]] = []

    async def __call__(self, obj: dict[str, Any], ctx: Any) -> Result | None:
        self.seen.append(obj)
        outcome = self.outcomes.pop(0) if self.outcomes else None
        if isinstance(outcome, Exception):
            raise outcome
        return outcome


async def test_success_reconciles_the_cached_object_and_forgets_failures(kit: Kit) -> None:
    kit.client.add(cm("a", k="1"))
    reconcile = Calls(ValueError("first try fails"), None)
    controller = await kit.controller(reconcile)
    await drain(controller)
    await controller.process("ns/a")
    assert controller.queue.backoff.failures("ns/a") == 1
    await kit.client.patch(CONFIG_MAP, "a", {"data": {"k": "2"}}, "ns")
    await kit.settled(controller)
    await controller.process("ns/a")
    assert [o["data"] for o in reconcile.seen] == [{"k": "1"}, {"k": "2"}], "level-based: the current object"
    assert controller.queue.backoff.failures("ns/a") == 0


async def test_requeue_after_is_a_timer_not_a_failure(kit: Kit) -> None:
    kit.client.add(cm("a"))
    controller = await kit.controller(Calls(Result(requeue_after=0.1)))
    await drain(controller)
    await controller.process("ns/a")
    assert len(controller.queue) == 0 and controller.queue.backoff.failures("ns/a") == 0
    await until(lambda: len(controller.queue) == 1, "the key back after 0.1 s")


async def test_requeue_backs_off_per_key(kit: Kit) -> None:
    kit.client.add(cm("a"))
    controller = await kit.controller(Calls(Result(requeue=True), Result(requeue=True)))
    await drain(controller)
    for _ in range(2):
        await controller.process("ns/a")
        await until(lambda: len(controller.queue) == 1, "the requeued key")
        await drain(controller)
    assert controller.queue.backoff.failures("ns/a") == 2


@pytest.mark.parametrize(("error", "schedule"), [
    (ValueError("a bug"), "object"), (KeyError("spec"), "object"),
    (Forbidden(403, "Forbidden", "cannot patch"), "transient"), (Conflict(409, "Conflict", "stale"), "transient"),
    (ServerError(500, "InternalError", "etcd"), "transient"),
])
async def test_errors_retry_on_the_object_or_the_transient_schedule(kit: Kit, error: Exception,
                                                                    schedule: str) -> None:
    kit.client.add(cm("a"))
    controller = await kit.controller(Calls(*[error] * 3))
    await drain(controller)
    for _ in range(3):
        await controller.process("ns/a")
    failures = (controller.queue.backoff.failures("ns/a"), controller.queue.transient_backoff.failures("ns/a"))
    assert failures == ((3, 0) if schedule == "object" else (0, 3))
    await until(lambda: len(controller.queue) == 1, "the retry")


async def test_the_error_policy_sees_each_failure_and_decides_the_delay(kit: Kit) -> None:
    kit.client.add(cm("a"))
    seen: list[tuple[str, Request, int]] = []

    def policy(error: Exception, request: Request, failures: int) -> float | None:
        seen.append((str(error), request, failures))
        return 0.05 if len(seen) == 1 else 0  # first: retry in 50 ms; then: give up (0 = no retry)

    controller = await kit.controller(Calls(ValueError("x"), ValueError("y")), error_policy=policy)
    await drain(controller)
    await controller.process("ns/a")
    await until(lambda: len(controller.queue) == 1, "the retry the policy asked for")
    await drain(controller)
    await controller.process("ns/a")
    await asyncio.sleep(0.1)
    assert len(controller.queue) == 0, "a delay of 0 drops the key"
    assert seen == [("x", Request("a", "ns"), 1), ("y", Request("a", "ns"), 2)], "the consecutive failures so far"


async def test_forbidden_says_what_to_grant_without_a_traceback(kit: Kit, caplog: Any) -> None:
    kit.client.add(cm("a"))
    denied = Forbidden(403, "Forbidden", 'configmaps "x" is forbidden: User "u" cannot patch resource "configmaps" '
                                         'in API group "" in the namespace "ns"')
    controller = await kit.controller(Calls(denied))
    with caplog.at_level(logging.INFO, logger="kubeloop.controller"):
        await controller.process("ns/a")
    (record,) = [r for r in caplog.records if r.name == "kubeloop.controller"]
    assert record.exc_info is None and "grant it to the operator's role" in record.getMessage()
    assert "lacks: patch on configmaps (API group '') in namespace 'ns'" in record.getMessage()


async def test_the_finalizer_goes_on_before_reconcile_runs(kit: Kit) -> None:
    kit.client.add(cm("a"))
    on_server: list[list[str]] = []

    async def reconcile(obj: dict[str, Any], ctx: Any) -> None:
        stored = kit.client.stored(CONFIG_MAP, "a", "ns") or {}
        on_server.append(stored["metadata"].get("finalizers", []))
        assert ctx.raw["metadata"]["finalizers"] == [FINALIZER]

    controller = await kit.controller(reconcile, finalizer=FINALIZER, cleanup=Calls())
    await controller.process("ns/a")
    assert on_server == [[FINALIZER]]
    assert kit.client.verbs(CONFIG_MAP)[-1:] == ["patch"], "one patch, no reconcile before it"


async def test_no_side_effect_when_the_finalizer_cannot_be_added(kit: Kit) -> None:
    kit.client.add(cm("a"))
    reconcile = Calls()
    controller = await kit.controller(reconcile, finalizer=FINALIZER, cleanup=Calls())
    kit.client.fail("patch", Forbidden(403, "Forbidden", "cannot patch"))
    await controller.process("ns/a")
    assert reconcile.seen == [] and controller.queue.transient_backoff.failures("ns/a") == 1


async def test_cleanup_runs_on_deletion_then_the_finalizer_goes(kit: Kit) -> None:
    kit.client.add(cm("a"))
    reconcile, cleanup = Calls(), Calls(ValueError("cleanup failed"), Result(requeue_after=5), None)
    controller = await kit.controller(reconcile, finalizer=FINALIZER, cleanup=cleanup)
    await controller.process("ns/a")
    await kit.client.delete(CONFIG_MAP, "a", "ns")
    await kit.settled(controller)
    for _ in range(2):  # a failed cleanup and one asking for time both keep the finalizer
        await controller.process("ns/a")
        await kit.settled(controller)
        assert kit.client.stored(CONFIG_MAP, "a", "ns") is not None
    await controller.process("ns/a")
    assert kit.client.stored(CONFIG_MAP, "a", "ns") is None and len(cleanup.seen) == 3
    assert len(reconcile.seen) == 1, "a deleting object is cleaned up, not reconciled"


async def test_a_finalizer_of_someone_else_is_left_alone(kit: Kit) -> None:
    other = cm("a")
    other["metadata"]["finalizers"] = ["someone.else/f"]
    kit.client.add(other)
    cleanup = Calls()
    controller = await kit.controller(Calls(), finalizer=FINALIZER, cleanup=cleanup)
    await kit.client.delete(CONFIG_MAP, "a", "ns")
    await kit.settled(controller)
    await controller.process("ns/a")
    assert cleanup.seen == [], "not ours to clean up: our finalizer was never added"
    stored = kit.client.stored(CONFIG_MAP, "a", "ns")
    assert stored is not None and stored["metadata"]["finalizers"] == ["someone.else/f"]


async def test_on_deleted_runs_once_the_object_is_gone(kit: Kit) -> None:
    kit.client.add(cm("a"))
    gone: list[tuple[Request, Any]] = []

    async def on_deleted(request: Request, ctx: Any) -> None:
        gone.append((request, ctx))

    reconcile = Calls()
    controller = await kit.controller(reconcile, on_deleted=on_deleted)
    await controller.process("ns/a")
    await kit.client.delete(CONFIG_MAP, "a", "ns")
    await kit.settled(controller)
    await controller.process("ns/a")
    assert gone == [(Request("a", "ns"), None)] and len(reconcile.seen) == 1


async def test_predicates_filter_every_event_deletions_too(kit: Kit) -> None:
    kit.client.add(cm("a"))
    controller = await kit.controller(Calls(), predicates=(lambda event: event.type == "deleted",))
    await drain(controller)
    await kit.client.patch(CONFIG_MAP, "a", {"data": {"k": "2"}}, "ns")
    await kit.settled(controller)
    assert len(controller.queue) == 0
    await kit.client.delete(CONFIG_MAP, "a", "ns")
    await kit.settled(controller)
    assert await drain(controller) == ["ns/a"], "the predicate passed the deletion"


async def test_resync_requeues_every_cached_key_without_a_change(kit: Kit) -> None:
    for name in ("a", "b"):
        kit.client.add(cm(name))
    reconcile = Calls()
    controller = await kit.controller(reconcile, resync=0.01, concurrency=1)
    controller.start()
    await until(lambda: len(reconcile.seen) >= 2, "the first reconciles")
    await until(lambda: len(reconcile.seen) >= 4, "a resync (housekeeping runs each second)", timeout=4)
    assert sorted(o["metadata"]["name"] for o in reconcile.seen[2:4]) == ["a", "b"]


async def test_stop_lets_in_flight_work_finish_and_starts_no_more(kit: Kit) -> None:
    for name in ("a", "b"):
        kit.client.add(cm(name))
    release = asyncio.Event()
    started: list[str] = []
    finished: list[str] = []

    async def reconcile(obj: dict[str, Any], ctx: Any) -> None:
        started.append(obj["metadata"]["name"])
        await release.wait()
        finished.append(obj["metadata"]["name"])

    controller = await kit.controller(reconcile, concurrency=1)
    controller.start()
    await until(lambda: len(started) == 1, "the first reconcile")
    stopping = asyncio.create_task(controller.stop(deadline=5))
    await asyncio.sleep(0.05)
    assert not stopping.done(), "stop waits for the reconcile in flight"
    release.set()
    await asyncio.wait_for(stopping, 5)
    assert finished == started and len(started) == 1, "the queued key was not started after stop"


async def test_stop_cancels_work_past_its_deadline(kit: Kit) -> None:
    kit.client.add(cm("a"))
    cancelled = asyncio.Event()

    async def reconcile(obj: dict[str, Any], ctx: Any) -> None:
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.set()
            raise

    controller = await kit.controller(reconcile)
    controller.start()
    await until(lambda: controller.queue.processing == 1, "the reconcile")
    await asyncio.wait_for(controller.stop(deadline=0.05), 2)
    assert cancelled.is_set()


async def test_one_key_is_never_reconciled_twice_at_once(kit: Kit) -> None:
    for name in ("a", "b", "c"):
        kit.client.add(cm(name, n="0"))
    running: dict[str, int] = {}
    overlap: list[str] = []
    most = 0
    last_seen: dict[str, str] = {}

    async def reconcile(obj: dict[str, Any], ctx: Any) -> None:
        nonlocal most
        name = obj["metadata"]["name"]
        running[name] = running.get(name, 0) + 1
        if running[name] > 1:
            overlap.append(name)
        most = max(most, sum(running.values()))
        await asyncio.sleep(0.01)
        last_seen[name] = ctx.raw["data"]["n"]
        running[name] -= 1

    controller = await kit.controller(reconcile, concurrency=8)
    controller.start()
    for n in range(1, 21):  # changes keep coming while each key is being reconciled
        for name in ("a", "b", "c"):
            await kit.client.patch(CONFIG_MAP, name, {"data": {"n": str(n)}}, "ns")
        await asyncio.sleep(0.002)
    await until(lambda: last_seen == {"a": "20", "b": "20", "c": "20"}, "the last version reconciled")
    assert overlap == [] and most > 1, (overlap, most)
