"""An operator declared with ``@op.validate`` / ``@op.mutate`` / ``op.convert`` (tests/webhook_operator.py)
run with ``run_operator`` under its generated RBAC against the real API server: it serves its webhooks on
127.0.0.1, writes its caBundle into its own configurations and CRD, and the API server calls it.

The configurations are scoped to the test's namespace by ``run_operator``, which waits until the API
server calls them (so the first request of a test is admitted by them), and deleted when it ends.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import Any

import aiohttp
import pytest

from kubeloop.client import ApiError, Client, Invalid
from kubeloop.manager import Manager
from kubeloop.testing.operator import run_operator
from tests.integration.polling import eventually
from tests.webhook_operator import GROUP, Gadget, GadgetV1alpha1, op

HUB, SPOKE = f"{GROUP}/v1beta1", f"{GROUP}/v1alpha1"


def gadget(name: str, namespace: str, api_version: str = HUB, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": api_version, "kind": "Gadget", "metadata": {"name": name, "namespace": namespace},
            "spec": spec}


async def admitting(client: Client, namespace: str) -> None:
    async def refused() -> bool:
        try:
            await client.create(gadget("probe", namespace, count=99), dry_run=True)
        except ApiError:
            return True
        return False
    await eventually(refused, "the validating webhook to be called")


async def test_bad_object_is_rejected_with_the_field_path(kube_cluster: Any, kube_client: Client,
                                                          namespace: str) -> None:
    async with run_operator(kube_cluster, kube_client, op, namespace) as running:
        with pytest.raises(Invalid) as err:
            await kube_client.create(gadget("big", namespace, count=11))
        assert "spec.count: must be at most 10, got 11" in err.value.message
        assert [c.get("field") for c in err.value.causes] == ["spec.count"]
        proc = await asyncio.to_thread(kube_cluster.kubectl, "apply", "-f", "-", check=False,
                                       input=json.dumps(gadget("big", namespace, count=12)))
        assert proc.returncode != 0 and "spec.count: must be at most 10, got 12" in proc.stderr
        # UPDATE: the handler sees the typed old object.
        await kube_client.create(gadget("g", namespace, count=2, owner="ann"))
        with pytest.raises(Invalid) as err:
            await kube_client.patch(f"gadgets.{GROUP}", "g", {"spec": {"owner": "bob"}}, namespace)
        assert "spec.owner: cannot change (was 'ann')" in err.value.message
        # All of this ran under the generated RBAC: the API server allowed the caBundle writes with
        # "patch" by name alone. The client records "create" next to every server-side apply, as it cannot
        # tell from the request whether the object exists; here they all did (run_operator made them).
        missing = {(r.verb, r.resource) for r in running.audit().missing}
        assert missing <= {("create", "validatingwebhookconfigurations"), ("create", "mutatingwebhookconfigurations"),
                           ("create", "customresourcedefinitions")}, running.audit().message


async def test_defaulting_is_visible_in_the_stored_object(kube_cluster: Any, kube_client: Client,
                                                          namespace: str) -> None:
    async with run_operator(kube_cluster, kube_client, op, namespace):
        await kube_client.create(gadget("plain", namespace, count=1))
        stored = await kube_client.get(f"gadgets.{GROUP}", "plain", namespace)
        assert stored["spec"]["color"] == "blue"
        assert stored["metadata"]["labels"]["gadgets/created-by"] == "kubeloop-admin"
        await kube_client.create(gadget("red", namespace, count=1, color="red"))
        assert (await kube_client.get(f"gadgets.{GROUP}", "red", namespace))["spec"]["color"] == "red"
        proc = await asyncio.to_thread(kube_cluster.kubectl, "apply", "-f", "-",
                                       input=json.dumps(gadget("old", namespace, count=1, legacy=True)))
        assert "Warning: spec.legacy is deprecated" in proc.stderr


async def test_conversion_between_versions(kube_cluster: Any, kube_client: Client, namespace: str) -> None:
    async with run_operator(kube_cluster, kube_client, op, namespace):
        crd = await kube_client.get("customresourcedefinitions", f"gadgets.{GROUP}")
        assert crd["spec"]["conversion"]["strategy"] == "Webhook"
        assert crd["spec"]["conversion"]["webhook"]["clientConfig"]["caBundle"]
        # Written as v1alpha1 (size "4"), stored as the hub v1beta1 (count 4), read back either way.
        await kube_client.create(gadget("conv", namespace, SPOKE, size="4", owner="ann"))
        hub = await kube_client.get(Gadget.resource(), "conv", namespace)
        assert (hub["apiVersion"], hub["spec"]["count"], hub["spec"]["color"]) == (HUB, 4, "blue")
        spoke = await kube_client.get(GadgetV1alpha1.resource(), "conv", namespace)
        assert (spoke["apiVersion"], spoke["spec"]["size"]) == (SPOKE, "4")
        assert "count" not in spoke["spec"]
        proc = await asyncio.to_thread(kube_cluster.kubectl, "get", f"gadgets.v1alpha1.{GROUP}", "conv",
                                       "-n", namespace, "-o", "json")
        assert json.loads(proc.stdout)["spec"]["size"] == "4"
        # A spoke's validation goes through the hub: the rule on count holds for size too.
        with pytest.raises(Invalid) as err:
            await kube_client.create(gadget("huge", namespace, SPOKE, size="50"))
        assert "spec.count: must be at most 10, got 50" in err.value.message


async def test_readiness_waits_for_the_webhook_server(kube_cluster: Any, kube_client: Client,
                                                      namespace: str) -> None:
    idle = Manager(kube_client, name=op.name)
    idle.add_operator(op)
    assert idle.webhooks is not None and not idle.webhooks.ready and not idle.ready()
    await idle.webhooks.stop()  # nothing was started: a no-op
    async with run_operator(kube_cluster, kube_client, op, namespace) as running:
        manager = running.manager
        assert manager.webhooks is not None and manager.webhooks.ready and manager.ready()
        async with aiohttp.ClientSession() as http:
            async with http.get(f"http://127.0.0.1:{manager.http.bound['probes']}/readyz") as resp:
                assert resp.status == 200
            # The webhook server's own probe, over TLS with the CA the API server was given.
            import ssl
            ctx = ssl.create_default_context(cadata=manager.webhooks.certs.ca_bundle.decode())
            async with http.get(f"https://127.0.0.1:{manager.webhooks.server.port}/readyz", ssl=ctx) as resp:
                assert resp.status == 200
    assert not manager.webhooks.ready
    names = {o["metadata"]["name"] for o in manager.webhooks.manifests() if "webhooks" in o}
    for kind in ("validatingwebhookconfigurations", "mutatingwebhookconfigurations"):
        listed = await kube_client.list(kind)
        assert not names & {o["metadata"]["name"] for o in listed["items"]}, "run_operator removes them"


async def test_kubeloop_run_registers_a_local_url(kube_cluster: Any, kube_client: Client, namespace: str) -> None:
    """``kubeloop run`` against the local cluster: no tunnel, no manual step; the configurations name
    ``https://127.0.0.1:PORT`` and carry the process's CA."""
    import os
    import signal
    import socket
    import sys
    from pathlib import Path

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        probe = s.getsockname()[1]
    target = Path(__file__).parents[1] / "webhook_operator.py"
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "kubeloop.cli.main", "run", str(target), "--kubeconfig", str(kube_cluster.kubeconfig),
        "--install-crds", "--namespace", namespace, "--webhook-port", str(port), "--metrics-bind-address", "0",
        "--health-probe-bind-address", f"127.0.0.1:{probe}", env=dict(os.environ),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    try:
        async def ready() -> bool:
            assert proc.returncode is None, (await proc.stderr.read()).decode()[-2000:]  # type: ignore[union-attr]
            try:
                async with aiohttp.ClientSession() as http, http.get(f"http://127.0.0.1:{probe}/readyz") as r:
                    return r.status == 200
            except aiohttp.ClientError:
                return False
        await eventually(ready, "kubeloop run to be ready", timeout=60)
        config = await kube_client.get("validatingwebhookconfigurations", "gadgets-validating")
        client_config = config["webhooks"][0]["clientConfig"]
        assert client_config["url"].startswith(f"https://127.0.0.1:{port}/validate-")
        assert client_config["caBundle"]
        await admitting(kube_client, namespace)
        with pytest.raises(Invalid) as err:
            await kube_client.create(gadget("big", namespace, count=11))
        assert "spec.count: must be at most 10" in err.value.message
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err_out = await asyncio.wait_for(proc.communicate(), 30)
        for kind, name in (("validatingwebhookconfigurations", "gadgets-validating"),
                           ("mutatingwebhookconfigurations", "gadgets-mutating")):
            with contextlib.suppress(ApiError):
                await kube_client.delete(kind, name)
    assert proc.returncode == 0, err_out.decode()[-2000:]


async def test_replicas_share_one_ca_through_the_secret(kube_client: Client, namespace: str) -> None:
    """Replicas starting together (the Service form, in a cluster) end with the same CA: one stores it,
    the others lose the resourceVersion race, read it back and use it."""
    from kubeloop.webhooks.shared_ca import MissingCASecret, empty_secret, secret_name, shared_ca

    with pytest.raises(MissingCASecret, match=f"{namespace}/{secret_name('gadgets')}"):
        await shared_ca(kube_client, namespace, secret_name("gadgets"))
    await kube_client.create(empty_secret("gadgets", namespace))
    cas = await asyncio.gather(*(shared_ca(kube_client, namespace, secret_name("gadgets")) for _ in range(4)))
    assert len({ca.bundle for ca in cas}) == 1
    again = await shared_ca(kube_client, namespace, secret_name("gadgets"))
    assert again.bundle == cas[0].bundle and again.key_pem() == cas[0].key_pem()
