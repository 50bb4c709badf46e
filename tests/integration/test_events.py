"""Events (events.k8s.io/v1): created with Kubernetes' fields, repeats aggregated into a series."""

from __future__ import annotations

from kubeloop.client import Client
from kubeloop.helpers.events import EventRecorder


async def test_repeated_event_becomes_a_series(kube_client: Client, namespace: str) -> None:
    cm = await kube_client.create({"apiVersion": "v1", "kind": "ConfigMap",
                                   "metadata": {"name": "subject", "namespace": namespace}})
    recorder = EventRecorder(kube_client, "kubeloop-test", "instance-1")
    for _ in range(3):
        await recorder.warning(cm, "FailedCreate", "pod name taken")
    await recorder.normal(cm, "SuccessfulCreate", "created pod x")
    events = (await kube_client.list("events.events.k8s.io", namespace))["items"]
    mine = [e for e in events if e["regarding"]["name"] == "subject"]
    by_reason = {e["reason"]: e for e in mine}
    assert len(mine) == 2, mine
    warning = by_reason["FailedCreate"]
    assert warning["type"] == "Warning" and warning["reportingController"] == "kubeloop-test"
    assert warning["regarding"]["uid"] == cm["metadata"]["uid"]
    assert warning["series"]["count"] == 3
    assert "series" not in by_reason["SuccessfulCreate"]
    # kubectl's core/v1 view shows the same events
    core = (await kube_client.list("events", namespace))["items"]
    assert any(e["reason"] == "FailedCreate" and e["involvedObject"]["name"] == "subject" for e in core)


async def test_events_recorded_in_the_background_reach_the_api_server_aggregated(kube_client: Client,
                                                                                namespace: str) -> None:
    """What ``ctx.event`` does: queued, sent by the recorder's background task; repeats still aggregate."""
    cm = await kube_client.create({"apiVersion": "v1", "kind": "ConfigMap",
                                   "metadata": {"name": "queued", "namespace": namespace}})
    recorder = EventRecorder(kube_client, "kubeloop-test", "instance-1")
    for _ in range(3):
        recorder.record(cm, "Warning", "FailedCreate", "pod name taken")
    recorder.record(cm, "Normal", "SuccessfulCreate", "created pod x")
    await recorder.flush()
    events = (await kube_client.list("events.events.k8s.io", namespace))["items"]
    mine = {e["reason"]: e for e in events if e["regarding"]["name"] == "queued"}
    assert set(mine) == {"FailedCreate", "SuccessfulCreate"}
    assert mine["FailedCreate"]["series"]["count"] == 3 and "series" not in mine["SuccessfulCreate"]
