"""Second blind suite of request sequences. It was written by a session that never read the fake API server,
the sequences the fake was tuned on or the fake's answers. The sequences follow what operators do
(controller-runtime's create-or-update and status writers, Kopf's and kube-rs's finalizer handling, client-go's
leader election and event recorder, kubectl's and Flux's server-side apply, custom schedulers binding pods)
and what the Kubernetes e2e and conformance tests check (consistent paging, watch-list, resourceVersion
semantics, garbage-collector chains, namespace finalization). Every step was checked against a real
kube-apiserver 1.35.4 only.

``{ns}`` stands for the sequence's namespace. Cluster-scoped names (namespaces, the CRD) contain it. Built-in
kinds that admission or controllers fill in are compared on picked fields only; ConfigMaps, Secrets, Leases,
Events and custom resources are compared whole."""

from __future__ import annotations

from typing import Any

from tests.differential.harness import APPLY, JSON, MERGE, STRATEGIC, Mark, Req, Step, WaitFor, WaitGone, Watch

CM = "/api/v1/namespaces/{ns}/configmaps"
SEC = "/api/v1/namespaces/{ns}/secrets"
SA = "/api/v1/namespaces/{ns}/serviceaccounts"
POD = "/api/v1/namespaces/{ns}/pods"
SVC = "/api/v1/namespaces/{ns}/services"
EV = "/api/v1/namespaces/{ns}/events"
EV2 = "/apis/events.k8s.io/v1/namespaces/{ns}/events"
NSS = "/api/v1/namespaces"
ECHO = "/apis/test.kubeloop.dev/v1/namespaces/{ns}/echoes"
DEP = "/apis/apps/v1/namespaces/{ns}/deployments"
RS = "/apis/apps/v1/namespaces/{ns}/replicasets"
STS = "/apis/apps/v1/namespaces/{ns}/statefulsets"
DS = "/apis/apps/v1/namespaces/{ns}/daemonsets"
JOB = "/apis/batch/v1/namespaces/{ns}/jobs"
CJ = "/apis/batch/v1/namespaces/{ns}/cronjobs"
LEASE = "/apis/coordination.k8s.io/v1/namespaces/{ns}/leases"
CRD = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
WIDGET = "/apis/{ns}.kubeloop.dev/v1/namespaces/{ns}/widgets"

ITEM_NAMES = ("items.*.metadata.name",)
DATA = ("data",)
# A deletion's Status (or the object, when it lingers)
GONE = ("kind", "status", "details.name", "details.kind", "metadata.name")
# The Echo without its managedFields (see the sequences that use it)
ECHOF = ("metadata.name", "metadata.generation", "metadata.labels", "metadata.annotations", "metadata.finalizers",
         "metadata.deletionTimestamp", "spec", "status")


def mgr(name: str, force: bool = False, **more: str) -> dict[str, str]:
    """Query parameters naming a field manager (and forcing an apply)."""
    params = {"fieldManager": name, **more}
    if force:
        params["force"] = "true"
    return params


def config(name: str, data: dict[str, str] | None = None, *, labels: dict[str, str] | None = None,
           annotations: dict[str, str] | None = None, meta: dict[str, Any] | None = None,
           **top: Any) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name, **(meta or {})}
    if labels is not None:
        metadata["labels"] = labels
    if annotations is not None:
        metadata["annotations"] = annotations
    out: dict[str, Any] = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": metadata}
    if data is not None:
        out["data"] = data
    out.update(top)
    return out


def sec(name: str, data: dict[str, str] | None = None, kind: str | None = None,
        meta: dict[str, Any] | None = None, **top: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": name, **(meta or {})}}
    if kind:
        out["type"] = kind
    if data is not None:
        out["data"] = data
    out.update(top)
    return out


def cr(name: str, message: str | None = "hello", copies: int | None = None, **meta: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {}
    if message is not None:
        spec["message"] = message
    if copies is not None:
        spec["copies"] = copies
    return {"apiVersion": "test.kubeloop.dev/v1", "kind": "Echo", "metadata": {"name": name, **meta}, "spec": spec}


def cr_status(name: str, **status: Any) -> dict[str, Any]:
    """An apply body for the Echo status subresource."""
    return {"apiVersion": "test.kubeloop.dev/v1", "kind": "Echo", "metadata": {"name": name}, "status": status}


def ref(kind: str, name: str, uid: str, api: str = "test.kubeloop.dev/v1", controller: bool = False,
        block: bool = False) -> dict[str, Any]:
    return {"apiVersion": api, "kind": kind, "name": name, "uid": uid, "controller": controller,
            "blockOwnerDeletion": block}


def workload_pod(name: str, *, node: str | None = "diff-node", labels: dict[str, str] | None = None,
                 image: str = "registry.k8s.io/pause:3.10", **spec: Any) -> dict[str, Any]:
    pod_spec: dict[str, Any] = {"containers": [{"name": "main", "image": image}], **spec}
    if node is not None:
        pod_spec["nodeName"] = node  # an idle node: no kubelet and no scheduler touch the pod
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "labels": labels if labels is not None else {"run": name}},
            "spec": pod_spec}


PODF = ("metadata.name", "metadata.labels", "spec.nodeName", "spec.schedulerName", "spec.restartPolicy",
        "spec.containers.*.name", "spec.containers.*.image", "spec.containers.*.imagePullPolicy",
        "spec.enableServiceLinks", "spec.priority", "spec.serviceAccountName", "status.phase")


def dep(name: str, replicas: int | None = 1, image: str = "nginx:1.27", *, pod_spec: dict[str, Any] | None = None,
        labels: dict[str, str] | None = None, **spec: Any) -> dict[str, Any]:
    match = labels or {"app": name}
    body_spec: dict[str, Any] = {
        "selector": {"matchLabels": match},
        "template": {"metadata": {"labels": match},
                     "spec": pod_spec or {"containers": [{"name": "web", "image": image}]}}, **spec}
    if replicas is not None:
        body_spec["replicas"] = replicas
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name}, "spec": body_spec}


DEPF = ("metadata.name", "metadata.generation", "spec.replicas", "spec.selector", "spec.strategy",
        "spec.template.metadata", "spec.template.spec.containers.*.name", "spec.template.spec.containers.*.image",
        "spec.template.spec.restartPolicy", "spec.revisionHistoryLimit", "spec.progressDeadlineSeconds")


def sts(name: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": name}, "spec": {
        "replicas": 0, "serviceName": f"{name}-headless", "selector": {"matchLabels": {"store": name}},
        "template": {"metadata": {"labels": {"store": name}},
                     "spec": {"containers": [{"name": "kv", "image": "redis:7.4"}]}}, **spec}}


STSF = ("metadata.name", "metadata.generation", "spec.replicas", "spec.ordinals", "spec.updateStrategy",
        "spec.persistentVolumeClaimRetentionPolicy", "spec.podManagementPolicy", "spec.revisionHistoryLimit")


def ds(name: str, **pod: Any) -> dict[str, Any]:
    pod_spec = {"nodeSelector": {"kubeloop.dev/absent": "yes"},  # matches no node: no daemon pod anywhere
                "containers": [{"name": "probe", "image": "busybox:1.37", "command": ["sleep", "inf"]}], **pod}
    return {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": name}, "spec": {
        "selector": {"matchLabels": {"daemon": name}},
        "template": {"metadata": {"labels": {"daemon": name}}, "spec": pod_spec}}}


DSF = ("metadata.name", "metadata.generation", "spec.updateStrategy", "spec.revisionHistoryLimit",
       "spec.template.spec.containers.*.image", "spec.template.spec.restartPolicy")


def batch_job(name: str, suspend: bool = True, restart: str = "Never", command: tuple[str, ...] = ("true",),
              **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name}, "spec": {
        "suspend": suspend, "template": {"spec": {"restartPolicy": restart, "containers": [
            {"name": "task", "image": "busybox:1.37", "command": list(command)}]}}, **spec}}


JOBF = ("metadata.name", "spec.suspend", "spec.completions", "spec.parallelism", "spec.backoffLimit",
        "spec.activeDeadlineSeconds", "spec.ttlSecondsAfterFinished", "spec.manualSelector", "spec.selector",
        "spec.podFailurePolicy", "spec.template.metadata.labels")


def cron(name: str, schedule: str = "@daily", **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": name}, "spec": {
        "schedule": schedule, "suspend": True, "jobTemplate": {"spec": {"template": {"spec": {
            "restartPolicy": "Never", "containers": [{"name": "sweep", "image": "busybox:1.37"}]}}}}, **spec}}


CJF = ("metadata.name", "spec.schedule", "spec.suspend", "spec.timeZone", "spec.concurrencyPolicy",
       "spec.successfulJobsHistoryLimit", "spec.failedJobsHistoryLimit")


def svc(name: str, ports: list[dict[str, Any]] | None = None, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name, "labels": {"svc": "yes"}},
            "spec": {"selector": {"app": name}, "ports": [{"name": "http", "port": 80}] if ports is None else ports,
                     **spec}}


SVCF = ("metadata.name", "spec.type", "spec.ports.*.name", "spec.ports.*.port", "spec.ports.*.targetPort",
        "spec.ports.*.protocol", "spec.sessionAffinity", "spec.sessionAffinityConfig", "spec.ipFamilyPolicy",
        "spec.externalTrafficPolicy", "spec.allocateLoadBalancerNodePorts")  # no clusterIP: allocated at random


def lease(name: str, holder: str | None, rv: str | None = None, renew: str = "2026-01-01T10:00:05.000000Z",
          acquired: str = "2026-01-01T10:00:00.000000Z", transitions: int = 0,
          labels: dict[str, str] | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if rv is not None:
        meta["resourceVersion"] = rv
    if labels:
        meta["labels"] = labels
    spec: dict[str, Any] = {"leaseDurationSeconds": 15, "acquireTime": acquired, "renewTime": renew,
                            "leaseTransitions": transitions}
    if holder is not None:
        spec["holderIdentity"] = holder
    return {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": meta, "spec": spec}


def ns_body(name: str, **spec: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
    if spec:
        out["spec"] = spec
    return out


NSF = ("metadata.name", "spec.finalizers", "status.phase")


WIDGET_CRD: dict[str, Any] = {
    "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
    "metadata": {"name": "widgets.{ns}.kubeloop.dev"},
    "spec": {
        "group": "{ns}.kubeloop.dev", "scope": "Namespaced",
        "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
        "versions": [{
            "name": "v1", "served": True, "storage": True,
            "subresources": {"status": {}, "scale": {"specReplicasPath": ".spec.replicas",
                                                     "statusReplicasPath": ".status.replicas"}},
            "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                "spec": {
                    "type": "object", "required": ["size"],
                    "x-kubernetes-validations": [{"rule": "self.size <= 5 || self.mode == 'safe'",
                                                  "message": "a widget bigger than 5 must be safe"}],
                    "properties": {
                        "size": {"type": "integer", "minimum": 1, "maximum": 10},
                        "replicas": {"type": "integer", "minimum": 0},
                        "mode": {"type": "string", "enum": ["safe", "fast"], "default": "safe"},
                        "zone": {"type": "string", "x-kubernetes-validations": [
                            {"rule": "self == oldSelf", "message": "zone cannot change"}]},
                        "ports": {"type": "array", "x-kubernetes-list-type": "map",
                                  "x-kubernetes-list-map-keys": ["name"], "items": {
                                      "type": "object", "required": ["name"], "properties": {
                                          "name": {"type": "string"}, "port": {"type": "integer"}}}}}},
                "status": {"type": "object", "properties": {"replicas": {"type": "integer"}}}}}},
        }],
    },
}


def widget(name: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "{ns}.kubeloop.dev/v1", "kind": "Widget", "metadata": {"name": name}, "spec": spec}


def core_ev(name: str, count: int = 1, **extra: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Event", "metadata": {"name": name},
            "involvedObject": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web", "namespace": "{ns}",
                               "uid": "1f0e6a5c-0000-4000-8000-00000000d001"},
            "reason": "ScalingReplicaSet", "message": "Scaled up replica set web-1 to 1", "type": "Normal",
            "source": {"component": "deployment-controller"}, "count": count,
            "firstTimestamp": "2026-01-01T09:00:00Z", "lastTimestamp": "2026-01-01T09:00:00Z", **extra}


def series_ev(name: str, **extra: Any) -> dict[str, Any]:
    return {"apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": {"name": name},
            "eventTime": "2026-01-01T09:00:00.000000Z", "reportingController": "kubeloop.dev/widget-operator",
            "reportingInstance": "widget-operator-7c9f", "action": "Sync", "reason": "SyncFailed",
            "regarding": {"apiVersion": "v1", "kind": "ConfigMap", "name": "app", "namespace": "{ns}"},
            "note": "could not sync app", "type": "Warning", **extra}


SEQUENCES: dict[str, list[Step]] = {
    # === ConfigMaps ============================================================================================
    "cm_create_or_update_like_controller_runtime": [
        Req("GET", f"{CM}/app-config"),
        Req("POST", CM, config("app-config", {"level": "info"}, labels={"app.kubernetes.io/managed-by": "op"}),
            save={"rv1": "metadata.resourceVersion"}),
        Req("GET", f"{CM}/app-config"),
        # an update that changes nothing keeps the resourceVersion
        Req("PUT", f"{CM}/app-config", config("app-config", {"level": "info"}, labels={
            "app.kubernetes.io/managed-by": "op"}, meta={"resourceVersion": "{m:rv1}"})),
        Req("PUT", f"{CM}/app-config", config("app-config", {"level": "debug"}, labels={
            "app.kubernetes.io/managed-by": "op"}, meta={"resourceVersion": "{m:rv1}"})),
        Req("PUT", f"{CM}/app-config", config("app-config", {"level": "warn"}, labels={
            "app.kubernetes.io/managed-by": "op"}, meta={"resourceVersion": "{m:rv1}"})),
        Req("GET", f"{CM}/app-config", save={"rv2": "metadata.resourceVersion"}),
        Req("PUT", f"{CM}/app-config", config("app-config", {"level": "warn"}, labels={
            "app.kubernetes.io/managed-by": "op"}, annotations={"op/hash": "abc"},
            meta={"resourceVersion": "{m:rv2}"})),
        Req("POST", CM, config("app-config", {"level": "other"})),
        Req("POST", CM, config("app-extra", {"k": "v"}, labels={"app.kubernetes.io/managed-by": "op"})),
        Req("GET", CM, params={"labelSelector": "app.kubernetes.io/managed-by=op"}),
        Req("DELETE", f"{CM}/app-config"),
        Req("GET", f"{CM}/app-config"),
        Req("GET", CM, params={"labelSelector": "app.kubernetes.io/managed-by"}, pick=ITEM_NAMES),
    ],
    "cm_json_patch_operations": [
        Req("POST", CM, config("jp", {"a": "1", "b": "2"})),
        Req("PATCH", f"{CM}/jp", [{"op": "add", "path": "/data/c", "value": "3"}], JSON),
        Req("PATCH", f"{CM}/jp", [{"op": "remove", "path": "/data/a"}], JSON),
        Req("PATCH", f"{CM}/jp", [{"op": "replace", "path": "/data/b", "value": "22"}], JSON),
        Req("PATCH", f"{CM}/jp", [{"op": "copy", "from": "/data/b", "path": "/data/d"},
                                  {"op": "move", "from": "/data/c", "path": "/data/e"}], JSON),
        Req("PATCH", f"{CM}/jp", [{"op": "test", "path": "/data/b", "value": "2"},
                                  {"op": "replace", "path": "/data/b", "value": "never"}], JSON),
        Req("PATCH", f"{CM}/jp", [{"op": "remove", "path": "/data/missing"}], JSON),
        Req("PATCH", f"{CM}/jp", [{"op": "replace", "path": "/data/missing", "value": "x"}], JSON),
        Req("PATCH", f"{CM}/jp", [{"op": "add", "path": "/metadata/labels/tier", "value": "x"}], JSON),
        Req("PATCH", f"{CM}/jp", [{"op": "add", "path": "/metadata/labels", "value": {}},
                                  {"op": "add", "path": "/metadata/labels/example.com~1tier", "value": "gold"}], JSON),
        Req("PATCH", f"{CM}/jp", [{"op": "frobnicate", "path": "/data/b"}], JSON),
        Req("PATCH", f"{CM}/jp", {"op": "add", "path": "/data/z", "value": "1"}, JSON),
        Req("PATCH", f"{CM}/jp", [], JSON),
        # brief: the real message quotes the whole patched object, raw resourceVersion included
        Req("PATCH", f"{CM}/jp", [{"op": "add", "path": "/data/n", "value": 7}], JSON, brief=True),
        Req("GET", f"{CM}/jp"),
    ],
    "cm_strategic_merge_directives": [
        Req("POST", CM, config("smp", {"a": "1", "b": "2"}, meta={"finalizers": ["example.com/keep"]})),
        Req("PATCH", f"{CM}/smp", {"data": {"c": "3", "a": None}}, STRATEGIC),
        Req("PATCH", f"{CM}/smp", {"data": {"$patch": "replace", "only": "this"}}, STRATEGIC),
        Req("PATCH", f"{CM}/smp", {"metadata": {"finalizers": ["example.com/second"]}}, STRATEGIC),
        Req("PATCH", f"{CM}/smp", {"metadata": {"$deleteFromPrimitiveList/finalizers": ["example.com/keep"]}},
            STRATEGIC),
        Req("PATCH", f"{CM}/smp", {"data": {"$patch": "bogus"}}, STRATEGIC),
        Req("PATCH", f"{CM}/smp", [{"data": {"x": "1"}}], STRATEGIC),
        Req("PATCH", f"{CM}/smp", {"data": {"x": "1"}}, "text/plain"),
        Req("PATCH", f"{CM}/smp", {"metadata": {"finalizers": ["example.com/second"]}}, MERGE),
        Req("DELETE", f"{CM}/smp"),
        Req("GET", f"{CM}/smp"),
        Req("PATCH", f"{CM}/smp", {"metadata": {"finalizers": None}}, MERGE),
        Req("GET", f"{CM}/smp"),
    ],
    "cm_apply_like_kubectl_server_side": [
        Req("PATCH", f"{CM}/applied", config("applied", {"a": "1", "b": "2"}, labels={"app": "applied"}), APPLY,
            params=mgr("kubectl")),
        Req("PATCH", f"{CM}/applied", config("applied", {"a": "1", "b": "2"}, labels={"app": "applied"}), APPLY,
            params=mgr("kubectl")),
        Req("PATCH", f"{CM}/applied", config("applied", {"a": "1"}, labels={"app": "applied"}), APPLY,
            params=mgr("kubectl")),
        Req("PATCH", f"{CM}/applied", config("applied", {"a": "2"}), APPLY, params=mgr("kubectl", dryRun="All")),
        Req("GET", f"{CM}/applied"),
        Req("PATCH", f"{CM}/applied", config("not-applied", {"a": "1"}), APPLY, params=mgr("kubectl")),
        Req("PATCH", f"{CM}/applied", {"apiVersion": "v1", "metadata": {"name": "applied"}, "data": {"a": "1"}},
            APPLY, params=mgr("kubectl")),
        Req("PATCH", f"{CM}/applied", config("applied", {"a": "3"}, meta={"resourceVersion": "1"}), APPLY,
            params=mgr("kubectl")),
        Req("PATCH", f"{CM}/applied", config("applied", {"a": "1"}), APPLY, params=mgr("m" * 129)),
        Req("PATCH", f"{CM}/applied", config("applied", {"a": "4"}, labels={"app": "applied"}), APPLY,
            params=mgr("kubectl", force=True)),
        Req("PATCH", f"{CM}/applied-new", config("applied-new", {"z": "9"}), APPLY,
            params=mgr("kubectl", force=True)),
        Req("GET", f"{CM}/applied", pick=("data", "metadata.labels", "metadata.managedFields.*.manager",
                                          "metadata.managedFields.*.operation")),
        Req("DELETE", f"{CM}/applied-new"),
    ],
    # picked: the real order of several Apply entries in managedFields depends on whether they were written
    # within the same second (they are sorted by time, then by manager)
    "cm_apply_against_update_managers": [
        Req("PATCH", f"{CM}/mixed", config("mixed", {"owned": "1"}), APPLY, params=mgr("flux"), pick=DATA),
        Req("PATCH", f"{CM}/mixed", {"data": {"extra": "ctl"}}, MERGE, params=mgr("controller"), pick=DATA),
        Req("PATCH", f"{CM}/mixed", config("mixed", {"owned": "1", "extra": "flux"}), APPLY, params=mgr("flux"),
            pick=DATA),
        Req("PATCH", f"{CM}/mixed", config("mixed", {"owned": "2"}), APPLY, params=mgr("flux"), pick=DATA),
        Req("GET", f"{CM}/mixed", pick=DATA),
        Req("PATCH", f"{CM}/mixed", config("mixed", {"owned": "2", "extra": "flux"}), APPLY,
            params=mgr("flux", force=True), pick=DATA),
        Req("PUT", f"{CM}/mixed", config("mixed", {"owned": "edited", "extra": "flux"}), params=mgr("kubectl-edit"),
            pick=DATA),
        Req("PATCH", f"{CM}/mixed", config("mixed", {"owned": "2", "extra": "flux"}), APPLY, params=mgr("flux"),
            pick=DATA),
        Req("PATCH", f"{CM}/mixed", config("mixed", {"shared": "same"}), APPLY, params=mgr("alpha"), pick=DATA),
        Req("PATCH", f"{CM}/mixed", config("mixed", {"shared": "same"}), APPLY, params=mgr("beta"), pick=DATA),
        Req("PATCH", f"{CM}/mixed", config("mixed"), APPLY, params=mgr("beta"), pick=DATA),
        Req("PATCH", f"{CM}/mixed", config("mixed"), APPLY, params=mgr("alpha"), pick=DATA),
        Req("GET", f"{CM}/mixed", pick=DATA),
    ],
    "cm_list_paging_is_a_consistent_snapshot": [
        *[Req("POST", CM, config(f"page-{i}", {"v": "old"}, labels={"set": "paged"})) for i in range(1, 6)],
        Req("GET", CM, params={"labelSelector": "set=paged", "limit": "2"}, save={"next": "metadata.continue"}),
        Req("PATCH", f"{CM}/page-4", {"data": {"v": "new"}}, MERGE),
        Req("DELETE", f"{CM}/page-3"),
        Req("POST", CM, config("page-0", {"v": "new"}, labels={"set": "paged"})),
        Req("GET", CM, params={"labelSelector": "set=paged", "limit": "2", "continue": "{m:next}"},
            save={"next2": "metadata.continue"}),
        Req("GET", CM, params={"labelSelector": "set=paged", "limit": "2", "continue": "{m:next2}"}),
        Req("GET", CM, params={"labelSelector": "set=paged"}, pick=("items.*.metadata.name", "items.*.data")),
        Req("GET", CM, params={"labelSelector": "set=paged", "limit": "2", "continue": "{m:next}",
                               "resourceVersion": "1"}),
        Req("GET", CM, params={"labelSelector": "set=paged", "limit": "4"}, pick=ITEM_NAMES),
    ],
    "cm_resource_version_semantics": [
        Mark("before", CM),
        Req("POST", CM, config("rvs", {"v": "1"}, labels={"rvs": "yes"}), save={"first": "metadata.resourceVersion"}),
        Req("PATCH", f"{CM}/rvs", {"data": {"v": "2"}}, MERGE),
        Req("GET", CM, params={"labelSelector": "rvs=yes", "resourceVersion": "{m:first}",
                               "resourceVersionMatch": "Exact"}),
        Req("GET", CM, params={"labelSelector": "rvs=yes", "resourceVersion": "{rv:before}",
                               "resourceVersionMatch": "Exact"}),
        Req("GET", CM, params={"labelSelector": "rvs=yes", "resourceVersion": "{m:first}",
                               "resourceVersionMatch": "NotOlderThan"}, pick=("items.*.data",)),
        Req("GET", CM, params={"labelSelector": "rvs=yes", "resourceVersionMatch": "Exact"}),
        Req("GET", CM, params={"labelSelector": "rvs=yes", "resourceVersion": "{m:first}",
                               "resourceVersionMatch": "Newest"}),
        Req("GET", CM, params={"labelSelector": "rvs=yes", "resourceVersion": "abc"}),
        Req("GET", f"{CM}/rvs", params={"resourceVersion": "999999999999"}),
        Watch(CM, since="first", params={"labelSelector": "rvs=yes"}),
        Req("DELETE", f"{CM}/rvs", {"apiVersion": "v1", "kind": "DeleteOptions",
                                    "preconditions": {"resourceVersion": "{m:first}"}}, brief=True),
        Req("DELETE", f"{CM}/rvs", {"apiVersion": "v1", "kind": "DeleteOptions", "gracePeriodSeconds": 0}),
    ],
    "cm_watch_list_and_initial_events": [
        Req("POST", CM, config("init-b", {"k": "b"}, labels={"w": "init"})),
        Req("POST", CM, config("init-a", {"k": "a"}, labels={"w": "init"})),
        # a later write whose resourceVersion is not recorded: the initial-events-end bookmark (at the store's
        # current resourceVersion) is then newer than every resourceVersion compared, however busy the cluster
        Req("POST", SEC, sec("init-marker", {"k": "dg=="}), pick=("metadata.name",)),
        Watch(CM, params={"sendInitialEvents": "true", "resourceVersionMatch": "NotOlderThan",
                          "allowWatchBookmarks": "true", "labelSelector": "w=init"}),
        Watch(CM, params={"labelSelector": "w=init"}),
        Watch(CM, params={"labelSelector": "w=init", "resourceVersion": "0"}),
        Watch(CM, params={"sendInitialEvents": "true", "labelSelector": "w=init"}),
        Watch(CM, params={"sendInitialEvents": "true", "resourceVersionMatch": "NotOlderThan",
                          "labelSelector": "w=init"}),
        Watch(CM, params={"labelSelector": "w=init", "resourceVersionMatch": "Exact", "resourceVersion": "0"}),
    ],
    "cm_watch_one_object_by_name": [
        Req("POST", CM, config("watched", {"k": "0"})),
        Mark("m", CM),
        Req("PATCH", f"{CM}/watched", {"data": {"k": "1"}}, MERGE),
        Req("POST", CM, config("bystander", {"k": "0"})),
        Req("PATCH", f"{CM}/watched", {"metadata": {"labels": {"seen": "yes"}}}, MERGE),
        Req("PATCH", f"{CM}/bystander", {"data": {"k": "1"}}, MERGE),
        Req("DELETE", f"{CM}/bystander"),
        Req("DELETE", f"{CM}/watched"),
        Watch(CM, since="m", params={"fieldSelector": "metadata.name=watched"}),
        Watch(CM, since="m", params={"fieldSelector": "metadata.name=bystander"}),
        Watch(CM, since="m"),
        Watch(CM, params={"fieldSelector": "metadata.name=watched"}),
    ],
    "cm_field_validation_modes": [
        Req("POST", CM, {**config("fv-strict", {"k": "v"}), "bogus": 1}, params={"fieldValidation": "Strict"}),
        Req("POST", CM, {**config("fv-ignore", {"k": "v"}, labels={"fv": "y"}), "bogus": 1},
            params={"fieldValidation": "Ignore"}),
        Req("POST", CM, {**config("fv-warn", {"k": "v"}, labels={"fv": "y"}), "bogus": 1},
            params={"fieldValidation": "Warn"}),
        Req("POST", CM, config("fv-meta", {"k": "v"}, meta={"nonsense": True}), params={"fieldValidation": "Strict"}),
        Req("POST", CM, config("fv-ok", {"k": "v"}, labels={"fv": "y"}), params={"fieldValidation": "Strict"}),
        Req("POST", CM, config("fv-mode", {"k": "v"}), params={"fieldValidation": "Pedantic"}),
        Req("PUT", f"{CM}/fv-ok", {**config("fv-ok", {"k": "w"}), "extra": {}}, params={"fieldValidation": "Strict"}),
        Req("PATCH", f"{CM}/fv-ok", {"extra": 1}, MERGE, params={"fieldValidation": "Strict"}, brief=True),
        Req("PATCH", f"{CM}/fv-ok", {"extra": 1, "data": {"k": "x"}}, MERGE),
        Req("PATCH", f"{CM}/fv-ok", [{"op": "add", "path": "/extra", "value": 1}], JSON,
            params={"fieldValidation": "Strict"}, brief=True),
        Req("PATCH", f"{CM}/fv-ok", {**config("fv-ok", {"k": "y"}), "extra": 1}, APPLY,
            params=mgr("tool", fieldValidation="Strict")),
        Req("GET", CM, params={"labelSelector": "fv"}, pick=("items.*.metadata.name", "items.*.data")),
    ],
    "cm_metadata_the_server_owns": [
        Req("POST", CM, config("meta", {"k": "v"}), save={"uid": "metadata.uid", "rv": "metadata.resourceVersion"}),
        Req("PUT", f"{CM}/meta", config("meta", {"k": "w"}, meta={"namespace": "default"})),
        Req("PUT", f"{CM}/meta", config("meta", {"k": "w"}, meta={
            "uid": "0b2f3c4d-0000-4000-8000-000000000042", "resourceVersion": "{m:rv}"})),
        # brief: on update the real server reports metadata causes twice
        Req("PATCH", f"{CM}/meta", {"metadata": {"uid": "0b2f3c4d-0000-4000-8000-000000000043"}}, MERGE, brief=True),
        Req("PATCH", f"{CM}/meta", {"metadata": {"creationTimestamp": "2001-01-01T00:00:00Z"}}, MERGE,
            pick=("metadata.creationTimestamp", "data")),
        Req("PATCH", f"{CM}/meta", {"metadata": {"generation": 7}}, MERGE, pick=("metadata.generation",)),
        Req("PATCH", f"{CM}/meta", {"metadata": {"deletionTimestamp": "2030-01-01T00:00:00Z"}}, MERGE,
            pick=("metadata.deletionTimestamp",), brief=True),
        Req("PATCH", f"{CM}/meta", {"metadata": {"managedFields": []}, "data": {"k": "reset"}}, MERGE),
        Req("PATCH", f"{CM}/meta", {"metadata": {"name": "renamed"}}, MERGE),
        Req("PATCH", f"{CM}/meta", {"metadata": {"labels": {"long": "v" * 63}}}, MERGE, pick=("metadata.labels",)),
        Req("PATCH", f"{CM}/meta", {"metadata": {"labels": {"long": "v" * 64}}}, MERGE, brief=True),
        Req("PATCH", f"{CM}/meta", {"metadata": {"annotations": {"huge": "x" * 262200}}}, MERGE, brief=True),
        Req("GET", f"{CM}/meta"),
    ],
    # === Secrets ===============================================================================================
    "secret_service_account_token_lifecycle": [
        Req("POST", SA, {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "robot"}},
            pick=("metadata.name",)),
        Req("POST", SEC, sec("robot-token", kind="kubernetes.io/service-account-token",
                             meta={"annotations": {"kubernetes.io/service-account.name": "robot"}}),
            pick=("metadata.name", "type", "data")),
        WaitFor(f"{SEC}/robot-token", "data.token", "<set>"),
        Req("GET", f"{SEC}/robot-token", pick=("metadata.name", "metadata.annotations", "type")),
        Req("POST", SEC, sec("nobody-token", kind="kubernetes.io/service-account-token")),
        Req("PATCH", f"{SEC}/robot-token", {"type": "Opaque"}, MERGE),
        Req("DELETE", f"{SA}/robot", pick=("metadata.name",)),
        WaitGone(f"{SEC}/robot-token"),
        Req("GET", f"{SEC}/robot-token"),
    ],
    "secret_type_rules": [
        Req("POST", SEC, sec("basic", {"username": "YWRtaW4=", "password": "cGFzcw=="}, "kubernetes.io/basic-auth")),
        Req("POST", SEC, sec("ssh-missing", {"id_rsa": "a2V5"}, "kubernetes.io/ssh-auth")),
        Req("POST", SEC, sec("ssh", {"ssh-privatekey": "a2V5"}, "kubernetes.io/ssh-auth")),
        Req("POST", SEC, sec("dockercfg-bad", {".dockercfg": "bm90LWpzb24="}, "kubernetes.io/dockercfg")),
        Req("POST", SEC, sec("dockerjson", {".dockerconfigjson": "eyJhdXRocyI6e319"},
                             "kubernetes.io/dockerconfigjson")),
        Req("POST", SEC, sec("tls-empty", {"tls.crt": "", "tls.key": ""}, "kubernetes.io/tls")),
        Req("POST", SEC, sec("keys-ok", {".hidden": "eA==", "a_b-c.d": "eQ=="})),
        Req("POST", SEC, sec("keys-dots", {"..": "eA=="})),
        Req("POST", SEC, sec("keys-slash", {"a/b": "eA=="})),
        Req("POST", SEC, sec("custom-type", {"k": "dg=="}, "example.com/custom")),
        Req("POST", SEC, sec("bad-type", {"k": "dg=="}, "not a type")),
        Req("GET", SEC, params={"fieldSelector": "type=kubernetes.io/basic-auth"}, pick=ITEM_NAMES),
        Req("GET", SEC, params={"fieldSelector": "type!=Opaque,type!=kubernetes.io/service-account-token"},
            pick=ITEM_NAMES),
    ],
    "secret_apply_and_type_is_immutable": [
        Req("PATCH", f"{SEC}/app", sec("app", {"user": "YWRtaW4="}, "Opaque"), APPLY, params=mgr("op")),
        Req("PATCH", f"{SEC}/app", sec("app", {"user": "YWRtaW4=", "pass": "czNjcmV0"}, "Opaque"), APPLY,
            params=mgr("op")),
        Req("PATCH", f"{SEC}/app", {"type": "kubernetes.io/basic-auth"}, MERGE),
        Req("PUT", f"{SEC}/app", sec("app", {"user": "YWRtaW4="}, "kubernetes.io/tls")),
        Req("PUT", f"{SEC}/app", sec("app", {"user": "cm9vdA==", "pass": "czNjcmV0"})),
        Req("PATCH", f"{SEC}/app", {"data": {"user": None}}, MERGE),
        Req("PATCH", f"{SEC}/app", {"stringData": {"token": "t0k3n"}}, STRATEGIC),
        Req("GET", f"{SEC}/app", pick=("data", "type", "stringData")),
        Req("PATCH", f"{SEC}/app", {"data": {"bad": "%%%"}}, MERGE, brief=True),
        Req("DELETE", f"{SEC}/app", pick=("kind", "status")),
        Req("GET", f"{SEC}/app"),
    ],
    # === the Echo custom resource ==============================================================================
    "echo_handled_like_kopf": [
        # picked once the spec is written after the status: the real order of the two Update entries in
        # managedFields then depends on whether they were written within the same second
        Req("POST", ECHO, cr("kopf", copies=1)),
        Req("PATCH", f"{ECHO}/kopf", {"metadata": {"finalizers": ["kopf.zalando.org/KopfFinalizerMarker"]}}, MERGE),
        Req("PATCH", f"{ECHO}/kopf", {"metadata": {"annotations": {
            "kopf.zalando.org/last-handled-configuration": '{"spec":{"copies":1,"message":"hello"}}\n'}},
            "status": {"seen": "ignored here"}}, MERGE),
        Req("PATCH", f"{ECHO}/kopf/status", {"status": {"seen": "hello", "observedGeneration": 1}}, MERGE),
        Req("GET", f"{ECHO}/kopf"),
        Req("PATCH", f"{ECHO}/kopf", {"spec": {"copies": 2}}, MERGE, pick=ECHOF),
        Req("PATCH", f"{ECHO}/kopf", {"metadata": {"annotations": {
            "kopf.zalando.org/last-handled-configuration": '{"spec":{"copies":2,"message":"hello"}}\n'}}}, MERGE,
            pick=ECHOF),
        Req("DELETE", f"{ECHO}/kopf", pick=ECHOF),
        Req("GET", f"{ECHO}/kopf", pick=ECHOF),
        Req("PATCH", f"{ECHO}/kopf/status", {"status": {"seen": "deleting"}}, MERGE, pick=ECHOF),
        Req("PATCH", f"{ECHO}/kopf", {"metadata": {"finalizers": []}}, MERGE, pick=ECHOF),
        Req("GET", f"{ECHO}/kopf"),
        Req("GET", ECHO),
    ],
    "echo_finalizer_like_kube_rs": [
        Req("POST", ECHO, cr("rs")),
        Req("PATCH", f"{ECHO}/rs", [{"op": "test", "path": "/metadata/finalizers", "value": None},
                                    {"op": "add", "path": "/metadata/finalizers", "value": ["kube.rs/cleanup"]}], JSON),
        Req("PATCH", f"{ECHO}/rs", [{"op": "test", "path": "/metadata/finalizers", "value": None},
                                    {"op": "add", "path": "/metadata/finalizers", "value": ["kube.rs/cleanup"]}], JSON),
        Req("PATCH", f"{ECHO}/rs", [{"op": "test", "path": "/metadata/finalizers", "value": ["kube.rs/cleanup"]},
                                    {"op": "add", "path": "/metadata/finalizers/-", "value": "example.com/other"}],
            JSON),
        Req("DELETE", f"{ECHO}/rs"),
        Req("PATCH", f"{ECHO}/rs", [{"op": "test", "path": "/metadata/finalizers/0", "value": "kube.rs/cleanup"},
                                    {"op": "remove", "path": "/metadata/finalizers/0"}], JSON),
        Req("PATCH", f"{ECHO}/rs", [{"op": "test", "path": "/metadata/finalizers/0", "value": "kube.rs/cleanup"},
                                    {"op": "remove", "path": "/metadata/finalizers/0"}], JSON),
        Req("PATCH", f"{ECHO}/rs", [{"op": "remove", "path": "/metadata/deletionTimestamp"}], JSON),
        Req("GET", f"{ECHO}/rs"),
        Req("PATCH", f"{ECHO}/rs", [{"op": "test", "path": "/metadata/finalizers/0", "value": "example.com/other"},
                                    {"op": "remove", "path": "/metadata/finalizers/0"}], JSON),
        Req("GET", f"{ECHO}/rs"),
        Req("PATCH", f"{ECHO}/rs", [{"op": "add", "path": "/metadata/finalizers", "value": ["kube.rs/cleanup"]}],
            JSON),
    ],
    "echo_status_writes_and_conflicts": [
        Req("POST", ECHO, cr("st"), save={"rv0": "metadata.resourceVersion"}),
        Req("PUT", f"{ECHO}/st/status", {**cr("st", resourceVersion="{m:rv0}"),
                                         "status": {"observedGeneration": 1, "seen": "hello"}},
            save={"rv1": "metadata.resourceVersion"}),
        Req("PUT", f"{ECHO}/st/status", {**cr("st", resourceVersion="{m:rv0}"), "status": {"seen": "stale"}}),
        Req("PATCH", f"{ECHO}/st", {"spec": {"message": "bye"}}, MERGE, pick=ECHOF),
        Req("PUT", f"{ECHO}/st", cr("st", "from rv1", resourceVersion="{m:rv1}")),
        Req("GET", f"{ECHO}/st", save={"rv3": "metadata.resourceVersion"}, pick=ECHOF),
        Req("PUT", f"{ECHO}/st", {**cr("st", "bye", 3, resourceVersion="{m:rv3}"), "status": {"seen": "dropped"}},
            save={"rv4": "metadata.resourceVersion"}, pick=ECHOF),
        Req("PUT", f"{ECHO}/st/status", {**cr("st", resourceVersion="{m:rv3}"), "status": {"seen": "late"}}),
        Req("PATCH", f"{ECHO}/st/status", {"metadata": {"resourceVersion": "{m:rv3}"},
                                           "status": {"seen": "late"}}, MERGE),
        Req("PATCH", f"{ECHO}/st/status", {"metadata": {"resourceVersion": "{m:rv4}", "labels": {"via": "status"}},
                                           "status": {"observedGeneration": 3, "seen": "bye"}}, MERGE),
        Req("GET", f"{ECHO}/st/status"),
        Req("PUT", f"{ECHO}/st/status", {**cr("st"), "status": {"seen": 42}}),
    ],
    "echo_status_conditions_by_apply": [
        Req("POST", ECHO, cr("cond")),
        Req("PATCH", f"{ECHO}/cond/status", cr_status("cond", observedGeneration=1, conditions=[
            {"type": "Ready", "status": "False", "reason": "Pending"}]), APPLY, params=mgr("reconciler")),
        Req("PATCH", f"{ECHO}/cond/status", cr_status("cond", observedGeneration=1, conditions=[
            {"type": "Ready", "status": "True", "reason": "Done"}]), APPLY, params=mgr("reconciler")),
        Req("PATCH", f"{ECHO}/cond/status", cr_status("cond", conditions=[
            {"type": "Healthy", "status": "True"}]), APPLY, params=mgr("prober")),
        Req("PATCH", f"{ECHO}/cond/status", cr_status("cond", conditions=[
            {"type": "Healthy", "status": "True"}]), APPLY, params=mgr("prober", force=True), pick=ECHOF),
        Req("PATCH", f"{ECHO}/cond/status", cr_status("cond", observedGeneration=2), APPLY, params=mgr("reconciler")),
        Req("GET", f"{ECHO}/cond/status", pick=("status", "metadata.generation")),
        Req("PATCH", f"{ECHO}/cond", cr("cond", "applied"), APPLY, params=mgr("user")),
        Req("PATCH", f"{ECHO}/cond", cr("cond", "applied"), APPLY, params=mgr("user", force=True), pick=ECHOF),
        Req("PATCH", f"{ECHO}/cond/status", {**cr_status("cond", seen="x"), "spec": {"message": "sneaky"}}, APPLY,
            params=mgr("reconciler"), pick=ECHOF),
        Req("PATCH", f"{ECHO}/cond/status", {"status": {"conditions": ["not-an-object"]}}, MERGE),
        Req("GET", f"{ECHO}/cond", pick=("spec", "status", "metadata.generation")),
    ],
    "echo_patch_errors": [
        Req("POST", ECHO, cr("pe", copies=1)),
        Req("PATCH", f"{ECHO}/absent", {"spec": {"message": "x"}}, MERGE),
        Req("PATCH", f"{ECHO}/absent", [{"op": "add", "path": "/spec/message", "value": "x"}], JSON),
        Req("PATCH", f"{ECHO}/pe", [{"spec": {"message": "x"}}], MERGE),
        Req("PATCH", f"{ECHO}/pe", {"spec": {"message": "x"}}, "application/yaml"),
        Req("PATCH", f"{ECHO}/pe", {"metadata": {"name": "pe-2"}}, MERGE),
        Req("PATCH", f"{ECHO}/pe", {"metadata": {"namespace": "default"}}, MERGE),
        Req("PATCH", f"{ECHO}/pe", {"kind": "Other"}, MERGE),
        Req("PATCH", f"{ECHO}/pe", {"apiVersion": "test.kubeloop.dev/v9"}, MERGE),
        Req("PATCH", f"{ECHO}/pe", {"spec": {"copies": 1.5}}, MERGE),
        Req("PATCH", f"{ECHO}/pe", {"metadata": {"labels": {"n": 1}}}, MERGE, brief=True),
        Req("PATCH", f"{ECHO}/pe", {"spec": {"copies": None}}, MERGE),
        Req("PATCH", f"{ECHO}/pe", {"spec": None}, MERGE),
        Req("GET", f"{ECHO}/pe"),
    ],
    # the status is written after the spec and the finalizer removed by a manager sorting after "difftest":
    # the order of managedFields entries in the events is then the same whatever the timing
    "echo_watch_through_deletion": [
        Mark("m", ECHO),
        Req("POST", ECHO, cr("ws", finalizers=["example.com/w"], labels={"tier": "one"})),
        Req("PATCH", f"{ECHO}/ws", {"spec": {"copies": 2}}, MERGE),
        Req("PATCH", f"{ECHO}/ws/status", {"status": {"seen": "hello"}}, MERGE),
        Req("POST", ECHO, cr("other", labels={"tier": "two"})),
        Req("DELETE", f"{ECHO}/ws"),
        Req("PATCH", f"{ECHO}/ws", {"metadata": {"finalizers": None}}, MERGE, params=mgr("finalizer-remover")),
        Watch(ECHO, since="m"),
        Watch(ECHO, since="m", params={"fieldSelector": "metadata.name=ws"}),
        Watch(ECHO, since="m", params={"labelSelector": "tier=two"}),
        Watch(ECHO, since="m", params={"labelSelector": "tier=three"}),
        Req("GET", f"{ECHO}/ws"),
    ],
    "echo_dry_run_and_generated_names": [
        Req("POST", ECHO, {**cr("x"), "metadata": {"generateName": "run-"}}),
        Req("POST", ECHO, {**cr("x"), "metadata": {"generateName": "run-"}}, params={"dryRun": "All"}),
        Req("GET", ECHO),
        Req("POST", ECHO, cr("dr"), params={"dryRun": "All"}),
        Req("GET", f"{ECHO}/dr"),
        Req("POST", ECHO, cr("dr"), save={"rv": "metadata.resourceVersion"}),
        Req("PUT", f"{ECHO}/dr", cr("dr", "dry put", resourceVersion="{m:rv}"), params={"dryRun": "All"}),
        Req("PATCH", f"{ECHO}/dr/status", {"status": {"seen": "dry"}}, MERGE, params={"dryRun": "All"}),
        Req("DELETE", f"{ECHO}/dr", params={"dryRun": "All"}),
        Req("GET", f"{ECHO}/dr"),
        Req("PATCH", f"{ECHO}/dr-apply", cr("dr-apply"), APPLY, params=mgr("tool", dryRun="All")),
        Req("GET", f"{ECHO}/dr-apply"),
        Req("POST", ECHO, cr("dr-bad", copies=-3), params={"dryRun": "All"}),
        Req("POST", ECHO, {**cr("x"), "metadata": {"generateName": "g" * 62 + "-"}}),
        Req("DELETE", ECHO, params={"dryRun": "All"}),
        Req("GET", f"{ECHO}/dr", pick=("metadata.name", "spec", "status")),
    ],
    # === a CRD of the sequence's own (CEL rules, defaults, list-map apply, scale) ============================
    "crd_widget_lifecycle": [
        Req("POST", CRD, WIDGET_CRD, pick=("metadata.name", "spec.group", "spec.names", "spec.scope")),
        WaitFor(f"{CRD}/widgets.{{ns}}.kubeloop.dev", "status.acceptedNames.kind", "Widget"),
        WaitFor(WIDGET, "kind", "WidgetList"),
        Req("POST", WIDGET, widget("small", size=3, zone="a", replicas=1)),
        Req("POST", WIDGET, widget("big-fast", size=8, mode="fast")),
        Req("POST", WIDGET, widget("big-safe", size=8)),
        Req("POST", WIDGET, widget("zero", size=0)),
        Req("POST", WIDGET, widget("sizeless", mode="safe")),
        Req("POST", WIDGET, widget("turbo", size=2, mode="turbo")),
        Req("POST", WIDGET, widget("dup", size=2, ports=[{"name": "http", "port": 80}, {"name": "http", "port": 81}])),
        Req("PATCH", f"{WIDGET}/small", {"spec": {"zone": "b"}}, MERGE),
        Req("PATCH", f"{WIDGET}/small", {"apiVersion": "{ns}.kubeloop.dev/v1", "kind": "Widget",
                                         "metadata": {"name": "small"}, "spec": {
                                             "ports": [{"name": "http", "port": 80}]}}, APPLY, params=mgr("a")),
        Req("PATCH", f"{WIDGET}/small", {"apiVersion": "{ns}.kubeloop.dev/v1", "kind": "Widget",
                                         "metadata": {"name": "small"}, "spec": {
                                             "ports": [{"name": "metrics", "port": 9090}]}}, APPLY, params=mgr("b")),
        Req("PATCH", f"{WIDGET}/small", {"apiVersion": "{ns}.kubeloop.dev/v1", "kind": "Widget",
                                         "metadata": {"name": "small"}, "spec": {
                                             "ports": [{"name": "metrics", "port": 9191}]}}, APPLY, params=mgr("a")),
        Req("GET", f"{WIDGET}/small/scale"),
        Req("PATCH", f"{WIDGET}/small/scale", {"spec": {"replicas": 4}}, MERGE),
        Req("GET", f"{WIDGET}/small", pick=("spec", "metadata.generation")),
        Req("DELETE", f"{CRD}/widgets.{{ns}}.kubeloop.dev", pick=("metadata.name",)),
        WaitGone(f"{CRD}/widgets.{{ns}}.kubeloop.dev"),
        Req("GET", f"{WIDGET}/small"),
    ],
    # === garbage collection ====================================================================================
    "gc_three_level_chain_background": [
        Req("POST", ECHO, cr("root"), save={"root": "metadata.uid"}),
        Req("POST", ECHO, cr("keeper"), save={"keeper": "metadata.uid"}),
        Req("POST", CM, config("mid", {"level": "2"}, meta={"ownerReferences": [
            ref("Echo", "root", "{m:root}", controller=True, block=True)]}), save={"mid": "metadata.uid"}),
        Req("POST", SEC, sec("leaf", {"level": "Mw=="}, meta={"ownerReferences": [
            ref("ConfigMap", "mid", "{m:mid}", api="v1")]})),
        Req("POST", CM, config("shared", {"level": "2"}, meta={"ownerReferences": [
            ref("Echo", "root", "{m:root}"), ref("Echo", "keeper", "{m:keeper}")]})),
        Req("DELETE", f"{ECHO}/root"),
        WaitGone(f"{CM}/mid"),
        WaitGone(f"{SEC}/leaf"),
        WaitFor(f"{CM}/shared", "metadata.ownerReferences.1", None),
        Req("GET", f"{CM}/shared", pick=("metadata.name", "metadata.ownerReferences")),
        Req("GET", f"{SEC}/leaf"),
    ],
    "gc_foreground_waits_for_dependent_finalizer": [
        Req("POST", ECHO, cr("parent"), save={"uid": "metadata.uid"}),
        Req("POST", CM, config("held", {"k": "v"}, meta={"finalizers": ["example.com/hold"], "ownerReferences": [
            ref("Echo", "parent", "{m:uid}", controller=True, block=True)]})),
        Req("POST", CM, config("free", {"k": "v"}, meta={"ownerReferences": [
            ref("Echo", "parent", "{m:uid}", block=True)]})),
        Req("DELETE", f"{ECHO}/parent", params={"propagationPolicy": "Foreground"}),
        WaitGone(f"{CM}/free"),
        WaitFor(f"{CM}/held", "metadata.deletionTimestamp", "<set>"),
        Req("GET", f"{ECHO}/parent", pick=("metadata.name", "metadata.finalizers")),
        Req("PATCH", f"{ECHO}/parent", {"spec": {"message": "still here"}}, MERGE,
            pick=("spec", "metadata.finalizers")),
        Req("PATCH", f"{CM}/held", {"metadata": {"finalizers": None}}, MERGE, pick=("metadata.finalizers",)),
        WaitGone(f"{CM}/held"),
        WaitGone(f"{ECHO}/parent"),
        Req("GET", f"{ECHO}/parent"),
    ],
    "gc_orphaned_replicaset": [
        Req("POST", DEP, dep("orph", replicas=0), pick=DEPF),
        WaitFor(RS, "items.0.metadata.ownerReferences.0.kind", "Deployment"),
        Req("GET", RS, pick=("items.*.spec.replicas", "items.*.metadata.ownerReferences.*.kind",
                             "items.*.metadata.ownerReferences.*.controller")),
        Req("DELETE", f"{DEP}/orph", params={"propagationPolicy": "Orphan"},
            pick=("metadata.name", "metadata.finalizers")),
        WaitGone(f"{DEP}/orph"),
        WaitFor(RS, "items.0.metadata.ownerReferences", None),
        Req("GET", RS, pick=("items.*.spec.replicas", "items.*.metadata.ownerReferences")),
        Req("DELETE", RS, params={"labelSelector": "app=orph"}, pick=("kind",)),
        WaitFor(RS, "items.0", None),
    ],
    "gc_cluster_scoped_owner": [
        Req("POST", NSS, ns_body("{ns}-owner"), save={"uid": "metadata.uid"}, pick=NSF),
        Req("POST", CM, config("owned-by-ns", {"k": "v"}, meta={"ownerReferences": [
            ref("Namespace", "{ns}-owner", "{m:uid}", api="v1")]})),
        Req("POST", CM, config("bystander", {"k": "v"})),
        Req("DELETE", f"{NSS}/{{ns}}-owner", pick=("metadata.name", "status.phase")),
        WaitGone(f"{NSS}/{{ns}}-owner", timeout=120),
        WaitGone(f"{CM}/owned-by-ns"),
        Req("GET", f"{CM}/bystander", pick=("metadata.name",)),
    ],
    # === Deployments and the other workloads ===================================================================
    "deployment_rollout_generations": [
        Req("POST", DEP, dep("roll"), pick=DEPF),
        WaitFor(f"{DEP}/roll", "status.observedGeneration", 1),
        Req("PATCH", f"{DEP}/roll", {"spec": {"template": {"spec": {"containers": [
            {"name": "web", "image": "nginx:1.28"}]}}}}, STRATEGIC, pick=DEPF),
        WaitFor(f"{DEP}/roll", "status.observedGeneration", 2),
        Req("PATCH", f"{DEP}/roll", {"spec": {"template": {"metadata": {"annotations": {
            "kubectl.kubernetes.io/restartedAt": "2026-01-01T10:00:00Z"}}}}}, STRATEGIC, pick=DEPF),
        Req("PATCH", f"{DEP}/roll", {"metadata": {"labels": {"team": "web"}}}, MERGE,
            pick=("metadata.generation", "metadata.labels")),
        Req("GET", f"{DEP}/roll/scale", pick=("kind", "apiVersion", "spec.replicas", "status.selector")),
        Req("PUT", f"{DEP}/roll/scale", {"apiVersion": "autoscaling/v1", "kind": "Scale",
                                         "metadata": {"name": "roll"}, "spec": {"replicas": 0}},
            pick=("kind", "spec.replicas")),
        Req("PATCH", f"{DEP}/roll", {"spec": {"paused": True}}, MERGE, pick=("metadata.generation", "spec.paused")),
        WaitFor(f"{DEP}/roll", "status.observedGeneration", 5),
        Req("GET", f"{DEP}/roll", pick=DEPF),
        Req("DELETE", f"{DEP}/roll", pick=GONE),
        WaitGone(f"{DEP}/roll"),
    ],
    "deployment_apply_shared_container_list": [
        Req("PATCH", f"{DEP}/mesh", dep("mesh", replicas=0), APPLY, params=mgr("flux"), pick=DEPF),
        Req("PATCH", f"{DEP}/mesh", {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "mesh"},
                                     "spec": {"template": {"spec": {"containers": [
                                         {"name": "proxy", "image": "envoy:1.31"}]}}}}, APPLY,
            params=mgr("injector"), pick=("spec.template.spec.containers.*.name",)),
        Req("PATCH", f"{DEP}/mesh", dep("mesh", replicas=0), APPLY, params=mgr("flux"),
            pick=("spec.template.spec.containers.*.name", "metadata.generation")),
        Req("PATCH", f"{DEP}/mesh", {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "mesh"},
                                     "spec": {"template": {"spec": {"containers": [
                                         {"name": "proxy", "image": "envoy:1.31"},
                                         {"name": "web", "image": "nginx:1.26"}]}}}}, APPLY,
            params=mgr("injector")),
        Req("PATCH", f"{DEP}/mesh", {"spec": {"template": {"spec": {"containers": [
            {"name": "web", "image": "nginx:1.29"}]}}}}, STRATEGIC, params=mgr("kubectl-edit"),
            pick=("spec.template.spec.containers.*.image",)),
        Req("PATCH", f"{DEP}/mesh", dep("mesh", replicas=0), APPLY, params=mgr("flux")),
        Req("PATCH", f"{DEP}/mesh", dep("mesh", replicas=0), APPLY, params=mgr("flux", force=True),
            pick=("spec.template.spec.containers.*.image",)),
        Req("PATCH", f"{DEP}/mesh", {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "mesh"},
                                     "spec": {"template": {"spec": {"containers": []}}}}, APPLY,
            params=mgr("injector"), pick=("spec.template.spec.containers.*.name",)),
        Req("PATCH", f"{DEP}/mesh", dep("mesh", replicas=None), APPLY, params=mgr("flux"),
            pick=("spec.replicas", "metadata.generation")),
        Req("GET", f"{DEP}/mesh", pick=("spec.replicas", "spec.template.spec.containers.*.name",
                                        "spec.template.spec.containers.*.image")),
        Req("DELETE", f"{DEP}/mesh", params={"propagationPolicy": "Background"}, pick=GONE),
    ],
    "deployment_validation_rules": [
        Req("POST", DEP, dep("unavail", strategy={"type": "RollingUpdate",
                                                  "rollingUpdate": {"maxUnavailable": "150%"}})),
        Req("POST", DEP, dep("deadline", minReadySeconds=30, progressDeadlineSeconds=20)),
        Req("POST", DEP, dep("never", pod_spec={"restartPolicy": "Never",
                                                "containers": [{"name": "web", "image": "nginx"}]})),
        Req("POST", DEP, {**dep("op"), "spec": {**dep("op")["spec"], "selector": {"matchExpressions": [
            {"key": "app", "operator": "Like", "values": ["op"]}]}}}),
        Req("POST", DEP, {**dep("emptysel"), "spec": {**dep("emptysel")["spec"], "selector": {}}}),
        Req("POST", DEP, dep("pull", pod_spec={"containers": [{"name": "web", "image": "nginx",
                                                               "imagePullPolicy": "Sometimes"}]})),
        Req("POST", DEP, dep("mount", pod_spec={"containers": [{"name": "web", "image": "nginx", "volumeMounts": [
            {"name": "data", "mountPath": "/data"}]}]})),
        Req("POST", DEP, dep("bluegreen", strategy={"type": "BlueGreen"})),
        Req("POST", DEP, dep("d" * 254)),
        Req("POST", DEP, {**dep("expr", replicas=0), "spec": {**dep("expr", replicas=0)["spec"], "selector": {
            "matchExpressions": [{"key": "app", "operator": "In", "values": ["expr"]}]}}},
            pick=("metadata.name", "spec.selector", "spec.replicas")),
        Req("POST", DEP, dep("ports", replicas=0, pod_spec={"containers": [{"name": "web", "image": "nginx",
                                                                            "ports": [{"containerPort": 8080,
                                                                                       "name": "http"}]}]}),
            pick=("spec.template.spec.containers.*.ports",)),
        Req("GET", DEP, pick=ITEM_NAMES),
    ],
    "statefulset_scale_and_forbidden_updates": [
        Req("POST", STS, sts("store", ordinals={"start": 5}, persistentVolumeClaimRetentionPolicy={
            "whenDeleted": "Delete", "whenScaled": "Retain"}), pick=STSF),
        WaitFor(f"{STS}/store", "status.observedGeneration", 1),
        Req("PATCH", f"{STS}/store", {"spec": {"updateStrategy": {"rollingUpdate": {"partition": 2}}}}, MERGE,
            pick=STSF),
        Req("PATCH", f"{STS}/store", {"spec": {"podManagementPolicy": "Parallel"}}, MERGE, brief=True),
        Req("PATCH", f"{STS}/store", {"spec": {"selector": {"matchLabels": {"store": "other"}}}}, MERGE, brief=True),
        Req("PATCH", f"{STS}/store", {"spec": {"template": {"metadata": {"labels": {"store": "other"}}}}}, MERGE,
            brief=True),
        Req("PATCH", f"{STS}/store", {"spec": {"ordinals": {"start": -1}}}, MERGE, brief=True),
        Req("PATCH", f"{STS}/store", {"spec": {"persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Bogus"}}},
            MERGE, brief=True),
        Req("PATCH", f"{STS}/store", {"spec": {"ordinals": {"start": 0}}}, MERGE, pick=STSF),
        Req("GET", f"{STS}/store/scale", pick=("kind", "spec.replicas", "status.replicas", "status.selector")),
        Req("PATCH", f"{STS}/store/scale", {"spec": {"replicas": 0}}, MERGE, pick=("kind", "spec.replicas")),
        Req("POST", STS, {**sts("noservice"), "spec": {k: v for k, v in sts("noservice")["spec"].items()
                                                         if k != "serviceName"}},
            pick=("metadata.name", "spec.serviceName")),
        Req("DELETE", f"{STS}/store", pick=GONE),
        WaitGone(f"{STS}/store"),
    ],
    "daemonset_controller_status": [
        Req("POST", DS, ds("probe"), pick=DSF),
        WaitFor(f"{DS}/probe", "status.observedGeneration", 1),
        Req("GET", f"{DS}/probe", pick=("status.desiredNumberScheduled", "status.currentNumberScheduled",
                                        "status.numberMisscheduled", "status.numberReady")),
        Req("PATCH", f"{DS}/probe", {"spec": {"template": {"spec": {"containers": [
            {"name": "probe", "image": "busybox:1.36"}]}}}}, STRATEGIC, pick=DSF),
        WaitFor(f"{DS}/probe", "status.observedGeneration", 2),
        Req("PATCH", f"{DS}/probe", {"spec": {"updateStrategy": {"type": "OnDelete", "rollingUpdate": None}}}, MERGE,
            pick=DSF),
        Req("PATCH", f"{DS}/probe", {"spec": {"template": {"spec": {"restartPolicy": "OnFailure"}}}}, MERGE,
            brief=True),
        Req("PATCH", f"{DS}/probe", {"spec": {"template": {"metadata": {"labels": {"daemon": "x"}}}}}, MERGE,
            brief=True),
        Req("DELETE", f"{DS}/probe", params={"propagationPolicy": "Foreground"},
            pick=("metadata.name", "metadata.finalizers")),
        WaitGone(f"{DS}/probe"),
    ],
    "job_validation_and_immutability": [
        Req("POST", JOB, batch_job("j"), pick=JOBF),
        # allowed: the template of a suspended Job that never started may change its labels
        Req("PATCH", f"{JOB}/j", {"spec": {"template": {"metadata": {"labels": {"extra": "x"}}}}}, MERGE, pick=JOBF),
        Req("PATCH", f"{JOB}/j", {"spec": {"selector": {"matchLabels": {"extra": "x"}}}}, MERGE, brief=True),
        Req("PATCH", f"{JOB}/j", {"spec": {"activeDeadlineSeconds": 60, "ttlSecondsAfterFinished": 100}}, MERGE,
            pick=JOBF),
        Req("PATCH", f"{JOB}/j", {"spec": {"ttlSecondsAfterFinished": -1}}, MERGE, brief=True),
        Req("POST", JOB, batch_job("per-index", backoffLimitPerIndex=1, completions=2)),
        Req("POST", JOB, batch_job("pfp-onfailure", restart="OnFailure", podFailurePolicy={"rules": [
            {"action": "FailJob", "onExitCodes": {"operator": "In", "values": [42]}}]})),
        Req("POST", JOB, batch_job("pfp", podFailurePolicy={"rules": [
            {"action": "FailJob", "onExitCodes": {"operator": "In", "values": [42]}}]}), pick=JOBF),
        Req("POST", JOB, batch_job("success", completions=2, successPolicy={"rules": [{"succeededCount": 1}]})),
        Req("POST", JOB, {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "manual"}, "spec": {
            "suspend": True, "manualSelector": True, "selector": {"matchLabels": {"pick": "me"}},
            "template": {"metadata": {"labels": {"pick": "me"}}, "spec": {"restartPolicy": "Never", "containers": [
                {"name": "task", "image": "busybox:1.37"}]}}}}, pick=JOBF),
        Req("POST", JOB, batch_job("zero", completions=0, parallelism=0), pick=JOBF),
        Req("DELETE", f"{JOB}/j", pick=("metadata.name", "metadata.finalizers")),
        WaitGone(f"{JOB}/j"),
    ],
    "job_runs_to_completion": [
        Req("POST", JOB, batch_job("run", suspend=False, completions=1), pick=JOBF),
        WaitFor(f"{JOB}/run", "status.succeeded", 1, timeout=90),
        Req("GET", f"{JOB}/run", pick=("status.succeeded", "status.failed", "status.active", "status.ready")),
        Req("GET", POD, params={"labelSelector": "job-name=run"}, pick=("items.*.status.phase",)),
        Req("DELETE", f"{JOB}/run", params={"propagationPolicy": "Background"}, pick=GONE),
        WaitGone(f"{JOB}/run"),
        WaitFor(f"{POD}?labelSelector=job-name%3Drun", "items.0", None),
    ],
    "cronjob_validation_and_status": [
        Req("POST", CJ, cron("sweeper"), pick=CJF),
        Req("POST", CJ, cron("c" * 53)),
        Req("POST", CJ, cron("seconds", schedule="0 0 * * * *")),
        Req("POST", CJ, cron("minute", schedule="61 * * * *")),
        Req("POST", CJ, cron("history", successfulJobsHistoryLimit=-1)),
        Req("POST", CJ, cron("utc", timeZone="Etc/UTC"), pick=CJF),
        Req("PATCH", f"{CJ}/sweeper", {"spec": {"schedule": "30 2 * * 1-5"}}, MERGE, pick=CJF),
        Req("PATCH", f"{CJ}/sweeper/status", {"status": {"lastScheduleTime": "2026-01-01T02:30:00Z"}}, MERGE,
            pick=("status",)),
        Req("GET", f"{CJ}/sweeper", pick=("status", "metadata.generation")),
        Req("PATCH", f"{CJ}/sweeper", {"spec": {"jobTemplate": {"spec": {"template": {"spec": {
            "restartPolicy": "Always"}}}}}}, MERGE, brief=True),
        Req("GET", CJ, pick=ITEM_NAMES),
        Req("DELETE", f"{CJ}/sweeper", pick=GONE),
    ],
    # === Pods and Services =====================================================================================
    "pod_bound_by_a_custom_scheduler": [
        Req("POST", POD, workload_pod("bindme", node=None, schedulerName="kubeloop-scheduler"), pick=PODF),
        Req("POST", f"{POD}/bindme/binding", {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "bindme"},
                                               "target": {"apiVersion": "v1", "kind": "Node", "name": "diff-node"}}),
        Req("GET", f"{POD}/bindme", pick=("spec.nodeName", "status.conditions.*.type", "status.conditions.*.status")),
        Req("POST", f"{POD}/bindme/binding", {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "bindme"},
                                               "target": {"apiVersion": "v1", "kind": "Node", "name": "fuzz-node"}}),
        Req("PATCH", f"{POD}/bindme", {"spec": {"restartPolicy": "Never"}}, MERGE, brief=True),
        Req("PATCH", f"{POD}/bindme", {"spec": {"containers": [
            {"name": "main", "image": "registry.k8s.io/pause:3.9"}]}}, STRATEGIC, pick=("spec.containers.*.image",)),
        Req("PATCH", f"{POD}/bindme", {"spec": {"tolerations": [
            {"key": "example.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]}}, STRATEGIC,
            pick=("spec.tolerations",)),
        Req("PATCH", f"{POD}/bindme", {"spec": {"tolerations": []}}, MERGE, brief=True),
        Req("PATCH", f"{POD}/bindme", {"spec": {"nodeName": "fuzz-node"}}, MERGE, brief=True),
        Req("PATCH", f"{POD}/bindme/ephemeralcontainers", {"spec": {"ephemeralContainers": [
            {"name": "debugger", "image": "busybox:1.37", "targetContainerName": "main", "stdin": True,
             "tty": True}]}}, STRATEGIC, pick=("spec.ephemeralContainers.*.name",
                                                "spec.ephemeralContainers.*.targetContainerName")),
        Req("PATCH", f"{POD}/bindme", {"metadata": {"labels": {"debugged": "yes"}}}, MERGE,
            pick=("metadata.labels",)),
        Req("DELETE", f"{POD}/bindme", params={"gracePeriodSeconds": "0"}, pick=("metadata.name",)),
        WaitGone(f"{POD}/bindme"),
    ],
    "pod_graceful_deletion_and_field_selectors": [
        Req("POST", POD, workload_pod("always", labels={"grp": "gd"}), pick=PODF),
        Req("POST", POD, workload_pod("never", labels={"grp": "gd"}, restartPolicy="Never"),
            save={"uid": "metadata.uid"}, pick=PODF),
        Req("GET", POD, params={"fieldSelector": "spec.restartPolicy=Never"}, pick=ITEM_NAMES),
        Req("GET", POD, params={"fieldSelector": "spec.schedulerName=default-scheduler,spec.nodeName=diff-node"},
            pick=ITEM_NAMES),
        Req("GET", POD, params={"fieldSelector": "spec.serviceAccountName=default"}, pick=ITEM_NAMES),
        Req("GET", POD, params={"fieldSelector": "spec.containers.image=nginx"}),
        Req("DELETE", f"{POD}/always", pick=("metadata.name", "metadata.deletionGracePeriodSeconds")),
        Req("GET", f"{POD}/always", pick=("metadata.deletionGracePeriodSeconds", "spec.terminationGracePeriodSeconds")),
        Req("DELETE", f"{POD}/always", params={"gracePeriodSeconds": "5"},
            pick=("metadata.deletionGracePeriodSeconds",)),
        Req("DELETE", f"{POD}/always", params={"gracePeriodSeconds": "0"}, pick=("metadata.name",)),
        WaitGone(f"{POD}/always"),
        Req("DELETE", f"{POD}/never", {"apiVersion": "v1", "kind": "DeleteOptions", "gracePeriodSeconds": 0,
                                       "preconditions": {"uid": "{m:uid}"}}, pick=("metadata.name",)),
        WaitGone(f"{POD}/never"),
    ],
    "service_types_and_immutable_fields": [
        Req("POST", SVC, svc("np", [{"name": "http", "port": 80, "targetPort": 8080}], type="NodePort"), pick=SVCF),
        Req("POST", SVC, svc("np-bad", [{"name": "http", "port": 80, "nodePort": 80}], type="NodePort")),
        Req("PATCH", f"{SVC}/np", {"spec": {"type": "ClusterIP"}}, MERGE, pick=SVCF + ("spec.ports.*.nodePort",)),
        Req("POST", SVC, svc("lb", type="LoadBalancer", allocateLoadBalancerNodePorts=False), pick=SVCF),
        Req("PATCH", f"{SVC}/lb", {"spec": {"clusterIP": "10.0.0.99"}}, MERGE, brief=True),
        Req("POST", SVC, svc("local", externalTrafficPolicy="Local")),
        Req("POST", SVC, svc("sticky", sessionAffinity="ClientIP"), pick=SVCF),
        Req("POST", SVC, svc("dual", ipFamilyPolicy="RequireDualStack"), brief=True),
        Req("POST", SVC, {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "bare-headless"},
                          "spec": {"clusterIP": "None"}}, pick=("metadata.name", "spec.clusterIP", "spec.ports")),
        Req("PUT", f"{SVC}/sticky", svc("sticky", sessionAffinity="ClientIP"), brief=True, pick=SVCF),
        Req("PATCH", f"{SVC}/sticky", {"spec": {"ports": [{"name": "http", "port": 80, "targetPort": "web"}]}},
            STRATEGIC, pick=SVCF),
        Req("GET", SVC, params={"labelSelector": "svc=yes"}, pick=ITEM_NAMES),
        Req("DELETE", f"{SVC}/np", pick=("metadata.name",)),
        Req("GET", f"{SVC}/np"),
    ],
    # === leader election, events, namespaces, discovery ========================================================
    "lease_renewal_and_takeover": [
        Req("GET", f"{LEASE}/controller-leader"),
        Req("POST", LEASE, lease("controller-leader", "op-0", labels={"app": "op"}),
            save={"r1": "metadata.resourceVersion"}),
        Req("PUT", f"{LEASE}/controller-leader", lease("controller-leader", "op-0", "{m:r1}", labels={"app": "op"},
                                                       renew="2026-01-01T10:00:07.000000Z"),
            save={"r2": "metadata.resourceVersion"}),
        Req("PUT", f"{LEASE}/controller-leader", lease("controller-leader", "op-0", "{m:r2}", labels={"app": "op"},
                                                       renew="2026-01-01T10:00:09.000000Z"),
            save={"r3": "metadata.resourceVersion"}),
        Req("PUT", f"{LEASE}/controller-leader", lease("controller-leader", "op-1", "{m:r2}", labels={"app": "op"},
                                                       acquired="2026-01-01T10:00:30.000000Z",
                                                       renew="2026-01-01T10:00:30.000000Z", transitions=1)),
        Req("GET", f"{LEASE}/controller-leader"),
        Req("PUT", f"{LEASE}/controller-leader", lease("controller-leader", "op-1", "{m:r3}", labels={"app": "op"},
                                                       acquired="2026-01-01T10:00:30.000000Z",
                                                       renew="2026-01-01T10:00:30.000000Z", transitions=1),
            save={"r4": "metadata.resourceVersion"}),
        Req("PUT", f"{LEASE}/controller-leader", lease("controller-leader", "op-0", "{m:r3}", labels={"app": "op"},
                                                       renew="2026-01-01T10:00:31.000000Z")),
        Req("PATCH", f"{LEASE}/controller-leader", {"spec": {"holderIdentity": None, "renewTime": None,
                                                             "acquireTime": None}}, MERGE),
        Req("PATCH", f"{LEASE}/controller-leader", {"spec": {"leaseDurationSeconds": 0}}, MERGE),
        Req("GET", LEASE, params={"labelSelector": "app=op"}),
        Req("DELETE", f"{LEASE}/controller-leader", {"preconditions": {"resourceVersion": "{m:r4}"}}, brief=True),
        Req("DELETE", f"{LEASE}/controller-leader"),
    ],
    "events_recorder_aggregation_and_conversion": [
        Req("POST", EV, core_ev("web.188a1")),
        Req("PATCH", f"{EV}/web.188a1", {"count": 2, "lastTimestamp": "2026-01-01T09:01:00Z"}, STRATEGIC),
        Req("PATCH", f"{EV}/web.188a1", {"count": 3, "lastTimestamp": "2026-01-01T09:02:00Z",
                                         "message": "Scaled up replica set web-1 to 2"}, STRATEGIC),
        Req("GET", f"{EV2}/web.188a1"),
        Req("POST", EV2, series_ev("app.syncfail", series={"count": 2,
                                                           "lastObservedTime": "2026-01-01T09:05:00.000000Z"})),
        Req("GET", f"{EV}/app.syncfail"),
        Req("PATCH", f"{EV2}/app.syncfail", {"series": {"count": 3, "lastObservedTime": "2026-01-01T09:10:00.000000Z"}},
            MERGE),
        Req("POST", EV2, series_ev("app.one", series={"count": 1, "lastObservedTime": "2026-01-01T09:05:00.000000Z"})),
        Req("POST", EV2, series_ev("app.elsewhere", regarding={"apiVersion": "v1", "kind": "ConfigMap",
                                                                "name": "app", "namespace": "kube-public"})),
        Req("GET", EV, params={"fieldSelector": "source=deployment-controller"}, pick=ITEM_NAMES),
        Req("GET", EV, params={"fieldSelector": "involvedObject.uid=1f0e6a5c-0000-4000-8000-00000000d001"},
            pick=ITEM_NAMES),
        Req("GET", EV, params={"fieldSelector": "reportingComponent=kubeloop.dev/widget-operator"}, pick=ITEM_NAMES),
        Req("DELETE", EV, params={"fieldSelector": "involvedObject.kind=Deployment"}, pick=("kind",)),
        Req("GET", EV2, pick=("items.*.metadata.name", "items.*.series.count", "items.*.deprecatedCount")),
    ],
    "namespace_spec_finalizers_and_finalize": [
        Req("POST", NSS, ns_body("{ns}-fin", finalizers=["example.com/hold"]), pick=NSF),
        Req("PATCH", f"{NSS}/{{ns}}-fin", {"spec": {"finalizers": []}}, MERGE, pick=NSF),
        Req("PUT", f"{NSS}/{{ns}}-fin/finalize", ns_body("{ns}-fin", finalizers=[
            "kubernetes", "example.com/hold", "example.com/two"]), pick=NSF),
        Req("PUT", f"{NSS}/{{ns}}-fin/finalize", ns_body("{ns}-fin", finalizers=["Not A Finalizer"]), brief=True),
        Req("POST", "/api/v1/namespaces/{ns}-fin/configmaps", config("content", {"k": "v"}), pick=("metadata.name",)),
        Req("DELETE", f"{NSS}/{{ns}}-fin", pick=NSF),
        WaitFor(f"{NSS}/{{ns}}-fin", "spec.finalizers", ["example.com/hold", "example.com/two"], timeout=120),
        Req("GET", "/api/v1/namespaces/{ns}-fin/configmaps/content"),
        Req("GET", f"{NSS}/{{ns}}-fin", pick=NSF),
        Req("PUT", f"{NSS}/{{ns}}-fin/finalize", ns_body("{ns}-fin", finalizers=[]), pick=("metadata.name",)),
        WaitGone(f"{NSS}/{{ns}}-fin"),
        Req("DELETE", f"{NSS}/kube-system", params={"dryRun": "All"}, brief=True),
    ],
    "discovery_of_served_resources": [
        Req("GET", "/api/v1", only=("configmaps", "secrets", "pods", "pods/status", "pods/binding",
                                    "pods/ephemeralcontainers", "namespaces", "namespaces/finalize")),
        Req("GET", "/apis/apps/v1", only=("deployments", "deployments/scale", "deployments/status",
                                          "statefulsets/scale", "daemonsets")),
        Req("GET", "/apis/test.kubeloop.dev/v1", only=("echoes", "echoes/status")),
        Req("GET", "/apis/coordination.k8s.io/v1", only=("leases",)),
        Req("GET", "/apis/batch/v1", only=("jobs", "cronjobs", "cronjobs/status")),
        Req("GET", "/apis/events.k8s.io/v1", only=("events",)),
        Req("GET", "/apis/test.kubeloop.dev/v2"),
        Req("GET", "/apis/nothing.example.com/v1"),
    ],
}
