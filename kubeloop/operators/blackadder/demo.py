"""``kubeloop demo``: Prince Edmund loose in one namespace — pods killed and recreated, a Deployment
doubled, a ConfigMap turned to lorem ipsum — and then every reversible change undone."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import Any

import kubeloop
from kubeloop import NotFound, wait_for, wait_for_deletion
from kubeloop.operators.blackadder import build_operator
from kubeloop.testing import install_crds

NAMESPACE = "blackadder-demo"
AGENTS = "chaosagents.blackadder.io"
DEPLOYMENTS = "deployments.apps"
DEMO_LABEL = "blackadder.io/demo"
FIELD_MANAGER = "kubeloop-demo"


async def scenario(client: kubeloop.Client, say: Callable[[str], None]) -> None:
    op = build_operator(agent_selector=f"{DEMO_LABEL}=true")  # only the demo's agent, never anyone else's
    await install_crds(client, op)
    say("installed CRD chaosagents.blackadder.io (v1alpha1, v1beta1 and v1beta2, short name ca)")
    await _victims(client, say)
    manager = kubeloop.Manager(client, kubeloop.ManagerOptions(
        metrics_bind_address="0", health_probe_bind_address="0", freeze_gc=False), name=op.name)
    manager.add_operator(op)
    task = asyncio.create_task(manager.run())
    try:
        await asyncio.wait_for(manager.started.wait(), 60)
        say("blackadder is running in-process")
        await _havoc_and_reversal(client, say)
    finally:
        manager.stop()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(task, 30)
        with contextlib.suppress(NotFound):
            await client.delete("namespaces", NAMESPACE)
        say(f"removed namespace {NAMESPACE}; blackadder stopped")


async def _victims(client: kubeloop.Client, say: Callable[[str], None]) -> None:
    await client.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}},
                       field_manager=FIELD_MANAGER)
    await wait_for(client, "serviceaccounts", "default", NAMESPACE, timeout=30)
    # A quota keeps cancerMode's doubling from becoming a hundred pods on a laptop.
    quota = {"apiVersion": "v1", "kind": "ResourceQuota", "metadata": _meta("pods"),
             "spec": {"hard": {"pods": "6"}}}
    baldrick = {
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": _meta("baldrick"),
        "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "baldrick"}}, "template": {
            "metadata": {"labels": {"app": "baldrick"}},
            "spec": {"containers": [{"name": "turnip", "image": "nginx:1.27"}]}}}}
    plan = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": _meta("cunning-plan"),
            "data": {"plan": "disguise ourselves as turnips"}}
    for obj in (quota, baldrick, plan):
        await client.apply(obj, field_manager=FIELD_MANAGER)
    await wait_for(client, DEPLOYMENTS, "baldrick", NAMESPACE, timeout=120,
                   predicate=lambda d: (d.get("status") or {}).get("availableReplicas") == 3,
                   description="Deployment baldrick to be 3/3 available")
    say(f"namespace {NAMESPACE}: Deployment baldrick (3 pods Running on kwok nodes), ConfigMap cunning-plan")


def _reached(round_no: int) -> Callable[[dict[str, Any]], bool]:
    return lambda agent: (agent.get("status") or {}).get("round", 0) >= round_no


def _meta(name: str) -> dict[str, str]:
    return {"name": name, "namespace": NAMESPACE}


def _agent() -> dict[str, Any]:
    """The article's princeedmund, confined to the demo namespace, seeded and quick."""
    return {"apiVersion": "blackadder.io/v1beta1", "kind": "ChaosAgent",
            "metadata": {"name": "princeedmund", "labels": {DEMO_LABEL: "true"}},
            "spec": {"tantrumMode": True, "podTolerance": 3, "cancerMode": True, "ipsumMode": True,
                     "eagerness": 100, "pauseDuration": 3, "seed": 1983, "minPodAgeSeconds": 0,
                     "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": NAMESPACE}}}}


async def _havoc_and_reversal(client: kubeloop.Client, say: Callable[[str], None]) -> None:
    await client.apply(_agent(), field_manager=FIELD_MANAGER)
    say("created ChaosAgent princeedmund: tantrum, cancer and ipsum, eagerness 100, pause 3s, seed 1983, "
        f"confined to {NAMESPACE}")
    seen: set[tuple[Any, ...]] = set()
    for round_no in (1, 2):
        agent = await wait_for(client, AGENTS, "princeedmund", timeout=30, description=f"round {round_no}",
                               predicate=_reached(round_no))
        for action in (agent.get("status") or {}).get("recentActions") or ():
            key = (action["round"], action["mode"], action["name"], action.get("detail"))
            if key not in seen:
                seen.add(key)
                say(f"  round {action['round']}: {action['mode']}: {action['action']} "
                    f"{action['namespace']}/{action['name']} {action.get('detail') or ''}".rstrip())
    await client.patch(AGENTS, "princeedmund", {"spec": {"suspend": True}})
    say("suspended the agent (no more rounds)")
    plan = await client.get("configmaps", "cunning-plan", NAMESPACE)
    say(f"  cunning-plan now reads: {plan['data']['plan'][:60]}...")
    await wait_for(client, DEPLOYMENTS, "baldrick", NAMESPACE, timeout=60,
                   predicate=lambda d: (d.get("status") or {}).get("availableReplicas", 0) >= 3)
    say("  killed pods were replaced by their ReplicaSet")

    await client.patch(AGENTS, "princeedmund", {"spec": {"cancerMode": False}})
    dep = await wait_for(client, DEPLOYMENTS, "baldrick", NAMESPACE, timeout=30,
                         predicate=lambda d: d["spec"]["replicas"] == 3)
    say(f"cancerMode off: Deployment baldrick is back to {dep['spec']['replicas']} replicas")
    await client.delete(AGENTS, "princeedmund")
    await wait_for_deletion(client, AGENTS, "princeedmund", timeout=30)
    plan = await client.get("configmaps", "cunning-plan", NAMESPACE)
    say(f"deleted the agent: its finalizer restored cunning-plan: {plan['data']['plan']!r}")
