"""Lease leader election (coordination.k8s.io/v1) with controller-runtime's timings.

A candidate takes the lease when its holder has not renewed it for ``lease_duration`` as measured on
*our* clock (the record's own times may come from a skewed clock, as in client-go). The leader renews
every ``retry_period``; if it cannot renew within ``renew_deadline`` it steps down — before any other
candidate can take over, since renew_deadline < lease_duration.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
import os
import socket
import uuid
from dataclasses import dataclass, field
from typing import Any

from kubeloop import metrics
from kubeloop.client import AlreadyExists, ApiError, Client, Conflict, NotFound
from kubeloop.queue import clock

log = logging.getLogger("kubeloop.leader")

LEASES = "leases.coordination.k8s.io"


def _now() -> str:
    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def default_identity() -> str:
    return f"{os.environ.get('POD_NAME') or socket.gethostname()}_{uuid.uuid4().hex[:8]}"


@dataclass
class LeaderElector:
    client: Client
    name: str
    namespace: str
    identity: str = field(default_factory=default_identity)
    lease_duration: float = 15.0
    renew_deadline: float = 10.0
    retry_period: float = 2.0

    def __post_init__(self) -> None:
        self.leading = asyncio.Event()
        self.lost = asyncio.Event()
        self._observed: dict[str, Any] | None = None  # last lease spec we saw
        self._observed_at = 0.0  # our clock (the loop's) when it last changed

    async def acquire(self) -> None:
        """Returns once we hold the lease."""
        log.info("waiting for leader lease %s/%s as %s", self.namespace, self.name, self.identity)
        while not await self._try():
            await asyncio.sleep(self.retry_period)
        self.leading.set()
        metrics.leader_election_master_status.labels(self.name).set(1)
        log.info("became leader (lease %s/%s)", self.namespace, self.name)

    async def renew_until_lost(self) -> None:
        """Renews the lease; returns when it could not be renewed within ``renew_deadline``."""
        last_renew = clock.now()
        while True:
            await asyncio.sleep(self.retry_period)
            try:
                # Not asyncio.wait_for: on Python 3.11 it drops a cancel that lands as the renewal
                # completes, and a stopped manager could go on renewing (and re-take) the lease it released.
                async with asyncio.timeout(self.renew_deadline):
                    ok = await self._try()
            except (TimeoutError, ApiError, OSError) as exc:
                log.warning("lease renewal failed: %s", exc)
                ok = False
            if ok:
                last_renew = clock.now()
            elif clock.now() - last_renew >= self.renew_deadline:
                log.error("lost leader lease %s/%s", self.namespace, self.name)
                self.leading.clear()
                self.lost.set()
                metrics.leader_election_master_status.labels(self.name).set(0)
                return

    async def release(self) -> None:
        """Gives the lease up on clean shutdown so a standby takes over at once."""
        if not self.leading.is_set():
            return
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
            self._observed, self._observed_at = spec, clock.now()
        holder = spec.get("holderIdentity")
        duration = spec.get("leaseDurationSeconds") or self.lease_duration
        expired = clock.now() - self._observed_at >= duration
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
        self._observed, self._observed_at = updated.get("spec"), clock.now()
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
        self._observed, self._observed_at = created.get("spec"), clock.now()
        return True
