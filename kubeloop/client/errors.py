"""Typed errors built from the API server's ``Status`` objects."""

from __future__ import annotations

import re
from dataclasses import dataclass
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


@dataclass(frozen=True)
class Rule:
    """One RBAC rule a refused request needed: ``verb`` on ``group``/``resource``[/``subresource``], in
    ``namespace`` (None: at the cluster scope)."""

    verb: str
    group: str
    resource: str
    subresource: str | None = None
    namespace: str | None = None

    def describe(self) -> str:
        res = f"{self.resource}/{self.subresource}" if self.subresource else self.resource
        where = f"in namespace {self.namespace!r}" if self.namespace else "at the cluster scope"
        return f"{self.verb} on {res} (API group {self.group!r}) {where}"


# The authorizer's own wording (k8s.io/apiserver's forbiddenMessage): `User "u" cannot VERB resource
# "RES[/SUB]" in API group "G" in the namespace "NS"` or `... at the cluster scope`.
_RBAC_DENIAL = re.compile(r'cannot (?P<verb>[a-z]+) resource "(?P<res>[^"/]+)(?:/(?P<sub>[^"]+))?" '
                          r'in API group "(?P<group>[^"]*)"(?: in the namespace "(?P<ns>[^"]+)")?')


class Unauthorized(ApiError): ...


class Forbidden(ApiError):
    """403. ``rule`` is the RBAC rule that was missing when the API server says so (its authorizer names
    it; the client adds the owner's finalizers rule to an ownerReference refusal). ``generated`` tells
    whether the operator's generated RBAC has that rule (None: unknown, e.g. outside an operator)."""

    rule: Rule | None = None
    generated: bool | None = None

    def __init__(self, *args: Any, **kw: Any) -> None:
        super().__init__(*args, **kw)
        m = _RBAC_DENIAL.search(self.message)
        if m:
            self.rule = Rule(m["verb"], m["group"], m["res"], m["sub"], m["ns"])

    @property
    def advice(self) -> str:
        """What to do about it, in a sentence; empty when the refusal is not RBAC's (Pod Security, a
        quota or a webhook refusing: the message says why)."""
        if "cannot find RESTMapping" in self.message:
            return ("not a missing rule: the API server's OwnerReferencesPermissionEnforcement admission plugin "
                    "does not know the owner's kind yet (its CRD was just installed, or kube-apiserver just restarted: "
                    "it refreshes the plugin's view of the kinds every 30 s), so a retry goes through")
        if self.rule is None:
            return ""
        missing = f"the operator's role lacks: {self.rule.describe()}"
        if self.generated is True:
            return (f"{missing}; the generated RBAC has it, so the role bound in the cluster is older or another "
                    "one: apply the current `kubeloop generate rbac` output")
        if self.generated is False:
            owners = self.rule.verb == "update" and self.rule.subresource == "finalizers"
            declare = ("op.owner_references_to(Owner), the kind the children's ownerReferences name" if owners
                       else "op.permission(...)")
            return (f"{missing}; the generated RBAC does not have it either: declare it in the operator "
                    f"({declare}) and apply `kubeloop generate rbac` again")
        return f"{missing}; grant it to the operator's role"

    def __str__(self) -> str:
        advice = self.advice
        return f"{super().__str__()} ({advice})" if advice else super().__str__()


class BadRequest(ApiError): ...
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
