"""What a reconcile function gets besides its object: the client, the cache and helpers bound to
the object being reconciled."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kubeloop.cache import Cache
from kubeloop.client import Client, NotFound, Resource
from kubeloop.client.api import ResourceRef
from kubeloop.helpers import conditions
from kubeloop.helpers.events import EventRecorder
from kubeloop.helpers.ownership import set_controller
from kubeloop.reconcile.result import Request

if TYPE_CHECKING:
    from kubeloop.controller.controller import Controller

Obj = dict[str, Any]


@dataclass
class Context:
    """What a reconcile gets besides its object: the client, the shared cache, and helpers bound to
    the object being reconciled (its status, conditions, events and owned children).

    ``raw`` is the object as cached (a dict), also when the reconciler's ``obj`` is a typed model;
    ``memory`` is a dict kept for this object across its reconciles (dropped when it is deleted).
    """

    client: Client
    cache: Cache
    request: Request
    resource: Resource
    controller: Controller
    events: EventRecorder
    log: logging.Logger
    raw: Obj  # the object as cached (a dict); the reconcile's ``obj`` may be its typed model
    reconcile_id: str = ""
    memory: dict[str, Any] = field(default_factory=dict)  # per-object state kept across reconciles

    @property
    def name(self) -> str:
        """The reconciled object's name."""
        return self.request.name

    @property
    def namespace(self) -> str | None:
        """The reconciled object's namespace (None if cluster-scoped)."""
        return self.request.namespace

    @property
    def field_manager(self) -> str:
        """The server-side apply field manager of this controller's writes."""
        return self.controller.field_manager

    # --- status ------------------------------------------------------------------------------------

    async def patch_status(self, status: dict[str, Any], *, guarded: bool = False) -> Obj:
        """Merge-patches ``status`` on the object's status subresource; skipped when nothing changes,
        so a steady-state reconcile writes nothing. ``guarded``: only if the object is still the version
        this reconcile read (else 409 Conflict, retried on a fresher cache) — for status computed from
        the old one, such as counters, which a stale cache must never apply twice."""
        current = self.raw.get("status") or {}
        if all(current.get(k) == v for k, v in status.items()):
            return self.raw
        body: dict[str, Any] = {"status": status}
        if guarded:
            body["metadata"] = {"resourceVersion": self.raw["metadata"]["resourceVersion"]}
        return await self.client.patch(self.resource, self.request.name, body,
                                       self.request.namespace, subresource="status")

    def condition(self, type: str, status: bool | str, reason: str, message: str = "",
                  conditions_list: list[dict[str, Any]] | None = None) -> list[dict[str, Any]]:
        """The object's conditions with one set (observedGeneration filled in); pass the result to
        ``patch_status``."""
        base = conditions_list if conditions_list is not None else (self.raw.get("status") or {}).get(
            "conditions")
        return conditions.set_condition(base, type, status, reason, message,
                                        self.raw.get("metadata", {}).get("generation"))

    # --- events ------------------------------------------------------------------------------------

    async def event(self, type: str, reason: str, note: str, regarding: Obj | None = None) -> None:
        """Records an Event (``type`` "Normal" or "Warning") on this object, or on ``regarding``;
        repeats of the same event are counted on one Event object instead of creating more.
        """
        await self.events.emit(regarding or self.raw, type, reason, note)

    # --- children ----------------------------------------------------------------------------------

    def owned(self, ref: ResourceRef) -> list[Obj]:
        """Children of this object (by controller ownerReference UID) from the cache."""
        informer = self.controller.owned_informer(ref)
        return informer.store.by_index("controller", self.raw["metadata"]["uid"])

    async def apply(self, child: Obj, *, own: bool = True, force: bool = True) -> Obj:
        """Server-side applies a child with this controller's field manager, owned by this object."""
        child.setdefault("metadata", {})
        if own:
            set_controller(child, self.raw)
            if self.resource.namespaced:
                child["metadata"].setdefault("namespace", self.request.namespace)
        return await self.client.apply(child, field_manager=self.field_manager, force=force)

    async def apply_children(self, desired: list[Obj], kinds: list[ResourceRef] | None = None) -> list[Obj]:
        """Declarative children: applies ``desired`` and deletes owned children of the given kinds
        (default: every kind the controller owns) that are no longer desired."""
        applied = [await self.apply(c) for c in desired]
        wanted = {(c["kind"], c["metadata"].get("namespace"), c["metadata"]["name"]) for c in applied}
        for ref in kinds if kinds is not None else self.controller.owns_refs:
            res = await self.client.resource(ref)
            for child in self.owned(res):
                meta = child["metadata"]
                if (child.get("kind", res.kind), meta.get("namespace"), meta["name"]) not in wanted:
                    try:
                        await self.client.delete(res, meta["name"], meta.get("namespace"), uid=meta["uid"],
                                                 propagation_policy="Background")
                        self.log.info("pruned %s %s", res.kind, meta["name"])
                    except NotFound:
                        pass
        return applied
