"""Certificates for TLS between Kubernetes components: a self-signed CA and the leaves it issues.

- Keys are ECDSA P-256: every Kubernetes component accepts them, and they generate far faster than RSA.
- A certificate is valid from five minutes before its issue (clock skew between hosts) for ``validity``.
- A CA may sign certificates (and CRLs) only; a leaf is either a client certificate or a serving one
  (``server=True``), the latter naming its DNS names and IP addresses as subject alternative names.
- PEM encodings are PKCS#8 for private keys, unencrypted: whoever writes them chooses the file mode.

Both the local control plane (``kubeloop.envtest``) and the webhook server issue their certificates here.
"""

from __future__ import annotations

import datetime as dt
import ipaddress

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

VALIDITY = dt.timedelta(days=365)

PrivateKey = ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey


def cert_pem(cert: x509.Certificate) -> bytes:
    """``cert`` as PEM."""
    return cert.public_bytes(serialization.Encoding.PEM)


def key_pem(key: PrivateKey) -> bytes:
    """``key`` as unencrypted PKCS#8 PEM (never log it)."""
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())


def _name(cn: str, org: str | None = None) -> x509.Name:
    attrs = [x509.NameAttribute(NameOID.COMMON_NAME, cn)]
    if org:
        attrs.insert(0, x509.NameAttribute(NameOID.ORGANIZATION_NAME, org))
    return x509.Name(attrs)


def _new_key() -> ec.EllipticCurvePrivateKey:
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
