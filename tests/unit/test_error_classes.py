"""Which failures are about the environment (retried on the short transient schedule) and which are
about the object (per-object exponential backoff) — issue 24's rbac-revoke-write root cause: keys that
failed with 403 during an 8 s outage sat in a 160 s backoff after the permission came back."""

from __future__ import annotations

import aiohttp
import pytest

from kubeloop.client import errors, is_transient
from kubeloop.controller import Controller


@pytest.mark.parametrize("error", [
    errors.Forbidden(403, "Forbidden", "no"), errors.Unauthorized(401, "Unauthorized", "no"),
    errors.TooManyRequests(429, "TooManyRequests", "slow down"), errors.ServerError(500, "InternalError", "x"),
    errors.ServiceUnavailable(503, "ServiceUnavailable", "x"), errors.Conflict(409, "Conflict", "stale"),
    ConnectionResetError(), TimeoutError(), aiohttp.ServerDisconnectedError(),
])
def test_environment_failures_are_transient(error: BaseException) -> None:
    assert is_transient(error)


@pytest.mark.parametrize("error", [
    errors.Invalid(422, "Invalid", "spec.x: bad"), errors.BadRequest(400, "BadRequest", "x"),
    errors.NotFound(404, "NotFound", "x"), ValueError("a bug in reconcile"), KeyError("spec"),
])
def test_object_failures_are_not(error: BaseException) -> None:
    assert not is_transient(error)


async def test_controller_retries_a_forbidden_reconcile_within_the_transient_cap() -> None:
    async def reconcile(obj: dict, ctx: object) -> None:
        raise AssertionError("not called")

    controller = Controller("t-transient", "configmaps", reconcile)

    async def forbidden(request: object, reconcile_id: str) -> None:
        raise errors.Forbidden(403, "Forbidden", "configmaps is forbidden")

    controller._reconcile_once = forbidden  # type: ignore[method-assign]
    controller._resource = type("R", (), {"kind": "ConfigMap"})()  # type: ignore[assignment]
    for _ in range(40):  # an outage long enough to push the object backoff to its 300 s cap
        await controller.process("ns/a")
    assert controller.queue.backoff.failures("ns/a") == 0
    assert controller.queue.transient_backoff.failures("ns/a") == 40
    assert controller.queue.transient_backoff.when("ns/a") <= 8.0
    controller.queue.shutdown()
