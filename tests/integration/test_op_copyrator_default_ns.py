"""copyrator run in namespace ``default`` (the article's Deployment applied without a namespace): rules
there are not trusted by default, since many users may write to ``default``. A tenant with a Role in
``default`` only must not take over another team's object through the operator."""

from __future__ import annotations

import contextlib
import secrets
from collections.abc import AsyncIterator
from typing import Any

import pytest_asyncio

from kubeloop.client import Client, NotFound
from kubeloop.operators.copyrator import build_operator
from kubeloop.operators.copyrator.settings import CopyratorSettings
from kubeloop.testing import wait_for_deletion
from kubeloop.testing.operator import RunningOperator, run_operator

from .test_op_copyrator_security import RULES, configmap, reasons, rule, tenant_client, unchanged, wait_status


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def in_default(kube_cluster: Any, kube_client: Client) -> AsyncIterator[RunningOperator]:
    op = build_operator()  # its own settings and world, apart from other tests' operators
    op.settings = CopyratorSettings(operator_namespace="default")  # what POD_NAMESPACE says in the pod
    async with run_operator(kube_cluster, kube_client, op, "default", watch_namespaces=None) as running:
        yield running


async def test_a_tenant_of_default_gets_no_trust(kube_cluster: Any, kube_client: Client,
                                                 in_default: RunningOperator) -> None:
    token = secrets.token_hex(3)
    team_b = f"team-b-{token}"
    victim, label = f"victim-{token}", {"take": token}
    await kube_client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": team_b}})
    try:
        await kube_client.create(configmap(victim, team_b, {"k": "theirs"}, {}))
        before = await kube_client.get("configmaps", victim, team_b)
        async with tenant_client(kube_cluster, kube_client, "default") as tenant:
            await tenant.create(configmap(victim, "default", {"k": "tenant"}, label))
            await tenant.create(rule(f"take-{token}", "default", label, [team_b], conflictPolicy="Overwrite"))
            status = await wait_status(kube_client, "default", f"take-{token}",
                                       lambda s: s.get("conflictCount") == 1, "1 conflict")
            assert reasons(status) == {(team_b, victim, "NoTakeoverConsent")}
            unchanged(before, await kube_client.get("configmaps", victim, team_b))
            await tenant.delete(RULES, f"take-{token}", "default")
            await wait_for_deletion(kube_client, RULES, f"take-{token}", "default", timeout=30)
    finally:
        for kind, name in (("configmaps", victim), ("serviceaccounts", "tenant"),
                           ("roles.rbac.authorization.k8s.io", "tenant"),
                           ("rolebindings.rbac.authorization.k8s.io", "tenant")):
            with contextlib.suppress(NotFound):
                await kube_client.delete(kind, name, "default")
        await kube_client.delete("namespaces", team_b)
