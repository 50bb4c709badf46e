"""CronJobs (without --reload-cronjobs) annotated for Reloader, which would act on them with its chart
defaults: a Warning Event naming the flag, once, instead of silence (on the FakeClient; on the real API
server: tests/integration/test_op_reloader_peer.py). Jobs are recreated as by Reloader, and the few that
are not are told why: tests/unit/test_op_reloader_jobs.py."""

from __future__ import annotations

from typing import Any

from kubeloop.operators.reloader.operator import build_operator
from kubeloop.operators.reloader.settings import ReloaderSettings
from kubeloop.resources.builtin import EVENT

from .controller_kit import Kit

ANNOTATED = {"configmap.reloader.stakater.com/reload": "app-config"}
POD = {"spec": {"containers": [{"name": "c", "image": "busybox"}], "restartPolicy": "Never"}}


def cronjob(name: str, annotations: dict[str, str] | None = None) -> dict[str, Any]:
    return {"apiVersion": "batch/v1", "kind": "CronJob",
            "metadata": {"name": name, "namespace": "ns", "annotations": annotations or {}},
            "spec": {"schedule": "0 * * * *", "jobTemplate": {"spec": {"template": POD}}}}


async def controllers(kit: Kit, **settings: Any) -> dict[str, Any]:
    op = build_operator()
    op.settings = ReloaderSettings(**settings)
    return {spec.name: await kit._wire(spec) for spec in op.specs() if spec.name.endswith("cronjobs")}


def warnings(kit: Kit) -> list[tuple[str, str]]:
    return sorted((e["regarding"]["name"], e["note"]) for e in kit.client.objects(EVENT)
                  if e["type"] == "Warning" and e["reason"] == "NotReloaded")


async def test_annotated_cronjobs_hear_which_flag_once(kit: Kit) -> None:
    kit.client.add(cronjob("annotated-cron", ANNOTATED))
    kit.client.add(cronjob("plain-cron"))
    running = await controllers(kit)
    for _ in range(2):  # a second pass (a resync) says nothing new
        for key in ("ns/annotated-cron", "ns/plain-cron"):
            await running["reloader-cronjobs"].process(key)
    await running["reloader-cronjobs"].events.flush()  # Events are sent in the background
    (cron,) = warnings(kit)
    assert cron[0] == "annotated-cron" and "--reload-cronjobs" in cron[1] and "--cronjob-action create-job" in cron[1]


def test_jobs_are_reloaded_unless_ignored() -> None:
    from kubeloop.operators.reloader.unreloaded import warned_kind

    assert ReloaderSettings().reloads("jobs") and not warned_kind("jobs", ReloaderSettings())
    assert not ReloaderSettings(ignored_workload_types="jobs").reloads("jobs")
    assert warned_kind("cronjobs", ReloaderSettings())
    assert not warned_kind("cronjobs", ReloaderSettings(ignored_workload_types="cronjobs"))


async def test_no_warning_when_reloaded_or_ignored(kit: Kit) -> None:
    kit.client.add(cronjob("annotated-cron", ANNOTATED))
    running = await controllers(kit, reload_cronjobs=True)
    assert set(running) == {"reloader-cronjobs"} and running["reloader-cronjobs"].spec.watches
    running = await controllers(kit, ignored_workload_types="cronjobs")
    assert running == {}
