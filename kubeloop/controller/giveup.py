"""Giving up on an object: what a controller does when its error policy says ``GIVE_UP`` or a reconcile
raises ``PermanentError``.

The failure is put where users look — a Warning Event and a ``Stalled=True`` condition (kstatus's name
for "cannot progress without outside help") — and the object is left alone until it changes: not
retried, not even by the periodic resync, since the same object would fail the same way. A later
successful reconcile sets ``Stalled`` back to False.
"""

from __future__ import annotations

import logging
from typing import Any

from kubeloop.client import Client, Resource
from kubeloop.client.api import Obj
from kubeloop.client.errors import ApiError
from kubeloop.controller.diff import essence
from kubeloop.helpers import conditions
from kubeloop.helpers.events import EventRecorder

log = logging.getLogger("kubeloop.controller")

REASON = "ReconcileFailed"
CONDITION = "Stalled"


class GaveUp:
    """The keys a controller gave up on, each with the object as it was then (its essence: no status, no
    server bookkeeping, so the controller's own status write does not count as a change)."""

    def __init__(self) -> None:
        self._at: dict[str, dict[str, Any]] = {}

    def unchanged(self, key: str, raw: Obj) -> bool:
        """Whether ``key`` was given up on and its object has not changed since (then: skip it)."""
        if key not in self._at:
            return False
        if self._at[key] == essence(raw):
            return True
        del self._at[key]  # changed: a fresh start
        return False

    def __contains__(self, key: str) -> bool:
        return key in self._at

    def forget(self, key: str) -> None:
        self._at.pop(key, None)

    async def record(self, key: str, raw: Obj, error: Exception, failures: int, client: Client,
                     resource: Resource, events: EventRecorder) -> None:
        """Remembers the object and tells its users: an Event and the ``Stalled`` condition."""
        self._at[key] = essence(raw)
        attempts = f"after {failures} failed attempt{'s' if failures != 1 else ''}"
        message = f"gave up {attempts}: {error}; not retried until the object changes"
        log.error("%s", message)
        await events.warning(raw, REASON, message)
        await _set_stalled(client, resource, raw, True, message)


def stalled_here(raw: Obj) -> bool:
    """Whether a give-up (of this process or an earlier one) left ``Stalled=True`` on the object. Plain
    dict lookups: it is asked after every successful reconcile."""
    status = raw.get("status")
    if not status or not status.get("conditions"):
        return False
    cond = conditions.get_condition(status["conditions"], CONDITION)
    return bool(cond and cond.get("status") == "True" and cond.get("reason") == REASON)


async def clear_stalled(client: Client, resource: Resource, raw: Obj) -> None:
    """After a success: ``Stalled`` back to False (see ``stalled_here``)."""
    await _set_stalled(client, resource, raw, False, "reconciled")


async def _set_stalled(client: Client, resource: Resource, raw: Obj, stalled: bool, message: str) -> None:
    meta = raw.get("metadata", {})
    listed = conditions.set_condition((raw.get("status") or {}).get("conditions"), CONDITION, stalled,
                                      REASON if stalled else "Reconciled", message, meta.get("generation"))
    try:
        await client.patch(resource, meta["name"], {"status": {"conditions": listed}}, meta.get("namespace"),
                           subresource="status")
    except ApiError as exc:  # a kind without status (or conditions): the Event has said it
        log.debug("could not set %s on %s: %s", CONDITION, meta.get("name"), exc)
