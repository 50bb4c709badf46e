"""blackadder run locally the way its README and the articles show it, as a user would type it:

    kubeloop generate crd blackadder | kubectl apply -f -
    kubeloop generate rbac blackadder | kubectl apply -f -
    kubeloop run blackadder            # out of the cluster, with the ServiceAccount's token

The generated CRD converts its versions through the in-cluster webhook Service; a local run must point
it at itself (the API server refuses a ``url`` beside the ``service`` kubectl wrote: 422), serve the
conversions under its generated RBAC, and give the Service back when it stops. The agent here is
suspended and confined to this test's namespace.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import secrets
import signal
import socket
import sys
from pathlib import Path
from typing import Any

import aiohttp

from kubeloop.client import Client, NotFound
from kubeloop.testing import wait_for, wait_for_crd, wait_for_deletion

CRD = "chaosagents.blackadder.io"
V1BETA2 = "blackadder.io/v1beta2/chaosagents"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def kubeloop(*args: str) -> str:
    import subprocess

    proc = subprocess.run([sys.executable, "-m", "kubeloop.cli.main", *args], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


async def ready(port: int, proc: asyncio.subprocess.Process) -> None:
    for _ in range(600):
        with contextlib.suppress(aiohttp.ClientError):
            async with aiohttp.ClientSession() as http, http.get(f"http://127.0.0.1:{port}/readyz") as resp:
                if resp.status == 200:
                    return
        if proc.returncode is not None:
            raise AssertionError(f"kubeloop run blackadder exited {proc.returncode}: "
                                 f"{(await proc.stderr.read()).decode()[-3000:]}")  # type: ignore[union-attr]
        await asyncio.sleep(0.1)
    raise AssertionError("kubeloop run blackadder never became ready")


def client_config(crd: dict[str, Any]) -> dict[str, Any]:
    return dict(((crd["spec"].get("conversion") or {}).get("webhook") or {}).get("clientConfig") or {})


async def test_generate_crd_piped_to_kubectl_then_kubeloop_run(kube_cluster: Any, kube_client: Client,
                                                              namespace: str, tmp_path: Path) -> None:
    try:
        before = (await kube_client.get("customresourcedefinitions", CRD))["spec"]["conversion"]
    except NotFound:
        before = None
    # The README's commands: client-side kubectl apply of the generated CRD (service client config).
    await asyncio.to_thread(kube_cluster.kubectl, "apply", "-f", "-", input=kubeloop("generate", "crd", "blackadder"))
    await wait_for_crd(kube_client, CRD)
    await asyncio.to_thread(kube_cluster.kubectl, "apply", "-f", "-",
                            input=kubeloop("generate", "rbac", "blackadder", "--namespace", namespace))
    kubeconfig = await asyncio.to_thread(kube_cluster.service_account_kubeconfig, namespace, "blackadder",
                                         tmp_path / "sa.kubeconfig")
    probe = free_port()
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "kubeloop.cli.main", "run", "blackadder", "--kubeconfig", str(kubeconfig),
        "--webhook-port", "0", "--metrics-bind-address", "0", "--health-probe-bind-address", f"127.0.0.1:{probe}",
        "--operator-namespace", namespace, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    name = f"local-{secrets.token_hex(3)}"
    try:
        await ready(probe, proc)
        crd = await kube_client.get("customresourcedefinitions", CRD)
        assert client_config(crd)["url"].startswith("https://127.0.0.1:") and "service" not in client_config(crd)
        # The article's version (v1alpha1), stored as v1beta1, read as the hub: conversions served.
        await kube_client.create({
            "apiVersion": "blackadder.io/v1alpha1", "kind": "ChaosAgent", "metadata": {"name": name},
            "spec": {"tantrumMode": True, "podTolerance": 4, "suspend": True,
                     "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": namespace}}}})
        agent = await wait_for(kube_client, V1BETA2, name, timeout=60,
                               predicate=lambda a: bool((a.get("status") or {}).get("conditions")))
        assert agent["spec"]["minRunningPods"] == 4
        assert agent["status"]["conditions"][0]["reason"] == "Suspended"
        await kube_client.delete(V1BETA2, name)  # its finalizer is removed by the running operator
        await wait_for_deletion(kube_client, V1BETA2, name, timeout=60)
    finally:
        if proc.returncode is None:
            proc.send_signal(signal.SIGTERM)
        _, err = await asyncio.wait_for(proc.communicate(), 60)
        with contextlib.suppress(NotFound):  # a failed run left its agent: no operator removes the finalizer
            await kube_client.patch(V1BETA2, name, {"metadata": {"finalizers": None}})
        with contextlib.suppress(NotFound):
            await kube_client.delete(V1BETA2, name)
    text = err.decode()
    assert proc.returncode == 0 and "Traceback" not in text, text[-3000:]
    # a 403 as a status, not three digits of a port or a resourceVersion (port 40359 once failed this)
    assert not re.search(r"(?<!\d)403(?!\d)", text) and "Forbidden" not in text, text[-3000:]
    # Stopped, it hands the CRD back to the Service the generated manifests named.
    crd = await kube_client.get("customresourcedefinitions", CRD)
    assert client_config(crd)["service"]["name"] == "blackadder-webhook" and "url" not in client_config(crd)
    if before is not None:  # leave the CRD's conversion as the session had it
        await kube_client.patch("customresourcedefinitions", CRD,
                                [{"op": "replace", "path": "/spec/conversion", "value": before}], type="json")
    for kind in ("clusterrolebindings", "clusterroles"):
        with contextlib.suppress(NotFound):
            await kube_client.delete(kind, "blackadder")
