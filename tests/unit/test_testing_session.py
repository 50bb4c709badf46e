"""A test session's own cluster-scoped objects (kubeloop.testing.session): named and labelled per session,
held by runs, removed at the session's end; leftovers of dead sessions on this host swept, nothing else."""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

from kubeloop.client import Resource
from kubeloop.resources import render_rbac
from kubeloop.resources.rbac import Permission
from kubeloop.testing import FakeClient
from kubeloop.testing.session import OWNER_ANNOTATION, SESSION_LABEL, TestSession

RBAC_KINDS = (Resource("rbac.authorization.k8s.io", "v1", "clusterroles", "ClusterRole", namespaced=False),
              Resource("rbac.authorization.k8s.io", "v1", "clusterrolebindings", "ClusterRoleBinding",
                       namespaced=False),
              Resource("admissionregistration.k8s.io", "v1", "validatingwebhookconfigurations",
                       "ValidatingWebhookConfiguration", namespaced=False),
              Resource("admissionregistration.k8s.io", "v1", "mutatingwebhookconfigurations",
                       "MutatingWebhookConfiguration", namespaced=False))


def generated() -> list[dict[str, Any]]:
    perms = [Permission("", "configmaps", ("get", "list", "watch")),
             Permission("admissionregistration.k8s.io", "validatingwebhookconfigurations", ("patch",),
                        namespaced=False, names=("op-validating",))]
    return render_rbac("op", "t-ns", perms, [Permission("", "secrets", ("get",))], events="cluster")


def test_cluster_scoped_rbac_is_the_sessions_and_references_follow() -> None:
    session = TestSession(id="tabc")
    objs = session.rename(generated())
    by_kind: dict[str, list[dict[str, Any]]] = {}
    for o in objs:
        by_kind.setdefault(o["kind"], []).append(o)
    assert {o["metadata"]["name"] for o in by_kind["ClusterRole"]} == {"op-tabc"}
    binding = by_kind["ClusterRoleBinding"][0]
    assert binding["metadata"]["name"] == "op-tabc" and binding["roleRef"]["name"] == "op-tabc"
    assert binding["metadata"]["labels"][SESSION_LABEL] == "tabc"
    assert binding["metadata"]["annotations"][OWNER_ANNOTATION].startswith(f"{session.host} {os.getpid()} ")
    # The webhook configurations are the session's too: the patch-by-name rule names them.
    rule = next(r for r in by_kind["ClusterRole"][0]["rules"] if "validatingwebhookconfigurations" in r["resources"])
    assert rule["resourceNames"] == ["op-validating-tabc"]
    # Namespaced objects live in the test's namespace: unchanged, unlabelled.
    assert all(o["metadata"]["name"] == "op" and SESSION_LABEL not in (o["metadata"].get("labels") or {})
               for o in objs if o["kind"] in ("Role", "RoleBinding", "ServiceAccount"))
    assert generated()[1]["metadata"]["name"] == "op"  # the input is not modified


async def test_runs_hold_objects_and_the_last_one_out_deletes_them() -> None:
    client = FakeClient(resources=RBAC_KINDS)
    session = TestSession(id="tabc")
    objs = [o for o in session.rename(generated()) if o["kind"].startswith("Cluster")]
    for run in range(2):  # two nested runs of one operator
        for o in objs:
            session.acquire(o)
            if run == 0:
                await client.create(o)
    await session.release(client, objs)
    assert len((await client.list("clusterroles"))["items"]) == 1
    await session.release(client, objs)
    assert (await client.list("clusterroles"))["items"] == []
    assert (await client.list("clusterrolebindings"))["items"] == []


async def test_the_end_of_a_session_removes_its_labelled_objects_only() -> None:
    mine, other = TestSession(id="tmine"), TestSession(id="tother")
    user = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": "op"},
            "rules": []}
    client = FakeClient(user, *[o for s in (mine, other) for o in s.rename(generated()) if "Cluster" in o["kind"]],
                        resources=RBAC_KINDS)
    deleted = await mine.finish(client)
    assert sorted(deleted) == ["ClusterRole op-tmine", "ClusterRoleBinding op-tmine"]
    assert sorted(o["metadata"]["name"] for o in (await client.list("clusterroles"))["items"]) == ["op", "op-tother"]


async def test_sweep_removes_dead_sessions_of_this_host_only() -> None:
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead_pid = int(done.stdout)  # exited: its pid names no process (or another one, started later)
    dead = TestSession(id="tdead", pid=dead_pid)
    alive = TestSession(id="talive")  # this process: still running
    elsewhere = TestSession(id="tfar", host="another-host", pid=dead_pid)
    client = FakeClient(*[o for s in (dead, alive, elsewhere) for o in s.rename(generated()) if "Cluster" in o["kind"]],
                        resources=RBAC_KINDS)
    me = TestSession(id="tsweeper")
    swept = await me.sweep(client)
    assert sorted(swept) == ["ClusterRole op-tdead", "ClusterRoleBinding op-tdead"]
    left = sorted(o["metadata"]["name"] for o in (await client.list("clusterroles"))["items"])
    assert left == ["op-talive", "op-tfar"]


def crd(name: str, test_kit: bool = True) -> dict[str, Any]:
    plural, group = name.split(".", 1)
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": name, "labels": {"kubeloop.dev/test-crd": "true"} if test_kit else {}},
            "spec": {"group": group, "scope": "Namespaced", "names": {"plural": plural, "kind": "Gadget"},
                     "versions": [{"name": "v1", "served": True, "storage": True}]}}


async def test_the_end_of_a_session_deletes_the_crds_it_created_unless_someone_else_may_use_them() -> None:
    gadgets = Resource("example.com", "v1", "gadgets", "Gadget")
    test_ns = {"apiVersion": "v1", "kind": "Namespace",
               "metadata": {"name": "t-x", "labels": {"kubeloop.dev/test": "true"}}}
    users_ns = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "prod"}}
    gadget = {"apiVersion": "example.com/v1", "kind": "Gadget", "metadata": {"name": "g", "namespace": "t-x"}}

    client = FakeClient(crd("gadgets.example.com"), test_ns, gadget, resources=(*RBAC_KINDS, gadgets))
    session = TestSession(id="tmine")
    session.crds.add("gadgets.example.com")
    assert await session.finish(client) == ["CustomResourceDefinition gadgets.example.com"]

    # A gadget in a namespace that is not a test's: the CRD stays (deleting it would delete that gadget).
    users_gadget = {**gadget, "metadata": {"name": "g", "namespace": "prod"}}
    client = FakeClient(crd("gadgets.example.com"), users_ns, users_gadget, resources=(*RBAC_KINDS, gadgets))
    session.crds.add("gadgets.example.com")
    assert await session.finish(client) == []

    # Another session is running (it holds a labelled binding): the CRD stays for it.
    other = TestSession(id="tother")
    client = FakeClient(crd("gadgets.example.com"), *[o for o in other.rename(generated()) if "Cluster" in o["kind"]],
                        resources=(*RBAC_KINDS, gadgets))
    session.crds.add("gadgets.example.com")
    assert await session.finish(client) == []
    assert (await client.get("customresourcedefinitions", "gadgets.example.com"))["metadata"]["name"]
