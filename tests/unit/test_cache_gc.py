"""The cache's use of the garbage collector's freeze (kubeloop/cache/cache.py)."""

from __future__ import annotations

import gc
from typing import Any

import pytest

from kubeloop.cache import Cache


@pytest.fixture
def unfrozen() -> Any:
    gc.unfreeze()
    yield
    gc.unfreeze()  # the test process's objects go back to the collector


async def test_start_freezes_what_exists_so_the_sync_collection_scans_only_the_lists(unfrozen: Any) -> None:
    cache = Cache(object(), freeze_gc=True)  # type: ignore[arg-type]
    cache.start()
    assert gc.get_freeze_count() > 0
    frozen = gc.get_freeze_count()
    cache.start()  # a second start freezes nothing more
    assert gc.get_freeze_count() == frozen
    await cache.wait_synced(timeout=1)  # no informers: synced at once, then collected and frozen
    assert gc.get_freeze_count() >= frozen


async def test_no_freeze_when_asked_not_to(unfrozen: Any) -> None:
    cache = Cache(object(), freeze_gc=False)  # type: ignore[arg-type]
    cache.start()
    await cache.wait_synced(timeout=1)
    assert gc.get_freeze_count() == 0
