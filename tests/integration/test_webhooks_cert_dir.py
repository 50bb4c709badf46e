"""``--webhook-cert-dir`` against the real API server: the operator's webhook runtime serves a mounted
certificate and writes its configuration *without* a caBundle; the test then plays cert-manager's
cainjector (writes the issuer's CA into the configuration) and the kubelet (swaps the mounted files)
while creates go through the webhook, and no request fails."""

from __future__ import annotations

import asyncio
import base64
import contextlib
from pathlib import Path
from typing import Any

from kubeloop import AdmissionRequest, Denied, Operator
from kubeloop.client import ApiError, Client, NotFound
from kubeloop.resources import builtin
from kubeloop.webhooks.runtime import WebhookOptions, WebhookRuntime, configuration_names
from tests.integration.polling import eventually
from tests.integration.test_webhooks import configmap, refused
from tests.unit.test_webhooks_cert_dir import PEM, Mount

op = Operator("cert-dir-test")


@op.validate(builtin.CONFIG_MAP)
async def at_most_ten(obj: dict[str, Any], req: AdmissionRequest) -> None:
    if int((obj.get("data") or {}).get("replicas", "0")) > 10:
        raise Denied("must be at most 10", field="data.replicas")


async def test_mounted_certificate_served_to_the_api_server_and_rotated_mid_traffic(
        kube_client: Client, namespace: str, tmp_path: Path) -> None:
    mount = Mount(tmp_path)
    mount.rotate()
    selector = {"matchLabels": {"kubernetes.io/metadata.name": namespace}}
    runtime = WebhookRuntime(op.name, op.hooks, WebhookOptions(port=0, cert_dir=str(tmp_path),
                                                                namespace_selector=selector))
    name = configuration_names(op.name)["ValidatingWebhookConfiguration"]
    try:
        await runtime.start(kube_client)
        assert runtime.ready
        written = await kube_client.get("validatingwebhookconfigurations", name)
        assert "caBundle" not in written["webhooks"][0]["clientConfig"]  # left to cainjector
        # cainjector's part: the issuer's CA (ca.crt of the mounted Secret) into the configuration.
        bundle = base64.b64encode(mount.ca_cert.public_bytes(PEM)).decode()
        await kube_client.patch("validatingwebhookconfigurations", name,
                                [{"op": "add", "path": "/webhooks/0/clientConfig/caBundle", "value": bundle}],
                                type="json", field_manager="cainjector")
        certs = runtime.certs
        assert certs is not None
        certs.poll_every = 0.05  # look at the files often (the default 2 s would outlast a wave)
        await eventually(lambda: refused(kube_client, configmap("probe", namespace, replicas="99")),
                         "the API server to call the webhook with the mounted certificate")
        failures: list[str] = []
        allowed = 0

        async def one(i: int) -> None:
            nonlocal allowed
            try:
                await kube_client.create(configmap(f"c{i}", namespace, replicas="1"), dry_run=True)
                allowed += 1
            except ApiError as exc:
                failures.append(exc.message)

        for wave in range(4):
            before = certs.rotations
            traffic = asyncio.gather(*(one(wave * 30 + i) for i in range(30)))
            mount.rotate()  # the kubelet's symlink swap, while the wave is in flight
            await traffic
            await eventually(lambda b=before: asyncio.sleep(0, certs.rotations > b), "the swap to be loaded")
        await asyncio.gather(*(one(1000 + i) for i in range(10)))  # after the last swap too
        assert failures == [] and allowed == 130
        assert certs.rotations == 5
        assert await refused(kube_client, configmap("still", namespace, replicas="11"))  # still enforced
    finally:
        await runtime.stop()
        with contextlib.suppress(NotFound):
            await kube_client.delete("validatingwebhookconfigurations", name)
