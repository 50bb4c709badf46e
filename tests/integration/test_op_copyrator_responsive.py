"""copyrator with ``--check-author`` keeps answering beside a tenant's worst admitted input, on the real
control plane: the operator runs in-process under its generated RBAC; tenant A (a ServiceAccount with a
Role in its own namespace only, through its own token) holds ten rules at every bound of the schema and
2,000 sources with 250-character names, and rewrites its rules again and again; tenant B, from a thread
with its own client and loop, keeps creating CopyratorRules (server dry run: the API server calls the
operator's mutating webhook, which writes the author record, with ``failurePolicy: Fail``) and polling the
operator's ``/healthz``.

Asserted: every one of B's creates is admitted with its author record and every probe answers 200, both
while A's rules are reconciled over their 2,000 sources (the plan hands the loop back between slices) and
while the operator's loop is held outright for longer than the webhook's timeout (a stand-in for any
reconcile that computes: the webhook and the probes are served from threads of their own). Latencies are
printed, never asserted.
"""

from __future__ import annotations

import asyncio
import contextlib
import http.client
import secrets
import statistics
import tempfile
import threading
import time
from collections import defaultdict
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest_asyncio

from kubeloop.client import ApiError, Client, NotFound
from kubeloop.operators.copyrator import build_operator
from kubeloop.operators.copyrator.settings import CopyratorSettings
from kubeloop.testing import wait_for, wait_for_deletion
from kubeloop.testing.operator import RunningOperator, install_crds, run_operator
from tests.copyrator_worst import worst_consent, worst_rule

from .test_op_copyrator_security import RULES, TENANT_RULES, configmap, rule, tenant_client

AUTHOR = "copyrator.flant.com/author"
CONSENT = "copyrator.flant.com/allow-copy"
SOURCES = 2000
WORST_RULES = 10
HOLD = 7.0  # seconds the test holds the operator's loop: beyond the webhook's 5 s timeout


@dataclass
class Setup:
    admin: Client
    a: Client
    ns_a: str
    ns_b: str
    b_kubeconfig: Path
    running: RunningOperator
    token: str


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def setup(kube_cluster: Any, kube_client: Client) -> AsyncIterator[Setup]:
    token = secrets.token_hex(3)
    home, a, b = (f"resp-{x}-{token}" for x in ("home", "a", "b"))
    admin = kube_client
    for ns in (home, a, b):
        await admin.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
    op = build_operator()
    op.settings = CopyratorSettings(operator_namespace=home, check_author=True)
    await install_crds(admin, op)  # before the tenants' clients, which wait by listing rules
    try:
        with tempfile.TemporaryDirectory() as tmp:
            b_kubeconfig = await _tenant_kubeconfig(kube_cluster, admin, b, Path(tmp) / "b")
            async with tenant_client(kube_cluster, admin, a) as tenant_a, \
                    run_operator(kube_cluster, admin, op, home, watch_namespaces=[home, a, b]) as running:
                yield Setup(admin, tenant_a, a, b, b_kubeconfig, running, token)
                for r in (await admin.list(RULES, a))["items"]:  # while the operator runs its finalizer
                    await admin.delete(RULES, r["metadata"]["name"], a)
                for r in (await admin.list(RULES, a))["items"]:
                    await wait_for_deletion(admin, RULES, r["metadata"]["name"], a, timeout=120)
    finally:
        for ns in (home, a, b):
            with contextlib.suppress(NotFound):
                await admin.delete("namespaces", ns)


async def _tenant_kubeconfig(cluster: Any, admin: Client, ns: str, path: Path) -> Path:
    """A kubeconfig of ServiceAccount ``ns/tenant`` with TENANT_RULES in ``ns`` (read by another thread)."""
    role = {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "tenant"}
    for body in ({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "tenant", "namespace": ns}},
                 {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
                  "metadata": {"name": "tenant", "namespace": ns}, "rules": TENANT_RULES},
                 {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
                  "metadata": {"name": "tenant", "namespace": ns}, "roleRef": role,
                  "subjects": [{"kind": "ServiceAccount", "name": "tenant", "namespace": ns}]}):
        await admin.create(body)
    return Path(await asyncio.to_thread(cluster.service_account_kubeconfig, ns, "tenant", path))


# --- tenant B's side, from a thread of its own ------------------------------------------------------------


@dataclass
class Answers:
    """What B saw, per phase: creates (None: admitted with the author record, else what went wrong) and
    /healthz statuses, each with its latency in ms."""

    phase: str = "starting"
    creates: dict[str, list[tuple[float, str | None]]] = field(default_factory=lambda: defaultdict(list))
    probes: dict[str, list[tuple[float, int]]] = field(default_factory=lambda: defaultdict(list))
    stop: threading.Event = field(default_factory=threading.Event)


def _healthz(port: int) -> int:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.request("GET", "/healthz")
        return conn.getresponse().status
    except OSError:
        return 0
    finally:
        conn.close()


async def _tenant_b(kubeconfig: Path, ns: str, probes: int, seen: Answers) -> None:
    client = await Client.from_kubeconfig(str(kubeconfig))
    try:
        for _ in range(50):  # the RoleBinding reaches the authorizer within moments
            with contextlib.suppress(ApiError):
                await client.list(RULES, ns)
                break
            await asyncio.sleep(0.2)
        i = 0
        while not seen.stop.is_set():
            i += 1
            phase, started = seen.phase, time.perf_counter()
            try:
                got = await client.create(rule(f"probe-{i}", ns, {"probe": "x"}, [ns]), ns, dry_run=True)
                problem = None if AUTHOR in (got["metadata"].get("annotations") or {}) else "no author record"
            except (ApiError, OSError, TimeoutError) as exc:
                problem = f"{type(exc).__name__}: {exc}"[:300]
            seen.creates[phase].append(((time.perf_counter() - started) * 1000, problem))
            started = time.perf_counter()
            status = _healthz(probes)
            seen.probes[phase].append(((time.perf_counter() - started) * 1000, status))
            await asyncio.sleep(0.1)
    finally:
        await client.close()


# --- tenant A's side ------------------------------------------------------------------------------------------


async def _bounded(calls: list[Any], limit: int = 8) -> None:
    gate = asyncio.Semaphore(limit)

    async def one(call: Any) -> None:
        async with gate:
            await call()

    await asyncio.gather(*(one(c) for c in calls))


async def _place_worst(s: Setup) -> None:
    """A's worst admitted input, through A's token: a source with 63 long labels and annotations and the
    longest consent value, 2,000 sources with 250-character names, ten rules at every bound."""
    label = {"worst": s.token}
    prefix = ".".join(["k" * 60] * 3) + ".example.com"
    labels = {f"{prefix}/l{i}": "v" for i in range(63)} | label
    notes = {f"{prefix}/a{i}": "v" for i in range(63)}
    await s.a.create(configmap("s", s.ns_a, {"k": "0"}, labels, {**notes, CONSENT: worst_consent([s.ns_a])}))
    await _bounded([lambda i=i: s.a.create(configmap(f"{'a' * 244}{i:06d}", s.ns_a, {"k": "0"}, label))
                    for i in range(SOURCES)])
    for i in range(WORST_RULES):
        await s.a.create(worst_rule(f"worst-{i}", s.ns_a, label, match_labels=False))


async def _served(s: Setup, name: str) -> None:
    def done(obj: dict[str, Any]) -> bool:
        status = obj.get("status") or {}
        return status.get("observedGeneration") == obj["metadata"]["generation"] and status.get("sourceCount") == \
            SOURCES + 1
    await wait_for(s.admin, RULES, name, s.ns_a, done, timeout=300, description=f"A's rule {name} served")


async def _churn(s: Setup, rounds: int) -> None:
    """A rewrites every one of its rules (a new generation each: a reconcile over its 2,001 sources)."""
    for r in range(rounds):
        for i in range(WORST_RULES):
            await s.a.patch(RULES, f"worst-{i}", {"orphanOnDelete": r % 2 == 0}, s.ns_a)
        await asyncio.sleep(0.5)


def _hold(seconds: float) -> int:
    """Pure-Python computation on the caller's loop (the operator's, in-process): nothing else of it runs."""
    n, end = 0, time.monotonic() + seconds
    while time.monotonic() < end:
        n += sum(i * i for i in range(500))
    return n


def _report(phase: str, seen: Answers) -> str:
    creates = sorted(ms for ms, _ in seen.creates[phase])
    probes = sorted(ms for ms, _ in seen.probes[phase])

    def figures(values: list[float]) -> str:
        if not values:
            return "none"
        return f"{len(values)}, median {statistics.median(values):.0f} ms, max {values[-1]:.0f} ms"
    return f"{phase}: creates {figures(creates)}; /healthz {figures(probes)}"


async def test_webhook_and_probes_answer_beside_the_worst_input(setup: Setup) -> None:
    s = setup
    seen = Answers()
    port = s.running.manager.http.bound["probes"]
    b = threading.Thread(target=lambda: asyncio.run(_tenant_b(s.b_kubeconfig, s.ns_b, port, seen)),
                         name="tenant B")
    b.start()
    try:
        seen.phase = "placing A's worst input"
        await _place_worst(s)
        for i in range(WORST_RULES):
            await _served(s, f"worst-{i}")
        seen.phase = "A rewriting its rules"
        await _churn(s, rounds=6)
        seen.phase = "the operator's loop held"
        await asyncio.sleep(0.5)  # B's next create is under way
        _hold(HOLD)
        seen.phase = "after"
        await asyncio.sleep(1.0)
    finally:
        seen.stop.set()
        await asyncio.to_thread(b.join, 60)
    print("\n" + "\n".join(_report(p, seen) for p in seen.creates))
    for phase in ("A rewriting its rules", "the operator's loop held"):
        assert seen.creates[phase], f"no create of B's during {phase}"
        assert [problem for _, problem in seen.creates[phase] if problem] == [], phase
        assert {status for _, status in seen.probes[phase]} == {200}, phase
    # The operator served A's rewrites meanwhile: every rule's last generation reconciled.
    for i in range(WORST_RULES):
        await _served(s, f"worst-{i}")
