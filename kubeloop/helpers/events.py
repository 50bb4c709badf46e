"""Events (events.k8s.io/v1) with client-go style aggregation: a repeat of the same event within the
series window bumps ``series.count`` instead of creating a new object."""

from __future__ import annotations

import logging
import os
import secrets
from typing import Any

from kubeloop import clock
from kubeloop.client import Client
from kubeloop.client.api import Obj
from kubeloop.client.errors import ApiError, NotFound

log = logging.getLogger("kubeloop.events")

SERIES_WINDOW = 6 * 60.0  # seconds within which a repeat joins the series (client-go's value)
NOTE_LIMIT = 1024
EVENT_TYPES = ("Normal", "Warning")  # all that events.k8s.io/v1 accepts


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

    async def emit(self, regarding: Obj, type: str, reason: str, note: str, action: str | None = None,
                   related: Obj | None = None) -> None:
        """Records an event; failures are logged, never raised (an event is not worth a failed reconcile).
        A ``type`` other than "Normal" or "Warning" is refused here, at the call: the API server would
        refuse it (422) in the background, where only the log would tell."""
        if type not in EVENT_TYPES:
            raise ValueError(f"event type {type!r}: events.k8s.io/v1 Events are 'Normal' or 'Warning' only "
                             "(Kopf's kopf.event(type=...) wrote core/v1 Events, whose type was free); use one of "
                             "those and put the category in reason")
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
