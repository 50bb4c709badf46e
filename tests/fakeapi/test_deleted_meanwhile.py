"""A reconcile whose own object is deleted while it runs ends in a 404 on its next write: like
controller-runtime's ``client.IgnoreNotFound``, that is not a failure (no ERROR log, no error metric, no
backoff), while a 404 naming another object still is."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest

from kubeloop import Context, Operator
from kubeloop.metrics import reconcile_errors
from kubeloop.resources.builtin import CONFIG_MAP
from kubeloop.testing import operator_running


def cm(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "default"}}


def errors_of(name: str) -> float:
    return reconcile_errors.labels(name).get()


@pytest.mark.parametrize("target", ["itself", "another"])
async def test_a_404_for_the_object_itself_is_not_a_failure(fake_api: Any, fake_client: Any, target: str,
                                                            caplog: pytest.LogCaptureFixture) -> None:
    op, done = Operator(f"deleted-meanwhile-{target}"), asyncio.Event()

    @op.reconcile(CONFIG_MAP, resync=None)
    async def reconcile(obj: Any, ctx: Context) -> None:
        if ctx.name != "victim" or done.is_set():
            return
        done.set()
        await ctx.client.delete("configmaps", "victim", "default")  # as if someone deleted it meanwhile
        name = "victim" if target == "itself" else "never-existed"
        await ctx.client.patch("configmaps", name, {"data": {"k": "v"}}, "default")

    with caplog.at_level(logging.INFO, logger="kubeloop"):
        async with operator_running(op, fake_client, namespaces=["default"]) as manager:
            (controller,) = manager.controllers
            before = errors_of(controller.name)
            await fake_client.create(cm("victim"))
            await asyncio.wait_for(done.wait(), 10)
            await asyncio.sleep(0.5)  # the reconcile's failure (or not) is handled
    failed = [r for r in caplog.records if r.levelno >= logging.ERROR and "reconcile failed" in r.getMessage()]
    if target == "itself":
        assert not failed, [r.getMessage() for r in failed]
        assert errors_of(controller.name) == before
        assert any("deleted during its reconcile" in r.getMessage() for r in caplog.records)
    else:
        assert failed and errors_of(controller.name) == before + 1
