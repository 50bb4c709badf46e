"""``--webhook-cert-dir``: a mounted (cert-manager) certificate served over real TLS, checked at start,
and reloaded when the kubelet swaps the mounted files, with requests in flight and none failing."""

from __future__ import annotations

import asyncio
import datetime as dt
import importlib.util
import itertools
import os
import ssl
from pathlib import Path
from typing import Any

import aiohttp
import orjson
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import serialization

from kubeloop.pki import issue, make_ca
from kubeloop.webhooks import WebhookServer
from kubeloop.webhooks.admission import AdmissionRequest
from kubeloop.webhooks.cert_dir import CertDirError, MountedCerts
from kubeloop.webhooks.hooks import Hooks
from kubeloop.webhooks.runtime import WebhookOptions, WebhookRuntime, WebhookSetupError

from .test_webhooks_admission import review

PEM = serialization.Encoding.PEM
_swaps = itertools.count()


class Mount:
    """A directory laid out as the kubelet mounts a Secret: files are symlinks through ``..data``,
    which is swapped atomically (rename of a new symlink over it) when the Secret changes."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.ca_key, self.ca_cert = make_ca("test-issuer")

    def issue(self) -> tuple[bytes, bytes]:
        key, cert = issue(self.ca_key, self.ca_cert, "webhook", server=True, ips=("127.0.0.1",),
                          validity=dt.timedelta(days=1))
        return (cert.public_bytes(PEM), key.private_bytes(PEM, serialization.PrivateFormat.PKCS8,
                                                           serialization.NoEncryption()))

    def write(self, files: dict[str, bytes]) -> None:
        stamp = self.root / f"..{next(_swaps)}"
        stamp.mkdir()
        for name, data in files.items():
            (stamp / name).write_bytes(data)
            if not (self.root / name).is_symlink():
                (self.root / name).symlink_to(Path("..data") / name)
        tmp = self.root / "..data_tmp"
        tmp.symlink_to(stamp.name)
        os.replace(tmp, self.root / "..data")

    def rotate(self) -> bytes:
        cert, key = self.issue()
        self.write({"tls.crt": cert, "tls.key": key, "ca.crt": self.ca_cert.public_bytes(PEM)})
        return cert

    def client_context(self) -> ssl.SSLContext:
        return ssl.create_default_context(cadata=self.ca_cert.public_bytes(PEM).decode())


def example_operator() -> Any:
    """The how-to's operator (a validating and a mutating webhook)."""
    path = Path(__file__).parents[2] / "docs/howto/webhooks_example.py"
    spec = importlib.util.spec_from_file_location("webhooks_example_cert_dir", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.op


async def nothing(req: AdmissionRequest) -> None:
    return None


async def served_cert(port: int, ctx: ssl.SSLContext) -> bytes:
    """The certificate a fresh TLS handshake gets, as PEM (the handshake verifies it against the CA)."""
    _, writer = await asyncio.open_connection("127.0.0.1", port, ssl=ctx)
    der = writer.get_extra_info("ssl_object").getpeercert(binary_form=True)
    writer.close()
    return x509.load_der_x509_certificate(der).public_bytes(PEM)


async def test_serves_the_mounted_pair_and_reloads_it_with_requests_in_flight(tmp_path: Path) -> None:
    mount = Mount(tmp_path)
    first = mount.rotate()
    certs = MountedCerts(tmp_path, poll_every=0.05)
    certs.reload()
    server = WebhookServer(certs)
    server.validating("/ok", nothing)
    await server.start()
    try:
        assert server.ready and certs.ca_bundle == mount.ca_cert.public_bytes(PEM) and certs.ca_bundle_b64 is None
        ctx = mount.client_context()
        assert await served_cert(server.port, ctx) == first
        statuses: list[int] = []
        # A new connection per request: handshakes happen before, during and after each swap.
        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(ssl=ctx, force_close=True)) as session:
            async def one() -> None:
                async with session.post(server.url("/ok"), data=orjson.dumps(review())) as resp:
                    statuses.append(resp.status)
                    assert (await resp.json())["response"]["allowed"] is True

            served = {first}
            for _ in range(5):
                traffic = asyncio.gather(*(one() for _ in range(20)))
                new = mount.rotate()
                async with asyncio.timeout(5):
                    while await served_cert(server.port, ctx) != new:
                        await asyncio.sleep(0.02)
                served.add(new)
                await traffic
        assert statuses == [200] * 100
        assert len(served) == 6 and certs.rotations == 6
    finally:
        await server.stop()
        certs.close()


async def test_a_broken_pair_mid_rotation_keeps_the_previous_one(tmp_path: Path) -> None:
    mount = Mount(tmp_path)
    first = mount.rotate()
    certs = MountedCerts(tmp_path, poll_every=0.02)
    certs.reload()
    mount.write({"tls.crt": mount.issue()[0], "tls.key": mount.issue()[1]})  # a key of another certificate
    with pytest.raises(CertDirError, match="tls.key is not the key of"):
        certs.reload()
    assert certs.rotations == 1 and certs.cert is not None and certs.cert.public_bytes(PEM) == first
    certs.close()


@pytest.mark.parametrize(("files", "message"), [
    (None, "--webhook-cert-dir {d}: no such directory"),
    ({"tls.crt": b"x"}, "--webhook-cert-dir {d}: cannot read {d}/tls.key"),
    ({"tls.crt": b"not pem", "tls.key": b"k"}, "--webhook-cert-dir {d}: {d}/tls.crt is not a PEM certificate"),
    ("bad-key", "--webhook-cert-dir {d}: {d}/tls.key is not an unencrypted PEM private key"),
])
def test_bad_or_missing_files_name_the_flag_and_the_file(tmp_path: Path, files: object, message: str) -> None:
    d = tmp_path / "certs"
    if files is not None:
        d.mkdir()
        mount = Mount(d)
        cert = mount.issue()[0]
        for name, data in ({"tls.crt": cert, "tls.key": b"secret-ish"} if files == "bad-key" else files).items():
            (d / name).write_bytes(data)
    with pytest.raises(CertDirError) as err:
        MountedCerts(d).reload()
    assert str(err.value).startswith(message.format(d=d))
    assert "secret-ish" not in str(err.value)  # key material is never quoted


async def test_runtime_in_cert_dir_mode_writes_no_ca_bundle_and_fails_clearly(tmp_path: Path) -> None:
    runtime = WebhookRuntime("op", Hooks(), WebhookOptions(port=0, cert_dir=str(tmp_path / "missing")))
    with pytest.raises(WebhookSetupError, match="--webhook-cert-dir .*missing: no such directory"):
        await runtime.start(client=None)  # type: ignore[arg-type]  # fails before any API call
    mount = Mount(tmp_path)
    mount.rotate()
    for cert_dir, bundles in ((str(tmp_path), 0), (None, 3)):  # by default: both configurations and the CRD
        runtime = WebhookRuntime("website", example_operator().hooks, WebhookOptions(port=0, cert_dir=cert_dir))
        runtime.server = runtime._serve(None)  # noqa: SLF001 - the certificates, without an API server
        assert isinstance(runtime.certs, MountedCerts) == bool(cert_dir) and runtime.certs.loaded
        manifests = runtime.manifests()
        assert len(manifests) == 3 and str(manifests).count("caBundle") == bundles, manifests
        runtime.certs.close()


def test_the_run_flag_reaches_the_webhook_options() -> None:
    from click.testing import CliRunner

    from kubeloop.cli.main import main
    from kubeloop.cli.options import RunOptions

    assert RunOptions(webhook_cert_dir="/certs").webhook_options("ns").cert_dir == "/certs"
    assert RunOptions().webhook_options("ns").cert_dir is None
    help_text = CliRunner().invoke(main, ["run", "blackadder", "--help"]).output
    assert "--webhook-cert-dir" in help_text
