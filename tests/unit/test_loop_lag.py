"""The event-loop lag monitor: its metric, and the warning that names the reconcile (or task) holding the
loop. The stalls here are real: pure-Python computation on the loop, as a careless reconcile does."""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from typing import Any

import pytest

from kubeloop.metrics import REGISTRY
from kubeloop.metrics.loop import LoopMonitor, event_loop_lag, event_loop_stalls

from .controller_kit import Kit, cm


def compute(seconds: float) -> int:
    """Pure-Python work that never yields (the GIL is only handed over at the switch interval)."""
    n, end = 0, time.monotonic() + seconds
    while time.monotonic() < end:
        n += sum(range(200))
    return n


def stall_count(controller: str) -> float:
    return event_loop_stalls.labels(controller).get()


@pytest.fixture
async def monitor() -> Any:
    m = LoopMonitor(interval=0.05, warn_after=0.3)
    m.start()
    yield m
    m.stop()


async def test_a_reconcile_that_computes_is_named_with_its_controller_and_object(
        kit: Kit, monitor: LoopMonitor, caplog: pytest.LogCaptureFixture) -> None:
    async def reconcile(obj: dict[str, Any], ctx: Any) -> None:
        compute(1.0)

    kit.client.add(cm("heavy", ns="tenant-a"))
    controller = await kit.controller(reconcile, name="lagged")
    before = stall_count("lagged")
    with caplog.at_level(logging.WARNING, logger="kubeloop.loop"):
        await controller.process("tenant-a/heavy")
        await asyncio.sleep(0.2)  # the next beat: the stall's end is logged
    messages = [r.getMessage() for r in caplog.records if r.name == "kubeloop.loop"]
    during = [m for m in messages if "so far" in m]
    assert during and "tenant-a/heavy" in during[0] and "controller lagged" in during[0], messages
    assert "in compute" in during[0], "the innermost line running is named"
    after = [m for m in messages if "was held for" in m]
    assert after and "tenant-a/heavy" in after[0], messages
    assert stall_count("lagged") == before + 1
    assert monitor.blocked_for() < 0.3


async def test_other_work_is_named_by_its_task(monitor: LoopMonitor, caplog: pytest.LogCaptureFixture) -> None:
    async def handler() -> None:
        compute(0.8)

    with caplog.at_level(logging.WARNING, logger="kubeloop.loop"):
        await asyncio.create_task(handler(), name="informer configmaps")
        await asyncio.sleep(0.2)
    messages = [r.getMessage() for r in caplog.records if r.name == "kubeloop.loop"]
    assert any("task 'informer configmaps'" in m for m in messages), messages


async def test_a_free_loop_warns_nothing_and_its_lag_is_observed(monitor: LoopMonitor,
                                                                 caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="kubeloop.loop"):
        for _ in range(10):
            await asyncio.sleep(0.02)
    assert not [r for r in caplog.records if r.name == "kubeloop.loop"]
    text = REGISTRY.expose().decode()
    assert "# TYPE kubeloop_event_loop_lag_seconds histogram" in text
    assert "kubeloop_event_loop_stalls_total" in text
    assert sum(event_loop_lag._only().snapshot()[0]) > 0  # noqa: SLF001 - beats were observed


async def test_blocked_for_is_read_from_another_thread_during_the_stall(monitor: LoopMonitor) -> None:
    seen: list[float] = []

    def sample() -> None:
        time.sleep(0.5)
        seen.append(monitor.blocked_for())

    reader = threading.Thread(target=sample)
    reader.start()
    compute(1.0)
    reader.join()
    assert seen[0] > 0.2, seen
    await asyncio.sleep(0.1)
    assert monitor.blocked_for() < 0.3


def test_bad_settings_are_refused_by_name() -> None:
    with pytest.raises(ValueError, match="warn_after"):
        LoopMonitor(warn_after=0)
