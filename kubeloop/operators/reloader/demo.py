"""``kubeloop demo``: the article's nginx Deployment is re-rolled when its nginx.conf ConfigMap changes,
with the reloader running in-process and the rollout narrated as the Deployment controller does it."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from pathlib import Path

import yaml

from kubeloop import Client, Manager, ManagerOptions, NotFound, Obj, wait_for, wait_for_deletion
from kubeloop.operators.reloader.operator import build_operator
from kubeloop.operators.reloader.policy import HASH
from kubeloop.operators.reloader.settings import ReloaderSettings

Say = Callable[[str], None]
NAMESPACE = "kubeloop-demo"
EXAMPLES = Path(__file__).parent / "examples"
FIELD_MANAGER = "kubeloop-demo"


async def scenario(client: Client, say: Say, namespace: str = NAMESPACE) -> None:
    await _fresh_example(client, namespace, say)
    manager, task = await _start_reloader(client, namespace)
    try:
        say("reloader runs in-process (opt-in by annotation, pod-template annotation strategy)")
        deployment = await wait_for(client, "deployments.apps", "nginx", namespace, timeout=30,
                                    predicate=lambda d: HASH in (d["metadata"].get("annotations") or {}),
                                    description="the reloader to record its first hash")
        say(f"first sight: hash {deployment['metadata']['annotations'][HASH][:12]} recorded on the "
            "Deployment's metadata; its pods are left alone")
        narrator = asyncio.create_task(_narrate(client, namespace, say))
        try:
            await _change_nginx_conf(client, namespace, say)
            done = await wait_for(client, "deployments.apps", "nginx", namespace, _rolled_once, timeout=120,
                                  description="the rollout to complete")
        finally:
            narrator.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await narrator
        await _summary(client, namespace, done, say)
    finally:
        manager.stop()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(task, 30)


async def _fresh_example(client: Client, namespace: str, say: Say) -> None:
    """Applies the example from scratch (a previous demo run leaves a changed ConfigMap behind)."""
    await client.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}},
                       field_manager=FIELD_MANAGER)
    with contextlib.suppress(NotFound):
        await client.delete("deployments.apps", "nginx", namespace, propagation_policy="Foreground")
        await wait_for_deletion(client, "deployments.apps", "nginx", namespace, timeout=60)
    for name in ("nginx-configmap.yaml", "nginx-deployment.yaml"):
        doc = yaml.safe_load((EXAMPLES / name).read_text())
        doc["metadata"]["namespace"] = namespace
        await client.apply(doc, field_manager=FIELD_MANAGER)
    say("applied the article's ConfigMap nginx-conf (nginx.conf) and Deployment nginx (2 replicas, "
        "annotated reloader.stakater.com/auto: \"true\")")
    await wait_for(client, "deployments.apps", "nginx", namespace, timeout=120,
                   predicate=lambda d: (d.get("status") or {}).get("availableReplicas") == 2,
                   description="Deployment nginx to have 2 available replicas")
    say("Deployment nginx is 2/2 available")


async def _start_reloader(client: Client, namespace: str) -> tuple[Manager, asyncio.Task[None]]:
    """The operator on a manager limited to the demo namespace, as `kubeloop run reloader` would run it."""
    operator = build_operator()
    operator.settings = ReloaderSettings(debounce_seconds=1.0)
    manager = Manager(client, ManagerOptions(namespaces=[namespace], metrics_bind_address="0",
                                             health_probe_bind_address="0", graceful_shutdown_timeout=5,
                                             freeze_gc=False), name=operator.name)
    manager.add_operator(operator)
    task = asyncio.create_task(manager.run())
    started = asyncio.ensure_future(manager.started.wait())
    done, _ = await asyncio.wait({started, task}, timeout=60, return_when=asyncio.FIRST_COMPLETED)
    if started not in done:
        started.cancel()
        manager.stop()
        if task in done:
            task.result()  # raises why it stopped
        raise TimeoutError("the reloader did not start within 60 s")
    return manager, task


async def _change_nginx_conf(client: Client, namespace: str, say: Say) -> None:
    cm = await client.get("configmaps", "nginx-conf", namespace)
    conf = cm["data"]["nginx.conf"].replace("worker_connections 1024", "worker_connections 2048")
    await client.patch("configmaps", "nginx-conf", {"data": {"nginx.conf": conf}}, namespace)
    say("changed nginx.conf (worker_connections 1024 → 2048) in ConfigMap nginx-conf")


def _rolled_once(d: Obj) -> bool:
    status = d.get("status") or {}
    revision = (d["metadata"].get("annotations") or {}).get("deployment.kubernetes.io/revision")
    return (revision == "2" and status.get("observedGeneration") == d["metadata"]["generation"]
            and status.get("updatedReplicas") == status.get("availableReplicas") == 2
            and status.get("replicas") == 2)


async def _narrate(client: Client, namespace: str, say: Say) -> None:
    """Tells what the Deployment controller does with ReplicaSets and pods, as it happens."""
    await asyncio.gather(_follow(client, "replicasets.apps", namespace, say, _replica_set),
                         _follow(client, "pods", namespace, say, _pod))


async def _follow(client: Client, resource: str, namespace: str, say: Say,
                  describe: Callable[[Obj], str]) -> None:
    listing = await client.list(resource, namespace, label_selector="app=nginx")
    seen = {o["metadata"]["name"]: describe(o) for o in listing["items"]}
    rv = listing["metadata"].get("resourceVersion")
    async for event in client.watch(resource, namespace, label_selector="app=nginx", resource_version=rv):
        obj = event.get("object") or {}
        if event.get("type") not in ("ADDED", "MODIFIED", "DELETED"):
            continue
        name, text = obj["metadata"]["name"], describe(obj)
        if event["type"] == "DELETED":
            seen.pop(name, None)
            say(f"  {text.split(':')[0]}: deleted")
        elif seen.get(name) != text:
            seen[name] = text
            say(f"  {text}")


def _replica_set(rs: Obj) -> str:
    revision = (rs["metadata"].get("annotations") or {}).get("deployment.kubernetes.io/revision", "?")
    status = rs.get("status") or {}
    return (f"ReplicaSet {rs['metadata']['name']} (revision {revision}): {rs['spec'].get('replicas', 0)} "
            f"wanted, {status.get('readyReplicas', 0)} ready")


def _pod(pod: Obj) -> str:
    phase = (pod.get("status") or {}).get("phase", "Pending")
    if pod["metadata"].get("deletionTimestamp"):
        phase = "Terminating"
    return f"pod {pod['metadata']['name']}: {phase}"


async def _summary(client: Client, namespace: str, deployment: Obj, say: Say) -> None:
    replica_sets = (await client.list("replicasets.apps", namespace, label_selector="app=nginx"))["items"]
    for rs in sorted(replica_sets, key=lambda r: r["metadata"]["creationTimestamp"]):
        say(f"ReplicaSet {rs['metadata']['name']}: {rs['spec'].get('replicas', 0)} replicas")
    events = (await client.list("events.events.k8s.io", namespace))["items"]
    for event in events:
        if event.get("reason") == "Reloaded" and event["regarding"].get("name") == "nginx":
            say(f"event Reloaded on Deployment nginx: {event['note']}")
    say("one rollout, by the Deployment's own controller: new ReplicaSet up, old one scaled to 0, "
        "pods replaced")
