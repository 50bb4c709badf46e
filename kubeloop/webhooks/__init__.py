"""Admission and conversion webhooks: certificates, reviews, the HTTPS server and the manifests.

One concept per module: ``certs`` (CA, serving certificate, rotation), ``patch`` (RFC 6902 diff),
``admission`` (AdmissionReview v1), ``conversion`` (ConversionReview v1, hub and spokes), ``server``
(the aiohttp HTTPS server), ``manifests`` (webhook configurations, the CRD conversion stanza),
``migration`` (rewriting a CRD's objects in a new storage version).
"""

from kubeloop.webhooks.admission import AdmissionRequest, Denied, MalformedReview, UserInfo
from kubeloop.webhooks.certs import CertAuthority, WebhookCerts, service_dns_names
from kubeloop.webhooks.conversion import ConversionError, Converter, round_trip_failures, round_trip_test
from kubeloop.webhooks.manifests import (
    Endpoint,
    Rule,
    WebhookSpec,
    conversion_stanza,
    mutating_configuration,
    validating_configuration,
    with_conversion,
)
from kubeloop.webhooks.migration import migrate_storage
from kubeloop.webhooks.patch import diff
from kubeloop.webhooks.server import Webhook, WebhookServer

__all__ = [
    "AdmissionRequest",
    "CertAuthority",
    "ConversionError",
    "Converter",
    "Denied",
    "Endpoint",
    "MalformedReview",
    "Rule",
    "UserInfo",
    "Webhook",
    "WebhookCerts",
    "WebhookServer",
    "WebhookSpec",
    "conversion_stanza",
    "diff",
    "migrate_storage",
    "mutating_configuration",
    "round_trip_failures",
    "round_trip_test",
    "service_dns_names",
    "validating_configuration",
    "with_conversion",
]
