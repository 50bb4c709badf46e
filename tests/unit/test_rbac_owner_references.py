"""RBAC for owner references: children written with ``blockOwnerDeletion`` need ``update`` on the owner's
``finalizers`` wherever OwnerReferencesPermissionEnforcement runs. The generated RBAC has it, the audit
counts it as used, and a 403 names the missing rule and says whether the generated RBAC has it."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from kubeloop import Operator
from kubeloop.client import Client, Config, errors
from kubeloop.client.api import _blocking_owner_refs
from kubeloop.client.resource import Resource
from kubeloop.resources import AccessRequest, CustomResource, Permission, RbacAudit, render_rbac
from kubeloop.resources.builtin import CONFIG_MAP, POD
from kubeloop.resources.rbac import generated_grants


class Spec(BaseModel):
    greeting: str = "hello"


class Echo(CustomResource, group="demo.kubeloop.dev", version="v1", kind="Echo"):
    spec: Spec = Spec()


class Fleet(CustomResource, group="demo.kubeloop.dev", version="v1", kind="Fleet", scope="Cluster"):
    spec: Spec = Spec()


async def _noop(obj: Any, ctx: Any) -> None:
    return None


FINALIZERS = Permission("demo.kubeloop.dev", "echos", {"update"}, "finalizers")


def test_owns_grants_update_on_the_owners_finalizers() -> None:
    op = Operator("echo")
    op.reconcile(Echo, owns=[CONFIG_MAP])(_noop)
    assert FINALIZERS in op.permissions()
    rules = [r for o in render_rbac("echo", "echo-system", op.permissions()) if o["kind"] == "ClusterRole"
             for r in o["rules"]]
    assert {"apiGroups": ["demo.kubeloop.dev"], "resources": ["echos/finalizers"], "verbs": ["update"]} in rules


def test_no_owns_no_finalizers_rule() -> None:
    op = Operator("echo")
    op.reconcile(Echo)(_noop)
    assert not [p for p in op.permissions() if p.subresource == "finalizers"]


def test_a_cluster_scoped_owner_gets_a_cluster_scoped_rule() -> None:
    op = Operator("fleet")
    op.reconcile(Fleet, owns=[POD])(_noop)
    assert Permission("demo.kubeloop.dev", "fleets", {"update"}, "finalizers", namespaced=False) in op.permissions()


# --- which writes carry blocking owner references ----------------------------------------------------------

REF = {"apiVersion": "demo.kubeloop.dev/v1", "kind": "Echo", "name": "e", "uid": "u", "controller": True,
       "blockOwnerDeletion": True}


def test_blocking_references_in_objects_and_patches() -> None:
    assert _blocking_owner_refs({"metadata": {"ownerReferences": [REF]}}) == [REF]
    assert _blocking_owner_refs({"metadata": {"ownerReferences": [{**REF, "blockOwnerDeletion": False}]}}) == []
    assert _blocking_owner_refs({"spec": {}}) == []
    # adoption_patch's two forms: the whole list, or one reference appended
    assert _blocking_owner_refs([{"op": "test", "path": "/metadata/resourceVersion", "value": "1"},
                                 {"op": "add", "path": "/metadata/ownerReferences", "value": [REF]}]) == [REF]
    assert _blocking_owner_refs([{"op": "add", "path": "/metadata/ownerReferences/-", "value": REF}]) == [REF]
    assert _blocking_owner_refs(None) == []


class _Registry:
    async def for_kind(self, api_version: str, kind: str) -> Resource:
        if kind != "Echo":
            raise errors.NotFound(404, "NotFound", f"{kind} not served")
        return Echo.resource()


def _client() -> Client:
    client = Client(Config(server="https://127.0.0.1:1"), record_permissions=True)
    client.registry = _Registry()  # type: ignore[assignment]
    return client


async def test_the_client_records_the_admission_check_and_the_audit_counts_it() -> None:
    client = _client()
    try:
        await client._record_owners({"metadata": {"ownerReferences": [REF, {**REF, "kind": "Gone"}]}}, "ns1")
        assert client.used_permissions is not None
        used = {(u.verb, u.resource, u.subresource, u.namespace) for u in client.used_permissions}
        assert used == {("update", "echos", "finalizers", "ns1")}
        op = Operator("echo")
        op.reconcile(Echo, owns=[CONFIG_MAP])(_noop)
        _audit_finds_the_finalizers_rule_used(op, client)
    finally:
        await client.close()


def test_the_audit_says_why_an_unused_or_missing_finalizers_rule_matters() -> None:
    audit = RbacAudit(cluster_rules=[{"apiGroups": ["demo.kubeloop.dev"], "resources": ["echos/finalizers"],
                                      "verbs": ["update"]}])
    unused = audit.check([]).message
    assert "echos/finalizers" in unused and "OwnerReferencesPermissionEnforcement" in unused
    missing = RbacAudit().check([AccessRequest("update", "demo.kubeloop.dev", "echos", "finalizers",
                                               True, "ns1")])
    assert not missing.ok and "blockOwnerDeletion" in missing.message


# --- the 403 names the rule --------------------------------------------------------------------------------

RBAC_DENIAL = ('configmaps "hello-echo" is forbidden: User "system:serviceaccount:echo-system:echo" cannot patch '
               'resource "configmaps" in API group "" in the namespace "default"')
OWNER_DENIAL = ('configmaps "hello-echo" is forbidden: cannot set blockOwnerDeletion if an ownerReference refers '
                "to a resource you can't set finalizers on: , <nil>")


def test_forbidden_names_the_rule_the_authorizer_refused() -> None:
    exc = errors.error_from_status(403, {"kind": "Status", "code": 403, "reason": "Forbidden",
                                         "message": RBAC_DENIAL})
    assert isinstance(exc, errors.Forbidden)
    assert exc.rule == errors.Rule("patch", "", "configmaps", None, "default")
    assert "patch on configmaps (API group '') in namespace 'default'" in str(exc)
    assert "grant it" in exc.advice
    cluster = errors.Forbidden(403, "Forbidden", 'User "u" cannot list resource "chaosagents/status" in API '
                                                 'group "blackadder.io" at the cluster scope')
    assert cluster.rule == errors.Rule("list", "blackadder.io", "chaosagents", "status", None)
    assert "at the cluster scope" in cluster.advice


def test_forbidden_that_is_not_rbac_gives_no_rbac_advice() -> None:
    pod_security = errors.Forbidden(403, "Forbidden", 'pods "p" is forbidden: violates PodSecurity '
                                                      '"restricted:latest": allowPrivilegeEscalation != false')
    assert pod_security.rule is None and pod_security.advice == ""
    assert str(pod_security) == f"403 Forbidden: {pod_security.message}"


def _audit_finds_the_finalizers_rule_used(op: Operator, client: Any) -> None:
    """The RBAC generated for ``op`` covers what ``client`` used, the finalizers rule among what was used."""
    report = RbacAudit.from_manifests(render_rbac("echo", "echo-system", op.permissions())).check(
        client.used_permissions)
    assert report.ok, report.message
    assert not [p for p in report.unused if p.subresource == "finalizers"], report.message


async def _owner_denial_explained(generated: bool) -> errors.Forbidden:
    """The client's explanation of the admission plugin's owner-reference 403 for REF, the generated RBAC
    having the finalizers rule or not."""
    client = _client()
    client.generated_rbac = lambda rule: generated
    try:
        return await client._explained(errors.Forbidden(403, "Forbidden", OWNER_DENIAL),
                                       {"metadata": {"ownerReferences": [REF]}}, "default")
    finally:
        await client.close()


@pytest.mark.parametrize(("generated", "says"), [(True, "the generated RBAC has it"),
                                                 (False, "does not have it either: declare it")])
async def test_an_owner_reference_refusal_names_the_finalizers_rule(generated: bool, says: str) -> None:
    exc = await _owner_denial_explained(generated)
    assert exc.rule == errors.Rule("update", "demo.kubeloop.dev", "echos", "finalizers", "default")
    assert exc.generated is generated
    assert "update on echos/finalizers (API group 'demo.kubeloop.dev') in namespace 'default'" in exc.advice
    assert says in exc.advice


def test_generated_grants_answers_for_the_generated_rbac() -> None:
    op = Operator("echo")
    op.reconcile(Echo, owns=[CONFIG_MAP])(_noop)
    grants = generated_grants(op.permissions(), op.namespaced_permissions(), "echo-system")
    assert grants(errors.Rule("update", "demo.kubeloop.dev", "echos", "finalizers", "default"))
    assert grants(errors.Rule("create", "", "configmaps", None, "default"))
    assert not grants(errors.Rule("create", "", "secrets", None, "default"))
    assert grants(errors.Rule("create", "coordination.k8s.io", "leases", None, "echo-system"))  # its Role
    assert not grants(errors.Rule("create", "coordination.k8s.io", "leases", None, "default"))


async def test_a_manager_running_an_operator_lets_its_403s_say_what_the_generated_rbac_has() -> None:
    from kubeloop.manager import Manager, ManagerOptions

    op = Operator("echo")
    op.reconcile(Echo, owns=[CONFIG_MAP])(_noop)
    client = _client()
    try:
        manager = Manager(client, ManagerOptions(leader_election_namespace="echo-system",
                                                 metrics_bind_address="0", health_probe_bind_address="0"))
        manager.add_operator(op)
        assert client.generated_rbac is not None
        assert client.generated_rbac(errors.Rule("update", "demo.kubeloop.dev", "echos", "finalizers", "x"))
        assert not client.generated_rbac(errors.Rule("get", "", "secrets", None, "x"))
    finally:
        await client.close()


def test_an_owner_kind_the_admission_plugin_cannot_map_yet_is_not_called_a_missing_rule() -> None:
    # kube-apiserver 1.35's words while its REST mapper has not seen a CRD installed moments before
    unmapped = errors.Forbidden(403, "Forbidden", 'configmaps "g1-greeting" is forbidden: cannot set '
                                'blockOwnerDeletion in this case because cannot find RESTMapping for APIVersion '
                                'test.kubeloop.dev/v1 Kind Greeter: no matches for kind "Greeter" in version '
                                '"test.kubeloop.dev/v1"')
    unmapped.rule = errors.Rule("update", "test.kubeloop.dev", "greeters", "finalizers", "default")
    unmapped.generated = True
    assert unmapped.advice.startswith("not a missing rule") and "lacks" not in unmapped.advice


# --- ownerReferences set by hand, outside owns= ------------------------------------------------------------

def test_owner_references_set_by_hand_are_declared_with_owner_references_to() -> None:
    """kubeloop.helpers.ownership outside ``owns=`` (children watched with a label-selected Watch, say):
    ``op.owner_references_to(Owner)`` gives the generated RBAC the same rule as ``owns=``, and only it."""
    op = Operator("echo")
    op.reconcile(Echo, watches=[])(_noop)
    op.permission(CONFIG_MAP, ["create", "patch"])
    assert FINALIZERS not in op.permissions()
    op.owner_references_to(Echo, Fleet)
    assert FINALIZERS in op.permissions()
    assert Permission("demo.kubeloop.dev", "fleets", {"update"}, "finalizers", namespaced=False) in op.permissions()
    rules = [r for o in render_rbac("echo", "echo-system", op.permissions()) if o["kind"] == "ClusterRole"
             for r in o["rules"]]
    assert {"apiGroups": ["demo.kubeloop.dev"], "resources": ["echos/finalizers", "fleets/finalizers"],
            "verbs": ["update"]} in rules
    grants = generated_grants(op.permissions(), op.namespaced_permissions(), "echo-system")
    assert grants(errors.Rule("update", "demo.kubeloop.dev", "echos", "finalizers", "default"))
    assert not grants(errors.Rule("update", "demo.kubeloop.dev", "echos", None, "default")), "nothing else"


def test_owner_references_to_follows_the_settings() -> None:
    op = Operator("echo")
    op.reconcile(Echo)(_noop)
    op.owner_references_to(Echo, when=lambda settings: False)
    assert FINALIZERS not in op.permissions()


async def test_a_child_written_by_hand_uses_the_declared_rule_and_the_audit_counts_it() -> None:
    from kubeloop.helpers.ownership import set_controller

    op = Operator("echo")
    op.reconcile(Echo)(_noop)
    op.permission(CONFIG_MAP, ["create"])
    op.owner_references_to(Echo)
    owner = {"apiVersion": "demo.kubeloop.dev/v1", "kind": "Echo", "metadata": {"name": "e", "uid": "u"}}
    child = set_controller({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}, owner)
    client = _client()
    try:
        await client._record_owners(child, "ns1")
        assert client.used_permissions is not None
        _audit_finds_the_finalizers_rule_used(op, client)
    finally:
        await client.close()


async def test_a_refusal_for_an_undeclared_owner_names_owner_references_to() -> None:
    exc = await _owner_denial_explained(False)
    assert "op.owner_references_to(Owner)" in exc.advice and "op.permission" not in exc.advice
    other = errors.Forbidden(403, "Forbidden", RBAC_DENIAL)
    other.generated = False
    assert "op.permission(...)" in other.advice
