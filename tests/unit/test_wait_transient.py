"""``wait_for`` outlives a throttled or re-initialising server: a 429 (as kube-apiserver answers
"storage is (re)initializing" to a custom resource's watch right after its CRD changed) or a 5xx on the
list or the watch is waited out and the wait goes on; other errors still end it."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from kubeloop.client import Forbidden
from kubeloop.client.errors import ServerError, TooManyRequests
from kubeloop.resources.builtin import CONFIG_MAP
from kubeloop.testing import wait_for
from kubeloop.testing.fakeclient import FakeClient


def cm(name: str, **data: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "ns"}, "data": data}


def storage_reinitializing() -> TooManyRequests:
    return TooManyRequests(429, "TooManyRequests", "storage is (re)initializing", retry_after=0.01)


@pytest.mark.parametrize("verb", ["list", "watch"])
@pytest.mark.parametrize("error", [storage_reinitializing, lambda: ServerError(500, "InternalError", "etcd")])
async def test_a_transient_error_does_not_end_the_wait(verb: str, error: Any) -> None:
    client = FakeClient(cm("a", k="1"))
    client.fail(verb, error(), times=2)
    waiting = asyncio.create_task(wait_for(client, CONFIG_MAP, "a", "ns", lambda o: o["data"] == {"k": "2"},
                                           timeout=10))
    await asyncio.sleep(0.05)
    await client.patch(CONFIG_MAP, "a", {"data": {"k": "2"}}, "ns")
    assert (await waiting)["data"] == {"k": "2"}


async def test_a_permanent_error_still_ends_the_wait() -> None:
    client = FakeClient(cm("a"))
    client.fail("list", Forbidden(403, "Forbidden", "no"))
    with pytest.raises(Forbidden):
        await wait_for(client, CONFIG_MAP, "a", "ns", lambda o: False, timeout=5)
