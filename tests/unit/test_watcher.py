"""The watcher's initial list: a streaming list where the server offers one, pages where it does not.
(Against the real API server: tests/integration/test_runtime.py.)"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

from kubeloop.client import Resource
from kubeloop.client.errors import Invalid
from kubeloop.watch.backoff import Backoff
from kubeloop.watch.watcher import INITIAL_EVENTS_END, Changed, Relisted, Watcher, WatchOptions

WIDGETS = Resource("bench.example.com", "v1", "widgets", "Widget")


def widget(name: str, rv: str) -> dict[str, Any]:
    return {"apiVersion": "bench.example.com/v1", "kind": "Widget",
            "metadata": {"name": name, "namespace": "ns", "resourceVersion": rv}}


def bookmark(rv: str, end: bool) -> dict[str, Any]:
    meta: dict[str, Any] = {"resourceVersion": rv}
    if end:
        meta["annotations"] = {INITIAL_EVENTS_END: "true"}
    return {"type": "BOOKMARK", "object": {"kind": "Widget", "metadata": meta}}


class ScriptedClient:
    """Plays one script per watch request (a list of events, or an exception to raise); then the
    watch stays open and silent. Lists answer one page."""

    def __init__(self, *watches: list[dict[str, Any]] | Exception, page: list[dict[str, Any]] | None = None,
                 page_rv: str = "50") -> None:
        self.watches = list(watches)
        self.watch_calls: list[dict[str, Any]] = []
        self.lists = 0
        self.page = {"metadata": {"resourceVersion": page_rv}, "items": page or []}

    async def watch(self, ref: Any, namespace: str | None = None, **kw: Any) -> AsyncIterator[dict[str, Any]]:
        self.watch_calls.append(kw)
        script = self.watches.pop(0) if self.watches else []
        if isinstance(script, Exception):
            raise script
        for event in script:
            yield event
        await asyncio.Event().wait()

    async def list_pages(self, ref: Any, namespace: str | None = None, **kw: Any) -> AsyncIterator[dict[str, Any]]:
        self.lists += 1
        yield self.page


def watcher(client: ScriptedClient, **options: Any) -> Watcher:
    w = Watcher(client, WIDGETS, WatchOptions(namespace="ns", **options))  # type: ignore[arg-type]
    w.backoff = Backoff(initial=0.001)
    return w


async def take(w: Watcher, n: int) -> list[Any]:
    stream = w.__aiter__()
    return [await asyncio.wait_for(anext(stream), 5) for _ in range(n)]


async def test_a_streaming_list_is_one_relisted_then_changes() -> None:
    client = ScriptedClient([{"type": "ADDED", "object": widget("a", "7")},
                             {"type": "ADDED", "object": widget("b", "3")},
                             bookmark("10", end=True),
                             {"type": "MODIFIED", "object": widget("a", "11")}])
    w = watcher(client, transform=lambda o: {**o, "seen": True})
    listed, changed = await take(w, 2)
    assert isinstance(listed, Relisted) and listed.resource_version == "10"
    assert [(o["metadata"]["name"], o["seen"]) for o in listed.items] == [("a", True), ("b", True)]
    assert isinstance(changed, Changed) and changed.type == "MODIFIED" and changed.object["seen"]
    assert w.resource_version == "11" and w.relists == 1 and client.lists == 0
    assert client.watch_calls[0]["send_initial_events"] is True
    assert client.watch_calls[0]["resource_version"] is None


async def test_a_streaming_list_cut_short_starts_again_and_keeps_no_resource_version() -> None:
    client = ScriptedClient([{"type": "ADDED", "object": widget("a", "7")},
                             {"type": "ERROR", "object": {"code": 500, "reason": "InternalError"}}],
                            [{"type": "ADDED", "object": widget("a", "7")}, bookmark("12", end=True)])
    w = watcher(client)
    (listed,) = await take(w, 1)
    assert isinstance(listed, Relisted) and listed.resource_version == "12" and len(listed.items) == 1
    assert [c["send_initial_events"] for c in client.watch_calls] == [True, True]
    assert [c["resource_version"] for c in client.watch_calls] == [None, None]


async def test_a_server_that_refuses_streaming_lists_is_listed_page_by_page() -> None:
    refusal = Invalid(422, "Invalid", "sendInitialEvents is forbidden unless the WatchList feature is enabled")
    client = ScriptedClient(refusal, [{"type": "ADDED", "object": widget("c", "51")}],
                            page=[widget("a", "7")], page_rv="50")
    w = watcher(client)
    listed, changed = await take(w, 2)
    assert isinstance(listed, Relisted) and listed.resource_version == "50" and client.lists == 1
    assert isinstance(changed, Changed) and changed.object["metadata"]["name"] == "c"
    assert client.watch_calls[1]["send_initial_events"] is False
    assert client.watch_calls[1]["resource_version"] == "50"
    assert not w.streaming and w.last_error is None


async def test_a_server_that_ignores_streaming_lists_is_listed_page_by_page() -> None:
    # Older than 1.27: the parameter is ignored, the existing objects come as ADDED, and the first
    # bookmark carries no end marker. Taking that for the end would miss deletions; list instead.
    client = ScriptedClient([{"type": "ADDED", "object": widget("a", "7")}, bookmark("40", end=False)],
                            page=[widget("a", "7")], page_rv="50")
    w = watcher(client)
    (listed,) = await take(w, 1)
    assert isinstance(listed, Relisted) and listed.resource_version == "50" and client.lists == 1
    assert not w.streaming


async def test_streaming_lists_can_be_turned_off() -> None:
    client = ScriptedClient([], page=[widget("a", "7")], page_rv="50")
    w = watcher(client, streaming_list=False)
    (listed,) = await take(w, 1)
    assert isinstance(listed, Relisted) and client.lists == 1


async def test_a_watch_cache_still_filling_is_not_a_warning(caplog: Any) -> None:
    # Right after a CRD is installed the API server answers its watches 429 "storage is
    # (re)initializing" for a moment: the demo printed that as a warning a user would worry about.
    from kubeloop.client.errors import TooManyRequests

    client = ScriptedClient(TooManyRequests(429, "TooManyRequests", "storage is (re)initializing"),
                            [bookmark("60", True)], page=[widget("a", "40")])
    with caplog.at_level("INFO", logger="kubeloop.watch"):
        await take(watcher(client), 1)
    failed = [r for r in caplog.records if "watch failed" in r.getMessage()]
    assert failed and all(r.levelname == "INFO" for r in failed)
