"""Which failures are about the environment (retried on the short transient schedule) and which are
about the object (per-object exponential backoff). The fault suite's rbac-revoke-write found why: keys that
failed with 403 during an 8 s outage sat in a 160 s backoff after the permission came back."""

from __future__ import annotations

import aiohttp
import pytest

from kubeloop.client import errors, is_transient

from .controller_kit import Kit, cm


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


@pytest.mark.parametrize("error", [
    # rbac-revoke-write: the ClusterRole lost write on ConfigMaps for ~8 s.
    errors.Forbidden(403, "Forbidden", 'configmaps "w-0001-w" is forbidden: User "x" cannot patch'),
    # A namespace being deleted refuses new children (403) until the object's own deletion arrives.
    errors.Forbidden(403, "Forbidden", "unable to create new content in namespace ns because it is being "
                                       "terminated"),
    # A write that lost to a newer version; the watch brings that version.
    errors.Conflict(409, "Conflict", "finalizers of w-0039 changed since they were read (stale cache)"),
])
async def test_controller_retries_an_environment_failure_within_the_transient_cap(kit: Kit, error: Exception) -> None:
    async def reconcile(obj: dict, ctx: object) -> None:
        raise error

    kit.client.add(cm("a"))
    controller = await kit.controller(reconcile)
    for _ in range(40):  # an outage long enough to push the object backoff to its 300 s cap
        await controller.process("ns/a")
    assert controller.queue.backoff.failures("ns/a") == 0
    assert controller.queue.transient_backoff.failures("ns/a") == 40
    assert controller.queue.transient_backoff.when("ns/a") <= 8.0
