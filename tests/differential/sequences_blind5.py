"""The fifth blind differential suite, written on 2026-12-03 by a session blind to the fake API server.

What was read: ``tests/differential/harness.py`` (step types and normalisation), ``blind.py``, ``compare.py``,
``conftest.py``, ``play_real.py`` and the Echo CRD of ``tests/integration/conftest.py``; nothing of the fake,
of the earlier sequences or of the documentation. Each step was checked against kube-apiserver 1.35.4 only
(``tests.differential.play_real``) and was stable over two runs.
"""

from __future__ import annotations

from tests.differential.harness import APPLY, JSON, MERGE, STRATEGIC, Mark, Req, Step, Watch

CM = "/api/v1/namespaces/{ns}/configmaps"
SEC = "/api/v1/namespaces/{ns}/secrets"
ECHO = "/apis/test.kubeloop.dev/v1/namespaces/{ns}/echoes"
LEASE = "/apis/coordination.k8s.io/v1/namespaces/{ns}/leases"


def cm(name: str, **data: str) -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": data}


SEQUENCES: dict[str, list[Step]] = {
    "configmap_watch_from_mark_sees_add_modify_delete": [
        Mark("m0", CM),
        Req("POST", CM, cm("w1", a="1")),
        Req("PATCH", CM + "/w1", {"data": {"b": "2"}}, MERGE),
        Req("DELETE", CM + "/w1"),
        Watch(CM, since="m0", to_last_write=True),
    ],
    "configmap_json_patch_test_failure_and_bad_path": [
        Req("POST", CM, cm("j1", a="1")),
        Req("PATCH", CM + "/j1", [{"op": "test", "path": "/data/a", "value": "2"}], JSON),
        Req("PATCH", CM + "/j1", [{"op": "remove", "path": "/data/zz"}], JSON),
        Req("PATCH", CM + "/j1", [{"op": "replace", "path": "/data/a", "value": "9"}], JSON),
        Req("PATCH", CM + "/j1", [{"op": "bogus", "path": "/data/a"}], JSON),
        Req("PATCH", CM + "/j1", {"not": "a list"}, JSON),
        Req("GET", CM + "/j1"),
    ],
    "configmap_update_precondition_conflict_and_name_mismatch": [
        Req("POST", CM, cm("u1", a="1"), save={"rv1": "metadata.resourceVersion"}),
        Req("PUT", CM + "/u1", {**cm("u1", a="2"), "metadata": {"name": "u1", "resourceVersion": "{m:rv1}"}}),
        Req("PUT", CM + "/u1", {**cm("u1", a="3"), "metadata": {"name": "u1", "resourceVersion": "{m:rv1}"}}),
        Req("PUT", CM + "/u1", cm("other", a="3")),
        Req("PUT", CM + "/nope", {**cm("nope", a="1"), "metadata": {"name": "nope", "resourceVersion": "1"}}),
        Req("GET", CM + "/u1"),
    ],
    "secret_create_dry_run_and_invalid_data": [
        Req("POST", SEC, {"metadata": {"name": "s1"}, "stringData": {"k": "v"}}, params={"dryRun": "All"}),
        Req("GET", SEC + "/s1"),
        Req("POST", SEC, {"metadata": {"name": "s1"}, "data": {"k": "not base64!"}}),
        Req("POST", SEC, {"metadata": {"name": "s1"}, "data": {"bad key": "dg=="}}),
        Req("POST", SEC, {"metadata": {"name": "s1"}, "type": "kubernetes.io/tls", "data": {}}),
        Req("POST", SEC, {"metadata": {"name": "s1"}, "stringData": {"k": "v"}}),
        Req("PATCH", SEC + "/s1", {"type": "Other"}, MERGE),
    ],
    "generate_name_and_invalid_names": [
        Req("POST", CM, {"metadata": {"generateName": "gen-"}, "data": {"a": "1"}}),
        Req("POST", CM, {"metadata": {"name": "Bad_Name"}}),
        Req("POST", CM, {"metadata": {}}),
        Req("POST", CM, {"metadata": {"name": "x", "namespace": "other"}}),
        Req("POST", CM, {"metadata": {"name": "a" * 254}}),
    ],
    "label_selector_lists": [
        Req("POST", CM, {"metadata": {"name": "l1", "labels": {"app": "a", "tier": "x"}}}),
        Req("POST", CM, {"metadata": {"name": "l2", "labels": {"app": "b"}}}),
        Req("POST", CM, {"metadata": {"name": "l3", "labels": {"app": "a", "tier": "y"}}}),
        Req("GET", CM, params={"labelSelector": "app=a"}, pick=("items.*.metadata.name",)),
        Req("GET", CM, params={"labelSelector": "app in (a,b),tier!=x"}, pick=("items.*.metadata.name",)),
        Req("GET", CM, params={"labelSelector": "!tier,app"}, pick=("items.*.metadata.name",)),
        Req("GET", CM, params={"labelSelector": "app=(bad"}),
        Req("GET", CM, params={"fieldSelector": "metadata.name=l2"}, pick=("items.*.metadata.name",)),
        Req("GET", CM, params={"fieldSelector": "data.x=1"}),
    ],
    "list_chunking_with_continue": [
        Req("POST", CM, cm("c1")), Req("POST", CM, cm("c2")), Req("POST", CM, cm("c3")),
        Req("GET", CM, params={"limit": "2", "labelSelector": "!none"}, save={"cont": "metadata.continue"},
            pick=("items.*.metadata.name",)),
        Req("GET", CM, params={"limit": "2", "continue": "{m:cont}"},
            pick=("items.*.metadata.name", "metadata.continue")),
        Req("GET", CM, params={"continue": "garbage"}),
    ],
    "echo_field_validation_strict_ignore_and_schema": [
        Req("POST", ECHO, {"apiVersion": "test.kubeloop.dev/v1", "kind": "Echo", "metadata": {"name": "e1"},
                           "spec": {"message": "hi", "extra": 1}}, params={"fieldValidation": "Strict"}),
        Req("POST", ECHO, {"apiVersion": "test.kubeloop.dev/v1", "kind": "Echo", "metadata": {"name": "e1"},
                           "spec": {"message": "hi", "extra": 1}}, params={"fieldValidation": "Ignore"}),
        Req("POST", ECHO, {"apiVersion": "test.kubeloop.dev/v1", "kind": "Echo", "metadata": {"name": "e2"},
                           "spec": {"copies": -1}}),
        Req("POST", ECHO, {"apiVersion": "test.kubeloop.dev/v1", "kind": "Echo", "metadata": {"name": "e2"},
                           "spec": {"copies": "x"}}),
        Req("POST", ECHO, {"apiVersion": "test.kubeloop.dev/v1", "kind": "Echo", "metadata": {"name": "e3"}},
            params={"fieldValidation": "Nope"}),
        Req("GET", ECHO + "/e1"),
    ],
    "echo_status_subresource_ignores_spec": [
        Req("POST", ECHO, {"apiVersion": "test.kubeloop.dev/v1", "kind": "Echo", "metadata": {"name": "s"},
                           "spec": {"message": "a"}, "status": {"seen": "ignored"}}),
        Req("PATCH", ECHO + "/s/status", {"status": {"seen": "yes"}, "spec": {"message": "b"}}, MERGE),
        Req("PATCH", ECHO + "/s", {"status": {"seen": "no"}, "spec": {"message": "c"}}, MERGE),
        Req("GET", ECHO + "/s"),
        Req("GET", ECHO + "/missing/status"),
    ],
    "lease_server_side_apply_conflict_and_force": [
        Req("PATCH", LEASE + "/l", {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                                    "metadata": {"name": "l"}, "spec": {"holderIdentity": "a"}}, APPLY,
            params={"fieldManager": "one"}),
        Req("PATCH", LEASE + "/l", {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                                    "metadata": {"name": "l"}, "spec": {"holderIdentity": "b"}}, APPLY,
            params={"fieldManager": "two"}),
        Req("PATCH", LEASE + "/l", {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                                    "metadata": {"name": "l"}, "spec": {"holderIdentity": "b"}}, APPLY,
            params={"fieldManager": "two", "force": "true"}),
        Req("PATCH", LEASE + "/l", {"spec": {"holderIdentity": "c"}}, APPLY),
        Req("GET", LEASE + "/l", pick=("spec", "metadata.managedFields.*.manager")),
    ],
    "strategic_patch_on_configmap_and_crd": [
        Req("POST", CM, cm("sp", a="1")),
        Req("PATCH", CM + "/sp", {"data": {"b": "2", "a": None}}, STRATEGIC),
        Req("PATCH", ECHO + "/none", {"spec": {}}, STRATEGIC),
        Req("GET", CM + "/sp"),
    ],
    "delete_preconditions_and_deletecollection": [
        Req("POST", CM, {"metadata": {"name": "d1", "labels": {"g": "x"}}}, save={"uid": "metadata.uid"}),
        Req("POST", CM, {"metadata": {"name": "d2", "labels": {"g": "x"}}}),
        Req("POST", CM, {"metadata": {"name": "d3", "labels": {"g": "y"}}}),
        Req("DELETE", CM + "/d1", {"preconditions": {"uid": "00000000-0000-0000-0000-000000000000"}}),
        Req("DELETE", CM + "/d1", {"preconditions": {"resourceVersion": "1"}}),
        Req("DELETE", CM + "/d1", {"preconditions": {"uid": "{m:uid}"}}),
        Req("DELETE", CM + "/d1"),
        Req("DELETE", CM, params={"labelSelector": "g=x"}, pick=("kind", "items.*.metadata.name")),
        Req("GET", CM, params={"labelSelector": "g"}, pick=("items.*.metadata.name",)),
        Req("DELETE", CM + "/d3", {"propagationPolicy": "Sideways"}),
    ],
    "service_invalid_specs": [
        Req("POST", "/api/v1/namespaces/{ns}/services", {"metadata": {"name": "s"}, "spec": {"ports": []}}, brief=True),
        Req("POST", "/api/v1/namespaces/{ns}/services", {"metadata": {"name": "s"}, "spec": {
            "ports": [{"port": 0}]}}, brief=True),
        Req("POST", "/api/v1/namespaces/{ns}/services", {"metadata": {"name": "s"}, "spec": {
            "type": "Weird", "ports": [{"port": 80}]}}, brief=True),
        Req("POST", "/api/v1/namespaces/{ns}/services", {"metadata": {"name": "s"}, "spec": {
            "ports": [{"port": 80, "protocol": "TCP"}], "selector": {"app": "x"}}},
            pick=("spec.ports", "spec.selector", "spec.type", "spec.sessionAffinity")),
    ],
}
