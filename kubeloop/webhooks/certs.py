"""The webhook server's own certificates: a CA, a serving certificate it signs, and rotation.

- The CA is what the API server trusts (the ``caBundle``); it lives long (``ca_validity``) and is kept
  across rotations, so the webhook configurations never need a new bundle while the process lives.
- The serving certificate is short-lived (``validity``) and names the Service's DNS names and 127.0.0.1
  (the address ``kubeloop run`` is called on locally).
- :meth:`WebhookCerts.rotate` issues a new serving certificate and loads it into the *same*
  ``ssl.SSLContext``: new handshakes get the new certificate, connections already open keep theirs, so
  no request in flight fails. :meth:`keep_fresh` does it when less than ``renew_before`` is left.
- Private keys are only written into a private temporary directory (mode 0700, files 0600), because
  ``SSLContext.load_cert_chain`` reads files; it is removed by :meth:`close`.
- Several replicas must share the CA (one caBundle): pass the same ``CertAuthority`` (e.g. loaded from a
  Secret with :meth:`CertAuthority.from_pem`) to each; each replica still issues its own leaf.
"""

from __future__ import annotations

import asyncio
import base64
import datetime as dt
import logging
import shutil
import ssl
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import serialization

from kubeloop import pki
from kubeloop.pki import PrivateKey

log = logging.getLogger(__name__)

CA_VALIDITY = dt.timedelta(days=3650)
SERVING_VALIDITY = dt.timedelta(days=30)
RENEW_BEFORE = dt.timedelta(days=10)
LOCAL_IPS = ("127.0.0.1",)


def service_dns_names(service: str, namespace: str) -> tuple[str, ...]:
    """The names the API server may use for ``service.namespace`` (it uses ``<svc>.<ns>.svc``)."""
    return (service, f"{service}.{namespace}", f"{service}.{namespace}.svc",
            f"{service}.{namespace}.svc.cluster.local")


@dataclass(frozen=True)
class CertAuthority:
    """A CA key and certificate; ``bundle`` is the PEM the API server is given as ``caBundle``."""

    key: PrivateKey
    cert: x509.Certificate

    @classmethod
    def generate(cls, cn: str = "kubeloop-webhook-ca", validity: dt.timedelta = CA_VALIDITY) -> CertAuthority:
        """A new self-signed CA."""
        key, cert = pki.make_ca(cn, validity=validity)
        return cls(key, cert)

    @classmethod
    def from_pem(cls, cert_pem: bytes, key_pem: bytes) -> CertAuthority:
        """A CA stored elsewhere (a Secret shared by the replicas)."""
        key = serialization.load_pem_private_key(key_pem, password=None)
        return cls(key, x509.load_pem_x509_certificate(cert_pem))  # type: ignore[arg-type]

    @property
    def bundle(self) -> bytes:
        """The CA certificate as PEM."""
        return pki.cert_pem(self.cert)

    def key_pem(self) -> bytes:
        """The CA key as PEM, to store it where the other replicas can read it (never log it)."""
        return pki.key_pem(self.key)


class WebhookCerts:
    """A serving certificate for the webhook server, signed by ``ca``, loaded into :attr:`ssl_context`."""

    def __init__(self, dns_names: tuple[str, ...] = (), ips: tuple[str, ...] = LOCAL_IPS, *,
                 ca: CertAuthority | None = None, validity: dt.timedelta = SERVING_VALIDITY,
                 renew_before: dt.timedelta = RENEW_BEFORE) -> None:
        if renew_before >= validity:
            # Otherwise every check would rotate: a misconfiguration, not a policy.
            raise ValueError(f"renew_before ({renew_before}) must be shorter than validity ({validity})")
        if not dns_names and not ips:
            raise ValueError("a serving certificate needs at least one DNS name or IP address (dns_names/ips)")
        self.dns_names, self.ips = tuple(dns_names), tuple(ips)
        self.ca = ca or CertAuthority.generate()
        self.validity, self.renew_before = validity, renew_before
        self._dir = Path(tempfile.mkdtemp(prefix="kubeloop-webhook-"))  # mode 0700 by mkdtemp
        self.ssl_context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        self.ssl_context.minimum_version = ssl.TLSVersion.TLSv1_2
        self.not_after: dt.datetime | None = None
        self.cert: x509.Certificate | None = None  # the serving certificate now handed out (public)
        self.rotations = 0
        # The pair now served, as PEM, and what is told of each new one: a webhook process of its own
        # (kubeloop/webhooks/process.py) serves the same certificate, handed over by its parent.
        self.pem: tuple[bytes, bytes] | None = None
        self.on_change: list[Callable[[], None]] = []
        self.rotate()

    @property
    def ca_bundle(self) -> bytes:
        """The PEM to trust (the CA's certificate)."""
        return self.ca.bundle

    @property
    def ca_bundle_b64(self) -> str:
        """``caBundle`` as it is written into webhook configurations and CRDs (base64 of the PEM)."""
        return base64.b64encode(self.ca_bundle).decode()

    @property
    def loaded(self) -> bool:
        """True once a serving certificate is in the SSL context (readiness waits for it)."""
        return self.not_after is not None

    def rotate(self) -> None:
        """Issues a new serving certificate and loads it for new handshakes (open connections keep theirs)."""
        key, cert = pki.issue(self.ca.key, self.ca.cert, "kubeloop-webhook", server=True,
                          dns_names=self.dns_names, ips=self.ips, validity=self.validity)
        crt_path, key_path = self._dir / f"tls-{self.rotations}.crt", self._dir / f"tls-{self.rotations}.key"
        self.pem = pki.cert_pem(cert), pki.key_pem(key)
        crt_path.write_bytes(self.pem[0])
        key_path.touch(mode=0o600)
        key_path.write_bytes(self.pem[1])
        self.ssl_context.load_cert_chain(crt_path, key_path)
        # The context has copied them: the files are no longer needed, and a key on disk is a liability.
        crt_path.unlink()
        key_path.unlink()
        self.cert, self.not_after = cert, cert.not_valid_after_utc
        self.rotations += 1
        log.info("webhook serving certificate issued, valid until %s", self.not_after.isoformat())
        for listener in self.on_change:
            listener()

    def needs_rotation(self, now: dt.datetime | None = None) -> bool:
        """True when less than ``renew_before`` of the serving certificate's validity is left."""
        now = now or dt.datetime.now(dt.UTC)
        return self.not_after is None or self.not_after - now <= self.renew_before

    async def keep_fresh(self, check_every: float = 3600.0) -> None:
        """Rotates whenever :meth:`needs_rotation` says so; runs until cancelled."""
        while True:
            if self.needs_rotation():
                self.rotate()
            await asyncio.sleep(check_every)

    def close(self) -> None:
        """Removes the private temporary directory."""
        shutil.rmtree(self._dir, ignore_errors=True)
