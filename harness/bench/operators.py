"""The bundled operators as benchmark scenarios (``--operators immortal,copyrator,reloader,blackadder``).

A scenario's ``prepare`` makes its objects and returns what "done" means as one or more ``Track``s:
a resource the harness lists and watches, and the keys each state of an object completes. The first
Track is timed from the start of ``kubeloop run <name> --namespace <the scenario's namespace>`` (the
backlog pattern: the objects exist, then the operator starts); a later Track first runs its
``trigger`` (a change the operator must react to) and is timed from that change. The figures are the
last Track's; how long earlier ones took goes to ``extra``. Accounting is the same for every scenario:

- RSS and CPU of the operator's process tree, from its start to the last Track done;
- API requests over that window: the API server's counters (``apiserver_request_total``) minus the
  harness's own requests, restricted to the operator's CRD group and to the ``requests`` the scenario
  names (``"DELETE pods"``; ``"* configmaps"`` is any verb): the ReplicaSet controller, the scheduler
  and kwok work on the same pods, so only verbs that nobody else uses in the window are counted.
  WATCH requests are left out (the API server counts a watch when it ends). Events are counted from
  the events themselves (``reportingController`` is the operator's name, ``eventTime`` in the
  window): the scheduler and the controller-manager post events too. Where even the verb is shared
  (kwok and the ReplicaSet controller delete pods too), ``from_events`` derives the operator's
  requests from its events (blackadder: one DELETE per PodKilled).

Scenarios whose operator module is missing (``kubeloop/operators/<name>/__init__.py``) are skipped;
``planned`` ones are declared but not implemented.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import importlib.util
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Any

from harness.bench import apimetrics
from harness.bench.contestants import Contestant
from harness.bench.scenarios import RunResult, Session, percentiles_ms
from harness.bench.workload import LABEL, Workload, namespace_name
from harness.common.concurrency import bounded
from harness.common.listwatch import ListWatch
from harness.common.processes import kubeloop_run
from kubeloop.client import Client, Forbidden, NotFound

Obj = dict[str, Any]
Seen = tuple[float, float, Obj]  # monotonic time, wall-clock time, the object when it completed the key
IMAGE = "registry.invalid/pause:3.9"  # kwok's fake kubelets run pods without pulling anything


@dataclass(frozen=True)
class Track:
    """Done means: ``expected`` keys completed, where ``marks(obj)`` are the keys a state of an object
    of ``resource`` completes (in ``namespace``, or all namespaces / a cluster-scoped resource)."""

    name: str  # the phase ("copied", "rolled"): earlier phases are reported as extra[f"{name}_s"]
    resource: str
    expected: int
    marks: Callable[[Obj], Iterable[str]]
    namespace: str | None = None
    label_selector: str | None = None
    field_selector: str | None = None
    objects: int | None = None  # objects processed, for objects/s, CPU and writes per object (default: expected)
    trigger: Callable[[], Awaitable[float]] | None = None  # makes the change; returns when (monotonic)
    # The phase's own work intervals (blackadder: each round's length): p50/p99 are theirs and objects/s
    # is objects per second of them. Default: each key's time from the phase start; objects/s over all.
    work: Callable[[dict[str, Seen]], list[float]] | None = None
    report: Callable[[dict[str, Seen]], dict[str, Any]] | None = None  # more figures for ``extra``


def each(done: Callable[[Obj], bool]) -> Callable[[Obj], list[str]]:
    """Per-object marks: ``namespace/name`` once ``done(obj)``."""

    def marks(obj: Obj) -> list[str]:
        meta = obj["metadata"]
        return [f"{meta.get('namespace', '')}/{meta['name']}"] if done(obj) else []

    return marks


@dataclass(frozen=True)
class OperatorScenario:
    name: str
    n: int
    description: str
    prepare: Callable[[Run, int], Awaitable[list[Track]]] | None = None
    group: str = ""  # the operator's CRD group: all its requests (but WATCH) are the operator's
    requests: frozenset[str] = frozenset()  # "VERB resource[/subresource]" that are the operator's too
    # Requests known from the operator's events, where the API server's counters cannot tell its own
    # from other clients' (blackadder: one DELETE per PodKilled event; kwok and the ReplicaSet
    # controller delete the same pods).
    from_events: Callable[[dict[str, int]], dict[str, int]] | None = None
    args: tuple[str, ...] = ()  # extra flags of ``kubeloop run <name>``
    nodes: Callable[[int], int] = lambda n: 0  # kwok nodes it needs for n objects (110 pods each)
    planned: bool = False

    @property
    def available(self) -> bool:
        return (not self.planned and self.prepare is not None
                and importlib.util.find_spec(f"kubeloop.operators.{self.name}") is not None)

    def command(self, kubeconfig: str, namespace: str) -> list[str]:
        return kubeloop_run(self.name, kubeconfig, "--namespace", namespace, *self.args)


# --- the harness's side of a run ---------------------------------------------------------------------


class Run:
    """One scenario run as the harness sees it: every request it sends is counted (to be subtracted
    from the API server's counters); it remembers the namespaces it made and what teardown releases."""

    def __init__(self, client: Client, workload: Workload) -> None:
        self.client, self.counter, self.concurrency = client, workload.counter, workload.concurrency
        self.ns = ""  # the first namespace made: the operator's --namespace
        self.namespaces: list[str] = []
        self.held: list[tuple[str, str, str | None]] = []  # custom objects that may carry finalizers

    async def count(self, verb: str, ref: str, subresource: str = "") -> None:
        res = await self.client.resource(ref)
        self.counter.add(verb, res.group, res.plural, subresource)

    async def namespace(self, hint: str, labels: dict[str, str] | None = None) -> str:
        name = namespace_name(hint)
        meta = {"name": name, "labels": {LABEL: "true", **(labels or {})}}
        await self.create({"apiVersion": "v1", "kind": "Namespace", "metadata": meta})
        self.namespaces.append(name)
        self.ns = self.ns or name
        return name

    async def create(self, obj: Obj, namespace: str | None = None, resource: str | None = None) -> Obj:
        res = await (self.client.resource(resource) if resource else self.client.resource_of(obj))
        self.counter.add("POST", res.group, res.plural)
        return await self.client.create(obj, namespace, resource=res)

    async def create_all(self, objs: Iterable[Obj], namespace: str | None = None, resource: str | None = None,
                         forbidden_ok: bool = False) -> None:
        """Creates with the loader's concurrency (``forbidden_ok``: a refusal, such as an exhausted
        quota, is skipped)."""

        async def one(obj: Obj) -> None:
            try:
                await self.create(obj, namespace, resource)
            except Forbidden:
                if not forbidden_ok:
                    raise

        await bounded(objs, one, self.concurrency)

    async def items(self, ref: str, namespace: str | None = None, **kw: Any) -> list[Obj]:
        res = await self.client.resource(ref)
        items: list[Obj] = []
        async for page in self.client.list_pages(res, namespace, **kw):
            self.counter.add("LIST", res.group, res.plural)
            items += page.get("items") or []
        return items

    async def get(self, ref: str, name: str, namespace: str | None = None) -> Obj:
        await self.count("GET", ref)
        return await self.client.get(ref, name, namespace)

    async def patch(self, ref: str, name: str, body: Obj, namespace: str | None = None) -> Obj:
        await self.count("PATCH", ref)
        return await self.client.patch(ref, name, body, namespace)

    async def delete(self, ref: str, name: str, namespace: str | None = None) -> None:
        await self.count("DELETE", ref)
        await self.client.delete(ref, name, namespace)

    async def until(self, what: str, check: Callable[[], Awaitable[bool]], timeout: float = 300.0) -> None:
        deadline = time.monotonic() + timeout
        while not await check():
            if time.monotonic() > deadline:
                raise TimeoutError(f"waited {timeout:.0f}s for {what}")
            await asyncio.sleep(0.5)

    def hold(self, resource: str, name: str, namespace: str | None = None) -> None:
        """Teardown removes this object's finalizers (the operator has stopped) and deletes it."""
        self.held.append((resource, name, namespace))

    async def operator_events(self, controller: str, since: float, until: float) -> list[Obj]:
        """The events.k8s.io events ``controller`` recorded within the wall-clock window."""
        items = await self.items("events.events.k8s.io", field_selector=f"reportingController={controller}")
        return [e for e in items if since <= (_epoch(e.get("eventTime")) or 0) <= until]

    async def teardown(self) -> None:
        for resource, name, namespace in self.held:
            with contextlib.suppress(NotFound):
                await self.patch(resource, name, {"metadata": {"finalizers": None}}, namespace)
                await self.delete(resource, name, namespace)
        for namespace in self.namespaces:
            with contextlib.suppress(NotFound):
                await self.delete("namespaces", namespace)
        wanted = set(self.namespaces)

        async def gone() -> bool:  # one LIST per poll, however many namespaces
            return not wanted & {ns["metadata"]["name"] for ns in await self.items("namespaces", label_selector=LABEL)}

        # Waits, so that the namespace controller's clean-up never runs in someone else's window.
        await self.until(f"{len(wanted)} namespaces to be deleted", gone, timeout=300 + len(wanted))


class DoneWatch:
    """Lists, then watches, a Track's objects; records when each key is first completed."""

    def __init__(self, run: Run, track: Track) -> None:
        self.run, self.track = run, track
        self.seen: dict[str, Seen] = {}
        self._view: ListWatch | None = None

    @property
    def done(self) -> bool:
        return len(self.seen) >= self.track.expected

    def last(self) -> float:
        return max(t for t, _, _ in self.seen.values())

    async def start(self) -> None:
        """Returns once the Track's objects are listed (the watch goes on in the background)."""
        t, counter = self.track, self.run.counter
        res = await self.run.client.resource(t.resource)
        self._view = ListWatch(self.run.client, res, self._on_event, namespace=t.namespace,
                               label_selector=t.label_selector, field_selector=t.field_selector,
                               count=lambda verb: counter.add(verb, res.group, res.plural))
        self._view.start()
        await self._view.wait_synced(timeout=300)

    def _on_event(self, etype: str, obj: Obj, _t: float) -> None:
        if etype not in ("ADDED", "MODIFIED"):
            return
        now, wall = time.monotonic(), time.time()
        for key in self.track.marks(obj):
            self.seen.setdefault(key, (now, wall, obj))

    def check(self) -> None:
        """Raises what ended the watch early, if anything did."""
        if self._view:
            self._view.check()

    async def stop(self) -> None:
        if self._view:
            await self._view.stop()


# --- accounting (pure) ------------------------------------------------------------------------------


def attribute(before: Counter[apimetrics.Key], after: Counter[apimetrics.Key],
              harness_before: Counter[apimetrics.Key], harness_after: Counter[apimetrics.Key],
              group: str, names: frozenset[str]) -> dict[str, int]:
    """``{"DELETE pods": 512, ...}``: the window's delta minus the harness's own, for the requests that
    are the operator's (its CRD group, and ``names``); never WATCH, never events (see the module doc)."""
    out: Counter[str] = Counter()
    for key in set(after) | set(before):
        verb, grp, resource, sub = key
        name = f"{resource}/{sub}" if sub else resource
        if verb == "WATCH" or resource == "events":
            continue
        if not (group and grp == group) and f"{verb} {name}" not in names and f"* {name}" not in names:
            continue
        n = after[key] - before[key] - (harness_after[key] - harness_before[key])
        if n > 0:
            out[f"{verb} {name}"] += n
    return dict(out)


def _epoch(text: str | None) -> float | None:
    if not text:
        return None
    with contextlib.suppress(ValueError):
        return dt.datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()
    return None


def event_requests(events: list[Obj]) -> dict[str, int]:
    """The requests that recorded ``events`` (events.k8s.io/v1): a POST for each, a PATCH for each
    repeat folded into its ``series``."""
    patches = sum(max(0, int((e.get("series") or {}).get("count") or 1) - 1) for e in events)
    return {k: v for k, v in (("POST events", len(events)), ("PATCH events", patches)) if v}


def event_reasons(events: list[Obj]) -> dict[str, int]:
    """How many times each reason was recorded (series repeats included)."""
    out: Counter[str] = Counter()
    for e in events:
        out[e.get("reason") or "?"] += int((e.get("series") or {}).get("count") or 1)
    return dict(sorted(out.items()))


# --- running one scenario -----------------------------------------------------------------------------


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
    crds = crds_for(operator.custom_resources())
    if crds:
        workload.counter.add("APPLY", "apiextensions.k8s.io", "customresourcedefinitions", n=len(crds))
        await install(client, operator)


async def _wait(watch: DoneWatch, proc: Any, deadline: float) -> None:
    while not watch.done and time.monotonic() < deadline:
        proc.check_alive()
        watch.check()
        await asyncio.sleep(0.2)


async def run_operator(session: Session, scenario: OperatorScenario, repeat: int) -> RunResult:
    """Prepares the scenario, starts the operator, waits for each Track in turn; one accounting for all."""
    assert scenario.prepare is not None
    result = RunResult(scenario.name, f"op:{scenario.name}", scenario.n, repeat,
                       extra={"workload": scenario.description})
    client = session.client
    run = Run(client, session.workload)
    proc = None
    watches: list[DoneWatch] = []
    try:
        await install_crds(client, session.workload, scenario.name)
        await ensure_nodes(client, scenario.nodes(scenario.n))
        tracks = await scenario.prepare(run, scenario.n)
        proc = session._process(Contestant(scenario.name, scenario.description, scenario.command),
                                run.ns, "operator")
        timeout = max(session.settings.min_timeout, scenario.n / session.settings.min_rate * 2)
        before, h_before, wall0 = await apimetrics.scrape(client), run.counter.snapshot(), time.time()
        for i, track in enumerate(tracks):
            watch = DoneWatch(run, track)
            watches.append(watch)
            await watch.start()
            if i == 0:
                start = await proc.start()
            else:
                result.extra[f"{tracks[i - 1].name}_s"] = round(watches[-2].last() - start, 2)
                start = await track.trigger() if track.trigger else time.monotonic()
            await _wait(watch, proc, start + timeout)
            if not watch.done:
                result.extra["progress"] = f"{track.name}: {len(watch.seen)}/{track.expected}"
                break
        sample = proc.sample()
        after, h_after, wall1 = await apimetrics.scrape(client), run.counter.snapshot(), time.time()
        events = await run.operator_events(scenario.name, wall0, wall1)
        result.extra["events"] = event_reasons(events)
        requests = attribute(before, after, h_before, h_after, scenario.group, scenario.requests)
        requests.update(event_requests(events))
        requests.update(scenario.from_events(result.extra["events"]) if scenario.from_events else {})
        objects = track.objects or track.expected
        result.requests = dict(sorted(requests.items()))
        result.writes = apimetrics.writes(result.requests)
        result.writes_per_object = result.writes / objects
        result.converged_count = len(watch.seen)
        result.converged = watch.done
        if watch.done:
            result.seconds = watch.last() - start
            busy = sum(track.work(watch.seen)) if track.work else result.seconds
            result.objects_per_s = objects / busy if busy > 0 else None
        lat = sorted(track.work(watch.seen) if track.work else [t - start for t, _, _ in watch.seen.values()])
        result.p50_ms, result.p95_ms, result.p99_ms = percentiles_ms(lat)
        result.cpu_s, result.peak_rss_mib = sample.cpu_s, sample.peak_rss_mib
        result.cpu_ms_per_object = 1000 * sample.cpu_s / objects
        result.extra["objects"] = objects
        if track.report:
            result.extra.update(track.report(watch.seen))
    except Exception as exc:
        result.error = f"{type(exc).__name__}: {exc}"
    finally:
        for w in watches:
            await w.stop()
        if proc:
            await proc.stop()
            session._profiled(result, proc)
        try:
            await run.teardown()
        except Exception as exc:  # reported, not raised: the next scenario may still run
            result.error = result.error or f"teardown: {type(exc).__name__}: {exc}"
    return result


# --- immortal: 1,000 ImmortalContainers, each gets its pod --------------------------------------------

IMMORTAL = "immortalcontainers.immortalcontainer.flugel.it"


def _immortal_done(obj: Obj) -> bool:
    """Its pod exists and runs (kwok's fake kubelets run pods without containers)."""
    status = obj.get("status") or {}
    return bool(status.get("currentPod")) and status.get("phase") == "Running"


async def _immortal(run: Run, n: int) -> list[Track]:
    ns = await run.namespace("immortal-op")
    await run.create_all(
        ({"apiVersion": "immortalcontainer.flugel.it/v1alpha1", "kind": "ImmortalContainer",
          "metadata": {"name": f"ic-{i:05d}"}, "spec": {"image": IMAGE}} for i in range(n)),
        ns, resource=IMMORTAL)
    return [Track("running", IMMORTAL, n, each(_immortal_done), namespace=ns)]


# --- copyrator: 20 labelled ConfigMaps copied into 200 namespaces -------------------------------------

COPYRATOR = "copyrators.flant.com"
COPIES_PER_NAMESPACE = 20


def copyrator_layout(n: int) -> tuple[int, int]:
    """(target namespaces, sources) for about ``n`` copies: 20 sources, n/20 namespaces."""
    per = max(1, min(COPIES_PER_NAMESPACE, n))
    return max(1, round(n / per)), per


async def _copyrator(run: Run, n: int) -> list[Track]:
    from kubeloop.operators.copyrator.plan import RULE_NAMESPACE_LABEL, label_value

    count, per = copyrator_layout(n)
    source = await run.namespace("copyrator-op")
    data = {f"config-{j:02d}": {"index": str(j), "settings.conf": f"option-{j} = on\n" * 8} for j in range(per)}
    await run.create_all(
        ({"apiVersion": "v1", "kind": "ConfigMap", "data": values,
          "metadata": {"name": name, "labels": {"bench.example.com/shared": "true"}}}
         for name, values in data.items()),
        source)
    scope = {"bench.example.com/copies-from": source}
    targets: set[str] = set()

    async def target(i: int) -> None:
        targets.add(await run.namespace(f"copy-{i:03d}", scope))

    await bounded(range(count), target, run.concurrency)

    async def root_ca_published() -> bool:
        # kube-controller-manager publishes kube-root-ca.crt into every new namespace; wait for it so
        # that its ConfigMap creates are not counted as the operator's.
        found = await run.items("configmaps", field_selector="metadata.name=kube-root-ca.crt", metadata_only=True)
        return targets <= {cm["metadata"]["namespace"] for cm in found}

    await run.until("kube-root-ca.crt in every target namespace", root_ca_published)
    await run.create({
        "apiVersion": "flant.com/v1", "kind": "CopyratorRule", "metadata": {"name": "bench-shared"},
        "ruleType": "configmap", "selector": {"bench.example.com/shared": "true"}, "namespace": source,
        "namespaceSelector": {"matchLabels": scope},
    }, source, resource=COPYRATOR)
    run.hold(COPYRATOR, "bench-shared", source)

    def copied(obj: Obj) -> bool:
        meta = obj["metadata"]
        return meta["namespace"] in targets and obj.get("data") == data.get(meta["name"])

    return [Track("copied", "configmaps", count * per, each(copied),
                  label_selector=f"{RULE_NAMESPACE_LABEL}={label_value(source)}")]


# --- reloader: 500 Deployments roll after their shared ConfigMap changes ------------------------------


async def _reloader(run: Run, n: int) -> list[Track]:
    from kubeloop.operators.reloader.policy import HASH, TEMPLATE_HASH

    ns = await run.namespace("reloader-op")
    await run.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "shared-config"},
                      "data": {"app.conf": "generation = 1\n"}}, ns)
    await run.create_all((_deployment(f"app-{i:05d}") for i in range(n)), ns)

    async def observed() -> bool:
        """The Deployment controller has caught up (replicas 0: no pods, just its ReplicaSets and status):
        each phase starts on a quiet control plane."""
        items = await run.items("deployments.apps", ns)
        return len(items) >= n and all((d.get("status") or {}).get("observedGeneration") == d["metadata"]["generation"]
                                       for d in items)

    await run.until("the Deployment controller to observe every Deployment", observed)

    async def change() -> float:
        await run.until("the Deployment controller to observe the recorded hashes", observed)
        await run.patch("configmaps", "shared-config", {"data": {"app.conf": "generation = 2\n"}}, ns)
        return time.monotonic()

    def recorded(d: Obj) -> bool:
        return HASH in (d["metadata"].get("annotations") or {})

    def rolled(d: Obj) -> bool:
        return TEMPLATE_HASH in (d["spec"]["template"].get("metadata", {}).get("annotations") or {})

    return [Track("first_sight", "deployments.apps", n, each(recorded), namespace=ns),
            Track("rolled", "deployments.apps", n, each(rolled), namespace=ns, trigger=change)]


def _deployment(name: str) -> Obj:
    return {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "annotations": {"reloader.stakater.com/auto": "true"}},
        "spec": {
            "replicas": 0,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {
                    "containers": [{"name": "app", "image": IMAGE,
                                    "volumeMounts": [{"name": "config", "mountPath": "/etc/app"}]}],
                    "volumes": [{"name": "config", "configMap": {"name": "shared-config"}}],
                },
            },
        },
    }


# --- blackadder: tantrum rounds over 5,000 pods -------------------------------------------------------

# The storage version, named: the agent's body is v1beta1, and the teardown releases it once the operator
# (which serves the conversion to the preferred v1beta2) has stopped.
CHAOS_AGENT = "blackadder.io/v1beta1/chaosagents"
ROUNDS = 3
EAGERNESS = 10  # percent of the running pods killed per round


def nodes_for(n: int) -> int:
    return n // 100 + 2  # 100 of kwok's 110 slots a node: room for replacements


def chaos_pause(n: int) -> int:
    """Seconds between rounds: longer than a round, so that the next one has not begun when the harness
    reads the counters after the last (at 5,000 pods a round takes 2–3 s here)."""
    return max(2, n // 500)


def rounds_of(agent: Obj) -> list[str]:
    done = min(int((agent.get("status") or {}).get("round") or 0), ROUNDS)
    return [f"round {i}" for i in range(1, done + 1)]


def round_seconds(seen: dict[str, Seen]) -> list[float]:
    """Each round's own length: from its start (``status.lastRoundTime``) to the harness seeing it recorded."""
    out = []
    for key, (_, wall, agent) in seen.items():
        status = agent.get("status") or {}
        started = _epoch(status.get("lastRoundTime"))
        if started is not None and f"round {status.get('round')}" == key:
            out.append(max(0.0, wall - started))
    return out


def chaos_report(seen: dict[str, Seen]) -> dict[str, Any]:
    last = max(seen.values(), key=lambda s: s[0], default=None)
    status = (last[2].get("status") or {}) if last else {}
    # status.counters.tantrum: the operator's own count (the PodKilled events are in extra["events"])
    return {"rounds": status.get("round"), "status_tantrum": (status.get("counters") or {}).get("tantrum"),
            "round_s": [round(s, 2) for s in round_seconds(seen)]}


async def _blackadder(run: Run, n: int) -> list[Track]:
    ns = await run.namespace("blackadder-op")

    async def exists(ref: str, name: str, ready: Callable[[Obj], bool] = lambda o: True) -> bool:
        try:
            return ready(await run.get(ref, name, ns))
        except NotFound:
            return False

    await run.until("the default ServiceAccount", lambda: exists("serviceaccounts", "default"))
    # One ReplicaSet owns the pods, so killed ones come back. Its controller creates 20 pods/s (the
    # controller-manager's client rate limit), 4 minutes for 5,000: the harness creates them itself,
    # bound to kwok nodes, under a quota of exactly n pods so that the controller cannot add a surplus
    # (which it would then delete); the quota goes before the operator starts.
    await run.create({"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "bench-pods"},
                      "spec": {"hard": {"pods": str(n)}}}, ns)
    await run.until("the quota to be in force", lambda: exists(
        "resourcequotas", "bench-pods", lambda q: bool((q.get("status") or {}).get("hard"))))
    rs = await run.create(_replicaset("victims", n), ns)
    nodes = nodes_for(n)
    await run.create_all((_pod(rs, i, f"kwok-node-{i % nodes}") for i in range(n)), ns, forbidden_ok=True)
    await run.delete("resourcequotas", "bench-pods", ns)

    async def running() -> bool:
        pods = await run.items("pods", ns, field_selector="status.phase=Running", metadata_only=True)
        return len(pods) >= n

    await run.until(f"{n} running pods", running, timeout=max(120, n / 20))
    await run.create({"apiVersion": "blackadder.io/v1beta1", "kind": "ChaosAgent", "metadata": {"name": ns},
                      "spec": {"tantrumMode": True, "eagerness": EAGERNESS, "pauseDuration": chaos_pause(n),
                               "onePerOwner": False, "minPodAgeSeconds": 0, "gracePeriodSeconds": 0,
                               "seed": 1,
                               "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": ns}}}},
                     resource=CHAOS_AGENT)
    run.hold(CHAOS_AGENT, ns)
    return [Track("rounds", CHAOS_AGENT, ROUNDS, rounds_of, field_selector=f"metadata.name={ns}",
                  objects=n * ROUNDS, work=round_seconds, report=chaos_report)]


def _pod_template(name: str) -> Obj:
    return {"metadata": {"labels": {"app": name}},
            "spec": {"terminationGracePeriodSeconds": 0, "containers": [{"name": "app", "image": IMAGE}]}}


def _replicaset(name: str, replicas: int) -> Obj:
    return {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": name},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                     "template": _pod_template(name)}}


def _pod(rs: Obj, i: int, node: str) -> Obj:
    name = rs["metadata"]["name"]
    template = _pod_template(name)
    owner = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": name, "uid": rs["metadata"]["uid"],
             "controller": True}
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {**template["metadata"], "name": f"{name}-{i:05d}", "ownerReferences": [owner]},
            "spec": {**template["spec"], "nodeName": node}}


# --- the catalogue ------------------------------------------------------------------------------------

SCENARIOS: dict[str, OperatorScenario] = {s.name: s for s in [
    OperatorScenario(
        "immortal", 1000,
        "ImmortalContainers (default 1,000): time from the operator's start until each has its pod running "
        "(status.phase Running)",
        prepare=_immortal, group="immortalcontainer.flugel.it",
        # The operator creates (and deletes) the pods; the scheduler binds them and kwok writes their status.
        requests=frozenset({"POST pods", "DELETE pods", "LIST pods", "GET pods"}),
        nodes=nodes_for),
    OperatorScenario(
        "copyrator", 4000,
        "one CopyratorRule copies 20 labelled ConfigMaps into objects / 20 namespaces (default 200, 4,000 "
        "copies): time from the operator's start until every copy exists with its source's data. It reads "
        "rules from the source namespace and watches namespaces and ConfigMaps everywhere",
        prepare=_copyrator, group="flant.com",
        requests=frozenset({"* configmaps", "* secrets", "* namespaces"})),
    OperatorScenario(
        "reloader", 500,
        "Deployments (default 500, replicas 0) mount one ConfigMap: the operator records its first-sight "
        "hash on each (first sight s, from its start), then the ConfigMap changes: time from the change "
        "until every pod template is rolled. Run with `--max-reloads-per-second 0` (at the default 2/s, "
        "500 rollouts take 4 minutes by design); the default 2 s debounce is in the figures. Requests and "
        "CPU: both phases",
        prepare=_reloader,
        requests=frozenset({"PATCH deployments", "GET deployments", "LIST deployments", "LIST statefulsets",
                            "LIST daemonsets", "LIST configmaps", "GET configmaps", "LIST secrets",
                            "GET secrets"}),
        args=("--max-reloads-per-second", "0")),
    OperatorScenario(
        "blackadder", 5000,
        f"a ChaosAgent (tantrumMode, eagerness {EAGERNESS}%, onePerOwner off, pause objects / 500 s, at "
        f"least 2) plays {ROUNDS} rounds over the running pods (default 5,000) of one ReplicaSet, which "
        "brings the killed ones back meanwhile. Done after: from the operator's start until the last round "
        "is recorded, pauses included; p50/p99: the rounds' own lengths (round start to its status "
        "written); objects/s: pods × rounds per second of rounds",
        prepare=_blackadder, group="blackadder.io",
        requests=frozenset({"LIST pods", "POST pods/eviction", "LIST namespaces", "LIST deployments",
                            "LIST configmaps", "LIST horizontalpodautoscalers"}),
        from_events=lambda reasons: {"DELETE pods": reasons["PodKilled"]} if reasons.get("PodKilled") else {},
        nodes=nodes_for),
]}


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


__all__ = ["SCENARIOS", "OperatorScenario", "Track", "run_operator", "selected"]
