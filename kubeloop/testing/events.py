"""Read the Events an operator recorded, in a test.

An operator's ``ctx.event`` queues the Event and a background task sends it (as client-go's recorder
does), so an Event can reach the API server after the status the test waited for. ``wait_for_events``
polls until the Events are there; ``RunningOperator.events_sent`` waits for the operator's queue to be
empty, which is what a test that asserts an Event's *absence* needs first.
"""

from __future__ import annotations

import asyncio
from typing import Any

from kubeloop.client import Client
from kubeloop.client.wait import WaitTimeout

EVENTS = "events.events.k8s.io"


def occurrences(events: list[dict[str, Any]]) -> int:
    """How many times these Events happened: repeats of one are aggregated into a series."""
    return sum((e.get("series") or {}).get("count", 1) for e in events)


async def events_of(client: Client, namespace: str, name: str, reason: str | None = None) -> list[dict[str, Any]]:
    """The Events in ``namespace`` regarding the object ``name`` (with ``reason``, if given), as they are now."""
    items = (await client.list(EVENTS, namespace))["items"]
    return [e for e in items if (e.get("regarding") or {}).get("name") == name
            and (reason is None or e.get("reason") == reason)]


async def wait_for_events(client: Client, namespace: str, name: str, reason: str | None = None, *,
                          count: int = 1, timeout: float = 30.0) -> list[dict[str, Any]]:
    """The Events regarding ``name`` (with ``reason``) once they have happened at least ``count`` times.
    On timeout a ``WaitTimeout`` lists the Events there were."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while occurrences(found := await events_of(client, namespace, name, reason)) < count:
        if loop.time() >= deadline:
            seen = [(e.get("type"), e.get("reason"), e.get("note")) for e in found]
            raise WaitTimeout(f"{count} Event(s) {reason or ''} on {namespace}/{name} within {timeout:.0f} s; "
                              f"there are {occurrences(found)}: {seen}")
        await asyncio.sleep(0.2)
    return found
