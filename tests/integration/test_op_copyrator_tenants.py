"""copyrator between tenants, on the real control plane: each tenant is a ServiceAccount with a Role in its
own namespace only, acting through its own token; the operator runs under its generated RBAC, watching
every namespace, with default settings.

- The attacker's side: the API server refuses every rule one step beyond the schema's bounds, and the
  worst rule it admits is served without stalling anyone (another tenant's convergence time is printed
  beside its unloaded value; the loop's longest stall too — figures, not assertions).
- The victim's side: a namespace owner with namespaced rights only refuses copies with a ConfigMap of
  their own, keeps their own edits of a copy, and bounds the number of copies they receive.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import pytest
import pytest_asyncio

from kubeloop.client import Client, Invalid, NotFound
from kubeloop.operators.copyrator import build_operator
from kubeloop.operators.copyrator.settings import CopyratorSettings
from kubeloop.testing import wait_for, wait_for_deletion
from kubeloop.testing.operator import RunningOperator, run_operator
from tests.copyrator_worst import beyond, worst_consent, worst_rule

from .test_op_copyrator_security import RULES, configmap, rule, tenant_client, wait_status

RULE_ANNOTATION = "copyrator.flant.com/rule"
CONSENT_ANNOTATION = "copyrator.flant.com/allow-copy"


@dataclass
class Tenants:
    admin: Client
    a: Client  # ServiceAccount with a Role in ns_a only
    b: Client  # ServiceAccount with a Role in ns_b only
    ns_a: str
    ns_b: str
    ns_c: str
    token: str


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def copyrator(kube_cluster: Any, kube_client: Client) -> AsyncIterator[RunningOperator]:
    home = f"copyrator-ten-{secrets.token_hex(3)}"
    await kube_client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": home}})
    op = build_operator()
    op.settings = CopyratorSettings(operator_namespace=home)
    try:
        async with run_operator(kube_cluster, kube_client, op, home, watch_namespaces=None) as running:
            yield running
    finally:
        with contextlib.suppress(NotFound):
            await kube_client.delete("namespaces", home)


@pytest_asyncio.fixture(loop_scope="session")
async def tenants(kube_cluster: Any, kube_client: Client, copyrator: RunningOperator) -> AsyncIterator[Tenants]:
    token = secrets.token_hex(3)
    names = [f"ten-{t}-{token}" for t in "abc"]
    for name in names:
        await kube_client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    try:
        async with tenant_client(kube_cluster, kube_client, names[0]) as a, \
                tenant_client(kube_cluster, kube_client, names[1]) as b:
            yield Tenants(kube_client, a, b, *names, token)
    finally:
        for name in names:
            with contextlib.suppress(NotFound):
                for r in (await kube_client.list(RULES, name))["items"]:
                    await kube_client.delete(RULES, r["metadata"]["name"], name)
                    await wait_for_deletion(kube_client, RULES, r["metadata"]["name"], name, timeout=60)
            with contextlib.suppress(NotFound):
                await kube_client.delete("namespaces", name)


def only(names: list[str]) -> dict[str, Any]:
    return {"matchExpressions": [{"key": "kubernetes.io/metadata.name", "operator": "In", "values": names}]}


# --- the attacker's side ---------------------------------------------------------------------------


async def test_the_api_server_refuses_every_rule_beyond_the_bounds(tenants: Tenants) -> None:
    t = tenants
    worst = worst_rule("worst", t.ns_a, {"worst": t.token})
    for what, body in beyond(worst).items():
        with pytest.raises(Invalid):
            await t.a.create({**body, "metadata": {"name": "beyond", "namespace": t.ns_a}})
            pytest.fail(f"admitted: {what}")
    await t.a.create(worst)  # the worst admitted one is admitted, through the tenant's own token
    status = await wait_status(t.admin, t.ns_a, "worst", lambda s: True, "the worst rule reconciled")
    assert status.get("sourceCount") == 0  # no source carries its selector


async def _convergence(admin: Client, t: Tenants, value: str) -> float:
    """B's own source changed; seconds until its copy in C has the new data."""
    started = time.monotonic()
    await t.b.patch("configmaps", f"b-conf-{t.token}", {"data": {"k": value}}, t.ns_b)
    await wait_for(admin, "configmaps", f"b-conf-{t.token}", t.ns_c, lambda o: o.get("data") == {"k": value},
                   timeout=120, description="B's copy in C updated")
    return time.monotonic() - started


async def _longest_stall(stop: asyncio.Event) -> float:
    loop, worst = asyncio.get_running_loop(), 0.0
    while not stop.is_set():
        before = loop.time()
        await asyncio.sleep(0.05)
        worst = max(worst, loop.time() - before - 0.05)
    return worst


async def test_the_worst_admitted_rules_beside_another_tenants_copy(tenants: Tenants) -> None:
    """Tenant A: 10 rules each at every bound, a source with 64 long labels and annotations and the
    largest consent value, touched again and again. Tenant B: one rule copying one ConfigMap into C."""
    t = tenants
    await t.b.create(configmap(f"b-conf-{t.token}", t.ns_b, {"k": "0"}, {"b-conf": t.token},
                               annotations={CONSENT_ANNOTATION: t.ns_c}))
    await t.b.create(rule("b-rule", t.ns_b, {"b-conf": t.token}, [t.ns_c]))
    await wait_for(t.admin, "configmaps", f"b-conf-{t.token}", t.ns_c, timeout=60, description="B's copy")
    unloaded = [await _convergence(t.admin, t, f"u{i}") for i in range(3)]

    prefix = ".".join(["k" * 60] * 3) + ".example.com"  # a long valid key: 196 characters of prefix
    labels = {f"{prefix}/l{i}": "v" for i in range(63)} | {"worst": t.token}
    notes = {f"{prefix}/a{i}": "v" for i in range(63)}
    await t.a.create(configmap("s", t.ns_a, {"k": "0"}, labels,
                               annotations={**notes, CONSENT_ANNOTATION: worst_consent([t.ns_a, t.ns_c])}))
    for i in range(10):
        await t.a.create(worst_rule(f"worst-{i}", t.ns_a, {"worst": t.token}, match_labels=False))
    await wait_status(t.admin, t.ns_a, "worst-9", lambda s: s.get("sourceCount") == 1, "A's last rule served")
    stop = asyncio.Event()
    stall = asyncio.create_task(_longest_stall(stop))

    async def churn() -> None:  # A keeps every one of its rules busy
        for i in range(20):
            await t.a.patch("configmaps", "s", {"data": {"k": str(i)}}, t.ns_a)
            await asyncio.sleep(0.1)

    noise = asyncio.create_task(churn())
    loaded = [await _convergence(t.admin, t, f"l{i}") for i in range(3)]
    await noise
    stop.set()
    print(f"\nB's copy converged in {', '.join(f'{s:.2f}' for s in unloaded)} s unloaded; "
          f"{', '.join(f'{s:.2f}' for s in loaded)} s beside A's 10 worst admitted rules; "
          f"longest event-loop stall {await stall * 1000:.0f} ms")
    # A's rules were working: one of them holds the copy in C (the others report it as another rule's).
    copy = await t.admin.get("configmaps", "t" * 247 + "s", t.ns_c)
    assert copy["metadata"]["annotations"][RULE_ANNOTATION].startswith(f"{t.ns_a}/worst-")


# --- the victim's side -----------------------------------------------------------------------------


async def test_the_receiving_namespace_decides(tenants: Tenants) -> None:
    """A's rule copies into B by default (the article's behaviour). B's owner, with a namespaced Role
    only: edits one copy (kept, reported, never reverted), then refuses copies (the other copy goes, the
    edited one stays, released), then accepts at most two."""
    t = tenants
    for name in ("app-settings", "other", "third", "fourth"):
        await t.a.create(configmap(name, t.ns_a, {"k": f"from-a-{name}"}, {"spread": t.token}))
    await t.a.create(rule("spread", t.ns_a, {"spread": t.token}, [t.ns_b]))
    for name in ("app-settings", "other"):
        await wait_for(t.b, "configmaps", name, t.ns_b, timeout=60, description=f"A's {name} in B")

    # B's owner applies their own app-settings over the copy: it stays theirs.
    await t.b.patch("configmaps", "app-settings", {"data": {"k": "b's own"}}, t.ns_b)
    status = await wait_status(t.admin, t.ns_a, "spread", lambda s: any(
        c["reason"] == "EditedInPlace" for c in s.get("conflicts") or []), "B's edit reported")
    await t.a.patch("configmaps", "app-settings", {"data": {"k": "from-a-2"}}, t.ns_a)  # A changes its source
    await wait_for(t.admin, "configmaps", "other", t.ns_b, timeout=30)
    await asyncio.sleep(2)  # A's change has had time to be copied, were it to be
    assert (await t.b.get("configmaps", "app-settings", t.ns_b))["data"] == {"k": "b's own"}

    # B refuses copies: A's copy "other" goes; the edited one is released to B, not deleted.
    await t.b.create(configmap("copyrator-policy", t.ns_b, {"accept": "false"}, {}))
    await wait_for_deletion(t.admin, "configmaps", "other", t.ns_b, timeout=30)
    kept = await wait_for(t.b, "configmaps", "app-settings", t.ns_b, lambda o: RULE_ANNOTATION not in (
        o["metadata"].get("annotations") or {}), timeout=30, description="the edited copy released")
    assert kept["data"] == {"k": "b's own"}
    status = await wait_status(t.admin, t.ns_a, "spread", lambda s: s.get("declinedCount") == 1, "B declines")
    assert [(d["namespace"], d["reason"]) for d in status["declined"]] == [(t.ns_b, "NamespaceRefuses")]

    # B accepts again, at most two copies from A's namespace. In name order: "app-settings" (B's now: a
    # conflict, which still counts: the limit never lets a rule want more), "fourth"; the rest declined.
    await t.b.replace({**await t.b.get("configmaps", "copyrator-policy", t.ns_b),
                       "data": {"accept": "true", "max-copies": "2"}})
    status = await wait_status(t.admin, t.ns_a, "spread", lambda s: s.get("copyCount") == 1
                               and s.get("declinedCount") == 1, "one copy, one conflict, the rest declined")
    assert [(d["namespace"], d["reason"]) for d in status["declined"]] == [(t.ns_b, "CopyLimit")]
    assert [(c["name"], c["reason"]) for c in status["conflicts"]] == [("app-settings", "AlreadyExists")]
    marked = (await t.admin.list("configmaps", t.ns_b, label_selector="copyrator.flant.com/rule"))["items"]
    assert [o["metadata"]["name"] for o in marked] == ["fourth"]
    assert (await t.b.get("configmaps", "app-settings", t.ns_b))["data"] == {"k": "b's own"}


# --- Reflector's and replicator's users ------------------------------------------------------------


async def _events(client: Client, ns: str, name: str, reason: str) -> list[dict[str, Any]]:
    items = (await client.list("events.events.k8s.io", ns))["items"]
    return [e for e in items if e.get("reason") == reason and e["regarding"].get("name") == name]


async def test_foreign_annotations_are_reported(tenants: Tenants) -> None:
    """A Secret consenting Reflector's way, and a mirror asking replicator to pull: never honoured, never
    silent — a Warning on each naming copyrator's spelling, and the rule meeting the Secret says so."""
    t = tenants
    reflector = "reflector.v1.k8s.emberstack.com"
    await t.admin.create({"apiVersion": "v1", "kind": "Secret", "metadata": {
        "name": "registry", "namespace": t.ns_a, "labels": {"foreign": t.token}, "annotations": {
            f"{reflector}/reflection-allowed": "true", f"{reflector}/reflection-allowed-namespaces": t.ns_c,
            f"{reflector}/reflection-auto-enabled": "true"}}, "data": {"k": "czNjcjN0"}})
    await t.b.create(configmap("mirror", t.ns_b, {}, {}, annotations={
        "replicator.v1.mittwald.de/replicate-from": f"{t.ns_a}/settings"}))
    await t.admin.create({**rule("foreign", t.ns_a, {"foreign": t.token}, [t.ns_c]), "ruleType": "secret"})

    status = await wait_status(t.admin, t.ns_a, "foreign", lambda s: bool(s.get("foreignAnnotations")),
                               "the rule reports the foreign annotations")
    assert status["skippedSources"] == [{"source": f"{t.ns_a}/registry", "reason": "ForeignConsent"}]
    assert "copyrator.flant.com/allow-copy" in status["foreignAnnotations"][0]["message"]
    assert status.get("copyCount") == 0
    for ns, name, spelling in ((t.ns_a, "registry", "copyrator.flant.com/allow-copy"),
                               (t.ns_b, "mirror", "copyrator.flant.com/allow-takeover")):
        found: list[dict[str, Any]] = []
        for _ in range(100):
            if found := await _events(t.admin, ns, name, "ForeignAnnotations"):
                break
            await asyncio.sleep(0.3)
        assert found and found[0]["type"] == "Warning" and spelling in found[0]["note"], (name, found)
    with pytest.raises(NotFound):
        await t.admin.get("secrets", "registry", t.ns_c)
