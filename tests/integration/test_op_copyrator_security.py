"""copyrator against a hostile tenant, on the real control plane.

The tenant is a ServiceAccount bound to a Role that allows create/update on CopyratorRules and
ConfigMaps in its own namespace only. The operator runs under its generated RBAC (cluster-wide write
on ConfigMaps and Secrets), watching every namespace. Whatever rule the tenant writes, the operator
must not change a byte of kube-system or of another team's objects that did not consent, must not
read another team's ConfigMaps without consent, and must never write over or delete a rule's own
sources. Each attack has a positive control (a consenting object that *is* reached) so that "nothing
changed" cannot pass merely because the operator had not acted yet.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import tempfile
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from kubeloop.client import Client, Forbidden, NotFound
from kubeloop.operators.copyrator import build_operator
from kubeloop.operators.copyrator.settings import CopyratorSettings
from kubeloop.testing import wait_for, wait_for_deletion
from kubeloop.testing.operator import RunningOperator, run_operator

RULES = "copyrators.flant.com"
# Spelled out rather than imported, so this file also runs against code that predates them.
CONSENT_ANNOTATION = "copyrator.flant.com/allow-copy"
TAKEOVER_ANNOTATION = "copyrator.flant.com/allow-takeover"
RULE_ANNOTATION = "copyrator.flant.com/rule"
CLOSED = ("kube-system", "kube-public", "kube-node-lease")
TENANT_RULES = [
    {"apiGroups": ["flant.com"], "resources": ["copyrators"],
     "verbs": ["get", "list", "watch", "create", "update", "patch", "delete"]},
    {"apiGroups": [""], "resources": ["configmaps"],
     "verbs": ["get", "list", "watch", "create", "update", "patch", "delete"]},
]


# --- helpers -------------------------------------------------------------------------------------


def configmap(name: str, ns: str, data: dict[str, str], labels: dict[str, str],
              annotations: dict[str, str] | None = None) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": ns, "labels": labels, "annotations": annotations or {}},
            "data": data}


def rule(name: str, ns: str, selector: dict[str, str], targets: list[str], **fields: Any) -> dict[str, Any]:
    """A rule aimed at exactly ``targets`` (by the name label every namespace carries)."""
    return {"apiVersion": "flant.com/v1", "kind": "CopyratorRule",
            "metadata": {"name": name, "namespace": ns}, "ruleType": "configmap", "selector": selector,
            "namespace": ns, "namespaceSelector": {"matchExpressions": [
                {"key": "kubernetes.io/metadata.name", "operator": "In", "values": targets}]},
            **fields}


async def wait_status(client: Client, ns: str, name: str, check: Callable[[dict[str, Any]], bool],
                      what: str) -> dict[str, Any]:
    def done(obj: dict[str, Any]) -> bool:
        status = obj.get("status") or {}
        return status.get("observedGeneration") == obj["metadata"]["generation"] and check(status)
    found = await wait_for(client, RULES, name, ns, done, timeout=30, description=what)
    return found["status"]


def reasons(status: dict[str, Any]) -> set[tuple[str, str, str]]:
    return {(c["namespace"], c["name"], c["reason"]) for c in status.get("conflicts") or []}


async def absent(client: Client, name: str, ns: str) -> bool:
    try:
        await client.get("configmaps", name, ns)
    except NotFound:
        return True
    return False


def unchanged(before: dict[str, Any], after: dict[str, Any]) -> None:
    """Not one byte: same object (uid), never written (resourceVersion), same content and metadata."""
    for key in ("uid", "resourceVersion", "labels", "annotations", "ownerReferences"):
        assert before["metadata"].get(key) == after["metadata"].get(key), key
    assert before.get("data") == after.get("data")


@dataclass
class Teams:
    admin: Client
    tenant: Client  # the ServiceAccount bound to a Role in team_a only
    team_a: str
    team_b: str
    team_c: str
    token: str


@contextlib.asynccontextmanager
async def tenant_client(cluster: Any, admin: Client, ns: str) -> AsyncIterator[Client]:
    """A client authenticated as ServiceAccount ``ns/tenant``, allowed only what TENANT_RULES say, in ns."""
    binding = {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "tenant"}
    for body in (
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "tenant", "namespace": ns}},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
         "metadata": {"name": "tenant", "namespace": ns}, "rules": TENANT_RULES},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
         "metadata": {"name": "tenant", "namespace": ns}, "roleRef": binding,
         "subjects": [{"kind": "ServiceAccount", "name": "tenant", "namespace": ns}]},
    ):
        await admin.create(body)
    with tempfile.TemporaryDirectory() as tmp:
        path = await asyncio.to_thread(cluster.service_account_kubeconfig, ns, "tenant",
                                       Path(tmp) / "kubeconfig")
        client = await Client.from_kubeconfig(str(path))
    try:
        for _ in range(50):  # the new RoleBinding reaches the API server's authorizer within moments
            with contextlib.suppress(Forbidden):
                await client.list(RULES, ns)
                break
            await asyncio.sleep(0.2)
        yield client
    finally:
        await client.close()


# --- fixtures ------------------------------------------------------------------------------------


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def copyrator(kube_cluster: Any, kube_client: Client) -> AsyncIterator[RunningOperator]:
    """The operator in its own namespace, all namespaces watched, default (strict) settings plus
    --closed-namespace 'closed-*'."""
    home = f"copyrator-sec-{secrets.token_hex(3)}"
    await kube_client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": home}})
    op = build_operator()  # its own settings and world, apart from other tests' operators
    # operator_namespace: what POD_NAMESPACE says in a pod
    op.settings = CopyratorSettings(operator_namespace=home, closed_namespace=("closed-*",))
    try:
        async with run_operator(kube_cluster, kube_client, op, home, watch_namespaces=None) as running:
            yield running
    finally:
        with contextlib.suppress(NotFound):
            await kube_client.delete("namespaces", home)


@pytest_asyncio.fixture(loop_scope="session")
async def teams(kube_cluster: Any, kube_client: Client, copyrator: RunningOperator) -> AsyncIterator[Teams]:
    token = secrets.token_hex(3)
    names = [f"team-{t}-{token}" for t in "abc"]
    for name in names:
        await kube_client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    try:
        async with tenant_client(kube_cluster, kube_client, names[0]) as tenant:
            yield Teams(kube_client, tenant, *names, token)
    finally:
        for name in names:  # rules first: their finalizers need the operator, which is still running
            with contextlib.suppress(NotFound):
                for r in (await kube_client.list(RULES, name))["items"]:
                    await kube_client.delete(RULES, r["metadata"]["name"], name)
                    await wait_for_deletion(kube_client, RULES, r["metadata"]["name"], name, timeout=30)
            with contextlib.suppress(NotFound):
                await kube_client.delete("namespaces", name)


# --- the attacks ---------------------------------------------------------------------------------


async def test_tenant_is_limited_to_its_namespace(teams: Teams) -> None:
    """The premise: on its own, the tenant can write in team-a and nowhere else."""
    t = teams
    await t.tenant.create(configmap(f"mine-{t.token}", t.team_a, {"k": "v"}, {}))
    for ns in ("kube-system", t.team_b):
        with pytest.raises(Forbidden):
            await t.tenant.create(configmap(f"mine-{t.token}", ns, {"k": "v"}, {}))


async def test_overwrite_and_adopt_never_reach_kube_system_or_unconsenting_teams(teams: Teams) -> None:
    t = teams
    victim, twin = f"victim-{t.token}", f"twin-{t.token}"
    # What the tenant aims at: a kube-system object and team-b's, both without controller owners.
    for ns in ("kube-system", t.team_b):
        await t.admin.create(configmap(victim, ns, {"k": "theirs"}, {"app": "x"}))
        await t.admin.create(configmap(twin, ns, {"k": "same"}, {"app": "x"}))  # identical to the source
    # The positive control: team-c consents to take-over by rules of team-a.
    await t.admin.create(configmap(victim, t.team_c, {"k": "theirs"}, {},
                                   annotations={TAKEOVER_ANNOTATION: t.team_a}))
    before = {(ns, n): await t.admin.get("configmaps", n, ns)
              for ns in ("kube-system", t.team_b) for n in (victim, twin)}
    aim = ["kube-system", t.team_b, t.team_c]
    await t.tenant.create(configmap("evil", t.team_a, {"k": "tenant"}, {"evil": t.token}))
    await t.tenant.create(configmap("evil-twin", t.team_a, {"k": "same"}, {"evil-twin": t.token}))
    await t.tenant.create(rule("overwrite", t.team_a, {"evil": t.token}, aim, targetName=victim,
                               conflictPolicy="Overwrite"))
    await t.tenant.create(rule("adopt", t.team_a, {"evil-twin": t.token}, aim, targetName=twin,
                               conflictPolicy="Adopt"))

    # Positive control: the consenting object in team-c is overwritten; team-b's is refused and reported.
    await wait_for(t.admin, "configmaps", victim, t.team_c, lambda o: o.get("data") == {"k": "tenant"},
                   timeout=30, description="team-c's consenting object overwritten")
    status = await wait_status(t.admin, t.team_a, "overwrite", lambda s: s.get("copyCount") == 1,
                               "overwrite: 1 copy")
    assert reasons(status) == {(t.team_b, victim, "NoTakeoverConsent")}  # kube-system is not even a target
    status = await wait_status(t.admin, t.team_a, "adopt",
                               lambda s: s.get("copyCount") == 1 and s.get("conflictCount") == 1,
                               "adopt: 1 copy (team-c had no such object), 1 conflict")
    assert reasons(status) == {(t.team_b, twin, "NoTakeoverConsent")}
    # Both rules have made a full pass: not one byte of kube-system or of team-b changed, and no
    # copy appeared in kube-system under any other name either.
    for (ns, name), old in before.items():
        unchanged(old, await t.admin.get("configmaps", name, ns))
    for ns in CLOSED:
        labelled = await t.admin.list("configmaps", ns, label_selector="copyrator.flant.com/rule-namespace")
        assert not labelled["items"], f"copies in {ns}"
    # Switching the policy (a new pass with another decision path) changes nothing either.
    await t.tenant.patch(RULES, "adopt", {"conflictPolicy": "Overwrite"}, t.team_a)
    await wait_status(t.admin, t.team_a, "adopt", lambda s: s.get("conflictCount") == 1, "adopt→overwrite")
    for (ns, name), old in before.items():
        unchanged(old, await t.admin.get("configmaps", name, ns))


async def test_system_and_operator_namespaces_never_receive_copies(teams: Teams,
                                                                  copyrator: RunningOperator) -> None:
    t = teams
    home = copyrator.manager.options.leader_election_namespace
    assert home and home.startswith("copyrator-sec-")
    closed = f"closed-{t.token}"  # closed by the operator's --closed-namespace 'closed-*'
    await t.admin.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": closed}})
    await t.tenant.create(configmap(f"spread-{t.token}", t.team_a, {"k": "v"}, {"spread": t.token}))
    await t.tenant.create(rule("spread", t.team_a, {"spread": t.token}, [*CLOSED, home, closed, t.team_b]))
    await wait_for(t.admin, "configmaps", f"spread-{t.token}", t.team_b, timeout=30,
                   description="the copy in team-b (positive control)")
    status = await wait_status(t.admin, t.team_a, "spread", lambda s: s.get("copyCount") == 1, "1 copy")
    assert [c["namespace"] for c in status["copies"]] == [t.team_b]
    for ns in (*CLOSED, home, closed):
        assert await absent(t.admin, f"spread-{t.token}", ns), ns
    await t.admin.delete("namespaces", closed)


async def test_rule_cannot_read_another_teams_configmaps_without_consent(teams: Teams) -> None:
    t = teams
    private, shared = f"private-{t.token}", f"shared-{t.token}"
    await t.admin.create(configmap(private, t.team_b, {"password": "hunter2"}, {"leak": t.token}))
    await t.admin.create(configmap(shared, t.team_b, {"k": "public"}, {"leak": t.token},
                                   annotations={CONSENT_ANNOTATION: t.team_a}))
    with pytest.raises(Forbidden):
        await t.tenant.get("configmaps", private, t.team_b)  # the premise: the tenant cannot read it
    await t.tenant.create(rule("leak", t.team_a, {"leak": t.token}, [t.team_a, t.team_c],
                               namespace=[t.team_a, t.team_b]))
    # Positive control: the consenting ConfigMap reaches team-a (and only team-a: its consent says so).
    await wait_for(t.tenant, "configmaps", shared, t.team_a, lambda o: o.get("data") == {"k": "public"},
                   timeout=30, description="the consenting ConfigMap copied into team-a")
    status = await wait_status(t.admin, t.team_a, "leak", lambda s: s.get("copyCount") == 1, "1 copy")
    assert status["sources"] == [f"{t.team_b}/{shared}"]
    assert await absent(t.admin, private, t.team_a) and await absent(t.admin, private, t.team_c)
    assert await absent(t.admin, shared, t.team_c)
    rule_text = str(await t.tenant.get(RULES, "leak", t.team_a))
    assert private not in rule_text and "hunter2" not in rule_text  # not even its name
    # Without any consenting source, the rule says why it found nothing there.
    await t.admin.delete("configmaps", shared, t.team_b)
    status = await wait_status(t.admin, t.team_a, "leak",
                               lambda s: s.get("sourceCount") == 0 and s.get("copyCount") == 0, "no sources")
    assert status["skippedSources"] == [{"source": f"{t.team_b}/*", "reason": "NoConsent"}]
    assert await absent(t.admin, private, t.team_a)


async def test_two_source_namespaces_never_take_over_each_other(teams: Teams) -> None:
    """namespace: [a, b] with the same names in both: each source would be a copy's place for the
    other. Even with every consent given (so that only "a source is never a target" protects them),
    Adopt and Overwrite leave both originals alone, pass after pass, and deleting the rule too."""
    t = teams
    a, b, c = t.team_a, t.team_b, t.team_c
    everything = {CONSENT_ANNOTATION: "true", TAKEOVER_ANNOTATION: "true"}
    for ns, data in ((a, {"v": "a"}), (b, {"v": "b"})):
        await t.admin.create(configmap("same", ns, {"v": "1"}, {"pair": t.token}, annotations=everything))
        await t.admin.create(configmap("differs", ns, data, {"pair": t.token}, annotations=everything))
    originals = {(ns, n): await t.admin.get("configmaps", n, ns) for ns in (a, b) for n in ("same", "differs")}
    await t.admin.create(rule("pair", a, {"pair": t.token}, [a, b, c], namespace=[a, b], conflictPolicy="Adopt"))
    expected = {(ns, n, "SourceInPlace") for ns in (a, b) for n in ("same", "differs")}
    expected |= {(c, n, "ShadowedBySource") for n in ("same", "differs")}  # b's lose to a's in c
    for policy in ("Adopt", "Overwrite", "Adopt"):  # three passes, each after a new generation
        await t.admin.patch(RULES, "pair", {"conflictPolicy": policy}, a)
        status = await wait_status(t.admin, a, "pair", lambda s: s.get("copyCount") == 2, f"{policy}: 2 copies")
        assert reasons(status) == expected
        for (ns, name), old in originals.items():
            unchanged(old, await t.admin.get("configmaps", name, ns))
    for name, data in (("same", {"v": "1"}), ("differs", {"v": "a"})):  # c gets a's (earlier in the list)
        copy = await t.admin.get("configmaps", name, c)
        assert copy["data"] == data and copy["metadata"]["annotations"][RULE_ANNOTATION] == f"{a}/pair"
    await t.admin.delete(RULES, "pair", a)
    await wait_for_deletion(t.admin, RULES, "pair", a, timeout=30)
    assert await absent(t.admin, "same", c) and await absent(t.admin, "differs", c)
    for (ns, name), old in originals.items():
        unchanged(old, await t.admin.get("configmaps", name, ns))


async def test_a_trusted_rule_reading_a_tenants_namespace_lends_it_no_take_over(
        teams: Teams, copyrator: RunningOperator) -> None:
    """An admin's rule in the trusted (operator's) namespace reads team-a, with Overwrite. The names
    and contents of team-a's sources are the tenant's: they must not overwrite team-b's object, which
    did not consent. The admin's own source (trusted content) still takes over without consent."""
    t = teams
    home = copyrator.manager.options.leader_election_namespace
    assert home
    victim, ours = f"victim-t-{t.token}", f"ops-{t.token}"
    await t.admin.create(configmap(victim, t.team_b, {"k": "theirs"}, {}))
    await t.admin.create(configmap(ours, t.team_c, {"k": "old"}, {}))  # positive control: taken over
    before = await t.admin.get("configmaps", victim, t.team_b)
    await t.admin.create(configmap(ours, home, {"k": "ops"}, {"publish": t.token}))
    await t.tenant.create(configmap(victim, t.team_a, {"k": "tenant"}, {"publish": t.token}))
    await t.admin.create(rule("publish", home, {"publish": t.token}, [t.team_b, t.team_c],
                              namespace=[home, t.team_a], conflictPolicy="Overwrite"))
    await wait_for(t.admin, "configmaps", ours, t.team_c, lambda o: o.get("data") == {"k": "ops"},
                   timeout=30, description="the trusted source overwrote team-c's object")
    status = await wait_status(t.admin, home, "publish", lambda s: s.get("conflictCount") == 1, "1 conflict")
    assert reasons(status) == {(t.team_b, victim, "NoTakeoverConsent")}
    unchanged(before, await t.admin.get("configmaps", victim, t.team_b))
    await t.admin.delete(RULES, "publish", home)
    await wait_for_deletion(t.admin, RULES, "publish", home, timeout=30)


async def test_no_copy_takes_the_name_of_the_clusters_ca_bundle(teams: Teams) -> None:
    """kube-root-ca.crt is what every pod trusts as the API server's CA. A tenant's copy by that name,
    in a namespace created after the rule (racing kube-controller-manager's publisher), would be
    mounted into pods there and fought over with the publisher. No copy is ever named so."""
    t = teams
    fresh = f"team-d-{t.token}"
    await t.tenant.create(configmap(f"ca-{t.token}", t.team_a, {"ca.crt": "tenant's CA"}, {"ca": t.token}))
    await t.tenant.create(rule("ca", t.team_a, {"ca": t.token}, [t.team_b, fresh], targetName="kube-root-ca.crt"))
    await t.admin.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": fresh}})
    try:
        status = await wait_status(t.admin, t.team_a, "ca", lambda s: bool(s.get("skippedSources")), "skipped")
        assert status["skippedSources"] == [{"source": f"{t.team_a}/ca-{t.token}", "reason": "ProtectedTargetName"}]
        assert not status.get("copyCount")
        for ns in (t.team_b, fresh):
            ca = await wait_for(t.admin, "configmaps", "kube-root-ca.crt", ns, timeout=30,
                                description=f"the cluster's CA bundle in {ns}")
            assert RULE_ANNOTATION not in (ca["metadata"].get("annotations") or {})
            assert "tenant's CA" not in str(ca.get("data"))
    finally:
        await t.admin.delete("namespaces", fresh)


async def test_a_released_copy_is_not_laundered_through_another_teams_rule(teams: Teams) -> None:
    """orphanOnDelete: the tenant's rule plants a copy in team-b, then is deleted, releasing it. The
    object left in team-b must not pass for team-b's own: team-b's rule selecting that label copies
    team-b's genuine object (positive control), not the planted one."""
    t = teams
    planted, own, label = f"planted-{t.token}", f"own-{t.token}", {"launder": t.token}
    await t.tenant.create(configmap(planted, t.team_a, {"k": "tenant"}, label))
    await t.tenant.create(rule("plant", t.team_a, label, [t.team_b], orphanOnDelete=True))
    await wait_for(t.admin, "configmaps", planted, t.team_b, timeout=30, description="the planted copy")
    await t.tenant.delete(RULES, "plant", t.team_a)
    await wait_for_deletion(t.admin, RULES, "plant", t.team_a, timeout=30)
    left = await t.admin.get("configmaps", planted, t.team_b)  # released, not deleted
    assert RULE_ANNOTATION not in (left["metadata"].get("annotations") or {})
    await t.admin.create(configmap(own, t.team_b, {"k": "team-b"}, label))
    await t.admin.create(rule("publish", t.team_b, label, [t.team_c]))
    await wait_for(t.admin, "configmaps", own, t.team_c, timeout=30, description="team-b's own object copied")
    status = await wait_status(t.admin, t.team_b, "publish", lambda s: s.get("copyCount") == 1, "1 copy")
    assert status["skippedSources"] == [{"source": f"{t.team_b}/{planted}", "reason": "ReleasedCopy"}]
    assert await absent(t.admin, planted, t.team_c)


async def test_zz_rbac_audit(copyrator: RunningOperator) -> None:
    report = copyrator.audit()
    assert report.ok, report.message
