"""RBAC: permission helpers, rule merging, rendered objects, and the audit of used vs granted."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from pydantic import BaseModel

from kubeloop.resources import (
    AccessRequest,
    CustomResource,
    Permission,
    RbacAudit,
    reconcile_permissions,
    render_rbac,
    request_from_http,
    rules_for,
    status_permissions,
    watch_permissions,
    write_permissions,
)
from kubeloop.resources.builtin import CONFIG_MAP, DEPLOYMENT, NODE, POD


class Spec(BaseModel):
    size: int = 1


class ChaosAgent(
    CustomResource, group="blackadder.io", version="v1alpha1", kind="ChaosAgent", scope="Cluster"
):
    spec: Spec
    status: dict[str, int] | None = None


def test_permission_helpers() -> None:
    assert watch_permissions(POD) == Permission("", "pods", {"get", "list", "watch"})
    assert write_permissions(DEPLOYMENT) == Permission(
        "apps", "deployments", {"create", "update", "patch", "delete"}
    )
    assert write_permissions(CONFIG_MAP, ["create"]) == Permission("", "configmaps", {"create"})
    assert status_permissions(ChaosAgent) == Permission(
        "blackadder.io", "chaosagents", {"get", "update", "patch"}, subresource="status", namespaced=False
    )
    assert watch_permissions(NODE).namespaced is False
    assert reconcile_permissions(ChaosAgent) == [
        Permission("blackadder.io", "chaosagents", {"get", "list", "watch"}, namespaced=False),
        Permission("blackadder.io", "chaosagents", {"update", "patch"}, namespaced=False),
        Permission("blackadder.io", "chaosagents", {"get", "update", "patch"}, "status", namespaced=False),
    ]


def test_permission_refuses_wildcards_and_empties() -> None:
    for args in [("", "*", ["get"]), ("*", "pods", ["get"]), ("", "pods", ["*"]), ("", "pods", ["get"], "*")]:
        with pytest.raises(ValueError, match="wildcards"):
            Permission(*args)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="at least one verb"):
        Permission("", "pods", [])
    assert Permission("", "pods", "get").verbs == frozenset({"get"})  # a single verb as a string


def test_rules_merge_per_group_and_verb_set() -> None:
    rules = rules_for(
        [
            watch_permissions(ChaosAgent),
            status_permissions(ChaosAgent),
            watch_permissions(POD),
            watch_permissions(CONFIG_MAP),
            write_permissions(CONFIG_MAP, ["create", "delete"]),
            write_permissions(CONFIG_MAP, ["update"]),
            watch_permissions(DEPLOYMENT),
            write_permissions(DEPLOYMENT, ["patch"]),
            watch_permissions(NODE),
        ]
    )
    assert rules == [
        {
            "apiGroups": [""],
            "resources": ["configmaps"],
            "verbs": ["get", "list", "watch", "create", "update", "delete"],
        },
        {"apiGroups": [""], "resources": ["nodes", "pods"], "verbs": ["get", "list", "watch"]},
        {"apiGroups": ["apps"], "resources": ["deployments"], "verbs": ["get", "list", "watch", "patch"]},
        {"apiGroups": ["blackadder.io"], "resources": ["chaosagents"], "verbs": ["get", "list", "watch"]},
        {
            "apiGroups": ["blackadder.io"],
            "resources": ["chaosagents/status"],
            "verbs": ["get", "update", "patch"],
        },
    ]
    for rule in rules:
        assert "*" not in str(rule)


def test_rules_are_independent_of_input_order() -> None:
    perms = [
        watch_permissions(POD),
        status_permissions(ChaosAgent),
        write_permissions(CONFIG_MAP),
        watch_permissions(CONFIG_MAP),
    ]
    assert rules_for(perms) == rules_for(reversed(perms))


def test_render_rbac() -> None:
    objs = render_rbac(
        "chaos",
        "chaos-system",
        [watch_permissions(ChaosAgent)],
        namespaced_permissions=[write_permissions(CONFIG_MAP, ["create"])],
    )
    assert [o["kind"] for o in objs] == [
        "ServiceAccount",
        "ClusterRole",
        "ClusterRoleBinding",
        "Role",
        "RoleBinding",
    ]
    sa, cr, crb, role, rb = objs
    assert sa["metadata"]["name"] == "chaos" and sa["metadata"]["namespace"] == "chaos-system"
    assert "namespace" not in cr["metadata"]
    assert cr["rules"] == [
        {"apiGroups": ["blackadder.io"], "resources": ["chaosagents"], "verbs": ["get", "list", "watch"]}
    ]
    assert crb["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "chaos"}
    assert crb["subjects"] == [{"kind": "ServiceAccount", "name": "chaos", "namespace": "chaos-system"}]
    assert role["metadata"]["namespace"] == "chaos-system"
    assert role["rules"] == [
        {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["create"]},
        {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "verbs": ["get", "create", "update"]},
        {"apiGroups": ["events.k8s.io"], "resources": ["events"], "verbs": ["create", "patch"]},
    ]
    assert rb["roleRef"]["kind"] == "Role" and rb["subjects"] == crb["subjects"]


def test_render_rbac_cluster_events_and_no_leader_election() -> None:
    objs = render_rbac("op", "ns", [watch_permissions(POD)], leader_election=False, events="cluster")
    assert [o["kind"] for o in objs] == ["ServiceAccount", "ClusterRole", "ClusterRoleBinding"]
    assert {"apiGroups": ["events.k8s.io"], "resources": ["events"], "verbs": ["create", "patch"]} in objs[1][
        "rules"
    ]


# ---------------------------------------------------------------------------------------------- audit

USED = [
    ("get", "blackadder.io", "chaosagents", None, False),
    ("list", "blackadder.io", "chaosagents", None, False),
    ("watch", "blackadder.io", "chaosagents", None, False),
    ("patch", "blackadder.io", "chaosagents", "status", False),
    ("list", "", "pods", None, False),
    ("watch", "", "pods", None, False),
    ("delete", "", "pods", None, True),
    ("get", "coordination.k8s.io", "leases", None, True),
    ("create", "coordination.k8s.io", "leases", None, True),
    ("update", "coordination.k8s.io", "leases", None, True),
    ("create", "events.k8s.io", "events", None, True),
]


def _manifests(*, pod_verbs: tuple[str, ...] = ("list", "watch", "delete")) -> list[dict]:
    return render_rbac(
        "chaos",
        "chaos-system",
        [
            watch_permissions(ChaosAgent),
            status_permissions(ChaosAgent, ["patch"]),
            Permission("", "pods", pod_verbs),
        ],
    )


def test_audit_clean() -> None:
    report = RbacAudit.from_manifests(_manifests()).check(USED)
    assert report.missing == ()
    # events patch is granted for the recorder's aggregation but was never needed here
    assert report.unused == (Permission("events.k8s.io", "events", {"patch"}),)
    assert report.ok


def test_audit_catches_a_deliberately_missing_verb() -> None:
    report = RbacAudit.from_manifests(_manifests(pod_verbs=("list", "watch"))).check(USED)
    assert report.missing == (AccessRequest("delete", "", "pods", None, True),)
    assert not report.ok
    assert "1 missing" in report.message
    assert "delete pods (in a namespace)" in report.message


def test_audit_reports_unused_grants() -> None:
    report = RbacAudit.from_manifests(
        _manifests(pod_verbs=("list", "watch", "delete", "deletecollection"))
    ).check(USED)
    assert Permission("", "pods", {"deletecollection"}) in report.unused
    assert "unused (granted but never used):\n" in report.message
    assert "  - deletecollection pods" in report.message


def test_audit_role_rules_do_not_cover_cluster_wide_requests() -> None:
    audit = RbacAudit.from_manifests(_manifests())
    assert audit.namespace == "chaos-system"
    report = audit.check([("list", "coordination.k8s.io", "leases", None, False)])
    assert report.missing == (AccessRequest("list", "coordination.k8s.io", "leases", None, False),)
    assert "(cluster-wide)" in report.message


def test_audit_role_rules_only_cover_their_namespace() -> None:
    @dataclass(frozen=True)
    class UsedPermission:  # the client's record shape
        verb: str
        group: str
        resource: str
        subresource: str | None
        namespace: str | None

    audit = RbacAudit.from_manifests(_manifests())
    report = audit.check(
        [
            UsedPermission("create", "events.k8s.io", "events", None, "chaos-system"),
            UsedPermission("create", "events.k8s.io", "events", None, "default"),
            UsedPermission("list", "", "pods", None, None),
        ]
    )
    assert report.missing == (AccessRequest("create", "events.k8s.io", "events", None, True, "default"),)
    assert "(in namespace default)" in report.message


def test_audit_subresources_need_their_own_grant() -> None:
    audit = RbacAudit(
        cluster_rules=[{"apiGroups": ["apps"], "resources": ["deployments"], "verbs": ["patch"]}]
    )
    report = audit.check(
        [AccessRequest("patch", "apps", "deployments", "status"), AccessRequest("patch", "apps", "deployments")]
    )
    assert report.missing == (AccessRequest("patch", "apps", "deployments", "status"),)


def test_audit_understands_hand_written_wildcards() -> None:
    audit = RbacAudit(
        cluster_rules=[
            {"apiGroups": ["*"], "resources": ["*"], "verbs": ["get"]},
            {"apiGroups": ["apps"], "resources": ["*/scale"], "verbs": ["update"]},
        ]
    )
    report = audit.check(
        [
            ("get", "apps", "deployments", None, True),
            ("update", "apps", "statefulsets", "scale"),
            ("update", "apps", "statefulsets", None),
        ]
    )
    assert report.missing == (AccessRequest("update", "apps", "statefulsets"),)
    assert report.unused == ()


@pytest.mark.parametrize(
    ("method", "path", "query", "expected"),
    [
        ("GET", "/api/v1/pods", "", AccessRequest("list", "", "pods", None, False)),
        ("GET", "/api/v1/namespaces/a/pods", "watch=true", AccessRequest("watch", "", "pods", None, True, "a")),
        ("GET", "/api/v1/namespaces/a/pods/p", "", AccessRequest("get", "", "pods", None, True, "a")),
        (
            "POST",
            "/api/v1/namespaces/a/pods/p/eviction",
            "",
            AccessRequest("create", "", "pods", "eviction", True, "a"),
        ),
        (
            "PATCH",
            "/apis/blackadder.io/v1alpha1/chaosagents/x/status",
            "",
            AccessRequest("patch", "blackadder.io", "chaosagents", "status", False),
        ),
        (
            "PUT",
            "/apis/coordination.k8s.io/v1/namespaces/s/leases/l",
            {},
            AccessRequest("update", "coordination.k8s.io", "leases", None, True, "s"),
        ),
        (
            "DELETE",
            "/apis/apps/v1/namespaces/s/deployments",
            "",
            AccessRequest("deletecollection", "apps", "deployments", namespace="s"),
        ),
        (
            "DELETE",
            "/apis/apps/v1/namespaces/s/deployments/d",
            "",
            AccessRequest("delete", "apps", "deployments", namespace="s"),
        ),
        ("GET", "/api/v1/namespaces/a", "", AccessRequest("get", "", "namespaces", None, False)),
        ("PUT", "/api/v1/namespaces/a/finalize", "", AccessRequest("update", "", "namespaces", "finalize", False)),
        ("GET", "/api/v1/namespaces", {"watch": True}, AccessRequest("watch", "", "namespaces", None, False)),
    ],
)
def test_request_from_http(method: str, path: str, query: object, expected: AccessRequest) -> None:
    assert request_from_http(method, path, query) == expected  # type: ignore[arg-type]


def test_request_from_http_rejects_non_resource_paths() -> None:
    with pytest.raises(ValueError):
        request_from_http("GET", "/healthz")
    with pytest.raises(ValueError):
        request_from_http("GET", "/apis/apps/v1")
