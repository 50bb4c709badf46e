"""blackadder's versions on the real control plane, under its generated RBAC: agents stored before
``v1beta2`` existed (the CRD as main shipped it: ``v1alpha1`` and ``v1beta1``, no conversion) read as
``v1beta2`` with the new names once the operator serves its conversion webhook, and are reconciled
with their values; the article's ``v1alpha1`` manifest applies verbatim and reads back in every version.

Every agent here is confined to this test's namespace and objects (see test_op_blackadder.py); the
article's verbatim agent is only handled once it is labelled and suspended.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import secrets
from datetime import datetime
from importlib import resources
from typing import Any

import pytest
import yaml

from kubeloop.client import Client, NotFound
from kubeloop.operators.blackadder import ChaosAgentV1Alpha1, ChaosAgentV1Beta1, build_operator
from kubeloop.operators.blackadder.settings import BlackadderSettings
from kubeloop.resources import crds_for
from kubeloop.testing import wait_for, wait_for_crd, wait_for_deletion
from kubeloop.testing.operator import run_operator
from kubeloop.testing.session import CRD_LABEL, current

RUN = secrets.token_hex(3)
RUN_LABEL = "blackadder-versions-test.kubeloop.dev/run"
CRD = "chaosagents.blackadder.io"
V1ALPHA1, V1BETA1, V1BETA2 = (f"blackadder.io/{v}/chaosagents" for v in ("v1alpha1", "v1beta1", "v1beta2"))
EDMUND = resources.files("kubeloop.operators.blackadder").joinpath("examples", "edmund.yaml")


async def install_the_crd_before_v1beta2(client: Client) -> None:
    """The CRD as it was before v1beta2: the spokes' schemas (unchanged since), storage v1beta1, no
    conversion. Replaced whole, so that no earlier run's v1beta2 or webhook stanza survives."""
    (crd,) = crds_for([ChaosAgentV1Beta1, ChaosAgentV1Alpha1])
    crd["spec"]["conversion"] = {"strategy": "None"}
    # The test's own CRD, marked as the test kit marks what it installs, so that run_operator may upgrade
    # it (the kit changes no CRD that it did not make) and the session removes it at its end.
    crd["metadata"].setdefault("labels", {})[CRD_LABEL] = "true"
    current().crds.add(CRD)
    try:
        live = await client.get("customresourcedefinitions", CRD)
    except NotFound:
        await client.create(crd)
    else:
        if (live["metadata"].get("labels") or {}).get(CRD_LABEL) != "true":
            pytest.skip(f"{CRD} exists on this cluster and the test kit did not make it: the upgrade is tested "
                        "only on a cluster whose ChaosAgent CRD is the tests' own")
        crd["metadata"]["resourceVersion"] = live["metadata"]["resourceVersion"]
        await client.replace(crd)
    await wait_for(client, "customresourcedefinitions", CRD, timeout=30, description="the old CRD",
                   predicate=lambda c: [v["name"] for v in c["spec"]["versions"]] == ["v1beta1", "v1alpha1"]
                   and c["spec"]["conversion"]["strategy"] == "None")
    await wait_for_crd(client, CRD)


def old_agent(namespace: str) -> dict[str, Any]:
    """A v1beta1 agent in the article's names: ipsum on this test's ConfigMaps only, a long pause."""
    return {"apiVersion": "blackadder.io/v1beta1", "kind": "ChaosAgent",
            "metadata": {"name": f"stored-before-{RUN}", "labels": {RUN_LABEL: RUN}},
            "spec": {"ipsumMode": True, "tantrumMode": True, "podTolerance": 3, "pauseDuration": 3600,
                     "eagerness": 100, "seed": 7, "minPodAgeSeconds": 0,
                     "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": namespace}},
                     "podSelector": {"matchLabels": {"t": RUN}},
                     "configMapSelector": {"matchLabels": {"t": RUN}}}}


def kubectl_get(cluster: Any, version: str, name: str) -> dict[str, Any]:
    proc = cluster.kubectl("get", f"chaosagents.{version}.blackadder.io", name, "-o", "json")
    return json.loads(proc.stdout)


def counters(agent: dict[str, Any]) -> dict[str, int]:
    return (agent.get("status") or {}).get("counters") or {}


def seconds_between(status: dict[str, Any]) -> float:
    last, nxt = (datetime.fromisoformat(status[k].replace("Z", "+00:00")) for k in ("lastRoundTime", "nextRoundTime"))
    return (nxt - last).total_seconds()


async def test_agents_stored_before_v1beta2_and_the_articles_manifest_convert_and_reconcile(
        kube_cluster: Any, kube_client: Client, namespace: str) -> None:
    await install_the_crd_before_v1beta2(kube_client)
    stored = await kube_client.create(old_agent(namespace))
    name = stored["metadata"]["name"]
    await kube_client.create({"apiVersion": "v1", "kind": "ConfigMap", "data": {"greeting": "hello"},
                              "metadata": {"name": "victim", "namespace": namespace, "labels": {"t": RUN}}})
    home = f"t-ba-versions-{RUN}"
    await kube_client.create({"apiVersion": "v1", "kind": "Namespace",
                              "metadata": {"name": home, "labels": {"kubeloop.dev/test": "true"}}})
    await wait_for(kube_client, "serviceaccounts", "default", home, timeout=30)
    op = build_operator(agent_selector=f"{RUN_LABEL}={RUN}")
    op.settings = BlackadderSettings(operator_namespace=home)
    try:
        async with run_operator(kube_cluster, kube_client, op, home, watch_namespaces=None) as running:
            crd = await kube_client.get("customresourcedefinitions", CRD)
            assert crd["spec"]["conversion"]["strategy"] == "Webhook"
            assert [v["name"] for v in crd["spec"]["versions"] if v["storage"]] == ["v1beta1"]
            await reads_in_every_version(kube_cluster, kube_client, name)
            # Reconciled from the hub: one ipsum round, and the next one pauseDuration (now pauseSeconds)
            # later; the status the operator wrote through v1beta2 is stored and read in v1beta1.
            done = await wait_for(kube_client, V1BETA1, name, timeout=60, description="the first round",
                                  predicate=lambda a: bool(counters(a).get("ipsum")))
            assert seconds_between(done["status"]) == 3600
            cm = await kube_client.get("configmaps", "victim", namespace)
            assert cm["data"]["greeting"].startswith("Lorem ipsum")
            await the_articles_manifest_applies_verbatim(kube_cluster, kube_client)
            # Deleting restores what the agent changed: the finalizer runs on the hub too.
            await kube_client.delete(V1BETA1, name)
            await wait_for_deletion(kube_client, V1BETA1, name, timeout=30)
            assert (await kube_client.get("configmaps", "victim", namespace))["data"] == {"greeting": "hello"}
        report = running.audit()
        assert report.ok, report.message
    finally:
        for agent in ("princeedmund", name):
            with contextlib.suppress(NotFound):
                await kube_client.patch(V1BETA1, agent, {"metadata": {"finalizers": None}})
                await kube_client.delete(V1BETA1, agent)
        with contextlib.suppress(NotFound):
            await kube_client.delete("namespaces", home)


async def reads_in_every_version(cluster: Any, client: Client, name: str) -> None:
    """The agent stored as v1beta1 before v1beta2 existed reads with the new names in v1beta2 (the
    client and kubectl), with the old ones in v1alpha1 and v1beta1."""
    hub = await client.get(V1BETA2, name)
    assert hub["apiVersion"] == "blackadder.io/v1beta2"
    assert (hub["spec"]["minRunningPods"], hub["spec"]["pauseSeconds"]) == (3, 3600)
    assert not {"podTolerance", "pauseDuration"} & set(hub["spec"])
    for version in ("v1alpha1", "v1beta1"):
        spoke = await asyncio.to_thread(kubectl_get, cluster, version, name)
        assert (spoke["spec"]["podTolerance"], spoke["spec"]["pauseDuration"]) == (3, 3600), version
        assert not {"minRunningPods", "pauseSeconds"} & set(spoke["spec"]), version
    assert (await asyncio.to_thread(kubectl_get, cluster, "v1beta2", name))["spec"]["minRunningPods"] == 3


async def the_articles_manifest_applies_verbatim(cluster: Any, client: Client) -> None:
    """``kubectl apply -f examples/edmund.yaml`` (v1alpha1) as the article does; it reads as v1beta2 with
    the new names and back as v1alpha1 unchanged; labelled for this run and suspended (so that its
    cluster-wide tantrum does nothing), the operator reconciles it."""
    manifest = yaml.safe_load(EDMUND.read_text())
    proc = await asyncio.to_thread(cluster.kubectl, "apply", "-f", str(EDMUND))
    assert "chaosagent.blackadder.io/princeedmund created" in proc.stdout, proc.stdout
    hub = await client.get(V1BETA2, "princeedmund")
    assert (hub["spec"]["tantrumMode"], hub["spec"]["minRunningPods"], hub["spec"]["pauseSeconds"]) == (True, 10, 30)
    alpha = await asyncio.to_thread(kubectl_get, cluster, "v1alpha1", "princeedmund")
    assert {k: alpha["spec"][k] for k in manifest["spec"]} == manifest["spec"]
    await client.patch(V1ALPHA1, "princeedmund", {"metadata": {"labels": {RUN_LABEL: RUN}}, "spec": {"suspend": True}})
    reconciled = await wait_for(client, V1ALPHA1, "princeedmund", timeout=30, description="the Suspended condition",
                                predicate=lambda a: any(c.get("reason") == "Suspended"
                                                        for c in (a.get("status") or {}).get("conditions") or ()))
    assert reconciled["apiVersion"] == "blackadder.io/v1alpha1" and reconciled["spec"]["podTolerance"] == 10
    # Applying the article's file again changes nothing it set, and keeps working.
    again = await asyncio.to_thread(cluster.kubectl, "apply", "-f", str(EDMUND))
    assert "princeedmund" in again.stdout
    await client.delete(V1ALPHA1, "princeedmund")
    await wait_for_deletion(client, V1ALPHA1, "princeedmund", timeout=30)
