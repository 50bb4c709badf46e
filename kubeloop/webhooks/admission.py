"""AdmissionReview v1: the request as a typed view, the errors a handler raises, and the response.

- :func:`parse_admission` turns the JSON body into an :class:`AdmissionRequest` or raises
  :class:`MalformedReview` naming what is wrong (the server answers 400 with it).
- A handler rejects with :class:`Denied` (``field=`` names the path): with a field it becomes a 422
  ``Invalid`` Status whose message starts with the path and whose ``details.causes`` carry it, so
  ``kubectl`` shows ``spec.replicas: ...``; without one it is a 403 ``Forbidden``.
- A handler adds warnings with :meth:`AdmissionRequest.warn`; they reach the client as ``Warning``
  headers whether the request is allowed or not.
- A mutating handler returns the changed object (or ``None`` for "no change"); :func:`allow` computes
  the JSON patch against the object the API server sent, so a handler never writes a patch by hand.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from typing import Any

import orjson

from kubeloop.webhooks.patch import diff

API_VERSION = "admission.k8s.io/v1"
OPERATIONS = ("CREATE", "UPDATE", "DELETE", "CONNECT")


class MalformedReview(ValueError):
    """The body is not an AdmissionReview/ConversionReview this server can answer; the text says why."""


class Denied(Exception):
    """Raised by a handler to refuse the request; ``field`` is the offending path (``spec.replicas``)."""

    def __init__(self, message: str, *, field: str | None = None, code: int | None = None) -> None:
        super().__init__(message)
        self.message, self.field = message, field
        self.code = code or (422 if field else 403)

    def status(self) -> dict[str, Any]:
        """The ``metav1.Status`` the API server passes on to the client."""
        if not self.field:
            reason = {403: "Forbidden", 500: "InternalError"}.get(self.code, "BadRequest")
            return {"code": self.code, "reason": reason, "message": self.message}
        return {"code": self.code, "reason": "Invalid", "message": f"{self.field}: {self.message}",
                "details": {"causes": [{"reason": "FieldValueInvalid", "field": self.field,
                                        "message": self.message}]}}


@dataclass(frozen=True)
class UserInfo:
    """Who sent the request, as the API server authenticated them."""

    username: str
    uid: str = ""
    groups: tuple[str, ...] = ()
    extra: dict[str, tuple[str, ...]] = field(default_factory=dict)


@dataclass
class AdmissionRequest:
    """One AdmissionReview request. ``object`` is absent on DELETE, ``old_object`` on CREATE."""

    uid: str
    operation: str
    kind: dict[str, str]  # group/version/kind of the object as sent
    resource: dict[str, str]  # group/version/resource
    sub_resource: str
    name: str
    namespace: str
    user: UserInfo
    object: dict[str, Any] | None
    old_object: dict[str, Any] | None
    dry_run: bool
    options: dict[str, Any] | None
    review_api_version: str = API_VERSION
    warnings: list[str] = field(default_factory=list)
    # The typed old object (model or dict) for @op.validate/@op.mutate handlers; None on CREATE.
    old: Any = None

    @property
    def key(self) -> str:
        """``namespace/name`` (or ``name``) for logs; the name may be empty on CREATE with generateName."""
        name = self.name or ((self.object or {}).get("metadata", {}).get("generateName", "") + "*")
        return f"{self.namespace}/{name}" if self.namespace else name

    def warn(self, message: str) -> None:
        """Adds a warning the client is shown (kubectl prints ``Warning: ...``)."""
        self.warnings.append(message)


def _require(data: dict[str, Any], key: str, kind: type, where: str) -> Any:
    value = data.get(key)
    if not isinstance(value, kind):
        raise MalformedReview(f"{where}.{key} must be a {kind.__name__}, got {type(value).__name__}")
    return value


def _optional_object(request: dict[str, Any], key: str) -> dict[str, Any] | None:
    value = request.get(key)
    if value is not None and not isinstance(value, dict):
        raise MalformedReview(f"request.{key} must be an object or null, got {type(value).__name__}")
    return value


def parse_admission(body: Any) -> AdmissionRequest:
    """The typed view of an AdmissionReview body (already decoded from JSON)."""
    if not isinstance(body, dict) or body.get("kind") != "AdmissionReview":
        raise MalformedReview("body is not an AdmissionReview (kind must be 'AdmissionReview')")
    if body.get("apiVersion") != API_VERSION:
        raise MalformedReview(f"apiVersion {body.get('apiVersion')!r} is not supported; "
                              f"set admissionReviewVersions: [v1] in the webhook configuration")
    req = _require(body, "request", dict, "AdmissionReview")
    operation = _require(req, "operation", str, "request")
    if operation not in OPERATIONS:
        raise MalformedReview(f"request.operation {operation!r} is not one of {', '.join(OPERATIONS)}")
    user = _optional_object(req, "userInfo") or {}
    return AdmissionRequest(
        uid=_require(req, "uid", str, "request"), operation=operation,
        kind=_require(req, "kind", dict, "request"), resource=_require(req, "resource", dict, "request"),
        sub_resource=req.get("subResource") or "", name=req.get("name") or "",
        namespace=req.get("namespace") or "",
        user=UserInfo(username=user.get("username", ""), uid=user.get("uid", ""),
                      groups=tuple(user.get("groups") or ()),
                      extra={k: tuple(v) for k, v in (user.get("extra") or {}).items()}),
        object=_optional_object(req, "object"), old_object=_optional_object(req, "oldObject"),
        dry_run=bool(req.get("dryRun")), options=_optional_object(req, "options"))


def _review(req: AdmissionRequest, response: dict[str, Any]) -> dict[str, Any]:
    response = {"uid": req.uid, **response}
    if req.warnings:
        response["warnings"] = list(req.warnings)
    return {"apiVersion": req.review_api_version, "kind": "AdmissionReview", "response": response}


def allow(req: AdmissionRequest, mutated: dict[str, Any] | None = None,
          original: dict[str, Any] | None = None) -> dict[str, Any]:
    """An allowing review; with ``mutated``, carrying the JSON patch from the object the API server sent
    (``original``, default ``req.object``: pass a copy taken before the handler could modify it) to it."""
    response: dict[str, Any] = {"allowed": True}
    sent = original if original is not None else req.object
    if mutated is not None and sent is not None:
        ops = diff(sent, mutated)
        if ops:
            response["patchType"] = "JSONPatch"
            response["patch"] = base64.b64encode(orjson.dumps(ops)).decode()
    return _review(req, response)


def deny(req: AdmissionRequest, error: Denied) -> dict[str, Any]:
    """A refusing review carrying the error's Status."""
    return _review(req, {"allowed": False, "status": error.status()})
