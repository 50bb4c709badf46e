"""Makes the cluster match a plan: create missing copies, bring stale ones back in line, take over
or report what stands in a copy's place, and delete (or release) copies no longer wanted.

Secret contents never reach a log line, an event, the status or an error message from here: errors
are described by kind, place and HTTP status only.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from kubeloop import ApiError, Client, Conflict, NotFound, Obj
from kubeloop.operators.copyrator import metrics
from kubeloop.operators.copyrator.boundary import STRICT, Boundary
from kubeloop.operators.copyrator.memo import PerRule
from kubeloop.operators.copyrator.models import CopyratorRule
from kubeloop.operators.copyrator.plan import (
    Decision,
    Plan,
    content_hash,
    decide,
    edited_in_place,
    meta,
    needs_recreate,
    released,
)
from kubeloop.operators.copyrator.world import RESOURCES

log = logging.getLogger("kubeloop.copyrator")
Place = tuple[str, str, str]  # (kind, namespace, name)
PARALLEL = 8  # API writes in flight per rule: fast fan-out without flooding the API server


@dataclass
class Outcome:
    created: int = 0
    updated: int = 0
    deleted: int = 0
    in_place: list[Place] = field(default_factory=list)  # desired copies that now exist as wanted
    conflicts: list[tuple[Place, str, str, str]] = field(default_factory=list)  # place, source, reason, msg
    errors: list[str] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return bool(self.created or self.updated or self.deleted)


def place_of(obj: Mapping[str, Any]) -> Place:
    return (obj["kind"], meta(obj)["namespace"], meta(obj)["name"])


def describe_error(place: Place, exc: BaseException) -> str:
    """Safe to log and show: never the server's message for Secrets (it may quote what was sent)."""
    kind, ns, name = place
    if isinstance(exc, ApiError):
        detail = f"{exc.status} {exc.reason}" + (f": {exc.message}" if kind != "Secret" else "")
    else:
        detail = type(exc).__name__
    return f"{kind} {ns}/{name}: {detail}"[:300]


class Sync:
    """One pass for one rule. ``cached`` looks objects up in the informer cache; a write that finds
    the cache stale (409/AlreadyExists) re-reads the object and decides once more."""

    def __init__(self, client: Client, rule: CopyratorRule, cached: Any, boundary: Boundary = STRICT,
                 hashes: PerRule[str] | None = None) -> None:
        self.client, self.rule, self.cached, self.boundary = client, rule, cached, boundary
        # Every copy is checked for edits in place at every pass: hashed again only when it changed.
        self.hash_of = hashes.pass_for(rule.key, None, content_hash) if hashes is not None else content_hash
        self.out = Outcome()
        self._slots = asyncio.Semaphore(PARALLEL)

    async def run(self, desired: Plan, actual: list[Obj]) -> Outcome:
        """Everything desired placed, everything else the rule made removed (or released)."""
        wanted = {(c["kind"], ns, name) for (ns, name), c in desired.copies.items()}
        work = [self._guarded(self.place, c) for c in desired.copies.values()]
        work += [self._guarded(self.remove, c) for c in actual if place_of(c) not in wanted]
        await asyncio.gather(*work)
        return self.out

    async def _guarded(self, step: Any, obj: Obj) -> None:
        async with self._slots:
            try:
                await step(obj)
            except Exception as exc:  # one failed copy must not stop the others; retried with backoff
                self.out.errors.append(describe_error(place_of(obj), exc))
                metrics.errors.labels(obj["kind"].lower()).inc()

    # --- one desired copy ------------------------------------------------------------------------

    async def place(self, desired: Obj) -> None:
        where = place_of(desired)
        existing = self.cached(*where)
        for attempt in range(3):
            decision = decide(self.rule, existing, desired, self.boundary, self.hash_of)
            try:
                await self._execute(decision, existing, desired)
            except Conflict:  # AlreadyExists or a stale resourceVersion: the cache lags behind
                if attempt == 2:
                    raise
                existing = await self._read(where)
                continue
            except NotFound:
                if decision.action == "create" or attempt == 2:
                    return  # the namespace is gone (or going): nothing to place
                existing = None  # the object vanished under us: create it
                continue
            break
        if decision.action == "conflict":
            source = desired["metadata"]["annotations"].get("copyrator.flant.com/source", "")
            self.out.conflicts.append((where, source, decision.reason, decision.message))
        else:
            self.out.in_place.append(where)

    async def _execute(self, decision: Decision, existing: Obj | None, desired: Obj) -> None:
        kind = desired["kind"].lower()
        action = decision.action
        if action in ("none", "conflict"):
            return
        assert action == "create" or existing is not None
        if action == "recreate" or (action == "overwrite" and needs_recreate(existing or {}, desired)):
            await self._delete(existing or {})
            action = "create"
        if action == "create":
            await self.client.create(desired, meta(desired)["namespace"], resource=RESOURCES[desired["kind"]])
            metrics.created.labels(kind).inc()
            self.out.created += 1
            log.info("created %s %s/%s", desired["kind"], meta(desired)["namespace"], meta(desired)["name"])
            return
        await self.client.replace(_replacement(existing or {}, desired), resource=RESOURCES[desired["kind"]])
        metrics.updated.labels(kind).inc()
        self.out.updated += 1
        log.info("%s %s %s/%s", {"update": "updated", "adopt": "adopted", "overwrite": "overwrote"}[action],
                 desired["kind"], meta(desired)["namespace"], meta(desired)["name"])

    async def _read(self, where: Place) -> Obj | None:
        kind, ns, name = where
        try:
            obj = await self.client.get(RESOURCES[kind], name, ns)
        except NotFound:
            return None
        obj.setdefault("kind", kind)
        return obj

    # --- one copy no longer wanted ---------------------------------------------------------------

    async def remove(self, copy: Obj) -> None:
        kind, ns, name = place_of(copy)
        # A copy its namespace's owner changed is theirs as much as ours: released, never deleted.
        if self.rule.orphanOnDelete or edited_in_place(copy, self.hash_of):
            try:
                await self.client.patch(RESOURCES[kind], name, released(copy), ns)
            except NotFound:
                return
            log.info("released %s %s/%s (%s)", kind, ns, name,
                     "orphanOnDelete" if self.rule.orphanOnDelete else "edited in place")
        else:
            if not await self._delete(copy):
                return
            log.info("deleted %s %s/%s", kind, ns, name)
        metrics.deleted.labels(kind.lower()).inc()
        self.out.deleted += 1

    async def _delete(self, obj: Obj) -> bool:
        """Deletes exactly this object (UID precondition): a same-name newcomer is left alone."""
        kind, ns, name = place_of(obj)
        try:
            await self.client.delete(RESOURCES[kind], name, ns, uid=meta(obj).get("uid"))
            return True
        except NotFound:
            return False


def _replacement(existing: Obj, desired: Obj) -> Obj:
    """A full PUT body: exactly the desired content (keys gone from the source disappear, nothing is
    merged), guarded by the resourceVersion we decided on; other controllers' finalizers are kept."""
    body = {k: v for k, v in desired.items()}
    body["metadata"] = {**desired["metadata"], "resourceVersion": meta(existing).get("resourceVersion")}
    if meta(existing).get("finalizers"):
        body["metadata"]["finalizers"] = meta(existing)["finalizers"]
    return body


async def collect_leftovers(client: Client, copies: list[Obj]) -> int:
    """Deletes copies whose rule no longer exists (its finalizer was removed by hand)."""
    removed = 0
    for copy in copies:
        kind, ns, name = place_of(copy)
        try:
            if edited_in_place(copy):  # changed by its namespace's owner: kept, unmarked
                await client.patch(RESOURCES[kind], name, released(copy), ns)
            else:
                await client.delete(RESOURCES[kind], name, ns, uid=meta(copy).get("uid"))
        except (NotFound, Conflict):
            continue
        metrics.deleted.labels(kind.lower()).inc()
        removed += 1
        log.info("deleted leftover %s %s/%s of rule %s", kind, ns, name,
                 (meta(copy).get("annotations") or {}).get("copyrator.flant.com/rule"))
    return removed
