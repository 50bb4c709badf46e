"""Predicates on the FakeClient: they see every event type, deletions included, and one that raises
neither hides the others' verdict nor stops the event (it counts as passing, and is logged)."""

from __future__ import annotations

import logging
from typing import Any

from kubeloop.cache import Event
from kubeloop.resources.builtin import CONFIG_MAP

from .controller_kit import Kit, cm, drain, until


async def test_predicates_see_deletions_and_may_keep_them_from_the_reconciler(kit: Kit) -> None:
    kit.client.add(cm("a"))
    kit.client.add(cm("b"))
    seen: list[tuple[str, str]] = []

    def only_a(event: Event) -> bool:
        seen.append((event.type, event.object["metadata"]["name"]))
        return event.object["metadata"]["name"] == "a"

    controller = await kit.controller(predicates=[only_a])
    await drain(controller)
    await kit.client.delete(CONFIG_MAP, "a", "ns")
    await kit.client.delete(CONFIG_MAP, "b", "ns")
    await until(lambda: ("deleted", "b") in seen, "the deletion of b to reach the predicate")
    assert ("deleted", "a") in seen
    assert await drain(controller) == ["ns/a"], "b's deletion was filtered out, a's was not"


async def test_a_raising_predicate_is_logged_and_the_others_still_decide(kit: Kit, caplog: Any) -> None:
    kit.client.add(cm("a"))
    kit.client.add(cm("b"))
    asked: list[str] = []

    def broken(event: Event) -> bool:
        raise KeyError("spec")

    def not_b(event: Event) -> bool:
        asked.append(event.object["metadata"]["name"])
        return event.object["metadata"]["name"] != "b"

    controller = await kit.controller(predicates=[broken, not_b])
    await until(lambda: len(asked) == 2, "the initial events")
    await drain(controller)
    asked.clear()
    with caplog.at_level(logging.ERROR, logger="kubeloop.predicates"):
        await kit.client.patch(CONFIG_MAP, "a", {"data": {"k": "1"}}, "ns")
        await kit.client.patch(CONFIG_MAP, "b", {"data": {"k": "1"}}, "ns")
        await until(lambda: "b" in asked, "the second predicate to be asked about b")
    assert asked == ["a", "b"], "the raising predicate does not hide the second one"
    assert await drain(controller) == ["ns/a"], "a passes (broken counts as passing), b is refused by not_b"
    messages = [r.getMessage() for r in caplog.records if r.name == "kubeloop.predicates" and "modified" in r.message]
    assert len(messages) == 2 and "predicate broken raised on the modified event of ns/a" in messages[0]
