"""Webhook configurations and the CRD conversion stanza, with safe defaults.

The defaults, and why:

- ``failurePolicy: Fail`` — a validation skipped while the webhook is down is a rule silently not
  enforced, and a skipped default leaves objects the operator does not expect. What keeps ``Fail``
  from locking a cluster is the next point, not ``Ignore``.
- ``namespaceSelector`` excludes the operator's own namespace and ``kube-system``: the operator can
  always be redeployed or fixed, and the control plane's own objects never wait on it.
- ``sideEffects: None`` (so dry-run requests are sent too), ``timeoutSeconds: 5`` (the API server's
  default is 10; a webhook slower than a few seconds makes every write slow), ``matchPolicy:
  Equivalent`` (a request through another version or group alias of the same resource is still seen),
  ``admissionReviewVersions: [v1]`` (the only version the server parses).
- The ``caBundle`` is written in, or left to cert-manager's CA injector when a Certificate is named.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

DEFAULT_OPERATIONS = ("CREATE", "UPDATE")
SYSTEM_NAMESPACES = ("kube-system",)
CERT_MANAGER_ANNOTATION = "cert-manager.io/inject-ca-from"


@dataclass(frozen=True)
class Endpoint:
    """Where the API server sends reviews: a Service in the cluster, or a URL (``kubeloop run`` locally)."""

    service: str | None = None
    namespace: str | None = None
    port: int = 443
    url: str | None = None  # https://127.0.0.1:PORT, without the path

    def __post_init__(self) -> None:
        if (self.url is None) == (self.service is None):
            raise ValueError("an Endpoint needs exactly one of service= (with namespace=) or url=")
        if self.service and not self.namespace:
            raise ValueError(f"Endpoint service={self.service!r} needs namespace=")
        if self.url and not self.url.startswith("https://"):
            raise ValueError(f"Endpoint url {self.url!r} must start with https:// (the API server requires TLS)")

    def client_config(self, path: str, ca_bundle: str | None) -> dict[str, Any]:
        """``clientConfig`` for ``path``; ``ca_bundle`` is base64 PEM, or None when cert-manager injects it."""
        if self.url:
            config: dict[str, Any] = {"url": self.url.rstrip("/") + path}
        else:
            # url: null removes the URL a local run wrote (kubectl apply, client- or server-side with
            # --force-conflicts): kept beside the service, it makes the API server refuse the object (422).
            config = {"service": {"name": self.service, "namespace": self.namespace, "path": path,
                                  "port": self.port}, "url": None}
        if ca_bundle:
            config["caBundle"] = ca_bundle
        return config


@dataclass(frozen=True)
class Rule:
    """Which requests a webhook sees: resources (plural names) in API groups/versions, and operations."""

    api_groups: tuple[str, ...]
    api_versions: tuple[str, ...]
    resources: tuple[str, ...]
    operations: tuple[str, ...] = DEFAULT_OPERATIONS
    scope: str = "*"

    def __post_init__(self) -> None:
        unknown = set(self.operations) - {"CREATE", "UPDATE", "DELETE", "CONNECT", "*"}
        if unknown or not self.operations:
            raise ValueError(f"Rule operations {list(self.operations)} must be some of CREATE, UPDATE, DELETE, "
                             "CONNECT (or '*')")
        if self.scope not in ("*", "Cluster", "Namespaced"):
            raise ValueError(f"Rule scope {self.scope!r} must be '*', 'Cluster' or 'Namespaced'")

    def manifest(self) -> dict[str, Any]:
        """The rule as the API wants it."""
        return {"apiGroups": list(self.api_groups), "apiVersions": list(self.api_versions),
                "resources": list(self.resources), "operations": list(self.operations), "scope": self.scope}


@dataclass(frozen=True)
class WebhookSpec:
    """One entry of a webhook configuration; ``name`` must be a qualified name (``x.example.com``)."""

    name: str
    path: str
    rules: tuple[Rule, ...]
    failure_policy: str = "Fail"
    timeout_seconds: int = 5
    namespace_selector: dict[str, Any] | None = None  # None: the safe default (see the module docstring)
    object_selector: dict[str, Any] | None = None
    reinvocation_policy: str = "Never"  # mutating only: IfNeeded re-runs it after later mutations
    extra: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.name.count(".") < 2:
            raise ValueError(f"webhook name {self.name!r} must be fully qualified, e.g. 'validate.example.com'")
        if self.failure_policy not in ("Fail", "Ignore"):
            raise ValueError(f"failure_policy {self.failure_policy!r} must be 'Fail' or 'Ignore'")
        if not 1 <= self.timeout_seconds <= 30:
            raise ValueError(f"timeout_seconds {self.timeout_seconds} must be between 1 and 30 (the API's range)")
        if not self.path.startswith("/"):
            raise ValueError(f"webhook path {self.path!r} must start with '/'")


def excluding_namespaces(*names: str) -> dict[str, Any]:
    """A namespaceSelector matching every namespace except ``names``."""
    return {"matchExpressions": [{"key": "kubernetes.io/metadata.name", "operator": "NotIn",
                                  "values": sorted(set(names))}]}


def _entry(spec: WebhookSpec, endpoint: Endpoint, ca_bundle: str | None, operator_namespace: str,
           mutating: bool) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "name": spec.name,
        "clientConfig": endpoint.client_config(spec.path, ca_bundle),
        "rules": [r.manifest() for r in spec.rules],
        "failurePolicy": spec.failure_policy,
        "sideEffects": "None",
        "timeoutSeconds": spec.timeout_seconds,
        "matchPolicy": "Equivalent",
        "admissionReviewVersions": ["v1"],
        "namespaceSelector": spec.namespace_selector
        or excluding_namespaces(operator_namespace, *SYSTEM_NAMESPACES),
    }
    if spec.object_selector:
        entry["objectSelector"] = spec.object_selector
    if mutating:
        entry["reinvocationPolicy"] = spec.reinvocation_policy
    return {**entry, **spec.extra}


def _configuration(kind: str, name: str, specs: list[WebhookSpec], endpoint: Endpoint, ca_bundle: str | None,
                   operator_namespace: str, certificate: str | None) -> dict[str, Any]:
    if ca_bundle and certificate:
        raise ValueError("give either ca_bundle= or cert_manager_certificate=, not both (one source of trust)")
    metadata: dict[str, Any] = {"name": name}
    if certificate:
        metadata["annotations"] = {CERT_MANAGER_ANNOTATION: certificate}
    mutating = kind == "MutatingWebhookConfiguration"
    return {"apiVersion": "admissionregistration.k8s.io/v1", "kind": kind, "metadata": metadata,
            "webhooks": [_entry(s, endpoint, ca_bundle, operator_namespace, mutating) for s in specs]}


def validating_configuration(name: str, specs: list[WebhookSpec], endpoint: Endpoint, *,
                             operator_namespace: str, ca_bundle: str | None = None,
                             cert_manager_certificate: str | None = None) -> dict[str, Any]:
    """A ValidatingWebhookConfiguration; ``cert_manager_certificate`` is ``namespace/name``."""
    return _configuration("ValidatingWebhookConfiguration", name, specs, endpoint, ca_bundle,
                          operator_namespace, cert_manager_certificate)


def mutating_configuration(name: str, specs: list[WebhookSpec], endpoint: Endpoint, *,
                           operator_namespace: str, ca_bundle: str | None = None,
                           cert_manager_certificate: str | None = None) -> dict[str, Any]:
    """A MutatingWebhookConfiguration; ``cert_manager_certificate`` is ``namespace/name``."""
    return _configuration("MutatingWebhookConfiguration", name, specs, endpoint, ca_bundle,
                          operator_namespace, cert_manager_certificate)


def conversion_stanza(endpoint: Endpoint, path: str, ca_bundle: str | None = None) -> dict[str, Any]:
    """``spec.conversion`` of a CRD converted by the webhook at ``path``."""
    return {"strategy": "Webhook",
            "webhook": {"clientConfig": endpoint.client_config(path, ca_bundle),
                        "conversionReviewVersions": ["v1"]}}


def with_conversion(crd: dict[str, Any], endpoint: Endpoint, path: str, *, ca_bundle: str | None = None,
                    cert_manager_certificate: str | None = None) -> dict[str, Any]:
    """A copy of a generated CRD whose versions are converted by the webhook (the input is not changed)."""
    if ca_bundle and cert_manager_certificate:
        raise ValueError("give either ca_bundle= or cert_manager_certificate=, not both (one source of trust)")
    if len(crd.get("spec", {}).get("versions") or []) < 2:
        raise ValueError(f"CRD {crd.get('metadata', {}).get('name')!r} has fewer than two versions; "
                         "a conversion webhook has nothing to convert")
    out = copy.deepcopy(crd)
    out["spec"]["conversion"] = conversion_stanza(endpoint, path, ca_bundle)
    if cert_manager_certificate:
        out.setdefault("metadata", {}).setdefault("annotations", {})[CERT_MANAGER_ANNOTATION] = cert_manager_certificate
    return out
