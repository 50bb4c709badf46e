"""One CA for every replica, kept in a Secret, so the ``caBundle`` they write is the same.

- The Secret ``<operator>-webhook-ca`` ships empty with the operator's manifests; the process only
  reads and patches it, by name (RBAC cannot limit a *create* to one name, so it never creates it).
- The first replica to find it empty generates a CA and writes it with the Secret's
  ``resourceVersion`` as a precondition: of replicas starting together, one write wins and the others
  get 409 Conflict, read the Secret again and use the winner's CA.
- The CA key never leaves the Secret and the process's memory: it is not logged, and errors name the
  Secret, not its contents.
"""

from __future__ import annotations

import base64
import logging

from kubeloop.client import Client, Conflict, NotFound
from kubeloop.webhooks.certs import CertAuthority

log = logging.getLogger(__name__)

CERT_KEY, KEY_KEY = "ca.crt", "ca.key"


class MissingCASecret(RuntimeError):
    """The Secret the replicas share their CA through does not exist."""


def secret_name(operator: str) -> str:
    """The name of the Secret holding an operator's webhook CA."""
    return f"{operator}-webhook-ca"


def empty_secret(operator: str, namespace: str) -> dict[str, object]:
    """The Secret as ``kubeloop generate`` ships it: no data, filled by the first replica."""
    return {"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
            "metadata": {"name": secret_name(operator), "namespace": namespace,
                         "labels": {"app.kubernetes.io/name": operator, "app.kubernetes.io/managed-by": "kubeloop"}}}


async def shared_ca(client: Client, namespace: str, name: str, attempts: int = 5) -> CertAuthority:
    """The CA stored in Secret ``namespace/name``, generating and storing one if it is empty."""
    for _ in range(attempts):
        try:
            secret = await client.get("secrets", name, namespace)
        except NotFound:
            raise MissingCASecret(f"Secret {namespace}/{name} (the webhook CA shared by the replicas) does not "
                                  "exist; apply the operator's manifests (kubeloop generate all) first") from None
        data = secret.get("data") or {}
        if data.get(CERT_KEY) and data.get(KEY_KEY):
            return CertAuthority.from_pem(base64.b64decode(data[CERT_KEY]), base64.b64decode(data[KEY_KEY]))
        ca = CertAuthority.generate()
        patch = {"metadata": {"resourceVersion": secret["metadata"]["resourceVersion"]},
                 "data": {CERT_KEY: base64.b64encode(ca.bundle).decode(),
                          KEY_KEY: base64.b64encode(ca.key_pem()).decode()}}
        try:
            await client.patch("secrets", name, patch, namespace)
        except Conflict:
            log.info("another replica stored the webhook CA in %s/%s first; using it", namespace, name)
            continue
        log.info("stored a new webhook CA in Secret %s/%s", namespace, name)
        return ca
    raise RuntimeError(f"Secret {namespace}/{name} kept changing while the webhook CA was stored; retry")
