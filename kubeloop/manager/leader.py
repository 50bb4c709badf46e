"""Lease leader election (coordination.k8s.io/v1) with controller-runtime's timings.

A candidate takes the lease when its holder has not renewed it for ``lease_duration`` as measured on
*our* clock (the record's own times may come from a skewed clock, as in client-go). The leader renews
every ``retry_period``; if it cannot renew within ``renew_deadline`` it steps down — before any other
candidate can take over, since renew_deadline < lease_duration.

Fenced writes: a process whose event loop was held (a long computation, a paused VM, a swapped-out
page) renews nothing meanwhile, and when it resumes, its reconciles resume too, possibly right at a
write, while a standby has taken the lease. So the controllers write through :meth:`confirm`: the
lease is *valid* while its last successful renewal began less than ``renew_deadline`` ago on the loop's
clock (others may take it only ``lease_duration`` after they saw that renewal); past that, the write
waits for a renewal made on the spot (one attempt shared by every waiting write) and goes out only if it
succeeded; otherwise it is refused (``Fenced``) and the leader steps down.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import uuid
from dataclasses import dataclass, field
from typing import Any

from kubeloop import clock, metrics
from kubeloop.client import AlreadyExists, ApiError, Client, Conflict, NotFound
from kubeloop.controller.gate import Fenced
from kubeloop.lease import LEASE_DURATION, RENEW_DEADLINE, RETRY_PERIOD

log = logging.getLogger("kubeloop.leader")

LEASES = "leases.coordination.k8s.io"
# controller-runtime's timings, in seconds: the defaults of the elector, the manager and `kubeloop run`.


def _now() -> str:
    return clock.now().strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def default_identity() -> str:
    return f"{os.environ.get('POD_NAME') or socket.gethostname()}_{uuid.uuid4().hex[:8]}"


@dataclass
class LeaderElector:
    client: Client
    name: str
    namespace: str
    identity: str = field(default_factory=default_identity)
    lease_duration: float = LEASE_DURATION
    renew_deadline: float = RENEW_DEADLINE
    retry_period: float = RETRY_PERIOD

    def __post_init__(self) -> None:
        self.leading = asyncio.Event()
        self.lost = asyncio.Event()
        self._observed: dict[str, Any] | None = None  # last lease spec we saw
        self._observed_at = 0.0  # our clock (the loop's) when it last changed
        self.renewed_at: float | None = None  # loop clock: when the last successful attempt began
        self._attempt: asyncio.Future[bool] | None = None  # the renewal in flight, shared

    def lease_valid(self) -> bool:
        """Leading, and the last successful renewal began less than ``renew_deadline`` ago."""
        return (self.leading.is_set() and self.renewed_at is not None
                and clock.monotonic() - self.renewed_at < self.renew_deadline)

    async def confirm(self) -> None:
        """The write fence: returns at once while :meth:`lease_valid`; otherwise renews now and returns
        if that succeeded. Raises ``Fenced`` if this replica does not lead or could not renew (it then
        steps down: ``lost`` is set, the manager stops its controllers)."""
        if self.lease_valid():
            return
        if self.leading.is_set():
            if self._attempt is None or self._attempt.done():
                log.warning("lease %s/%s last renewed %.1fs ago (over the renew deadline): renewing before "
                            "the next write", self.namespace, self.name, clock.monotonic() - (self.renewed_at or 0.0))
            if await self._renew() and self.lease_valid():
                return
            self._step_down("could not confirm the leader lease before a write")
        raise Fenced(f"the leader lease {self.namespace}/{self.name} is not confirmed: another replica may "
                     f"lead by now; the write was not sent")

    async def acquire(self) -> None:
        """Returns once we hold the lease."""
        log.info("waiting for leader lease %s/%s as %s", self.namespace, self.name, self.identity)
        while True:
            started = clock.monotonic()
            if await self._try():
                break
            await asyncio.sleep(self.retry_period)
        self.renewed_at = started
        self.leading.set()
        metrics.leader_election_master_status.labels(self.name).set(1)
        log.info("became leader (lease %s/%s)", self.namespace, self.name)

    async def renew_until_lost(self) -> None:
        """Renews the lease; returns when it could not be renewed within ``renew_deadline`` (or a fenced
        write could not confirm it)."""
        last_renew = clock.monotonic()
        while not self.lost.is_set():
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self.retry_period):
                    await self.lost.wait()  # a fenced write that failed to confirm ends this at once
            if self.lost.is_set():
                return
            try:
                ok = await self._renew()
            except asyncio.CancelledError:
                self._cancel_attempt()  # a stopped manager must not renew (re-take) what it releases
                raise
            if ok:
                last_renew = clock.monotonic()
            elif clock.monotonic() - last_renew >= self.renew_deadline:
                self._step_down("lost leader lease")
                return

    def _step_down(self, why: str) -> None:
        if self.lost.is_set():
            return  # several fenced writes may fail on one renewal: one step down
        log.error("%s %s/%s", why, self.namespace, self.name)
        self.leading.clear()
        self.lost.set()
        metrics.leader_election_master_status.labels(self.name).set(0)

    async def _renew(self) -> bool:
        """One renewal attempt, shared by whoever asks while it runs (the renewal loop, fenced writes)."""
        if self._attempt is None or self._attempt.done():
            self._attempt = asyncio.ensure_future(self._renew_once())
        return await asyncio.shield(self._attempt)

    async def _renew_once(self) -> bool:
        started = clock.monotonic()
        try:
            # Not asyncio.wait_for: on Python 3.11 it drops a cancel that lands as the renewal
            # completes, and a stopped manager could go on renewing (and re-take) the lease it released.
            async with asyncio.timeout(self.renew_deadline):
                ok = await self._try()
        except (TimeoutError, ApiError, OSError) as exc:
            log.warning("lease renewal failed: %s", exc)
            return False
        if ok:
            self.renewed_at = started
        return ok

    def _cancel_attempt(self) -> None:
        if self._attempt is not None and not self._attempt.done():
            self._attempt.cancel()

    async def release(self) -> None:
        """Gives the lease up on clean shutdown so a standby takes over at once."""
        if not self.leading.is_set():
            return
        self._cancel_attempt()
        if self._attempt is not None:
            await asyncio.gather(self._attempt, return_exceptions=True)  # no renewal lands after the release
        try:
            lease = await self.client.get(LEASES, self.name, self.namespace)
            if lease.get("spec", {}).get("holderIdentity") != self.identity:
                return
            lease["spec"].update(holderIdentity=None, leaseDurationSeconds=1, renewTime=_now())
            await self.client.replace(lease, resource=LEASES)
            log.info("released leader lease %s/%s", self.namespace, self.name)
        except (ApiError, OSError) as exc:
            log.warning("could not release the lease: %s", exc)
        finally:
            self.leading.clear()
            metrics.leader_election_master_status.labels(self.name).set(0)

    async def _try(self) -> bool:
        """One acquire-or-renew attempt (client-go's tryAcquireOrRenew)."""
        try:
            lease = await self.client.get(LEASES, self.name, self.namespace)
        except NotFound:
            return await self._create()
        spec = lease.get("spec") or {}
        if spec != self._observed:
            self._observed, self._observed_at = spec, clock.monotonic()
        holder = spec.get("holderIdentity")
        duration = spec.get("leaseDurationSeconds") or self.lease_duration
        expired = clock.monotonic() - self._observed_at >= duration
        if holder and holder != self.identity and not expired:
            return False
        now = _now()
        new_spec = {"holderIdentity": self.identity, "leaseDurationSeconds": int(self.lease_duration),
                    "renewTime": now}
        if holder == self.identity:
            new_spec["acquireTime"] = spec.get("acquireTime") or now
            new_spec["leaseTransitions"] = spec.get("leaseTransitions") or 0
        else:
            new_spec["acquireTime"] = now
            new_spec["leaseTransitions"] = (spec.get("leaseTransitions") or 0) + 1
        lease["spec"] = new_spec
        try:
            updated = await self.client.replace(lease, resource=LEASES)  # conditional on resourceVersion
        except Conflict:
            return False
        self._observed, self._observed_at = updated.get("spec"), clock.monotonic()
        return True

    async def _create(self) -> bool:
        now = _now()
        body = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                "metadata": {"name": self.name, "namespace": self.namespace},
                "spec": {"holderIdentity": self.identity, "leaseDurationSeconds": int(self.lease_duration),
                         "acquireTime": now, "renewTime": now, "leaseTransitions": 0}}
        try:
            created = await self.client.create(body, self.namespace, resource=LEASES)
        except AlreadyExists:
            return False
        self._observed, self._observed_at = created.get("spec"), clock.monotonic()
        return True
