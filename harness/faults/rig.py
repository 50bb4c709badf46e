"""The synthetic-operator rig: namespaces, the Widget operator as a process (optionally behind the
fault proxy), the harness's observer, a seeded storm of creates/updates/deletes, and the final tally."""

from __future__ import annotations

import asyncio
import contextlib
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from harness.common import prometheus
from harness.common.concurrency import bounded
from harness.common.stats import percentile
from harness.faults.env import Env, OperatorProcess, OperatorSetup, now, retrying
from harness.faults.observe import WidgetObserver, key_of
from harness.faults.proxy import FaultProxy
from harness.faults.results import Row
from harness.faults.widget import Widget
from harness.faults.widget import operator as widget_operator
from kubeloop.client import AlreadyExists, ApiError, Client, NotFound

WIDGET = Widget.resource()


@dataclass
class Size:
    """How big a scenario is; the defaults keep a full run to minutes on 2 shared cores."""

    n: int = 200  # widgets per scenario
    kills: int = 10  # SIGKILL points (the full run: 100)
    seed: int = 1
    namespaces: int = 2
    timeout: float = 180.0  # convergence deadline after each fault
    storm_seconds: float = 12.0
    bundled_n: int = 30  # objects of the bundled-operator scenarios


def widget_body(name: str, namespace: str, value: int, payload: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"value": value}
    if payload:
        spec["payload"] = payload
    return {"apiVersion": WIDGET.api_version, "kind": "Widget",
            "metadata": {"name": name, "namespace": namespace}, "spec": spec}


class WidgetStorm:
    """Seeded writes: ``spec.value`` only ever goes up, so a value going back down anywhere means a
    stale write landed."""

    def __init__(self, env: Env, observer: WidgetObserver, namespaces: Sequence[str], n: int, seed: int,
                 concurrency: int = 16) -> None:
        self.env, self.observer, self.namespaces = env, observer, list(namespaces)
        self.rng = random.Random(seed)
        self.concurrency = concurrency
        self.keys = [f"{self.namespaces[i % len(self.namespaces)]}/w-{i:04d}" for i in range(n)]
        self.values: dict[str, int] = {}
        self.deleted: set[str] = set()
        self.writes = 0

    @property
    def live(self) -> list[str]:
        return [k for k in self.keys if k not in self.deleted and k in self.values]

    async def create(self, keys: Sequence[str] | None = None) -> None:
        async def one(key: str) -> None:
            ns, _, name = key.partition("/")
            self.values[key] = 1
            try:
                obj = await retrying(lambda: self.env.admin.create(widget_body(name, ns, 1)), what="create")
            except AlreadyExists:
                obj = await retrying(lambda: self.env.admin.get(WIDGET, name, ns))
            self.writes += 1
            self.observer.wrote(obj)
        await bounded(keys or self.keys, one, self.concurrency)

    async def bump(self, key: str) -> None:
        ns, _, name = key.partition("/")
        value = self.values[key] + 1
        self.values[key] = value
        try:
            obj = await retrying(lambda: self.env.admin.patch(WIDGET, name, {"spec": {"value": value}}, ns),
                                 what="update")
        except NotFound:
            return  # its namespace or CRD went away (those scenarios account for it)
        self.writes += 1
        self.observer.wrote(obj)

    async def delete(self, key: str) -> None:
        ns, _, name = key.partition("/")
        self.deleted.add(key)
        self.observer.deleting(key)
        with contextlib.suppress(NotFound):
            await retrying(lambda: self.env.admin.delete(WIDGET, name, ns), what="delete")
        self.writes += 1

    async def round(self, fraction: float = 0.3, deletes: int = 0) -> None:
        live = self.live
        chosen = self.rng.sample(live, max(1, int(len(live) * fraction))) if live else []
        doomed = set(self.rng.sample(chosen, min(deletes, len(chosen))))
        await bounded(chosen, lambda k: self.delete(k) if k in doomed else self.bump(k), self.concurrency)

    async def run(self, seconds: float, fraction: float = 0.15, deletes_per_round: int = 0,
                  pause: float = 0.3) -> int:
        """Rounds of updates until ``seconds`` pass; returns the number of rounds."""
        end, rounds = now() + seconds, 0
        while now() < end:
            await self.round(fraction, deletes_per_round)
            rounds += 1
            await asyncio.sleep(pause)
        return rounds


@dataclass
class WidgetRig:
    env: Env
    size: Size
    scenario: str
    fault: str
    replicas: int = 1
    through_proxy: bool = False
    operator_args: Sequence[str] = ()
    namespaces: list[str] = field(default_factory=list)
    procs: list[OperatorProcess] = field(default_factory=list)
    proxies: list[FaultProxy] = field(default_factory=list)
    setup: OperatorSetup | None = None
    observer: WidgetObserver | None = None
    storm: WidgetStorm | None = None
    started: float = 0.0

    async def __aenter__(self) -> WidgetRig:
        try:
            return await self._enter()
        except BaseException:
            await self.__aexit__()  # no operator process or namespace left behind
            raise

    async def _enter(self) -> WidgetRig:
        self.started = now()
        env = self.env
        op_ns = await env.namespace(env.name(f"fo-{self.scenario}"))
        self.namespaces = [await env.namespace(env.name(f"fw-{self.scenario}-{i}"))
                           for i in range(self.size.namespaces)]
        self.setup = await env.install(widget_operator, op_ns, rbac_name=f"faults-widget-{self.scenario}")
        self.observer = WidgetObserver(env.admin)
        await self.observer.start()
        args = ["--namespace", ",".join(self.namespaces), *self.operator_args]
        if self.replicas > 1:
            args += ["--leader-elect", "--leader-election-id", f"widget-{self.scenario}"]
        for i in range(self.replicas):
            server = None
            if self.through_proxy:
                proxy = FaultProxy(env.server_port)
                await proxy.start()
                self.proxies.append(proxy)
                server = f"https://127.0.0.1:{proxy.port}"
            tag = f"{self.scenario}-widget-{chr(ord('a') + i)}"
            self.procs.append(env.process(self.setup, "harness.faults.widget", tag, args=args, server=server))
        for proc in self.procs:
            await proc.start()
        await asyncio.gather(*(p.wait_ready() for p in self.procs))
        self.storm = WidgetStorm(env, self.observer, self.namespaces, self.size.n, self.size.seed)
        return self

    async def __aexit__(self, *exc: object) -> None:
        # Widgets carry a finalizer: delete them while an operator still runs to release it, so that
        # nothing is left Terminating; strip what remains after a bounded wait.
        await release_finalizers(self.env, self.namespaces, WIDGET, wait=any(p.running for p in self.procs))
        for proc in self.procs:
            with contextlib.suppress(Exception):
                await proc.stop()
        await release_finalizers(self.env, self.namespaces, WIDGET, wait=False)
        for proxy in self.proxies:
            await proxy.stop()
        if self.observer:
            await self.observer.stop()
        await self.env.delete_namespaces(self.namespaces)
        if self.setup:
            await self.env.remove_setup(self.setup)

    @property
    def proc(self) -> OperatorProcess:
        return self.procs[0]

    async def restart_apiserver(self) -> tuple[float, float]:
        """Restarts kube-apiserver, then waits until it admits what the operator writes: its ConfigMaps'
        blocking owner reference to a Widget. /readyz turns 200 before that: the
        OwnerReferencesPermissionEnforcement plugin maps kinds through a discovery RESTMapper that
        k8s.io/apiserver (pkg/server/options/admission.go) resets only every 30 s, so a restarted server
        refuses such writes for a CRD owner ("cannot find RESTMapping") for up to 30 s after it is ready.
        The fault ends when the server serves the operator again. Returns (seconds down, seconds from
        ready until it admits)."""
        assert self.setup is not None
        t0 = now()
        await asyncio.to_thread(self.env.cluster.restart_apiserver)
        ready = now()
        await self._wait_owner_reference_admitted()
        return ready - t0, now() - ready

    async def _wait_owner_reference_admitted(self, timeout: float = 60.0) -> None:
        assert self.setup is not None
        ns = self.namespaces[0]
        probe = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {
            "name": "admission-probe", "namespace": ns,
            "ownerReferences": [{"apiVersion": WIDGET.api_version, "kind": "Widget", "name": "probe",
                                 "uid": "00000000-0000-0000-0000-000000000000", "controller": True,
                                 "blockOwnerDeletion": True}]}}
        deadline = now() + timeout
        async with await Client.from_kubeconfig(str(self.setup.kubeconfig), qps=0) as operator:
            while True:
                try:
                    await retrying(lambda: operator.create(probe, dry_run=True), what="admission probe")
                    return
                except ApiError as exc:
                    if "cannot find RESTMapping" not in exc.message or now() > deadline:
                        raise
                await asyncio.sleep(0.5)

    async def finish(self, fault_end: float, row: Row | None = None) -> Row:
        """Waits for convergence (bounded), then counts from fresh LISTs."""
        assert self.observer is not None and self.storm is not None
        obs = self.observer
        row = row or Row(self.scenario, "widget", self.fault)
        await obs.wait_converged(self.size.timeout)
        bad, orphans = await obs.ground_truth(self.namespaces)
        if bad or orphans:  # the watch may lag the LIST by a moment: look once more
            await asyncio.sleep(2)
            bad, orphans = await obs.ground_truth(self.namespaces)
        lags = obs.lags(fault_end)
        done = [t for t in obs.converged_at.values() if t is not None]
        row.objects = len(obs.keys)
        row.never_converged = len(bad) + orphans
        row.duplicates = obs.duplicates() + obs.regressions
        row.converge_p99_s = _round(percentile(lags, 99))
        row.converge_max_s = _round(max(lags) if lags else None)
        # From the end of the fault, or the scenario's last write if later, until the last object converged.
        quiet = max([fault_end, *obs.last_write.values()])
        row.recovery_s = _round(max(0.0, max(done) - quiet)) if done and not bad else None
        row.restarts += sum(p.kills for p in self.procs)
        row.crashes += sum(p.crashes for p in self.procs)
        row.details.setdefault("writes", self.storm.writes)
        row.details["relists_410"] = sum(p.log_count("expired (410), relisting") for p in self.procs)
        row.details["watch_errors"] = sum(p.log_count("watch failed") for p in self.procs)
        if obs.regressions:
            row.details["stale_writes"] = obs.regressions
        if bad:
            row.details["not_converged"] = bad[:5]
        if orphans:
            row.details["orphans"] = orphans
        row.seconds = round(now() - self.started, 1)
        return row

    async def metric(self, name: str, **labels: str) -> float:
        return sum([prometheus.total(await p.metrics(), name, **labels) for p in self.procs])


async def release_finalizers(env: Env, namespaces: Sequence[str], resource: Any, wait: bool,
                             timeout: float = 60.0) -> None:
    """Deletes every ``resource`` object in ``namespaces``; with ``wait``, gives the operator ``timeout``
    seconds to finalize them, then removes whatever finalizers remain (cleanup must never strand)."""
    for ns in namespaces:
        with contextlib.suppress(Exception):
            await env.admin.delete_collection(resource, ns)
    deadline = now() + (timeout if wait else 0)
    while True:
        left = []
        for ns in namespaces:
            with contextlib.suppress(Exception):
                left += (await env.admin.list(resource, ns))["items"]
        if not left or now() >= deadline:
            break
        await asyncio.sleep(0.5)
    for obj in left:
        meta = obj["metadata"]
        if meta.get("finalizers"):
            with contextlib.suppress(Exception):
                await env.admin.patch(resource, meta["name"], {"metadata": {"finalizers": None}}, meta.get("namespace"))


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 2)


def keys_in(namespace: str, keys: Sequence[str]) -> set[str]:
    return {k for k in keys if k.startswith(namespace + "/")}


__all__ = ["Size", "WidgetRig", "WidgetStorm", "key_of", "keys_in", "widget_body"]
