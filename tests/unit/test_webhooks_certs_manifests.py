"""Webhook certificates (SANs, rotation timing, a shared CA) and the generated manifests' defaults."""

from __future__ import annotations

import asyncio
import datetime as dt
import ipaddress

import pytest
from cryptography import x509

from kubeloop.webhooks import CertAuthority, Endpoint, Rule, WebhookCerts, WebhookSpec, service_dns_names
from kubeloop.webhooks.manifests import CERT_MANAGER_ANNOTATION, validating_configuration, with_conversion


def test_serving_cert_names_the_service_and_loopback() -> None:
    certs = WebhookCerts(service_dns_names("op-webhook", "op-system"))
    assert certs.cert is not None
    sans = certs.cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert sans.get_values_for_type(x509.DNSName) == [
        "op-webhook", "op-webhook.op-system", "op-webhook.op-system.svc", "op-webhook.op-system.svc.cluster.local"]
    assert sans.get_values_for_type(x509.IPAddress) == [ipaddress.ip_address("127.0.0.1")]
    assert certs.loaded and certs.ca_bundle.startswith(b"-----BEGIN CERTIFICATE-----")
    certs.close()


def test_rotation_is_due_only_near_expiry() -> None:
    certs = WebhookCerts(validity=dt.timedelta(hours=3), renew_before=dt.timedelta(hours=1))
    assert certs.not_after is not None
    assert not certs.needs_rotation()
    assert certs.needs_rotation(certs.not_after - dt.timedelta(minutes=59))
    certs.rotate()
    assert certs.rotations == 2
    certs.close()


async def test_keep_fresh_rotates_when_due() -> None:
    # 4 s of validity (whole seconds in X.509), renewal with 2 s left: due 1-2 s after issue.
    certs = WebhookCerts(validity=dt.timedelta(seconds=4), renew_before=dt.timedelta(seconds=2))
    task = asyncio.create_task(certs.keep_fresh(check_every=0.05))
    await asyncio.sleep(0.5)
    assert certs.rotations == 1, "rotated before it was due"
    await asyncio.sleep(2.0)
    task.cancel()
    assert certs.rotations >= 2
    certs.close()


def test_a_shared_ca_round_trips_through_pem() -> None:
    ca = CertAuthority.generate()
    again = CertAuthority.from_pem(ca.bundle, ca.key_pem())
    assert again.cert == ca.cert
    assert WebhookCerts(ca=again).ca_bundle == ca.bundle


def test_leaf_validity() -> None:
    from kubeloop.pki import issue
    ca = CertAuthority.generate()
    _, cert = issue(ca.key, ca.cert, "x", server=True, dns_names=service_dns_names("s", "n"), ips=("127.0.0.1",),
                    validity=dt.timedelta(days=1))
    sans = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert "s.n.svc" in sans.get_values_for_type(x509.DNSName)
    assert ipaddress.ip_address("127.0.0.1") in sans.get_values_for_type(x509.IPAddress)
    assert cert.not_valid_after_utc - cert.not_valid_before_utc <= dt.timedelta(days=1, minutes=5)


def test_bad_cert_settings_are_refused() -> None:
    with pytest.raises(ValueError, match="renew_before"):
        WebhookCerts(validity=dt.timedelta(days=1), renew_before=dt.timedelta(days=2))


SPEC = WebhookSpec("check.notes.example.com", "/validate-notes",
                   (Rule(("example.com",), ("*",), ("notes",)),))


def test_validating_configuration_defaults() -> None:
    cfg = validating_configuration("op", [SPEC], Endpoint(service="op-webhook", namespace="op-system"),
                                   operator_namespace="op-system", ca_bundle="Q0E=")
    hook = cfg["webhooks"][0]
    assert hook["failurePolicy"] == "Fail" and hook["sideEffects"] == "None" and hook["timeoutSeconds"] == 5
    assert hook["matchPolicy"] == "Equivalent" and hook["admissionReviewVersions"] == ["v1"]
    assert hook["namespaceSelector"]["matchExpressions"][0]["values"] == ["kube-system", "op-system"]
    assert hook["clientConfig"] == {"caBundle": "Q0E=", "service": {
        "name": "op-webhook", "namespace": "op-system", "path": "/validate-notes", "port": 443},
        "url": None}  # null: kubectl apply removes the url a local run wrote
    assert "reinvocationPolicy" not in hook


def test_local_url_and_cert_manager() -> None:
    cfg = validating_configuration("op", [SPEC], Endpoint(url="https://127.0.0.1:9443"),
                                   operator_namespace="op-system", cert_manager_certificate="op-system/op-cert")
    assert cfg["metadata"]["annotations"] == {CERT_MANAGER_ANNOTATION: "op-system/op-cert"}
    assert cfg["webhooks"][0]["clientConfig"] == {"url": "https://127.0.0.1:9443/validate-notes"}


@pytest.mark.parametrize(("build", "message"), [
    (lambda: Endpoint(url="http://127.0.0.1:1"), "must start with https://"),
    (lambda: Endpoint(service="s"), "needs namespace="),
    (lambda: Endpoint(), "exactly one of"),
    (lambda: WebhookSpec("check", "/x", ()), "fully qualified"),
    (lambda: WebhookSpec("a.b.c", "/x", (), timeout_seconds=60), "between 1 and 30"),
    (lambda: WebhookSpec("a.b.c", "x", ()), "must start with '/'"),
    (lambda: Rule(("",), ("v1",), ("pods",), ("create",)), "must be some of CREATE"),
])
def test_bad_manifest_input(build: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        build()  # type: ignore[operator]


def test_with_conversion_copies_the_crd() -> None:
    crd = {"metadata": {"name": "notes.example.com"}, "spec": {"versions": [{"name": "v1"}, {"name": "v2"}]}}
    out = with_conversion(crd, Endpoint(url="https://127.0.0.1:1"), "/convert", ca_bundle="Q0E=")
    assert out["spec"]["conversion"] == {"strategy": "Webhook", "webhook": {
        "clientConfig": {"url": "https://127.0.0.1:1/convert", "caBundle": "Q0E="}, "conversionReviewVersions": ["v1"]}}
    assert "conversion" not in crd["spec"]
    with pytest.raises(ValueError, match="fewer than two versions"):
        with_conversion({"spec": {"versions": [{}]}}, Endpoint(url="https://h"), "/c")
