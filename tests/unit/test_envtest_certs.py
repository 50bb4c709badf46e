"""The throwaway cluster PKI: SANs, client identities, key file permissions, idempotence."""

from __future__ import annotations

import ipaddress
import stat
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.hazmat.primitives.serialization import load_pem_private_key
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from kubeloop.envtest.certs import ensure_pki


def _cert(path: Path) -> x509.Certificate:
    return x509.load_pem_x509_certificate(path.read_bytes())


def test_serving_cert_covers_loopback_and_service_names(tmp_path: Path) -> None:
    pki = ensure_pki(tmp_path / "pki")
    cert = _cert(pki.crt("apiserver"))
    sans = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert set(sans.get_values_for_type(x509.DNSName)) == {
        "localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc"}
    assert set(sans.get_values_for_type(x509.IPAddress)) == {
        ipaddress.ip_address("127.0.0.1"), ipaddress.ip_address("10.0.0.1")}
    eku = cert.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    assert ExtendedKeyUsageOID.SERVER_AUTH in eku


def test_leaf_certs_are_signed_by_the_ca(tmp_path: Path) -> None:
    pki = ensure_pki(tmp_path / "pki")
    ca = _cert(pki.ca_crt)
    assert ca.extensions.get_extension_for_class(x509.BasicConstraints).value.ca
    for stem in ("apiserver", "admin", "controller-manager", "scheduler"):
        cert = _cert(pki.crt(stem))
        cert.verify_directly_issued_by(ca)
    _cert(pki.crt("front-proxy-client")).verify_directly_issued_by(_cert(pki.crt("front-proxy-ca")))


def test_admin_is_in_system_masters(tmp_path: Path) -> None:
    pki = ensure_pki(tmp_path / "pki")
    subject = _cert(pki.crt("admin")).subject
    assert subject.get_attributes_for_oid(NameOID.COMMON_NAME)[0].value == "kubeloop-admin"
    assert subject.get_attributes_for_oid(NameOID.ORGANIZATION_NAME)[0].value == "system:masters"
    eku = _cert(pki.crt("admin")).extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    assert ExtendedKeyUsageOID.CLIENT_AUTH in eku


def test_private_keys_are_0600_and_the_sa_key_is_rsa(tmp_path: Path) -> None:
    pki = ensure_pki(tmp_path / "pki")
    keys = sorted(pki.directory.glob("*.key"))
    # ca, apiserver, admin, controller-manager, scheduler, front-proxy-ca, front-proxy-client, sa
    assert len(keys) == 8
    for key in keys:
        assert stat.S_IMODE(key.stat().st_mode) == 0o600, key
    sa = load_pem_private_key(pki.sa_key.read_bytes(), password=None)
    assert isinstance(sa, rsa.RSAPrivateKey) and sa.key_size >= 2048
    assert pki.sa_pub.read_bytes().startswith(b"-----BEGIN PUBLIC KEY-----")


def test_existing_pki_is_reused(tmp_path: Path) -> None:
    first = ensure_pki(tmp_path / "pki").ca_crt.read_bytes()
    assert ensure_pki(tmp_path / "pki").ca_crt.read_bytes() == first
