"""blackadder's conversion webhook stays served while a replica restarts, on the real control plane.

ChaosAgent's versions differ by renamed fields, which the API server's ``None`` conversion cannot do, so
every read in ``v1alpha1`` or ``v1beta2`` (storage is ``v1beta1``) calls the operator. Served by one process,
a restart makes those versions unreadable; blackadder is therefore deployed with two replicas behind the
Service, each serving conversions, each unready from the moment it is asked to stop while it keeps
answering for ``--webhook-drain-seconds``.

Here the two replicas are two ``kubeloop run blackadder`` processes sharing one serving certificate
(``--webhook-cert-dir``, as cert-manager's Secret would be mounted), and the Service is played by a TCP
proxy on 127.0.0.1 that hands each new connection to a replica whose ``/readyz`` answers 200 (what the
endpoints controller and kube-proxy do with the readiness probe). The CRD's conversion names the proxy.
The proxy learns of readiness changes a second late, as a Service's users do. While each replica in
turn is stopped and started again (the next once the proxy sends to the new one, as a rolling update
waits for the new pod), the agent is read in all three versions without a pause: no read may fail.
Then with both stopped, reads in the converted versions fail and those in the storage version still
work: the reads above went through the webhook. (The drain is not what this shows: here a replica's own
shutdown outlasts the proxy's lag, and with ``--webhook-drain-seconds 0`` no read failed either.)
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import datetime as dt
import itertools
import secrets
import signal
import socket
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
from cryptography.hazmat.primitives import serialization

from kubeloop.client import ApiError, Client, NotFound
from kubeloop.envtest import ExternalCluster
from kubeloop.pki import issue
from kubeloop.testing import wait_for, wait_for_crd, wait_for_deletion
from kubeloop.testing.session import CRD_LABEL
from kubeloop.testing.session import current as current_session
from kubeloop.webhooks.certs import CertAuthority

CRD = "chaosagents.blackadder.io"
VERSIONS = ("v1alpha1", "v1beta1", "v1beta2")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def kubeloop_cli(*args: str) -> str:
    import subprocess

    proc = subprocess.run([sys.executable, "-m", "kubeloop.cli.main", *args], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


@dataclass
class Replica:
    """One ``kubeloop run blackadder`` process: its webhook and probe ports, its log."""

    webhook: int
    probe: int
    log: Path
    proc: asyncio.subprocess.Process | None = None

    async def start(self, args: list[str]) -> None:
        with self.log.open("ab") as out:
            self.proc = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "kubeloop.cli.main", "run", "blackadder", *args,
                "--webhook-port", str(self.webhook), "--health-probe-bind-address", f"127.0.0.1:{self.probe}",
                stdout=out, stderr=out)
        for _ in range(900):
            if await self.ready():
                return
            if self.proc.returncode is not None:
                raise AssertionError(f"replica exited {self.proc.returncode}: {self.log.read_text()[-3000:]}")
            await asyncio.sleep(0.1)
        raise AssertionError("replica never became ready")

    async def ready(self) -> bool:
        with contextlib.suppress(aiohttp.ClientError, asyncio.TimeoutError):
            timeout = aiohttp.ClientTimeout(total=1)
            async with aiohttp.ClientSession(timeout=timeout) as http, \
                    http.get(f"http://127.0.0.1:{self.probe}/readyz") as resp:
                return resp.status == 200
        return False

    async def stop(self) -> None:
        assert self.proc is not None
        if self.proc.returncode is None:
            self.proc.send_signal(signal.SIGTERM)
        await asyncio.wait_for(self.proc.wait(), 60)
        text = self.log.read_text()
        assert self.proc.returncode == 0 and "Traceback" not in text, text[-3000:]


@dataclass
class ServiceProxy:
    """The Service's part: new connections go to a replica whose readiness probe passes, bytes both ways.
    It learns of a change ``lag`` seconds late, as the API server's resolver and kube-proxy learn of an
    endpoint's removal a moment after the pod begins terminating."""

    replicas: list[Replica]
    lag: float = 1.0
    port: int = 0
    ready: list[Replica] = field(default_factory=list)
    _turn: itertools.count = field(default_factory=itertools.count)

    async def __aenter__(self) -> ServiceProxy:
        self.server = await asyncio.start_server(self._connect, "127.0.0.1", 0)
        self.port = self.server.sockets[0].getsockname()[1]
        self.probing = asyncio.create_task(self._probe())
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.probing.cancel()
        self.server.close()
        with contextlib.suppress(asyncio.CancelledError):
            await self.probing

    async def sees(self, *replicas: Replica) -> None:
        """Until every one of ``replicas`` receives connections."""
        while not all(r in self.ready for r in replicas):
            await asyncio.sleep(0.05)

    async def _probe(self) -> None:
        while True:
            states = await asyncio.gather(*(r.ready() for r in self.replicas))
            seen = [r for r, ok in zip(self.replicas, states, strict=True) if ok]
            asyncio.get_running_loop().call_later(self.lag, setattr, self, "ready", seen)
            await asyncio.sleep(0.05)

    async def _connect(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if not self.ready:
            writer.close()
            return
        replica = self.ready[next(self._turn) % len(self.ready)]
        try:
            up_reader, up_writer = await asyncio.open_connection("127.0.0.1", replica.webhook)
        except OSError:
            writer.close()
            return
        await asyncio.gather(self._pipe(reader, up_writer), self._pipe(up_reader, writer))

    @staticmethod
    async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while data := await reader.read(65536):
                writer.write(data)
                await writer.drain()
        except (OSError, asyncio.CancelledError):
            pass
        finally:
            writer.close()


@dataclass
class Reader:
    """Reads the agent in every version, one after the other, until stopped; keeps what failed."""

    client: Client
    name: str
    reads: int = 0
    failures: list[str] = field(default_factory=list)

    async def run(self) -> None:
        while True:
            for version in VERSIONS:
                try:
                    agent = await self.client.get(f"blackadder.io/{version}/chaosagents", self.name)
                    assert agent["apiVersion"] == f"blackadder.io/{version}"
                except ApiError as exc:
                    self.failures.append(f"{version}: {exc}")
                self.reads += 1
            await asyncio.sleep(0.01)


def serving_pair(directory: Path) -> bytes:
    """A CA and a serving certificate for 127.0.0.1 in ``directory`` (tls.crt, tls.key); returns the CA."""
    ca = CertAuthority.generate()
    key, cert = issue(ca.key, ca.cert, "blackadder-webhook", server=True, dns_names=(), ips=("127.0.0.1",),
                      validity=dt.timedelta(hours=1))
    directory.mkdir(mode=0o700)
    (directory / "tls.crt").write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    (directory / "tls.key").write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                                          serialization.PrivateFormat.PKCS8,
                                                          serialization.NoEncryption()))
    return ca.bundle


async def install_crd(cluster: Any, client: Client, proxy_port: int, ca: bytes) -> None:
    """The generated CRD, marked as the test kit's, its conversion pointed at the proxy with the CA (what
    the generated manifests and cert-manager's cainjector do with the Service)."""
    await asyncio.to_thread(cluster.kubectl, "apply", "--server-side", "-f", "-",
                            input=kubeloop_cli("generate", "crd", "blackadder"))
    await wait_for_crd(client, CRD, timeout=60)
    await client.patch("customresourcedefinitions", CRD, {"metadata": {"labels": {CRD_LABEL: "true"}}})
    current_session().crds.add(CRD)
    stanza = (await client.get("customresourcedefinitions", CRD))["spec"]["conversion"]
    path = stanza["webhook"]["clientConfig"]["service"]["path"]
    stanza["webhook"]["clientConfig"] = {"url": f"https://127.0.0.1:{proxy_port}{path}",
                                         "caBundle": base64.b64encode(ca).decode()}
    await client.patch("customresourcedefinitions", CRD, [{"op": "replace", "path": "/spec/conversion",
                                                           "value": stanza}], type="json")


async def remove_crd(client: Client) -> None:
    with contextlib.suppress(NotFound):
        await client.delete("customresourcedefinitions", CRD)
    await wait_for_deletion(client, "customresourcedefinitions", CRD, timeout=60)
    current_session().crds.discard(CRD)


async def test_conversions_survive_a_rolling_restart_of_two_replicas(kube_cluster: Any, kube_client: Client,
                                                                     namespace: str, tmp_path: Path) -> None:
    if isinstance(kube_cluster, ExternalCluster):
        import pytest

        pytest.skip("installs blackadder's CRD under its fixed name: only on the session's own cluster")
    with contextlib.suppress(NotFound):
        await kube_client.get("customresourcedefinitions", CRD)
        await remove_crd(kube_client)
    ca = serving_pair(tmp_path / "certs")
    replicas = [Replica(free_port(), free_port(), tmp_path / f"replica-{i}.log") for i in range(2)]
    name = f"baldrick-{secrets.token_hex(3)}"
    v1beta2 = "blackadder.io/v1beta2/chaosagents"
    async with ServiceProxy(replicas) as proxy:
        args = ["--kubeconfig", str(kube_cluster.kubeconfig), "--leader-elect", "--leader-election-namespace",
                namespace, "--operator-namespace", namespace, "--metrics-bind-address", "0",
                "--webhook-cert-dir", str(tmp_path / "certs"), "--webhook-url-port", str(proxy.port),
                "--webhook-drain-seconds", "2"]
        try:
            await install_crd(kube_cluster, kube_client, proxy.port, ca)
            await asyncio.gather(*(r.start(args) for r in replicas))
            await asyncio.wait_for(proxy.sees(*replicas), 30)
            await kube_client.create({
                "apiVersion": "blackadder.io/v1alpha1", "kind": "ChaosAgent", "metadata": {"name": name},
                "spec": {"tantrumMode": True, "podTolerance": 4, "suspend": True,
                         "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": namespace}}}})
            agent = await wait_for(kube_client, v1beta2, name, timeout=60,
                                   predicate=lambda a: bool((a.get("status") or {}).get("conditions")))
            assert agent["spec"]["minRunningPods"] == 4  # converted, by whichever replica the proxy chose

            reader = Reader(kube_client, name)
            reading = asyncio.create_task(reader.run())
            during = 0
            try:
                for replica in replicas:  # a rolling restart: one at a time, the next once this one is ready
                    before = reader.reads
                    await replica.stop()
                    await replica.start(args)
                    await asyncio.wait_for(proxy.sees(replica), 30)
                    during += reader.reads - before
            finally:
                reading.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await reading
            assert during > 0
            assert not reader.failures, f"{len(reader.failures)} of {reader.reads} reads failed: {reader.failures[:5]}"
            print(f"\n{reader.reads} reads in {'/'.join(VERSIONS)} during a rolling restart, none failed")

            await kube_client.delete(v1beta2, name)  # its finalizer is removed by the leading replica
            await wait_for_deletion(kube_client, v1beta2, name, timeout=60)
            await kube_client.create({"apiVersion": "blackadder.io/v1beta1", "kind": "ChaosAgent",
                                      "metadata": {"name": name},
                                      "spec": {"suspend": True, "namespaceSelector": {"matchLabels": {
                                          "kubernetes.io/metadata.name": namespace}}}})
            await asyncio.gather(*(r.stop() for r in replicas))  # nobody serves: only storage reads work
            assert (await kube_client.get("blackadder.io/v1beta1/chaosagents", name))["metadata"]["name"] == name
            for version in ("v1alpha1", "v1beta2"):
                try:
                    await kube_client.get(f"blackadder.io/{version}/chaosagents", name)
                except ApiError as exc:
                    assert "conversion webhook" in str(exc), exc
                else:
                    raise AssertionError(f"{version} read with no replica serving conversions")
        finally:
            for replica in replicas:
                if replica.proc is not None and replica.proc.returncode is None:
                    replica.proc.send_signal(signal.SIGTERM)
                    await asyncio.wait_for(replica.proc.wait(), 60)
            with contextlib.suppress(NotFound):  # no operator left to remove its finalizer
                await kube_client.patch("blackadder.io/v1beta1/chaosagents", name, {"metadata": {"finalizers": None}})
                await kube_client.delete("blackadder.io/v1beta1/chaosagents", name)
            await remove_crd(kube_client)
