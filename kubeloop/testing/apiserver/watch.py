"""Watch streams: newline-delimited JSON events, as kube-apiserver sends them.

- No ``resourceVersion`` (or "0"): an ADDED event per existing object first, then changes.
- ``resourceVersion=N``: every change after N (410 Expired as an in-stream ERROR if N was compacted).
- ``sendInitialEvents=true`` (with ``resourceVersionMatch=NotOlderThan``, as on the real server): the
  existing objects, then, with ``allowWatchBookmarks``, a BOOKMARK annotated
  ``k8s.io/initial-events-end`` at the list's resourceVersion; ``sendInitialEvents=false``: changes
  only.
- Selectors apply to transitions: an object that starts matching arrives as ADDED, one that stops
  matching as DELETED.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import orjson
from aiohttp import web

from kubeloop.testing.apiserver import errors, listopts
from kubeloop.testing.apiserver.kinds import Kind
from kubeloop.testing.apiserver.selectors import Match
from kubeloop.testing.apiserver.store import Change, Obj, Store


def _truthy(value: str | None) -> bool:
    return listopts.truthy(value)


BOOKMARK_EVERY = 60.0  # seconds of quiet before a progress bookmark (kube-apiserver: about a minute)


async def serve(request: web.Request, store: Store, kind: Kind, ns: str | None, match: Match,
                view: Callable[[Obj], Obj], closing: asyncio.Event, api_version: str) -> web.StreamResponse:
    """Streams events until ``timeoutSeconds``, the client leaves or the server stops."""
    q = request.query
    queue: asyncio.Queue[Change | None] = asyncio.Queue()

    def on_change(change: Change) -> None:
        seen = store.seen_as(kind.key, change)
        if seen is not None:
            queue.put_nowait(seen)

    unsubscribe = store.subscribe(on_change)
    # The server stopping wakes the stream at once (a None in its queue), so shutdown never waits on it.
    closer = asyncio.ensure_future(closing.wait())
    closer.add_done_callback(lambda _: queue.put_nowait(None))
    try:
        resp = web.StreamResponse(headers={"Content-Type": "application/json"})
        resp.enable_chunked_encoding()
        await resp.prepare(request)

        async def send(kind_: str, obj: Obj) -> None:
            await resp.write(orjson.dumps({"type": kind_, "object": obj}) + b"\n")

        rv = q.get("resourceVersion") or ""
        def mine(o: Obj) -> bool:
            return (ns is None or o["metadata"].get("namespace") == ns) and match(o)

        start = store.rv
        initial = q.get("sendInitialEvents")
        if initial is not None and not _truthy(initial) and rv in ("", "0"):
            pass  # sendInitialEvents=false: from now on, nothing of the present state
        elif _truthy(initial) or rv in ("", "0"):
            for obj in store.items(kind.key):
                if mine(obj):
                    await send("ADDED", view(obj))
            if _truthy(initial) and _truthy(q.get("allowWatchBookmarks")):
                marker = {"resourceVersion": str(start), "annotations": {"k8s.io/initial-events-end": "true"}}
                await send("BOOKMARK", {"kind": kind.kind, "apiVersion": api_version, "metadata": marker})
        else:
            wanted = int(rv) if rv.isdigit() else -1
            floor = max(store.compacted, kind.watch_from)
            if wanted < floor:
                await send("ERROR", errors.expired(f"too old resource version: {rv} ({floor + 1})").body())
                return resp
            for past in store.changes_since(wanted):
                seen = store.seen_as(kind.key, past) if past.rv <= start else None
                if seen is not None:
                    await _emit(send, seen, mine, view)
        timeout = float(q["timeoutSeconds"]) if q.get("timeoutSeconds") else None
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout if timeout else None
        bookmarks = _truthy(q.get("allowWatchBookmarks"))
        quiet_since = loop.time()
        while not closing.is_set():
            left = None if deadline is None else deadline - loop.time()
            if left is not None and left <= 0:
                break
            try:
                change = await asyncio.wait_for(queue.get(), timeout=min(left or 1.0, 1.0))
                if change is None:
                    break
            except TimeoutError:
                if bookmarks and queue.empty() and loop.time() - quiet_since >= BOOKMARK_EVERY:
                    # As the real server's watch cache does: progress on a quiet watch, which also keeps
                    # the client's read timeout from firing (every change up to store.rv has been sent).
                    marker = {"resourceVersion": str(store.rv)}
                    await send("BOOKMARK", {"kind": kind.kind, "apiVersion": api_version, "metadata": marker})
                    quiet_since = loop.time()
                continue
            if change.rv > start:
                await _emit(send, change, mine, view)
                quiet_since = loop.time()
        return resp
    except ConnectionResetError:  # the client went away (aiohttp's reset error is one): the watch is over
        return resp
    finally:
        closer.cancel()
        unsubscribe()


async def _emit(send: Any, change: Change, mine: Match, view: Callable[[Obj], Obj]) -> None:
    was = change.old is not None and mine(change.old)
    now = mine(change.new)
    if change.type == "DELETED":
        if was:
            await send("DELETED", view(change.new))
    elif change.type == "ADDED":
        if now:
            await send("ADDED", view(change.new))
    elif was and now:
        await send("MODIFIED", view(change.new))
    elif now:
        await send("ADDED", view(change.new))
    elif was:  # stopped matching: the real server sends the old state at the new resourceVersion
        old = change.old or {}
        last = {**old, "metadata": {**old["metadata"], "resourceVersion": change.new["metadata"]["resourceVersion"]}}
        await send("DELETED", view(last))
