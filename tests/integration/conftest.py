"""Shared pieces of the integration tests: a small test CRD and a manager runner."""

from __future__ import annotations

import asyncio
import contextlib
import textwrap
from collections.abc import AsyncIterator
from typing import Any

import pytest_asyncio

from kubeloop.client import Client, NotFound
from kubeloop.manager import Manager, ManagerOptions
from kubeloop.testing import wait_for

ECHO_CRD: dict[str, Any] = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "echoes.test.kubeloop.dev"},
    "spec": {
        "group": "test.kubeloop.dev",
        "names": {"kind": "Echo", "plural": "echoes", "singular": "echo", "listKind": "EchoList"},
        "scope": "Namespaced",
        "versions": [{
            "name": "v1", "served": True, "storage": True, "subresources": {"status": {}},
            "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                "spec": {"type": "object", "properties": {
                    "message": {"type": "string"}, "copies": {"type": "integer", "minimum": 0}}},
                "status": {"type": "object", "properties": {
                    "observedGeneration": {"type": "integer"}, "seen": {"type": "string"},
                    "conditions": {"type": "array", "items": {
                        "type": "object", "x-kubernetes-preserve-unknown-fields": True}}}}}}},
        }],
    },
}


@pytest_asyncio.fixture(scope="session", loop_scope="session")
async def echo_crd(kube_client: Client) -> str:
    """Installs the Echo CRD once per session; returns its resource name."""
    with contextlib.suppress(Exception):
        await kube_client.create(ECHO_CRD)
    await wait_for(kube_client, "customresourcedefinitions", "echoes.test.kubeloop.dev",
                   predicate=lambda o: any(c["type"] == "Established" and c["status"] == "True"
                                           for c in o.get("status", {}).get("conditions") or []),
                   timeout=30, description="the Echo CRD to be Established")
    await kube_client.registry.refresh()
    return "echoes.test.kubeloop.dev"


def echo(name: str, namespace: str, message: str = "hi", **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "test.kubeloop.dev/v1", "kind": "Echo",
            "metadata": {"name": name, "namespace": namespace}, "spec": {"message": message, **spec}}


@contextlib.asynccontextmanager
async def running(manager: Manager) -> AsyncIterator[asyncio.Task[None]]:
    """Runs a manager in the background for the duration of a block."""
    task = asyncio.create_task(manager.run())
    try:
        await asyncio.wait_for(_first(manager.started.wait(), task), 60)
        yield task
    finally:
        manager.stop()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(task, 30)


async def _first(waiter: Any, task: asyncio.Task[None]) -> None:
    w = asyncio.ensure_future(waiter)
    done, _ = await asyncio.wait({w, task}, return_when=asyncio.FIRST_COMPLETED)
    if task in done:
        w.cancel()
        task.result()
        raise RuntimeError("manager stopped before it started")


def options(namespace: str, **kw: Any) -> ManagerOptions:
    base = dict(namespaces=[namespace], metrics_bind_address="127.0.0.1:0",
                health_probe_bind_address="127.0.0.1:0", graceful_shutdown_timeout=5, freeze_gc=False)
    base.update(kw)
    return ManagerOptions(**base)


async def gone(client: Client, ref: str, name: str, namespace: str) -> bool:
    try:
        await client.get(ref, name, namespace)
        return False
    except NotFound:
        return True


def audited_operator(delay: float = 0.0) -> str:
    """A sharded Echo operator (``kubeloop run FILE --shards auto``) that appends one audit line per
    reconcile, ``key replica start end``, to $AUDIT_FILE; ``delay`` widens each reconcile so overlaps
    would show."""
    return textwrap.dedent(f'''
        import asyncio, os, time
        from kubeloop import Context, Operator

        op = Operator("shardtest")
        AUDIT, ME = os.environ["AUDIT_FILE"], os.environ["REPLICA"]

        @op.reconcile("echoes.test.kubeloop.dev", resync=None)
        async def reconcile(obj: dict, ctx: Context) -> None:
            start = time.time()
            try:
                await asyncio.sleep({delay})
                if (obj.get("status") or {{}}).get("seen") != obj["spec"]["message"]:
                    await ctx.patch_status({{"seen": obj["spec"]["message"]}})
            finally:
                with open(AUDIT, "a") as f:
                    f.write(f"{{ctx.name}} {{ME}} {{start}} {{time.time()}}\\n")
    ''')
