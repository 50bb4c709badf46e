"""The manager lowers the GIL switch interval while it runs (its webhook and probe threads then wait less for
the GIL while a reconcile computes on the loop) and gives the process's value back when it stops."""

from __future__ import annotations

import asyncio
import sys

import pytest

from kubeloop.manager import Manager, ManagerOptions

from .controller_kit import Kit


async def _during(kit: Kit, options: ManagerOptions) -> float:
    manager = Manager(kit.client, options)
    task = asyncio.create_task(manager.run())
    await asyncio.wait_for(manager.started.wait(), 10)
    during = sys.getswitchinterval()
    manager.stop()
    await asyncio.wait_for(task, 10)
    return during


def _options(**kw: object) -> ManagerOptions:
    return ManagerOptions(metrics_bind_address="0", health_probe_bind_address="0", freeze_gc=False,
                          loop_lag_warning=0, **kw)  # type: ignore[arg-type]


async def test_lowered_while_running_and_given_back(kit: Kit) -> None:
    before = sys.getswitchinterval()
    try:
        sys.setswitchinterval(0.005)
        assert await _during(kit, _options()) == pytest.approx(0.001)
        assert sys.getswitchinterval() == pytest.approx(0.005)
        assert await _during(kit, _options(switch_interval=None)) == pytest.approx(0.005)
    finally:
        sys.setswitchinterval(before)


def test_a_switch_interval_out_of_range_is_refused_naming_it() -> None:
    with pytest.raises(ValueError, match="switch_interval"):
        _options(switch_interval=0)
