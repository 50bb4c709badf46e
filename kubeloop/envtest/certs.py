"""A throwaway PKI for one local cluster.

Everything is generated once per cluster data directory and reused across restarts, so
kubeconfigs handed out earlier keep working. Private keys are written with mode 0600.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from kubeloop.pki import PrivateKey, cert_pem, issue, key_pem, make_ca

SERVING_DNS_NAMES = ("localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc")
# 10.0.0.1 is the ClusterIP of the `kubernetes` Service for --service-cluster-ip-range=10.0.0.0/24.
SERVING_IPS = ("127.0.0.1", "10.0.0.1")

# Client identities: file stem -> (CN, O). The bootstrap RBAC policy binds the system:kube-* users.
CLIENTS = {
    "admin": ("kubeloop-admin", "system:masters"),
    "controller-manager": ("system:kube-controller-manager", None),
    "scheduler": ("system:kube-scheduler", None),
}

FRONT_PROXY_CLIENT = "front-proxy-client"


@dataclass(frozen=True)
class ClusterPKI:
    """Paths of the generated files; ``<stem>.crt`` / ``<stem>.key`` pairs in one directory."""

    directory: Path

    def crt(self, stem: str) -> Path:
        return self.directory / f"{stem}.crt"

    def key(self, stem: str) -> Path:
        return self.directory / f"{stem}.key"

    @property
    def ca_crt(self) -> Path:
        return self.crt("ca")

    @property
    def sa_key(self) -> Path:
        return self.directory / "sa.key"

    @property
    def sa_pub(self) -> Path:
        return self.directory / "sa.pub"


def _write_private(path: Path, key: PrivateKey) -> None:
    data = key_pem(key)
    # Create with 0600 directly instead of chmod-after-write, so the key is never world readable.
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
    os.chmod(path, 0o600)


def _write_cert(path: Path, cert: x509.Certificate) -> None:
    path.write_bytes(cert_pem(cert))


def ensure_pki(directory: Path) -> ClusterPKI:
    """Create the cluster PKI in ``directory`` unless it is already complete."""
    pki = ClusterPKI(directory)
    wanted = [pki.ca_crt, pki.crt("apiserver"), pki.crt("front-proxy-client"), pki.sa_key, pki.sa_pub]
    wanted += [pki.crt(stem) for stem in CLIENTS]
    if all(p.exists() for p in wanted):
        return pki
    directory.mkdir(parents=True, exist_ok=True)
    os.chmod(directory, 0o700)

    ca_key, ca_cert = make_ca()
    _write_private(pki.key("ca"), ca_key)
    _write_cert(pki.ca_crt, ca_cert)

    key, cert = issue(
        ca_key, ca_cert, "kube-apiserver", server=True, dns_names=SERVING_DNS_NAMES, ips=SERVING_IPS
    )
    _write_private(pki.key("apiserver"), key)
    _write_cert(pki.crt("apiserver"), cert)

    for stem, (cn, org) in CLIENTS.items():
        key, cert = issue(ca_key, ca_cert, cn, org)
        _write_private(pki.key(stem), key)
        _write_cert(pki.crt(stem), cert)

    # A separate front-proxy CA, as kubeadm does: it lets aggregated API servers work, and without
    # it every delegating component logs "missing content for CA bundle" on start.
    fp_key, fp_cert = make_ca("kubeloop-front-proxy-ca")
    _write_private(pki.key("front-proxy-ca"), fp_key)
    _write_cert(pki.crt("front-proxy-ca"), fp_cert)
    key, cert = issue(fp_key, fp_cert, FRONT_PROXY_CLIENT)
    _write_private(pki.key("front-proxy-client"), key)
    _write_cert(pki.crt("front-proxy-client"), cert)

    # Service-account tokens are signed with RSA (RS256), the one algorithm every consumer accepts.
    sa = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    _write_private(pki.sa_key, sa)
    public = serialization.PublicFormat.SubjectPublicKeyInfo
    pki.sa_pub.write_bytes(sa.public_key().public_bytes(serialization.Encoding.PEM, public))
    return pki
