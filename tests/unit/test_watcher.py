"""The watcher's initial list: a streaming list where the server offers one, pages where it does not.
(Against the real API server: tests/integration/test_runtime.py.)"""

from __future__ import annotations

import asyncio
from typing import Any

from kubeloop.client import Resource
from kubeloop.client.errors import Invalid, ServerError, TooManyRequests
from kubeloop.testing.fakeclient import FakeClient
from kubeloop.watch.backoff import Backoff
from kubeloop.watch.watcher import Changed, Relisted, Watcher, WatchOptions

WIDGETS = Resource("bench.example.com", "v1", "widgets", "Widget")


def widget(name: str) -> dict[str, Any]:
    return {"apiVersion": "bench.example.com/v1", "kind": "Widget", "metadata": {"name": name, "namespace": "ns"}}


def cluster(*names: str, watch_list: bool = True) -> FakeClient:
    return FakeClient(*(widget(n) for n in names), resources=(WIDGETS,), watch_list=watch_list)


def watcher(client: FakeClient, **options: Any) -> Watcher:
    w = Watcher(client, WIDGETS, WatchOptions(namespace="ns", **options))
    w.backoff = Backoff(initial=0.001)
    return w


def watches(client: FakeClient) -> list[dict[str, Any]]:
    return [c.options for c in client.calls if c.verb == "watch"]


async def take(w: Watcher, n: int) -> list[Any]:
    stream = w.__aiter__()
    return [await asyncio.wait_for(anext(stream), 5) for _ in range(n)]


async def test_a_streaming_list_is_one_relisted_then_changes() -> None:
    client = cluster("a", "b")
    w = watcher(client, transform=lambda o: {**o, "seen": True})
    stream = w.__aiter__()
    listed = await asyncio.wait_for(anext(stream), 5)
    assert isinstance(listed, Relisted) and listed.resource_version == "2"
    assert sorted((o["metadata"]["name"], o["seen"]) for o in listed.items) == [("a", True), ("b", True)]
    await client.patch(WIDGETS, "a", {"spec": {"x": 1}}, "ns")
    changed = await asyncio.wait_for(anext(stream), 5)
    assert isinstance(changed, Changed) and changed.type == "MODIFIED" and changed.object["seen"]
    assert w.resource_version == "3" and w.relists == 1 and client.verbs().count("list") == 0
    assert watches(client)[0]["send_initial_events"] is True and watches(client)[0]["resource_version"] is None


async def test_a_streaming_list_cut_short_starts_again_and_keeps_no_resource_version() -> None:
    client = cluster("a", "b")
    client.fail("watch", ServerError(500, "InternalError", "stream reset"), after=1)  # after the first ADDED
    (listed,) = await take(watcher(client), 1)
    assert isinstance(listed, Relisted) and listed.resource_version == "2" and len(listed.items) == 2
    assert [(c["send_initial_events"], c["resource_version"]) for c in watches(client)] == [(True, None)] * 2


async def test_a_server_that_refuses_streaming_lists_is_listed_page_by_page() -> None:
    client = cluster("a")
    client.fail("watch", Invalid(422, "Invalid", "sendInitialEvents is forbidden unless the WatchList feature "
                                                 "is enabled"))
    w = watcher(client)
    stream = w.__aiter__()
    listed = await asyncio.wait_for(anext(stream), 5)
    assert isinstance(listed, Relisted) and listed.resource_version == "1" and client.verbs().count("list") == 1
    await client.create(widget("c"))
    changed = await asyncio.wait_for(anext(stream), 5)
    assert isinstance(changed, Changed) and changed.object["metadata"]["name"] == "c"
    assert watches(client)[1]["send_initial_events"] is False and watches(client)[1]["resource_version"] == "1"
    assert not w.streaming and w.last_error is None


async def test_a_server_that_ignores_streaming_lists_is_listed_page_by_page() -> None:
    # Older than 1.27: the parameter is ignored, the existing objects come as ADDED, and the first
    # bookmark carries no end marker. Taking that for the end would miss deletions; list instead.
    client = cluster("a", watch_list=False)
    w = watcher(client)
    stream = w.__aiter__()
    listing = asyncio.ensure_future(anext(stream))
    while not client.verbs():  # the watch is open (and got the ADDED event) once it is recorded
        await asyncio.sleep(0.001)
    client.bookmark(WIDGETS)
    listed = await asyncio.wait_for(listing, 5)
    assert isinstance(listed, Relisted) and listed.resource_version == "1" and client.verbs().count("list") == 1
    assert not w.streaming


async def test_streaming_lists_can_be_turned_off() -> None:
    client = cluster("a")
    (listed,) = await take(watcher(client, streaming_list=False), 1)
    assert isinstance(listed, Relisted) and client.verbs() == ["list"]


async def test_a_watch_cache_still_filling_is_not_a_warning(caplog: Any) -> None:
    # Right after a CRD is installed the API server answers its watches 429 "storage is
    # (re)initializing" for a moment: the demo printed that as a warning a user would worry about.
    client = cluster("a")
    client.fail("watch", TooManyRequests(429, "TooManyRequests", "storage is (re)initializing"))
    with caplog.at_level("INFO", logger="kubeloop.watch"):
        await take(watcher(client), 1)
    failed = [r for r in caplog.records if "watch failed" in r.getMessage()]
    assert failed and all(r.levelname == "INFO" for r in failed)
