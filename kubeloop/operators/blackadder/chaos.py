"""What every mode shares: the round being played (client, dice, clock, dry run, a bound on
concurrent requests) and the Action each change is reported as."""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, TypeVar

from kubeloop import Client, Conflict, NotFound, Obj, Resource
from kubeloop.operators.blackadder import marks, schedule
from kubeloop.operators.blackadder.models import MAX_DETAIL
from kubeloop.operators.blackadder.safety import Settings

log = logging.getLogger("kubeloop.blackadder")
T = TypeVar("T")
R = TypeVar("R")


@dataclass
class Action:
    """One change (or, in dry run, one that would have been made) to one object."""

    mode: str  # tantrum | cancer | ipsum | restore
    action: str  # killed, evicted, spared, scaled, rewrote, restored, released, ...
    obj: Obj
    detail: str = ""
    dry_run: bool = False
    changed: bool = True  # False: reported, but the object was left as it was (e.g. a PDB said no)

    @property
    def namespace(self) -> str:
        return self.obj["metadata"].get("namespace") or ""

    @property
    def name(self) -> str:
        name: str = self.obj["metadata"]["name"]
        return name

    def record(self, round_no: int, when: str) -> dict[str, Any]:
        """The ``status.recentActions`` entry."""
        out: dict[str, Any] = {"time": when, "round": round_no, "mode": self.mode, "action": self.action,
                               "namespace": self.namespace, "name": self.name}
        if self.detail:
            out["detail"] = self.detail[:MAX_DETAIL]  # an API server's message may be long
        if self.dry_run:
            out["dryRun"] = True
        return out

    def describe(self) -> str:
        text = f"{'[dry run] would have ' if self.dry_run else ''}{self.action} {self.obj.get('kind', '')} " \
               f"{self.namespace}/{self.name}"
        return f"{text}: {self.detail}" if self.detail else text


@dataclass
class Round:
    """One round of one agent. Its dice depend only on (seed, round number, scope)."""

    client: Client
    settings: Settings
    agent: str
    label: str  # the agent's value of the blackadder.io/agent label
    number: int
    seed: int
    now: datetime
    dry_run: bool = False
    limit: asyncio.Semaphore = field(default_factory=lambda: asyncio.Semaphore(8))

    def dice(self, *scope: str) -> random.Random:
        return schedule.dice(self.seed, self.number, *scope)

    @property
    def timestamp(self) -> str:
        return schedule.rfc3339(self.now)

    async def each(self, items: Iterable[T], work: Callable[[T], Awaitable[R | None]]) -> list[R]:
        """Runs ``work`` on every item concurrently, at most ``max-concurrent-actions`` at a time;
        one failure is logged and skipped, never aborts the round."""
        async def bounded(item: T) -> R | None:
            async with self.limit:
                try:
                    return await work(item)
                except Exception as exc:  # noqa: BLE001 - one object's trouble must not stop the rest
                    log.warning("agent %s round %d: %s failed: %s", self.agent, self.number,
                                getattr(work, "__name__", "action"), exc)
                    return None
        results = await asyncio.gather(*(bounded(i) for i in items))
        return [r for r in results if r is not None]


async def fresh(client: Client, resource: Resource, namespace: str, name: str) -> Obj | None:
    """The object as the API server has it now (after a 409), or None once it is gone."""
    try:
        return await client.get(resource, name, namespace)
    except NotFound:
        return None


async def retry_on_conflict(attempt: Callable[[], Awaitable[T]], tries: int = 5) -> T:
    """Optimistic concurrency: ``attempt`` re-reads the object and sends a write guarded by its
    resourceVersion; a 409 means someone wrote in between, so read and decide again."""
    for _ in range(tries - 1):
        try:
            return await attempt()
        except Conflict:
            await asyncio.sleep(0.05)
    return await attempt()


async def restore_held(client: Client, resource: Resource, label: str, wanted: Callable[[Obj], bool],
                       restore_one: Callable[[Client, Obj], Awaitable[Action | None]]) -> list[Action]:
    """Restores every object of ``resource`` that agent ``label`` holds and ``wanted`` picks, in a
    stable order (one label-selected LIST finds them all)."""
    held = (await client.list(resource, label_selector=f"{marks.AGENT}={label}"))["items"]
    out = []
    for obj in sorted(held, key=lambda o: (o["metadata"]["namespace"], o["metadata"]["name"])):
        if wanted(obj) and (action := await restore_one(client, obj)):
            out.append(action)
    return out
