"""A throwaway PKI for one local cluster.

Everything is generated once per cluster data directory and reused across restarts, so
kubeconfigs handed out earlier keep working. Private keys are written with mode 0600.
"""

from __future__ import annotations

import datetime as dt
import ipaddress
import os
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

SERVING_DNS_NAMES = ("localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc")
# 10.0.0.1 is the ClusterIP of the `kubernetes` Service for --service-cluster-ip-range=10.0.0.0/24.
SERVING_IPS = ("127.0.0.1", "10.0.0.1")
VALIDITY = dt.timedelta(days=365)

# Client identities: file stem -> (CN, O). The bootstrap RBAC policy binds the system:kube-* users.
CLIENTS = {
    "admin": ("kubeloop-admin", "system:masters"),
    "controller-manager": ("system:kube-controller-manager", None),
    "scheduler": ("system:kube-scheduler", None),
}

FRONT_PROXY_CLIENT = "front-proxy-client"

PrivateKey = ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey


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
    data = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    # Create with 0600 directly instead of chmod-after-write, so the key is never world readable.
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
    os.chmod(path, 0o600)


def _write_cert(path: Path, cert: x509.Certificate) -> None:
    path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))


def _name(cn: str, org: str | None = None) -> x509.Name:
    attrs = [x509.NameAttribute(NameOID.COMMON_NAME, cn)]
    if org:
        attrs.insert(0, x509.NameAttribute(NameOID.ORGANIZATION_NAME, org))
    return x509.Name(attrs)


def _new_key() -> ec.EllipticCurvePrivateKey:
    # P-256 is accepted everywhere in Kubernetes and is much faster to generate than RSA.
    return ec.generate_private_key(ec.SECP256R1())


def _builder(subject: x509.Name, issuer: x509.Name, public_key: object,
             validity: dt.timedelta = VALIDITY) -> x509.CertificateBuilder:
    now = dt.datetime.now(dt.UTC)
    return (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(issuer)
        .public_key(public_key)  # type: ignore[arg-type]
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))  # tolerate small clock skew
        .not_valid_after(now + validity)
    )


def make_ca(cn: str = "kubeloop-ca", *, validity: dt.timedelta = VALIDITY,
            ) -> tuple[ec.EllipticCurvePrivateKey, x509.Certificate]:
    """A self-signed CA (``validity``: how long it is valid; the webhook server issues shorter leaves)."""
    key = _new_key()
    name = _name(cn)
    cert = (
        _builder(name, name, key.public_key(), validity)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True, key_cert_sign=True, crl_sign=True, content_commitment=False,
                key_encipherment=False, data_encipherment=False, key_agreement=False,
                encipher_only=False, decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .sign(key, hashes.SHA256())
    )
    return key, cert


def issue(
    ca_key: PrivateKey,
    ca_cert: x509.Certificate,
    cn: str,
    org: str | None = None,
    *,
    server: bool = False,
    dns_names: tuple[str, ...] = (),
    ips: tuple[str, ...] = (),
    validity: dt.timedelta = VALIDITY,
) -> tuple[ec.EllipticCurvePrivateKey, x509.Certificate]:
    """A leaf certificate signed by the CA: a client cert, or a serving cert with SANs."""
    key = _new_key()
    usage = ExtendedKeyUsageOID.SERVER_AUTH if server else ExtendedKeyUsageOID.CLIENT_AUTH
    builder = (
        _builder(_name(cn, org), ca_cert.subject, key.public_key(), validity)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True, key_encipherment=False, content_commitment=False,
                data_encipherment=False, key_agreement=False, key_cert_sign=False, crl_sign=False,
                encipher_only=False, decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_cert.public_key()),  # type: ignore[arg-type]
            critical=False,
        )
    )
    if dns_names or ips:
        sans: list[x509.GeneralName] = [x509.DNSName(n) for n in dns_names]
        sans += [x509.IPAddress(ipaddress.ip_address(ip)) for ip in ips]
        builder = builder.add_extension(x509.SubjectAlternativeName(sans), critical=False)
    return key, builder.sign(ca_key, hashes.SHA256())


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
