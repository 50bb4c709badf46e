"""Blind request sequences: written independently of the sequences the fake API server was fixed against,
from what operators (controller-runtime, Kopf, kube-rs, client-go's leader election and event recorder) and
Kubernetes' own e2e/conformance tests do. ``{ns}`` is the sequence's namespace; cluster-scoped names embed
it. Built-in kinds other than ConfigMap, Secret and Lease are compared on picked fields only (their
controllers and admission fill the rest)."""

from __future__ import annotations

from typing import Any

from tests.differential.harness import APPLY, JSON, MERGE, STRATEGIC, Mark, Req, Step, WaitFor, WaitGone, Watch

CM = "/api/v1/namespaces/{ns}/configmaps"
SECRET = "/api/v1/namespaces/{ns}/secrets"
POD = "/api/v1/namespaces/{ns}/pods"
SVC = "/api/v1/namespaces/{ns}/services"
EVENT = "/api/v1/namespaces/{ns}/events"
EVENT2 = "/apis/events.k8s.io/v1/namespaces/{ns}/events"
NSS = "/api/v1/namespaces"
ECHO = "/apis/test.kubeloop.dev/v1/namespaces/{ns}/echoes"
DEP = "/apis/apps/v1/namespaces/{ns}/deployments"
STS = "/apis/apps/v1/namespaces/{ns}/statefulsets"
DS = "/apis/apps/v1/namespaces/{ns}/daemonsets"
JOB = "/apis/batch/v1/namespaces/{ns}/jobs"
CJ = "/apis/batch/v1/namespaces/{ns}/cronjobs"
LEASE = "/apis/coordination.k8s.io/v1/namespaces/{ns}/leases"

NAMES = ("items.*.metadata.name",)


def fm(manager: str, force: bool = False) -> dict[str, str]:
    return {"fieldManager": manager, **({"force": "true"} if force else {})}


def cmap(name: str, data: dict[str, str] | None = None, labels: dict[str, str] | None = None,
         owners: list[dict[str, Any]] | None = None, **extra: Any) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if labels:
        meta["labels"] = labels
    if owners is not None:
        meta["ownerReferences"] = owners
    body: dict[str, Any] = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, **extra}
    if data is not None:
        body["data"] = data
    return body


def secret(name: str, **extra: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": name}, **extra}


def echo(name: str, spec: dict[str, Any] | None = None, **meta: Any) -> dict[str, Any]:
    return {"apiVersion": "test.kubeloop.dev/v1", "kind": "Echo", "metadata": {"name": name, **meta},
            "spec": {"message": "hi"} if spec is None else spec}


def owned_cm(name: str, owner: str, uid: str, controller: bool | None = True, block: bool | None = True,
             kind: str = "Echo", api: str = "test.kubeloop.dev/v1") -> dict[str, Any]:
    ref: dict[str, Any] = {"apiVersion": api, "kind": kind, "name": owner, "uid": uid}
    if controller is not None:
        ref["controller"] = controller
    if block is not None:
        ref["blockOwnerDeletion"] = block
    return cmap(name, {"owned": "yes"}, owners=[ref])


def pod(name: str, image: str = "nginx:1.25", labels: dict[str, str] | None = None, node: str | None = "diff-node",
        **spec: Any) -> dict[str, Any]:
    body_spec: dict[str, Any] = {"containers": [{"name": "app", "image": image}], **spec}
    if node:
        body_spec["nodeName"] = node  # an idle node: no scheduler, no kubelet
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": labels or {"app": name}},
            "spec": body_spec}


POD_PICK = ("metadata.name", "metadata.labels", "spec.containers.*.name", "spec.containers.*.image",
            "spec.containers.*.imagePullPolicy", "spec.containers.*.terminationMessagePath",
            "spec.restartPolicy", "spec.dnsPolicy", "spec.schedulerName", "spec.terminationGracePeriodSeconds",
            "spec.nodeName", "status.phase", "status.qosClass")


def deploy(name: str, replicas: int = 1, containers: list[dict[str, Any]] | None = None,
           selector: dict[str, str] | None = None, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "labels": {"app": name}},
            "spec": {"replicas": replicas, "selector": {"matchLabels": selector or {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}},
                                  "spec": {"containers": containers or [{"name": "app", "image": "nginx:1.25"}]}},
                     **spec}}


DEP_PICK = ("metadata.name", "metadata.generation", "metadata.labels", "spec.replicas", "spec.selector",
            "spec.template.spec.containers.*.name", "spec.template.spec.containers.*.image", "spec.strategy",
            "spec.revisionHistoryLimit", "spec.progressDeadlineSeconds", "spec.minReadySeconds")


def service(name: str, ports: list[dict[str, Any]] | None = None, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name, "labels": {"app": name}},
            "spec": {"selector": {"app": name}, "ports": ports if ports is not None else [{"port": 80}], **spec}}


SVC_PICK = ("metadata.name", "metadata.labels", "spec.type", "spec.ports", "spec.selector", "spec.sessionAffinity",
            "spec.internalTrafficPolicy", "spec.publishNotReadyAddresses")


def job(name: str, suspend: bool = True, restart: str = "Never", **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name},
            "spec": {"suspend": suspend, "template": {"spec": {"restartPolicy": restart, "containers": [
                {"name": "work", "image": "busybox:1.36", "command": ["true"]}]}}, **spec}}


JOB_PICK = ("metadata.name", "metadata.labels", "spec.suspend", "spec.completions", "spec.parallelism",
            "spec.backoffLimit", "spec.completionMode", "spec.manualSelector", "spec.selector",
            "spec.template.metadata.labels", "spec.template.spec.restartPolicy", "spec.podReplacementPolicy")


def cronjob(name: str, schedule: str = "0 3 * * *", **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": name},
            "spec": {"schedule": schedule, "suspend": True, "jobTemplate": {"spec": {"template": {"spec": {
                "restartPolicy": "OnFailure", "containers": [{"name": "c", "image": "busybox:1.36"}]}}}}, **spec}}


CJ_PICK = ("metadata.name", "metadata.generation", "spec.schedule", "spec.suspend", "spec.concurrencyPolicy",
           "spec.successfulJobsHistoryLimit", "spec.failedJobsHistoryLimit", "spec.startingDeadlineSeconds",
           "spec.timeZone", "spec.jobTemplate.spec.template.spec.containers.*.image")


def statefulset(name: str, selector: dict[str, str] | None = None, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": name},
            "spec": {"replicas": 0, "serviceName": name, "selector": {"matchLabels": selector or {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}},
                                  "spec": {"containers": [{"name": "db", "image": "postgres:16"}]}},
                     "volumeClaimTemplates": [{"metadata": {"name": "data"}, "spec": {
                         "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}],
                     **spec}}


STS_PICK = ("metadata.name", "metadata.generation", "spec.replicas", "spec.serviceName", "spec.podManagementPolicy",
            "spec.updateStrategy", "spec.revisionHistoryLimit", "spec.persistentVolumeClaimRetentionPolicy",
            "spec.minReadySeconds", "spec.template.spec.containers.*.image",
            "spec.volumeClaimTemplates.*.metadata.name", "spec.volumeClaimTemplates.*.spec.accessModes",
            "spec.volumeClaimTemplates.*.spec.volumeMode")


def daemonset(name: str, restart: str | None = None, selector: dict[str, str] | None = None) -> dict[str, Any]:
    pod_spec: dict[str, Any] = {"nodeSelector": {"kubeloop.dev/no-such-node": "true"},  # runs nowhere
                                "containers": [{"name": "agent", "image": "fluentd:1.16"}]}
    if restart:
        pod_spec["restartPolicy"] = restart
    return {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": name},
            "spec": {"selector": {"matchLabels": {"app": name} if selector is None else selector},
                     "template": {"metadata": {"labels": {"app": name}}, "spec": pod_spec}}}


DS_PICK = ("metadata.name", "metadata.generation", "spec.updateStrategy", "spec.revisionHistoryLimit",
           "spec.minReadySeconds", "spec.template.spec.nodeSelector", "spec.template.spec.containers.*.image")


def lease(name: str, holder: str | None, rv: str | None = None, renew: str = "2025-01-01T00:00:10.000000Z",
          acquire: str = "2025-01-01T00:00:00.000000Z", transitions: int = 0, duration: int = 15,
          **spec: Any) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if rv:
        meta["resourceVersion"] = rv
    body_spec: dict[str, Any] = {"leaseDurationSeconds": duration, "acquireTime": acquire, "renewTime": renew,
                                 "leaseTransitions": transitions, **spec}
    if holder is not None:
        body_spec["holderIdentity"] = holder
    return {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": meta, "spec": body_spec}


def core_event(name: str, **extra: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Event", "metadata": {"name": name},
            "involvedObject": {"apiVersion": "test.kubeloop.dev/v1", "kind": "Echo", "name": "web",
                               "namespace": "{ns}"},
            "reason": "Reconciled", "message": "reconciled web", "type": "Normal", "count": 1,
            "firstTimestamp": "2025-01-01T00:00:00Z", "lastTimestamp": "2025-01-01T00:00:00Z",
            "source": {"component": "echo-operator"}, **extra}


def new_event(name: str, drop: tuple[str, ...] = (), **extra: Any) -> dict[str, Any]:
    body = {"apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": {"name": name},
            "eventTime": "2025-01-01T00:00:00.000000Z", "reportingController": "example.com/echo-operator",
            "reportingInstance": "echo-operator-0", "action": "Reconcile", "reason": "Reconciled",
            "regarding": {"apiVersion": "test.kubeloop.dev/v1", "kind": "Echo", "name": "web", "namespace": "{ns}"},
            "note": "reconciled web", "type": "Normal", **extra}
    for key in drop:
        body.pop(key)
    return body


BLIND: dict[str, list[Step]] = {
    # --- ConfigMaps ------------------------------------------------------------------------------------
    "cm_crud_optimistic_concurrency": [
        Req("GET", f"{CM}/settings"),
        Req("POST", CM, cmap("settings", {"mode": "a"}), save={"rv1": "metadata.resourceVersion"}),
        Req("GET", f"{CM}/settings"),
        Req("PUT", f"{CM}/settings", {**cmap("settings", {"mode": "b"}),
                                      "metadata": {"name": "settings", "resourceVersion": "{m:rv1}"}},
            save={"rv2": "metadata.resourceVersion"}),
        Req("PUT", f"{CM}/settings", {**cmap("settings", {"mode": "stale"}),
                                      "metadata": {"name": "settings", "resourceVersion": "{m:rv1}"}}),
        Req("PUT", f"{CM}/settings", cmap("settings", {"mode": "c"}, {"app": "x"})),  # unconditional
        Req("PATCH", f"{CM}/settings", {"metadata": {"resourceVersion": "{m:rv2}"}, "data": {"mode": "d"}}, MERGE),
        Req("PUT", f"{CM}/settings", {**cmap("settings", {"mode": "e"}),
                                      "metadata": {"name": "settings", "resourceVersion": "not-a-number"}}),
        Req("PUT", f"{CM}/other-name", cmap("settings", {"mode": "f"})),
        Req("PUT", f"{CM}/missing", cmap("missing", {"mode": "f"})),
        Req("GET", f"{CM}/settings"),
        Req("DELETE", f"{CM}/settings"),
        Req("GET", f"{CM}/settings"),
        Req("DELETE", f"{CM}/settings"),
    ],
    "cm_immutable": [
        Req("POST", CM, cmap("frozen", {"k": "v"}, immutable=True)),
        Req("PUT", f"{CM}/frozen", cmap("frozen", {"k": "changed"}, immutable=True)),
        Req("PATCH", f"{CM}/frozen", {"data": {"k": "changed"}}, MERGE),
        Req("PATCH", f"{CM}/frozen", {"binaryData": {"b": "AAE="}}, MERGE),
        Req("PATCH", f"{CM}/frozen", {"immutable": False}, MERGE),
        Req("PATCH", f"{CM}/frozen", {"immutable": None}, MERGE),
        Req("PATCH", f"{CM}/frozen", {"metadata": {"labels": {"frozen": "yes"}}}, MERGE),
        Req("POST", CM, cmap("thaw", {"k": "v"})),
        Req("PATCH", f"{CM}/thaw", {"immutable": True}, MERGE),
        Req("PATCH", f"{CM}/thaw", [{"op": "replace", "path": "/data/k", "value": "w"}], JSON),
        Req("DELETE", f"{CM}/frozen"),
        Req("POST", CM, cmap("frozen", {"k": "again"})),
    ],
    "cm_invalid_input": [
        Req("POST", CM, cmap("Bad_Name", {"k": "v"})),
        Req("POST", CM, cmap("x" * 254, {"k": "v"})),
        Req("POST", CM, cmap("bad-label", {"k": "v"}, {"-bad": "v"})),
        Req("POST", CM, cmap("bad-label-value", {"k": "v"}, {"app": "has space"})),
        Req("POST", CM, cmap("bad-key", {"not a key!": "v"})),
        Req("POST", CM, cmap("dup-key", {"k": "v"}, binaryData={"k": "AAE="})),
        Req("POST", CM, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "wrong-type"},
                         "data": {"k": 1}}),
        Req("POST", CM, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {}, "data": {"k": "v"}}),
        Req("POST", CM, {"apiVersion": "v1", "kind": "ConfigMap",
                         "metadata": {"name": "elsewhere", "namespace": "kube-system"}}),
        Req("POST", "/api/v1/namespaces/{ns}-missing/configmaps", cmap("nowhere", {"k": "v"})),
        Req("POST", CM, {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "kind-mismatch"}}),
        Req("POST", CM, {"apiVersion": "v1", "kind": "ConfigMap", "data": {"k": "v"},
                         "metadata": {"name": "bad-annotation", "annotations": {"a/b/c": "v"}}}),
        Req("GET", "/api/v1/namespaces/{ns}/widgets"),
        Req("GET", CM, params={"labelSelector": "app in web"}),
    ],
    "cm_generate_name_and_dry_run": [
        Req("POST", CM, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"generateName": "gen-"},
                         "data": {"k": "v"}}),
        Req("POST", CM, cmap("dry", {"k": "v"}), params={"dryRun": "All"}),
        Req("GET", f"{CM}/dry"),
        Req("POST", CM, cmap("real", {"k": "v"})),
        Req("PATCH", f"{CM}/real", {"data": {"k": "dry"}}, MERGE, params={"dryRun": "All"}),
        Req("GET", f"{CM}/real"),
        Req("DELETE", f"{CM}/real", params={"dryRun": "All"}),
        Req("GET", f"{CM}/real"),
        Req("POST", CM, cmap("bogus-dry", {"k": "v"}), params={"dryRun": "Bogus"}),
        Req("POST", CM, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"generateName": "Gen_"}}),
        Req("GET", CM, params={"labelSelector": "app"}),
    ],
    "cm_label_and_field_selectors": [
        Req("POST", CM, cmap("s-a", {"k": "1"}, {"app": "web", "tier": "front", "run": "{ns}"})),
        Req("POST", CM, cmap("s-b", {"k": "2"}, {"app": "web", "tier": "back"})),
        Req("POST", CM, cmap("s-c", {"k": "3"}, {"app": "db", "run": "{ns}"})),
        Req("POST", CM, cmap("s-d", {"k": "4"})),
        Req("GET", CM, params={"labelSelector": "app=web"}, pick=NAMES),
        Req("GET", CM, params={"labelSelector": "app!=web"}, pick=NAMES),
        Req("GET", CM, params={"labelSelector": "app in (web,db)"}, pick=NAMES),
        Req("GET", CM, params={"labelSelector": "app notin (web)"}, pick=NAMES),
        Req("GET", CM, params={"labelSelector": "tier"}, pick=NAMES),
        Req("GET", CM, params={"labelSelector": "!tier"}, pick=NAMES),
        Req("GET", CM, params={"labelSelector": "app=web,tier=back"}),
        Req("GET", CM, params={"fieldSelector": "metadata.name=s-c"}),
        Req("GET", CM, params={"fieldSelector": "metadata.name!=s-c"}, pick=NAMES),
        Req("GET", CM, params={"fieldSelector": "metadata.namespace={ns}", "labelSelector": "tier=front"},
            pick=NAMES),
        Req("GET", CM, params={"fieldSelector": "data.k=1"}),
        Req("GET", CM, params={"labelSelector": "Bad Key=1"}),
        Req("GET", "/api/v1/configmaps", params={"labelSelector": "run={ns}"},
            pick=("items.*.metadata.name", "items.*.metadata.namespace")),
    ],
    "cm_pagination": [
        *[Req("POST", CM, cmap(f"p-{i}", {"i": str(i)}, {"page": "yes"})) for i in range(1, 6)],
        Req("GET", CM, params={"limit": "2"}, save={"c1": "metadata.continue"}),
        Req("GET", CM, params={"limit": "2", "continue": "{m:c1}"}, save={"c2": "metadata.continue"}),
        Req("GET", CM, params={"limit": "2", "continue": "{m:c2}"}),
        Req("GET", CM, params={"limit": "2", "labelSelector": "page=yes"}, save={"c3": "metadata.continue"}),
        Req("GET", CM, params={"limit": "10", "labelSelector": "page=yes", "continue": "{m:c3}"}, pick=NAMES),
        Req("GET", CM, params={"limit": "2", "continue": "bm90LWEtdG9rZW4"}),
        Req("GET", CM, params={"limit": "0"}, pick=NAMES),
        Req("GET", CM, params={"limit": "-1"}, pick=NAMES),
    ],
    "cm_delete_collection": [
        Req("POST", CM, cmap("d-1", {"k": "v"}, {"app": "a"})),
        Req("POST", CM, cmap("d-2", {"k": "v"}, {"app": "a"})),
        Req("POST", CM, cmap("d-3", {"k": "v"}, {"app": "b"})),
        Req("POST", CM, cmap("d-4", {"k": "v"})),
        Req("DELETE", CM, params={"labelSelector": "app=a"}),
        Req("GET", CM, params={"labelSelector": "app"}, pick=NAMES),
        Req("DELETE", CM, params={"labelSelector": "app", "fieldSelector": "metadata.name=d-3"}),
        Req("GET", CM, pick=NAMES),
        Req("DELETE", CM, params={"labelSelector": "app in a"}),
        Req("DELETE", CM, params={"labelSelector": "app=none"}),
    ],
    "cm_delete_preconditions": [
        Req("POST", CM, cmap("pre", {"k": "v"}), save={"uid": "metadata.uid", "rv": "metadata.resourceVersion"}),
        Req("DELETE", f"{CM}/pre", {"kind": "DeleteOptions", "apiVersion": "v1",
                                    "preconditions": {"uid": "00000000-0000-0000-0000-00000000abcd"}}),
        Req("PATCH", f"{CM}/pre", {"data": {"k": "w"}}, MERGE),
        Req("DELETE", f"{CM}/pre", {"kind": "DeleteOptions", "apiVersion": "v1",
                                    "preconditions": {"resourceVersion": "{m:rv}"}}, brief=True),
        Req("GET", f"{CM}/pre"),
        Req("DELETE", f"{CM}/pre", {"kind": "DeleteOptions", "apiVersion": "v1",
                                    "preconditions": {"uid": "{m:uid}"}}),
        Req("GET", f"{CM}/pre"),
    ],
    "cm_watch_from_resource_version": [
        Mark("m", CM),
        Req("POST", CM, cmap("w-1", {"k": "1"}, {"app": "w"})),
        Req("PATCH", f"{CM}/w-1", {"data": {"k": "2"}}, MERGE),
        Req("POST", CM, cmap("w-2", {"k": "1"})),
        Req("DELETE", f"{CM}/w-1"),
        Req("PUT", f"{CM}/w-2", cmap("w-2", {"k": "2"}, {"app": "w"})),
        Watch(CM, since="m", to_last_write=True),
        Watch(CM, since="m", params={"labelSelector": "app=w"}),
        Watch(CM, since="m", params={"fieldSelector": "metadata.name=w-2"}),
    ],
    "cm_watch_selector_transitions": [
        Mark("m", CM),
        Req("POST", CM, cmap("t-1", {"k": "1"}, {"app": "x"})),
        Req("PATCH", f"{CM}/t-1", {"metadata": {"labels": {"app": "y"}}}, MERGE),
        Req("PATCH", f"{CM}/t-1", {"data": {"k": "2"}}, MERGE),
        Req("PATCH", f"{CM}/t-1", {"metadata": {"labels": {"app": "x"}}}, MERGE),
        Watch(CM, since="m", params={"labelSelector": "app=x"}, to_last_write=True),
        Watch(CM, since="m", params={"labelSelector": "app=y"}),
        Watch(CM, since="m", params={"labelSelector": "app notin (x)"}),
    ],
    "cm_server_side_apply_two_managers": [
        Req("PATCH", f"{CM}/ssa", cmap("ssa", {"x": "1", "y": "2"}), APPLY, params=fm("alice")),
        Req("PATCH", f"{CM}/ssa", cmap("ssa", {"z": "3"}), APPLY, params=fm("bob")),
        Req("PATCH", f"{CM}/ssa", cmap("ssa", {"x": "9", "z": "3"}), APPLY, params=fm("bob")),
        Req("PATCH", f"{CM}/ssa", cmap("ssa", {"x": "9", "z": "3"}), APPLY, params=fm("bob", force=True)),
        Req("PATCH", f"{CM}/ssa", cmap("ssa", {"y": "2"}), APPLY, params=fm("alice")),
        Req("PATCH", f"{CM}/ssa", cmap("ssa", {"y": "2"}, {"owner": "alice"}), APPLY, params=fm("alice")),
        Req("PATCH", f"{CM}/ssa", cmap("ssa"), APPLY, params=fm("alice")),
        Req("GET", f"{CM}/ssa"),
        Req("PUT", f"{CM}/ssa", cmap("ssa", {"x": "put", "z": "3"})),
        Req("PATCH", f"{CM}/ssa", cmap("ssa", {"x": "alice"}), APPLY, params=fm("alice")),
        Req("PATCH", f"{CM}/ssa", cmap("ssa", {"x": "alice"}), APPLY),
        Req("PATCH", f"{CM}/ssa", cmap("ssa", {"z": "3"}), APPLY, params=fm("bob")),
        Req("GET", f"{CM}/ssa"),
    ],
    # --- Secrets ---------------------------------------------------------------------------------------
    "secret_string_data_and_types": [
        Req("POST", SECRET, secret("creds", stringData={"user": "admin"}, data={"pass": "czNjcjN0"})),
        Req("GET", f"{SECRET}/creds"),
        Req("PUT", f"{SECRET}/creds", secret("creds", data={"pass": "czNjcjN0"}, stringData={"pass": "new"})),
        Req("PATCH", f"{SECRET}/creds", {"stringData": {"token": "abc"}}, MERGE),
        Req("PATCH", f"{SECRET}/creds", {"type": "kubernetes.io/tls"}, MERGE),
        Req("POST", SECRET, secret("tls", type="kubernetes.io/tls", data={"tls.crt": "Y2VydA=="})),
        Req("POST", SECRET, secret("tls-ok", type="kubernetes.io/tls",
                                   data={"tls.crt": "Y2VydA==", "tls.key": "a2V5"})),
        Req("POST", SECRET, secret("docker", type="kubernetes.io/dockerconfigjson",
                                   data={".dockerconfigjson": "bm90IGpzb24="})),
        Req("POST", SECRET, secret("basic", type="kubernetes.io/basic-auth", data={"other": "eA=="})),
        Req("POST", SECRET, secret("b64", data={"k": "not base64!!"})),
        Req("POST", SECRET, secret("badkey", data={"bad key": "eA=="})),
        Req("GET", SECRET, params={"fieldSelector": "type=Opaque"}, pick=NAMES),
        Req("GET", SECRET, params={"fieldSelector": "type=kubernetes.io/tls"}, pick=NAMES),
    ],
    "secret_immutable": [
        Req("POST", SECRET, secret("locked", data={"k": "dg=="}, immutable=True)),
        Req("PATCH", f"{SECRET}/locked", {"data": {"k": "dw=="}}, MERGE),
        Req("PATCH", f"{SECRET}/locked", {"stringData": {"extra": "x"}}, MERGE),
        Req("PATCH", f"{SECRET}/locked", {"immutable": False}, MERGE),
        Req("PATCH", f"{SECRET}/locked", {"metadata": {"labels": {"locked": "true"}}}, MERGE),
        Req("DELETE", f"{SECRET}/locked"),
        Req("POST", SECRET, secret("locked", data={"k": "dw=="})),
    ],
    # --- the Echo custom resource -------------------------------------------------------------------------
    "echo_generation_and_status": [
        Req("POST", ECHO, echo("gen")),
        Req("PATCH", f"{ECHO}/gen", {"spec": {"message": "hello"}}, MERGE),
        Req("PATCH", f"{ECHO}/gen", {"metadata": {"labels": {"app": "gen"}}}, MERGE),
        Req("PATCH", f"{ECHO}/gen/status", {"status": {"observedGeneration": 2, "seen": "hello"}}, MERGE,
            save={"rv": "metadata.resourceVersion"}),
        # picked: the real order of the two Update entries in managedFields depends on whether they were
        # written within the same second (it sorts them by time)
        Req("PUT", f"{ECHO}/gen", {**echo("gen", {"message": "hello", "copies": 2}, resourceVersion="{m:rv}"),
                                   "status": {"seen": "ignored"}}, save={"rv2": "metadata.resourceVersion"},
            pick=("metadata.generation", "spec", "status")),
        Req("PATCH", f"{ECHO}/gen/status", {"spec": {"message": "nope"}, "status": {"seen": "hello-2"}}, MERGE),
        Req("PUT", f"{ECHO}/gen/status", {**echo("gen", {"message": "hello", "copies": 2}, resourceVersion="{m:rv2}"),
                                          "status": {"observedGeneration": 3}}),
        Req("PATCH", f"{ECHO}/gen/status", {"status": {"observedGeneration": 3, "conditions": [
            {"type": "Ready", "status": "True", "reason": "Reconciled", "extra": {"free": 1}}]}}, MERGE),
        Req("PATCH", f"{ECHO}/gen", {"metadata": {"annotations": {"example.com/note": "x"}}}, MERGE),
        Req("GET", f"{ECHO}/gen"),
        Req("GET", f"{ECHO}/gen/status"),
        Req("PATCH", f"{ECHO}/gen/status", {"status": {"observedGeneration": "three"}}, MERGE),
    ],
    "echo_update_preconditions": [
        Req("POST", ECHO, echo("upd"), save={"rv": "metadata.resourceVersion", "uid": "metadata.uid"}),
        Req("PUT", f"{ECHO}/upd", echo("upd", {"message": "no-rv"})),
        Req("PUT", f"{ECHO}/upd", echo("upd", {"message": "stale"}, resourceVersion="1")),
        Req("PUT", f"{ECHO}/upd", echo("upd", {"message": "bad"}, resourceVersion="abc")),
        Req("PUT", f"{ECHO}/upd", echo("other", {"message": "mismatch"}, resourceVersion="{m:rv}")),
        Req("PUT", f"{ECHO}/nobody", echo("nobody", {"message": "x"})),
        Req("PUT", f"{ECHO}/upd", echo("upd", {"message": "ok"}, resourceVersion="{m:rv}"),
            save={"rv2": "metadata.resourceVersion"}),
        Req("PUT", f"{ECHO}/upd", echo("upd", {"message": "again"}, resourceVersion="{m:rv}")),
        Req("PUT", f"{ECHO}/upd", echo("upd", {"message": "ok"}, resourceVersion="{m:rv2}")),
        Req("PATCH", f"{ECHO}/upd", {"spec": {"message": "ok"}}, MERGE),
        Req("PATCH", f"{ECHO}/upd", {"metadata": {"resourceVersion": "{m:rv}"}, "spec": {"message": "x"}}, MERGE),
        Req("DELETE", f"{ECHO}/upd", {"preconditions": {"uid": "00000000-0000-0000-0000-00000000beef"}}),
        Req("DELETE", f"{ECHO}/upd", {"preconditions": {"resourceVersion": "{m:rv}"}}, brief=True),
        Req("DELETE", f"{ECHO}/upd", {"preconditions": {"uid": "{m:uid}"}}),
        Req("GET", f"{ECHO}/upd"),
    ],
    "echo_finalizers": [
        Req("POST", ECHO, echo("fin", finalizers=["example.com/cleanup"])),
        Req("DELETE", f"{ECHO}/fin"),
        Req("GET", f"{ECHO}/fin"),
        Req("PATCH", f"{ECHO}/fin", {"spec": {"message": "while deleting"}}, MERGE),
        Req("PATCH", f"{ECHO}/fin", {"metadata": {"finalizers": ["example.com/cleanup", "example.com/more"]}},
            MERGE),
        Req("PATCH", f"{ECHO}/fin/status", {"status": {"seen": "terminating"}}, MERGE),
        Req("DELETE", f"{ECHO}/fin"),
        Req("GET", ECHO, pick=NAMES),
        Req("PATCH", f"{ECHO}/fin", [{"op": "test", "path": "/metadata/finalizers/0", "value": "example.com/cleanup"},
                                     {"op": "remove", "path": "/metadata/finalizers/0"}], JSON),
        Req("GET", f"{ECHO}/fin"),
        Req("POST", ECHO, echo("fin2", finalizers=["example.com/a", "example.com/b"])),
        Req("DELETE", f"{ECHO}/fin2"),
        Req("PATCH", f"{ECHO}/fin2", {"metadata": {"finalizers": ["example.com/b"]}}, MERGE),
        Req("PATCH", f"{ECHO}/fin2", [{"op": "replace", "path": "/metadata/finalizers", "value": []}], JSON),
        Req("GET", f"{ECHO}/fin2"),
        Req("POST", ECHO, echo("fin3", finalizers=["cleanup"])),
        Req("POST", ECHO, echo("fin4", finalizers=["Example.com/Bad Name"])),
    ],
    "echo_schema_validation": [
        Req("POST", ECHO, echo("v1", {"message": "hi", "copies": -1})),
        Req("POST", ECHO, echo("v2", {"message": "hi", "copies": "three"})),
        Req("POST", ECHO, {**echo("v3"), "spec": "not-an-object"}),
        Req("POST", ECHO, echo("v4", {"message": 5})),
        Req("POST", ECHO, echo("v5", {"message": "hi", "extra": "pruned"})),
        Req("GET", f"{ECHO}/v5"),
        Req("POST", ECHO, echo("v6", {"message": "hi", "extra": "strict"}), params={"fieldValidation": "Strict"}),
        Req("POST", ECHO, {**echo("v7"), "bogus": 1}, params={"fieldValidation": "Strict"}),
        Req("POST", ECHO, echo("Bad_Name")),
        Req("POST", ECHO, {"apiVersion": "test.kubeloop.dev/v1", "kind": "Echo", "metadata": {},
                           "spec": {"message": "hi"}}),
        Req("POST", ECHO, {**echo("v8"), "kind": "Other"}),
        Req("POST", ECHO, {**echo("v9"), "apiVersion": "test.kubeloop.dev/v2"}),
        Req("PATCH", f"{ECHO}/v5", {"spec": {"message": "strategic"}}, STRATEGIC),
        Req("PATCH", f"{ECHO}/v5", [{"op": "replace", "path": "/spec/copies", "value": "x"}], JSON),
        Req("PATCH", f"{ECHO}/v5", [{"op": "move", "from": "/spec/nothing", "path": "/spec/message"}], JSON),
        Req("PATCH", f"{ECHO}/v5", [{"op": "add", "path": "/spec/copies", "value": 4}], JSON),
        Req("GET", ECHO),
    ],
    "echo_server_side_apply": [
        Req("PATCH", f"{ECHO}/ssa", echo("ssa", {"message": "hi", "copies": 1}), APPLY, params=fm("user")),
        Req("PATCH", f"{ECHO}/ssa", echo("ssa", {"copies": 2}), APPLY, params=fm("operator")),
        Req("PATCH", f"{ECHO}/ssa", echo("ssa", {"copies": 2}), APPLY, params=fm("operator", force=True)),
        Req("PATCH", f"{ECHO}/ssa", echo("ssa", {"message": "hi"}), APPLY, params=fm("user")),
        Req("PATCH", f"{ECHO}/ssa", {"apiVersion": "test.kubeloop.dev/v1", "kind": "Echo",
                                     "metadata": {"name": "ssa"}}, APPLY, params=fm("operator")),
        Req("PATCH", f"{ECHO}/ssa", echo("ssa", {"message": "hi"}, labels={"app": "ssa"}), APPLY,
            params=fm("user")),
        Req("PATCH", f"{ECHO}/ssa", echo("ssa", {"message": "hi"}), APPLY, params=fm("user")),
        Req("PATCH", f"{ECHO}/ssa/status", {"apiVersion": "test.kubeloop.dev/v1", "kind": "Echo",
                                            "metadata": {"name": "ssa"}, "status": {"seen": "hi"}},
            APPLY, params=fm("operator")),
        Req("PATCH", f"{ECHO}/ssa/status", {"apiVersion": "test.kubeloop.dev/v1", "kind": "Echo",
                                            "metadata": {"name": "ssa"}, "status": {"seen": "x"}}, APPLY),
        Req("PATCH", f"{ECHO}/ssa", echo("ssa", {"message": "hi", "copies": "many"}), APPLY, params=fm("user")),
        Req("PATCH", f"{ECHO}/ssa", echo("ssa", {"message": "bye"}), APPLY, params=fm("user")),
        Req("GET", f"{ECHO}/ssa"),
    ],
    "echo_list_watch_paginate": [
        Mark("m", ECHO),
        Req("POST", ECHO, echo("e-1", labels={"tier": "a"})),
        Req("PATCH", f"{ECHO}/e-1/status", {"status": {"seen": "hi"}}, MERGE),
        Req("PATCH", f"{ECHO}/e-1", {"spec": {"copies": 3}}, MERGE),
        Req("POST", ECHO, echo("e-2", labels={"tier": "b"})),
        Req("POST", ECHO, echo("e-3", labels={"tier": "a"})),
        Watch(ECHO, since="m", to_last_write=True),
        Watch(ECHO, since="m", params={"labelSelector": "tier=b"}),
        Req("GET", ECHO, params={"labelSelector": "tier=a"}, pick=NAMES),
        Req("GET", ECHO, params={"fieldSelector": "metadata.name=e-2"}, pick=NAMES),
        Req("GET", ECHO, params={"limit": "2"}, save={"c": "metadata.continue"}),
        Req("GET", ECHO, params={"limit": "2", "continue": "{m:c}"}),
        Req("GET", "/apis/test.kubeloop.dev/v1/echoes", params={"fieldSelector": "metadata.namespace={ns}"},
            pick=NAMES),
        Req("GET", ECHO, params={"fieldSelector": "spec.message=hi"}),
    ],
    # --- ownerReferences and garbage collection ---------------------------------------------------------
    "gc_background": [
        Req("POST", ECHO, echo("owner"), save={"uid": "metadata.uid"}),
        Req("POST", CM, owned_cm("child-1", "owner", "{m:uid}")),
        Req("POST", CM, owned_cm("child-2", "owner", "{m:uid}", controller=None, block=None)),
        Req("GET", CM, params={"fieldSelector": "metadata.name=child-1"}),
        Req("DELETE", f"{ECHO}/owner", params={"propagationPolicy": "Background"}),
        WaitGone(f"{CM}/child-1"),
        WaitGone(f"{CM}/child-2"),
        Req("GET", f"{CM}/child-1"),
    ],
    "gc_foreground": [
        Req("POST", ECHO, echo("owner"), save={"uid": "metadata.uid"}),
        Req("POST", CM, owned_cm("blocking", "owner", "{m:uid}")),
        Req("POST", CM, owned_cm("non-blocking", "owner", "{m:uid}", controller=False, block=False)),
        Req("DELETE", f"{ECHO}/owner", {"kind": "DeleteOptions", "apiVersion": "v1",
                                        "propagationPolicy": "Foreground"}),
        WaitGone(f"{CM}/blocking"),
        WaitGone(f"{CM}/non-blocking"),
        WaitGone(f"{ECHO}/owner"),
        Req("GET", f"{ECHO}/owner"),
    ],
    "gc_orphan": [
        Req("POST", ECHO, echo("owner"), save={"uid": "metadata.uid"}),
        Req("POST", CM, owned_cm("kept", "owner", "{m:uid}")),
        Req("DELETE", f"{ECHO}/owner", params={"propagationPolicy": "Orphan"}),
        WaitGone(f"{ECHO}/owner"),
        WaitFor(f"{CM}/kept", "metadata.ownerReferences", None),
        Req("GET", f"{CM}/kept", pick=("metadata.name", "metadata.ownerReferences", "data")),
        Req("POST", ECHO, echo("owner-2", finalizers=["example.com/hold"]), save={"uid2": "metadata.uid"}),
        Req("POST", CM, owned_cm("kept-2", "owner-2", "{m:uid2}")),
        Req("DELETE", f"{ECHO}/owner-2", params={"orphanDependents": "true"}),
        WaitFor(f"{ECHO}/owner-2", "metadata.finalizers", ["example.com/hold"]),
        Req("GET", f"{CM}/kept-2", pick=("metadata.name", "metadata.ownerReferences")),
        Req("PATCH", f"{ECHO}/owner-2", {"metadata": {"finalizers": None}}, MERGE, pick=("metadata.finalizers",)),
        WaitGone(f"{ECHO}/owner-2"),
        Req("GET", f"{CM}/kept-2", pick=("metadata.name", "metadata.ownerReferences")),
    ],
    "gc_dangling_and_invalid_owners": [
        Req("POST", CM, owned_cm("ghost-child", "ghost", "00000000-0000-0000-0000-000000000001")),
        Req("POST", ECHO, echo("present"), save={"uid": "metadata.uid"}),
        Req("POST", CM, owned_cm("wrong-uid", "present", "00000000-0000-0000-0000-000000000002")),
        Req("POST", CM, owned_cm("right-uid", "present", "{m:uid}")),
        WaitGone(f"{CM}/ghost-child"),
        WaitGone(f"{CM}/wrong-uid"),
        Req("GET", f"{CM}/right-uid", pick=("metadata.name", "metadata.ownerReferences")),
        Req("POST", CM, owned_cm("no-uid", "present", "")),
        Req("POST", CM, owned_cm("no-kind", "present", "{m:uid}", kind="")),
        Req("POST", CM, owned_cm("no-version", "present", "{m:uid}", api="")),
        Req("POST", CM, cmap("two-controllers", owners=[
            {"apiVersion": "test.kubeloop.dev/v1", "kind": "Echo", "name": "a",
             "uid": "00000000-0000-0000-0000-00000000000a", "controller": True},
            {"apiVersion": "test.kubeloop.dev/v1", "kind": "Echo", "name": "b",
             "uid": "00000000-0000-0000-0000-00000000000b", "controller": True}])),
        Req("PATCH", f"{CM}/right-uid", {"metadata": {"ownerReferences": None}}, MERGE,
            pick=("metadata.name", "metadata.ownerReferences")),
    ],
    # --- Deployments -------------------------------------------------------------------------------------
    "deployment_patches": [
        Req("POST", DEP, deploy("web", containers=[{"name": "app", "image": "nginx:1.25"},
                                                   {"name": "sidecar", "image": "envoy:1.30"}]), pick=DEP_PICK),
        Req("PATCH", f"{DEP}/web", {"spec": {"replicas": 3}}, MERGE, pick=("spec.replicas", "metadata.generation")),
        Req("PATCH", f"{DEP}/web", {"spec": {"template": {"spec": {"containers": [
            {"name": "app", "image": "nginx:1.26"}]}}}}, STRATEGIC, pick=DEP_PICK),
        Req("PATCH", f"{DEP}/web", {"spec": {"template": {"spec": {"containers": [
            {"name": "app", "env": [{"name": "MODE", "value": "prod"}]}]}}}}, STRATEGIC,
            pick=("spec.template.spec.containers.*.name", "spec.template.spec.containers.*.env")),
        Req("PATCH", f"{DEP}/web", {"spec": {"template": {"spec": {"containers": [
            {"name": "sidecar", "$patch": "delete"}]}}}}, STRATEGIC,
            pick=("spec.template.spec.containers.*.name", "metadata.generation")),
        Req("PATCH", f"{DEP}/web", [{"op": "replace", "path": "/spec/replicas", "value": 2}], JSON,
            pick=("spec.replicas",)),
        Req("PATCH", f"{DEP}/web", [{"op": "test", "path": "/spec/replicas", "value": 99},
                                    {"op": "replace", "path": "/spec/replicas", "value": 5}], JSON),
        Req("PATCH", f"{DEP}/web", [{"op": "add", "path": "/metadata/annotations~1x", "value": "y"}], JSON,
            pick=("metadata.labels", "metadata.annotations/x", "spec.replicas")),
        Req("PATCH", f"{DEP}/web", {"spec": {"template": {"spec": {"containers": [
            {"name": "main", "image": "busybox:1.36"}]}}}}, MERGE,
            pick=("spec.template.spec.containers.*.name", "spec.template.spec.containers.*.image")),
        Req("PATCH", f"{DEP}/web", {"metadata": {"labels": {"team": "a"}}}, MERGE,
            pick=("metadata.labels", "metadata.generation")),
        Req("PATCH", f"{DEP}/web", {"spec": {"paused": True}}, MERGE, pick=("spec.paused", "metadata.generation")),
        Req("GET", f"{DEP}/web", pick=DEP_PICK),
        Req("DELETE", f"{DEP}/web", params={"propagationPolicy": "Foreground"},
            pick=("metadata.name", "metadata.finalizers")),
        WaitGone(f"{DEP}/web"),
    ],
    "deployment_apply_and_scale": [
        Req("PATCH", f"{DEP}/api", deploy("api", replicas=2), APPLY, params=fm("gitops"), pick=DEP_PICK),
        Req("PATCH", f"{DEP}/api", {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "api"},
                                    "spec": {"replicas": 5}}, APPLY, params=fm("autoscaler")),
        Req("PATCH", f"{DEP}/api", {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "api"},
                                    "spec": {"replicas": 5}}, APPLY, params=fm("autoscaler", force=True),
            pick=("spec.replicas", "metadata.generation")),
        Req("PATCH", f"{DEP}/api", {**deploy("api"), "spec": {k: v for k, v in deploy("api")["spec"].items()
                                                              if k != "replicas"}}, APPLY, params=fm("gitops"),
            pick=("spec.replicas", "metadata.generation")),
        Req("PATCH", f"{DEP}/api", deploy("api", replicas=2, containers=[{"name": "app", "image": "nginx:1.27"}]),
            APPLY, params=fm("gitops")),
        Req("GET", f"{DEP}/api/scale", pick=("kind", "apiVersion", "metadata.name", "spec.replicas",
                                             "status.selector")),
        Req("PATCH", f"{DEP}/api/scale", {"spec": {"replicas": 4}}, MERGE, pick=("kind", "spec.replicas")),
        Req("PUT", f"{DEP}/api/scale", {"apiVersion": "autoscaling/v1", "kind": "Scale",
                                        "metadata": {"name": "api"}, "spec": {"replicas": -2}}),
        Req("GET", f"{DEP}/api", pick=("spec.replicas", "metadata.generation",
                                       "spec.template.spec.containers.*.image")),
        Req("GET", f"{DEP}/missing/scale"),
        Req("DELETE", f"{DEP}/api", pick=("kind",)),
        WaitGone(f"{DEP}/api"),
    ],
    "deployment_invalid": [
        Req("POST", DEP, deploy("mismatch", selector={"app": "other"})),
        Req("POST", DEP, deploy("negative", replicas=-1)),
        Req("POST", DEP, {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "noselector"},
                          "spec": {"template": {"metadata": {"labels": {"app": "x"}},
                                                "spec": {"containers": [{"name": "a", "image": "nginx"}]}}}}),
        Req("POST", DEP, {**deploy("nocontainers"), "spec": {**deploy("nocontainers")["spec"], "template": {
            "metadata": {"labels": {"app": "nocontainers"}}, "spec": {"containers": []}}}}),
        Req("POST", DEP, deploy("recreate", strategy={"type": "Recreate", "rollingUpdate": {"maxSurge": 1}})),
        Req("POST", DEP, deploy("zero", strategy={"type": "RollingUpdate",
                                                  "rollingUpdate": {"maxSurge": 0, "maxUnavailable": 0}})),
        Req("POST", DEP, deploy("ok"), pick=("metadata.name", "spec.strategy")),
        Req("PATCH", f"{DEP}/ok", {"spec": {"selector": {"matchLabels": {"app": "ok", "extra": "x"}},
                                            "template": {"metadata": {"labels": {"extra": "x"}}}}}, MERGE,
            brief=True),
        Req("PATCH", f"{DEP}/ok", {"spec": {"revisionHistoryLimit": -1}}, STRATEGIC),
        Req("PATCH", f"{DEP}/ok", "{not json", MERGE),
        # brief: the real message embeds the live object (its raw resourceVersion, the controller's annotations)
        Req("PATCH", f"{DEP}/ok", {"spec": {"replicas": "three"}}, MERGE, brief=True),
        Req("DELETE", f"{DEP}/ok", params={"propagationPolicy": "Sideways"}),
        Req("DELETE", f"{DEP}/ok", pick=("kind",)),
    ],
    # --- Services, Pods ----------------------------------------------------------------------------------
    "service_patches": [
        Req("POST", SVC, service("web", [{"name": "http", "port": 80, "targetPort": 8080},
                                         {"name": "metrics", "port": 9090}]), pick=SVC_PICK),
        Req("PATCH", f"{SVC}/web", {"spec": {"ports": [{"name": "grpc", "port": 9000}]}}, STRATEGIC,
            pick=("spec.ports",)),
        Req("PATCH", f"{SVC}/web", {"spec": {"selector": {"version": "v2"}}}, STRATEGIC, pick=("spec.selector",)),
        Req("PATCH", f"{SVC}/web", {"spec": {"selector": {"app": None}}}, MERGE, pick=("spec.selector",)),
        Req("PATCH", f"{SVC}/web", [{"op": "replace", "path": "/spec/ports/0/targetPort", "value": "http-alt"}],
            JSON, pick=("spec.ports",)),
        Req("PATCH", f"{SVC}/web", {"metadata": {"labels": {"tier": "edge"}}}, MERGE, pick=("metadata.labels",)),
        Req("PATCH", f"{SVC}/web", {"spec": {"ports": [{"port": 80, "$patch": "delete"}]}}, STRATEGIC,
            pick=("spec.ports",)),
        Req("GET", SVC, params={"labelSelector": "tier=edge"}, pick=NAMES),
        Req("POST", SVC, service("headless", clusterIP="None"),
            pick=("metadata.name", "spec.clusterIP", "spec.clusterIPs", "spec.type")),
        Req("PATCH", f"{SVC}/headless", {"spec": {"clusterIP": "10.0.0.10", "clusterIPs": ["10.0.0.10"]}}, MERGE),
        Req("POST", SVC, {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "db"},
                          "spec": {"type": "ExternalName", "externalName": "db.example.com"}},
            pick=("metadata.name", "spec.type", "spec.externalName", "spec.clusterIP", "spec.ports")),
        Req("GET", SVC, params={"fieldSelector": "metadata.name=db"}, pick=NAMES),
        Req("DELETE", f"{SVC}/web", pick=("kind", "metadata.name")),
        Req("GET", f"{SVC}/web"),
    ],
    "service_invalid": [
        Req("POST", SVC, service("zero-port", [{"port": 0}])),
        Req("POST", SVC, service("unnamed", [{"port": 80}, {"port": 81}])),
        Req("POST", SVC, service("dup", [{"name": "a", "port": 80}, {"name": "a", "port": 80}])),
        Req("POST", SVC, service("fancy", type="Fancy")),
        Req("POST", SVC, service("proto", [{"port": 80, "protocol": "HTTP"}])),
        Req("POST", SVC, service("target", [{"port": 80, "targetPort": "Not_A_Name"}])),
        Req("POST", SVC, service("1svc")),
        Req("POST", SVC, service("sticky", sessionAffinity="Sticky")),
        Req("POST", SVC, service("high", [{"port": 70000}])),
        Req("POST", SVC, {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "noext"},
                          "spec": {"type": "ExternalName"}}),
    ],
    "pod_patches": [
        Req("POST", POD, pod("web"), pick=POD_PICK),
        Req("PATCH", f"{POD}/web", {"metadata": {"labels": {"tier": "front"}}}, STRATEGIC, pick=("metadata.labels",)),
        Req("PATCH", f"{POD}/web", {"spec": {"containers": [{"name": "app", "image": "nginx:1.26"}]}}, STRATEGIC,
            pick=("spec.containers.*.image", "spec.containers.*.imagePullPolicy")),
        Req("PATCH", f"{POD}/web", {"metadata": {"annotations": {"example.com/owner": "team-a"}}}, MERGE,
            pick=("metadata.annotations",)),
        Req("PATCH", f"{POD}/web", [{"op": "remove", "path": "/metadata/annotations/example.com~1owner"}], JSON,
            pick=("metadata.annotations",)),
        Req("PATCH", f"{POD}/web", {"spec": {"containers": [{"name": "app", "ports": [{"containerPort": 80}]}]}},
            STRATEGIC, brief=True),
        Req("PATCH", f"{POD}/web", {"spec": {"activeDeadlineSeconds": 600}}, MERGE,
            pick=("spec.activeDeadlineSeconds",)),
        Req("PATCH", f"{POD}/web", {"spec": {"activeDeadlineSeconds": None}}, MERGE, brief=True),
        Req("POST", POD, pod("latest", image="busybox", labels={"app": "latest", "tier": "front"}), pick=POD_PICK),
        Req("GET", POD, params={"fieldSelector": "spec.nodeName=diff-node"}, pick=NAMES),
        Req("GET", POD, params={"fieldSelector": "status.phase=Pending"}, pick=NAMES),
        Req("GET", POD, params={"labelSelector": "tier=front,app=web"}, pick=NAMES),
        Req("DELETE", f"{POD}/web", params={"gracePeriodSeconds": "0"}, pick=("metadata.name",)),
        Req("DELETE", f"{POD}/latest", params={"gracePeriodSeconds": "0"}, pick=("metadata.name",)),
        WaitGone(f"{POD}/web"),
        WaitGone(f"{POD}/latest"),
    ],
    "pod_invalid": [
        Req("POST", POD, {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "empty"}, "spec": {}}),
        Req("POST", POD, {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "noimage"},
                          "spec": {"containers": [{"name": "app"}]}}),
        Req("POST", POD, pod("policy", node=None, restartPolicy="Sometimes")),
        Req("POST", POD, {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "badname"},
                          "spec": {"containers": [{"name": "App_1", "image": "nginx"}]}}),
        Req("POST", POD, {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "dup"},
                          "spec": {"containers": [{"name": "a", "image": "nginx"}, {"name": "a", "image": "nginx"}]}}),
        Req("POST", POD, {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "wrongtype"},
                          "spec": {"containers": "nginx"}}),
        Req("POST", POD, pod("Pod.With.Caps", node=None)),
        Req("POST", POD, {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "limits"}, "spec": {
            "containers": [{"name": "a", "image": "nginx", "resources": {
                "requests": {"cpu": "2"}, "limits": {"cpu": "1"}}}]}}),
        Req("POST", POD, {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "badport"}, "spec": {
            "containers": [{"name": "a", "image": "nginx", "ports": [{"containerPort": 0}]}]}}),
        Req("POST", POD, {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "badquantity"}, "spec": {
            "containers": [{"name": "a", "image": "nginx", "resources": {"limits": {"memory": "lots"}}}]}}),
    ],
    # --- batch and other workloads --------------------------------------------------------------------
    "job_suspended": [
        Req("POST", JOB, job("batch"), pick=JOB_PICK),
        Req("PATCH", f"{JOB}/batch", {"spec": {"template": {"spec": {"containers": [
            {"name": "work", "image": "busybox:1.37"}]}}}}, MERGE, brief=True),
        Req("PATCH", f"{JOB}/batch", {"spec": {"parallelism": 3}}, MERGE, pick=("spec.parallelism",)),
        Req("PATCH", f"{JOB}/batch", {"spec": {"completions": 5}}, MERGE, brief=True),
        Req("PATCH", f"{JOB}/batch", {"spec": {"backoffLimit": -1}}, MERGE, brief=True),
        Req("POST", JOB, job("always", restart="Always")),
        Req("POST", JOB, job("manual", manualSelector=True)),
        Req("POST", JOB, job("indexed", completionMode="Indexed", completions=3, parallelism=3), pick=JOB_PICK),
        Req("POST", JOB, job("indexed-bad", completionMode="Indexed")),
        Req("GET", JOB, pick=NAMES),
        Req("DELETE", f"{JOB}/batch", params={"propagationPolicy": "Background"}, pick=("kind",)),
        Req("DELETE", f"{JOB}/indexed", params={"propagationPolicy": "Background"}, pick=("kind",)),
        WaitGone(f"{JOB}/batch"),
        WaitGone(f"{JOB}/indexed"),
    ],
    "cronjob": [
        Req("POST", CJ, cronjob("nightly"), pick=CJ_PICK),
        Req("PATCH", f"{CJ}/nightly", {"spec": {"schedule": "*/15 * * * *"}}, MERGE, pick=CJ_PICK),
        Req("PATCH", f"{CJ}/nightly", {"spec": {"concurrencyPolicy": "Forbid"}}, MERGE,
            pick=("spec.concurrencyPolicy", "metadata.generation")),
        Req("PATCH", f"{CJ}/nightly", {"spec": {"schedule": "every day"}}, MERGE),
        Req("PATCH", f"{CJ}/nightly", [{"op": "add", "path": "/spec/startingDeadlineSeconds", "value": 100}], JSON,
            pick=("spec.startingDeadlineSeconds",)),
        Req("PATCH", f"{CJ}/nightly", {"spec": {"timeZone": "Europe/Paris"}}, MERGE, pick=("spec.timeZone",)),
        Req("POST", CJ, cronjob("mars", timeZone="Mars/Olympus")),
        Req("POST", CJ, cronjob("tz", schedule="TZ=UTC 0 * * * *")),
        Req("POST", CJ, cronjob("policy", concurrencyPolicy="Sometimes")),
        Req("POST", CJ, cronjob("hourly", schedule="@hourly"), pick=("spec.schedule",)),
        Req("GET", f"{CJ}/nightly", pick=CJ_PICK),
        Req("DELETE", f"{CJ}/nightly", pick=("kind",)),
    ],
    "statefulset": [
        Req("POST", STS, statefulset("db"), pick=STS_PICK),
        Req("PATCH", f"{STS}/db", {"spec": {"minReadySeconds": 5}}, MERGE, pick=("spec.minReadySeconds",
                                                                                   "metadata.generation")),
        Req("PATCH", f"{STS}/db", {"spec": {"template": {"spec": {"containers": [
            {"name": "db", "image": "postgres:17"}]}}}}, STRATEGIC, pick=STS_PICK),
        Req("PATCH", f"{STS}/db", {"spec": {"serviceName": "other"}}, MERGE),
        Req("PATCH", f"{STS}/db", {"spec": {"volumeClaimTemplates": []}}, MERGE),
        Req("PATCH", f"{STS}/db", {"spec": {"updateStrategy": {"type": "OnDelete"}}}, MERGE),
        Req("PATCH", f"{STS}/db", {"spec": {"updateStrategy": {"type": "OnDelete", "rollingUpdate": None}}}, MERGE,
            pick=("spec.updateStrategy",)),
        Req("POST", STS, statefulset("mismatch", selector={"app": "other"})),
        Req("POST", STS, statefulset("random", podManagementPolicy="Random")),
        Req("POST", STS, statefulset("parallel", podManagementPolicy="Parallel"),
            pick=("spec.podManagementPolicy",)),
        Req("GET", f"{STS}/db/scale", pick=("kind", "spec.replicas", "status.selector")),
        Req("DELETE", f"{STS}/db", pick=("kind",)),
    ],
    "daemonset": [
        Req("POST", DS, daemonset("agent"), pick=DS_PICK),
        Req("PATCH", f"{DS}/agent", {"spec": {"template": {"spec": {"containers": [
            {"name": "agent", "image": "fluentd:1.17"}]}}}}, STRATEGIC, pick=DS_PICK),
        Req("PATCH", f"{DS}/agent", {"spec": {"updateStrategy": {"rollingUpdate": {"maxUnavailable": "50%"}}}},
            MERGE, pick=("spec.updateStrategy",)),
        Req("PATCH", f"{DS}/agent", {"spec": {"updateStrategy": {"rollingUpdate": {"maxUnavailable": 0,
                                                                                   "maxSurge": 1}}}},
            MERGE, pick=("spec.updateStrategy",)),
        Req("PATCH", f"{DS}/agent", {"spec": {"updateStrategy": {"rollingUpdate": {"maxUnavailable": 0,
                                                                                   "maxSurge": 0}}}}, MERGE),
        Req("POST", DS, daemonset("never", restart="Never")),
        Req("POST", DS, daemonset("empty", selector={})),
        Req("PATCH", f"{DS}/agent", {"spec": {"selector": {"matchLabels": {"app": "other"}}}}, MERGE, brief=True),
        Req("DELETE", f"{DS}/agent", params={"propagationPolicy": "Background"}, pick=("kind",)),
        WaitGone(f"{DS}/agent"),
    ],
    # --- leader election ------------------------------------------------------------------------------------
    "lease_leader_election": [
        Req("GET", f"{LEASE}/op-leader"),
        Req("POST", LEASE, lease("op-leader", "pod-a"), save={"rv1": "metadata.resourceVersion"}),
        Req("PUT", f"{LEASE}/op-leader", lease("op-leader", "pod-a", rv="{m:rv1}", renew="2025-01-01T00:00:12.000000Z"),
            save={"rv2": "metadata.resourceVersion"}),
        Req("PUT", f"{LEASE}/op-leader", lease("op-leader", "pod-b", rv="{m:rv1}", transitions=1,
                                               acquire="2025-01-01T00:00:30.000000Z",
                                               renew="2025-01-01T00:00:30.000000Z")),
        Req("GET", f"{LEASE}/op-leader", save={"rv3": "metadata.resourceVersion"}),
        Req("PUT", f"{LEASE}/op-leader", lease("op-leader", "pod-b", rv="{m:rv3}", transitions=1,
                                               acquire="2025-01-01T00:00:40.000000Z",
                                               renew="2025-01-01T00:00:40.000000Z"),
            save={"rv4": "metadata.resourceVersion"}),
        Req("PUT", f"{LEASE}/op-leader", lease("op-leader", "pod-a", rv="{m:rv2}",
                                               renew="2025-01-01T00:00:41.000000Z")),
        Req("PUT", f"{LEASE}/op-leader", lease("op-leader", "", rv="{m:rv4}", transitions=1, duration=1,
                                               acquire="2025-01-01T00:00:40.000000Z",
                                               renew="2025-01-01T00:00:50.000000Z")),
        Req("GET", f"{LEASE}/op-leader"),
        Req("PUT", f"{LEASE}/created-by-put", lease("created-by-put", "pod-c")),
        Req("GET", LEASE),
        Req("DELETE", f"{LEASE}/op-leader"),
        Req("GET", f"{LEASE}/op-leader"),
    ],
    "lease_invalid": [
        Req("POST", LEASE, lease("zero", "a", duration=0)),
        Req("POST", LEASE, lease("negative", "a", transitions=-1)),
        Req("POST", LEASE, {**lease("badtime", "a"), "spec": {"holderIdentity": "a", "renewTime": "yesterday"}}),
        Req("POST", LEASE, lease("Bad_Lease", "a")),
        Req("POST", LEASE, lease("preferred", "a", preferredHolder="b")),
        Req("POST", LEASE, {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": "bare"}}),
        Req("PATCH", f"{LEASE}/bare", {"spec": {"holderIdentity": "a", "leaseDurationSeconds": 10}}, MERGE),
        Req("PATCH", f"{LEASE}/bare", {"spec": {"leaseDurationSeconds": -5}}, MERGE),
        Req("PATCH", f"{LEASE}/bare", {"spec": {"holderIdentity": None}}, STRATEGIC),
    ],
    # --- Events ------------------------------------------------------------------------------------------
    "events_core_v1": [
        Req("POST", EVENT, core_event("web.1")),
        Req("GET", f"{EVENT}/web.1"),
        Req("PATCH", f"{EVENT}/web.1", {"count": 2, "lastTimestamp": "2025-01-01T00:01:00Z",
                                        "message": "reconciled web again"}, STRATEGIC),
        Req("POST", EVENT, core_event("web.2", reason="Failed", type="Warning")),
        Req("GET", EVENT, params={"fieldSelector": "involvedObject.name=web"}, pick=NAMES),
        Req("GET", EVENT, params={"fieldSelector": "reason=Failed"}, pick=NAMES),
        Req("GET", EVENT, params={"fieldSelector": "type=Warning,involvedObject.kind=Echo"}, pick=NAMES),
        Req("POST", EVENT, core_event("web.3", involvedObject={"kind": "Echo", "name": "web",
                                                               "namespace": "elsewhere"})),
        Req("POST", EVENT, {"apiVersion": "v1", "kind": "Event", "metadata": {"name": "bare"}}),
        Req("GET", f"{EVENT2}/web.1"),
        Req("DELETE", f"{EVENT}/web.2"),
        Req("GET", EVENT, pick=NAMES),
    ],
    "events_events_k8s_io_v1": [
        Req("POST", EVENT2, new_event("web.a")),
        Req("GET", f"{EVENT}/web.a"),
        Req("PATCH", f"{EVENT2}/web.a", {"series": {"count": 2, "lastObservedTime": "2025-01-01T00:05:00.000000Z"}},
            MERGE),
        Req("PATCH", f"{EVENT2}/web.a", {"reason": "Other"}, MERGE),
        Req("POST", EVENT2, new_event("web.b", drop=("reportingController",))),
        Req("POST", EVENT2, new_event("web.c", type="Fancy")),
        Req("POST", EVENT2, new_event("web.d", drop=("eventTime",))),
        Req("POST", EVENT2, new_event("web.e", note="x" * 1500)),
        Req("POST", EVENT2, new_event("web.f", action="")),
        Req("GET", EVENT2, pick=("items.*.metadata.name", "items.*.reason", "items.*.regarding.name")),
        Req("GET", EVENT2, params={"fieldSelector": "metadata.name=web.a"}, pick=NAMES),
        Req("DELETE", f"{EVENT2}/web.a"),
        Req("GET", f"{EVENT2}/web.a"),
    ],
    # --- Namespaces --------------------------------------------------------------------------------------
    "namespace_lifecycle": [
        Req("POST", NSS, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "{ns}-a",
                                                                                "labels": {"team": "x"}}},
            pick=("metadata.name", "metadata.labels", "spec", "status")),
        Req("GET", f"{NSS}/{{ns}}-a", pick=("metadata.name", "metadata.labels", "spec", "status")),
        Req("PATCH", f"{NSS}/{{ns}}-a", {"metadata": {"labels": {"env": "test", "team": None}}}, MERGE,
            pick=("metadata.labels",)),
        Req("PATCH", f"{NSS}/{{ns}}-a", {"metadata": {"labels": {"kubernetes.io/metadata.name": "other"}}}, MERGE,
            pick=("metadata.labels",)),
        Req("GET", NSS, params={"labelSelector": "kubernetes.io/metadata.name={ns}-a"}, pick=NAMES),
        Req("GET", NSS, params={"fieldSelector": "metadata.name={ns}-a"}, pick=NAMES),
        Req("POST", NSS, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "Bad_NS"}}),
        Req("POST", NSS, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "{ns}.dotted"}}),
        Req("POST", NSS, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "{ns}-a"}}),
        Req("POST", "/api/v1/namespaces/{ns}-a/configmaps", cmap("inside", {"k": "v"})),
        Req("DELETE", f"{NSS}/{{ns}}-a", pick=("metadata.name", "status.phase", "spec.finalizers",
                                                "metadata.deletionTimestamp")),
        WaitGone(f"{NSS}/{{ns}}-a", timeout=120),
        Req("GET", "/api/v1/namespaces/{ns}-a/configmaps/inside"),
    ],
    "namespace_terminating_blocked_by_finalizer": [
        Req("POST", NSS, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "{ns}-t"}},
            pick=("metadata.name", "status.phase")),
        Req("POST", "/apis/test.kubeloop.dev/v1/namespaces/{ns}-t/echoes",
            echo("held", finalizers=["example.com/hold"]),
            pick=("metadata.name", "metadata.finalizers", "spec")),
        Req("DELETE", f"{NSS}/{{ns}}-t", pick=("metadata.name", "status.phase")),
        Req("POST", "/api/v1/namespaces/{ns}-t/configmaps", cmap("late", {"k": "v"})),
        Req("GET", f"{NSS}/{{ns}}-t", pick=("metadata.name", "status.phase", "spec.finalizers")),
        # the real namespace controller is shared with other runs: give it time
        WaitFor("/apis/test.kubeloop.dev/v1/namespaces/{ns}-t/echoes/held", "metadata.deletionTimestamp", "<set>",
                timeout=180),
        Req("PATCH", "/apis/test.kubeloop.dev/v1/namespaces/{ns}-t/echoes/held", {"metadata": {"finalizers": None}},
            MERGE, pick=("metadata.name", "metadata.finalizers")),
        WaitGone("/apis/test.kubeloop.dev/v1/namespaces/{ns}-t/echoes/held"),
        WaitGone(f"{NSS}/{{ns}}-t", timeout=180),
    ],
}
