"""The bundled operators as benchmark scenarios (``--operators immortal,...``).

Each ``OperatorScenario`` says which objects to create, how to tell that one is done, and which API
requests are the operator's. The harness creates the objects, starts ``kubeloop run <name>`` as its
own process watching one namespace, and times from process start until every object is done (the
backlog pattern), with the same RSS/CPU/request accounting as the widget scenarios. Scenarios whose
operator module is missing (``kubeloop/operators/<name>/__init__.py``) are skipped; ``planned`` ones
are declared with their workload but not implemented yet.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from bench import apimetrics
from bench.contestants import free_port
from bench.scenarios import OperatorProcess, RunResult, Session, _pct
from bench.workload import Workload, bounded
from kubeloop.client import Client

Obj = dict[str, Any]


@dataclass(frozen=True)
class OperatorScenario:
    name: str
    n: int
    description: str
    resource: str = ""  # plural.group of the objects that must get done
    objects: Callable[[int], list[Obj]] | None = None
    done: Callable[[Obj], bool] | None = None
    group: str = ""  # API group whose requests are the operator's (besides ``extra_requests``)
    extra_requests: Callable[[tuple[str, str, str, str]], bool] = lambda key: False
    planned: bool = False
    nodes: int = 0  # kwok nodes it needs (110 pods each)

    @property
    def available(self) -> bool:
        return not self.planned and importlib.util.find_spec(f"kubeloop.operators.{self.name}") is not None

    def command(self, kubeconfig: str, namespace: str) -> list[str]:
        return [
            sys.executable,
            "-m",
            "kubeloop.cli.main",
            "run",
            self.name,
            "--kubeconfig",
            kubeconfig,
            "--namespace",
            namespace,
            "--metrics-bind-address",
            f"127.0.0.1:{free_port()}",
            "--health-probe-bind-address",
            f"127.0.0.1:{free_port()}",
        ]


def _immortal_objects(n: int) -> list[Obj]:
    return [
        {
            "apiVersion": "immortalcontainer.flugel.it/v1alpha1",
            "kind": "ImmortalContainer",
            "metadata": {"name": f"ic-{i:05d}"},
            "spec": {"image": "registry.invalid/pause:3.9"},
        }
        for i in range(n)
    ]


def _immortal_done(obj: Obj) -> bool:
    """Its pod exists and runs (kwok's fake kubelets run pods without containers)."""
    status = obj.get("status") or {}
    return bool(status.get("currentPod")) and status.get("phase") == "Running"


SCENARIOS: dict[str, OperatorScenario] = {
    s.name: s
    for s in [
        OperatorScenario(
            "immortal",
            1000,
            "1,000 ImmortalContainers: each gets its pod, running (status.phase Running)",
            resource="immortalcontainers.immortalcontainer.flugel.it",
            objects=_immortal_objects,
            done=_immortal_done,
            group="immortalcontainer.flugel.it",
            # The operator creates the pods; the scheduler binds them and kwok writes their status.
            extra_requests=lambda key: key[2] == "pods" and key[0] in ("POST", "DELETE") and not key[3],
            nodes=12,
        ),
        OperatorScenario(
            "copyrator", 4000, "200 namespaces × 20 ConfigMaps copied (not implemented yet)", planned=True
        ),
        OperatorScenario(
            "reloader",
            500,
            "500 Deployments restarted after a shared ConfigMap changes (not implemented yet)",
            planned=True,
        ),
        OperatorScenario("blackadder", 5000, "rounds over 5,000 pods (not implemented yet)", planned=True),
    ]
}


class DoneWatch:
    """Lists then watches ``resource`` in a namespace; records when each object first satisfies ``done``."""

    def __init__(
        self,
        client: Client,
        resource: str,
        namespace: str,
        done: Callable[[Obj], bool],
        counter: apimetrics.HarnessCounter,
        group: str,
    ) -> None:
        self.client, self.resource, self.namespace, self.done = client, resource, namespace, done
        self.counter, self.group, self.plural = counter, group, resource.split(".")[0]
        self.finished: dict[str, float] = {}
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        self.counter.add("LIST", self.group, self.plural)
        listed = await self.client.list(self.resource, self.namespace)
        for obj in listed["items"]:
            self._see(obj)
        self._task = asyncio.create_task(self._watch(listed["metadata"]["resourceVersion"]))

    async def _watch(self, rv: str) -> None:
        self.counter.add("WATCH", self.group, self.plural)
        async for event in self.client.watch(
            self.resource, self.namespace, resource_version=rv, timeout_seconds=3600
        ):
            if event.get("type") in ("ADDED", "MODIFIED"):
                self._see(event["object"])

    def _see(self, obj: Obj) -> None:
        name = obj["metadata"]["name"]
        if name not in self.finished and self.done(obj):
            self.finished[name] = time.monotonic()

    async def stop(self) -> None:
        if self._task:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task


async def ensure_nodes(client: Client, count: int) -> None:
    """At least ``count`` kwok nodes (110 pods each), named as LocalCluster names its own."""
    from kubeloop.client import Conflict
    from kubeloop.envtest.cluster import _fake_node

    for i in range(count):
        with contextlib.suppress(Conflict):
            await client.create(_fake_node(f"kwok-node-{i}"))


async def install_crds(client: Client, workload: Workload, name: str) -> None:
    from kubeloop.cli.run import load_operator
    from kubeloop.resources import crds_for
    from kubeloop.testing.operator import install_crds as install

    operator = load_operator(name)
    workload.counter.add(
        "APPLY",
        "apiextensions.k8s.io",
        "customresourcedefinitions",
        n=len(crds_for(operator.custom_resources())),
    )
    await install(client, operator)


async def run_operator(session: Session, scenario: OperatorScenario, repeat: int) -> RunResult:
    """Creates the objects, starts the operator, waits until all are done."""
    assert scenario.objects and scenario.done
    result = RunResult(scenario.name, f"op:{scenario.name}", scenario.n, repeat)
    workload, client = session.workload, session.client
    ns = await workload.new_namespace(f"{scenario.name}-op")
    group, plural = scenario.group, scenario.resource.split(".")[0]
    watch = DoneWatch(client, scenario.resource, ns, scenario.done, workload.counter, group)
    proc: OperatorProcess | None = None
    try:
        await install_crds(client, workload, scenario.name)
        if scenario.nodes:
            await ensure_nodes(client, scenario.nodes)

        async def create(obj: Obj) -> None:
            workload.counter.add("POST", group, plural)
            await client.create(obj, ns, resource=scenario.resource)

        await bounded(scenario.objects(scenario.n), create, workload.concurrency)
        await watch.start()
        log = session.settings.log_dir / f"{ns}-operator.log"
        from bench.contestants import Contestant

        contestant = Contestant(scenario.name, scenario.description, scenario.command)
        proc = OperatorProcess(contestant, session.kubeconfig, ns, log)
        before, h_before = await apimetrics.scrape(client), workload.counter.snapshot()
        t0 = await proc.start()
        deadline = t0 + max(session.settings.min_timeout, scenario.n / session.settings.min_rate * 2)
        while len(watch.finished) < scenario.n and time.monotonic() < deadline:
            proc.check_alive()
            await asyncio.sleep(0.2)
        sample = proc.sample()
        after, h_after = await apimetrics.scrape(client), workload.counter.snapshot()
        requests = {}
        for key in set(after) | set(before):
            if key[1] == group or key[2] == "events" or scenario.extra_requests(key):
                n = after[key] - before[key] - (h_after[key] - h_before[key])
                if n > 0:
                    requests[f"{key[0]} {key[2]}{'/' + key[3] if key[3] else ''}"] = n
        result.requests = dict(sorted(requests.items()))
        result.writes = apimetrics.writes(result.requests)
        result.writes_per_object = result.writes / scenario.n
        result.converged_count = len(watch.finished)
        result.converged = result.converged_count >= scenario.n
        if result.converged:
            result.seconds = max(watch.finished.values()) - t0
            result.objects_per_s = scenario.n / result.seconds
        lat = sorted(t - t0 for t in watch.finished.values())
        if lat:
            result.p50_ms, result.p95_ms, result.p99_ms = (1000 * _pct(lat, q) for q in (50, 95, 99))
        result.cpu_s, result.peak_rss_mib = sample.cpu_s, sample.peak_rss_mib
        result.cpu_ms_per_object = 1000 * sample.cpu_s / scenario.n
    except Exception as exc:
        result.error = f"{type(exc).__name__}: {exc}"
    finally:
        await watch.stop()
        if proc:
            await proc.stop()
        await workload.delete_namespace(ns)
    return result


def selected(names: list[str]) -> list[OperatorScenario]:
    if names == ["all"]:
        return [s for s in SCENARIOS.values() if s.available]
    out = []
    for name in names:
        if name not in SCENARIOS:
            raise SystemExit(f"unknown operator scenario {name!r}; known: {', '.join(SCENARIOS)}")
        if not SCENARIOS[name].available:
            raise SystemExit(f"operator scenario {name!r} is not available ({SCENARIOS[name].description})")
        out.append(SCENARIOS[name])
    return out


__all__ = ["SCENARIOS", "OperatorScenario", "run_operator", "selected"]
