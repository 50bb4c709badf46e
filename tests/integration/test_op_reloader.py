"""The reloader operator on the real control plane, under its generated RBAC: Deployments,
StatefulSets and DaemonSets are rolled by their own controllers when the data they use changes."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from kubeloop import Operator
from kubeloop.client import Client
from kubeloop.metrics import REGISTRY
from kubeloop.operators.reloader import build_operator
from kubeloop.operators.reloader.policy import HASH, RESTARTED_AT, SOURCES, TEMPLATE_HASH
from kubeloop.operators.reloader.settings import ReloaderSettings
from kubeloop.testing import wait_for
from kubeloop.testing.operator import run_operator
from kubeloop.testing.podsecurity import restricted

Obj = dict[str, Any]
QUIET = 2.5  # seconds to prove that nothing happens (debounce in these tests is 0.5 s)


# --- builders ----------------------------------------------------------------------------------------------

def reloader(**settings: Any) -> Operator:
    op = build_operator()
    op.settings = ReloaderSettings(**{"debounce_seconds": 0.5, **settings})
    return op


def config_map(name: str, ns: str, data: dict[str, str], **meta: Any) -> Obj:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": ns, **meta},
            "data": data}


def secret(name: str, ns: str, data: dict[str, str]) -> Obj:
    return {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": name, "namespace": ns},
            "stringData": data}


def pod_spec(*, volumes: list[Obj] = (), env: list[Obj] = (), env_from: list[Obj] = (), **extra: Any) -> Obj:
    container = {"name": "app", "image": "nginx:1.27", "env": list(env), "envFrom": list(env_from),
                 "volumeMounts": [{"name": v["name"], "mountPath": f"/mnt/{v['name']}"} for v in volumes]}
    return restricted({"containers": [container], "volumes": list(volumes), **extra})


def workload(kind: str, name: str, ns: str, spec: Obj, annotations: dict[str, str] | None = None,
             replicas: int | None = 1, **top: Any) -> Obj:
    body: Obj = {"selector": {"matchLabels": {"app": name}},
                 "template": {"metadata": {"labels": {"app": name}}, "spec": spec}, **top}
    if replicas is not None:
        body["replicas"] = replicas
    return {"apiVersion": "apps/v1", "kind": kind,
            "metadata": {"name": name, "namespace": ns, "annotations": annotations or {}}, "spec": body}


def deployment(name: str, ns: str, spec: Obj, annotations: dict[str, str] | None = None, **kw: Any) -> Obj:
    return workload("Deployment", name, ns, spec, annotations, **kw)


AUTO = {"reloader.stakater.com/auto": "true"}


def cm_volume(name: str) -> Obj:
    return {"name": name, "configMap": {"name": name}}


# --- observations ------------------------------------------------------------------------------------------

def recorded(obj: Obj) -> str | None:
    return (obj["metadata"].get("annotations") or {}).get(HASH)


def generation(obj: Obj) -> int:
    return int(obj["metadata"]["generation"])


def revision(d: Obj) -> int:
    """A Deployment's rollout count: its controller bumps it for every new pod template. (Generation
    would not do: a Deployment's generation also moves when its annotations change.)"""
    return int((d["metadata"].get("annotations") or {}).get("deployment.kubernetes.io/revision", 0))


def template_annotations(obj: Obj) -> dict[str, str]:
    return obj["spec"]["template"]["metadata"].get("annotations") or {}


def rollout_done(d: Obj) -> bool:
    status, want = d.get("status") or {}, d["spec"]["replicas"]
    return (status.get("observedGeneration") == generation(d) and status.get("updatedReplicas") == want
            and status.get("replicas") == want and status.get("availableReplicas") == want)


async def replica_sets(client: Client, ns: str, app: str) -> list[Obj]:
    return (await client.list("replicasets.apps", ns, label_selector=f"app={app}"))["items"]


async def events(client: Client, ns: str, name: str, reason: str) -> list[Obj]:
    items = (await client.list("events.events.k8s.io", ns))["items"]
    return [e for e in items if e.get("reason") == reason and e["regarding"].get("name") == name]


async def eventually(check: Callable[[], Any], timeout: float = 30, what: str = "") -> Any:
    """Polls an async check until it returns something truthy (for conditions spanning several objects)."""
    async with asyncio.timeout(timeout):
        while not (result := await check()):
            await asyncio.sleep(0.2)
    return result


async def wait_recorded(client: Client, resource: str, name: str, ns: str) -> Obj:
    """Waits for the first-sight hash (and, for a Deployment, its first ReplicaSet)."""
    def ready(o: Obj) -> bool:
        return recorded(o) is not None and (not resource.startswith("deployments") or revision(o) >= 1)
    return await wait_for(client, resource, name, ns, predicate=ready, timeout=30,
                          description="the reloader to record its hash")


def executed(ns: str, kind: str = "Deployment") -> float:
    return REGISTRY.get_sample_value("reloader_reload_executed_total",
                                     {"success": "true", "namespace": ns, "kind": kind}) or 0.0


# --- tests -------------------------------------------------------------------------------------------------

async def test_configmap_change_rolls_deployment_once(kube_cluster, kube_client: Client,
                                                      namespace: str) -> None:
    """The article's scenario: nginx.conf changes, the Deployment rolls once; a label change does not."""
    ns = namespace
    await kube_client.create(config_map("nginx-conf", ns, {"nginx.conf": "worker_processes 1;"}))
    await kube_client.create(deployment("nginx", ns, pod_spec(volumes=[cm_volume("nginx-conf")]), AUTO,
                                        replicas=2))
    await wait_for(kube_client, "deployments.apps", "nginx", ns, rollout_done, timeout=60)
    async with run_operator(kube_cluster, kube_client, reloader(), ns) as running:
        first = await wait_recorded(kube_client, "deployments.apps", "nginx", ns)
        assert revision(first) == 1 and not template_annotations(first), "recording the hash must not roll"
        old_pods = {p["metadata"]["name"] for p in (await kube_client.list("pods", ns))["items"]}

        await kube_client.patch("configmaps", "nginx-conf", {"metadata": {"labels": {"team": "web"}}}, ns)
        await asyncio.sleep(QUIET)
        unchanged = await kube_client.get("deployments.apps", "nginx", ns)
        assert unchanged["spec"]["template"] == first["spec"]["template"]
        assert revision(unchanged) == 1 and recorded(unchanged) == recorded(first)

        await kube_client.patch("configmaps", "nginx-conf", {"data": {"nginx.conf": "worker_processes 4;"}},
                                ns)
        rolled = await wait_for(kube_client, "deployments.apps", "nginx", ns, timeout=60,
                                predicate=lambda d: revision(d) == 2 and rollout_done(d),
                                description="one rollout to complete")
        assert template_annotations(rolled)[TEMPLATE_HASH] == recorded(rolled) != recorded(first)

        async def replaced() -> bool:
            rss = await replica_sets(kube_client, ns, "nginx")
            pods = (await kube_client.list("pods", ns, label_selector="app=nginx"))["items"]
            new = [rs["metadata"]["labels"]["pod-template-hash"] for rs in rss if rs["spec"]["replicas"] == 2]
            return (len(rss) == 2 and len(new) == 1 and len(pods) == 2
                    and not old_pods & {p["metadata"]["name"] for p in pods}
                    and all(p["metadata"]["labels"]["pod-template-hash"] == new[0] for p in pods))
        await eventually(replaced, 60, "a new ReplicaSet, the old one at 0, pods replaced")
        reloaded = await eventually(lambda: events(kube_client, ns, "nginx", "Reloaded"))
        assert "ConfigMap nginx-conf changed" in reloaded[0]["note"], reloaded[0]["note"]
        assert executed(ns) == 1
    assert revision(await kube_client.get("deployments.apps", "nginx", ns)) == 2
    assert running.audit().ok, running.audit().message


async def test_two_changes_in_the_window_make_one_rollout(kube_cluster, kube_client: Client,
                                                          namespace: str) -> None:
    ns = namespace
    await kube_client.create(config_map("a", ns, {"k": "1"}))
    await kube_client.create(config_map("b", ns, {"k": "1"}))
    spec = pod_spec(volumes=[cm_volume("b")], env=[
        {"name": "K", "valueFrom": {"configMapKeyRef": {"name": "a", "key": "k"}}}])
    await kube_client.create(deployment("web", ns, spec, AUTO))
    async with run_operator(kube_cluster, kube_client, reloader(debounce_seconds=1.5), ns) as running:
        first = await wait_recorded(kube_client, "deployments.apps", "web", ns)
        await kube_client.patch("configmaps", "a", {"data": {"k": "2"}}, ns)
        await kube_client.patch("configmaps", "b", {"data": {"k": "2"}}, ns)

        def both_recorded(d: Obj) -> bool:
            now = dict(p.split("=") for p in d["metadata"]["annotations"][SOURCES].split(","))
            then = dict(p.split("=") for p in first["metadata"]["annotations"][SOURCES].split(","))
            return all(now[k] != then[k] for k in ("ConfigMap/a", "ConfigMap/b"))
        rolled = await wait_for(kube_client, "deployments.apps", "web", ns, both_recorded, timeout=30)
        await asyncio.sleep(1)
        final = await kube_client.get("deployments.apps", "web", ns)
        assert final["spec"]["template"] == rolled["spec"]["template"]
        assert len(await replica_sets(kube_client, ns, "web")) == 2, "exactly one rollout"
        (event,) = await eventually(lambda: events(kube_client, ns, "web", "Reloaded"))
        assert "ConfigMap a changed" in event["note"] and "ConfigMap b changed" in event["note"]
    assert running.audit().ok, running.audit().message


async def test_change_while_stopped_rolls_once_after_start(kube_cluster, kube_client: Client,
                                                           namespace: str) -> None:
    """Level-based: a change the operator never saw happen is found by comparing hashes."""
    ns = namespace
    await kube_client.create(config_map("conf", ns, {"k": "1"}))
    await kube_client.create(deployment("app", ns, pod_spec(volumes=[cm_volume("conf")]), AUTO))
    op = reloader()
    async with run_operator(kube_cluster, kube_client, op, ns):
        first = await wait_recorded(kube_client, "deployments.apps", "app", ns)
    await kube_client.patch("configmaps", "conf", {"data": {"k": "2"}}, ns)  # while it is down
    async with run_operator(kube_cluster, kube_client, op, ns) as running:
        rolled = await wait_for(kube_client, "deployments.apps", "app", ns, timeout=30,
                                predicate=lambda d: recorded(d) != recorded(first) and revision(d) == 2)
    assert running.audit().ok, running.audit().message
    async with run_operator(kube_cluster, kube_client, op, ns):  # nothing changed meanwhile
        await asyncio.sleep(QUIET)
    after = await kube_client.get("deployments.apps", "app", ns)
    assert after["spec"]["template"] == rolled["spec"]["template"] and recorded(after) == recorded(rolled)
    assert len(await replica_sets(kube_client, ns, "app")) == 2


async def test_secret_projected_volume_and_init_container(kube_cluster, kube_client: Client,
                                                          namespace: str) -> None:
    """Reloader's env-var strategy: a STAKATER_* variable per changed object, in the container reading it."""
    ns = namespace
    await kube_client.create(secret("init-secret", ns, {"token": "s3cr3t-v1"}))
    await kube_client.create(secret("proj-secret", ns, {"a": "1"}))
    await kube_client.create(config_map("proj-cm", ns, {"b": "1"}))
    spec = pod_spec(volumes=[{"name": "bundle", "projected": {"sources": [
        {"configMap": {"name": "proj-cm"}}, {"secret": {"name": "proj-secret"}}]}}])
    spec["initContainers"] = [{"name": "init", "image": "busybox", "env": [
        {"name": "TOKEN", "valueFrom": {"secretKeyRef": {"name": "init-secret", "key": "token"}}}]}]
    await kube_client.create(deployment("api", ns, spec, AUTO))
    async with run_operator(kube_cluster, kube_client, reloader(reload_strategy="env-vars"), ns) as running:
        await wait_recorded(kube_client, "deployments.apps", "api", ns)
        await kube_client.patch("secrets", "init-secret", {"stringData": {"token": "s3cr3t-v2"}}, ns)
        d = await wait_for(kube_client, "deployments.apps", "api", ns, lambda d: revision(d) == 2, timeout=30)
        (init,) = d["spec"]["template"]["spec"]["initContainers"]
        assert {e["name"] for e in init["env"]} == {"TOKEN", "STAKATER_INIT_SECRET_SECRET"}
        await kube_client.patch("configmaps", "proj-cm", {"data": {"b": "2"}}, ns)
        await wait_for(kube_client, "deployments.apps", "api", ns, lambda d: revision(d) == 3, timeout=30)
        await kube_client.patch("secrets", "proj-secret", {"stringData": {"a": "2"}}, ns)
        d = await wait_for(kube_client, "deployments.apps", "api", ns, lambda d: revision(d) == 4, timeout=30)
        app = d["spec"]["template"]["spec"]["containers"][0]
        assert {"STAKATER_PROJ_CM_CONFIGMAP", "STAKATER_PROJ_SECRET_SECRET"} <= {
            e["name"] for e in app["env"]}
        notes = [e["note"] for e in await eventually(lambda: events(kube_client, ns, "api", "Reloaded"))]
        assert any("Secret init-secret changed" in n for n in notes)
        assert not any("s3cr3t" in n for n in notes)  # hashes only, never data
    assert running.audit().ok, running.audit().message


async def test_statefulset_and_daemonset(kube_cluster, kube_client: Client, namespace: str) -> None:
    """One shared ConfigMap, kubeloop's own annotation, the `kubectl rollout restart` strategy."""
    ns = namespace
    own = {"reloader.kubeloop.dev/auto": "true"}
    await kube_client.create(config_map("shared", ns, {"k": "1"}))
    spec = pod_spec(env_from=[{"configMapRef": {"name": "shared"}}])
    await kube_client.create(workload("StatefulSet", "db", ns, spec, own, serviceName="db"))
    await kube_client.create(workload("DaemonSet", "agent", ns, spec, own, replicas=None))
    op = reloader(reload_strategy="restarted-at")
    async with run_operator(kube_cluster, kube_client, op, ns) as running:
        sts = await wait_recorded(kube_client, "statefulsets.apps", "db", ns)
        await wait_recorded(kube_client, "daemonsets.apps", "agent", ns)
        sts = await wait_for(kube_client, "statefulsets.apps", "db", ns, timeout=60,
                             predicate=lambda s: (s.get("status") or {}).get("readyReplicas") == 1)
        await kube_client.patch("configmaps", "shared", {"data": {"k": "2"}}, ns)

        def sts_rolled(s: Obj) -> bool:
            st = s.get("status") or {}
            revision = st.get("updateRevision")
            return (generation(s) == st.get("observedGeneration") == 2 and st.get("updatedReplicas") == 1
                    and st.get("currentRevision") == revision != sts["status"]["updateRevision"])

        def ds_rolled(d: Obj) -> bool:
            st = d.get("status") or {}
            return (generation(d) == 2 and st.get("observedGeneration") == 2
                    and st.get("desiredNumberScheduled", 0) > 0
                    and st.get("updatedNumberScheduled") == st.get("desiredNumberScheduled")
                    == st.get("numberAvailable"))
        sts = await wait_for(kube_client, "statefulsets.apps", "db", ns, sts_rolled, timeout=60)
        ds = await wait_for(kube_client, "daemonsets.apps", "agent", ns, ds_rolled, timeout=90)
        for obj in (sts, ds):
            assert RESTARTED_AT in obj["spec"]["template"]["metadata"]["annotations"]
        assert executed(ns, "StatefulSet") == 1 and executed(ns, "DaemonSet") == 1
    assert running.audit().ok, running.audit().message


async def test_ignored_paused_and_missing(kube_cluster, kube_client: Client, namespace: str) -> None:
    ns = namespace
    await kube_client.create(config_map("plain", ns, {"k": "1"}))
    await kube_client.create(config_map("ignored", ns, {"k": "1"},
                                        annotations={"reloader.stakater.com/ignore": "true"}))
    await kube_client.create(config_map("paused-conf", ns, {"k": "1"}))
    await kube_client.create(config_map("doomed", ns, {"k": "1"}))
    await kube_client.create(deployment("a", ns, pod_spec(volumes=[cm_volume("plain"), cm_volume("ignored")]),
                                        AUTO))
    await kube_client.create(deployment("p", ns, pod_spec(volumes=[cm_volume("paused-conf")]), AUTO))
    await kube_client.create(deployment("m", ns, pod_spec(volumes=[cm_volume("doomed")]), AUTO))
    async with run_operator(kube_cluster, kube_client, reloader(), ns) as running:
        before = {name: (await wait_recorded(kube_client, "deployments.apps", name, ns))["spec"]["template"]
                  for name in ("a", "p", "m")}
        await kube_client.patch("deployments.apps", "p", {"spec": {"paused": True}}, ns)
        await wait_for(kube_client, "deployments.apps", "p", ns, timeout=30, predicate=lambda d: bool(
            d["spec"].get("paused")) and (d.get("status") or {}).get("observedGeneration") == generation(d))
        await kube_client.patch("configmaps", "ignored", {"data": {"k": "2"}}, ns)
        await kube_client.patch("configmaps", "paused-conf", {"data": {"k": "2"}}, ns)
        await kube_client.delete("configmaps", "doomed", ns)
        warned = await eventually(lambda: events(kube_client, ns, "m", "ReloadSourceMissing"))
        assert warned[0]["type"] == "Warning" and "ConfigMap/doomed" in warned[0]["note"]
        await eventually(lambda: events(kube_client, ns, "p", "ReloadSkipped"))
        await asyncio.sleep(QUIET)
        for name, template in before.items():
            d = await kube_client.get("deployments.apps", name, ns)
            assert d["spec"]["template"] == template and revision(d) == 1, f"{name} must not have been rolled"
        # Resumed, the paused Deployment gets the rollout it missed.
        await kube_client.patch("deployments.apps", "p", {"spec": {"paused": False}}, ns)
        await wait_for(kube_client, "deployments.apps", "p", ns, timeout=30,
                       predicate=lambda d: TEMPLATE_HASH in template_annotations(d) and revision(d) == 2)
    assert running.audit().ok, running.audit().message


async def test_reloader_annotations_work_unchanged(kube_cluster, kube_client: Client, namespace: str) -> None:
    ns = namespace
    for name in ("extra", "unmatched", "excluded", "included"):
        await kube_client.create(config_map(name, ns, {"k": "1"}))
    await kube_client.create(config_map("matched", ns, {"k": "1"},
                                        annotations={"reloader.stakater.com/match": "true"}))
    await kube_client.create(secret("creds", ns, {"password": "1"}))
    plain = pod_spec()
    await kube_client.create(deployment("named", ns, plain, {
        "configmap.reloader.stakater.com/reload": "extra", "secret.reloader.stakater.com/reload": "creds"}))
    searching = pod_spec(volumes=[cm_volume("matched"), cm_volume("unmatched")])
    await kube_client.create(deployment("search", ns, searching, {"reloader.stakater.com/search": "true"}))
    excluding = pod_spec(volumes=[cm_volume("excluded"), cm_volume("included")])
    await kube_client.create(deployment("exclude", ns, excluding, {
        **AUTO, "configmaps.exclude.reloader.stakater.com/reload": "excluded"}))
    await kube_client.create(deployment("untracked", ns, pod_spec(volumes=[cm_volume("included")])))
    async with run_operator(kube_cluster, kube_client, reloader(), ns) as running:
        for name in ("named", "search", "exclude"):
            await wait_recorded(kube_client, "deployments.apps", name, ns)
        for name in ("unmatched", "excluded"):
            await kube_client.patch("configmaps", name, {"data": {"k": "2"}}, ns)
        await kube_client.patch("configmaps", "extra", {"data": {"k": "2"}}, ns)
        await kube_client.patch("configmaps", "matched", {"data": {"k": "2"}}, ns)
        await wait_for(kube_client, "deployments.apps", "named", ns, lambda d: revision(d) == 2, timeout=30)
        await wait_for(kube_client, "deployments.apps", "search", ns, lambda d: revision(d) == 2, timeout=30)
        await kube_client.patch("secrets", "creds", {"stringData": {"password": "2"}}, ns)
        await wait_for(kube_client, "deployments.apps", "named", ns, lambda d: revision(d) == 3, timeout=30)
        await kube_client.patch("configmaps", "included", {"data": {"k": "2"}}, ns)
        await wait_for(kube_client, "deployments.apps", "exclude", ns, lambda d: revision(d) == 2, timeout=30)
        await asyncio.sleep(1)
        for name, rollouts in (("search", 1), ("exclude", 1), ("untracked", 0), ("named", 2)):
            assert revision(await kube_client.get("deployments.apps", name, ns)) == 1 + rollouts, name
        untracked = await kube_client.get("deployments.apps", "untracked", ns)
        assert HASH not in (untracked["metadata"].get("annotations") or {}), "opt-in: untouched"
    assert running.audit().ok, running.audit().message


async def test_cronjob_job_template_for_future_runs(kube_cluster, kube_client: Client,
                                                     namespace: str) -> None:
    ns = namespace
    await kube_client.create(config_map("report-conf", ns, {"k": "1"}))
    job_pod = {**pod_spec(env_from=[{"configMapRef": {"name": "report-conf"}}]), "restartPolicy": "Never"}
    await kube_client.create({
        "apiVersion": "batch/v1", "kind": "CronJob",
        "metadata": {"name": "report", "namespace": ns, "annotations": AUTO},
        "spec": {"schedule": "0 0 1 1 *", "suspend": True,
                 "jobTemplate": {"spec": {"template": {"spec": job_pod}}}}})
    async with run_operator(kube_cluster, kube_client, reloader(reload_cronjobs=True), ns) as running:
        first = await wait_recorded(kube_client, "cronjobs.batch", "report", ns)
        await kube_client.patch("configmaps", "report-conf", {"data": {"k": "2"}}, ns)

        def next_jobs_get_it(c: Obj) -> bool:
            template = c["spec"]["jobTemplate"]["spec"]["template"]
            stamped = (template["metadata"].get("annotations") or {}).get(TEMPLATE_HASH)
            return stamped == recorded(c) != recorded(first)
        await wait_for(kube_client, "cronjobs.batch", "report", ns, next_jobs_get_it, timeout=30)
    assert running.audit().ok, running.audit().message


async def test_namespace_selector_follows_namespace_labels(kube_cluster, kube_client: Client,
                                                          namespace: str) -> None:
    ns = namespace
    await kube_client.create(config_map("conf", ns, {"k": "1"}))
    await kube_client.create(deployment("app", ns, pod_spec(volumes=[cm_volume("conf")]), AUTO))
    op = reloader(namespace_selector="reloader-test=yes")
    async with run_operator(kube_cluster, kube_client, op, ns) as running:
        await asyncio.sleep(1)
        assert recorded(await kube_client.get("deployments.apps", "app", ns)) is None, "not selected"
        await kube_client.patch("namespaces", ns, {"metadata": {"labels": {"reloader-test": "yes"}}})
        await wait_recorded(kube_client, "deployments.apps", "app", ns)  # woken by the namespace watch
    assert running.audit().ok, running.audit().message
