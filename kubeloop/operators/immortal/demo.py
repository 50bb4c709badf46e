"""``kubeloop demo``: the article's walk-through, live — apply the example, watch the pod come up,
delete it, watch it come back with ``startTimes: 2``."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from kubeloop import Client, Manager, ManagerOptions, NotFound, wait_for, wait_for_deletion
from kubeloop.operators.immortal import ImmortalContainer, operator
from kubeloop.operators.immortal.pods import is_ready, pod_name
from kubeloop.testing import install_crds

NAMESPACE = "kubeloop-demo"
EXAMPLE = Path(__file__).parent / "examples" / "example.yaml"


def _running(uid_not: str | None = None) -> Callable[[dict[str, Any]], bool]:
    return lambda p: (p["metadata"]["uid"] != uid_not and not p["metadata"].get("deletionTimestamp")
                      and is_ready(p))


async def scenario(client: Client, say: Callable[[str], None]) -> None:
    await install_crds(client, operator)
    say("installed CRD immortalcontainers.immortalcontainer.flugel.it (generated from the pydantic model)")
    await client.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}},
                       field_manager="kubeloop-demo")
    manager = Manager(client, ManagerOptions(namespaces=[NAMESPACE], metrics_bind_address="0",
                                             health_probe_bind_address="0", graceful_shutdown_timeout=5),
                      name=operator.name)
    manager.add_operator(operator)
    task = asyncio.create_task(manager.run())
    try:
        await asyncio.wait_for(manager.started.wait(), 60)
        say(f"operator immortal running in-process, watching namespace {NAMESPACE}")
        await _walk_through(client, say)
    finally:
        manager.stop()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(task, 30)
        say("operator stopped (the ImmortalContainer and its pod stay for you to look at)")


async def _walk_through(client: Client, say: Callable[[str], None]) -> None:
    example = yaml.safe_load(EXAMPLE.read_text())
    example["metadata"]["namespace"] = NAMESPACE
    name = example["metadata"]["name"]
    pod = pod_name(name)
    with contextlib.suppress(NotFound):  # a previous demo run: start from scratch, as the article does
        await client.delete(ImmortalContainer.resource(), name, NAMESPACE)
        await wait_for_deletion(client, "pods", pod, NAMESPACE, timeout=60)
    await client.apply(example, field_manager="kubectl", force=True)
    say(f"kubectl apply -f example.yaml  →  ImmortalContainer {name} (image {example['spec']['image']})")
    first = await wait_for(client, "pods", pod, NAMESPACE, _running(), timeout=60)
    say(f"  pod {pod} is Running on {first['spec'].get('nodeName')}, controlled by {name}")
    await client.delete("pods", pod, NAMESPACE)
    say(f"kubectl delete pod {pod}")
    second = await wait_for(client, "pods", pod, NAMESPACE, _running(first["metadata"]["uid"]), timeout=60)
    say(f"  recreated: {pod} uid {second['metadata']['uid'][:8]}… (was {first['metadata']['uid'][:8]}…)")
    counted = second["metadata"]["uid"]
    obj = await wait_for(client, ImmortalContainer.resource(), name, NAMESPACE, timeout=30,
                         predicate=lambda o: (o.get("status") or {}).get("podUID") == counted and any(
                             c["type"] == "Available" and c["status"] == "True"
                             for c in o["status"].get("conditions") or []))
    status = obj["status"]
    say(f"kubectl get immortalcontainer {name} -o yaml  →  currentPod: {status['currentPod']}, "
        f"startTimes: {status['startTimes']}")
    for start in status.get("history") or []:
        say(f"  started {start['pod']} at {start['time']} ({start['reason']})")
    conditions = {c["type"]: c["status"] for c in status.get("conditions") or []}
    say(f"  conditions: {', '.join(f'{k}={v}' for k, v in conditions.items())}")
