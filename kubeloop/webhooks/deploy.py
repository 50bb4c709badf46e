"""What ``kubeloop generate`` adds to an operator's manifests when it has webhooks.

- The webhook configurations (Service form, safe defaults from :mod:`kubeloop.webhooks.manifests`),
  without a ``caBundle``: the running process writes its own (or cert-manager's CA injector does, with
  ``cert_manager_certificate="namespace/name"``, which adds the ``inject-ca-from`` annotation).
- Every converted CRD with ``conversion.strategy: Webhook`` pointing at the same Service.
- The empty Secret ``<name>-webhook-ca`` the replicas share their CA through (see ``shared_ca``).
- The Service ``<name>-webhook`` (port 443 → the container's port named ``webhook``), the Deployment's
  container port, and the ``--webhook-*`` arguments that make the process serve on it.
- With ``cert_secret`` (a ``kubernetes.io/tls`` Secret, e.g. cert-manager's), the Deployment mounts it
  at :data:`CERT_DIR` and passes ``--webhook-cert-dir``: the process serves that certificate instead of
  making one. Without it, nothing of this is emitted (the default output is unchanged).
- An operator that converts a CRD's versions is deployed so that a restart or a failover leaves them
  readable: :data:`CONVERSION_REPLICAS` replicas by default (every one serves the webhook), a rolling
  update that starts the new pod before it stops an old one, a preference for different nodes, and a
  PodDisruptionBudget letting a drain take one at a time. With one process, every read in a version that
  is not the storage one fails while it restarts.
- An operator without webhooks gets its manifests back unchanged (the same objects, in the same order).
"""

from __future__ import annotations

import copy
from typing import Any

from kubeloop.webhooks.hooks import Hooks
from kubeloop.webhooks.runtime import DEFAULT_PORT, WebhookOptions, webhook_manifests
from kubeloop.webhooks.shared_ca import empty_secret

SERVICE_PORT = 443
CONVERSION_REPLICAS = 2  # the generated Deployment's default for an operator with a conversion webhook
CERT_DIR = "/var/run/kubeloop/webhook-certs"  # where --webhook-cert-secret's Secret is mounted


def service_name(operator: str) -> str:
    """The webhook Service's name."""
    return f"{operator}-webhook"


def run_args(operator: str, port: int = DEFAULT_PORT) -> list[str]:
    """The ``kubeloop run`` arguments of the in-cluster process (the namespace is the pod's)."""
    return ["--webhook-host=0.0.0.0", f"--webhook-port={port}", f"--webhook-service={service_name(operator)}"]


def mount_cert_secret(pod_spec: dict[str, Any], container: dict[str, Any], secret: str) -> None:
    """Mounts ``secret`` read-only at :data:`CERT_DIR` and tells the process to serve it."""
    pod_spec["volumes"] = [*pod_spec.get("volumes", []), {"name": "webhook-cert", "secret": {"secretName": secret}}]
    container["volumeMounts"] = [*container.get("volumeMounts", []),
                                 {"name": "webhook-cert", "mountPath": CERT_DIR, "readOnly": True}]
    container["args"] = [*container["args"], f"--webhook-cert-dir={CERT_DIR}"]


def webhook_service(operator: str, namespace: str) -> dict[str, Any]:
    """A ClusterIP Service: 443 (what the configurations name) → the container's ``webhook`` port."""
    return {"apiVersion": "v1", "kind": "Service",
            "metadata": {"name": service_name(operator), "namespace": namespace,
                         "labels": {"app.kubernetes.io/name": operator, "app.kubernetes.io/managed-by": "kubeloop"}},
            "spec": {"selector": {"app.kubernetes.io/name": operator},
                     "ports": [{"name": "webhook", "port": SERVICE_PORT, "targetPort": "webhook",
                                "protocol": "TCP"}]}}


def keep_serving(deployment: dict[str, Any], operator: str) -> None:
    """A rolling update that never has fewer ready replicas than wanted (the new pod is ready before an
    old one stops), on different nodes where the scheduler can: a node's loss takes one replica, not all."""
    deployment["spec"]["strategy"] = {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 0, "maxSurge": 1}}
    deployment["spec"]["template"]["spec"]["affinity"] = {"podAntiAffinity": {
        "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 100, "podAffinityTerm": {
            "topologyKey": "kubernetes.io/hostname",
            "labelSelector": {"matchLabels": {"app.kubernetes.io/name": operator}}}}]}}


def disruption_budget(operator: str, namespace: str) -> dict[str, Any]:
    """Voluntary disruptions (a node drain) evict one replica at a time; with one replica it does not
    block the drain (``maxUnavailable``, not ``minAvailable``)."""
    return {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
            "metadata": {"name": service_name(operator), "namespace": namespace,
                         "labels": {"app.kubernetes.io/name": operator, "app.kubernetes.io/managed-by": "kubeloop"}},
            "spec": {"maxUnavailable": 1, "selector": {"matchLabels": {"app.kubernetes.io/name": operator}}}}


def with_webhooks(objs: list[dict[str, Any]], operator: str, namespace: str, hooks: Hooks, *,
                  cert_manager_certificate: str | None = None, port: int = DEFAULT_PORT,
                  cert_secret: str | None = None) -> list[dict[str, Any]]:
    """``objs`` (``operator_manifests``' output) with the webhook objects added; unchanged without hooks."""
    if not hooks:
        return objs
    options = WebhookOptions(host="0.0.0.0", port=port, service=service_name(operator), namespace=namespace)
    extra = webhook_manifests(operator, hooks, options, cert_manager_certificate=cert_manager_certificate)
    stanzas = {o["metadata"]["name"]: o for o in extra if o["kind"] == "CustomResourceDefinition"}
    out = []
    for obj in objs:
        obj = copy.deepcopy(obj)
        if obj["kind"] == "CustomResourceDefinition" and obj["metadata"]["name"] in stanzas:
            patch = stanzas.pop(obj["metadata"]["name"])
            obj["spec"]["conversion"] = patch["spec"]["conversion"]
            if "annotations" in patch["metadata"]:
                obj["metadata"].setdefault("annotations", {}).update(patch["metadata"]["annotations"])
        elif obj["kind"] == "Deployment":
            container = obj["spec"]["template"]["spec"]["containers"][0]
            container["args"] = [*container.get("args", []), *run_args(operator, port)]
            container["ports"] = [*container.get("ports", []),
                                  {"name": "webhook", "containerPort": port, "protocol": "TCP"}]
            if cert_secret:
                mount_cert_secret(obj["spec"]["template"]["spec"], container, cert_secret)
            if hooks.conversions:
                keep_serving(obj, operator)
        out.append(obj)
    if stanzas:  # a converted CRD must ship with the operator: its models are in custom_resources()
        raise ValueError(f"converted CRDs missing from the manifests: {', '.join(stanzas)}")
    if hooks.conversions:
        out.append(disruption_budget(operator, namespace))
    out += [empty_secret(operator, namespace), webhook_service(operator, namespace)]
    out += [o for o in extra if o["kind"] != "CustomResourceDefinition"]
    return out
