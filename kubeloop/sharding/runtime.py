"""A replica's shard membership at run time: its Lease, the slots it holds, and handoffs without overlap.

- **One Lease per replica** (``<operator>-shard-<identity>``, labelled ``LABEL=<operator>``, its slots
  in the annotation ``HOLDS``), renewed every ``retry_period`` with leader election's timings; each
  round lists the operator's Leases and runs :class:`~kubeloop.sharding.membership.Member`'s protocol.
- **Release drains first**: slots the ring gives away stop being dequeued at once (``owns`` is false),
  then the round waits for their in-flight reconciles (cancelled after ``handoff_timeout``), cancels and
  awaits their keys' daemons, and only then writes the Lease without them; no other member claims a
  slot a live Lease still lists.
- **Acquire after verification**: a claimed slot is reconciled only once the round after the claim's
  write confirms no other live member lists it; its cached keys are queued then.
- **Fence**: once the last successful renewal is ``renew_deadline`` old, ``owns`` is false for every
  slot and every in-flight reconcile and daemon is cancelled; others take the slots only after ``lease_duration``.
- **Filtering**: where the API server serves KEP-5866 ``shardSelector`` (probed once at start,
  :mod:`kubeloop.sharding.serverside`) a controller's primary informer lists and watches only this
  member's assigned ranges; elsewhere (older server, gate off, children) every replica caches every
  object. In both modes ``owns`` decides what it reconciles.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from kubeloop import clock, metrics
from kubeloop.cache import Informer
from kubeloop.client import AlreadyExists, ApiError, Client, Conflict, NotFound
from kubeloop.sharding.hashing import fnv1a64
from kubeloop.sharding.membership import HOLDS, LABEL, LeaseObserver, Member, Timings, encode_slots
from kubeloop.sharding.ring import DEFAULT_SLOTS, slot_of
from kubeloop.sharding.serverside import ServerSide, primary_only, served

if TYPE_CHECKING:
    from kubeloop.controller import Controller

log = logging.getLogger("kubeloop.sharding")

LEASES = "leases.coordination.k8s.io"


def lease_name(operator: str, identity: str) -> str:
    """A DNS-1123 Lease name for this replica (identities hold ``_`` and capitals)."""
    clean = re.sub(r"[^a-z0-9-]+", "-", identity.lower()).strip("-")
    return f"{operator}-shard-{clean}"[:253].rstrip("-")


def _counter(controller: Controller) -> Callable[[], float]:
    """The gauge's reading of ``controller``'s owned keys (counted at scrape time)."""
    return lambda: len(controller.owned_keys())


def _cached(informer: Informer) -> Callable[[], float]:
    """The gauge's reading of a primary store's size (what server-side mode divides by N)."""
    return lambda: len(informer.store)


def _micro_time() -> str:
    return clock.now().strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class ShardMember:
    """This replica in the ring; the manager makes one per run and sets it as every controller's gate."""

    def __init__(self, client: Client, operator: str, namespace: str, identity: str, timings: Timings,
                 handoff_timeout: float | None = None, slots: int = DEFAULT_SLOTS) -> None:
        self.client, self.operator, self.namespace = client, operator, namespace
        self.member = Member(identity, timings, slots)
        self.observer = LeaseObserver(operator, timings.lease_duration)
        self.name = lease_name(operator, identity)
        # Bounded below the fence: a drain that outlived renew_deadline would stop every slot anyway.
        self.handoff_timeout = handoff_timeout or max(0.1, timings.renew_deadline - 2 * timings.retry_period)
        self.controllers: Sequence[Controller] = ()
        self.members: dict[str, set[int]] = {}  # live identity → claimed slots, as last listed
        self._lease: dict[str, Any] | None = None
        self.server_side: ServerSide | None = None  # set by choose_mode when the API server filters
        self._claimed_at: float | None = None
        self._loop = asyncio.get_running_loop()
        metrics.shard_slots_owned.labels(operator).set_function(self._slots_owned)

    # --- the gate (kubeloop.controller.gate.KeyGate) -------------------------------------------------

    def hash(self, uid: str) -> int:
        return fnv1a64(uid)

    def owns(self, h: int) -> bool:
        return slot_of(h, self.member.slots) in self._active()

    def _slots_owned(self) -> float:
        return len(self._active())

    def _active(self) -> set[int]:
        return self.member.active(self._loop.time())

    # --- running -------------------------------------------------------------------------------------

    def attach(self, controllers: Sequence[Controller]) -> None:
        """The controllers whose keys follow this member's slots."""
        self.controllers = controllers
        for c in controllers:
            metrics.shard_keys_owned.labels(c.name).set_function(_counter(c))
            informer = getattr(c, "informer", None)  # a Controller's primary one; test doubles have none
            if isinstance(informer, Informer):
                metrics.shard_cached_objects.labels(c.name).set_function(_cached(informer))

    async def choose_mode(self) -> None:
        """Before the cache starts: probes which primary informers the API server can filter; if any, joins
        the ring (two rounds, one retry period apart) and points them at the ranges it is assigned."""
        found = (getattr(c, "informer", None) for c in self.controllers)
        primaries = list({id(i): i for i in found if isinstance(i, Informer)}.values())
        eligible = [i for i in primaries if primary_only(i, self.controllers)]
        filtered = await served(self.client, eligible, LEASES, self.namespace)
        whole = [str(i.resource) for i in primaries if i not in filtered]
        if not filtered:
            why = ("the API server does not filter by shard: older than 1.36, or its ShardedListAndWatch "
                   "feature gate is off" if eligible else
                   "each primary informer also feeds children or watches, which the server cannot filter")
            log.info("sharding: client-side mode: every replica caches all objects and reconciles its own "
                     "share (%s); member %s, Lease %s/%s", why, self.member.identity, self.namespace, self.name)
            return
        self.server_side = ServerSide(filtered, self.member.slots)
        metrics.shard_server_side.labels(self.operator).set(1)
        # Join before the first list: replicas started together then see each other's Leases, and each
        # lists ~1/N instead of everything (a Python process rarely gives the freed memory back).
        await self.round()
        await asyncio.sleep(self.member.timings.retry_period)
        await self.round()  # its follow() sets the selector of the first list
        if self.server_side.current is None:  # no Lease list worked: as the only member, until a round does
            self.server_side.follow(self.member.predict({}))
        log.info("sharding: server-side mode (KEP-5866): %s listed and watched with this member's hash "
                 "ranges only%s; member %s, Lease %s/%s", ", ".join(str(i.resource) for i in filtered),
                 f"; client-side for {', '.join(whole)} (shared or not served)" if whole else "",
                 self.member.identity, self.namespace, self.name)

    async def run(self) -> None:
        """Rounds every ``retry_period`` until cancelled, and the fence watch between them."""
        fence = asyncio.create_task(self._fence_watch(), name="shard fence")
        try:
            while True:
                began = self._loop.time()
                await self.round()
                await asyncio.sleep(max(0.0, self.member.timings.retry_period - (self._loop.time() - began)))
        finally:
            fence.cancel()

    async def round(self) -> None:
        """One list of the Leases, the protocol's step, the drain of released slots, one Lease write."""
        timings = self.member.timings
        try:
            async with asyncio.timeout(timings.renew_deadline):
                listing = await self.client.list(LEASES, self.namespace, label_selector=f"{LABEL}={self.operator}")
        except (TimeoutError, ApiError, OSError) as exc:
            log.warning("sharding: cannot list the Leases: %s", exc)
            return
        now = self._loop.time()
        before = set(self.member.held)
        self.members = self.observer.observe(listing.get("items") or [], now)
        await self._collect(listing.get("items") or [])
        holds = self.member.tick(self.members, now)
        released = before - self.member.held
        if released:
            await self._drain(released)
        sent = self._loop.time()
        if await self._write(holds):
            self.member.renewed(sent)
            if self.member.claimed and self._claimed_at is None:
                self._claimed_at = sent
        if self.server_side is not None:  # after the drain: released keys leave the cache only now
            self.server_side.follow(self.member.wanted)
        gained = self.member.held - before
        if gained:
            queued = sum(c.requeue_owned() for c in self.controllers)
            self._record("acquired", self._loop.time() - (self._claimed_at or now))
            log.info("sharding: now holding %d slots (+%d), %d keys queued", len(self.member.held),
                     len(gained), queued)
        if not self.member.claimed:
            self._claimed_at = None

    async def leave(self) -> None:
        """Clean shutdown (after the controllers stopped): hold nothing and delete the Lease, so that the
        others take the slots at their next round instead of after ``lease_duration``."""
        self.member.leave()
        with contextlib.suppress(NotFound, ApiError, OSError):
            await self.client.delete(LEASES, self.name, self.namespace)
            log.info("sharding: left; Lease %s/%s deleted", self.namespace, self.name)

    async def _collect(self, leases: list[dict[str, Any]]) -> None:
        """Deletes the Leases of dead members (as judged this round), so the ring lists only the living.

        Conditional on the version judged dead: a member that renewed meanwhile keeps its Lease, and
        one that comes back after the delete writes a new Lease and claims again like a newcomer.
        """
        for lease in leases:
            holder, meta = (lease.get("spec") or {}).get("holderIdentity"), lease["metadata"]
            if holder and holder not in self.members and holder != self.member.identity:
                with contextlib.suppress(NotFound, Conflict, ApiError, OSError):
                    await self.client.delete(LEASES, meta["name"], self.namespace,
                                             resource_version=meta["resourceVersion"])
                    log.info("sharding: member %s expired; its Lease %s deleted", holder, meta["name"])

    async def _drain(self, released: set[int]) -> None:
        """Waits for the in-flight reconciles of ``released`` slots; cancels them after the timeout."""
        began = self._loop.time()
        slots = self.member.slots
        tasks = [t for c in self.controllers for h, t in c.in_flight.values() if slot_of(h, slots) in released]
        if tasks:
            _, pending = await asyncio.wait(tasks, timeout=self.handoff_timeout)
            for task in pending:
                task.cancel()
            if pending:
                await asyncio.wait(pending)
                log.warning("sharding: %d reconciles cancelled after %.1fs to hand off their slots",
                            len(pending), self.handoff_timeout)
        await asyncio.gather(*(c.stop_unowned_daemons() for c in self.controllers))  # no overlap either
        self._record("released", self._loop.time() - began)
        log.info("sharding: released %d slots (%d in-flight drained)", len(released), len(tasks))

    def _record(self, direction: str, seconds: float) -> None:
        metrics.shard_handoffs.labels(self.operator, direction).inc()
        metrics.shard_handoff_duration.labels(self.operator, direction).observe(seconds)

    async def _write(self, holds: set[int]) -> bool:
        """Creates or renews this replica's Lease with ``holds``; False if it did not surely land."""
        timings = self.member.timings
        spec = {"holderIdentity": self.member.identity, "leaseDurationSeconds": max(1, round(timings.lease_duration)),
                "renewTime": _micro_time()}
        meta: dict[str, Any] = {"name": self.name, "namespace": self.namespace, "labels": {LABEL: self.operator},
                                "annotations": {HOLDS: encode_slots(holds)}}
        try:
            async with asyncio.timeout(timings.renew_deadline):
                if self._lease is None:
                    body = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": meta, "spec": spec}
                    self._lease = await self.client.create(body, self.namespace, resource=LEASES)
                else:
                    meta["resourceVersion"] = self._lease["metadata"]["resourceVersion"]
                    self._lease = await self.client.replace({**self._lease, "metadata": meta, "spec": spec},
                                                            resource=LEASES)
            return True
        except AlreadyExists:  # a restart under the same identity: renew that Lease from the next round
            self._lease = await self._get()
        except (Conflict, NotFound):
            self._lease = await self._get()
        except (TimeoutError, ApiError, OSError) as exc:
            log.warning("sharding: cannot renew Lease %s/%s: %s", self.namespace, self.name, exc)
        return False

    async def _get(self) -> dict[str, Any] | None:
        with contextlib.suppress(NotFound, ApiError, OSError):
            return await self.client.get(LEASES, self.name, self.namespace)
        return None

    async def _fence_watch(self) -> None:
        """Cancels every in-flight reconcile once the renewal is too old (the round may be stuck in I/O)."""
        timings = self.member.timings
        while True:
            await asyncio.sleep(min(0.25, timings.retry_period / 2))
            last = self.member.last_renew
            if last is not None and self._loop.time() - last >= timings.renew_deadline:
                running = [t for c in self.controllers for _, t in c.in_flight.values() if not t.done()]
                for task in running:
                    task.cancel()
                if running:
                    log.error("sharding: fenced (no renewal for %.1fs): %d reconciles cancelled",
                              timings.renew_deadline, len(running))
                await asyncio.gather(*(c.stop_unowned_daemons() for c in self.controllers))
