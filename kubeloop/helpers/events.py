"""Events (events.k8s.io/v1) with client-go style aggregation: a repeat of the same event within the
series window bumps ``series.count`` instead of creating a new object.

- ``emit`` sends the event before it returns (direct use, tests).
- ``record`` queues it and returns at once; one background task per recorder sends the queue, as
  client-go's recorder does, so a reconcile never waits on an Event's round trip (on a busy API server,
  one more write in every reconcile's tail). The queue is fair across namespaces: each namespace's Events
  wait in its own line, in order, and the lines take turns, so one tenant's thousand Events delay another
  tenant's one by one each turn, not by a thousand.
- At most ``QUEUE_LIMIT`` wait in all (client-go's ``maxQueuedEvents``) and ``NAMESPACE_LIMIT`` in one
  namespace's line; more are dropped with a warning, as client-go drops them: a tenant filling its own
  line does not make another tenant's Events dropped.
- ``flush`` waits until the queue is sent (tests); ``close`` gives it a few seconds, then drops the rest
  (a stopping manager).
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import os
import secrets
from typing import Any

from kubeloop import clock
from kubeloop.client import Client
from kubeloop.client.api import Obj
from kubeloop.client.errors import ApiError, NotFound
from kubeloop.helpers.lines import FairLines

log = logging.getLogger("kubeloop.events")

SERIES_WINDOW = 6 * 60.0  # seconds within which a repeat joins the series (client-go's value)
NOTE_LIMIT = 1024
EVENT_TYPES = ("Normal", "Warning")  # all that events.k8s.io/v1 accepts
QUEUE_LIMIT = 1000
NAMESPACE_LIMIT = 100


def _micro_time() -> str:
    return clock.now().strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def object_reference(obj: Obj) -> dict[str, Any]:
    """The ``regarding`` reference of an Event about ``obj``."""
    meta = obj.get("metadata", {})
    ref = {"apiVersion": obj.get("apiVersion"), "kind": obj.get("kind"), "name": meta.get("name"),
           "uid": meta.get("uid"), "resourceVersion": meta.get("resourceVersion")}
    if meta.get("namespace"):
        ref["namespace"] = meta["namespace"]
    return {k: v for k, v in ref.items() if v}


def _check_type(type: str) -> None:
    if type not in EVENT_TYPES:
        raise ValueError(f"event type {type!r}: events.k8s.io/v1 Events are 'Normal' or 'Warning' only "
                         "(Kopf's kopf.event(type=...) wrote core/v1 Events, whose type was free); use one of "
                         "those and put the category in reason")


def _reference_parts(obj: Obj) -> Obj:
    """What ``object_reference`` and an Event's namespace read of ``obj``."""
    meta = obj.get("metadata", {})
    return {"apiVersion": obj.get("apiVersion"), "kind": obj.get("kind"),
            "metadata": {k: meta[k] for k in ("name", "namespace", "uid", "resourceVersion") if k in meta}}


class EventRecorder:
    """Records ``events.k8s.io/v1`` Events for a controller. Repeats of the same (object, type,
    reason, note) within a series bump the count of one Event instead of creating new ones, so a
    reconcile that fails in a loop does not flood the API server.
    """

    def __init__(self, client: Client, controller: str, instance: str | None = None) -> None:
        self.client = client
        self.controller = controller
        self.instance = instance or os.environ.get("POD_NAME") or os.uname().nodename
        self._series: dict[tuple[str, str, str, str], tuple[str, str, int, float]] = {}
        self._queued: FairLines[tuple[Obj, str, str, str, str | None, Obj | None]] = FairLines()
        self._sender: asyncio.Task[None] | None = None
        self._dropped = 0

    def record(self, regarding: Obj, type: str, reason: str, note: str, action: str | None = None,
               related: Obj | None = None) -> None:
        """Queues an event for the background sender (the module docstring); the type is checked now."""
        _check_type(type)
        namespace = regarding.get("metadata", {}).get("namespace") or ""
        if len(self._queued) >= QUEUE_LIMIT or self._queued.waiting(namespace) >= NAMESPACE_LIMIT:
            self._dropped += 1
            if self._dropped == 1 or self._dropped % QUEUE_LIMIT == 0:
                log.warning("event queue full (%d waiting, %d of namespace %r): dropped %d events so far, the "
                            "latest %s on %s", len(self._queued), self._queued.waiting(namespace), namespace,
                            self._dropped, reason, regarding.get("metadata", {}).get("name"))
            return
        # The parts an Event reads, taken now: the object may change before the sender gets to it.
        self._queued.push(namespace, (_reference_parts(regarding), type, reason, note, action,
                                      None if related is None else _reference_parts(related)))
        if self._sender is None:  # in a context of its own: its log lines belong to no reconcile
            self._sender = asyncio.get_running_loop().create_task(self._send_queued(), name="event recorder",
                                                                  context=contextvars.Context())

    async def _send_queued(self) -> None:
        try:
            while self._queued:
                regarding, type, reason, *_ = event = self._queued.pop()
                try:
                    await self.emit(*event)
                except Exception as exc:  # no answer at all (a lost connection): this one is lost, not the queue
                    log.warning("could not record event %s on %s: %s", reason,
                                regarding["metadata"].get("name"), exc)
        finally:
            self._sender = None

    async def flush(self) -> None:
        """Waits until every queued event has been sent (a test reading Events right after a reconcile)."""
        while self._sender is not None:
            await asyncio.shield(self._sender)

    async def close(self, timeout: float = 2.0) -> None:
        """Waits up to ``timeout`` seconds for the queued events to be sent, then drops the rest."""
        sender = self._sender
        if sender is None:
            return
        try:
            await asyncio.wait_for(self.flush(), timeout)
        except TimeoutError:
            log.warning("%d events not sent within %.0f s of stopping: dropped", len(self._queued), timeout)
            self._queued.clear()
            sender.cancel()

    async def emit(self, regarding: Obj, type: str, reason: str, note: str, action: str | None = None,
                   related: Obj | None = None) -> None:
        """Records an event; failures are logged, never raised (an event is not worth a failed reconcile).
        A ``type`` other than "Normal" or "Warning" is refused here, at the call: the API server would
        refuse it (422) in the background, where only the log would tell."""
        _check_type(type)
        note = note[:NOTE_LIMIT]
        uid = regarding.get("metadata", {}).get("uid", "")
        key = (uid, type, reason, note)
        try:
            series = self._series.get(key)
            if series and clock.monotonic() - series[3] < SERIES_WINDOW:
                try:
                    await self._bump(key, *series[:3])
                    return
                except NotFound:  # the event expired (default TTL 1 h): start a new series
                    pass
            await self._create(key, regarding, type, reason, note, action, related)
        except ApiError as exc:
            log.warning("could not record event %s on %s: %s", reason, regarding.get("metadata", {}).get("name"),
                        exc)

    async def _create(self, key: tuple[str, str, str, str], regarding: Obj, type: str, reason: str,
                      note: str, action: str | None, related: Obj | None) -> None:
        meta = regarding.get("metadata", {})
        namespace = meta.get("namespace") or "default"
        name = f"{meta.get('name', 'object')}.{secrets.token_hex(8)}"
        body: dict[str, Any] = {
            "apiVersion": "events.k8s.io/v1", "kind": "Event",
            "metadata": {"name": name, "namespace": namespace},
            "eventTime": _micro_time(), "reportingController": self.controller,
            "reportingInstance": self.instance[:128], "action": action or reason, "reason": reason,
            "regarding": object_reference(regarding), "note": note, "type": type,
        }
        if related:
            body["related"] = object_reference(related)
        await self.client.create(body, namespace, resource="events.events.k8s.io")
        self._series[key] = (namespace, name, 1, clock.monotonic())
        if len(self._series) > 4096:  # bounded memory: forget the oldest half
            for k in list(self._series)[:2048]:
                del self._series[k]

    async def _bump(self, key: tuple[str, str, str, str], namespace: str, name: str, count: int) -> None:
        count += 1
        await self.client.patch("events.events.k8s.io", name, {
            "series": {"count": count, "lastObservedTime": _micro_time()}}, namespace)
        self._series[key] = (namespace, name, count, clock.monotonic())

    async def normal(self, regarding: Obj, reason: str, note: str, action: str | None = None) -> None:
        """Records a Normal event about ``regarding``."""
        await self.emit(regarding, "Normal", reason, note, action)

    async def warning(self, regarding: Obj, reason: str, note: str, action: str | None = None) -> None:
        """Records a Warning event about ``regarding``."""
        await self.emit(regarding, "Warning", reason, note, action)
