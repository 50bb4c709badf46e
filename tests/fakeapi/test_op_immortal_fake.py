"""The immortal operator's main scenario (the article's example) on the fake API server with its
kubelet: the same steps as tests/integration/test_op_immortal.py, in well under a second of API time."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest_asyncio
import yaml

from kubeloop.client import Client
from kubeloop.operators.immortal import ImmortalContainer, operator
from kubeloop.operators.immortal import pods as podlib
from kubeloop.testing import install_crds, operator_running, wait_for, wait_for_deletion
from kubeloop.testing.apiserver import FakeApiServer

IC = ImmortalContainer.resource()
EXAMPLES = Path(__file__).resolve().parents[2] / "kubeloop" / "operators" / "immortal" / "examples"
Obj = dict[str, Any]


@pytest_asyncio.fixture(loop_scope="session")
async def cluster() -> AsyncIterator[Client]:
    """A fake API server with a kubelet, the operator's CRDs and the operator running (as admin)."""
    async with FakeApiServer(kubelet=True) as fake, await fake.client() as admin:
        await install_crds(admin, operator)
        async with await fake.client(field_manager=operator.name) as client:
            async with operator_running(operator, client, namespaces=["default"]):
                yield admin


def running_pod(uid_not: str | None = None) -> Callable[[Obj], bool]:
    def check(pod: Obj) -> bool:
        return (pod["metadata"]["uid"] != uid_not and not pod["metadata"].get("deletionTimestamp")
                and pod.get("status", {}).get("phase") == "Running" and podlib.is_ready(pod))
    return check


def starts(n: int) -> Callable[[Obj], bool]:
    def check(obj: Obj) -> bool:
        available = next((c for c in (obj.get("status") or {}).get("conditions") or []
                          if c["type"] == "Available"), {})
        return (obj.get("status") or {}).get("startTimes") == n and available.get("status") == "True"
    return check


async def test_article_example_on_the_fake(cluster: Client) -> None:
    client = cluster
    example = yaml.safe_load((EXAMPLES / "example.yaml").read_text())
    example["metadata"]["namespace"] = "default"
    name, pod_name = "example-immortal-container", "example-immortal-container-immortalpod"
    await client.apply(example, field_manager="kubectl")
    first = await wait_for(client, "pods", pod_name, "default", running_pod(), timeout=10)
    ref = first["metadata"]["ownerReferences"][0]
    assert (ref["kind"], ref["name"], ref["controller"], ref["blockOwnerDeletion"]) == (
        "ImmortalContainer", name, True, True)
    ic = await wait_for(client, IC, name, "default", starts(1), timeout=10)
    assert ic["status"]["podUID"] == first["metadata"]["uid"] and ic["status"]["observedGeneration"] == 1

    await client.delete("pods", pod_name, "default")  # recreated
    second = await wait_for(client, "pods", pod_name, "default", running_pod(first["metadata"]["uid"]),
                            timeout=10)
    await wait_for(client, IC, name, "default", starts(2), timeout=10)

    await client.patch("pods", pod_name, {"status": {"phase": "Failed"}}, "default", subresource="status")
    third = await wait_for(client, "pods", pod_name, "default", running_pod(second["metadata"]["uid"]),
                           timeout=10)
    ic = await wait_for(client, IC, name, "default", starts(3), timeout=10)
    assert [h["reason"] for h in ic["status"]["history"]] == ["Created", "PodDeleted", "PodFailed"]
    assert [h["uid"] for h in ic["status"]["history"]] == [p["metadata"]["uid"] for p in (first, second, third)]

    await client.delete(IC, name, "default")  # the fake's garbage collector removes the pod
    await wait_for_deletion(client, "pods", pod_name, "default", timeout=10)
