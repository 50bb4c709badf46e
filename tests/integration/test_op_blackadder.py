"""blackadder on the real control plane, under its generated RBAC.

Other tests share the cluster, so every ChaosAgent here is confined: a namespaceSelector naming only
this test's namespaces and label selectors matching only this test's objects. The operator only
handles agents labelled with this run's token.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
from collections.abc import AsyncIterator
from importlib import resources
from typing import Any

import pytest
import pytest_asyncio
import yaml

from kubeloop.cli.generate import manifests
from kubeloop.client import Client, Forbidden, Invalid, NotFound
from kubeloop.metrics import REGISTRY
from kubeloop.operators.blackadder import build_operator, marks
from kubeloop.operators.blackadder.settings import BlackadderSettings
from kubeloop.packaging.deploy import undeploy
from kubeloop.testing import wait_for, wait_for_deletion, wait_for_events
from kubeloop.testing.operator import RunningOperator, run_operator
from kubeloop.testing.podsecurity import restricted

RUN = secrets.token_hex(3)
RUN_LABEL = "blackadder-test.kubeloop.dev/run"
AGENTS = "chaosagents.blackadder.io"
DEPLOYMENTS = "deployments.apps"


# --- fixtures and builders ------------------------------------------------------------------------------


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def chaos(kube_cluster: Any, kube_client: Client) -> AsyncIterator[RunningOperator]:
    """One blackadder for the module, in its own namespace, handling only this run's agents."""
    home = f"t-blackadder-{RUN}"
    await make_namespace(kube_client, home)
    op = build_operator(agent_selector=f"{RUN_LABEL}={RUN}")
    op.settings = BlackadderSettings(operator_namespace=home)  # as --operator-namespace (or the pod's) gives
    try:
        async with run_operator(kube_cluster, kube_client, op, home, watch_namespaces=None) as running:
            yield running
    finally:
        await drop_leftover_agents(kube_client)
        with contextlib.suppress(NotFound):
            await kube_client.delete("namespaces", home)


async def make_namespace(client: Client, name: str) -> str:
    await client.create({"apiVersion": "v1", "kind": "Namespace",
                         "metadata": {"name": name, "labels": {"kubeloop.dev/test": "true"}}})
    await wait_for(client, "serviceaccounts", "default", name, timeout=30)
    return name


async def drop_leftover_agents(client: Client) -> None:
    """A failed test must not leave agents (with finalizers nobody removes) in the shared cluster."""
    for agent in (await client.list(AGENTS, label_selector=f"{RUN_LABEL}={RUN}"))["items"]:
        name = agent["metadata"]["name"]
        with contextlib.suppress(NotFound):
            await client.patch(AGENTS, name, {"metadata": {"finalizers": None}})
            await client.delete(AGENTS, name)


@pytest_asyncio.fixture(loop_scope="session")
async def elsewhere(kube_client: Client) -> AsyncIterator[str]:
    """A second namespace for tests that need one."""
    name = await make_namespace(kube_client, f"t-blackadder-x-{secrets.token_hex(3)}")
    yield name
    with contextlib.suppress(NotFound):
        await kube_client.delete("namespaces", name)


def agent_body(name: str, namespaces: list[str], label: str | None = None, **spec: Any) -> dict[str, Any]:
    """A confined agent: only ``namespaces``, only objects labelled ``t=<label>``; quick rounds."""
    selector = {"matchLabels": {"t": label}} if label else None
    base: dict[str, Any] = {
        "namespaceSelector": {"matchExpressions": [
            {"key": "kubernetes.io/metadata.name", "operator": "In", "values": namespaces}]},
        "pauseDuration": 1, "minPodAgeSeconds": 0, "eagerness": 100,
    }
    if selector:
        base.update(podSelector=selector, deploymentSelector=selector, configMapSelector=selector)
    return {"apiVersion": "blackadder.io/v1beta1", "kind": "ChaosAgent",
            "metadata": {"name": f"{name}-{RUN}", "labels": {RUN_LABEL: RUN}}, "spec": {**base, **spec}}


@contextlib.asynccontextmanager
async def agent(client: Client, body: dict[str, Any]) -> AsyncIterator[str]:
    """Creates the agent; deletes it afterwards and waits for its finalizer (the restore) to finish."""
    created = await client.create(body)
    name = created["metadata"]["name"]
    try:
        yield name
    finally:
        with contextlib.suppress(NotFound):
            await client.delete(AGENTS, name)
        await wait_for_deletion(client, AGENTS, name, timeout=30)


def deployment(name: str, namespace: str, replicas: int, label: str) -> dict[str, Any]:
    labels = {"app": name, "t": label}
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name, "namespace": namespace, "labels": labels},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": labels},
                                  "spec": restricted({"containers": [{"name": "c", "image": "nginx"}]})}}}


def configmap(name: str, namespace: str, label: str, data: dict[str, str], **extra: Any) -> dict[str, Any]:
    meta = {"name": name, "namespace": namespace, "labels": {"t": label}, **extra.pop("metadata", {})}
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": data, **extra}


async def pod_quota(client: Client, namespace: str, pods: int) -> None:
    """Keeps cancerMode's 128 replicas from becoming 128 pods on a 2-core machine."""
    await client.create({"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "pods"},
                         "spec": {"hard": {"pods": str(pods)}}}, namespace)
    await wait_for(client, "resourcequotas", "pods", namespace, timeout=30,
                   predicate=lambda q: "pods" in (q.get("status") or {}).get("hard", {}))


async def available(client: Client, name: str, namespace: str, replicas: int) -> dict[str, Any]:
    return await wait_for(client, DEPLOYMENTS, name, namespace, timeout=90,
                          predicate=lambda d: (d.get("status") or {}).get("availableReplicas") == replicas,
                          description=f"{replicas} available replicas")


async def pod_uids(client: Client, namespace: str, label: str) -> set[str]:
    pods = (await client.list("pods", namespace, label_selector=f"t={label}"))["items"]
    return {p["metadata"]["uid"] for p in pods}


def status(agent_obj: dict[str, Any]) -> dict[str, Any]:
    return agent_obj.get("status") or {}


async def rounds(client: Client, name: str, n: int, timeout: float = 30) -> dict[str, Any]:
    return await wait_for(client, AGENTS, name, timeout=timeout, description=f"round {n}",
                          predicate=lambda a: (status(a).get("round") or 0) >= n)


async def counted(client: Client, name: str, mode: str, n: int = 1, timeout: float = 30) -> dict[str, Any]:
    return await wait_for(client, AGENTS, name, timeout=timeout, description=f"{n} {mode} action(s)",
                          predicate=lambda a: (status(a).get("counters") or {}).get(mode, 0) >= n)


def unmarked(obj: dict[str, Any]) -> bool:
    meta = obj["metadata"]
    return marks.AGENT not in (meta.get("labels") or {}) and not (
        set(meta.get("annotations") or {}) & set(marks.ANNOTATIONS))


def example(name: str) -> dict[str, Any]:
    text = resources.files("kubeloop.operators.blackadder").joinpath("examples", name).read_text()
    return yaml.safe_load(text)


# --- the article -----------------------------------------------------------------------------------------


async def test_article_manifests_validation_and_columns(kube_cluster: Any, kube_client: Client,
                                                        chaos: RunningOperator, namespace: str) -> None:
    too_eager = example("edmund-v1beta1-too-eager.yaml")
    too_eager["metadata"]["name"] = f"too-eager-{RUN}"
    with pytest.raises(Invalid) as refused:
        await kube_client.create(too_eager)
    assert "spec.eagerness: Invalid value: 200: spec.eagerness in body should be less than or equal to 100" \
        in refused.value.message, refused.value.message

    # The article's princeedmund (v1beta1), confined to this namespace and sped up: ipsum at 20%
    # rewrites some ConfigMap; tantrum tolerates 10 pods, so the 3 here survive.
    edmund = example("edmund-v1beta1.yaml")
    edmund["metadata"] = {"name": f"princeedmund-{RUN}", "labels": {RUN_LABEL: RUN}}
    edmund["spec"].update(pauseDuration=1, minPodAgeSeconds=0, seed=7, namespaceSelector={
        "matchLabels": {"kubernetes.io/metadata.name": namespace}})
    await kube_client.create(deployment("web", namespace, 3, "edmund"))
    for i in range(5):
        await kube_client.create(configmap(f"cm{i}", namespace, "edmund", {"greeting": "hello"}))
    await available(kube_client, "web", namespace, 3)
    before = await pod_uids(kube_client, namespace, "edmund")
    async with agent(kube_client, edmund) as name:
        got = await counted(kube_client, name, "ipsum", timeout=60)
        hit = {a["name"] for a in status(got)["recentActions"] if a["mode"] == "ipsum"}
        cm = await kube_client.get("configmaps", sorted(hit)[0], namespace)
        assert cm["data"]["greeting"].startswith("Lorem ipsum")
        assert status(got)["counters"]["tantrum"] == 0
        assert await pod_uids(kube_client, namespace, "edmund") == before
        table = (await asyncio.to_thread(kube_cluster.kubectl, "get", "ca", name)).stdout.split("\n")
        assert table[0].split() == ["NAME", "TANTRUM", "TOLERANCE", "CANCER", "IPSUM", "EAGERNESS", "PAUSE",
                                    "EXCLUDED"]
        assert table[1].split() == [name, "true", "10", "false", "true", "20", "1", '["kube-system"]']

    # The first draft (v1alpha1) is still served, and reads back as v1beta1 with the defaults.
    first = example("edmund.yaml")
    first["metadata"] = {"name": f"princeedmund-alpha-{RUN}", "labels": {RUN_LABEL: RUN}}
    first["spec"].update(suspend=True,
                         namespaceSelector={"matchLabels": {"kubernetes.io/metadata.name": namespace}})
    async with agent(kube_client, first) as name:
        stored = await wait_for(kube_client, AGENTS, name, timeout=20,
                                predicate=lambda a: bool(status(a).get("conditions")))
        assert stored["spec"]["tantrumMode"] is True and stored["spec"]["eagerness"] == 10
        assert status(stored)["conditions"][0]["reason"] == "Suspended"
    report = chaos.audit()
    assert report.ok, report.message


# --- tantrumMode ------------------------------------------------------------------------------------------


async def test_tantrum_tolerance_victims_and_replicasets(kube_client: Client, chaos: RunningOperator,
                                                         namespace: str) -> None:
    await kube_client.create(deployment("small", namespace, 2, "tantrum"))
    await available(kube_client, "small", namespace, 2)
    before = await pod_uids(kube_client, namespace, "tantrum")
    body = agent_body("tantrum", [namespace], "tantrum", tantrumMode=True, podTolerance=3)
    async with agent(kube_client, body) as name:
        # Two pods, tolerance three: rounds go by and nobody dies.
        got = await rounds(kube_client, name, 3)
        assert status(got)["counters"]["tantrum"] == 0
        assert await pod_uids(kube_client, namespace, "tantrum") == before
        # A PodDisruptionBudget allowing no disruption: the Eviction API says 429, the pods are spared.
        await kube_client.create({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
                                  "metadata": {"name": "small"},
                                  "spec": {"minAvailable": 2, "selector": {"matchLabels": {"app": "small"}}}},
                                 namespace)
        # AGENTS resolves to the preferred version, v1beta2, which names podTolerance minRunningPods.
        await kube_client.patch(AGENTS, name, {"spec": {"minRunningPods": 2,
                                                        "respectPodDisruptionBudgets": True}})
        got = await wait_for(kube_client, AGENTS, name, timeout=30, description="a pod spared",
                             predicate=lambda a: any(x["action"] == "spared"
                                                     for x in status(a).get("recentActions") or ()))
        assert status(got)["counters"]["tantrum"] == 0
        assert await pod_uids(kube_client, namespace, "tantrum") == before
        # Without the budget's say, pods die.
        await kube_client.patch(AGENTS, name, {"spec": {"respectPodDisruptionBudgets": False}})
        got = await counted(kube_client, name, "tantrum")
        await kube_client.patch(AGENTS, name, {"spec": {"suspend": True}})
        kills = [a for a in status(got)["recentActions"] if a["action"] == "killed"]
        # One owner, so at most one victim per round.
        assert len({a["round"] for a in kills}) == len(kills)
        victim = kills[0]["name"]
        # The ReplicaSet brings the pod count back.
        await wait_for(kube_client, DEPLOYMENTS, "small", namespace, timeout=60,
                       predicate=lambda d: d["status"].get("availableReplicas") == 2
                       and d["status"].get("replicas") == 2)
        with pytest.raises(NotFound):
            await kube_client.get("pods", victim, namespace)
        after = await pod_uids(kube_client, namespace, "tantrum")
        assert len(after) == 2 and after != before
        await wait_for_events(kube_client, namespace, victim, "PodKilled")
        assert REGISTRY.get_sample_value("blackadder_actions_total", {
            "agent": name, "mode": "tantrum", "namespace": namespace, "dry_run": "false"}) >= 1
    report = chaos.audit()
    assert report.ok, report.message


# --- where: excluded namespaces --------------------------------------------------------------------------


async def test_acts_only_outside_excluded_namespaces(kube_client: Client, chaos: RunningOperator,
                                                     namespace: str, elsewhere: str) -> None:
    label = f"where-{RUN}"
    home = chaos.client.default_namespace  # the operator's own namespace
    places = [namespace, elsewhere, "kube-system", home]
    await pod_quota(kube_client, namespace, 3)
    try:
        for ns in places:
            await kube_client.create(deployment(label, ns, 1, label))
            await kube_client.create(configmap(label, ns, label, {"k": "v"}))
        for ns in places:
            await available(kube_client, label, ns, 1)
        pods_before = {ns: await pod_uids(kube_client, ns, label) for ns in places}
        # kube-system and the operator's namespace are in the selector but not listed as excluded.
        body = agent_body("where", places, label, tantrumMode=True, cancerMode=True, ipsumMode=True,
                          excludedNamespaces=[elsewhere])
        async with agent(kube_client, body) as name:
            for mode in ("tantrum", "cancer", "ipsum"):
                await counted(kube_client, name, mode)
            got = await rounds(kube_client, name, status(await kube_client.get(AGENTS, name))["round"] + 2)
            touched = {a["namespace"] for a in status(got)["recentActions"]}
            assert touched == {namespace}
            for ns in places[1:]:
                assert (await kube_client.get(DEPLOYMENTS, label, ns))["spec"]["replicas"] == 1, ns
                assert (await kube_client.get("configmaps", label, ns))["data"] == {"k": "v"}, ns
                assert await pod_uids(kube_client, ns, label) == pods_before[ns], ns
            assert (await kube_client.get(DEPLOYMENTS, label, namespace))["spec"]["replicas"] > 1
    finally:
        for res in (DEPLOYMENTS, "configmaps"):
            with contextlib.suppress(NotFound):
                await kube_client.delete(res, label, "kube-system")
    report = chaos.audit()
    assert report.ok, report.message


# --- cancerMode -------------------------------------------------------------------------------------------


async def test_cancer_doubles_caps_skips_and_restores(kube_client: Client, chaos: RunningOperator,
                                                      namespace: str) -> None:
    await pod_quota(kube_client, namespace, 2)  # 128 replicas, but at most 2 pods
    await kube_client.create(deployment("grow", namespace, 40, "cancer"))
    await kube_client.create(deployment("zero", namespace, 0, "cancer"))
    await kube_client.create(deployment("autoscaled", namespace, 1, "cancer"))
    await kube_client.create({
        "apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": {"name": "autoscaled"},
        "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "autoscaled"},
                 "minReplicas": 1, "maxReplicas": 3}}, namespace)
    # The article's doubling up to 128 needs the budget widened (the defaults add 4 per round, 16 in all).
    body = agent_body("cancer", [namespace], "cancer", cancerMode=True, maxExtraReplicasPerRound=200,
                      maxExtraReplicas=500)
    async with agent(kube_client, body) as name:
        grown = await wait_for(kube_client, DEPLOYMENTS, "grow", namespace, timeout=30,
                               predicate=lambda d: d["spec"]["replicas"] == 128, description="128 replicas")
        annotations = grown["metadata"]["annotations"]
        assert annotations[marks.ORIGINAL_REPLICAS] == "40" and annotations[marks.CHAOS_REPLICAS] == "128"
        got = await rounds(kube_client, name, status(await kube_client.get(AGENTS, name))["round"] + 2)
        assert (await kube_client.get(DEPLOYMENTS, "grow", namespace))["spec"]["replicas"] == 128  # the cap
        assert [a["detail"] for a in status(got)["recentActions"]] == ["40 -> 80", "80 -> 128"]
        assert (await kube_client.get(DEPLOYMENTS, "zero", namespace))["spec"]["replicas"] == 0
        autoscaled = await kube_client.get(DEPLOYMENTS, "autoscaled", namespace)
        assert autoscaled["spec"]["replicas"] == 1 and unmarked(autoscaled)
        # Switching the mode off restores exactly, and removes every mark.
        await kube_client.patch(AGENTS, name, {"spec": {"cancerMode": False}})
        restored = await wait_for(kube_client, DEPLOYMENTS, "grow", namespace, timeout=20,
                                  predicate=lambda d: d["spec"]["replicas"] == 40, description="40 again")
        assert unmarked(restored)
    report = chaos.audit()
    assert report.ok, report.message


# --- ipsumMode --------------------------------------------------------------------------------------------


async def test_ipsum_rewrites_skips_protected_and_restores(kube_client: Client, chaos: RunningOperator,
                                                          namespace: str) -> None:
    home = chaos.client.default_namespace
    plain = {"a": "1", "b": "two\nlines"}
    big = {"blob": "x" * (70 * 1024)}  # beyond the annotation limit: backed up in a ConfigMap
    await kube_client.create(configmap("plain", namespace, "ipsum", plain))
    await kube_client.create(configmap("big", namespace, "ipsum", big))
    await kube_client.create(configmap("frozen", namespace, "ipsum", {"k": "v"}, immutable=True))
    await kube_client.create(configmap("opted-out", namespace, "ipsum", {"k": "v"},
                                       metadata={"annotations": {"blackadder.io/exclude": "true"}}))
    owner = await kube_client.create(configmap("owner", namespace, "owner", {"k": "v"}))
    await kube_client.create(configmap("owned", namespace, "ipsum", {"k": "v"}, metadata={"ownerReferences": [
        {"apiVersion": "v1", "kind": "ConfigMap", "name": "owner", "uid": owner["metadata"]["uid"],
         "controller": True}]}))
    # The controller-manager publishes it into a new namespace on its own time (seconds, under load).
    root_ca = await wait_for(kube_client, "configmaps", "kube-root-ca.crt", namespace, timeout=60,
                             description="the controller-manager to publish kube-root-ca.crt")
    body = agent_body("ipsum", [namespace], ipsumMode=True)  # no label selector: kube-root-ca.crt is in reach
    async with agent(kube_client, body) as name:
        await counted(kube_client, name, "ipsum", 3)  # plain, big and owner
        for cm in ("plain", "big"):
            rewritten = await kube_client.get("configmaps", cm, namespace)
            assert all(v.startswith("Lorem ipsum") for v in rewritten["data"].values())
            assert set(rewritten["data"]) == set(plain if cm == "plain" else big)
        backups = (await kube_client.list("configmaps", home,
                                          label_selector=f"{marks.BACKUP_FOR}={name}"))["items"]
        assert [b["data"] for b in backups] == [big]
        await rounds(kube_client, name, status(await kube_client.get(AGENTS, name))["round"] + 1)
        for cm in ("frozen", "opted-out", "owned"):
            assert (await kube_client.get("configmaps", cm, namespace))["data"] == {"k": "v"}, cm
        assert (await kube_client.get("configmaps", "kube-root-ca.crt", namespace))["data"] == root_ca["data"]
        # Switching the mode off puts the data back exactly, drops the marks and the backup.
        await kube_client.patch(AGENTS, name, {"spec": {"ipsumMode": False}})
        for cm, data in (("plain", plain), ("big", big)):
            back = await wait_for(kube_client, "configmaps", cm, namespace, timeout=20,
                                  predicate=lambda c, data=data: c.get("data") == data)
            assert unmarked(back)
        assert not (await kube_client.list("configmaps", home,
                                           label_selector=f"{marks.BACKUP_FOR}={name}"))["items"]
    report = chaos.audit()
    assert report.ok, report.message


async def test_deleting_the_agent_restores_everything(kube_client: Client, chaos: RunningOperator,
                                                      namespace: str) -> None:
    await pod_quota(kube_client, namespace, 2)
    await kube_client.create(deployment("web", namespace, 1, "gone"))
    await kube_client.create(configmap("settings", namespace, "gone", {"mode": "calm"}))
    body = agent_body("gone", [namespace], "gone", cancerMode=True, ipsumMode=True)
    async with agent(kube_client, body) as name:
        await counted(kube_client, name, "cancer")
        await counted(kube_client, name, "ipsum")
    # The agent is gone (its finalizer ran): everything is as before, with no marks left.
    dep = await kube_client.get(DEPLOYMENTS, "web", namespace)
    cm = await kube_client.get("configmaps", "settings", namespace)
    assert dep["spec"]["replicas"] == 1 and unmarked(dep)
    assert cm["data"] == {"mode": "calm"} and unmarked(cm)
    report = chaos.audit()
    assert report.ok, report.message


async def test_changes_are_undone_after_restore_after_seconds(kube_client: Client, chaos: RunningOperator,
                                                             namespace: str) -> None:
    await pod_quota(kube_client, namespace, 2)
    await kube_client.create(deployment("web", namespace, 1, "ttl"))
    await kube_client.create(configmap("settings", namespace, "ttl", {"mode": "calm"}))
    # One round an hour, changes undone after two seconds: the restore does not wait for a round.
    body = agent_body("ttl", [namespace], "ttl", cancerMode=True, ipsumMode=True, pauseDuration=3600,
                      restoreAfterSeconds=2)
    async with agent(kube_client, body) as name:
        await counted(kube_client, name, "cancer")
        got = await counted(kube_client, name, "restored", 2, timeout=20)
        assert status(got)["round"] == 1
        dep = await kube_client.get(DEPLOYMENTS, "web", namespace)
        cm = await kube_client.get("configmaps", "settings", namespace)
        assert dep["spec"]["replicas"] == 1 and unmarked(dep)
        assert cm["data"] == {"mode": "calm"} and unmarked(cm)
    report = chaos.audit()
    assert report.ok, report.message


# --- dry run, seeds, suspend, time windows -----------------------------------------------------------------


def choices(agent_obj: dict[str, Any], up_to: int) -> list[tuple[int, str, str, str]]:
    return sorted((a["round"], a["mode"], a["namespace"], a["name"])
                  for a in status(agent_obj).get("recentActions") or () if a["round"] <= up_to)


async def test_dry_run_changes_nothing_and_same_seed_same_victims(kube_client: Client, chaos: RunningOperator,
                                                                  namespace: str) -> None:
    await kube_client.create(deployment("web", namespace, 4, "dry"))
    for i in range(3):
        await kube_client.create(configmap(f"cm{i}", namespace, "dry", {"k": "v"}))
    await available(kube_client, "web", namespace, 4)
    pods = await pod_uids(kube_client, namespace, "dry")
    spec = dict(tantrumMode=True, cancerMode=True, ipsumMode=True, dryRun=True, eagerness=50, seed=1983)
    async with (agent(kube_client, agent_body("dry-a", [namespace], "dry", **spec)) as a,
                agent(kube_client, agent_body("dry-b", [namespace], "dry", **spec)) as b):
        first, second = await rounds(kube_client, a, 4), await rounds(kube_client, b, 4)
        assert choices(first, 4) == choices(second, 4) and choices(first, 4)
        assert all(x.get("dryRun") for x in status(first)["recentActions"])
        assert status(first)["seed"] == 1983
    assert await pod_uids(kube_client, namespace, "dry") == pods
    dep = await kube_client.get(DEPLOYMENTS, "web", namespace)
    assert dep["spec"]["replicas"] == 4 and unmarked(dep)
    for i in range(3):
        cm = await kube_client.get("configmaps", f"cm{i}", namespace)
        assert cm["data"] == {"k": "v"} and unmarked(cm)
    await chaos.events_sent()  # four rounds seen: the first rounds' Events were queued
    events = (await kube_client.list("events.events.k8s.io", namespace))["items"]
    assert any(e["reason"].startswith("DryRun") for e in events)
    report = chaos.audit()
    assert report.ok, report.message


async def test_suspended_and_excluded_times_do_nothing(kube_client: Client, chaos: RunningOperator,
                                                       namespace: str) -> None:
    await kube_client.create(deployment("web", namespace, 1, "idle"))
    await kube_client.create(configmap("settings", namespace, "idle", {"k": "v"}))
    await available(kube_client, "web", namespace, 1)
    pods = await pod_uids(kube_client, namespace, "idle")
    wild = dict(tantrumMode=True, cancerMode=True, ipsumMode=True)
    every_day = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
    async with (agent(kube_client, agent_body("suspended", [namespace], "idle", suspend=True, **wild)) as s,
                agent(kube_client, agent_body("closed", [namespace], "idle", excludedWeekdays=every_day,
                                              timezone="Europe/Berlin", **wild)) as w,
                agent(kube_client, agent_body("all-day", [namespace], "idle", dryRun=True,
                                              excludedTimesOfDay=["00:00-00:00"], **wild)) as d,
                agent(kube_client, agent_body("clock", [namespace], "nothing-matches")) as clock):
        await rounds(kube_client, clock, 3)  # a harmless agent as the clock: time passed
        for name, reason in ((s, "Suspended"), (w, "ExcludedTime"), (d, "ExcludedTime")):
            got = await kube_client.get(AGENTS, name)
            assert (status(got).get("round") or 0) == 0, name
            assert status(got)["conditions"][0]["status"] == "False"
            assert status(got)["conditions"][0]["reason"] == reason
    assert await pod_uids(kube_client, namespace, "idle") == pods
    assert (await kube_client.get(DEPLOYMENTS, "web", namespace))["spec"]["replicas"] == 1
    assert (await kube_client.get("configmaps", "settings", namespace))["data"] == {"k": "v"}
    report = chaos.audit()
    assert report.ok, report.message


# --- safe by default: the operator's namespace, budgets, RBAC, tenants ----------------------------------------


async def test_articles_demo_kills_with_a_local_kubeconfig(kube_cluster: Any, kube_client: Client,
                                                           namespace: str) -> None:
    """Run outside a cluster with a kubeconfig whose context namespace is where the article's demo
    lives: that namespace is the user's, not the operator's, so the demo's pods die as in the article
    (taking it for the operator's own made blackadder do nothing at all)."""
    local = f"{RUN}-local"
    op = build_operator("blackadder-local", agent_selector=f"{RUN_LABEL}={local}")  # no --operator-namespace
    await kube_client.create(deployment("my-dep", namespace, 3, "article"))  # kubectl create deployment …
    await available(kube_client, "my-dep", namespace, 3)
    pods = (await kube_client.list("pods", namespace, label_selector="t=article"))["items"]
    before = {p["metadata"]["name"] for p in pods}
    edmund = example("edmund-v1beta1.yaml")
    edmund["metadata"] = {"name": f"princeedmund-local-{RUN}", "labels": {RUN_LABEL: local}}
    edmund["spec"].update(podTolerance=3, eagerness=100, pauseDuration=1, minPodAgeSeconds=0, seed=1983,
                          namespaceSelector={"matchLabels": {"kubernetes.io/metadata.name": namespace}})
    async with run_operator(kube_cluster, kube_client, op, namespace, watch_namespaces=None) as running:
        assert running.client.default_namespace == namespace  # the kubeconfig's context namespace
        async with agent(kube_client, edmund) as name:
            got = await counted(kube_client, name, "tantrum", timeout=30)
            await kube_client.patch(AGENTS, name, {"spec": {"suspend": True}})
            killed = {a["name"] for a in status(got)["recentActions"] if a["action"] == "killed"}
            assert killed and killed <= before
            assert {a["namespace"] for a in status(got)["recentActions"]} == {namespace}
    report = running.audit()
    assert report.ok, report.message


async def test_cancer_stays_within_its_replica_budget(kube_client: Client, chaos: RunningOperator,
                                                      namespace: str) -> None:
    await pod_quota(kube_client, namespace, 2)  # the replicas are what counts here, not the pods
    for name in ("a", "b", "c"):
        await kube_client.create(deployment(name, namespace, 10, "budget"))
    # Doubling all three would add 30 replicas; 5 per round and 12 in all is what the agent may add.
    body = agent_body("budget", [namespace], "budget", cancerMode=True, maxExtraReplicasPerRound=5,
                      maxExtraReplicas=12)
    async with agent(kube_client, body) as name:
        got = await wait_for(kube_client, AGENTS, name, timeout=30, description="12 extra replicas",
                             predicate=lambda a: status(a).get("extraReplicas") == 12)
        got = await rounds(kube_client, name, status(got)["round"] + 2)
        assert status(got)["extraReplicas"] == 12
        replicas = [(await kube_client.get(DEPLOYMENTS, n, namespace))["spec"]["replicas"] for n in "abc"]
        assert sum(replicas) == 30 + 12, replicas
        per_round: dict[int, int] = {}
        for a in status(got)["recentActions"]:
            before, after = (int(x) for x in a["detail"].split(" -> "))
            per_round[a["round"]] = per_round.get(a["round"], 0) + after - before
        assert max(per_round.values()) <= 5 and sum(per_round.values()) == 12, per_round
        # Restoring gives the budget back and the status says so.
        await kube_client.patch(AGENTS, name, {"spec": {"cancerMode": False}})
        got = await wait_for(kube_client, AGENTS, name, timeout=30, description="no extra replicas",
                             predicate=lambda a: status(a).get("extraReplicas") == 0)
        for n in "abc":
            assert (await kube_client.get(DEPLOYMENTS, n, namespace))["spec"]["replicas"] == 10
    report = chaos.audit()
    assert report.ok, report.message


async def may(client: Client, user: str, verb: str, resource: str, namespace: str) -> bool:
    """The API server's own answer: may ``user`` do ``verb`` on ``resource`` in ``namespace``?"""
    review = await client.create({
        "apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
        "spec": {"user": user, "resourceAttributes": {"verb": verb, "resource": resource,
                                                      "namespace": namespace}}})
    return bool(review["status"].get("allowed"))


async def test_configmap_create_and_delete_only_in_the_operators_namespace(
        kube_client: Client, chaos: RunningOperator, namespace: str) -> None:
    home = chaos.client.default_namespace
    operator = f"system:serviceaccount:{home}:blackadder"
    for verb in ("get", "list", "patch"):
        assert await may(kube_client, operator, verb, "configmaps", namespace), verb
    for verb in ("create", "delete"):
        assert not await may(kube_client, operator, verb, "configmaps", namespace), verb
        assert await may(kube_client, operator, verb, "configmaps", home), verb


@contextlib.asynccontextmanager
async def tenant_client(kube_cluster: Any, admin: Client, namespace: str,
                        tmp_path: Any) -> AsyncIterator[Client]:
    """ServiceAccount ``tenant`` with a Role in ``namespace`` that allows everything on the objects
    blackadder touches there, and on ChaosAgents (a Role cannot grant cluster-scoped kinds: that is
    the point being tested)."""
    rules = [{"apiGroups": [""], "resources": ["pods", "configmaps"], "verbs": ["*"]},
             {"apiGroups": ["apps"], "resources": ["deployments"], "verbs": ["*"]},
             {"apiGroups": ["blackadder.io"], "resources": ["chaosagents"], "verbs": ["*"]}]
    ref = {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "tenant"}
    await admin.create({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "tenant"}}, namespace)
    await admin.create({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
                        "metadata": {"name": "tenant"}, "rules": rules}, namespace)
    await admin.create({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
                        "metadata": {"name": "tenant"}, "roleRef": ref, "subjects": [
                            {"kind": "ServiceAccount", "name": "tenant", "namespace": namespace}]}, namespace)
    path = await asyncio.to_thread(kube_cluster.service_account_kubeconfig, namespace, "tenant",
                                   tmp_path / "tenant-kubeconfig")
    client = await Client.from_kubeconfig(str(path))
    try:
        yield client
    finally:
        await client.close()


async def test_a_tenant_of_team_a_cannot_reach_outside_it(kube_cluster: Any, kube_client: Client,
                                                          chaos: RunningOperator, namespace: str,
                                                          elsewhere: str, tmp_path: Any) -> None:
    team_a, victim = namespace, elsewhere
    secret = {"db-password": "hunter2"}
    await kube_client.create(configmap("victim", victim, "victim", secret))
    async with tenant_client(kube_cluster, kube_client, team_a, tmp_path) as tenant:
        # 1. ChaosAgents are cluster-scoped: a namespaced Role cannot let anyone create one.
        body = agent_body("tenant", [team_a], "tenant", tantrumMode=True, cancerMode=True)
        with pytest.raises(Forbidden):
            await tenant.create(body)
        # 2. But the marks blackadder restores from sit on the tenant's own objects. An admin's agent
        # (ipsum off, so it restores what it holds on every round) must not follow a forged backup
        # reference into another namespace: that would copy the victim's data into team-a and
        # delete the victim.
        quiet = agent_body("restorer", [team_a], "nothing-matches")
        async with agent(kube_client, quiet) as name:
            data = {"k": "v"}
            await tenant.create(configmap("bait", team_a, "bait", data, metadata={
                "labels": {"t": "bait", marks.AGENT: marks.agent_label(name)},
                "annotations": {marks.BACKUP: f"{victim}/victim", marks.CHAOS_DIGEST: marks.digest(data)}}))
            bait = await wait_for(kube_client, "configmaps", "bait", team_a, timeout=30, predicate=unmarked,
                                  description="the bait released")
            assert bait["data"] == data
            assert (await kube_client.get("configmaps", "victim", victim))["data"] == secret
            # A forged replica count neither scales nor stops the agent.
            forged = deployment("bait", team_a, 1, "bait")
            forged["metadata"]["labels"][marks.AGENT] = marks.agent_label(name)
            forged["metadata"]["annotations"] = {marks.ORIGINAL_REPLICAS: "lots", marks.CHAOS_REPLICAS: "1"}
            await tenant.create(forged)
            dep = await wait_for(kube_client, DEPLOYMENTS, "bait", team_a, timeout=30, predicate=unmarked,
                                 description="the forged Deployment released")
            assert dep["spec"]["replicas"] == 1
            await rounds(kube_client, name, status(await kube_client.get(AGENTS, name))["round"] + 2)
    report = chaos.audit()
    assert report.ok, report.message


async def test_undeploy_deletes_agents_first_and_waits_for_their_restore(
        kube_client: Client, chaos: RunningOperator, namespace: str) -> None:
    """``kubeloop undeploy`` deletes the ChaosAgents while the operator still runs, so its finalizer puts
    back what they changed; only then would the operator itself go."""
    await pod_quota(kube_client, namespace, 2)
    await kube_client.create(deployment("web", namespace, 1, "undeploy"))
    body = agent_body("undeploy", [namespace], "undeploy", cancerMode=True)
    created = await kube_client.create(body)
    name = created["metadata"]["name"]
    await counted(kube_client, name, "cancer")
    home = chaos.client.default_namespace
    objs = manifests("blackadder", build_operator(), home)
    lines: list[str] = []
    report = await undeploy(kube_client, objs, log=lines.append, timeout=30)  # the CLI's defaults
    with pytest.raises(NotFound):
        await kube_client.get(AGENTS, name)
    dep = await kube_client.get(DEPLOYMENTS, "web", namespace)
    assert dep["spec"]["replicas"] == 1 and unmarked(dep)
    assert not report.stopped and f"ChaosAgent {name}" in report.deleted, lines
    # What `kubeloop deploy` did not apply (here: the test's RBAC and namespace) is left alone.
    assert any("not applied by kubeloop deploy" in k for k in report.kept), report.kept
    assert await kube_client.get("namespaces", home)
