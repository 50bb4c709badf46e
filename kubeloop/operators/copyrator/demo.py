"""``kubeloop demo``: the article's rule at work, live — a labelled ConfigMap in ``default`` is copied
into every active namespace, into a namespace created afterwards, updated everywhere when it changes,
and removed everywhere when it loses its label."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from kubeloop import Client, Manager, ManagerOptions, NotFound, wait_for, wait_for_deletion
from kubeloop.operators.copyrator import CopyratorRule, operator
from kubeloop.operators.copyrator.boundary import SYSTEM_NAMESPACES
from kubeloop.operators.copyrator.plan import RULE_LABEL, is_active
from kubeloop.testing import install_crds

EXAMPLES = Path(__file__).parent / "examples"
NEW_NAMESPACE = "copyrator-demo-new"
Say = Callable[[str], None]


def _example(name: str) -> dict[str, Any]:
    doc: dict[str, Any] = yaml.safe_load((EXAMPLES / name).read_text())
    return doc


async def scenario(client: Client, say: Say) -> None:
    await install_crds(client, operator)
    say("installed CRD copyrators.flant.com (kind CopyratorRule, short name copyr)")
    manager = Manager(client, ManagerOptions(metrics_bind_address="0", health_probe_bind_address="0",
                                             graceful_shutdown_timeout=5), name=operator.name)
    manager.add_operator(operator)
    task = asyncio.create_task(manager.run())
    narrator: asyncio.Task[None] | None = None
    try:
        await asyncio.wait_for(manager.started.wait(), 60)
        say("operator copyrator running in-process, watching every namespace")
        await _clean_slate(client)
        narrator = asyncio.create_task(_narrate(client, say))
        await _walk_through(client, say)
    finally:
        if narrator is not None:
            narrator.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await narrator
        manager.stop()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(task, 30)
        say("operator stopped; rule, source and demo namespace cleaned up")


async def _clean_slate(client: Client) -> None:
    """A previous run may have left the rule behind: remove it (the running operator cleans up)."""
    with contextlib.suppress(NotFound):
        await client.delete(CopyratorRule.resource(), "main-rule", "default")
        await wait_for_deletion(client, CopyratorRule.resource(), "main-rule", "default", timeout=60)
    with contextlib.suppress(NotFound):
        await client.delete("configmaps", "app-config", "default")


async def _narrate(client: Client, say: Say) -> None:
    """Prints the copies as the API server reports them: what ``kubectl get cm -A -w -l ...`` shows."""
    selector = f"{RULE_LABEL}=main-rule"
    listing = await client.list("configmaps", label_selector=selector)
    version = listing["metadata"].get("resourceVersion")
    async for event in client.watch("configmaps", label_selector=selector, resource_version=version):
        obj = event.get("object") or {}
        meta = obj.get("metadata") or {}
        what = {"ADDED": "copy appeared in", "MODIFIED": "copy updated in", "DELETED": "copy removed from"}
        if event.get("type") in what:
            keys = ", ".join(f"{k}={v}" for k, v in sorted((obj.get("data") or {}).items()))
            say(f"    {what[event['type']]} {meta.get('namespace')}: {meta.get('name')} {{{keys}}}")


async def _walk_through(client: Client, say: Say) -> None:
    rule_res = CopyratorRule.resource()
    source = _example("configmap.yaml")
    await client.apply(source, field_manager="kubectl", force=True)
    say("kubectl apply -f configmap.yaml  →  ConfigMap default/app-config labelled copyrator=true")
    rule = _example("rule.yaml")
    rule["metadata"]["namespace"] = "default"
    await client.apply(rule, field_manager="kubectl", force=True)
    namespaces = [n["metadata"]["name"] for n in (await client.list("namespaces"))["items"] if is_active(n)]
    # The system namespaces never receive copies (README, "Security model").
    expected = len([n for n in namespaces if n != "default" and n not in SYSTEM_NAMESPACES])
    say(f"kubectl apply -f rule.yaml  →  CopyratorRule main-rule; {expected} other active namespaces "
        "(kube-system, kube-public, kube-node-lease are closed to copies)")
    await _wait_copies(client, expected)

    await client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NEW_NAMESPACE}})
    say(f"kubectl create namespace {NEW_NAMESPACE}")
    await wait_for(client, "configmaps", "app-config", NEW_NAMESPACE, timeout=60)

    await client.patch("configmaps", "app-config", {"data": {"LOG_LEVEL": "debug"}}, "default")
    say("kubectl patch cm app-config -n default  →  LOG_LEVEL=debug")
    await wait_for(client, "configmaps", "app-config", NEW_NAMESPACE, timeout=60,
                   predicate=lambda o: (o.get("data") or {}).get("LOG_LEVEL") == "debug")
    status = await _wait_copies(client, expected + 1)
    ready = {c["type"]: c["status"] for c in status.get("conditions") or []}
    say(f"kubectl get copyr main-rule  →  sources {status.get('sourceCount')}, "
        f"copies {status.get('copyCount')}, Ready={ready.get('Ready')}, Degraded={ready.get('Degraded')}")

    await client.patch("configmaps", "app-config", {"metadata": {"labels": {"copyrator": None}}}, "default")
    say("kubectl label cm app-config -n default copyrator-  →  no longer a source")
    await _wait_copies(client, 0)

    await client.delete(rule_res, "main-rule", "default")
    await wait_for_deletion(client, rule_res, "main-rule", "default", timeout=60)
    await client.delete("configmaps", "app-config", "default")
    with contextlib.suppress(NotFound):
        await client.delete("namespaces", NEW_NAMESPACE)
    say("kubectl delete copyr main-rule; the source and the demo namespace are deleted too")


async def _wait_copies(client: Client, count: int) -> dict[str, Any]:
    rule = await wait_for(client, CopyratorRule.resource(), "main-rule", "default", timeout=60,
                          predicate=lambda o: (o.get("status") or {}).get("copyCount") == count,
                          description=f"main-rule to report {count} copies")
    await asyncio.sleep(0.3)  # let the narrator print the last copies' events before moving on
    status: dict[str, Any] = rule["status"]
    return status
