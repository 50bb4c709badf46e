"""The Kopf migration page's converted operator (docs/howto/kopf/greeting_kubeloop.py) does what its
Kopf original does, and what the page says Kopf's does not: a child deleted by hand comes back. And the
ports of Kopf's own examples (docs/howto/kopf/examples_kubeloop.py), one operator each, do what Kopf
documents for the original or what the page says kubeloop does instead."""

from __future__ import annotations

import ast
import asyncio
import importlib.util
import logging
import sys
from pathlib import Path
from typing import Any

import pytest

from kubeloop.client import Client
from kubeloop.reconcile import logs
from kubeloop.resources.builtin import EVENT, POD
from kubeloop.testing import wait_for, wait_for_deletion
from kubeloop.testing.operator import run_operator
from kubeloop.testing.podsecurity import relax, restricted

from .polling import eventually

HOWTO = Path(__file__).resolve().parents[2] / "docs" / "howto" / "kopf"


def _load(path: Path) -> Any:
    spec = importlib.util.spec_from_file_location(f"docs_howto_{path.stem}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def ready(obj: dict[str, Any]) -> bool:
    conditions = (obj.get("status") or {}).get("conditions") or []
    return any(c["type"] == "Ready" and c["status"] == "True"
               and c.get("observedGeneration") == obj["metadata"]["generation"] for c in conditions)


def test_kopf_original_is_valid_python() -> None:
    ast.parse((HOWTO / "greeting_kopf.py").read_text())


async def test_converted_operator(kube_cluster: Any, kube_client: Client, namespace: str) -> None:
    module = _load(HOWTO / "greeting_kubeloop.py")
    resource = module.Greeting.resource()
    greeting = {"apiVersion": "kopf-migration.kubeloop.dev/v1", "kind": "Greeting",
                "metadata": {"name": "hello", "namespace": namespace}, "spec": {"message": "hi"}}
    async with run_operator(kube_cluster, kube_client, module.operator, namespace) as running:
        await kube_client.create(greeting)
        child = await wait_for(kube_client, "configmaps", "hello-greeting", namespace, timeout=30)
        assert child["data"] == {"message": "hi"}
        obj = await wait_for(kube_client, resource, "hello", namespace, ready, timeout=30)
        assert obj["status"]["configMap"] == "hello-greeting"

        await kube_client.patch(resource, "hello", {"spec": {"message": "bye"}}, namespace)
        await wait_for(kube_client, "configmaps", "hello-greeting", namespace,
                       lambda o: o["data"] == {"message": "bye"}, timeout=30)
        await wait_for(kube_client, resource, "hello", namespace, ready, timeout=30)

        first = await kube_client.get("configmaps", "hello-greeting", namespace)
        await kube_client.delete("configmaps", "hello-greeting", namespace)
        await wait_for(kube_client, "configmaps", "hello-greeting", namespace,
                       lambda o: o["metadata"]["uid"] != first["metadata"]["uid"] and o["data"] == {"message": "bye"},
                       timeout=30, description="the deleted ConfigMap to be recreated")

        await kube_client.delete(resource, "hello", namespace)
        await wait_for_deletion(kube_client, resource, "hello", namespace, timeout=30)
    report = running.audit()
    assert report.ok, report.message


# --- ports of Kopf's examples/ ------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def kex() -> Any:
    return _load(HOWTO / "examples_kubeloop.py")


def kex_body(namespace: str, name: str = "kex", **extra: Any) -> dict[str, Any]:
    body = {"apiVersion": "kopf.dev/v1", "kind": "KopfExample", "metadata": {"name": name, "namespace": namespace},
            "spec": {"field": "value", "duration": 1}}
    for key, value in extra.items():
        body.setdefault(key, {}).update(value) if isinstance(value, dict) else body.__setitem__(key, value)
    return body


async def events_of(client: Client, namespace: str, name: str) -> list[dict[str, Any]]:
    listed = await client.list(EVENT, namespace)
    return [e for e in listed["items"] if (e.get("regarding") or {}).get("name") == name]


def stalled(obj: dict[str, Any]) -> bool:
    conditions = (obj.get("status") or {}).get("conditions") or []
    return any(c["type"] == "Stalled" and c["status"] == "True" and c["reason"] == "ReconcileFailed"
               for c in conditions)


async def test_01_minimal_status_is_written(kex: Any, kube_cluster: Any, kube_client: Client, namespace: str) -> None:
    async with run_operator(kube_cluster, kube_client, kex.minimal, namespace) as running:
        await kube_client.create(kex_body(namespace))
        await wait_for(kube_client, kex.KEX.resource(), "kex", namespace,
                       lambda o: (o.get("status") or {}).get("message") == "hello world", timeout=30)
    assert running.audit().ok, running.audit().message


async def test_02_children_the_pod_is_adopted(kex: Any, kube_cluster: Any, kube_client: Client,
                                              namespace: str) -> None:
    # Kopf's example makes a plain pod (no security context), as its users' operators do: the test namespace
    # admits the "baseline" standard for it, as a namespace running such an operator's children would.
    await relax(kube_client, namespace)
    async with run_operator(kube_cluster, kube_client, kex.children, namespace) as running:
        created = await kube_client.create(kex_body(namespace, metadata={"labels": {"app": "demo"}}))
        # OwnerReferencesPermissionEnforcement refuses blockOwnerDeletion until its REST mapper knows a kind
        # whose CRD was just installed ("cannot find RESTMapping"); the reconcile retries until it does.
        pod = await wait_for(kube_client, POD, "kex-pod", namespace, timeout=120)
        (ref,) = pod["metadata"]["ownerReferences"]
        assert ref["uid"] == created["metadata"]["uid"] and ref["controller"] is True
        assert pod["metadata"]["labels"] == {"app": "demo"}, "kopf.adopt labels children as their owner"
        env = pod["spec"]["containers"][0]["env"]
        assert env == [{"name": "FIELD", "value": "value"}]
        await wait_for(kube_client, kex.KEX.resource(), "kex", namespace,
                       lambda o: (o.get("status") or {}).get("children") == [pod["metadata"]["uid"]], timeout=30)
    assert running.audit().ok, running.audit().message


async def test_03_retries_3_stops_after_three_attempts(kex: Any, kube_cluster: Any, kube_client: Client,
                                                       namespace: str) -> None:
    """Kopf's retries=3, backoff=1.0: three attempts a second apart, then the handler is given up on
    (Kopf: "has exceeded 3 retries"); kubeloop: a Warning Event and Stalled=True, no further attempt."""
    kex.seen["retries"].clear()
    async with run_operator(kube_cluster, kube_client, kex.retries, namespace) as running:
        await kube_client.create(kex_body(namespace))
        obj = await wait_for(kube_client, kex.KEX.resource(), "kex", namespace, stalled, timeout=30)
        (cond,) = [c for c in obj["status"]["conditions"] if c["type"] == "Stalled"]
        assert "after 3 failed attempts: An error that is supposed to be recoverable." in cond["message"]

        async def warned() -> bool:
            return any(e["type"] == "Warning" and e["reason"] == "ReconcileFailed"
                       for e in await events_of(kube_client, namespace, "kex"))
        await eventually(warned, "the Warning Event of the give-up")
        await asyncio.sleep(3)  # three more backoff periods: no attempt comes
        assert kex.seen["retries"] == [1, 1, 1]

        await kube_client.patch(kex.KEX.resource(), "kex", {"spec": {"field": "changed"}}, namespace)
        await eventually(lambda: _true(len(kex.seen["retries"]) == 6), "three attempts at the changed object")
        await asyncio.sleep(3)
        assert kex.seen["retries"] == [1, 1, 1, 2, 2, 2], "a change starts a fresh count of three"
    assert running.audit().ok, running.audit().message


async def _true(value: bool) -> bool:
    return value


async def test_03_permanent_error_is_not_retried(kex: Any, kube_cluster: Any, kube_client: Client,
                                                 namespace: str) -> None:
    kex.seen["permanent"].clear()
    async with run_operator(kube_cluster, kube_client, kex.permanent, namespace) as running:
        await kube_client.create(kex_body(namespace))
        obj = await wait_for(kube_client, kex.KEX.resource(), "kex", namespace, stalled, timeout=30)
        assert "Fail once and for all." in obj["status"]["conditions"][0]["message"]
        await asyncio.sleep(2)
        assert kex.seen["permanent"] == [1]
    assert running.audit().ok, running.audit().message


async def test_03_temporary_errors_retry_until_success(kex: Any, kube_cluster: Any, kube_client: Client,
                                                       namespace: str) -> None:
    kex.seen["temporary"].clear()
    async with run_operator(kube_cluster, kube_client, kex.temporary, namespace) as running:
        await kube_client.create(kex_body(namespace))
        obj = await wait_for(kube_client, kex.KEX.resource(), "kex", namespace,
                             lambda o: (o.get("status") or {}).get("message") == "succeeded at retry 3", timeout=30)
        assert kex.seen["temporary"][:4] == [0, 1, 2, 3] and not stalled(obj)
    assert running.audit().ok, running.audit().message


async def test_04_events_conventional_types_recorded_custom_refused(kex: Any, kube_cluster: Any,
                                                                    kube_client: Client, namespace: str) -> None:
    kex.seen["events"].clear()
    async with run_operator(kube_cluster, kube_client, kex.events, namespace) as running:
        await kube_client.create(kex_body(namespace))

        async def three() -> bool:
            return len(await events_of(kube_client, namespace, "kex")) >= 3
        await eventually(three, "the Normal and Warning events")
        recorded = {(e["type"], e["reason"], e["note"]) for e in await events_of(kube_client, namespace, "kex")}
        assert recorded == {("Normal", "SomeReason", "Some message"), ("Warning", "SomeReason", "Some message"),
                            ("Warning", "SomeReason", "Some exception: Exception text.")}
        assert "'SomeType'" in kex.seen["events"][0] and "'Normal' or 'Warning' only" in kex.seen["events"][0]
    assert running.audit().ok, running.audit().message


async def test_05_handlers_create_field_update_delete(kex: Any, kube_cluster: Any, kube_client: Client,
                                                      namespace: str) -> None:
    log = kex.seen["handlers"]
    log.clear()
    resource = kex.KEX.resource()
    async with run_operator(kube_cluster, kube_client, kex.handlers, namespace) as running:
        await kube_client.create(kex_body(namespace))
        await eventually(lambda: _true(len(log) >= 3), "the creation handlers")
        assert log == ["CREATED 1st", "CREATED 2nd", "FIELD CHANGED: None -> value"], "on.field gets the creation"
        await kube_client.patch(resource, "kex", {"spec": {"field": "changed"}}, namespace)
        await eventually(lambda: _true(len(log) >= 5), "the update handlers")
        assert log[3:] == ["UPDATED", "FIELD CHANGED: value -> changed"]
        await kube_client.delete(resource, "kex", namespace)
        await wait_for_deletion(kube_client, resource, "kex", namespace, timeout=30)
        assert log[5:] == ["DELETED 1st", "DELETED 2nd"]
    assert running.audit().ok, running.audit().message


def test_05_on_resume_is_refused_naming_reconcile(kex: Any) -> None:
    with pytest.raises(AttributeError, match="for Kopf's @kopf.on.resume, every object is reconciled"):
        kex.handlers.on_resume(kex.KEX)


async def test_08_predicates_see_every_event_despite_one_raising(kex: Any, kube_cluster: Any, kube_client: Client,
                                                                 namespace: str) -> None:
    log = kex.seen["watch_events"]
    log.clear()
    resource = kex.KEX.resource()
    async with run_operator(kube_cluster, kube_client, kex.watch_events, namespace) as running:
        await kube_client.create(kex_body(namespace))
        await eventually(lambda: _true(("added", "kex") in log), "the added event")
        await kube_client.patch(resource, "kex", {"spec": {"field": "changed"}}, namespace)
        await eventually(lambda: _true(("modified", "kex") in log), "the modified event")
        await kube_client.delete(resource, "kex", namespace)
        await eventually(lambda: _true(("deleted", "kex") in log), "the deleted event")
    assert running.audit().ok, running.audit().message


async def test_11_filters_kubeloops_way_and_kopfs_refused(kex: Any, kube_cluster: Any, kube_client: Client,
                                                          namespace: str) -> None:
    with pytest.raises(TypeError, match="labels=.* is Kopf's filter; kubeloop's cause handlers take no filters"):
        kex.filtering.on_create(kex.KEX, labels={"somelabel": "somevalue"})
    log = kex.seen["filtering"]
    log.clear()
    matching = {"labels": {"somelabel": "somevalue"}, "annotations": {"someannotation": "somevalue"}}
    async with run_operator(kube_cluster, kube_client, kex.filtering, namespace) as running:
        await kube_client.create(kex_body(namespace, "no-label", metadata={"annotations": matching["annotations"]}))
        await kube_client.create(kex_body(namespace, "no-annotation", metadata={"labels": matching["labels"]}))
        await kube_client.create(kex_body(namespace, "other-field", metadata=matching, spec={"field": "other"}))
        await kube_client.create(kex_body(namespace, "matching", metadata=matching))
        await eventually(lambda: _true("matching" in log), "the matching object's reconcile")
        await asyncio.sleep(1)
        assert set(log) == {"matching"}
    assert running.audit().ok, running.audit().message


async def test_13_startup_runs_before_reconciles(kex: Any, kube_cluster: Any, kube_client: Client,
                                                 namespace: str, caplog: Any) -> None:
    log = kex.seen["hooks"]
    log.clear()
    for name in ("on_cleanup", "on_login", "on_probe"):
        with pytest.raises(AttributeError, match=f"for Kopf's @kopf.{name.replace('_', '.')}"):
            getattr(kex.hooks, name)
    caplog.handler.addFilter(logs.ReconcileFilter())  # what kubeloop run's log handler has
    with caplog.at_level(logging.INFO, logger="kubeloop.controller"):
        async with run_operator(kube_cluster, kube_client, kex.hooks, namespace) as running:
            await kube_client.create(kex_body(namespace))
            await eventually(lambda: _true("reconciled kex" in log), "the reconcile")
    assert log[0] == "startup"
    line = next(r for r in caplog.records if r.getMessage() == "reconciling under the lock")
    assert line.reconcile["object"] == f"{namespace}/kex", "ctx.log lines carry the object (Kopf's logger)"
    assert running.audit().ok, running.audit().message


async def test_14_daemon_runs_per_object_and_is_cancelled_on_deletion(kex: Any, kube_cluster: Any,
                                                                      kube_client: Client, namespace: str) -> None:
    log = kex.seen["daemons"]
    log.clear()
    resource = kex.KEX.resource()
    async with run_operator(kube_cluster, kube_client, kex.daemons, namespace) as running:
        await kube_client.create(kex_body(namespace))
        await eventually(lambda: _true(len(log) >= 2), "two pings")
        assert log[0] == "=> Ping from an async daemon: field='value'"
        await kube_client.delete(resource, "kex", namespace)
        await wait_for_deletion(kube_client, resource, "kex", namespace, timeout=30)
        await eventually(lambda: _true("cancelled" in log), "the daemon's cancellation")
    assert running.audit().ok, running.audit().message


async def test_15_timer_runs_every_interval(kex: Any, kube_cluster: Any, kube_client: Client, namespace: str) -> None:
    log = kex.seen["timers"]
    log.clear()
    with pytest.raises(TypeError, match="idle=5 is Kopf's timer option; kubeloop's timers have no idle"):
        kex.timers.timer(kex.KEX, interval=2, idle=5)
    async with run_operator(kube_cluster, kube_client, kex.timers, namespace) as running:
        await kube_client.create(kex_body(namespace))
        await eventually(lambda: _true(len(log) >= 3), "three ticks")
        assert set(log) == {"Ping from an async timer: field='value'"}
    assert running.audit().ok, running.audit().message


async def test_16_the_cache_is_the_index(kex: Any, kube_cluster: Any, kube_client: Client, namespace: str) -> None:
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p1", "labels": {"kex": "kex"}},
           "spec": restricted({"containers": [{"name": "c", "image": "busybox"}]})}
    resource = kex.KEX.resource()
    async with run_operator(kube_cluster, kube_client, kex.indexing, namespace) as running:
        await kube_client.create(kex_body(namespace))
        await kube_client.create(pod, namespace)
        await wait_for(kube_client, resource, "kex", namespace,
                       lambda o: (o.get("status") or {}).get("pods") == ["p1"], timeout=30)
        await kube_client.create({**pod, "metadata": {"name": "p2", "labels": {"kex": "kex"}}}, namespace)
        await wait_for(kube_client, resource, "kex", namespace,
                       lambda o: (o.get("status") or {}).get("pods") == ["p1", "p2"], timeout=30,
                       description="a new labelled Pod to reach the status through the cache")
    assert running.audit().ok, running.audit().message
