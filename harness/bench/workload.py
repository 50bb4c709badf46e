"""The workload: the ``widgets.bench.example.com`` CRD, namespaces, and a loader that creates or
updates widgets as fast as it can with a fixed number of requests in flight.

Every request the harness sends goes through ``Workload`` and is counted (``HarnessCounter``), so
that it can be subtracted from the API server's counters.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import time
from collections.abc import Callable
from typing import Any

from harness.bench.apimetrics import HarnessCounter
from harness.common.concurrency import bounded
from kubeloop.client import Client, Conflict, NotFound
from kubeloop.client.errors import ServerTimeout
from kubeloop.testing import wait_for

GROUP = "bench.example.com"
VERSION = "v1"
PLURAL = "widgets"
RESOURCE = f"{PLURAL}.{GROUP}"
LABEL = "bench.example.com/run"

CRD: dict[str, Any] = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": RESOURCE},
    "spec": {
        "group": GROUP,
        "names": {"kind": "Widget", "plural": PLURAL, "singular": "widget", "listKind": "WidgetList"},
        "scope": "Namespaced",
        "versions": [
            {
                "name": VERSION,
                "served": True,
                "storage": True,
                "subresources": {"status": {}},
                "schema": {
                    "openAPIV3Schema": {
                        "type": "object",
                        "properties": {
                            "spec": {"type": "object", "properties": {"value": {"type": "integer"}}},
                            "status": {
                                "type": "object",
                                "properties": {"observed": {"type": "integer"}},
                                # Kopf keeps its own bookkeeping under status unless told otherwise.
                                "x-kubernetes-preserve-unknown-fields": True,
                            },
                        },
                    }
                },
            }
        ],
    },
}


def widget(name: str, value: int) -> dict[str, Any]:
    return {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "Widget",
        "metadata": {"name": name},
        "spec": {"value": value},
    }


def namespace_name(hint: str) -> str:
    """A new namespace's name: ``bench-<hint>-<random>``, within the 63 characters a name may have."""
    return f"bench-{hint}-{secrets.token_hex(3)}"[:63]


def names(n: int, prefix: str = "w") -> list[str]:
    return [f"{prefix}-{i:06d}" for i in range(n)]


class Workload:
    def __init__(self, client: Client, concurrency: int = 32) -> None:
        self.client = client
        self.concurrency = concurrency
        self.counter = HarnessCounter()

    async def install_crd(self) -> None:
        self.counter.add("POST", "apiextensions.k8s.io", "customresourcedefinitions")
        with contextlib.suppress(Conflict):
            await self.client.create(CRD)
        await wait_for(
            self.client,
            "customresourcedefinitions",
            RESOURCE,
            timeout=60,
            predicate=lambda o: any(
                c["type"] == "Established" and c["status"] == "True"
                for c in (o.get("status") or {}).get("conditions") or []
            ),
            description=f"CRD {RESOURCE} to be Established",
        )
        await self.client.registry.refresh()

    async def new_namespace(self, hint: str) -> str:
        name = namespace_name(hint)
        self.counter.add("POST", "", "namespaces")
        await self.client.create(
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": {LABEL: "true"}}}
        )
        return name

    async def delete_namespace(self, namespace: str, timeout: float = 300.0) -> None:
        """Deletes the widgets and the namespace, and waits until it is gone, so that the namespace
        controller's clean-up never runs during someone else's measurement."""
        # Tens of thousands of widgets outlast the API server's 60 s request limit (504) or our client's
        # (TimeoutError); the server goes on deleting them, and the namespace deletion below waits anyway.
        with contextlib.suppress(NotFound, ServerTimeout, TimeoutError):
            self.counter.add("DELETE", GROUP, PLURAL)
            await self.client.delete_collection(RESOURCE, namespace)
        with contextlib.suppress(NotFound):
            self.counter.add("DELETE", "", "namespaces")
            await self.client.delete("namespaces", namespace)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                self.counter.add("GET", "", "namespaces")
                await self.client.get("namespaces", namespace)
            except NotFound:
                return
            await asyncio.sleep(0.5)
        raise TimeoutError(f"namespace {namespace} still exists after {timeout:.0f}s")

    async def delete_widget(self, namespace: str, name: str, timeout: float = 60.0) -> None:
        """Deletes one widget and waits until it is gone (so that it can be created afresh)."""
        with contextlib.suppress(NotFound):
            self.counter.add("DELETE", GROUP, PLURAL)
            await self.client.delete(RESOURCE, name, namespace)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                self.counter.add("GET", GROUP, PLURAL)
                await self.client.get(RESOURCE, name, namespace)
            except NotFound:
                return
            await asyncio.sleep(0.2)
        raise TimeoutError(f"widget {namespace}/{name} still exists after {timeout:.0f}s")

    async def create(
        self,
        namespace: str,
        values: dict[str, int],
        on_created: Callable[[str, float], None] | None = None,
        with_status: bool = False,
    ) -> None:
        """Creates one widget per ``name: value``; ``on_created(name, t)`` with the monotonic time the
        API server acknowledged it. ``with_status`` also writes a converged status (for the start-up
        scenario: objects that need no work)."""

        async def one(name: str) -> None:
            self.counter.add("POST", GROUP, PLURAL)
            await self.client.create(widget(name, values[name]), namespace, resource=RESOURCE)
            if on_created:
                on_created(name, time.monotonic())
            if with_status:
                self.counter.add("PATCH", GROUP, PLURAL, "status")
                await self.client.patch(
                    RESOURCE, name, {"status": {"observed": values[name]}}, namespace, subresource="status"
                )

        await bounded(list(values), one, self.concurrency)

    async def set_values(
        self, namespace: str, values: dict[str, int], on_changed: Callable[[str, float], None] | None = None
    ) -> None:
        """Merge-patches ``spec.value`` of each named widget."""

        async def one(name: str) -> None:
            self.counter.add("PATCH", GROUP, PLURAL)
            await self.client.patch(RESOURCE, name, {"spec": {"value": values[name]}}, namespace)
            if on_changed:
                on_changed(name, time.monotonic())

        await bounded(list(values), one, self.concurrency)

    async def unconverged(self, namespace: str) -> list[str]:
        """Names of widgets whose ``status.observed`` differs from ``spec.value`` (one list request)."""
        self.counter.add("LIST", GROUP, PLURAL)
        items = (await self.client.list(RESOURCE, namespace, limit=5000))["items"]
        return [
            o["metadata"]["name"]
            for o in items
            if (o.get("status") or {}).get("observed") != (o.get("spec") or {}).get("value")
        ]
