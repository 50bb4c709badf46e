"""``EventRecorder.record``: a reconcile's Events are queued and sent by one background task, in order,
as client-go's recorder does; the reconcile never waits on their round trip. ``emit`` still sends before
it returns (tests/integration/test_events.py checks aggregation on the real API server)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from kubeloop.helpers import events as events_module
from kubeloop.helpers.events import EventRecorder
from kubeloop.resources.builtin import EVENT
from kubeloop.testing.fakeclient import FakeClient


def cm(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "ns", "uid": f"u-{name}"}}


class SlowClient(FakeClient):
    """Each write waits until the test lets it through: a busy API server."""

    def __init__(self) -> None:
        super().__init__()
        self.gate = asyncio.Event()

    async def create(self, body: dict[str, Any], *args: Any, **kw: Any) -> dict[str, Any]:
        await self.gate.wait()
        return await super().create(body, *args, **kw)


async def test_record_returns_before_the_event_is_sent_and_the_sender_keeps_their_order() -> None:
    client = SlowClient()
    recorder = EventRecorder(client, "test")
    subject = cm("a")
    for i in range(3):
        recorder.record(subject, "Normal", f"Step{i}", f"step {i}")
    subject["metadata"]["name"] = "renamed"  # changed after queueing: the Event is about what was recorded
    await asyncio.sleep(0.01)
    assert client.objects(EVENT) == [], "nothing sent while the API server has not answered"
    client.gate.set()
    await recorder.flush()
    sent = client.objects(EVENT)
    assert [e["reason"] for e in sent] == ["Step0", "Step1", "Step2"]
    assert {e["regarding"]["name"] for e in sent} == {"a"}


async def test_repeats_recorded_in_the_background_still_aggregate_into_a_series() -> None:
    client = FakeClient()
    recorder = EventRecorder(client, "test")
    for _ in range(3):
        recorder.record(cm("a"), "Warning", "Failed", "the same")
    await recorder.flush()
    (event,) = client.objects(EVENT)
    assert event["series"]["count"] == 3


async def test_a_bad_type_is_refused_at_the_call_not_in_the_background() -> None:
    recorder = EventRecorder(FakeClient(), "test")
    with pytest.raises(ValueError, match="'Normal' or 'Warning'"):
        recorder.record(cm("a"), "Info", "Reason", "note")


async def test_a_full_queue_drops_new_events_and_close_drops_what_cannot_be_sent(monkeypatch, caplog) -> None:
    monkeypatch.setattr(events_module, "QUEUE_LIMIT", 3)
    client = SlowClient()
    recorder = EventRecorder(client, "test")
    for i in range(5):
        recorder.record(cm(f"o{i}"), "Normal", "Made", "made")
    assert "dropped 1 events" in caplog.text
    await recorder.close(timeout=0.05)  # the API server never answers
    assert "not sent within" in caplog.text
    client.gate.set()
    await asyncio.sleep(0.01)
    assert client.objects(EVENT) == [], "the sender was stopped with the queue"
    recorder.record(cm("later"), "Normal", "Made", "made")  # a new sender after close
    await recorder.flush()
    assert [e["regarding"]["name"] for e in client.objects(EVENT)] == ["later"]


async def test_a_write_that_raises_loses_that_event_only() -> None:
    class Flaky(FakeClient):
        calls = 0

        async def create(self, body: dict[str, Any], *args: Any, **kw: Any) -> dict[str, Any]:
            Flaky.calls += 1
            if Flaky.calls == 1:
                raise ConnectionResetError("lost")
            return await super().create(body, *args, **kw)

    client = Flaky()
    recorder = EventRecorder(client, "test")
    recorder.record(cm("a"), "Normal", "First", "lost")
    recorder.record(cm("b"), "Normal", "Second", "sent")
    await recorder.flush()
    assert [e["reason"] for e in client.objects(EVENT)] == ["Second"]


async def test_the_queue_is_fair_across_namespaces_and_one_namespace_cannot_fill_it() -> None:
    """A tenant whose objects make the operator record 150 Events: 100 wait (its line's limit), the rest
    are dropped; another tenant's one Event still waits, and is sent second, not after the 100."""
    client = SlowClient()
    recorder = EventRecorder(client, "test")

    def about(ns: str, name: str) -> dict[str, Any]:
        return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": ns, "uid": name}}

    for i in range(150):
        recorder.record(about("noisy", f"n{i}"), "Normal", "Made", f"made {i}")
    recorder.record(about("quiet", "q"), "Normal", "Made", "made")
    client.gate.set()
    await recorder.flush()
    sent = [e["regarding"]["namespace"] for e in client.objects(EVENT)]
    assert sent.count("noisy") == events_module.NAMESPACE_LIMIT
    assert sent.index("quiet") <= 1, sent[:5]


async def test_the_test_kit_waits_for_events_sent_in_the_background() -> None:
    """``kubeloop.testing.wait_for_events``: what a test uses instead of reading Events right away."""
    from kubeloop.client.wait import WaitTimeout
    from kubeloop.testing import wait_for_events

    client = SlowClient()
    recorder = EventRecorder(client, "test")
    for _ in range(2):
        recorder.record(cm("a"), "Warning", "Failed", "the same")
    asyncio.get_running_loop().call_later(0.3, client.gate.set)
    found = await wait_for_events(client, "ns", "a", "Failed", count=2, timeout=5)
    assert [e["series"]["count"] for e in found] == [2]
    with pytest.raises(WaitTimeout, match=r"3 Event\(s\) Failed on ns/a .* there are 2"):
        await wait_for_events(client, "ns", "a", "Failed", count=3, timeout=0.3)
    await recorder.flush()
