"""``python -m harness.bench --noisy-neighbour``: one tenant's convergence beside another tenant's worst
admitted input, with copyrator (``--check-author``: its admission webhook is in the path) and reloader
running as ``kubeloop run`` processes under their generated RBAC, every namespace watched.

- Two tenants, each a ServiceAccount with a Role in its own namespace only, act through their own tokens.
- Tenant B (the victim) has one copy (a ConfigMap copied by its rule into namespace C) and one rollout
  (a Deployment with reloader's ``auto`` reading a ConfigMap). Measured: seconds from B's write to the
  copy holding the new data; seconds from B's ConfigMap change to the Deployment's next revision (this
  includes reloader's debounce, 2 s by default); and the client-seen latency of B's CopyratorRule creates
  (server dry run: the API server calls copyrator's mutating webhook, which writes the author record —
  counted in the answers — and nothing is stored): an upper bound of the webhook's own time.
- Tenant A (the noisy one) holds what the schemas admit at their worst: ``rules`` CopyratorRules with
  every list full and every string at its maximum (general globs), a source with 63 long labels and
  annotations and the longest consent value; ``keys`` ConfigMaps with 250-character names carrying the
  rules' selector; ``deployments`` Deployments each with the 16 reloader expressions it may use, 15 of
  them catastrophic for a backtracking engine. A's load is rewriting all of it: every ConfigMap (its
  thousands of keys in both operators' queues) and every rule, through A's token, as fast as it goes.
- Phases alternate, ``repeats`` times: *unloaded* (A's objects in place, idle) then *loaded* (A's
  rewrites running), so a noisy moment of a shared machine falls on both. A baseline before any of A's
  objects exist is measured once, first. Each measurement is bounded in time: a miss is recorded as such.
- Reported: per phase the median and worst of B's copy and rollout times and the webhook p50/p99 as B's
  client saw them; the bucket holding the webhook's p99 as the API server timed its calls
  (``apiserver_admission_webhook_admission_duration_seconds``) and as copyrator did
  (``controller_runtime_webhook_latency_seconds``), and as the API server timed a control webhook called
  for the same writes (a no-op in a process of its own, ``harness/bench/control_webhook.py``: what a
  webhook with no operator beside it gets from this API server on this machine); beside each of B's
  copies, the same write copied by a control copier in a process of its own (``control_copier.py``:
  what any copier gets from this API server on this machine) and seen by a watch of B's namespace; the ratio
  loaded/unloaded (medians); the operators' event-loop lag (``kubeloop_event_loop_lag_seconds``); the
  load average. The goals are checked and
  printed (never asserted by a test): B's convergence within 2× its unloaded value, the webhook's p99
  within 100 ms during A's load as the API server timed it, no write refused.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import secrets
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from harness.common.cluster import cluster_for
from harness.common.prometheus import parse
from harness.common.provenance import save_json
from harness.common.stats import percentile
from harness.faults.env import Env, OperatorProcess
from kubeloop.client import ApiError, Client, Forbidden, NotFound
from kubeloop.client.wait import wait_for

RESULTS = Path(__file__).resolve().parent / "results" / "noisy-neighbour.json"
GOAL_RATIO = 2.0
CONTROL_COPY = "b-conf-control"  # the control copier's copy of B's source, in namespace C
GOAL_WEBHOOK_P99_MS = 100.0
RULES = "copyrators.flant.com"
DEPLOYMENTS = "deployments.apps"
CONSENT = "copyrator.flant.com/allow-copy"
AUTHOR = "copyrator.flant.com/author"  # written by copyrator's mutating webhook with --check-author
REVISION = "deployment.kubernetes.io/revision"
WEBHOOK = "mutate.copyrators.flant.com"  # the author guard's entry in copyrator's mutating configuration
# The control: a no-op webhook in a process of its own (harness/bench/control_webhook.py) for the same
# writes, timed by the same API server in the same run.
CONTROL = "control.noisy.kubeloop.dev"
# Accepted by RE2 and linear there; 16-32 ms per 250-character name in a backtracking engine.
EVIL = ".*?.*?(?:a|aa)(?:a|aa)(?:a|aa)(?:a|aa)q0b"
TENANT_RULES = [
    {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["*"]},
    {"apiGroups": ["apps"], "resources": ["deployments"], "verbs": ["*"]},
    {"apiGroups": ["flant.com"], "resources": ["copyrators"], "verbs": ["*"]},
]
Obj = dict[str, Any]


@dataclass
class NoisyOptions:
    repeats: int = 3
    keys: int = 2000  # A's ConfigMaps (250-character names)
    rules: int = 10  # A's worst admitted CopyratorRules
    deployments: int = 3  # A's Deployments with the worst admitted reloader expressions
    samples: int = 3  # B's copy and rollout measurements per phase
    creates: int = 40  # B's CopyratorRule creates per phase (webhook latency)
    create_rate: float = 10.0  # of those, per second, open loop
    # A's writes per second during the loaded phases, open loop; 0 = as fast as they are answered (on a
    # 2-core machine that saturates the API server itself, which then slows every client alike)
    a_rate: float = 0.0
    timeout: float = 120.0  # one convergence at most; beyond it a miss
    kubeconfig: str | None = None
    cluster_name: str = "bench"
    keep_cluster: bool = False
    log_dir: Path | None = None
    results: Path | None = RESULTS
    log: Callable[[str], None] = field(default=lambda m: print(m, file=sys.stderr, flush=True))


def add_flags(p: argparse.ArgumentParser) -> None:
    """The flags of this scenario, on ``python -m harness.bench``."""
    p.add_argument("--noisy-neighbour", action="store_true",
                   help="run only the noisy-neighbour scenario (copyrator --check-author and reloader, two "
                        "tenants); results in harness/bench/results/noisy-neighbour.json")
    p.add_argument("--noisy-keys", type=int, default=2000, help="tenant A's ConfigMaps (default 2000)")
    p.add_argument("--noisy-rules", type=int, default=10, help="tenant A's worst CopyratorRules (default 10)")
    p.add_argument("--noisy-rate", type=float, default=0.0,
                   help="tenant A's writes per second while loaded (default 0: as fast as they are answered)")


# --- tenants ------------------------------------------------------------------------------------------


@contextlib.asynccontextmanager
async def tenant(cluster: Any, admin: Client, ns: str):  # type: ignore[no-untyped-def]
    """A client authenticated as ServiceAccount ``ns/tenant`` with a Role in ``ns`` only."""
    role = {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "tenant"}
    for body in ({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "tenant", "namespace": ns}},
                 {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
                  "metadata": {"name": "tenant", "namespace": ns}, "rules": TENANT_RULES},
                 {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
                  "metadata": {"name": "tenant", "namespace": ns}, "roleRef": role,
                  "subjects": [{"kind": "ServiceAccount", "name": "tenant", "namespace": ns}]}):
        await admin.apply(body, field_manager="bench-noisy", force=True)
    with tempfile.TemporaryDirectory() as tmp:
        path = await asyncio.to_thread(cluster.service_account_kubeconfig, ns, "tenant", Path(tmp) / "kc", 6 * 3600)
        client = await Client.from_kubeconfig(str(path), qps=0)
    try:
        for _ in range(50):  # the RoleBinding reaches the authorizer within moments
            with contextlib.suppress(Forbidden):
                await client.list("configmaps", ns)
                break
            await asyncio.sleep(0.2)
        yield client
    finally:
        await client.close()


async def grant_copies(admin: Client, ns: str, tenant_ns: str) -> None:
    """With --check-author a copy goes only where the rule's author may write: B may write in C."""
    await admin.apply({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
                       "metadata": {"name": "tenant-copies", "namespace": ns},
                       "rules": [{"apiGroups": [""], "resources": ["configmaps"],
                                  "verbs": ["get", "create", "update"]}]}, field_manager="bench-noisy", force=True)
    await admin.apply({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
                       "metadata": {"name": "tenant-copies", "namespace": ns},
                       "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "tenant-copies"},
                       "subjects": [{"kind": "ServiceAccount", "name": "tenant", "namespace": tenant_ns}]},
                      field_manager="bench-noisy", force=True)


def configmap(name: str, ns: str, data: dict[str, str], labels: dict[str, str] | None = None,
              annotations: dict[str, str] | None = None) -> Obj:
    return {"apiVersion": "v1", "kind": "ConfigMap", "data": data,
            "metadata": {"name": name, "namespace": ns, "labels": labels or {}, "annotations": annotations or {}}}


def deployment(name: str, ns: str, annotations: dict[str, str], volume: str | None = None) -> Obj:
    container: Obj = {"name": "app", "image": "nginx:1.27"}
    spec: Obj = {"containers": [container]}
    if volume:
        spec["volumes"] = [{"name": "conf", "configMap": {"name": volume}}]
        container["volumeMounts"] = [{"name": "conf", "mountPath": "/conf"}]
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name, "namespace": ns, "annotations": annotations},
            "spec": {"replicas": 1, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}}, "spec": spec}}}


def b_rule(name: str, ns: str, selector: dict[str, str], target: str) -> Obj:
    return {"apiVersion": "flant.com/v1", "kind": "CopyratorRule", "metadata": {"name": name, "namespace": ns},
            "ruleType": "configmap", "selector": selector, "namespace": ns,
            "namespaceSelector": {"matchExpressions": [
                {"key": "kubernetes.io/metadata.name", "operator": "In", "values": [target]}]}}


def revision(d: Obj) -> int:
    return int((d["metadata"].get("annotations") or {}).get(REVISION, 0))


# --- the victim's measurements ------------------------------------------------------------------------


@dataclass
class World:
    env: Env
    a: Client
    b: Client
    ns_a: str
    ns_b: str
    ns_c: str
    token: str
    options: NoisyOptions
    counter: int = 0
    revision: int = 1
    operators: dict[str, OperatorProcess] = field(default_factory=dict)
    homes: list[str] = field(default_factory=list)  # the operators' namespaces
    crds: list[str] = field(default_factory=list)  # CRDs this run installed
    cluster_objects: list[Obj] = field(default_factory=list)  # cluster-scoped objects this run applied
    control: asyncio.subprocess.Process | None = None  # the control webhook's process
    copier: asyncio.subprocess.Process | None = None  # the control copier's process

    def next(self) -> str:
        self.counter += 1
        return str(self.counter)


async def copy_seconds(w: World) -> tuple[float | None, float | None, float | None]:
    """B's source changed: seconds until (its copy in C has the new data, a watch of B's own namespace saw
    the change, the control copier's copy in C has it); None: not within the timeout. The second is what
    the API server itself takes to hand B's write to any watcher, before copyrator can do anything; the
    third what the same copy costs a copier with nothing else to do (``control_copier.py``)."""
    value = w.next()
    started = time.monotonic()

    async def until(namespace: str, name: str = "b-conf") -> float | None:
        try:
            await wait_for(w.env.admin, "configmaps", name, namespace, lambda o: o.get("data") == {"k": value},
                           timeout=w.options.timeout)
        except (TimeoutError, AssertionError):
            return None
        return time.monotonic() - started

    watches = [asyncio.create_task(until(w.ns_c)), asyncio.create_task(until(w.ns_b)),
               asyncio.create_task(until(w.ns_c, CONTROL_COPY))]
    try:
        await asyncio.sleep(0)  # the watches under way before the write
        await w.b.patch("configmaps", "b-conf", {"data": {"k": value}}, w.ns_b)
        copied, delivered, control = [await t for t in watches]
        return copied, delivered, control
    finally:  # a failed write leaves no watch behind
        for task in watches:
            task.cancel()


async def rollout_seconds(w: World) -> float | None:
    """B's ConfigMap changed; seconds until B's Deployment has its next revision."""
    want = w.revision + 1
    started = time.monotonic()
    await w.b.patch("configmaps", "b-app", {"data": {"k": w.next()}}, w.ns_b)
    try:
        await wait_for(w.env.admin, DEPLOYMENTS, "victim", w.ns_b, lambda d: revision(d) >= want,
                       timeout=w.options.timeout)
    except (TimeoutError, AssertionError):
        return None
    w.revision = revision(await w.env.admin.get(DEPLOYMENTS, "victim", w.ns_b))
    return time.monotonic() - started


async def webhook_ms(w: World) -> tuple[list[float], int, int, list[str]]:
    """B's CopyratorRule creates (server dry run), open loop at ``create_rate``: (latencies ms, errors,
    answers carrying the author record the webhook writes, the first failures)."""
    o = w.options
    loop = asyncio.get_running_loop()
    start = loop.time()
    out: list[float] = []
    errors = 0
    recorded = 0
    reasons: list[str] = []  # the first few failures, as the client saw them

    async def one(i: int) -> None:
        nonlocal errors, recorded
        await asyncio.sleep(max(0.0, start + i / o.create_rate - loop.time()))
        t = time.perf_counter()
        try:
            got = await w.b.create(b_rule(f"probe-{w.next()}", w.ns_b, {"b-probe": "x"}, w.ns_c), w.ns_b,
                                   dry_run=True)
            out.append((time.perf_counter() - t) * 1000)
            recorded += AUTHOR in (got["metadata"].get("annotations") or {})
        except (TimeoutError, ApiError, OSError) as exc:
            errors += 1
            if len(reasons) < 3:
                reasons.append(f"{type(exc).__name__}: {exc}"[:300])

    async with asyncio.timeout(o.creates / o.create_rate * 3 + 30):
        await asyncio.gather(*(one(i) for i in range(o.creates)))
    return out, errors, recorded, reasons


async def measure(w: World, phase: str, repeat: int) -> Obj:
    """One phase: the webhook's creates alongside, B's copies and rollouts one after another."""
    lag_before, hook_before = await lag_buckets(w), await webhook_buckets(w)
    cpu_before, runs_before, started = cpu_seconds(w), await reconciles(w), time.monotonic()
    hook = asyncio.create_task(webhook_ms(w))
    copies = [await copy_seconds(w) for _ in range(w.options.samples)]
    rollouts = [await rollout_seconds(w) for _ in range(w.options.samples)]
    latencies, errors, recorded, reasons = await hook
    took = time.monotonic() - started
    cpu_after, runs_after = cpu_seconds(w), await reconciles(w)
    return {"seconds": round(took, 1),
            "cpu_share": {k: round((v - cpu_before.get(k, 0.0)) / took, 3) for k, v in cpu_after.items()},
            "reconciles_per_s": {k: round((v - runs_before.get(k, 0.0)) / took, 1) for k, v in runs_after.items()},
            "phase": phase, "repeat": repeat, "copy_s": [_r(c) for c, _, _ in copies],
            "delivered_s": [_r(d) for _, d, _ in copies], "control_copy_s": [_r(x) for _, _, x in copies],
            "rollout_s": [_r(s) for s in rollouts], "webhook_ms": [round(x, 2) for x in latencies],
            "webhook_errors": errors, "webhook_recorded": recorded, "webhook_failures": reasons,
            "load1": round(os.getloadavg()[0], 2),
            "loop_lag": lag_between(lag_before, await lag_buckets(w)),
            "webhook_timed": {who: quantile_between(hook_before.get(who, {}), buckets, 0.99)
                              for who, buckets in (await webhook_buckets(w)).items()}}


def _r(value: float | None) -> float | None:
    return None if value is None else round(value, 3)


# --- the noisy tenant ---------------------------------------------------------------------------------


def long_names(count: int) -> list[str]:
    return [f"{'a' * 244}{i:06d}" for i in range(count)]


async def bounded_each(items: list[Any], call: Callable[[Any], Awaitable[Any]], limit: int = 8) -> None:
    gate = asyncio.Semaphore(limit)

    async def one(item: Any) -> None:
        async with gate:
            with contextlib.suppress(ApiError):
                await call(item)

    await asyncio.gather(*(one(i) for i in items))


async def place_a(w: World) -> list[Obj]:
    """A's worst admitted objects, through A's token; returns A's rules (rewritten during the load)."""
    from tests.copyrator_worst import worst_consent, worst_rule

    label = {"worst": w.token}
    prefix = ".".join(["k" * 60] * 3) + ".example.com"
    labels = {f"{prefix}/l{i}": "v" for i in range(63)} | label
    notes = {f"{prefix}/a{i}": "v" for i in range(63)}
    await w.a.create(configmap("s", w.ns_a, {"k": "0"}, labels,
                               {**notes, CONSENT: worst_consent([w.ns_a, w.ns_c])}))
    await bounded_each(long_names(w.options.keys),
                       lambda n: w.a.create(configmap(n, w.ns_a, {"k": "0"}, label)))
    rules = [worst_rule(f"worst-{i}", w.ns_a, label, match_labels=False) for i in range(w.options.rules)]
    for body in rules:
        await w.a.create(body)
    expressions = ",".join([EVIL, *(f"{EVIL[:-3]}q{i}b" for i in range(1, 15)), "a+000001"])
    for d in range(w.options.deployments):
        await w.a.create(deployment(f"mine-{d}", w.ns_a, {"configmap.reloader.stakater.com/reload": expressions}))
    return rules


async def settled(w: World, rules: list[Obj]) -> None:
    """Until both operators have served A's objects once (every rule's status current, every Deployment's
    hash recorded): the unloaded phases measure a neighbour at rest, not one being read for the first time."""
    admin, ns = w.env.admin, w.ns_a
    for body in rules:
        await wait_for(admin, RULES, body["metadata"]["name"], ns, timeout=600, description="A's rule served",
                       predicate=lambda o: (o.get("status") or {}).get("observedGeneration")
                       == o["metadata"]["generation"])
    for d in range(w.options.deployments):
        await wait_for(admin, DEPLOYMENTS, f"mine-{d}", ns, timeout=600, description="A's Deployment recorded",
                       predicate=lambda o: "reloader.kubeloop.dev/hash" in (o["metadata"].get("annotations") or {}))


async def churn(w: World, rules: list[Obj], stop: asyncio.Event) -> int:
    """A rewrites every one of its ConfigMaps and rules, round after round, until ``stop``, at
    ``options.a_rate`` writes per second (0: as fast as they are answered); returns writes."""
    names = ["s", *long_names(w.options.keys)]
    loop = asyncio.get_running_loop()
    start, due, writes = loop.time(), 0, 0

    async def write(send: Callable[[], Awaitable[Any]]) -> None:
        nonlocal due, writes
        if w.options.a_rate:  # open loop: the n-th write leaves at start + n / rate, answered or not
            due += 1
            await asyncio.sleep(max(0.0, start + (due - 1) / w.options.a_rate - loop.time()))
        if not stop.is_set():
            writes += 1
            await send()

    async def rule(body: Obj, round_: int) -> None:
        with contextlib.suppress(ApiError):  # a new generation: every rule re-evaluated at its worst
            await w.a.patch(RULES, body["metadata"]["name"],
                            {"metadata": {"labels": {"round": str(round_)}},
                             "targetName": body["targetName"][:-6 - (round_ % 2)] + "{name}"}, w.ns_a)

    round_ = 0
    while not stop.is_set():
        round_ += 1
        value = f"r{round_}-{secrets.token_hex(2)}"
        for body in rules:
            await write(lambda body=body, round_=round_: rule(body, round_))  # type: ignore[misc]
        await bounded_each(names, lambda name, value=value: write(  # type: ignore[misc]
            lambda: w.a.patch("configmaps", name, {"data": {"k": value}}, w.ns_a)))
    return writes


# --- the operators ------------------------------------------------------------------------------------


async def install(w: World, op: Any, home: str) -> Path:
    """CRDs, the generated RBAC (cluster and own-namespace rules: the author key Secret) and, for an
    operator with webhooks, its configurations (the generated RBAC may only patch them by name, as when
    they come with its manifests); returns a kubeconfig with its ServiceAccount's token."""
    from kubeloop.resources import render_rbac
    from kubeloop.testing.operator import install_crds
    from kubeloop.webhooks.runtime import WebhookOptions, webhook_manifests

    admin = w.env.admin
    w.crds += await w.env.missing_crds(op)
    await install_crds(admin, op)
    name = f"noisy-{op.name}"
    rbac = render_rbac(name, home, op.permissions(), op.namespaced_permissions(), events="cluster",
                       leader_election=True)
    configurations = [o for o in webhook_manifests(op.name, op.hooks, WebhookOptions(namespace=home))
                      if o["kind"].endswith("WebhookConfiguration")]
    for obj in [*rbac, *configurations]:
        if "namespace" not in obj["metadata"]:  # cluster-scoped: removed afterwards if this run made it
            try:
                await admin.get(await admin.resource_of(obj), obj["metadata"]["name"])
            except NotFound:
                w.cluster_objects.append(obj)
        await admin.apply(obj, field_manager="bench-noisy", force=True)
    path = w.env.log_dir / f"{name}.kubeconfig"
    await asyncio.to_thread(w.env.cluster.service_account_kubeconfig, home, name, path, 6 * 3600)
    return path


async def start_operators(w: World) -> None:
    from kubeloop.operators.copyrator import build_operator as copyrator
    from kubeloop.operators.copyrator.settings import CopyratorSettings
    from kubeloop.operators.reloader import build_operator as reloader

    env = w.env
    for name, op, args in (
        ("copyrator", copyrator(), ("--check-author=true", "--webhook-port", "0", "--webhook-namespace", "{home}")),
        # B's Deployment rolls every few seconds here by design: reloader's loop guard (5 rollouts each
        # followed by a change within 60 s) would rightly stop it, so it is off.
        ("reloader", reloader(), ("--loop-rollouts", "0")),
    ):
        home = await env.namespace(env.name(f"noisy-{name}"))
        w.homes.append(home)
        if name == "copyrator":  # its RBAC and webhooks with the author guard on
            op.settings = CopyratorSettings(operator_namespace=home, check_author=True)
        args = tuple(a.format(home=home) for a in args)
        kubeconfig = await install(w, op, home)
        proc = OperatorProcess(name, kubeconfig, env.log_dir / f"noisy-{name}.log", f"noisy-{name}",
                               ["--leader-election-namespace", home, *args], {"POD_NAMESPACE": home})
        w.operators[name] = proc
        await proc.start()
        await proc.wait_ready()


async def start_control(w: World) -> None:
    """The control webhook: its process, then a validating configuration (``Ignore``: it never refuses)
    for the CopyratorRule writes copyrator's webhook sees; waits until the API server calls it."""
    from harness.bench.control_webhook import PATH
    from kubeloop.webhooks import Endpoint, Rule, WebhookSpec, validating_configuration

    w.control = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "harness.bench.control_webhook", stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE, cwd=str(Path(__file__).resolve().parents[2]))
    assert w.control.stdout is not None
    hello = orjson.loads(await asyncio.wait_for(w.control.stdout.readline(), 30))
    spec = WebhookSpec(CONTROL, PATH, (Rule(("flant.com",), ("*",), ("copyrators",), ("CREATE", "UPDATE")),),
                       failure_policy="Ignore")
    config = validating_configuration(f"bench-noisy-control-{w.token}", [spec],
                                      Endpoint(url=f"https://127.0.0.1:{hello['port']}"),
                                      operator_namespace="kube-system", ca_bundle=hello["ca_bundle"])
    w.cluster_objects.append(config)
    await w.env.admin.apply(config, field_manager="bench-noisy", force=True)
    deadline = time.monotonic() + 30
    while not (await webhook_buckets(w))["control"].get(float("inf")):
        if time.monotonic() > deadline:
            raise RuntimeError("the API server did not call the control webhook within 30 s")
        with contextlib.suppress(ApiError):
            await w.b.create(b_rule(f"b-probe-{w.next()}", w.ns_b, {"b-conf": w.token}, w.ns_c), dry_run=True)
        await asyncio.sleep(0.5)


async def start_copier(w: World) -> None:
    """The control copier (admin's kubeconfig: the control measures the path, not RBAC), once it has
    copied B's source; it runs through every phase."""
    w.copier = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "harness.bench.control_copier", str(w.env.cluster.kubeconfig), w.ns_b, "b-conf",
        w.ns_c, CONTROL_COPY, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        cwd=str(Path(__file__).resolve().parents[2]))
    assert w.copier.stdout is not None
    hello = await asyncio.wait_for(w.copier.stdout.readline(), 60)
    if not hello:
        raise RuntimeError(f"the control copier exited ({await w.copier.wait()}) before copying")


async def stop_control(w: World) -> int | None:
    """Ends the control webhook's and the control copier's processes (their standard input closed);
    returns the webhook's exit status."""
    await _stop(w.copier)
    return await _stop(w.control)


async def _stop(proc: asyncio.subprocess.Process | None) -> int | None:
    if proc is None:
        return None
    if proc.returncode is None:
        assert proc.stdin is not None
        proc.stdin.close()
        try:
            await asyncio.wait_for(proc.wait(), 10)
        except TimeoutError:
            proc.kill()
            await proc.wait()
    return proc.returncode


async def remove(w: World) -> None:
    """On a cluster the harness does not own: what it added (the rules' finalizers first: the operator
    that would remove them is stopped)."""
    admin = w.env.admin
    # The webhook configurations first: with the operator stopped, a Fail-policy webhook would refuse the
    # finalizer removals below.
    for obj in w.cluster_objects:
        with contextlib.suppress(ApiError, OSError):
            await admin.delete(await admin.resource_of(obj), obj["metadata"]["name"])
    ours = {w.ns_a, w.ns_b, w.ns_c, *w.homes}
    with contextlib.suppress(ApiError, OSError):  # in every namespace of the run: a CRD deleted with one
        for r in (await admin.list(RULES))["items"]:  # finalized rule left would stay Terminating
            if r["metadata"]["namespace"] in ours and r["metadata"].get("finalizers"):
                await admin.patch(RULES, r["metadata"]["name"], {"metadata": {"finalizers": None}},
                                  r["metadata"]["namespace"])
    await w.env.delete_namespaces([w.ns_a, w.ns_b, w.ns_c, *w.homes])
    await w.env.remove_crds(w.crds)


def _buckets(text: str, metric: str, **match: str) -> dict[float, float]:
    """A histogram's cumulative buckets (upper bound → count), summed over the labels not in ``match``
    (whose values must contain the given text)."""
    out: dict[float, float] = {}
    for sample in parse(text, metric):
        if all(v in sample.labels.get(k, "") for k, v in match.items()):
            le = float(sample.labels["le"])
            out[le] = out.get(le, 0.0) + sample.value
    return out


async def webhook_buckets(w: World) -> dict[str, dict[float, float]]:
    """copyrator's webhook calls so far: as the API server timed them (connection, TLS, the answer; its
    ``apiserver_admission_webhook_admission_duration_seconds``) and as copyrator's server did (from the
    review read to the answer)."""
    from harness.bench.apimetrics import metrics_text

    text = await metrics_text(w.env.admin)
    metric = "apiserver_admission_webhook_admission_duration_seconds_bucket"
    out = {"apiserver": _buckets(text, metric, name=WEBHOOK), "control": _buckets(text, metric, name=CONTROL)}
    if "copyrator" in w.operators:
        out["copyrator"] = _buckets(await w.operators["copyrator"].metrics(),
                                    "controller_runtime_webhook_latency_seconds_bucket")
    return out


def quantile_between(before: dict[float, float], after: dict[float, float], q: float) -> Obj:
    """Between two scrapes of a cumulative histogram: the calls, and the bucket bound within which the
    ``q`` quantile of them fell (None without calls)."""
    delta = {le: v - before.get(le, 0.0) for le, v in after.items()}
    return {**_quantile(delta, q), "buckets": {str(le): v for le, v in delta.items()}}


def _quantile(delta: dict[float, float], q: float) -> Obj:
    total = delta.get(float("inf"), 0.0)
    within = min((le for le, v in delta.items() if v >= q * total), default=None) if total else None
    return {"calls": total, f"p{round(q * 100)}_within_s": within}


def cpu_seconds(w: World) -> dict[str, float]:
    """Per operator: CPU seconds its ``kubeloop run`` process has used so far (user + system, from
    /proc; a webhook served from a child process of its own is not counted)."""
    tick = os.sysconf("SC_CLK_TCK")
    out = {}
    for name, proc in w.operators.items():
        if proc.proc is not None:
            with contextlib.suppress(OSError):
                fields = Path(f"/proc/{proc.proc.pid}/stat").read_text().rpartition(")")[2].split()
                out[name] = (int(fields[11]) + int(fields[12])) / tick  # utime, stime
    return out


async def reconciles(w: World) -> dict[str, float]:
    """Per operator: reconciles so far, every controller (``controller_runtime_reconcile_total``)."""
    return {name: sum(s.value for s in parse(await proc.metrics(), "controller_runtime_reconcile_total"))
            for name, proc in w.operators.items()}


async def lag_buckets(w: World) -> dict[str, dict[float, float]]:
    """Per operator: its event loop's lag histogram so far (upper bound → cumulative count; ``-1``: the
    stalls it warned about)."""
    out: dict[str, dict[float, float]] = {}
    for name, proc in w.operators.items():
        text = await proc.metrics()
        out[name] = {float(s.labels["le"]): s.value for s in parse(text, "kubeloop_event_loop_lag_seconds_bucket")}
        out[name][-1.0] = sum(s.value for s in parse(text, "kubeloop_event_loop_stalls_total"))
    return out


def lag_between(before: dict[str, dict[float, float]], after: dict[str, dict[float, float]]) -> Obj:
    """Per operator, between two scrapes: samples, the bucket bound every one of them was within, stalls."""
    out: Obj = {}
    for name, now_ in after.items():
        then = before.get(name, {})
        delta = {le: v - then.get(le, 0.0) for le, v in now_.items()}
        total = delta.get(float("inf"), 0.0)
        within = min((le for le, v in delta.items() if le >= 0 and v >= total), default=None) if total else None
        out[name] = {"samples": total, "within_s": within, "stalls": delta.get(-1.0, 0.0)}
    return out


# --- the run ------------------------------------------------------------------------------------------


async def scenario(w: World) -> Obj:
    o = w.options
    b = w.b
    await b.create(configmap("b-conf", w.ns_b, {"k": "0"}, {"b-conf": w.token}, {CONSENT: w.ns_c}))
    await b.create(b_rule("b-rule", w.ns_b, {"b-conf": w.token}, w.ns_c))
    await wait_for(w.env.admin, "configmaps", "b-conf", w.ns_c, timeout=o.timeout, description="B's first copy")
    await b.create(configmap("b-app", w.ns_b, {"k": "0"}))
    await b.create(deployment("victim", w.ns_b, {"reloader.stakater.com/auto": "true"}, volume="b-app"))
    await wait_for(w.env.admin, DEPLOYMENTS, "victim", w.ns_b, lambda d: revision(d) >= 1
                   and "reloader.kubeloop.dev/hash" in (d["metadata"].get("annotations") or {}),
                   timeout=o.timeout, description="reloader recorded B's Deployment")
    w.revision = revision(await w.env.admin.get(DEPLOYMENTS, "victim", w.ns_b))
    await start_copier(w)

    phases = [await measure(w, "empty", 0)]
    o.log(f"noisy: before A's objects: {_brief(phases[-1])}")
    started = time.monotonic()
    rules = await place_a(w)
    placed_s = time.monotonic() - started
    await settled(w, rules)
    settled_s = time.monotonic() - started
    o.log(f"noisy: A's objects placed in {placed_s:.1f} s, served by both operators after {settled_s:.1f} s")
    writes = 0
    for repeat in range(o.repeats):
        phases.append(await measure(w, "unloaded", repeat))
        o.log(f"noisy: unloaded #{repeat}: {_brief(phases[-1])}")
        stop = asyncio.Event()
        noise = asyncio.create_task(churn(w, rules, stop))
        try:
            phases.append(await measure(w, "loaded", repeat))
        finally:
            stop.set()
            writes += await noise
        o.log(f"noisy: loaded #{repeat}: {_brief(phases[-1])}")
    return {"phases": phases, "a_writes": writes, "a_placed_s": round(placed_s, 1),
            "a_settled_s": round(settled_s, 1)}


def _brief(p: Obj) -> str:
    ms = p["webhook_ms"]
    return (f"copy {p['copy_s']} s, rollout {p['rollout_s']} s, webhook p50/p99 {percentile(ms, 50)}/"
            f"{percentile(ms, 99)} ms, errors {p['webhook_errors']}, load {p['load1']}, CPU share "
            f"{p['cpu_share']}, reconciles/s {p['reconciles_per_s']}")


def summarise(phases: list[Obj]) -> Obj:
    """Per phase the medians, worst values and webhook percentiles; the ratios and the verdict."""
    per: dict[str, Obj] = {}
    for name in ("empty", "unloaded", "loaded"):
        mine = [p for p in phases if p["phase"] == name]
        if not mine:
            continue
        row: Obj = {"load1": [p["load1"] for p in mine]}
        for key in ("copy_s", "delivered_s", "control_copy_s", "rollout_s"):
            values = [v for p in mine for v in p.get(key, [])]
            ok = [v for v in values if v is not None]
            row[key] = {"median": _r(statistics.median(ok)) if ok else None, "max": _r(max(ok)) if ok else None,
                        "samples": len(values), "missed": len(values) - len(ok)}
        ms = [v for p in mine for v in p["webhook_ms"]]
        row["webhook_ms"] = {"p50": percentile(ms, 50), "p99": percentile(ms, 99), "max": max(ms) if ms else None,
                             "samples": len(ms), "errors": sum(p["webhook_errors"] for p in mine),
                             "recorded": sum(p["webhook_recorded"] for p in mine)}
        row["loop_lag_within_s"] = {op: max((p["loop_lag"][op]["within_s"] or 0.0) for p in mine)
                                    for op in mine[0]["loop_lag"]}
        row["loop_stalls"] = {op: sum(p["loop_lag"][op]["stalls"] for p in mine) for op in mine[0]["loop_lag"]}
        row["webhook_timed"] = _timed(mine)
        for key in ("cpu_share", "reconciles_per_s"):  # per operator, the mean over the phase's repeats
            row[key] = {op: round(statistics.mean(p[key][op] for p in mine), 3) for op in mine[0].get(key, {})}
        per[name] = row
    ratios: Obj = {}
    for key in ("copy_s", "delivered_s", "control_copy_s", "rollout_s"):
        u, lo = per.get("unloaded", {}).get(key, {}), per.get("loaded", {}).get(key, {})
        ratios[key] = (round(lo["median"] / u["median"], 2) if u.get("median") and lo.get("median") is not None
                       and not lo.get("missed") else None)
    # Beside the baseline before any of A's objects existed too: an "unloaded" phase after a loaded one
    # may still find the operators working off what A wrote during it.
    baseline: Obj = {}
    for key in ("copy_s", "rollout_s"):
        e, lo = per.get("empty", {}).get(key, {}), per.get("loaded", {}).get(key, {})
        baseline[key] = (round(lo["median"] / e["median"], 2) if e.get("median") and lo.get("median") is not None
                         else None)
    loaded_hook = per.get("loaded", {}).get("webhook_ms", {})
    p99 = loaded_hook.get("p99")
    # The webhook's own p99, as the API server timed its calls (bucket bound: 100 ms is one of them).
    timed = (per.get("loaded", {}).get("webhook_timed") or {}).get("apiserver") or {}
    control = (per.get("loaded", {}).get("webhook_timed") or {}).get("control") or {}
    verdict = {
        "copy_within_2x": ratios["copy_s"] is not None and ratios["copy_s"] <= GOAL_RATIO,
        "rollout_within_2x": ratios["rollout_s"] is not None and ratios["rollout_s"] <= GOAL_RATIO,
        "webhook_p99_under_100ms": (timed.get("p99_within_s") is not None
                                    and timed["p99_within_s"] * 1000 <= GOAL_WEBHOOK_P99_MS
                                    and not loaded_hook.get("errors")),
        "client_seen_p99_under_100ms": p99 is not None and p99 < GOAL_WEBHOOK_P99_MS and not loaded_hook.get("errors"),
        # Not a goal: whether a webhook doing nothing, in a process of its own, would have met it here.
        "control_p99_under_100ms": (control.get("p99_within_s") is not None
                                    and control["p99_within_s"] * 1000 <= GOAL_WEBHOOK_P99_MS),
        # Not a goal either: whether a copier doing nothing else would have met the copy goal here.
        "control_copy_within_2x": (ratios["control_copy_s"] is not None
                                   and ratios["control_copy_s"] <= GOAL_RATIO),
    }
    loaded = per.get("loaded", {})
    beside = (loaded.get("copy_s", {}).get("median"), loaded.get("control_copy_s", {}).get("median"))
    return {"phases": per, "ratio_loaded_to_unloaded": ratios, "ratio_loaded_to_empty": baseline,
            # copyrator's loaded copy beside the control copier's, same writes, same moment: its own share
            "copy_to_control_copier_loaded": round(beside[0] / beside[1], 2) if beside[0] and beside[1] else None,
            "verdict": verdict,
            "goals": f"B's copy and rollout medians loaded ≤ {GOAL_RATIO:g}× unloaded; webhook p99 ≤ "
                     f"{GOAL_WEBHOOK_P99_MS:g} ms during A's load as the API server timed its calls, no errors"}


def _timed(mine: list[Obj]) -> Obj:
    """The webhook's calls over a phase's repeats, per timer: how many, and the bucket holding the p99."""
    out: Obj = {}
    for who in {w for p in mine for w in p.get("webhook_timed", {})}:
        summed: dict[float, float] = {}
        for p in mine:
            for le, v in ((p.get("webhook_timed") or {}).get(who) or {}).get("buckets", {}).items():
                summed[float(le)] = summed.get(float(le), 0.0) + v
        out[who] = _quantile(summed, 0.99)
    return out


def render(data: Obj) -> str:
    """The figures as a markdown table (printed, and what docs/PERFORMANCE.md quotes)."""
    s, m = data["summary"], data["meta"]
    lines = [f"noisy neighbour: A has {m['rules']} worst rules, {m['keys']} ConfigMaps with 250-character names, "
             f"{m['deployments']} Deployments with 16 worst expressions; {m['repeats']} interleaved repeats, "
             f"{m['samples']} samples each of B's copy and rollout per phase, {m['creates']} rule creates at "
             f"{m['create_rate']:g}/s; A's objects placed in {data['a_placed_s']} s and served by both operators "
             f"after {data['a_settled_s']} s; A's writes during the loaded phases: {data['a_writes']}", "",
             "| phase | copy median | copy max | rollout median | rollout max | webhook p50 | webhook p99 | "
             "webhook max | webhook p99 ≤ (API server's timing / copyrator's / the control's, by the API server) | "
             "missed | errors | "
             "loop lag ≤ (copyrator / reloader) | load avg (1 min) |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for name, r in s["phases"].items():
        c, ro, h = r["copy_s"], r["rollout_s"], r["webhook_ms"]
        lines.append(f"| {name} | {c['median']} s | {c['max']} s | {ro['median']} s | {ro['max']} s | "
                     f"{_f(h['p50'])} ms | {_f(h['p99'])} ms | {_f(h['max'])} ms | {_hook(r)} | "
                     f"{c['missed'] + ro['missed']} | "
                     f"{h['errors']} | {_lag(r, 'copyrator')} / {_lag(r, 'reloader')} | "
                     f"{', '.join(f'{x:g}' for x in r['load1'])} |")
    ratios = s["ratio_loaded_to_unloaded"]
    v = s["verdict"]
    lines += ["", f"loaded/unloaded (medians): copy {ratios['copy_s']}×, rollout {ratios['rollout_s']}×; "
                  f"to the baseline before A: copy {s['ratio_loaded_to_empty']['copy_s']}×, "
                  f"rollout {s['ratio_loaded_to_empty']['rollout_s']}×; "
                  f"the webhook's author record in {_recorded(s)} of the answers",
              f"goals ({s['goals']}): copy {_met(v['copy_within_2x'])}, rollout {_met(v['rollout_within_2x'])}, "
              f"webhook {_met(v['webhook_p99_under_100ms'])} (as B's client saw it, the API server's own work "
              f"included: {_met(v.get('client_seen_p99_under_100ms', False))}); the control (a no-op webhook in "
              f"a process of its own, same writes, same API server) within 100 ms: "
              f"{'yes' if v.get('control_p99_under_100ms') else 'no'}"]
    phases = s["phases"]
    lines.append("the control for the copy (a watch of B's namespace seeing B's write; medians): "
                 + ", ".join(f"{n} {r.get('delivered_s', {}).get('median')} s" for n, r in phases.items())
                 + f" (loaded/unloaded {ratios.get('delivered_s')}×); the control copier's copy of the same "
                 "write (a process that does nothing else; medians): "
                 + ", ".join(f"{n} {r.get('control_copy_s', {}).get('median')} s" for n, r in phases.items())
                 + f" (loaded/unloaded {ratios.get('control_copy_s')}×, so a copier doing nothing else "
                 f"{'met' if v.get('control_copy_within_2x') else 'did not meet'} the copy goal here; copyrator's "
                 f"loaded copy {s.get('copy_to_control_copier_loaded')}× the control copier's); per phase, "
                 "the operators' CPU share (of one core) and reconciles/s: "
                 + "; ".join(f"{n} {r.get('cpu_share')} {r.get('reconciles_per_s')}" for n, r in phases.items()))
    return "\n".join(lines)


def _recorded(s: Obj) -> str:
    hooks = [r["webhook_ms"] for r in s["phases"].values()]
    return f"{sum(h['recorded'] for h in hooks)}/{sum(h['samples'] for h in hooks)}"


def _hook(row: Obj) -> str:
    def one(who: str) -> str:
        t = (row.get("webhook_timed") or {}).get(who) or {}
        within = t.get("p99_within_s")
        return "–" if within is None else f"{within * 1000:g} ms ({t['calls']:g} calls)"
    return f"{one('apiserver')} / {one('copyrator')} / {one('control')}"


def _lag(row: Obj, op: str) -> str:
    within, stalls = row["loop_lag_within_s"].get(op), row["loop_stalls"].get(op, 0)
    return ("–" if not within else f"{within * 1000:g} ms") + (f" ({stalls:g} stalls)" if stalls else "")


def _f(x: float | None) -> str:
    return "–" if x is None else f"{x:.1f}"


def _met(ok: bool) -> str:
    return "met" if ok else "NOT met"


async def run(options: NoisyOptions) -> Obj:
    """Runs the scenario and returns ``{"meta", "phases", "summary", ...}`` (saved to ``options.results``)."""
    log_dir = options.log_dir or Path(tempfile.mkdtemp(prefix="bench-noisy-"))
    async with cluster_for(options.kubeconfig, options.cluster_name, keep=options.keep_cluster,
                           log=options.log, nodes=1) as (cluster, own):
        env = await Env.connect(cluster, log_dir, destructive=own)
        token = secrets.token_hex(2)
        names = [await env.namespace(env.name(f"noisy-{t}")) for t in "abc"]
        w: World | None = None
        control_exit: int | None = None
        try:
            await grant_copies(env.admin, names[2], names[1])
            async with tenant(cluster, env.admin, names[0]) as a, tenant(cluster, env.admin, names[1]) as b:
                w = World(env, a, b, *names, token, options)
                await start_operators(w)
                await start_control(w)
                body = await scenario(w)
        finally:
            if w is not None:
                control_exit = await stop_control(w)
                for proc in w.operators.values():
                    with contextlib.suppress(Exception):
                        await proc.stop()
                if not own:
                    await remove(w)
            elif not own:
                await env.delete_namespaces(names)
            await env.close()
    meta = {k: getattr(options, k) for k in ("repeats", "keys", "rules", "deployments", "samples", "creates",
                                              "create_rate", "a_rate", "timeout")}
    meta["cpus"] = os.cpu_count()
    copier_exit = w.copier.returncode if w is not None and w.copier is not None else None
    data = {"meta": meta, **body, "control_exit": control_exit, "copier_exit": copier_exit,
            "summary": summarise(body["phases"])}
    if options.results:
        save_json(data, options.results)
    return data


def main(args: argparse.Namespace) -> int:
    """Entry from ``python -m harness.bench --noisy-neighbour``."""
    from harness.bench.cli import DEFAULT_RESULTS

    options = NoisyOptions(repeats=args.repeats or 3, keys=args.noisy_keys, rules=args.noisy_rules,
                           a_rate=args.noisy_rate,
                           kubeconfig=args.kubeconfig, cluster_name=args.cluster_name,
                           keep_cluster=args.keep_cluster, log_dir=args.log_dir,
                           results=RESULTS if args.results == DEFAULT_RESULTS else args.results)
    data = asyncio.run(run(options))
    print(render(data))
    return 0
