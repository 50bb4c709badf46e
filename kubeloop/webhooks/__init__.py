"""Admission and conversion webhooks: certificates, reviews, the HTTPS server and the manifests.

One concept per module: ``certs`` (CA, serving certificate, rotation), ``patch`` (RFC 6902 diff),
``admission`` (AdmissionReview v1), ``conversion`` (ConversionReview v1, hub and spokes), ``server``
(the aiohttp HTTPS server), ``manifests`` (webhook configurations, the CRD conversion stanza),
``migration`` (rewriting a CRD's objects in a new storage version).

Each name below is imported from its module on first use (PEP 562), not with the package: importing
any one module here (the builder imports ``hooks`` and ``guard``; every ``kubeloop run`` does) then
does not load the certificates (cryptography), the HTTPS server and the migration code with it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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

_WHERE = {  # exported name -> its module
    **dict.fromkeys(("AdmissionRequest", "Denied", "MalformedReview", "UserInfo"), "admission"),
    **dict.fromkeys(("CertAuthority", "WebhookCerts", "service_dns_names"), "certs"),
    **dict.fromkeys(("ConversionError", "Converter", "round_trip_failures", "round_trip_test"), "conversion"),
    **dict.fromkeys(("Endpoint", "Rule", "WebhookSpec", "conversion_stanza", "mutating_configuration",
                     "validating_configuration", "with_conversion"), "manifests"),
    "migrate_storage": "migration",
    "diff": "patch",
    **dict.fromkeys(("Webhook", "WebhookServer"), "server"),
}


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{_WHERE[name]}"), name)
    globals()[name] = value  # the next access is a plain attribute
    return value


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
