"""The keys a typed Secret must hold (core validation's ``ValidateSecret``, by ``type``): a TLS pair, a
docker config that is JSON, a basic-auth user or password, an SSH key, a service account's name. Other
types (Opaque, anything unknown) have no required keys."""

from __future__ import annotations

import base64
import binascii
from typing import Any

from kubeloop.testing.apiserver import gojson
from kubeloop.testing.apiserver.causes import Cause, invalid, mapping, required

_REDACTED = "<secret contents redacted>"
_DOCKER = {"kubernetes.io/dockercfg": ".dockercfg", "kubernetes.io/dockerconfigjson": ".dockerconfigjson"}


def causes(secret: dict[str, Any]) -> list[Cause]:
    data = mapping(secret.get("data"))
    kind = secret.get("type") or "Opaque"
    if kind == "kubernetes.io/service-account-token":  # the token itself is the token controller's to add
        annotations = (secret.get("metadata") or {}).get("annotations") or {}
        return [] if annotations.get("kubernetes.io/service-account.name") else [
            required("metadata.annotations[kubernetes.io/service-account.name]")]
    if kind in _DOCKER:
        key = _DOCKER[kind]
        if key not in data:
            return [required(f"data[{key}]")]
        why = gojson.error(_decoded(data[key]))
        return [invalid(f"data[{key}]", _REDACTED, why)] if why else []
    if kind == "kubernetes.io/basic-auth":  # either may be empty, but one must be there
        if "username" not in data and "password" not in data:
            return [required("data[username]"), required("data[password]")]
        return []
    if kind == "kubernetes.io/ssh-auth":
        return [] if _decoded(data.get("ssh-privatekey")) else [required("data[ssh-privatekey]")]
    if kind == "kubernetes.io/tls":
        return [required(f"data[{key}]") for key in ("tls.crt", "tls.key") if key not in data]
    return []


def _decoded(value: Any) -> bytes:
    try:
        return base64.b64decode(value or "", validate=True)
    except (binascii.Error, ValueError):
        return b""  # (refused when decoded)
