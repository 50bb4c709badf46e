"""ServiceAccount tokens, as kube-apiserver 1.35.4 and kube-controller-manager hand them out:

- a ServiceAccount's ``token`` subresource (``POST``, a TokenRequest): the account must exist (404), the
  expiry be 10 minutes to 2^32 seconds (422); the answer has the account's name, namespace and uid, the
  spec defaulted (one hour, the cluster's audience) and a token with its expiry. The token is an opaque
  string the fake never checks (it admits every request); a TokenRequest bound to an object is not
  modelled (501);
- the tokens controller (``legacy_secret``): a ``kubernetes.io/service-account-token`` Secret gets its
  account's uid annotation and a token, the CA bundle and the namespace in its data; one whose account
  is gone (or is another account of that name) is deleted.
"""

from __future__ import annotations

import base64
import datetime as dt
import secrets as random_bytes
from typing import Any

from kubeloop.testing.apiserver import errors

Obj = dict[str, Any]
AUDIENCE = "https://kubernetes.default.svc.cluster.local"  # (the local control plane's --api-audiences)
TOKEN_TYPE = "kubernetes.io/service-account-token"
NAME, UID = "kubernetes.io/service-account.name", "kubernetes.io/service-account.uid"
_MIN, _MAX = 600, 2**32


def fake_token() -> str:
    """A token-shaped opaque string (three base64url parts, like a JWT; nothing can verify it)."""
    parts = [base64.urlsafe_b64encode(random_bytes.token_bytes(n)).decode().rstrip("=") for n in (27, 96, 192)]
    return ".".join(parts)


def request(account: Obj | None, name: str, body: Any, now: dt.datetime) -> tuple[Obj, dict[str, Any]]:
    """(the TokenRequest answered, the spec the field manager saw: the body's, with the default expiry) for
    ``account`` (None: not found)."""
    if account is None:
        raise errors.not_found("serviceaccounts", "", name)
    if not isinstance(body, dict) or body.get("kind") not in (None, "TokenRequest"):
        raise errors.not_served("a token subresource request that is not a TokenRequest")
    spec = dict(body.get("spec") or {}) if isinstance(body.get("spec"), dict) else {}
    if spec.get("boundObjectRef"):
        raise errors.not_served("TokenRequests bound to an object (spec.boundObjectRef)")
    seen = {**spec, "expirationSeconds": spec.get("expirationSeconds") or 3600}
    seconds = seen["expirationSeconds"]
    if isinstance(seconds, int) and not isinstance(seconds, bool):
        why = "may not specify a duration less than 10 minutes" if seconds < _MIN else \
            "may not specify a duration larger than 2^32 seconds" if seconds > _MAX else ""
        if why:
            raise errors.invalid("TokenRequest", "authentication.k8s.io", "", [
                ("FieldValueInvalid", "spec.expirationSeconds", f"Invalid value: {seconds}: {why}")])
    expiry = (now + dt.timedelta(seconds=int(seconds))).strftime("%Y-%m-%dT%H:%M:%SZ")
    out = {"kind": "TokenRequest", "apiVersion": "authentication.k8s.io/v1",
           "metadata": {"name": account["metadata"]["name"], "namespace": account["metadata"]["namespace"],
                        "uid": account["metadata"]["uid"], "creationTimestamp": now.strftime("%Y-%m-%dT%H:%M:%SZ")},
           "spec": {"audiences": spec.get("audiences") or [AUDIENCE], "expirationSeconds": seconds,
                    "boundObjectRef": None},
           "status": {"token": fake_token(), "expirationTimestamp": expiry}}
    return out, {"spec": seen}


def legacy_secret(secret: Obj, account: Obj | None, ca_pem: str) -> Obj | None:
    """The tokens controller's view of a service account token Secret: None when it is as it should be,
    ``{}`` when it must go (its account is not there, or has another uid), else the Secret to write."""
    meta = secret["metadata"]
    annotations = meta.get("annotations") or {}
    if account is None or annotations.get(UID) not in (None, account["metadata"]["uid"]):
        return {}
    data = secret.get("data") or {}
    if annotations.get(UID) and data.get("token") and "ca.crt" in data and "namespace" in data:
        return None
    new = {**secret, "metadata": {**meta, "annotations": {**annotations, UID: account["metadata"]["uid"]}}}
    new["data"] = {**data, "token": data.get("token") or base64.b64encode(fake_token().encode()).decode(),
                   "ca.crt": base64.b64encode(ca_pem.encode()).decode(),
                   "namespace": base64.b64encode(meta["namespace"].encode()).decode()}
    return new
