"""The cluster a run works on: the one a kubeconfig names, or a LocalCluster of the harness's own,
started for the run and stopped and wiped after it (unless kept, to look at or to run again)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from typing import Any


@contextlib.asynccontextmanager
async def cluster_for(kubeconfig: str | None, name: str, *, keep: bool, log: Callable[[str], None],
                      **local_options: Any) -> AsyncIterator[tuple[Any, bool]]:
    """``(cluster, own)``: an ExternalCluster for ``kubeconfig`` (``own`` False: nothing may restart or
    wipe it), else ``LocalCluster(name, **local_options)``, up for the block (``own`` True)."""
    if kubeconfig is not None:
        from kubeloop.envtest import ExternalCluster

        yield ExternalCluster(kubeconfig), False
        return
    from kubeloop.envtest import LocalCluster

    cluster = LocalCluster(name, log=log, **local_options)
    await asyncio.to_thread(cluster.up)
    try:
        yield cluster, True
    finally:
        if not keep:
            await asyncio.to_thread(cluster.down, True)
