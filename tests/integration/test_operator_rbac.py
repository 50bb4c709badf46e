"""An operator with a typed model runs under its *generated* RBAC as a ServiceAccount; the audit
compares what it used with what was granted, and a deliberately missing verb is caught as a 403."""

from __future__ import annotations

import asyncio

import pytest
from pydantic import BaseModel, Field

from kubeloop import Context, Operator
from kubeloop.cache.cache import CacheSyncTimeout
from kubeloop.client import Client
from kubeloop.manager import ManagerOptions
from kubeloop.resources import CustomResource
from kubeloop.resources.builtin import CONFIG_MAP
from kubeloop.testing import wait_for
from kubeloop.testing.operator import run_operator


class GreeterSpec(BaseModel):
    greeting: str = Field(min_length=1, description="What the ConfigMap says.")


class GreeterStatus(BaseModel):
    observedGeneration: int | None = None
    configMap: str | None = None


class Greeter(CustomResource, group="test.kubeloop.dev", version="v1", kind="Greeter"):
    spec: GreeterSpec
    status: GreeterStatus | None = None


def greeter_operator() -> Operator:
    op = Operator("greeter")

    @op.reconcile(Greeter, owns=[CONFIG_MAP])
    async def reconcile(obj: Greeter, ctx: Context) -> None:
        name = f"{obj.metadata.name}-greeting"
        await ctx.apply_children([{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name},
                                   "data": {"greeting": obj.spec.greeting}}])
        await ctx.patch_status({"observedGeneration": obj.metadata.generation, "configMap": name})
        await ctx.event("Normal", "Greeted", f"wrote {name}")

    return op


def greeter(name: str, ns: str, greeting: str = "hello") -> dict:
    return {"apiVersion": "test.kubeloop.dev/v1", "kind": "Greeter", "metadata": {"name": name, "namespace": ns},
            "spec": {"greeting": greeting}}


async def test_runs_under_generated_rbac_with_exact_permissions(kube_cluster, kube_client: Client,
                                                                 namespace: str) -> None:
    async with run_operator(kube_cluster, kube_client, greeter_operator(), namespace) as running:
        await kube_client.create(greeter("g1", namespace))
        # 60 s: the API server's owner-reference admission plugin may not map the new CRD's kind at once
        await wait_for(kube_client, "configmaps", "g1-greeting", namespace, timeout=60)
        await wait_for(kube_client, "greeters.test.kubeloop.dev", "g1", namespace, timeout=20,
                       predicate=lambda o: (o.get("status") or {}).get("configMap") == "g1-greeting")
        await kube_client.patch("greeters.test.kubeloop.dev", "g1", {"spec": {"greeting": "hi"}}, namespace)
        await wait_for(kube_client, "configmaps", "g1-greeting", namespace, timeout=20,
                       predicate=lambda o: o["data"]["greeting"] == "hi")
        await kube_client.delete("configmaps", "g1-greeting", namespace)
        await wait_for(kube_client, "configmaps", "g1-greeting", namespace, timeout=20)
    report = running.audit()
    assert report.ok, report.message
    # Everything granted was used, except delete (pruning) which this scenario never needed.
    unused = {(p.resource, v) for p in report.unused for v in p.verbs}
    assert unused <= {("configmaps", "delete")}, report.message


async def test_audit_catches_a_missing_verb(kube_cluster, kube_client: Client, namespace: str) -> None:
    op = greeter_operator()
    # Sabotage: the generated role loses status patching.
    original = op.permissions
    op.permissions = lambda: [p for p in original() if p.subresource != "status"]  # type: ignore[method-assign]
    async with run_operator(kube_cluster, kube_client, op, namespace) as running:
        await kube_client.create(greeter("g2", namespace))
        await wait_for(kube_client, "configmaps", "g2-greeting", namespace, timeout=20)
        for _ in range(100):  # the status patch follows the ConfigMap in the same reconcile
            if any(u.subresource == "status" for u in running.client.used_permissions or ()):
                break
            await asyncio.sleep(0.05)
    report = running.audit()
    assert not report.ok
    assert any(r.subresource == "status" and r.verb == "patch" for r in report.missing), report.message


async def test_without_the_owners_finalizers_rule_children_are_refused_and_the_403_names_it(
        kube_cluster, kube_client: Client, namespace: str, caplog: pytest.LogCaptureFixture) -> None:
    """On the hardened profile (OwnerReferencesPermissionEnforcement) a child with blockOwnerDeletion needs
    update on the owner's finalizers: without it the API server refuses the ConfigMap, the log names that
    rule and says the generated RBAC lacks it too, and the audit reports it missing."""
    if getattr(kube_cluster, "profile", "hardened") != "hardened":
        pytest.skip("needs the hardened profile (OwnerReferencesPermissionEnforcement)")
    op = greeter_operator()
    original = op.permissions
    op.permissions = lambda: [p for p in original() if p.subresource != "finalizers"]  # type: ignore[method-assign]
    with caplog.at_level("ERROR", logger="kubeloop.controller"):
        async with run_operator(kube_cluster, kube_client, op, namespace) as running:
            await kube_client.create(greeter("g3", namespace))
            for _ in range(300):
                if any("blockOwnerDeletion" in r.getMessage() for r in caplog.records):
                    break
                await asyncio.sleep(0.1)
            assert not (await kube_client.list("configmaps", namespace, field_selector="metadata.name=g3-greeting")
                        )["items"]
    (refusal, *_) = [r.getMessage() for r in caplog.records if "blockOwnerDeletion" in r.getMessage()]
    assert ("lacks: update on greeters/finalizers (API group 'test.kubeloop.dev') in namespace "
            f"'{namespace}'; the generated RBAC does not have it either") in refusal, refusal
    report = running.audit()
    assert any((r.verb, r.resource, r.subresource) == ("update", "greeters", "finalizers")
               for r in report.missing), report.message


async def test_missing_list_permission_is_a_clear_startup_error(kube_cluster, kube_client: Client,
                                                                 namespace: str) -> None:
    op = greeter_operator()
    original = op.permissions
    op.permissions = lambda: [p for p in original() if p.resource != "configmaps"]  # type: ignore[method-assign]
    opts = ManagerOptions(namespaces=[namespace], metrics_bind_address="0", health_probe_bind_address="0",
                          sync_timeout=3, freeze_gc=False)
    with pytest.raises(CacheSyncTimeout) as err:
        async with run_operator(kube_cluster, kube_client, op, namespace, options=opts):
            pass
    message = str(err.value)
    assert "configmaps" in message and "forbidden" in message and "list/watch" in message, message
