"""Annotated Jobs are deleted and created again when their ConfigMaps or Secrets change, as stakater/Reloader
does (``ReCreateJobFromjob``, internal/pkg/callbacks/rolling_upgrade.go): the copy is the Job's own spec
without what the API server generated, with the strategy's change and the recorded hash; it is tried as a
dry run before the Job is deleted, and kept until it is created. On the FakeClient (on the fake API server,
with the Job strategy's generated selector and labels: tests/fakeapi/test_op_reloader_fake.py)."""

from __future__ import annotations

import copy
import itertools
from typing import Any

import pytest

from kubeloop.client import Conflict, Forbidden
from kubeloop.client.errors import ServerError
from kubeloop.operators.reloader import build_operator
from kubeloop.operators.reloader.fingerprint import without_data
from kubeloop.operators.reloader.jobs import GENERATED_LABELS, REASON, probe, recreated
from kubeloop.operators.reloader.policy import HASH, SOURCES, TEMPLATE_HASH
from kubeloop.operators.reloader.reconciler import Reloader, Runtime
from kubeloop.operators.reloader.workloads import JOBS
from kubeloop.reconcile import Request
from kubeloop.resources.builtin import JOB

from .test_op_reloader_reconcile import NS, Ctx, cm, runtime

Obj = dict[str, Any]
RELOAD = {"configmap.reloader.stakater.com/reload": "conf"}
UID = "0a1b2c3d-old"


def job(annotations: dict[str, str] | None = None, name: str = "migrate", **meta: Any) -> Obj:
    """A Job as the API server returns it: generated selector and labels, status, server metadata."""
    generated = {"batch.kubernetes.io/controller-uid": UID, "controller-uid": UID,
                 "batch.kubernetes.io/job-name": name, "job-name": name}
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {
        "name": name, "namespace": NS, "uid": UID, "resourceVersion": "41", "generation": 1,
        "creationTimestamp": "2026-01-01T00:00:00Z", "managedFields": [{"manager": "kubectl"}],
        "labels": {"app": "db", **generated}, "annotations": dict(annotations or {}), **meta},
        "spec": {"backoffLimit": 2, "selector": {"matchLabels": {"batch.kubernetes.io/controller-uid": UID}},
                 "template": {"metadata": {"labels": {"app": "db", **generated}}, "spec": {
                     "restartPolicy": "Never",
                     "containers": [{"name": "m", "image": "migrate:1", "envFrom": [{"configMapRef": {
                         "name": "conf"}}]}]}}},
        "status": {"succeeded": 1}}


class JobCtx(Ctx):
    """The reconcile context of the Job ``migrate``; events keep what they were about."""

    def __init__(self) -> None:
        super().__init__()
        self.name = "migrate"
        self.about: list[Obj | None] = []

    async def event(self, type: str, reason: str, note: str, regarding: Obj | None = None) -> None:
        await super().event(type, reason, note)
        self.about.append(regarding)


async def reconcile(rt: Runtime, workload: Obj, ctx: JobCtx, reloader: Reloader | None = None) -> None:
    """One reconcile of ``workload`` as the cache has it (the API server's is ``ctx.client``'s)."""
    ctx.deps = rt
    await (reloader or Reloader(build_operator())).reconcile(JOBS, workload, ctx)  # type: ignore[arg-type]


def stored(ctx: JobCtx) -> Obj | None:
    return ctx.client.stored(JOB, "migrate", NS)


_edits = itertools.count(2)


async def changed(rt: Runtime, annotations: dict[str, str] | None = None) -> tuple[Obj, JobCtx]:
    """The Job seen once (its hash recorded), then its ConfigMap changed: a fresh context holding it."""
    ctx = JobCtx()
    await reconcile(rt, ctx.client.add(job(annotations or RELOAD)), ctx)
    recorded = stored(ctx)
    assert recorded is not None and HASH in recorded["metadata"]["annotations"], "first sight records"
    assert ctx.client.verbs(JOB) == ["patch"], "and does nothing else"
    rt.sources["ConfigMap"].store.upsert(without_data(cm("conf", {"k": str(next(_edits))})))
    fresh = JobCtx()
    return fresh.client.add(recorded, JOB), fresh


# --- the copy ------------------------------------------------------------------------------------------

def test_the_copy_is_the_jobs_own_spec_without_what_the_server_generated() -> None:
    old = job(RELOAD)
    copy_ = recreated(old, {"metadata": {"annotations": {TEMPLATE_HASH: "h"}}}, {HASH: "h"})
    meta = copy_["metadata"]
    assert set(meta) == {"name", "namespace", "labels", "annotations"}
    assert meta["labels"] == {"app": "db"}, "the generated labels held the old Job's uid and name"
    assert meta["annotations"] == {**RELOAD, HASH: "h"}
    assert "status" not in copy_ and "selector" not in copy_["spec"] and copy_["spec"]["backoffLimit"] == 2
    template = copy_["spec"]["template"]
    assert template["metadata"] == {"labels": {"app": "db"}, "annotations": {TEMPLATE_HASH: "h"}}
    assert template["spec"] == old["spec"]["template"]["spec"]
    assert old == job(RELOAD), "the Job itself is not changed"
    # A label of the Job's own that only shares a generated key's name, with another value, stays.
    kept = job(RELOAD)
    kept["metadata"]["labels"]["job-name"] = "the-nightly-one"
    assert recreated(kept, {}, {})["metadata"]["labels"] == {"app": "db", "job-name": "the-nightly-one"}


def test_a_manual_selector_is_kept_with_its_labels() -> None:
    old = job(RELOAD)
    old["spec"].update(manualSelector=True, selector={"matchLabels": {"app": "db"}})
    old["spec"]["template"]["metadata"]["labels"] = {"app": "db"}
    copy_ = recreated(old, {}, {})
    assert copy_["spec"]["selector"] == {"matchLabels": {"app": "db"}} and copy_["spec"]["manualSelector"] is True
    assert copy_["spec"]["template"]["metadata"]["labels"] == {"app": "db"}


def test_the_probe_has_a_generated_name_that_fits() -> None:
    copy_ = recreated(job(RELOAD, name="m" * 63), {}, {})
    probed = probe(copy_)
    assert "name" not in probed["metadata"] and probed["metadata"]["generateName"].endswith("-")
    assert len(probed["metadata"]["generateName"]) + 5 <= 63 and copy_["metadata"]["name"] == "m" * 63
    assert probed["spec"] == copy_["spec"]


# --- one reconcile -----------------------------------------------------------------------------------------

async def test_a_change_deletes_the_job_in_the_background_and_creates_its_copy() -> None:
    rt = runtime([cm("conf", {"k": "1"})], debounce_seconds=0)
    old, ctx = await changed(rt)
    await reconcile(rt, old, ctx)
    probe_call, delete, create = [c for c in ctx.client.calls if c.resource.plural == "jobs"]
    assert (probe_call.verb, probe_call.options["dry_run"], probe_call.name) == ("create", True, None)
    assert delete.verb == "delete" and delete.options == {"uid": UID, "resource_version": "42",
                                                          "propagation_policy": "Background", "dry_run": False}
    assert (create.verb, create.options["dry_run"]) == ("create", False)
    new = stored(ctx)
    assert new is not None and new["metadata"]["uid"] != UID and "status" not in new
    assert new["metadata"]["labels"] == {"app": "db"} and "selector" not in new["spec"]
    new_hash = new["metadata"]["annotations"][HASH]
    assert new_hash != old["metadata"]["annotations"][HASH] and SOURCES in new["metadata"]["annotations"]
    assert new["spec"]["template"]["metadata"]["annotations"] == {TEMPLATE_HASH: new_hash}
    assert GENERATED_LABELS[0] not in new["spec"]["template"]["metadata"]["labels"]
    assert rt.pending_jobs == {}
    ((kind, reason, note),) = ctx.events
    assert (kind, reason) == ("Normal", "Reloaded") and "ConfigMap conf changed" in note and "recreated" in note
    assert ctx.about[0] is not None and ctx.about[0]["metadata"]["uid"] == new["metadata"]["uid"]
    # The copy, reconciled, carries its hash: nothing more to do.
    again = JobCtx()
    again.client.add(new, JOB)
    await reconcile(rt, new, again)
    assert again.client.verbs(JOB) == [] and again.events == []


async def test_env_vars_strategy_puts_reloaders_variable_in_the_copy() -> None:
    rt = runtime([cm("conf", {"k": "1"})], debounce_seconds=0, reload_strategy="env-vars")
    old, ctx = await changed(rt)
    await reconcile(rt, old, ctx)
    new = stored(ctx)
    assert new is not None
    (container,) = new["spec"]["template"]["spec"]["containers"]
    assert [e["name"] for e in container["env"]] == ["STAKATER_CONF_CONFIGMAP"]


async def test_only_annotated_jobs_even_with_auto_reload_all() -> None:
    rt = runtime([cm("conf", {"k": "1"})], debounce_seconds=0, auto_reload_all=True)
    ctx = JobCtx()
    await reconcile(rt, job({}), ctx)
    assert ctx.client.verbs(JOB) == [], "a Job runs once: it is not recreated unless annotated for it"
    ctx = JobCtx()
    await reconcile(rt, ctx.client.add(job({"reloader.stakater.com/auto": "true"})), ctx)
    assert ctx.client.verbs(JOB) == ["patch"]


@pytest.mark.parametrize(("meta", "says"), [
    ({"ownerReferences": [{"apiVersion": "example.com/v1", "kind": "Migration", "name": "m", "uid": "u",
                           "controller": True}]}, "controlled by Migration m"),
    ({"finalizers": ["example.com/keep"]}, "has finalizers (example.com/keep)"),
])
async def test_a_job_it_does_not_recreate_is_told_why_once(meta: Obj, says: str) -> None:
    rt = runtime([cm("conf", {"k": "1"})], debounce_seconds=0)
    ctx = JobCtx()
    for _ in range(2):
        await reconcile(rt, job(RELOAD, **meta), ctx)
    ((kind, reason, note),) = ctx.events
    assert (kind, reason) == ("Warning", REASON) and says in note
    assert ctx.client.verbs(JOB) == [], "not even its hash recorded"


async def test_a_cronjobs_job_and_a_job_being_deleted_are_left_alone_silently() -> None:
    rt = runtime([cm("conf", {"k": "1"})], debounce_seconds=0)
    for meta in ({"ownerReferences": [{"apiVersion": "batch/v1", "kind": "CronJob", "name": "c", "uid": "u",
                                        "controller": True}]},
                 {"deletionTimestamp": "2026-01-01T00:00:01Z", "finalizers": ["foregroundDeletion"]}):
        ctx = JobCtx()
        await reconcile(rt, job(RELOAD, **meta), ctx)
        assert ctx.client.verbs(JOB) == [] and ctx.events == []


async def test_a_copy_the_api_server_refuses_leaves_the_job_as_it_is() -> None:
    rt = runtime([cm("conf", {"k": "1"})], debounce_seconds=0)
    old, ctx = await changed(rt)
    ctx.client.fail("create", Forbidden(403, "Forbidden", "exceeded quota: count/jobs.batch=1"))
    with pytest.raises(Forbidden):
        await reconcile(rt, old, ctx)
    assert ctx.client.verbs(JOB) == ["create"], "the dry run only: nothing deleted"
    assert stored(ctx) == old and rt.pending_jobs == {}
    ((kind, reason, note),) = ctx.events
    assert (kind, reason) == ("Warning", "ReloadFailed") and "dry run: 403" in note and "left as it is" in note


async def test_a_changed_or_vanished_job_is_not_deleted_or_brought_back() -> None:
    rt = runtime([cm("conf", {"k": "1"})], debounce_seconds=0)
    old, ctx = await changed(rt)
    stale = copy.deepcopy(old)
    stale["metadata"]["resourceVersion"] = "40"
    with pytest.raises(Conflict):  # retried by the framework with the current Job
        await reconcile(rt, stale, ctx)
    assert stored(ctx) == old and rt.pending_jobs == {}
    _, ctx = await changed(rt)
    await ctx.client.delete(JOB, "migrate", NS)  # by someone else, after the decision was made
    await reconcile(rt, old, ctx)
    assert stored(ctx) is None and rt.pending_jobs == {} and ctx.events == []


async def test_a_copy_not_created_at_once_is_kept_and_created_when_the_job_is_gone() -> None:
    rt = runtime([cm("conf", {"k": "1"})], debounce_seconds=0)
    old, ctx = await changed(rt)
    ctx.client.fail("create", ServerError(503, "ServiceUnavailable", "etcd leader changed"), name="migrate")
    reloader = Reloader(build_operator())
    with pytest.raises(ServerError):
        await reconcile(rt, old, ctx, reloader)
    assert stored(ctx) is None and set(rt.pending_jobs) == {f"{NS}/migrate"}
    assert ctx.events[-1][:2] == ("Warning", "ReloadFailed") and "retried" in ctx.events[-1][2]
    # The retry, while the cache still holds the deleted Job: its copy is created, nothing else deleted.
    calls = len(ctx.client.calls)
    await reconcile(rt, old, ctx, reloader)
    assert [c.verb for c in ctx.client.calls[calls:]] == ["create"] and rt.pending_jobs == {}
    first = stored(ctx)
    assert first is not None and first["metadata"]["uid"] != UID
    # Once the cache has seen it gone, on_deleted (job_gone) creates it, through the manager's writer.
    _, ctx = await changed(rt)
    ctx.client.fail("create", ServerError(503, "ServiceUnavailable", "etcd leader changed"), name="migrate")
    with pytest.raises(ServerError):
        await reconcile(rt, old, ctx, reloader)
    emitted: list[tuple[str, str]] = []

    class Recorder:
        async def emit(self, regarding: Obj, type: str, reason: str, note: str) -> None:
            emitted.append((regarding["metadata"]["uid"], reason))

    rt.writer, rt.events = ctx.client, Recorder()
    reloader.operator._deps = rt  # as a running manager has built them
    await reloader.job_gone(Request("migrate", NS))
    second = stored(ctx)
    assert second is not None and rt.pending_jobs == {} and emitted == [(second["metadata"]["uid"], "Reloaded")]
    await reloader.job_gone(Request("migrate", NS))  # nothing pending: nothing done
    assert ctx.client.verbs(JOB)[-1] == "create" and len(emitted) == 1


async def test_a_job_of_that_name_found_again_ends_the_pending_copy() -> None:
    rt = runtime([cm("conf", {"k": "1"})], debounce_seconds=0)
    old, ctx = await changed(rt)
    ctx.client.fail("create", ServerError(503, "ServiceUnavailable", "x"), name="migrate")
    with pytest.raises(ServerError):
        await reconcile(rt, old, ctx)
    someone_elses = job({}, uid="another")
    del someone_elses["metadata"]["resourceVersion"]
    theirs = ctx.client.add(someone_elses, JOB)
    await reconcile(rt, theirs, ctx)
    assert rt.pending_jobs == {} and stored(ctx) == theirs


async def test_dry_run_deletes_and_creates_nothing() -> None:
    rt = runtime([cm("conf", {"k": "1"})], debounce_seconds=0, dry_run=True)
    ctx = JobCtx()
    held = ctx.client.add(job(RELOAD))
    await reconcile(rt, held, ctx)
    rt.sources["ConfigMap"].store.upsert(without_data(cm("conf", {"k": "2"})))
    await reconcile(rt, held, ctx)
    jobs = [(c.verb, c.options.get("dry_run")) for c in ctx.client.calls if c.resource.plural == "jobs"]
    assert jobs == [("create", True), ("delete", True)]
    assert stored(ctx) is not None and ctx.events[-1][1] == "ReloadSkipped"
    assert "would delete and recreate" in ctx.events[-1][2]
