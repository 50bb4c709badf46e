"""Reloader's (chart defaults) behaviour with the batch kinds: an annotated Job is deleted and created
again, as by Reloader; an annotated CronJob (Reloader runs a Job from it), which kubeloop's reloader
reloads only with --reload-cronjobs, gets a Warning Event naming the flag; with that flag, the CronJob's
ConfigMap change runs a Job as Reloader's does. And a ConfigMap that gains the labels of
--resource-label-selector reads as its creation, as it does for Reloader, whose watch is filtered by the
selector. On the real control plane, under the operator's generated RBAC."""

from __future__ import annotations

import asyncio
from typing import Any

from kubeloop.client import Client
from kubeloop.testing import wait_for
from kubeloop.testing.operator import run_operator

from .test_op_reloader import (
    AUTO,
    QUIET,
    cm_volume,
    config_map,
    deployment,
    events,
    eventually,
    pod_spec,
    reloader,
    revision,
    wait_recorded,
)
from .test_op_reloader_compat import tenant_client

Obj = dict[str, Any]
RELOAD_CONF = {"configmap.reloader.stakater.com/reload": "job-conf"}


def job_pod() -> Obj:
    return {**pod_spec(env_from=[{"configMapRef": {"name": "job-conf"}}]), "restartPolicy": "Never"}


def cronjob(name: str, ns: str, annotations: dict[str, str]) -> Obj:
    return {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": name, "namespace": ns,
                                                                      "annotations": annotations},
            "spec": {"schedule": "0 0 1 1 *", "suspend": True,
                     "jobTemplate": {"spec": {"template": {"spec": job_pod()}}}}}


def job(name: str, ns: str, annotations: dict[str, str]) -> Obj:
    return {"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": name, "namespace": ns, "annotations": annotations},
            "spec": {"suspend": True, "template": {"spec": job_pod()}}}


async def jobs_of(client: Client, ns: str, cronjob_name: str) -> list[Obj]:
    items = (await client.list("jobs.batch", ns))["items"]
    return [j for j in items if any(r.get("kind") == "CronJob" and r.get("name") == cronjob_name
                                     for r in j["metadata"].get("ownerReferences") or ())]


async def test_an_annotated_cronjob_is_told_which_flag_and_an_annotated_job_is_recreated(
        kube_cluster: Any, kube_client: Client, namespace: str) -> None:
    ns = namespace
    await kube_client.create(config_map("job-conf", ns, {"k": "1"}))
    await kube_client.create(cronjob("nightly", ns, RELOAD_CONF))
    await kube_client.create(job("once", ns, RELOAD_CONF))
    await kube_client.create(job("plain", ns, {}))
    async with run_operator(kube_cluster, kube_client, reloader(), ns) as running:
        (cron_event,) = await eventually(lambda: events(kube_client, ns, "nightly", "NotReloaded"))
        assert cron_event["type"] == "Warning" and "--reload-cronjobs" in cron_event["note"]
        assert "--cronjob-action create-job" in cron_event["note"]
        first = await wait_recorded(kube_client, "jobs.batch", "once", ns)
        plain = await kube_client.get("jobs.batch", "plain", ns)
        await kube_client.patch("configmaps", "job-conf", {"data": {"k": "2"}}, ns)
        # As Reloader's ReCreateJobFromjob: deleted (in the background) and created again from its spec.
        new = await wait_for(kube_client, "jobs.batch", "once", ns,
                             lambda j: j["metadata"]["uid"] != first["metadata"]["uid"], timeout=30)
        uid = new["metadata"]["uid"]
        assert new["spec"]["selector"] == {"matchLabels": {"batch.kubernetes.io/controller-uid": uid}}
        old_uid = first["metadata"]["uid"]
        assert old_uid not in (new["metadata"].get("labels") or {}).values(), "no label names the old Job"
        assert old_uid not in new["spec"]["template"]["metadata"]["labels"].values()
        assert new["spec"]["suspend"] is True
        (reloaded,) = await eventually(lambda: events(kube_client, ns, "once", "Reloaded"))
        assert reloaded["regarding"]["uid"] == uid and "recreated" in reloaded["note"]
        await asyncio.sleep(QUIET)
        assert (await kube_client.get("jobs.batch", "once", ns))["metadata"]["uid"] == uid, "recreated once"
        assert await jobs_of(kube_client, ns, "nightly") == [], "not reloaded without the flag, as the Event says"
        assert (await kube_client.get("jobs.batch", "plain", ns))["metadata"]["uid"] == plain["metadata"]["uid"]
        await running.events_sent()
        assert await events(kube_client, ns, "plain", "NotReloaded") == []
    assert running.audit().ok, running.audit().message


async def test_with_the_flags_a_cronjob_gets_a_job_as_with_reloader(kube_cluster: Any, kube_client: Client,
                                                                   namespace: str) -> None:
    ns = namespace
    await kube_client.create(config_map("job-conf", ns, {"k": "1"}))
    await kube_client.create(cronjob("nightly", ns, RELOAD_CONF))
    op = reloader(reload_cronjobs=True, cronjob_action="create-job", ignored_workload_types="jobs")
    async with run_operator(kube_cluster, kube_client, op, ns) as running:
        await wait_recorded(kube_client, "cronjobs.batch", "nightly", ns)
        await kube_client.patch("configmaps", "job-conf", {"data": {"k": "2"}}, ns)
        (created,) = await eventually(lambda: jobs_of(kube_client, ns, "nightly"))
        assert created["metadata"]["annotations"]["cronjob.kubernetes.io/instantiate"] == "manual"
        await running.events_sent()
        assert await events(kube_client, ns, "nightly", "NotReloaded") == []
    assert running.audit().ok, running.audit().message


async def test_a_configmap_labelled_later_is_its_creation(kube_cluster: Any, kube_client: Client,
                                                          namespace: str) -> None:
    """Reloader filters its ConfigMap watch by --resource-label-selector, and the API server reports an
    object that comes to match a watch's selector as ADDED: with --reload-on-create that rolls the
    workloads using it. Both halves are checked here, the second against kubeloop's reloader."""
    ns = namespace
    await kube_client.create(config_map("late", ns, {"k": "1"}))
    await kube_client.create(deployment("app", ns, pod_spec(volumes=[cm_volume("late")]), AUTO))

    seen: list[str] = []

    async def watch() -> None:
        async for event in kube_client.watch("configmaps", ns, label_selector="team=web"):
            seen.append(event["type"])
    watching = asyncio.create_task(watch())
    op = reloader(resource_label_selector="team=web", reload_on_create=True)
    try:
        async with run_operator(kube_cluster, kube_client, op, ns) as running:
            await wait_for(kube_client, "deployments.apps", "app", ns, lambda d: revision(d) >= 1, timeout=30)
            await asyncio.sleep(QUIET)
            await kube_client.patch("configmaps", "late", {"metadata": {"labels": {"team": "web"}}}, ns)
            await wait_for(kube_client, "deployments.apps", "app", ns, lambda d: revision(d) == 2, timeout=30,
                           description="the labelled ConfigMap, new to the selector, to roll its Deployment")
            assert "ADDED" in seen, "the API server reports the newly matching object as ADDED"
        # First seen by the next run only (so its first record is that run's, made without the flag).
        await kube_client.create(config_map("quiet", ns, {"k": "1"}))
        await kube_client.create(deployment("other", ns, pod_spec(volumes=[cm_volume("quiet")]), AUTO))
        async with run_operator(kube_cluster, kube_client, reloader(resource_label_selector="team=web"), ns):
            await wait_for(kube_client, "deployments.apps", "other", ns, lambda d: revision(d) >= 1, timeout=30)
            await asyncio.sleep(QUIET)  # seen, tracking nothing selected yet
            await kube_client.patch("configmaps", "quiet", {"metadata": {"labels": {"team": "web"}}}, ns)
            await wait_recorded(kube_client, "deployments.apps", "other", ns)  # looked at at once
            await asyncio.sleep(QUIET)
            assert revision(await kube_client.get("deployments.apps", "other", ns)) == 1, \
                "without --reload-on-create the labelling is recorded, not rolled (Reloader ignores the ADDED)"
    finally:
        watching.cancel()
    assert running.audit().ok, running.audit().message


async def test_a_tenant_gets_its_own_job_recreated_and_no_other(kube_cluster: Any, kube_client: Client,
                                                                 namespace: str) -> None:
    """A tenant of A, through its own token, annotates its Job in A to reload on a ConfigMap of A's and,
    by name and path, on B's; B's annotated Job (its owner's) must keep its uid however A's ConfigMaps
    change, while A's own Job is recreated for A's change: a recreation deletes and creates, the most
    the operator does to a workload, so it must stay in the namespace whose object asked for it."""
    a, b = namespace, f"{namespace}-b"
    await kube_client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": b}})
    try:
        await kube_client.create(config_map("job-conf", b, {"k": "1"}))
        await kube_client.create(job("victim", b, RELOAD_CONF))
        tenant = await tenant_client(kube_cluster, kube_client, a)
        await kube_client.create({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
                                  "metadata": {"name": "tenant-jobs", "namespace": a},
                                  "rules": [{"apiGroups": ["batch"], "resources": ["jobs"], "verbs": ["*"]}]})
        await kube_client.create({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
                                  "metadata": {"name": "tenant-jobs", "namespace": a},
                                  "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role",
                                              "name": "tenant-jobs"},
                                  "subjects": [{"kind": "ServiceAccount", "name": "tenant", "namespace": a}]})
        try:
            async with run_operator(kube_cluster, kube_client, reloader(), a, watch_namespaces=[a, b]) as running:
                victim = await wait_recorded(kube_client, "jobs.batch", "victim", b)
                await tenant.create(config_map("job-conf", a, {"k": "1"}))
                names = f"job-conf,{b}/job-conf,../{b}/job-conf,.*"
                await tenant.create(job("mine", a, {"configmap.reloader.stakater.com/reload": names,
                                                    "reloader.stakater.com/search": "true"}))
                mine = await wait_recorded(tenant, "jobs.batch", "mine", a)
                await tenant.patch("configmaps", "job-conf", {"data": {"k": "2"}}, a)
                await wait_for(tenant, "jobs.batch", "mine", a,
                               lambda j: j["metadata"]["uid"] != mine["metadata"]["uid"], timeout=30)
                for value in ("3", "4"):
                    await tenant.patch("configmaps", "job-conf", {"data": {"k": value}}, a)
                    await asyncio.sleep(0.7)
                await asyncio.sleep(QUIET)
                after = await kube_client.get("jobs.batch", "victim", b)
                assert after["metadata"]["uid"] == victim["metadata"]["uid"], "B's Job was recreated for A"
                assert after["metadata"]["annotations"] == victim["metadata"]["annotations"]
                await running.events_sent()
                assert not await events(kube_client, b, "victim", "Reloaded")
                # Control: B's own change does recreate B's Job (the operator watches B).
                await kube_client.patch("configmaps", "job-conf", {"data": {"k": "b-changed"}}, b)
                await wait_for(kube_client, "jobs.batch", "victim", b,
                               lambda j: j["metadata"]["uid"] != victim["metadata"]["uid"], timeout=30)
            assert running.audit().ok, running.audit().message
        finally:
            await tenant.close()
    finally:
        await kube_client.delete("namespaces", b)
