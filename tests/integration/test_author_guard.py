"""The tenancy guard on the real control plane: ``op.record_author`` and copyrator's
``--check-author``, with a tenant whose only rights are a Role in its own namespace (plus write on
ConfigMaps in one other namespace, the positive control for targets).

Namespaces: a (the tenant's: rules and sources), b (no rights: a target), c (create/update ConfigMaps:
a target), d (no rights: holds a source that consents to every copy, so only the author check keeps it).
"""

from __future__ import annotations

import base64
import contextlib
import json
import secrets
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import pytest
import pytest_asyncio

from kubeloop import Author, Operator, builtin
from kubeloop.client import Client, NotFound
from kubeloop.operators.copyrator import build_operator
from kubeloop.operators.copyrator.settings import CopyratorSettings
from kubeloop.testing import wait_for, wait_for_deletion, wait_for_events
from kubeloop.testing.operator import install_crds, run_operator
from kubeloop.webhooks.author import sign
from tests.integration.test_op_copyrator_security import configmap, tenant_client, wait_status

RULES = "copyrators.flant.com"
AUTHOR = "copyrator.flant.com/author"
CONSENT = "copyrator.flant.com/allow-copy"
KEY = secrets.token_bytes(32)  # the test's own key Secret, so that it can make a genuine record to copy


def rule(name: str, ns: str, label: str, sources: list[str], targets: list[str],
         annotations: dict[str, str] | None = None) -> dict[str, Any]:
    return {"apiVersion": "flant.com/v1", "kind": "CopyratorRule",
            "metadata": {"name": name, "namespace": ns, "annotations": annotations or {}},
            "ruleType": "configmap", "selector": {"src": label}, "namespace": sources,
            "namespaceSelector": {"matchExpressions": [
                {"key": "kubernetes.io/metadata.name", "operator": "In", "values": targets}]}}


def author_condition(status: dict[str, Any]) -> dict[str, Any] | None:
    return next((c for c in status.get("conditions") or [] if c["type"] == "AuthorAllowed"), None)


@dataclass
class Setup:
    admin: Client
    tenant: Client
    a: str
    b: str
    c: str
    d: str
    home: str

    @property
    def tenant_user(self) -> str:
        return f"system:serviceaccount:{self.a}:tenant"


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def setup(kube_cluster: Any, kube_client: Client) -> AsyncIterator[Setup]:
    token = secrets.token_hex(3)
    home, a, b, c, d = (f"guard-{x}-{token}" for x in ("home", "a", "b", "c", "d"))
    admin = kube_client
    for ns in (home, a, b, c, d):
        await admin.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
    await admin.create({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "copyrator-author-key",
                        "namespace": home}, "data": {"hmac.key": base64.b64encode(KEY).decode()}})
    op = build_operator()
    op.settings = CopyratorSettings(operator_namespace=home, check_author=True)
    await install_crds(admin, op)
    # Written while no webhook exists: one without a record, one with a genuine record of another rule.
    await admin.create(rule("old", a, "old", [a], [b]))
    original = rule("original", a, "old", [a], [b])
    stolen = sign(KEY, original, Author("admin", groups=("system:masters",)))
    await admin.create(rule("copied", a, "old", [a], [b], annotations={AUTHOR: stolen}))
    try:
        async with tenant_client(kube_cluster, admin, a) as tenant:
            await _grant_configmaps(admin, c, a)
            async with run_operator(kube_cluster, admin, op, home, watch_namespaces=[a, b, c, d, home]):
                yield Setup(admin, tenant, a, b, c, d, home)
                for r in (await admin.list(RULES, a))["items"]:  # while the operator runs its finalizer
                    await admin.delete(RULES, r["metadata"]["name"], a)
                    await wait_for_deletion(admin, RULES, r["metadata"]["name"], a, timeout=30)
    finally:
        for ns in (home, a, b, c, d):
            with contextlib.suppress(NotFound):
                await admin.delete("namespaces", ns)


async def _grant_configmaps(admin: Client, ns: str, tenant_ns: str) -> None:
    await admin.create({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
                        "metadata": {"name": "tenant-writes", "namespace": ns},
                        "rules": [{"apiGroups": [""], "resources": ["configmaps"],
                                   "verbs": ["get", "create", "update"]}]})
    await admin.create({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
                        "metadata": {"name": "tenant-writes", "namespace": ns},
                        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "tenant-writes"},
                        "subjects": [{"kind": "ServiceAccount", "name": "tenant", "namespace": tenant_ns}]})


async def test_tenant_rule_reaches_only_where_its_author_may(setup: Setup) -> None:
    s = setup
    await s.tenant.create(configmap("mine", s.a, {"k": "a"}, {"src": "t"}))
    await s.admin.create(configmap("theirs", s.d, {"k": "d"}, {"src": "t"}, annotations={CONSENT: "true"}))
    forged = sign(b"x" * 32, rule("t", s.a, "t", [s.a, s.d], [s.b, s.c]), Author("admin"))
    await s.tenant.create(rule("t", s.a, "t", [s.a, s.d], [s.b, s.c], annotations={AUTHOR: forged}))

    # The forged record was overwritten by the webhook with the tenant's own.
    stored = await s.admin.get(RULES, "t", s.a)
    assert json.loads(stored["metadata"]["annotations"][AUTHOR])["user"]["username"] == s.tenant_user

    status = await wait_status(s.admin, s.a, "t", lambda st: st.get("copyCount") == 1, "tenant rule: 1 copy")
    assert status["copies"] == [{"namespace": s.c, "names": ["mine"]}]  # c only, and not d's source
    cond = author_condition(status)
    assert cond and cond["status"] == "False" and cond["reason"] == "Forbidden"
    assert f"user {s.tenant_user} may not get configmaps in namespace {s.d}" in cond["message"]
    assert f"user {s.tenant_user} may not create configmaps in namespace {s.b}" in cond["message"]
    with pytest.raises(NotFound):
        await s.admin.get("configmaps", "mine", s.b)
    with pytest.raises(NotFound):
        await s.admin.get("configmaps", "theirs", s.c)
    events = await wait_for_events(s.admin, s.a, "t", "Forbidden")
    assert any(f"namespace {s.b}" in e["note"] for e in events)




async def test_the_same_rule_by_an_admin_works(setup: Setup) -> None:
    s = setup
    await s.admin.create(configmap("adm", s.a, {"k": "a"}, {"src": "adm"}))
    await s.admin.create(configmap("adm-d", s.d, {"k": "d"}, {"src": "adm"}, annotations={CONSENT: "true"}))
    await s.admin.create(rule("adm", s.a, "adm", [s.a, s.d], [s.b, s.c]))
    status = await wait_status(s.admin, s.a, "adm", lambda st: st.get("copyCount") == 4, "admin rule: 4 copies")
    cond = author_condition(status)
    assert cond and cond["status"] == "True" and cond["reason"] == "Allowed"
    for ns in (s.b, s.c):
        for name in ("adm", "adm-d"):
            await s.admin.get("configmaps", name, ns)


@pytest.mark.parametrize(("name", "reason"), [("old", "AuthorMissing"), ("copied", "AuthorBadSignature")])
async def test_rules_without_a_valid_record_are_refused_with_the_fix(setup: Setup, name: str, reason: str) -> None:
    s = setup
    status = await wait_status(s.admin, s.a, name, lambda st: author_condition(st) is not None, f"{name}: judged")
    cond = author_condition(status)
    assert cond and cond["status"] == "False" and cond["reason"] == reason
    assert f"kubectl annotate --overwrite copyratorrule {name} {AUTHOR}=renew -n {s.a}" in cond["message"]
    assert not status.get("copyCount")
    await wait_for_events(s.admin, s.a, name, reason)


async def test_the_fix_renews_the_record(setup: Setup) -> None:
    s = setup
    await s.admin.create(configmap("old-src", s.a, {"k": "a"}, {"src": "old"}))
    await s.admin.patch(RULES, "old", {"metadata": {"annotations": {AUTHOR: "renew"}}}, s.a)
    status = await wait_status(s.admin, s.a, "old", lambda st: st.get("copyCount") == 1, "old: renewed, 1 copy")
    assert (author_condition(status) or {}).get("status") == "True"
    await s.admin.get("configmaps", "old-src", s.b)


async def test_the_operators_own_writes_keep_the_record(setup: Setup) -> None:
    """The finalizer and status writes of the operator (cluster-wide rights) never make it the author."""
    s = setup
    found = await wait_for(s.admin, RULES, "t", s.a, lambda o: bool(o["metadata"].get("finalizers")), timeout=20)
    assert json.loads(found["metadata"]["annotations"][AUTHOR])["user"]["username"] == s.tenant_user


# --- what the record can sign: checked on the API server, not assumed --------------------------------


async def test_uid_is_absent_in_mutating_create(kube_cluster: Any, kube_client: Client, namespace: str) -> None:
    """metadata.uid is assigned after mutating admission on CREATE, so the record cannot sign it."""
    seen: list[dict[str, Any]] = []
    probe: Operator = Operator("uid-probe")

    @probe.mutate(builtin.CONFIG_MAP)
    async def record(obj: dict[str, Any], req: Any) -> None:
        if not req.dry_run:
            seen.append({"operation": req.operation, **obj["metadata"]})

    async with run_operator(kube_cluster, kube_client, probe, namespace):
        created = await kube_client.create(configmap("probe", namespace, {"k": "v"}, {}))
    creates = [m for m in seen if m["operation"] == "CREATE" and m.get("name") == "probe"]
    assert creates and "uid" not in creates[0] and created["metadata"]["uid"]


async def test_rules_in_the_trusted_operator_namespace_are_not_screened(setup: Setup) -> None:
    """The webhook never sees the operator's own namespace; rules there are the admins' (trusted)."""
    s = setup
    await s.admin.create(configmap("home-src", s.home, {"k": "h"}, {"src": "home"}))
    await s.admin.create(rule("home", s.home, "home", [s.home], [s.b]))
    status = await wait_status(s.admin, s.home, "home", lambda st: st.get("copyCount") == 1, "home rule: 1 copy")
    assert author_condition(status) is None
    await s.admin.get("configmaps", "home-src", s.b)
    await s.admin.delete(RULES, "home", s.home)
    await wait_for_deletion(s.admin, RULES, "home", s.home, timeout=30)


async def test_the_key_secret_is_made_once_and_reused(kube_client: Client, namespace: str) -> None:
    from kubeloop.webhooks.guard import load_key

    first = await load_key(kube_client, namespace, "demo-author-key")
    assert len(first) == 32
    assert await load_key(kube_client, namespace, "demo-author-key") == first
    stored = await kube_client.get("secrets", "demo-author-key", namespace)
    assert base64.b64decode(stored["data"]["hmac.key"]) == first
