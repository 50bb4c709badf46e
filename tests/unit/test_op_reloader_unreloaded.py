"""CronJobs (without --reload-cronjobs) and Jobs annotated for Reloader, which would act on them with its
chart defaults: a Warning Event naming the flag, once, instead of silence (on the FakeClient; on the
real API server: tests/integration/test_op_reloader_compat.py)."""

from __future__ import annotations

from typing import Any

from kubeloop.operators.reloader.operator import build_operator
from kubeloop.operators.reloader.settings import ReloaderSettings
from kubeloop.resources.builtin import EVENT

from .controller_kit import Kit

ANNOTATED = {"configmap.reloader.stakater.com/reload": "app-config"}
POD = {"spec": {"containers": [{"name": "c", "image": "busybox"}], "restartPolicy": "Never"}}


def job(name: str, annotations: dict[str, str] | None = None, **meta: Any) -> dict[str, Any]:
    return {"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": name, "namespace": "ns", "annotations": annotations or {}, **meta},
            "spec": {"template": POD}}


def cronjob(name: str, annotations: dict[str, str] | None = None) -> dict[str, Any]:
    return {"apiVersion": "batch/v1", "kind": "CronJob",
            "metadata": {"name": name, "namespace": "ns", "annotations": annotations or {}},
            "spec": {"schedule": "0 * * * *", "jobTemplate": {"spec": {"template": POD}}}}


async def controllers(kit: Kit, **settings: Any) -> dict[str, Any]:
    op = build_operator()
    op.settings = ReloaderSettings(**settings)
    return {spec.name: await kit._wire(spec) for spec in op.specs() if spec.name.endswith("jobs")}


def warnings(kit: Kit) -> list[tuple[str, str]]:
    return sorted((e["regarding"]["name"], e["note"]) for e in kit.client.objects(EVENT)
                  if e["type"] == "Warning" and e["reason"] == "NotReloaded")


async def test_annotated_cronjobs_and_jobs_hear_which_flag_once(kit: Kit) -> None:
    kit.client.add(job("annotated", ANNOTATED))
    kit.client.add(job("plain"))
    kit.client.add(job("from-cron", ANNOTATED, ownerReferences=[
        {"apiVersion": "batch/v1", "kind": "CronJob", "name": "c", "uid": "u", "controller": True}]))
    kit.client.add(cronjob("annotated-cron", ANNOTATED))
    kit.client.add(cronjob("plain-cron"))
    running = await controllers(kit)
    for _ in range(2):  # a second pass (a resync) says nothing new
        for key in ("ns/annotated", "ns/plain", "ns/from-cron"):
            await running["reloader-jobs"].process(key)
        for key in ("ns/annotated-cron", "ns/plain-cron"):
            await running["reloader-cronjobs"].process(key)
    (plain_job, cron) = warnings(kit)
    assert cron[0] == "annotated-cron" and "--reload-cronjobs" in cron[1] and "--cronjob-action create-job" in cron[1]
    assert plain_job[0] == "annotated" and "does not recreate Jobs" in plain_job[1]


async def test_no_warning_when_reloaded_or_ignored(kit: Kit) -> None:
    kit.client.add(cronjob("annotated-cron", ANNOTATED))
    running = await controllers(kit, reload_cronjobs=True, ignored_workload_types="jobs")
    assert set(running) == {"reloader-cronjobs"} and running["reloader-cronjobs"].spec.watches
    running = await controllers(kit, ignored_workload_types="cronjobs,jobs")
    assert running == {}
