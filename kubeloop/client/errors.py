"""Typed errors built from the API server's ``Status`` objects."""

from __future__ import annotations

from typing import Any

import aiohttp


class ApiError(Exception):
    """An error answer of the API server. ``status`` is the HTTP code, ``reason`` the Status reason."""

    status: int = 0

    def __init__(self, status: int, reason: str, message: str, body: dict[str, Any] | None = None,
                 retry_after: float | None = None) -> None:
        super().__init__(f"{status} {reason}: {message}")
        self.status = status
        self.reason = reason
        self.message = message
        self.body = body or {}
        self.retry_after = retry_after

    @property
    def details(self) -> dict[str, Any]:
        """The Status' ``details`` (name, kind, and for 422 Invalid the ``causes`` naming each field)."""
        return self.body.get("details") or {}

    @property
    def causes(self) -> list[dict[str, Any]]:
        """Field-level causes (``{"field": "spec.x", "message": ...}``) of an Invalid error."""
        return list(self.details.get("causes") or [])


class BadRequest(ApiError): ...
class Unauthorized(ApiError): ...
class Forbidden(ApiError): ...
class NotFound(ApiError): ...
class MethodNotAllowed(ApiError): ...
class Conflict(ApiError): ...
class AlreadyExists(Conflict): ...
class Gone(ApiError):
    """The requested resourceVersion is too old (410): relist."""
class Invalid(ApiError):
    """422: the object failed validation; ``causes`` names the fields."""
class TooManyRequests(ApiError): ...
class ServerError(ApiError): ...
class ServerTimeout(ServerError): ...
class ServiceUnavailable(ServerError): ...


_BY_STATUS: dict[int, type[ApiError]] = {
    400: BadRequest, 401: Unauthorized, 403: Forbidden, 404: NotFound, 405: MethodNotAllowed,
    409: Conflict, 410: Gone, 422: Invalid, 429: TooManyRequests, 500: ServerError,
    503: ServiceUnavailable, 504: ServerTimeout,
}


def error_from_status(status: int, body: Any, retry_after: float | None = None) -> ApiError:
    """Builds the most specific error for an HTTP status and a (maybe non-Status) body."""
    if isinstance(body, dict) and body.get("kind") == "Status":
        reason = body.get("reason") or ""
        message = body.get("message") or ""
        code = int(body.get("code") or status)
    else:
        reason, message, code, body = "", str(body)[:500], status, None
    if reason == "AlreadyExists":
        cls: type[ApiError] = AlreadyExists
    elif reason in ("Expired", "Gone") or code == 410:
        cls = Gone
    else:
        cls = _BY_STATUS.get(code) or (ServerError if code >= 500 else ApiError)
    return cls(code, reason or cls.__name__, message, body, retry_after)


def is_transient(error: BaseException) -> bool:
    """A failure about the environment rather than the object, which ends for every object at once: a
    permission missing (401/403; RBAC is often fixed by hand), a throttled or failing API server (429,
    5xx), a write that lost to a newer version (409: the watch brings that version), a lost connection.
    Controllers retry these on a short schedule instead of the per-object exponential backoff."""
    if isinstance(error, (Unauthorized, Forbidden, TooManyRequests, ServerError, Conflict)):
        return True
    return isinstance(error, (OSError, TimeoutError, aiohttp.ClientError))
