"""The harness's own watch on a namespace's widgets: when did each one converge?

A widget has converged for an expectation ``name → value`` once a watch event shows
``spec.value == status.observed == value``. Latency is measured from a start time the harness
records (the moment the API server acknowledged the create or the spec change) to the moment the
harness's watch sees the converged status.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from harness.bench.apimetrics import HarnessCounter
from harness.bench.workload import GROUP, PLURAL, RESOURCE
from harness.common.listwatch import ListWatch
from kubeloop.client import Client


class Tracker:
    def __init__(self, client: Client, namespace: str, counter: HarnessCounter) -> None:
        self.client = client
        self.namespace = namespace
        self.counter = counter
        self.state: dict[str, tuple[Any, Any]] = {}  # name → (spec.value, status.observed) as last seen
        self.expected: dict[str, int] = {}
        self.started: dict[str, float] = {}
        self.converged: dict[str, float] = {}
        self.events = 0
        self._done = asyncio.Event()
        self._view = ListWatch(client, RESOURCE, self._on_event, namespace=namespace, page_size=5000,
                               count=lambda verb: counter.add(verb, GROUP, PLURAL))

    async def start(self) -> None:
        """Lists, then watches from the list's resourceVersion (so no event is missed)."""
        self._view.start()
        await self._view.wait_synced(timeout=300)

    async def stop(self) -> None:
        await self._view.stop()

    def check(self) -> None:
        """Raises what ended the harness's view early: a blind tracker would wait out every timeout."""
        self._view.check()

    def _on_event(self, etype: str, obj: dict[str, Any], t: float) -> None:
        if etype in ("ADDED", "MODIFIED"):
            self._see(obj, t)

    def _see(self, obj: dict[str, Any], now: float) -> None:
        self.events += 1
        name = obj["metadata"]["name"]
        value = (obj.get("spec") or {}).get("value")
        observed = (obj.get("status") or {}).get("observed")
        self.state[name] = (value, observed)
        self.started.setdefault(name, now)  # if the create's response comes after the watch event
        self._check(name)

    def _check(self, name: str) -> None:
        want = self.expected.get(name)
        if want is None or name in self.converged:
            return
        value, observed = self.state.get(name, (None, None))
        if value == want and observed == want:
            self.converged[name] = time.monotonic()
            if len(self.converged) >= len(self.expected):
                self._done.set()

    def expect(self, values: dict[str, int], started: float | None = None) -> None:
        """Starts a new round: each name must converge to its value. ``started`` gives every object
        the same start (the backlog scenario); otherwise ``mark_started`` sets it per object."""
        self.expected = dict(values)
        self.converged = {}
        self.started = {name: started for name in values} if started is not None else {}
        self._done = asyncio.Event()
        if not values:
            self._done.set()
        for name in values:
            self._check(name)

    def mark_started(self, name: str, when: float) -> None:
        # The watch may have seen the object (even converged) before the create returned: keep the earlier.
        if name not in self.started or when < self.started[name]:
            self.started[name] = when

    async def wait(self, timeout: float) -> bool:
        try:
            await asyncio.wait_for(self._done.wait(), timeout)
            return True
        except TimeoutError:
            return False

    def latencies(self) -> list[float]:
        return sorted(max(0.0, t - self.started[n]) for n, t in self.converged.items() if n in self.started)

    def last_converged(self) -> float | None:
        return max(self.converged.values(), default=None)
