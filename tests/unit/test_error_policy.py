"""The error policy's failure count and giving up (GIVE_UP, PermanentError) on the FakeClient: the count
grows whatever delay the policy returns, a give-up leaves a Warning Event and is not retried until the
object changes. (On the real API server: tests/integration/test_docs_kopf.py.)"""

from __future__ import annotations

from typing import Any

from kubeloop import GIVE_UP, PermanentError
from kubeloop.reconcile import Request
from kubeloop.resources.builtin import CONFIG_MAP, EVENT

from .controller_kit import Kit, cm, drain


class Failing:
    """A reconcile that raises ``error`` every time, counting its calls."""

    def __init__(self, error: Exception) -> None:
        self.error, self.calls = error, 0

    async def __call__(self, obj: Any, ctx: Any) -> None:
        self.calls += 1
        raise self.error


def stop_after(n: int, seen: list[int]) -> Any:
    def policy(error: Exception, request: Request, failures: int) -> float | None:
        seen.append(failures)
        return GIVE_UP if failures >= n else 0.01  # Kopf's retries=n with its own delay
    return policy


def warnings(kit: Kit) -> list[dict[str, Any]]:
    return [e for e in kit.client.objects(EVENT) if e["type"] == "Warning"]


async def test_a_policy_with_its_own_delay_sees_the_count_grow_and_stops_after_three(kit: Kit) -> None:
    kit.client.add(cm("a"))
    seen: list[int] = []
    reconcile = Failing(ValueError("broken"))
    controller = await kit.controller(reconcile, error_policy=stop_after(3, seen))
    for _ in range(5):
        await drain(controller)
        await controller.process("ns/a")
    assert seen == [1, 2, 3] and reconcile.calls == 3, "three attempts, then no more (resyncs included)"
    (event,) = warnings(kit)
    assert event["reason"] == "ReconcileFailed" and "after 3 failed attempts: broken" in event["note"]
    assert event["regarding"]["name"] == "a"


async def test_a_changed_object_is_tried_again_with_a_fresh_count(kit: Kit) -> None:
    kit.client.add(cm("a"))
    seen: list[int] = []
    reconcile = Failing(ValueError("broken"))
    controller = await kit.controller(reconcile, error_policy=stop_after(2, seen))
    for _ in range(3):
        await controller.process("ns/a")
    assert reconcile.calls == 2
    await kit.client.patch(CONFIG_MAP, "a", {"data": {"k": "v"}}, "ns")
    await kit.settled(controller)
    await controller.process("ns/a")
    assert reconcile.calls == 3 and seen == [1, 2, 1]


async def test_permanent_error_gives_up_at_once_without_asking_the_policy(kit: Kit) -> None:
    kit.client.add(cm("a"))
    seen: list[int] = []
    reconcile = Failing(PermanentError("spec.size must be even"))
    controller = await kit.controller(reconcile, error_policy=stop_after(9, seen))
    await drain(controller)
    await controller.process("ns/a")
    assert len(controller.queue) == 0, "no retry scheduled"
    await controller.process("ns/a")
    assert reconcile.calls == 1 and seen == []
    (event,) = warnings(kit)
    assert "after 1 failed attempt: spec.size must be even" in event["note"]


async def test_a_success_resets_the_count(kit: Kit) -> None:
    kit.client.add(cm("a"))
    seen: list[int] = []
    outcomes: list[Exception | None] = [ValueError("1"), ValueError("2"), None, ValueError("3")]

    async def reconcile(obj: Any, ctx: Any) -> None:
        outcome = outcomes.pop(0)
        if outcome:
            raise outcome

    controller = await kit.controller(reconcile, error_policy=stop_after(9, seen))
    for _ in range(4):
        await controller.process("ns/a")
    assert seen == [1, 2, 1]


async def test_a_success_sets_a_give_ups_stalled_condition_back_to_false(kit: Kit) -> None:
    from kubeloop import Resource

    kex = Resource("kopf.dev", "v1", "kopfexamples", "KopfExample")
    kit.client = type(kit.client)(resources=(kex,))
    kit.client.add({"apiVersion": "kopf.dev/v1", "kind": "KopfExample", "metadata": {"name": "a", "namespace": "ns"}})
    broken = [True]

    async def reconcile(obj: Any, ctx: Any) -> None:
        if broken[0]:
            raise PermanentError("broken")

    controller = await kit.controller(reconcile, resource=kex)
    await controller.process("ns/a")
    await kit.settled(controller)
    await controller.process("ns/a")  # the echo of the status write: still given up, the condition stays
    (cond,) = kit.client.stored(kex, "a", "ns")["status"]["conditions"]  # type: ignore[index]
    assert (cond["type"], cond["status"], cond["reason"]) == ("Stalled", "True", "ReconcileFailed")
    broken[0] = False
    await kit.client.patch(kex, "a", {"metadata": {"labels": {"fixed": "yes"}}}, "ns")
    await kit.settled(controller)
    await controller.process("ns/a")
    (cond,) = kit.client.stored(kex, "a", "ns")["status"]["conditions"]  # type: ignore[index]
    assert (cond["type"], cond["status"], cond["reason"]) == ("Stalled", "False", "Reconciled")
