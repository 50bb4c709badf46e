"""Errors in the real API server's ``Status`` shape: same code, reason, message and details.

Messages follow kube-apiserver 1.35 word for word (checked by tests/integration/test_fakeapi_diff.py):
``configmaps "a" not found``, ``deployments.apps "x" already exists``, ``Operation cannot be fulfilled
on ...``. ``kind`` in details is the resource (plural) for NotFound/AlreadyExists/Conflict, the Kind
for Invalid, as the real server does.
"""

from __future__ import annotations

from typing import Any


class StatusError(Exception):
    """An error answer; ``body()`` is the ``Status`` object the handler sends."""

    def __init__(self, code: int, reason: str, message: str, details: dict[str, Any] | None = None) -> None:
        super().__init__(f"{code} {reason}: {message}")
        self.code, self.reason, self.message, self.details = code, reason, message, details

    def body(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                               "message": self.message}
        if self.reason:  # an internal error of the real server's storage has none
            out["reason"] = self.reason
        if self.details is not None:
            out["details"] = self.details
        out["code"] = self.code
        return out


def qualified(plural: str, group: str) -> str:
    """``configmaps`` or ``deployments.apps``: how messages name a resource."""
    return f"{plural}.{group}" if group else plural


def _details(name: str | None, group: str, kind: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if name:
        out["name"] = name
    if group:
        out["group"] = group
    out["kind"] = kind
    return out


def not_found(plural: str, group: str, name: str) -> StatusError:
    return StatusError(404, "NotFound", f'{qualified(plural, group)} "{name}" not found',
                       _details(name, group, plural))


def already_exists(plural: str, group: str, name: str) -> StatusError:
    return StatusError(409, "AlreadyExists", f'{qualified(plural, group)} "{name}" already exists',
                       _details(name, group, plural))


def forbidden(plural: str, group: str, name: str, why: str) -> StatusError:
    """An admission plugin's refusal (``admission.NewForbidden``): 403 naming the object and the reason."""
    return StatusError(403, "Forbidden", f'{qualified(plural, group)} "{name}" is forbidden: {why}',
                       _details(name, group, plural))


def conflict(plural: str, group: str, name: str, why: str = "the object has been modified; please apply "
             "your changes to the latest version and try again") -> StatusError:
    return StatusError(409, "Conflict", f'Operation cannot be fulfilled on {qualified(plural, group)} '
                       f'"{name}": {why}', _details(name, group, plural))


def bad_request(message: str) -> StatusError:
    return StatusError(400, "BadRequest", message)


def invalid(kind: str, group: str, name: str, causes: list[tuple[str, str, str]]) -> StatusError:
    """422 Invalid; ``causes`` are (reason, field, message) like ("FieldValueInvalid", "spec.x", ...)."""
    shown = f"{kind}.{group}" if group else kind
    parts = list(dict.fromkeys(f"{field}: {msg}" for _, field, msg in causes))  # (Go's aggregate: each once)
    text = "[" + ", ".join(parts) + "]" if len(parts) > 1 else "".join(parts)
    details = _details(name, group, kind)
    details["causes"] = [{"reason": r, "message": m, "field": f} for r, f, m in causes]
    return StatusError(422, "Invalid", f'{shown} "{name}" is invalid: {text}', details)


def rejected() -> StatusError:
    """What a failed JSON patch ``test`` (or another patch that cannot apply) answers."""
    return StatusError(422, "Invalid", "the server rejected our request due to an error in our request", {})


def expired(message: str) -> StatusError:
    return StatusError(410, "Expired", message)


def not_served(what: str) -> StatusError:
    """501: the fake does not serve this; never a wrong answer instead."""
    return StatusError(501, "NotImplemented", f"the kubeloop fake API server does not serve {what}; run this "
                       "test on the real control plane (pytest --real-cluster, or the kube_cluster fixture)")


def method_not_allowed(message: str = "the server does not allow this method on the requested resource"
                       ) -> StatusError:
    return StatusError(405, "MethodNotAllowed", message, {})
