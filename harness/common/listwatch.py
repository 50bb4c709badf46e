"""The harness's own view of a resource, independent of the operator under test: list, then watch
from the list's resourceVersion (so that no change falls between the two), each object handed to
``handler(type, obj, t)`` with the monotonic time the harness saw it.

- On a list: an object not known before is ADDED, a known one with a new resourceVersion is
  MODIFIED, a known one no longer listed is DELETED. So a relist reports what changed meanwhile in
  the same terms as the watch does.
- ``relist=True`` (the fault harness: its faults break the harness's connections too): a watch that
  fails or ends is followed by a new list, and nothing stops it but ``stop()``.
  ``relist=False`` (the benchmark: a broken view must fail the run, not skew it): a watch that ends, or
  whose connection breaks, is resumed from the last resourceVersion. A 410 Gone (a real API server
  sends it whenever its watch cache no longer holds that version, even right after a list) is
  followed by a new list that hands
  on only the objects newer than the last version seen, so nothing is reported twice; deletions in
  that gap are not reported (the benchmark counts none). Any other error ends the view and
  ``check()`` raises it.
- ``count(verb)``, if given, is called for every LIST page and every WATCH request: the benchmark
  subtracts its own requests from the API server's counters.
- ``objects`` (key → the object as last seen) is kept only with ``relist=True``, where a relist needs
  it to tell what changed: the benchmark's views of 50,000 objects keep none.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from typing import Any

import aiohttp

log = logging.getLogger("harness")
Obj = dict[str, Any]
Handler = Callable[[str, Obj, float], None]


def key_of(obj: Obj) -> str:
    """``namespace/name``, or ``name`` for a cluster-scoped object."""
    meta = obj["metadata"]
    return f"{meta.get('namespace')}/{meta['name']}" if meta.get("namespace") else meta["name"]


def rv(obj: Obj) -> int:
    """An object's resourceVersion as a number (0 if it has none): bigger is newer on one etcd."""
    try:
        return int(obj["metadata"].get("resourceVersion") or 0)
    except ValueError:
        return 0


class _Gone(Exception):
    """The watch cannot go on from its version: list again."""


# A watch's connection broke: closed, reset, cut by the client's own half-open check, or silent past its
# read timeout. Nothing says the version is gone: the watch can go on from it.
_BROKEN = (aiohttp.ClientConnectionError, aiohttp.ClientPayloadError, TimeoutError)


class ListWatch:
    """``start()``, then ``await wait_synced()``: the handler has seen the list; the watch goes on."""

    def __init__(self, client: Any, resource: Any, handler: Handler, *, namespace: str | None = None,
                 label_selector: str | None = None, field_selector: str | None = None, relist: bool = False,
                 count: Callable[[str], None] | None = None, page_size: int = 500, watch_seconds: int = 3600,
                 read_timeout: float = 330.0) -> None:
        self.client, self.resource, self.handler = client, resource, handler
        self.namespace, self.label_selector, self.field_selector = namespace, label_selector, field_selector
        self.relist, self.count = relist, count or (lambda verb: None)
        self.page_size, self.watch_seconds, self.read_timeout = page_size, watch_seconds, read_timeout
        self.objects: dict[str, Obj] = {}
        self.relists = 0
        self.resumes = 0  # watches resumed after a broken connection (relist=False)
        self._version = ""  # the last resourceVersion seen
        self.synced = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name=f"list+watch {self.resource}")

    async def wait_synced(self, timeout: float = 60.0) -> None:
        """Until the first list is in; raises what stopped the view before that, if anything did."""
        assert self._task is not None, "start() first"
        synced = asyncio.ensure_future(self.synced.wait())
        try:
            await asyncio.wait({synced, self._task}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        finally:
            synced.cancel()
        if not self.synced.is_set():
            self.check()
            raise TimeoutError(f"listing {self.resource} took over {timeout:.0f}s")

    def check(self) -> None:
        """Raises what ended the view early, if anything did."""
        if self._task and self._task.done() and not self._task.cancelled():
            error = self._task.exception()
            if error is not None:
                raise error

    async def stop(self) -> None:
        if self._task:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._task

    async def _run(self) -> None:
        while True:
            try:
                self._version = await self._list()
                while True:
                    try:
                        self._version = await self._watch(self._version)
                    except _Gone:
                        if self.relist:
                            break
                        last = rv({"metadata": {"resourceVersion": self._version}})
                        self._version = await self._list(newer_than=last)
                        continue
                    except _BROKEN as exc:
                        if self.relist:
                            raise
                        # The connection broke (the client drops a pool it judges dead, e.g. under load):
                        # the watch goes on from the last version seen, so nothing is missed or repeated.
                        self.resumes += 1
                        log.debug("watch on %s broke (%s); resuming from %s", self.resource, exc, self._version)
                        await asyncio.sleep(0.2)
                        continue
                    if self.relist:
                        break  # ended: list again (what changed meanwhile is reported as such)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                if not self.relist:
                    raise
                log.debug("list+watch %s: %s; relisting", self.resource, exc)
                await asyncio.sleep(0.3)

    async def _list(self, newer_than: int = -1) -> str:
        res = await self.client.resource(self.resource)
        fresh: dict[str, Obj] = {}
        version = ""
        async for page in self.client.list_pages(res, self.namespace, label_selector=self.label_selector,
                                                 field_selector=self.field_selector, limit=self.page_size):
            self.count("LIST")
            fresh.update((key_of(o), o) for o in page.get("items") or ())
            version = page["metadata"]["resourceVersion"]
        self.relists += 1
        t = time.monotonic()
        for key in [k for k in self.objects if k not in fresh]:
            self.handler("DELETED", self.objects.pop(key), t)
        for key, obj in fresh.items():
            old = self.objects.get(key)
            if (old is None or rv(old) != rv(obj)) and rv(obj) > newer_than:
                self._keep(key, obj)
                self.handler("ADDED" if old is None else "MODIFIED", obj, t)
        self.synced.set()
        return version

    async def _watch(self, version: str) -> str:
        """Watches from ``version`` until the server ends the stream; returns the last version seen."""
        self.count("WATCH")
        async for event in self.client.watch(self.resource, self.namespace, resource_version=version,
                                             label_selector=self.label_selector, field_selector=self.field_selector,
                                             timeout_seconds=self.watch_seconds, read_timeout=self.read_timeout):
            etype, obj = event.get("type"), event.get("object") or {}
            if etype == "ERROR":  # 410 Gone: list again; anything else: relist, or end the view
                if self.relist or obj.get("code") == 410:
                    log.debug("watch on %s: %s; relisting", self.resource, obj)
                    raise _Gone(obj)
                raise RuntimeError(f"watch on {self.resource} failed: {obj}")
            version = self._version = (obj.get("metadata") or {}).get("resourceVersion") or version
            if etype == "BOOKMARK":
                continue
            if etype == "DELETED":
                self.objects.pop(key_of(obj), None)
            else:
                self._keep(key_of(obj), obj)
            self.handler(str(etype), obj, time.monotonic())
        return version

    def _keep(self, key: str, obj: Obj) -> None:
        if self.relist:
            self.objects[key] = obj
