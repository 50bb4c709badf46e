"""The Kopf migration page's converted operator (docs/howto/kopf/greeting_kubeloop.py) does what its
Kopf original does, and what the page says Kopf's does not: a child deleted by hand comes back."""

from __future__ import annotations

import ast
import importlib.util
import sys
from pathlib import Path
from typing import Any

from kubeloop.client import Client
from kubeloop.testing import wait_for, wait_for_deletion
from kubeloop.testing.operator import run_operator

HOWTO = Path(__file__).resolve().parents[2] / "docs" / "howto" / "kopf"


def _load(path: Path) -> Any:
    spec = importlib.util.spec_from_file_location(f"docs_howto_{path.stem}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def ready(obj: dict[str, Any]) -> bool:
    conditions = (obj.get("status") or {}).get("conditions") or []
    return any(c["type"] == "Ready" and c["status"] == "True"
               and c.get("observedGeneration") == obj["metadata"]["generation"] for c in conditions)


def test_kopf_original_is_valid_python() -> None:
    ast.parse((HOWTO / "greeting_kopf.py").read_text())


async def test_converted_operator(kube_cluster: Any, kube_client: Client, namespace: str) -> None:
    module = _load(HOWTO / "greeting_kubeloop.py")
    resource = module.Greeting.resource()
    greeting = {"apiVersion": "kopf-migration.kubeloop.dev/v1", "kind": "Greeting",
                "metadata": {"name": "hello", "namespace": namespace}, "spec": {"message": "hi"}}
    async with run_operator(kube_cluster, kube_client, module.operator, namespace) as running:
        await kube_client.create(greeting)
        child = await wait_for(kube_client, "configmaps", "hello-greeting", namespace, timeout=30)
        assert child["data"] == {"message": "hi"}
        obj = await wait_for(kube_client, resource, "hello", namespace, ready, timeout=30)
        assert obj["status"]["configMap"] == "hello-greeting"

        await kube_client.patch(resource, "hello", {"spec": {"message": "bye"}}, namespace)
        await wait_for(kube_client, "configmaps", "hello-greeting", namespace,
                       lambda o: o["data"] == {"message": "bye"}, timeout=30)
        await wait_for(kube_client, resource, "hello", namespace, ready, timeout=30)

        first = await kube_client.get("configmaps", "hello-greeting", namespace)
        await kube_client.delete("configmaps", "hello-greeting", namespace)
        await wait_for(kube_client, "configmaps", "hello-greeting", namespace,
                       lambda o: o["metadata"]["uid"] != first["metadata"]["uid"] and o["data"] == {"message": "bye"},
                       timeout=30, description="the deleted ConfigMap to be recreated")

        await kube_client.delete(resource, "hello", namespace)
        await wait_for_deletion(kube_client, resource, "hello", namespace, timeout=30)
    report = running.audit()
    assert report.ok, report.message
