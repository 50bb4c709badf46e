"""The informer over a real Watcher and the in-memory FakeClient: first sync, changes, a 410 Gone and the
relist that follows (what vanished meanwhile is deleted, indexes follow), bookmarks, namespaces.
(Against the real API server: tests/integration/test_runtime.py.)"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from kubeloop.cache import Event, Informer
from kubeloop.cache.informer import InformerKey
from kubeloop.client import Gone
from kubeloop.resources.builtin import CONFIG_MAP
from kubeloop.testing.fakeclient import FakeClient
from kubeloop.watch.backoff import Backoff


def cm(name: str, ns: str = "ns", app: str = "one", **data: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "data": data,
            "metadata": {"name": name, "namespace": ns, "labels": {"app": app}}}


def by_app(obj: dict[str, Any]) -> list[str]:
    return [obj["metadata"].get("labels", {}).get("app", "")]


async def until(condition: Callable[[], bool], what: str, timeout: float = 5.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not condition():
        assert asyncio.get_running_loop().time() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.002)


class Recorder:
    """Subscribes to an informer and keeps (type, key, initial) of every event."""

    def __init__(self) -> None:
        self.events: list[Event] = []

    def __call__(self, event: Event) -> None:
        self.events.append(event)

    def seen(self) -> list[tuple[str, str, bool]]:
        return [(e.type, f"{e.object['metadata']['namespace']}/{e.object['metadata']['name']}", e.initial)
                for e in self.events]

    def take(self) -> list[tuple[str, str, bool]]:
        seen, self.events = self.seen(), []
        return seen


@pytest.fixture
async def running() -> AsyncIterator[Callable[..., Any]]:
    """Starts informers on a FakeClient with a near-zero reconnect backoff; stops them after the test."""
    started: list[Informer] = []

    async def start(client: FakeClient, namespaces: tuple[str, ...] | None = ("ns",)) -> tuple[Informer, Recorder]:
        informer = Informer(client, InformerKey(CONFIG_MAP, namespaces), indexes={"app": by_app})
        for watcher in informer.watchers:
            watcher.backoff = Backoff(initial=0.001, jitter=0)
        recorder = Recorder()
        informer.subscribe(recorder)
        started.append(informer)
        informer.start()
        await informer.wait_synced(5)
        return informer, recorder

    yield start
    for informer in started:
        await informer.stop()


async def test_first_sync_fills_the_store_and_marks_its_events_initial(running: Any) -> None:
    client = FakeClient(cm("a"), cm("b", app="two"), cm("x", ns="elsewhere"))
    informer, recorder = await running(client)
    assert sorted(informer.store.keys()) == ["ns/a", "ns/b"]
    assert sorted(recorder.take()) == [("added", "ns/a", True), ("added", "ns/b", True)]
    await client.patch(CONFIG_MAP, "a", {"data": {"k": "2"}}, "ns")
    await until(lambda: bool(recorder.events), "the MODIFIED event")
    (modified,) = recorder.events
    assert modified.type == "modified" and not modified.initial
    assert modified.old is not None and modified.old["data"] == {} and modified.object["data"] == {"k": "2"}


@pytest.mark.parametrize("how", ["in-stream ERROR 410", "HTTP 410 on reconnect"])
async def test_after_410_the_relist_replaces_the_store_and_emits_what_changed_meanwhile(
        running: Any, how: str) -> None:
    client = FakeClient(cm("same"), cm("gone"), cm("changed"), cm("moved", app="one"))
    informer, recorder = await running(client)
    assert len(informer.store.by_index("app", "one")) == 4
    recorder.take()
    # The connection drops; while the informer is away, objects change and etcd compacts its history.
    client.close_watches()
    await client.delete(CONFIG_MAP, "gone", "ns")
    await client.patch(CONFIG_MAP, "changed", {"data": {"k": "new"}}, "ns")
    await client.patch(CONFIG_MAP, "moved", {"metadata": {"labels": {"app": "two"}}}, "ns")
    await client.create(cm("new"))
    if how.startswith("HTTP"):
        client.fail("watch", Gone(410, "Expired", "too old resource version"))
    else:
        client.compact()
    await until(lambda: len(recorder.events) >= 4, "the relist's events")
    assert sorted(recorder.take()) == [("added", "ns/new", False), ("deleted", "ns/gone", False),
                                       ("modified", "ns/changed", False), ("modified", "ns/moved", False)]
    assert informer.watchers[0].relists == 2
    assert sorted(informer.store.keys()) == ["ns/changed", "ns/moved", "ns/new", "ns/same"]
    assert sorted(o["metadata"]["name"] for o in informer.store.by_index("app", "one")) == [
        "changed", "new", "same"]
    assert [o["metadata"]["name"] for o in informer.store.by_index("app", "two")] == ["moved"]
    assert sorted(informer.store.index_keys("namespace", "ns")) == sorted(informer.store.keys())
    # ... and the informer watches on from the relist: later changes arrive as before.
    await client.delete(CONFIG_MAP, "same", "ns")
    await until(lambda: bool(recorder.events), "a change after the relist")
    assert recorder.take() == [("deleted", "ns/same", False)]


async def test_a_deletion_reports_the_last_known_object(running: Any) -> None:
    client = FakeClient(cm("a", k="1"))
    informer, recorder = await running(client)
    recorder.take()
    client.close_watches()
    await client.delete(CONFIG_MAP, "a", "ns")
    client.compact()
    await until(lambda: bool(recorder.events), "the relist's deletion")
    (deleted,) = recorder.events
    assert deleted.type == "deleted" and deleted.object["data"] == {"k": "1"} and deleted.old is deleted.object
    assert informer.store.by_index("app", "one") == []


async def test_bookmarks_keep_a_quiet_watch_resumable_after_compaction(running: Any) -> None:
    client = FakeClient(cm("a"))
    informer, recorder = await running(client)
    watcher = informer.watchers[0]
    recorder.take()
    for i in range(3):  # changes elsewhere move the cluster's resourceVersion past this watch's
        await client.create(cm(f"x{i}", ns="elsewhere"))
    client.bookmark(CONFIG_MAP)
    await until(lambda: watcher.resource_version == str(client.resource_version), "the bookmark")
    client.compact()
    client.close_watches()
    await until(lambda: client.verbs().count("watch") == 2, "the reconnect")
    await client.create(cm("b"))
    await until(lambda: bool(recorder.events), "the next change")
    assert recorder.take() == [("added", "ns/b", False)] and watcher.relists == 1, "resumed, not relisted"
    # Without a bookmark the same compaction costs a relist.
    await client.create(cm("y", ns="elsewhere"))
    client.compact()
    client.close_watches()
    await until(lambda: watcher.relists == 2, "the relist")
    assert recorder.take() == []


async def test_a_relist_of_one_namespace_leaves_the_others_objects_alone(running: Any) -> None:
    client = FakeClient(cm("x", ns="a"), cm("y", ns="a"), cm("z", ns="b"))
    informer, recorder = await running(client, ("a", "b"))
    assert len(informer.watchers) == 2 and sorted(informer.store.keys()) == ["a/x", "a/y", "b/z"]
    recorder.take()
    client.close_watches()
    await client.delete(CONFIG_MAP, "x", "a")
    client.compact()
    await until(lambda: all(w.relists == 2 for w in informer.watchers), "both relists")
    await until(lambda: bool(recorder.events), "the deletion")
    await asyncio.sleep(0.02)
    assert recorder.take() == [("deleted", "a/x", False)]
    assert sorted(informer.store.keys()) == ["a/y", "b/z"]


async def test_late_subscribers_get_the_contents_and_a_broken_handler_stops_no_one(running: Any) -> None:
    client = FakeClient(cm("a"))
    informer, _ = await running(client)

    def broken(event: Event) -> None:
        if not event.initial:
            raise RuntimeError("a bug in a handler")

    late = Recorder()
    informer.subscribe(broken)
    informer.subscribe(late)
    assert late.take() == [("added", "ns/a", True)]
    await client.create(cm("b"))
    await until(lambda: bool(late.events), "the event past the broken handler")
    assert late.take() == [("added", "ns/b", False)]


async def test_reselect_drops_what_left_the_shard_silently_and_relists(running: Any) -> None:
    """A ring change (kubeloop/sharding/serverside.py): objects outside the new ranges leave the store
    without a "deleted" event (they were not deleted); the relist's news are initial (backlog) adds, and a
    real deletion in between is still a "deleted" event."""
    client = FakeClient(cm("a"), cm("b"), cm("c"))
    informer, recorder = await running(client)
    recorder.take()
    relists = informer.watchers[0].relists
    informer.reselect("shardRange(...)", keep=lambda o: o["metadata"]["name"] != "b")
    assert sorted(informer.store.keys()) == ["ns/a", "ns/c"] and recorder.take() == []
    assert informer.watchers[0].options.shard_selector == "shardRange(...)" and informer.synced.is_set()
    await client.delete(CONFIG_MAP, "c", "ns")
    await until(lambda: informer.watchers[0].relists > relists, "the relist")
    await until(lambda: len(recorder.events) >= 2, "the relist's events")
    # The fake ignores shard selectors (like a server without the gate), so "b" comes back with the list.
    assert sorted(recorder.take()) == [("added", "ns/b", True), ("deleted", "ns/c", False)]
    await client.create(cm("d"), "ns")
    await until(lambda: "ns/d" in informer.store, "the watch to resume")
