"""Blind differential sequences, suite 6: what controller-runtime/client-go operators and kubectl users do to
built-in kinds day to day.

What its author read: only tests/differential/harness.py, blind.py, compare.py, conftest.py and play_real.py,
tests/integration/conftest.py (for the Echo CRD) and kubeloop/client/; besides those, the Kubernetes 1.35.4
sources (k8s.io/kubernetes and its staging modules) and Kubernetes' own e2e/integration tests as a model.
Nothing of the fake API server, its documentation or the other sequence modules was read or run.

What it models: ConfigMaps, Secrets, Namespaces, Pods, Services, Deployments, StatefulSets, DaemonSets, Jobs,
CronJobs, Leases, Events (core v1 and events.k8s.io/v1), ServiceAccounts, ResourceQuotas and LimitRanges as
operators and kubectl use them: create/get/list/update/patch (merge, JSON, strategic, server-side apply) and
delete with valid and invalid input (the causes' field paths), each kind's update rules and immutable fields,
the defaults the server applies (compared with ``pick`` on the paths that matter where controllers move
status), owner references and garbage collection (background, foreground, orphan), finalizers, label and
field selectors, paging, watches from marks, the scale and status subresources, dryRun, delete preconditions,
generateName, resource quantities, pod graceful deletion, binding and ephemeral containers, admission as a
cluster runs it (ServiceAccount, LimitRanger, ResourceQuota, PodSecurity, DenyServiceExternalIPs, namespace
lifecycle and the finalize subresource), and a few custom-resource sequences.

How it was checked: every step was played only against kube-apiserver 1.35.4 (a kubeloop local control plane:
apiserver, controller manager, scheduler and three kwok nodes) with ``tests/differential/play_real.py``; each
sequence gave the same normalised outcomes in its two runs in fresh namespaces, and two consecutive full runs of
the module had no unstable step and identical outcomes. Pods that must stay inert carry a scheduling gate or a
scheduler name no scheduler serves, or are bound to the idle node ``diff-node`` that no kubelet runs; workload
status is compared only after a WaitFor reached it, and then only on paths that no longer move. Messages that
embed Go struct dumps are compared ``brief`` (status, reason and causes' field paths).
"""

from __future__ import annotations

from typing import Any

from tests.differential.harness import APPLY, JSON, MERGE, STRATEGIC, Mark, Req, Step, WaitFor, WaitGone, Watch

NS = "/api/v1/namespaces/{ns}"
CMS = NS + "/configmaps"
SECRETS = NS + "/secrets"
PODS = NS + "/pods"
SVCS = NS + "/services"
SAS = NS + "/serviceaccounts"
EVENTS = NS + "/events"
QUOTAS = NS + "/resourcequotas"
LIMITS = NS + "/limitranges"
APPS = "/apis/apps/v1/namespaces/{ns}"
DEPLOYS = APPS + "/deployments"
STSS = APPS + "/statefulsets"
DSS = APPS + "/daemonsets"
RSS = APPS + "/replicasets"
REVS = APPS + "/controllerrevisions"
JOBS = "/apis/batch/v1/namespaces/{ns}/jobs"
CRONJOBS = "/apis/batch/v1/namespaces/{ns}/cronjobs"
LEASES = "/apis/coordination.k8s.io/v1/namespaces/{ns}/leases"
NEVENTS = "/apis/events.k8s.io/v1/namespaces/{ns}/events"
ECHOES = "/apis/test.kubeloop.dev/v1/namespaces/{ns}/echoes"
NAMESPACES = "/api/v1/namespaces"

PAUSE = "registry.k8s.io/pause:3.10"
NAMES = ("items.*.metadata.name",)
DELETED = ("kind", "status", "details.name", "details.kind")


def cm(name: str, data: dict[str, str] | None = None, **meta: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, **meta}}
    if data is not None:
        body["data"] = data
    return body


def secret(name: str, type_: str | None = None, **fields: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": name}, **fields}
    if type_:
        body["type"] = type_
    return body


def container(name: str = "c", image: str = PAUSE, **extra: Any) -> dict[str, Any]:
    return {"name": name, "image": image, **extra}


def pod(name: str, *, gated: bool = True, labels: dict[str, str] | None = None,
        containers: list[dict[str, Any]] | None = None, **spec: Any) -> dict[str, Any]:
    """A pod nothing runs: held by a scheduling gate (or bound by the caller to the idle node)."""
    body_spec: dict[str, Any] = {"containers": containers or [container()], "automountServiceAccountToken": False,
                                 **spec}
    if gated:
        body_spec["schedulingGates"] = [{"name": "example.com/hold"}]
    meta: dict[str, Any] = {"name": name}
    if labels:
        meta["labels"] = labels
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": body_spec}


def template(labels: dict[str, str], restart: str | None = None, **spec: Any) -> dict[str, Any]:
    tspec: dict[str, Any] = {"containers": [container()], "automountServiceAccountToken": False, **spec}
    if restart:
        tspec["restartPolicy"] = restart
    return {"metadata": {"labels": labels}, "spec": tspec}


def deploy(name: str, replicas: int | None = None, **spec: Any) -> dict[str, Any]:
    labels = {"app": name}
    body_spec: dict[str, Any] = {"selector": {"matchLabels": labels}, "template": template(labels), **spec}
    if replicas is not None:
        body_spec["replicas"] = replicas
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name}, "spec": body_spec}


def sts(name: str, replicas: int | None = 0, **spec: Any) -> dict[str, Any]:
    labels = {"app": name}
    body_spec: dict[str, Any] = {"selector": {"matchLabels": labels}, "serviceName": name,
                                 "template": template(labels), **spec}
    if replicas is not None:
        body_spec["replicas"] = replicas
    return {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": name}, "spec": body_spec}


def ds(name: str, **spec: Any) -> dict[str, Any]:
    labels = {"app": name}
    tmpl = template(labels, nodeSelector={"example.com/none": "true"})
    body_spec: dict[str, Any] = {"selector": {"matchLabels": labels}, "template": tmpl, **spec}
    return {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": name}, "spec": body_spec}


def job(name: str, restart: str | None = "Never", **spec: Any) -> dict[str, Any]:
    tmpl = template({"app": name}, restart)
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name}, "spec": {"template": tmpl, **spec}}


def cronjob(name: str, schedule: str = "*/5 * * * *", restart: str | None = "OnFailure", **spec: Any) -> dict[str, Any]:
    jt = {"spec": {"template": template({"app": name}, restart)}}
    return {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": name},
            "spec": {"schedule": schedule, "suspend": True, "jobTemplate": jt, **spec}}


def svc(name: str, ports: list[dict[str, Any]] | None = None, **spec: Any) -> dict[str, Any]:
    body_spec: dict[str, Any] = {"selector": {"app": name}, "ports": [{"port": 80}] if ports is None else ports, **spec}
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name}, "spec": body_spec}


def lease(name: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": name}, "spec": spec}


def owner(kind: str, name: str, uid_mark: str, api: str = "v1", **extra: Any) -> dict[str, Any]:
    return {"apiVersion": api, "kind": kind, "name": name, "uid": "{m:" + uid_mark + "}", **extra}


def sel(**params: str) -> dict[str, str]:
    return dict(params)


POD_DEFAULTS = ("spec.restartPolicy", "spec.dnsPolicy", "spec.schedulerName", "spec.terminationGracePeriodSeconds",
                "spec.securityContext", "spec.tolerations", "spec.priority", "spec.enableServiceLinks",
                "spec.preemptionPolicy", "spec.serviceAccountName", "spec.serviceAccount", "spec.schedulingGates",
                "spec.containers.*.imagePullPolicy", "spec.containers.*.terminationMessagePath",
                "spec.containers.*.terminationMessagePolicy", "spec.containers.*.resources", "status")
TEMPLATE_DEFAULTS = ("spec.template.spec.restartPolicy", "spec.template.spec.dnsPolicy",
                     "spec.template.spec.schedulerName", "spec.template.spec.terminationGracePeriodSeconds",
                     "spec.template.spec.securityContext", "spec.template.spec.containers.*.imagePullPolicy",
                     "spec.template.spec.containers.*.terminationMessagePath",
                     "spec.template.metadata")
DEPLOY_DEFAULTS = ("metadata.generation", "spec.replicas", "spec.strategy", "spec.revisionHistoryLimit",
                   "spec.progressDeadlineSeconds", "spec.minReadySeconds", "spec.paused", "spec.selector",
                   *TEMPLATE_DEFAULTS)
SVC_DEFAULTS = ("spec.type", "spec.sessionAffinity", "spec.ports", "spec.ipFamilies", "spec.ipFamilyPolicy",
                "spec.internalTrafficPolicy", "spec.externalTrafficPolicy", "spec.allocateLoadBalancerNodePorts",
                "spec.selector", "spec.publishNotReadyAddresses", "status")


SEQUENCES: dict[str, list[Step]] = {}

# --- ConfigMaps ---------------------------------------------------------------------------------------

SEQUENCES["configmap_crud_roundtrip"] = [
    Req("POST", CMS, cm("app-config", {"mode": "dev"}, labels={"app": "demo"}),
        save={"v1": "metadata.resourceVersion"}),
    Req("GET", CMS + "/app-config"),
    Req("PUT", CMS + "/app-config", {**cm("app-config", {"mode": "prod"}, labels={"app": "demo"}),
                                    "metadata": {"name": "app-config", "resourceVersion": "{rv:v1}"}}),
    Req("PUT", CMS + "/app-config", {**cm("app-config", {"mode": "stale"}),
                                    "metadata": {"name": "app-config", "resourceVersion": "{rv:v1}"}}),
    Req("PUT", CMS + "/app-config", cm("app-config", {"mode": "unconditional"}, labels={"app": "demo"})),
    Req("PATCH", CMS + "/app-config", {"data": {"extra": "1", "mode": None}}, MERGE),
    Req("PATCH", CMS + "/app-config", [{"op": "add", "path": "/data/added", "value": "yes"},
                                       {"op": "replace", "path": "/data/extra", "value": "2"}], JSON),
    Req("PATCH", CMS + "/app-config", [{"op": "remove", "path": "/data/missing"}], JSON),
    Req("PATCH", CMS + "/app-config", [{"op": "test", "path": "/data/extra", "value": "nope"}], JSON),
    Req("PATCH", CMS + "/app-config", {"metadata": {"labels": {"tier": "web"}}}, STRATEGIC),
    Req("PATCH", CMS + "/app-config", {"metadata": {"annotations": {"note": "x"}}, "data": {"added": None}}, MERGE),
    Req("GET", CMS, params=sel(labelSelector="app=demo")),
    Req("DELETE", CMS + "/app-config"),
    Req("GET", CMS + "/app-config"),
    Req("DELETE", CMS + "/app-config"),
]

SEQUENCES["configmap_request_mismatches"] = [
    Req("POST", CMS, cm("real", {"a": "1"})),
    Req("PUT", CMS + "/real", cm("other", {"a": "2"})),
    Req("POST", CMS, cm("ns-mismatch", namespace="elsewhere")),
    Req("PUT", CMS + "/absent", cm("absent", {"a": "1"})),
    Req("POST", CMS, {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "wrong-kind"}}),
    Req("POST", CMS, {"apiVersion": "apps/v1", "kind": "ConfigMap", "metadata": {"name": "wrong-group"}}),
    Req("POST", CMS, "not an object"),
    Req("POST", CMS, {"metadata": {"name": "no-type-meta"}, "data": {"a": "b"}}),
    Req("POST", CMS, cm("real", {"a": "again"})),
    Req("PATCH", CMS + "/absent", {"data": {"a": "1"}}, MERGE),
    Req("PATCH", CMS + "/real", {"data": {"a": "1"}}, "application/yaml"),
    Req("GET", CMS + "/real", pick=("data", "metadata.name", "kind")),
]

SEQUENCES["configmap_invalid_input"] = [
    Req("POST", CMS, cm("Bad_Name")),
    Req("POST", CMS, cm("x" * 254)),
    Req("POST", CMS, cm("keys", {"bad key": "v"})),
    Req("POST", CMS, {**cm("dup", {"k": "v"}), "binaryData": {"k": "dg=="}}),
    Req("POST", CMS, {**cm("bin"), "binaryData": {"k": "not base64!"}}),
    Req("POST", CMS, cm("labels", labels={"app": "bad value!"})),
    Req("POST", CMS, cm("labelkey", labels={"-bad/key": "v"})),
    Req("POST", CMS, cm("annots", annotations={"a b": "v"})),
    Req("POST", CMS, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {}}),
    Req("POST", CMS, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"generateName": "Bad_"}}, brief=True),
    Req("POST", CMS, cm("many", {"../escape": "v", ".": "dot"})),
    Req("POST", CMS, cm("ok-binary", {"text": "t"}, labels={"a.b/c": "d"}) | {"binaryData": {"bin": "AAE="}}),
    Req("GET", CMS + "/ok-binary", pick=("data", "binaryData", "metadata.labels")),
]

SEQUENCES["configmap_immutable"] = [
    Req("POST", CMS, {**cm("frozen", {"k": "v"}), "immutable": True}),
    Req("PUT", CMS + "/frozen", {**cm("frozen", {"k": "changed"}), "immutable": True}),
    Req("PATCH", CMS + "/frozen", {"immutable": False}, MERGE),
    Req("PATCH", CMS + "/frozen", {"binaryData": {"b": "AA=="}}, MERGE),
    Req("PATCH", CMS + "/frozen", {"metadata": {"labels": {"ok": "yes"}}}, MERGE),
    Req("POST", CMS, cm("thaw", {"k": "v"})),
    Req("PATCH", CMS + "/thaw", {"immutable": True}, MERGE),
    Req("PATCH", CMS + "/thaw", {"data": {"k": "later"}}, MERGE),
    Req("PATCH", CMS + "/thaw", [{"op": "remove", "path": "/immutable"}], JSON),
    Req("DELETE", CMS + "/frozen"),
    Req("GET", CMS, pick=NAMES),
]

SEQUENCES["configmap_generate_name"] = [
    Req("POST", CMS, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"generateName": "job-"},
                      "data": {"a": "1"}}, save={"gen": "metadata.name"}),
    Req("GET", CMS + "/{m:gen}", pick=("metadata.generateName", "data")),
    Req("POST", CMS, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"generateName": "job-", "name": "fixed"}},
        pick=("metadata.name", "metadata.generateName")),
    Req("POST", CMS, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"generateName": "x" * 300}},
        brief=True),
    Req("POST", CMS, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"generateName": "job-"}},
        params={"dryRun": "All"}),
    Req("GET", CMS, pick=("items.*.metadata.generateName",)),
    Req("DELETE", CMS + "/{m:gen}", pick=("status", "details.kind")),
    Req("GET", CMS, pick=("items.*.metadata.generateName",)),
]

# --- Secrets ------------------------------------------------------------------------------------------

SEQUENCES["secret_types_and_stringdata"] = [
    Req("POST", SECRETS, secret("creds", stringData={"user": "admin"}, data={"pw": "czNjcjN0"})),
    Req("POST", SECRETS, secret("both", stringData={"k": "from-string"}, data={"k": "ZnJvbS1kYXRh"})),
    Req("GET", SECRETS + "/both"),
    Req("PUT", SECRETS + "/creds", secret("creds", "kubernetes.io/basic-auth", data={"username": "YQ=="})),
    Req("POST", SECRETS, secret("tls", "kubernetes.io/tls", data={"tls.crt": "YQ=="})),
    Req("POST", SECRETS, secret("tls-ok", "kubernetes.io/tls", data={"tls.crt": "YQ==", "tls.key": "Yg=="})),
    Req("POST", SECRETS, secret("basic", "kubernetes.io/basic-auth", data={"other": "YQ=="})),
    Req("POST", SECRETS, secret("docker", "kubernetes.io/dockerconfigjson", data={".dockerconfigjson": "e30K"})),
    Req("POST", SECRETS, secret("docker-bad", "kubernetes.io/dockerconfigjson",
                                stringData={".dockerconfigjson": "nope"})),
    Req("POST", SECRETS, secret("sa-token", "kubernetes.io/service-account-token")),
    Req("POST", SECRETS, secret("ssh", "kubernetes.io/ssh-auth", data={"key": "YQ=="})),
    Req("POST", SECRETS, secret("custom", "example.com/custom", data={"any": "YQ=="})),
    Req("POST", SECRETS, secret("badkey", data={"a/b": "YQ=="})),
    Req("GET", SECRETS, params=sel(fieldSelector="type=kubernetes.io/tls"), pick=NAMES),
    Req("GET", SECRETS, params=sel(fieldSelector="type!=Opaque"), pick=NAMES),
]

SEQUENCES["secret_immutable_and_updates"] = [
    Req("POST", SECRETS, {**secret("locked", data={"k": "dg=="}), "immutable": True}),
    Req("PATCH", SECRETS + "/locked", {"data": {"k": "dzI="}}, MERGE),
    Req("PATCH", SECRETS + "/locked", {"stringData": {"new": "x"}}, MERGE),
    Req("PATCH", SECRETS + "/locked", {"immutable": False}, MERGE),
    Req("PATCH", SECRETS + "/locked", {"metadata": {"annotations": {"rotated": "no"}}}, MERGE),
    Req("POST", SECRETS, secret("open", data={"k": "dg=="})),
    Req("PATCH", SECRETS + "/open", {"stringData": {"k": "plain"}}, MERGE),
    Req("PATCH", SECRETS + "/open", {"type": "kubernetes.io/tls"}, MERGE),
    Req("PATCH", SECRETS + "/open", [{"op": "replace", "path": "/data/k", "value": "bm90LWI2NA"}], JSON, brief=True),
    Req("PATCH", SECRETS + "/open", [{"op": "replace", "path": "/data/k", "value": "!!"}], JSON, brief=True),
    Req("GET", SECRETS + "/open", pick=("data", "type")),
    Req("DELETE", SECRETS + "/locked", pick=("status", "details")),
]

# --- Namespaces ---------------------------------------------------------------------------------------

SEQUENCES["namespace_lifecycle_with_finalized_content"] = [
    Req("POST", NAMESPACES, {"apiVersion": "v1", "kind": "Namespace",
                             "metadata": {"name": "{ns}-child", "labels": {"team": "a"}}}),
    Req("GET", NAMESPACES + "/{ns}-child"),
    Req("POST", NAMESPACES + "/{ns}-child/configmaps", cm("held", finalizers=["example.com/hold"])),
    Req("PATCH", NAMESPACES + "/{ns}-child", {"metadata": {"labels": {"kubernetes.io/metadata.name": "other"}}}, MERGE,
        pick=("metadata.labels",)),
    Req("DELETE", NAMESPACES + "/{ns}-child", pick=("status", "spec", "metadata.deletionTimestamp")),
    WaitFor(NAMESPACES + "/{ns}-child/configmaps/held", "metadata.deletionTimestamp", "<set>", timeout=120),
    Req("POST", NAMESPACES + "/{ns}-child/configmaps", cm("late")),
    Req("DELETE", NAMESPACES + "/{ns}-child", pick=("status.phase", "spec", "metadata.deletionTimestamp")),
    Req("GET", NAMESPACES + "/{ns}-child", pick=("status.phase", "spec", "metadata.finalizers")),
    Req("PATCH", NAMESPACES + "/{ns}-child/configmaps/held", {"metadata": {"finalizers": None}}, MERGE,
        pick=("metadata.finalizers", "metadata.name")),
    WaitGone(NAMESPACES + "/{ns}-child", timeout=120),
    Req("GET", NAMESPACES + "/{ns}-child"),
]

SEQUENCES["namespace_validation_and_labels"] = [
    Req("POST", NAMESPACES, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "Bad_NS"}}),
    Req("POST", NAMESPACES, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "n" * 64}}),
    Req("POST", NAMESPACES, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "{ns}-fin"},
                             "spec": {"finalizers": ["bad finalizer"]}}),
    Req("GET", NAMESPACES + "/{ns}", pick=("metadata.labels", "spec", "status")),
    Req("PATCH", NAMESPACES + "/{ns}", {"metadata": {"labels": {"env": "{ns}"}}}, MERGE, pick=("metadata.labels",)),
    Req("PATCH", NAMESPACES + "/{ns}", {"spec": {"finalizers": []}}, MERGE, pick=("spec",)),
    Req("PATCH", NAMESPACES + "/{ns}", {"status": {"phase": "Terminating"}}, MERGE, pick=("status",)),
    Req("POST", NAMESPACES, {"apiVersion": "v1", "kind": "Namespace",
                             "metadata": {"name": "{ns}-nsd", "namespace": "whatever"}},
        pick=("metadata.name", "metadata.namespace")),
    Req("DELETE", NAMESPACES + "/{ns}-nsd", pick=("status.phase",)),
    Req("GET", NAMESPACES, params=sel(labelSelector="env={ns}"), pick=NAMES),
    Req("GET", NAMESPACES + "/{ns}/configmaps/kube-root-ca.crt", pick=("metadata.name", "data")),
    Req("GET", SAS + "/default", pick=("metadata.name", "secrets")),
]

# --- Pods ---------------------------------------------------------------------------------------------

SEQUENCES["pod_defaults"] = [
    Req("POST", PODS, pod("plain"), pick=POD_DEFAULTS),
    Req("GET", PODS + "/plain", pick=POD_DEFAULTS),
    Req("POST", PODS, pod("pulls", containers=[container("latest", "busybox:latest"), container("untagged", "busybox"),
                                               container("tagged", "busybox:1.36"),
                                               container("digest", "busybox@sha256:" + "a" * 64)]),
        pick=("spec.containers.*.imagePullPolicy",)),
    Req("POST", PODS, pod("guaranteed",
                          containers=[container(resources={"limits": {"cpu": "500m", "memory": "64Mi"}})]),
        pick=("spec.containers.*.resources", "status.qosClass")),
    Req("POST", PODS, pod("burstable", containers=[container(resources={"requests": {"cpu": "100m"}})]),
        pick=("spec.containers.*.resources", "status.qosClass")),
    Req("POST", PODS, pod("ports", hostNetwork=True, containers=[container(ports=[{"containerPort": 8080}])]),
        pick=("spec.containers.*.ports", "spec.dnsPolicy", "spec.hostNetwork")),
    Req("POST", PODS, pod("sidecar", initContainers=[container("side", restartPolicy="Always")]),
        pick=("spec.initContainers", "status.qosClass")),
    Req("POST", PODS, pod("nosa", serviceAccountName="nope")),
    Req("POST", PODS, pod("env", containers=[container(env=[{"name": "A", "valueFrom": {"fieldRef": {
        "fieldPath": "metadata.name"}}}])]), pick=("spec.containers.*.env",)),
    Req("POST", PODS, pod("vols", volumes=[{"name": "cfg", "configMap": {"name": "x"}}, {"name": "tmp", "emptyDir": {}},
                                          {"name": "sec", "secret": {"secretName": "s"}}]),
        pick=("spec.volumes",)),
    Req("GET", PODS, pick=NAMES),
]

SEQUENCES["pod_invalid_specs"] = [
    Req("POST", PODS, {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "empty"}, "spec": {"containers": []}}),
    Req("POST", PODS, pod("badname", containers=[container("Bad_Name")])),
    Req("POST", PODS, pod("dup", containers=[container("c"), container("c")])),
    Req("POST", PODS, pod("port", containers=[container(ports=[{"containerPort": 70000}])])),
    Req("POST", PODS, pod("restart", restartPolicy="Sometimes")),
    Req("POST", PODS, pod("limits", containers=[container(resources={"requests": {"cpu": "2"},
                                                                     "limits": {"cpu": "1"}})])),
    Req("POST", PODS, pod("qty", containers=[container(resources={"requests": {"memory": "1Gx"}})])),
    Req("POST", PODS, pod("gated-bound", nodeName="diff-node")),
    Req("POST", PODS, pod("mount", containers=[container(volumeMounts=[{"name": "missing", "mountPath": "/x"}])])),
    Req("POST", PODS, pod("noimage", containers=[{"name": "c"}])),
    Req("POST", PODS, pod("dns", dnsPolicy="None")),
    Req("POST", PODS, pod("grace", terminationGracePeriodSeconds=-5), pick=("spec.terminationGracePeriodSeconds",)),
    Req("POST", PODS, pod("vol-dup", volumes=[{"name": "v", "emptyDir": {}}, {"name": "v", "emptyDir": {}}])),
    Req("GET", PODS, pick=NAMES),
]

SEQUENCES["pod_update_rules"] = [
    Req("POST", PODS, pod("upd", labels={"app": "upd"}), pick=("metadata.labels",)),
    Req("PATCH", PODS + "/upd", {"spec": {"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.9"}]}},
        STRATEGIC, pick=("spec.containers.*.image",)),
    Req("PATCH", PODS + "/upd", {"spec": {"activeDeadlineSeconds": 300}}, STRATEGIC,
        pick=("spec.activeDeadlineSeconds",)),
    Req("PATCH", PODS + "/upd", {"spec": {"activeDeadlineSeconds": 600}}, STRATEGIC, brief=True),
    Req("PATCH", PODS + "/upd", {"spec": {"activeDeadlineSeconds": 100}}, STRATEGIC,
        pick=("spec.activeDeadlineSeconds",)),
    Req("PATCH", PODS + "/upd", {"spec": {"restartPolicy": "Never"}}, STRATEGIC, brief=True),
    Req("PATCH", PODS + "/upd", {"spec": {"tolerations": [{"key": "k", "operator": "Exists"}]}}, STRATEGIC,
        pick=("spec.tolerations",)),
    Req("PATCH", PODS + "/upd", {"spec": {"terminationGracePeriodSeconds": 10}}, STRATEGIC, brief=True),
    Req("PATCH", PODS + "/upd", {"spec": {"containers": [{"name": "c", "image": ""}]}}, STRATEGIC, brief=True),
    Req("PATCH", PODS + "/upd", {"spec": {"schedulingGates": [{"name": "example.com/hold"},
                                                              {"name": "example.com/more"}]}}, MERGE, brief=True),
    Req("PATCH", PODS + "/upd", {"metadata": {"labels": {"app": None, "v": "2"}}}, MERGE, pick=("metadata.labels",)),
    Req("PATCH", PODS + "/upd", {"spec": {"nodeSelector": {"disk": "ssd"}}}, STRATEGIC,
        pick=("spec.nodeSelector",)),
    Req("PATCH", PODS + "/upd", {"spec": {"nodeName": "diff-node"}}, STRATEGIC, brief=True),
    Req("PATCH", PODS + "/upd", {"spec": {"schedulerName": "example.com/none", "schedulingGates": None}}, MERGE,
        brief=True),
    Req("GET", PODS + "/upd", pick=("spec.containers.*.image", "spec.activeDeadlineSeconds", "spec.schedulingGates",
                                    "metadata.generation")),
]

SEQUENCES["pod_status_subresource"] = [
    Req("POST", PODS, pod("st"), pick=("status",)),
    Req("GET", PODS + "/st/status", pick=("status", "kind")),
    Req("PATCH", PODS + "/st/status", {"status": {"conditions": [{"type": "example.com/Checked", "status": "True"}]}},
        STRATEGIC, pick=("status.conditions.*.type", "status.conditions.*.status", "status.phase")),
    Req("PATCH", PODS + "/st/status", {"spec": {"activeDeadlineSeconds": 5}, "status": {"message": "hi"}}, MERGE,
        pick=("spec.activeDeadlineSeconds", "status.message")),
    Req("PATCH", PODS + "/st", {"status": {"message": "ignored"}}, MERGE, pick=("status.message",)),
    Req("PATCH", PODS + "/st/status", {"status": {"podIP": "not-an-ip", "podIPs": [{"ip": "not-an-ip"}]}}, MERGE,
        brief=True),
    Req("PATCH", PODS + "/st/status", {"status": {"phase": "Succeeded"}}, MERGE, pick=("status.phase",)),
    Req("PATCH", PODS + "/st/status", {"status": {"phase": "Running"}}, MERGE, pick=("status.phase",)),
    Req("GET", PODS, params=sel(fieldSelector="status.phase=Succeeded"), pick=NAMES),
    Req("DELETE", PODS + "/st", pick=("metadata.deletionTimestamp", "status.phase")),
    Req("GET", PODS + "/st"),
]

SEQUENCES["pod_graceful_deletion_on_node"] = [
    Req("POST", PODS, pod("bound", gated=False, nodeName="diff-node"), pick=("spec.nodeName", "status.phase")),
    Req("DELETE", PODS + "/bound", pick=("metadata.deletionTimestamp", "metadata.deletionGracePeriodSeconds",
                                         "spec.terminationGracePeriodSeconds")),
    Req("GET", PODS + "/bound", pick=("metadata.deletionGracePeriodSeconds", "metadata.finalizers")),
    Req("DELETE", PODS + "/bound", params={"gracePeriodSeconds": "60"}, pick=("metadata.deletionGracePeriodSeconds",)),
    Req("DELETE", PODS + "/bound", params={"gracePeriodSeconds": "5"}, pick=("metadata.deletionGracePeriodSeconds",)),
    Req("PATCH", PODS + "/bound", {"metadata": {"labels": {"dying": "yes"}}}, MERGE, pick=("metadata.labels",)),
    Req("PATCH", PODS + "/bound", {"metadata": {"finalizers": ["example.com/late"]}}, MERGE, brief=True),
    Req("GET", PODS, params=sel(fieldSelector="spec.nodeName=diff-node"), pick=NAMES),
    Req("DELETE", PODS + "/bound", params={"gracePeriodSeconds": "0"}, pick=("metadata.name",)),
    Req("GET", PODS + "/bound"),
    Req("POST", PODS, pod("zero", gated=False, nodeName="diff-node", terminationGracePeriodSeconds=0),
        pick=("spec.terminationGracePeriodSeconds",)),
    Req("DELETE", PODS + "/zero", pick=("metadata.deletionGracePeriodSeconds",)),
    Req("GET", PODS + "/zero", pick=("metadata.deletionGracePeriodSeconds",)),
    Req("POST", PODS, pod("gated")),
    Req("DELETE", PODS + "/gated", pick=("metadata.deletionGracePeriodSeconds", "metadata.name")),
    Req("GET", PODS + "/gated"),
]

SEQUENCES["pod_binding"] = [
    Req("POST", PODS, pod("tobind", gated=False, schedulerName="example.com/none"), pick=("spec.schedulerName",)),
    Req("POST", PODS + "/tobind/binding", {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "tobind"},
                                          "target": {"apiVersion": "v1", "kind": "Node", "name": "diff-node"}}),
    Req("GET", PODS + "/tobind", pick=("spec.nodeName",)),
    Req("POST", PODS + "/tobind/binding", {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "tobind"},
                                          "target": {"apiVersion": "v1", "kind": "Node", "name": "fuzz-node"}}),
    Req("POST", PODS, pod("held")),
    Req("POST", PODS + "/held/binding", {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "held"},
                                        "target": {"apiVersion": "v1", "kind": "Node", "name": "diff-node"}}),
    Req("POST", PODS + "/ghost/binding", {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "ghost"},
                                         "target": {"apiVersion": "v1", "kind": "Node", "name": "diff-node"}}),
    Req("POST", PODS + "/held/binding", {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "other"},
                                        "target": {"apiVersion": "v1", "kind": "Node", "name": "diff-node"}}),
    Req("GET", PODS, params=sel(fieldSelector="spec.nodeName="), pick=NAMES),
    Req("DELETE", PODS + "/tobind", params={"gracePeriodSeconds": "0"}, pick=("metadata.name",)),
]

SEQUENCES["pod_security_admission"] = [
    Req("PATCH", NAMESPACES + "/{ns}", {"metadata": {"labels": {"pod-security.kubernetes.io/enforce": "restricted"}}},
        MERGE, pick=("metadata.labels",)),
    Req("POST", PODS, pod("priv", containers=[container(securityContext={"privileged": True})])),
    Req("POST", PODS, pod("loose")),
    Req("POST", PODS, pod("tight", securityContext={"runAsNonRoot": True, "seccompProfile": {"type": "RuntimeDefault"}},
                          containers=[container(securityContext={"allowPrivilegeEscalation": False,
                                                                 "capabilities": {"drop": ["ALL"]}})]),
        pick=("metadata.name", "spec.securityContext")),
    Req("PATCH", NAMESPACES + "/{ns}", {"metadata": {"labels": {"pod-security.kubernetes.io/enforce": "baseline"}}},
        MERGE, pick=("metadata.labels",)),
    Req("POST", PODS, pod("hostpath", volumes=[{"name": "h", "hostPath": {"path": "/etc"}}])),
    Req("POST", PODS, pod("loose")),
    Req("PATCH", NAMESPACES + "/{ns}", {"metadata": {"labels": {"pod-security.kubernetes.io/enforce": "bogus"}}},
        MERGE, pick=("metadata.labels",)),
    Req("GET", PODS, pick=NAMES),
]

# --- Resource quantities, LimitRanges, ResourceQuotas ------------------------------------------------

SEQUENCES["resource_quantities_canonical"] = [
    Req("POST", PODS, pod("q1", containers=[container(resources={
        "requests": {"cpu": "0.1", "memory": "1024Mi", "ephemeral-storage": "1e3"},
        "limits": {"cpu": "1000m", "memory": "1.5Gi", "ephemeral-storage": "2000"}})]),
        pick=("spec.containers.*.resources",)),
    Req("POST", PODS, pod("q2", containers=[container(resources={
        "requests": {"cpu": "250m", "memory": "128974848"}, "limits": {"cpu": 2, "memory": "129e6"}})]),
        pick=("spec.containers.*.resources",)),
    Req("POST", PODS, pod("q3", containers=[container(resources={"requests": {"cpu": "0.0001"}})]),
        pick=("spec.containers.*.resources",)),
    Req("POST", PODS, pod("q4", containers=[container(resources={"requests": {"cpu": "-1"}})])),
    Req("POST", PODS, pod("q5", containers=[container(resources={"requests": {"example.com/widget": "1.5"}})])),
    Req("POST", PODS, pod("q6", containers=[container(resources={"requests": {"example.com/widget": "2"},
                                                                 "limits": {"example.com/widget": "2"}})]),
        pick=("spec.containers.*.resources",)),
    Req("POST", PODS, pod("q7", containers=[container(resources={"requests": {"hugepages-2Mi": "1Mi"}})])),
    Req("POST", PODS, pod("q8", containers=[container(resources={"requests": {"memory": "0.5Ki"}})]),
        pick=("spec.containers.*.resources",)),
    Req("GET", PODS, pick=("items.*.spec.containers.*.resources.requests",)),
]

SEQUENCES["limitrange_defaults"] = [
    Req("POST", LIMITS, {"apiVersion": "v1", "kind": "LimitRange", "metadata": {"name": "defaults"},
                         "spec": {"limits": [{"type": "Container", "default": {"cpu": "500m", "memory": "256Mi"},
                                              "defaultRequest": {"cpu": "100m", "memory": "64Mi"},
                                              "max": {"cpu": "1"}}]}}),
    Req("POST", PODS, pod("defaulted"), pick=("spec.containers.*.resources", "status.qosClass",
                                              "metadata.annotations")),
    Req("POST", PODS, pod("partial", containers=[container(resources={"limits": {"cpu": "800m"}})]),
        pick=("spec.containers.*.resources",)),
    Req("POST", PODS, pod("toobig", containers=[container(resources={"limits": {"cpu": "2"}})])),
    Req("POST", LIMITS, {"apiVersion": "v1", "kind": "LimitRange", "metadata": {"name": "bad"},
                         "spec": {"limits": [{"type": "Container", "default": {"cpu": "2"}, "max": {"cpu": "1"}}]}}),
    Req("POST", LIMITS, {"apiVersion": "v1", "kind": "LimitRange", "metadata": {"name": "badtype"},
                         "spec": {"limits": [{"type": "Bogus", "max": {"cpu": "1"}}]}}),
    Req("DELETE", LIMITS + "/defaults", pick=("status",)),
    Req("GET", LIMITS, pick=NAMES),
]

SEQUENCES["resourcequota_counts"] = [
    Req("POST", QUOTAS, {"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "counts"},
                         "spec": {"hard": {"configmaps": "3", "count/leases.coordination.k8s.io": "1"}}},
        pick=("spec", "status")),
    WaitFor(QUOTAS + "/counts", "status.used.configmaps", "1"),
    Req("GET", QUOTAS + "/counts", pick=("status",)),
    Req("POST", CMS, cm("one")),
    Req("POST", CMS, cm("two")),
    Req("POST", CMS, cm("three")),
    Req("POST", LEASES, lease("first")),
    Req("POST", LEASES, lease("second")),
    Req("DELETE", CMS + "/one", pick=("status",)),
    WaitFor(QUOTAS + "/counts", "status.used.configmaps", "2"),
    Req("POST", CMS, cm("three")),
    Req("POST", QUOTAS, {"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "bad"},
                         "spec": {"hard": {"configmaps": "-1"}}}),
    Req("POST", QUOTAS, {"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "scoped"},
                         "spec": {"hard": {"pods": "1"}, "scopes": ["Bogus"]}}),
]

SEQUENCES["resourcequota_compute"] = [
    Req("POST", QUOTAS, {"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "compute"},
                         "spec": {"hard": {"requests.cpu": "1", "limits.memory": "1Gi", "pods": "2"}}}),
    WaitFor(QUOTAS + "/compute", "status.used.pods", "0"),
    Req("POST", PODS, pod("nores")),
    Req("POST", PODS, pod("fits", containers=[container(resources={"requests": {"cpu": "600m"},
                                                                   "limits": {"memory": "512Mi"}})])),
    Req("POST", PODS, pod("over", containers=[container(resources={"requests": {"cpu": "600m"},
                                                                   "limits": {"memory": "512Mi"}})])),
    Req("POST", PODS, pod("small", containers=[container(resources={"requests": {"cpu": "400m"},
                                                                    "limits": {"memory": "512Mi"}})]),
        pick=("metadata.name",)),
    Req("POST", PODS, pod("third", containers=[container(resources={"requests": {"cpu": "0"},
                                                                    "limits": {"memory": "0"}})])),
    Req("GET", QUOTAS + "/compute", pick=("spec", "status.hard")),
    WaitFor(QUOTAS + "/compute", "status.used.pods", "2"),
    Req("GET", QUOTAS + "/compute", pick=("status",)),
]

# --- Services -----------------------------------------------------------------------------------------

SEQUENCES["service_defaults_by_type"] = [
    Req("POST", SVCS, svc("web"), pick=SVC_DEFAULTS, save={"ip": "spec.clusterIP"}),
    Req("POST", SVCS, svc("headless", clusterIP="None"), pick=(*SVC_DEFAULTS, "spec.clusterIP", "spec.clusterIPs")),
    Req("POST", SVCS, {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "ext"},
                       "spec": {"type": "ExternalName", "externalName": "example.com"}},
        pick=(*SVC_DEFAULTS, "spec.clusterIP", "spec.externalName")),
    Req("POST", SVCS, svc("np", type="NodePort"), pick=SVC_DEFAULTS[:1] + ("spec.ports.*.protocol",
                                                                              "spec.externalTrafficPolicy")),
    Req("POST", SVCS, svc("lb", type="LoadBalancer"), pick=("spec.type", "spec.allocateLoadBalancerNodePorts",
                                                             "spec.externalTrafficPolicy", "status")),
    Req("POST", SVCS, svc("named", ports=[{"name": "http", "port": 80, "targetPort": "web"},
                                          {"name": "dns", "port": 53, "protocol": "UDP"}]),
        pick=("spec.ports",)),
    Req("GET", SVCS, pick=("items.*.metadata.name", "items.*.spec.type")),
    Req("DELETE", SVCS + "/np", pick=("metadata.name",)),
    Req("DELETE", SVCS + "/lb", pick=("metadata.name",)),
]

SEQUENCES["service_invalid_and_immutable"] = [
    Req("POST", SVCS, svc("extip", externalIPs=["192.0.2.10"])),
    Req("POST", SVCS, svc("outofrange", clusterIP="10.9.9.9")),
    Req("POST", SVCS, svc("badip", clusterIP="not-an-ip")),
    Req("POST", SVCS, svc("twoports", ports=[{"port": 80}, {"port": 81}])),
    Req("POST", SVCS, svc("zero", ports=[{"port": 0}])),
    Req("POST", SVCS, svc("proto", ports=[{"port": 80, "protocol": "ICMP"}])),
    Req("POST", SVCS, svc("kind", type="Bogus")),
    Req("POST", SVCS, svc("noports", ports=[])),
    Req("POST", SVCS, {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "extname"},
                       "spec": {"type": "ExternalName"}}),
    Req("POST", SVCS, svc("dupport", ports=[{"name": "a", "port": 80}, {"name": "b", "port": 80}]), brief=True),
    Req("POST", SVCS, svc("stable"), pick=("spec.type", "spec.ports")),
    Req("PATCH", SVCS + "/stable", {"spec": {"clusterIP": "10.0.0.250", "clusterIPs": ["10.0.0.250"]}}, MERGE,
        brief=True),
    Req("PATCH", SVCS + "/stable", {"spec": {"ports": [{"port": 8080, "targetPort": 80}]}}, MERGE,
        pick=("spec.ports",)),
    Req("PATCH", SVCS + "/stable", {"spec": {"sessionAffinity": "ClientIP"}}, MERGE,
        pick=("spec.sessionAffinity", "spec.sessionAffinityConfig")),
    Req("PATCH", SVCS + "/stable", {"spec": {"type": "ExternalName", "externalName": "example.org"}}, MERGE,
        pick=("spec.type", "spec.clusterIP", "spec.clusterIPs", "spec.externalName", "spec.ports")),
    Req("PATCH", SVCS + "/stable", {"spec": {"ipFamilyPolicy": "Bogus"}}, MERGE, brief=True),
    Req("DELETE", SVCS + "/stable", pick=("metadata.name",)),
]

# --- Deployments --------------------------------------------------------------------------------------

SEQUENCES["deployment_defaults_and_generation"] = [
    Req("POST", DEPLOYS, deploy("web", 0), pick=(*DEPLOY_DEFAULTS, "status")),
    Req("GET", DEPLOYS + "/web", pick=DEPLOY_DEFAULTS),
    Req("POST", DEPLOYS, deploy("recreate", 0, strategy={"type": "Recreate"}), pick=("spec.strategy",)),
    Req("POST", DEPLOYS, deploy("surge", 0, strategy={"rollingUpdate": {"maxSurge": "50%", "maxUnavailable": 0}}),
        pick=("spec.strategy",)),
    Req("PUT", DEPLOYS + "/web", deploy("web", 0) | {"spec": {**deploy("web", 0)["spec"], "template": {
        "metadata": {"labels": {"app": "web"}},
        "spec": {"containers": [container(image="registry.k8s.io/pause:3.9")]}}}},
        pick=("metadata.generation", "spec.template.spec.containers.*.image")),
    Req("PATCH", DEPLOYS + "/web", {"spec": {"template": {"spec": {"containers": [
        {"name": "c", "env": [{"name": "MODE", "value": "x"}]}]}}}}, STRATEGIC,
        pick=("metadata.generation", "spec.template.spec.containers")),
    Req("PATCH", DEPLOYS + "/web", {"metadata": {"labels": {"team": "a"}}}, MERGE,
        pick=("metadata.generation", "metadata.labels")),
    Req("PATCH", DEPLOYS + "/web", {"spec": {"paused": True}}, MERGE, pick=("metadata.generation", "spec.paused")),
    Req("PATCH", DEPLOYS + "/web", {"spec": {"template": {"spec": {"containers": [
        {"name": "c", "env": [{"name": "MODE", "$patch": "delete"}]}]}}}}, STRATEGIC,
        pick=("metadata.generation", "spec.template.spec.containers")),
    Req("PATCH", DEPLOYS + "/web", {"spec": {"template": {"spec": {"containers": [
        {"name": "extra", "image": PAUSE}]}}}}, STRATEGIC, pick=("spec.template.spec.containers.*.name",)),
    Req("PATCH", DEPLOYS + "/web", {"spec": {"template": {"spec": {"containers": [
        {"name": "only", "image": PAUSE}]}}}}, MERGE, pick=("spec.template.spec.containers.*.name",
                                                            "spec.template.spec.containers.*.imagePullPolicy")),
]

SEQUENCES["deployment_invalid"] = [
    Req("POST", DEPLOYS, deploy("mismatch", 0) | {"spec": {**deploy("mismatch", 0)["spec"],
                                                           "selector": {"matchLabels": {"app": "other"}}}}),
    Req("POST", DEPLOYS, {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "nosel"},
                          "spec": {"template": template({"app": "nosel"})}}),
    Req("POST", DEPLOYS, deploy("neg", -1)),
    Req("POST", DEPLOYS, deploy("recreate", 0, strategy={"type": "Recreate", "rollingUpdate": {"maxSurge": 1}})),
    Req("POST", DEPLOYS, deploy("zero", 0, strategy={"rollingUpdate": {"maxSurge": 0, "maxUnavailable": 0}})),
    Req("POST", DEPLOYS, deploy("pct", 0, strategy={"rollingUpdate": {"maxUnavailable": "120%"}})),
    Req("POST", DEPLOYS, deploy("never", 0) | {"spec": {**deploy("never", 0)["spec"],
                                                        "template": template({"app": "never"}, "Never")}}),
    Req("POST", DEPLOYS, deploy("history", 0, revisionHistoryLimit=-1)),
    Req("POST", DEPLOYS, deploy("deadline", 0, progressDeadlineSeconds=5, minReadySeconds=10)),
    Req("POST", DEPLOYS, deploy("emptysel", 0) | {"spec": {**deploy("emptysel", 0)["spec"], "selector": {}}}),
    Req("POST", DEPLOYS, deploy("fixed", 0)),
    Req("PATCH", DEPLOYS + "/fixed", {"spec": {"selector": {"matchLabels": {"app": "fixed", "v": "2"}},
                                              "template": {"metadata": {"labels": {"v": "2"}}}}}, STRATEGIC),
    Req("PATCH", DEPLOYS + "/fixed", {"spec": {"template": {"metadata": {"labels": {"app": "changed"}}}}}, STRATEGIC),
    Req("PATCH", DEPLOYS + "/fixed", {"spec": {"replicas": "two"}}, MERGE, brief=True),
    Req("GET", DEPLOYS, pick=NAMES),
]

SEQUENCES["deployment_scale_subresource"] = [
    Req("POST", DEPLOYS, deploy("sc", 1), save={"first": "metadata.resourceVersion"}, pick=("spec.replicas",)),
    Req("GET", DEPLOYS + "/sc/scale", pick=("kind", "apiVersion", "metadata.name", "spec", "status.selector")),
    Req("PUT", DEPLOYS + "/sc/scale", {"apiVersion": "autoscaling/v1", "kind": "Scale", "metadata": {"name": "sc"},
                                      "spec": {"replicas": 3}}, pick=("spec", "status.selector")),
    Req("PATCH", DEPLOYS + "/sc/scale", {"spec": {"replicas": 0}}, MERGE, pick=("spec",)),
    Req("PATCH", DEPLOYS + "/sc/scale", [{"op": "replace", "path": "/spec/replicas", "value": 2}], JSON,
        pick=("spec",)),
    Req("PUT", DEPLOYS + "/sc/scale", {"apiVersion": "autoscaling/v1", "kind": "Scale", "metadata": {"name": "sc"},
                                      "spec": {"replicas": -1}}),
    Req("PUT", DEPLOYS + "/sc/scale", {"apiVersion": "autoscaling/v1", "kind": "Scale",
                                      "metadata": {"name": "sc", "resourceVersion": "{rv:first}"},
                                      "spec": {"replicas": 4}}),
    Req("GET", DEPLOYS + "/sc", pick=("spec.replicas", "metadata.generation")),
    Req("GET", DEPLOYS + "/ghost/scale"),
    Req("PATCH", DEPLOYS + "/sc/scale", {"spec": {"replicas": 1}}, APPLY, params={"fieldManager": "hpa"},
        pick=("spec",)),
    Req("PATCH", DEPLOYS + "/sc/scale", {"apiVersion": "autoscaling/v1", "kind": "Scale", "metadata": {"name": "sc"},
                                        "spec": {"replicas": 1}}, APPLY, params={"fieldManager": "hpa"},
        pick=("spec", "status.selector")),
    Req("PATCH", DEPLOYS + "/sc", {"spec": {"replicas": 0}}, MERGE, pick=("spec.replicas", "metadata.generation")),
]

SEQUENCES["deployment_rollout_and_foreground_delete"] = [
    Req("POST", DEPLOYS, deploy("roll", 2), pick=("spec.replicas",)),
    WaitFor(DEPLOYS + "/roll", "status.availableReplicas", 2, timeout=60),
    WaitFor(DEPLOYS + "/roll", "status.updatedReplicas", 2, timeout=60),
    Req("GET", DEPLOYS + "/roll", pick=("status.replicas", "status.readyReplicas", "status.observedGeneration",
                                        "metadata.annotations")),
    Req("GET", RSS, params=sel(labelSelector="app=roll"),
        pick=("items.*.spec.replicas", "items.*.metadata.ownerReferences", "items.*.metadata.annotations"),
        save={"oldrs": "items.0.metadata.name"}),
    Req("PATCH", DEPLOYS + "/roll", {"spec": {"template": {"metadata": {"annotations": {"rev": "2"}}}}}, STRATEGIC,
        pick=("metadata.generation",)),
    WaitFor(RSS + "/{m:oldrs}", "status.replicas", 0, timeout=60),
    WaitFor(DEPLOYS + "/roll", "status.updatedReplicas", 2, timeout=60),
    Req("GET", RSS + "/{m:oldrs}", pick=("spec.replicas", "metadata.annotations", "metadata.ownerReferences.*.kind")),
    Req("GET", RSS, params=sel(labelSelector="app=roll"), pick=("items.*.metadata.ownerReferences.*.name",)),
    Req("DELETE", DEPLOYS + "/roll", params={"propagationPolicy": "Foreground"},
        pick=("metadata.finalizers", "metadata.deletionTimestamp")),
    WaitGone(DEPLOYS + "/roll"),
    Req("GET", RSS, params=sel(labelSelector="app=roll"), pick=NAMES),
]

SEQUENCES["deployment_orphan_delete"] = [
    Req("POST", DEPLOYS, deploy("orph", 1), pick=("spec.replicas",)),
    WaitFor(DEPLOYS + "/orph", "status.availableReplicas", 1, timeout=60),
    Req("DELETE", DEPLOYS + "/orph", params={"propagationPolicy": "Orphan"},
        pick=("metadata.finalizers", "metadata.deletionTimestamp")),
    WaitGone(DEPLOYS + "/orph"),
    WaitFor(RSS + "?labelSelector=app%3Dorph", "items.0.metadata.ownerReferences", None),
    Req("GET", RSS, params=sel(labelSelector="app=orph"),
        pick=("items.*.metadata.ownerReferences", "items.*.spec.replicas", "items.*.metadata.finalizers"),
        save={"rs": "items.0.metadata.name"}),
    Req("DELETE", RSS + "/{m:rs}", params={"propagationPolicy": "Background"}, pick=("status",)),
    WaitFor(PODS + "?labelSelector=app%3Dorph", "items", [], timeout=60),
    Req("GET", RSS, params=sel(labelSelector="app=orph"), pick=NAMES),
]

# --- StatefulSets, DaemonSets -------------------------------------------------------------------------

SEQUENCES["statefulset_defaults_and_update_rules"] = [
    Req("POST", STSS, sts("db"), pick=("spec.replicas", "spec.podManagementPolicy", "spec.updateStrategy",
                                       "spec.revisionHistoryLimit", "spec.persistentVolumeClaimRetentionPolicy",
                                       "spec.minReadySeconds", *TEMPLATE_DEFAULTS, "metadata.generation")),
    Req("PATCH", STSS + "/db", {"spec": {"serviceName": "other"}}, MERGE, brief=True),
    Req("PATCH", STSS + "/db", {"spec": {"podManagementPolicy": "Parallel"}}, MERGE, brief=True),
    Req("PATCH", STSS + "/db", {"spec": {"volumeClaimTemplates": [{"metadata": {"name": "data"}, "spec": {
        "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}]}}, MERGE, brief=True),
    Req("PATCH", STSS + "/db", {"spec": {"updateStrategy": {"type": "OnDelete", "rollingUpdate": None}}}, MERGE,
        pick=("spec.updateStrategy", "metadata.generation")),
    Req("PATCH", STSS + "/db", {"spec": {"minReadySeconds": 5}}, MERGE, pick=("spec.minReadySeconds",)),
    Req("PATCH", STSS + "/db", {"spec": {"persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Delete"}}}, MERGE,
        pick=("spec.persistentVolumeClaimRetentionPolicy",)),
    Req("PATCH", STSS + "/db", {"spec": {"template": {"spec": {"containers": [{"name": "c", "image": "busybox"}]}}}},
        STRATEGIC, pick=("metadata.generation", "spec.template.spec.containers.*.imagePullPolicy")),
    Req("PATCH", STSS + "/db/scale", {"spec": {"replicas": 0}}, MERGE, pick=("spec", "status.selector")),
    Req("PATCH", STSS + "/db", {"spec": {"updateStrategy": {"type": "RollingUpdate",
                                                            "rollingUpdate": {"partition": -1}}}}, MERGE, brief=True),
]

SEQUENCES["statefulset_invalid"] = [
    Req("POST", STSS, sts("sel") | {"spec": {**sts("sel")["spec"], "selector": {"matchLabels": {"app": "x"}}}}),
    Req("POST", STSS, sts("pmp", podManagementPolicy="Sometimes")),
    Req("POST", STSS, sts("strat", updateStrategy={"type": "Bogus"}), brief=True),
    Req("POST", STSS, sts("neg", -2)),
    Req("POST", STSS, sts("restart") | {"spec": {**sts("restart")["spec"],
                                                 "template": template({"app": "restart"}, "OnFailure")}}),
    Req("POST", STSS, sts("vct", volumeClaimTemplates=[{"metadata": {"name": "data"}, "spec": {
        "accessModes": ["ReadWriteOnce"]}}])),
    Req("POST", STSS, sts("ordinals", ordinals={"start": -1})),
    Req("POST", STSS, sts("Upper")),
    Req("POST", STSS, sts("noservice") | {"spec": {k: v for k, v in sts("noservice")["spec"].items()
                                                   if k != "serviceName"}}, pick=("spec.serviceName",)),
    Req("GET", STSS, pick=NAMES),
]

SEQUENCES["statefulset_pods_ordinals"] = [
    Req("POST", STSS, sts("ord", 2, podManagementPolicy="Parallel"), pick=("spec.replicas",)),
    WaitFor(STSS + "/ord", "status.readyReplicas", 2, timeout=60),
    Req("GET", PODS + "/ord-0", pick=("metadata.ownerReferences", "spec.hostname", "spec.subdomain",
                                      "metadata.labels.app")),
    Req("GET", PODS, params=sel(labelSelector="statefulset.kubernetes.io/pod-name=ord-1"), pick=NAMES),
    Req("GET", PODS, params=sel(labelSelector="apps.kubernetes.io/pod-index=0,controller-revision-hash"), pick=NAMES),
    Req("GET", PODS, params=sel(labelSelector="app=ord"), pick=NAMES),
    Req("GET", REVS, pick=("items.*.revision", "items.*.metadata.ownerReferences.*.kind")),
    Req("PATCH", STSS + "/ord/scale", {"spec": {"replicas": 1}}, MERGE, pick=("spec",)),
    WaitGone(PODS + "/ord-1"),
    Req("GET", PODS, params=sel(labelSelector="app=ord"), pick=NAMES),
    Req("DELETE", STSS + "/ord", pick=DELETED),
    WaitGone(PODS + "/ord-0"),
]

SEQUENCES["daemonset_defaults_and_rules"] = [
    Req("POST", DSS, ds("agent"), pick=("metadata.generation", "spec.updateStrategy", "spec.revisionHistoryLimit",
                                        "spec.minReadySeconds", *TEMPLATE_DEFAULTS, "status")),
    WaitFor(DSS + "/agent", "status.observedGeneration", 1),
    Req("GET", DSS + "/agent", pick=("status",)),
    Req("PATCH", DSS + "/agent", {"spec": {"selector": {"matchLabels": {"app": "other"}}}}, MERGE, brief=True),
    Req("PATCH", DSS + "/agent", {"spec": {"template": {"spec": {"containers": [{"name": "c", "image": "busybox"}]}}}},
        STRATEGIC, pick=("metadata.generation", "spec.template.spec.containers.*.image")),
    Req("PATCH", DSS + "/agent", {"spec": {"template": {"spec": {"restartPolicy": "Never"}}}}, STRATEGIC, brief=True),
    Req("PATCH", DSS + "/agent", {"spec": {"updateStrategy": {"rollingUpdate": {"maxUnavailable": 0}}}}, STRATEGIC,
        brief=True),
    Req("PATCH", DSS + "/agent", {"spec": {"updateStrategy": {"type": "OnDelete", "rollingUpdate": None}}}, MERGE,
        pick=("spec.updateStrategy",)),
    Req("POST", DSS, ds("bad", updateStrategy={"type": "Sometimes"}), brief=True),
    Req("GET", DSS + "/agent/scale"),
    Req("DELETE", DSS + "/agent", pick=DELETED),
]

SEQUENCES["daemonset_on_kwok_nodes"] = [
    Req("POST", DSS, ds("everywhere") | {"spec": {**ds("everywhere")["spec"], "template": template(
        {"app": "everywhere"}, nodeSelector={"type": "kwok"}, tolerations=[{"key": "kwok.x-k8s.io/node",
                                                                              "operator": "Exists"}])}},
        pick=("spec.template.spec.nodeSelector",)),
    WaitFor(DSS + "/everywhere", "status.numberReady", 3, timeout=60),
    Req("GET", DSS + "/everywhere", pick=("status.desiredNumberScheduled", "status.currentNumberScheduled",
                                          "status.numberMisscheduled", "status.numberReady")),
    Req("GET", PODS, params=sel(labelSelector="app=everywhere"),
        pick=("items.*.metadata.ownerReferences.*.kind", "items.*.spec.tolerations")),
    Req("DELETE", DSS + "/everywhere", params={"propagationPolicy": "Background"}, pick=DELETED),
    WaitFor(PODS + "?labelSelector=app%3Deverywhere", "items", [], timeout=60),
]

# --- Jobs and CronJobs --------------------------------------------------------------------------------

JOB_DEFAULTS = ("spec.completions", "spec.parallelism", "spec.backoffLimit", "spec.completionMode", "spec.suspend",
                "spec.podReplacementPolicy", "spec.manualSelector", "spec.selector", "spec.template.metadata",
                "spec.template.spec.restartPolicy", "metadata.labels", "metadata.uid")

SEQUENCES["job_suspended_defaults_and_rules"] = [
    Req("POST", JOBS, job("batch", suspend=True), pick=JOB_DEFAULTS),
    Req("PATCH", JOBS + "/batch", {"spec": {"completions": 3}}, MERGE, brief=True),
    Req("PATCH", JOBS + "/batch", {"spec": {"template": {"spec": {"containers": [{"name": "c", "image": "busybox"}]}}}},
        STRATEGIC, brief=True),
    Req("PATCH", JOBS + "/batch", {"spec": {"parallelism": 2}}, MERGE, pick=("spec.parallelism",)),
    Req("PATCH", JOBS + "/batch", {"spec": {"template": {"spec": {"nodeSelector": {"disk": "ssd"}}}}}, STRATEGIC,
        pick=("spec.template.spec.nodeSelector",)),
    Req("PATCH", JOBS + "/batch", {"spec": {"selector": {"matchLabels": {"x": "y"}}}}, MERGE, brief=True),
    Req("PATCH", JOBS + "/batch", {"spec": {"backoffLimit": 1, "activeDeadlineSeconds": 100}}, MERGE,
        pick=("spec.backoffLimit", "spec.activeDeadlineSeconds")),
    Req("POST", JOBS, job("indexed", completionMode="Indexed", completions=3, parallelism=3, suspend=True),
        pick=("spec.completionMode", "spec.backoffLimitPerIndex", "spec.completions")),
    Req("PATCH", JOBS + "/indexed", {"spec": {"completions": 2, "parallelism": 2}}, MERGE,
        pick=("spec.completions", "spec.parallelism")),
    Req("PATCH", JOBS + "/indexed", {"spec": {"completions": 1}}, MERGE, brief=True),
    Req("DELETE", JOBS + "/batch", pick=("metadata.finalizers", "metadata.deletionTimestamp")),
    WaitGone(JOBS + "/batch"),
]

SEQUENCES["job_invalid"] = [
    Req("POST", JOBS, job("always", "Always")),
    Req("POST", JOBS, job("unset", None)),
    Req("POST", JOBS, job("idx", completionMode="Indexed")),
    Req("POST", JOBS, job("backoff", backoffLimit=-1)),
    Req("POST", JOBS, job("manual", manualSelector=True)),
    Req("POST", JOBS, job("deadline", activeDeadlineSeconds=0)),
    Req("POST", JOBS, job("ttl", ttlSecondsAfterFinished=-1)),
    Req("POST", JOBS, job("par", parallelism=-1)),
    Req("POST", JOBS, job("mode", completionMode="Sometimes")),
    Req("POST", JOBS, job("pfp", "OnFailure", podFailurePolicy={"rules": [{"action": "FailJob", "onExitCodes": {
        "operator": "In", "values": [1]}}]})),
    Req("POST", JOBS, job("success", successPolicy={"rules": [{"succeededCount": 1}]}), brief=True),
    Req("POST", JOBS, job("gensel", selector={"matchLabels": {"app": "gensel"}})),
    Req("GET", JOBS, pick=NAMES),
]

SEQUENCES["job_runs_to_completion"] = [
    Req("POST", JOBS, job("work", completions=2, parallelism=1), pick=("spec.completions",)),
    WaitFor(JOBS + "/work", "status.succeeded", 2, timeout=60),
    WaitFor(JOBS + "/work", "status.completionTime", "<set>", timeout=30),
    Req("GET", JOBS + "/work", pick=("status.succeeded", "status.failed", "status.active",
                                     "status.conditions.*.type", "status.conditions.*.status",
                                     "status.uncountedTerminatedPods", "status.ready")),
    Req("GET", PODS, params=sel(labelSelector="job-name=work"),
        pick=("items.*.status.phase", "items.*.metadata.ownerReferences.*.kind")),
    Req("PATCH", JOBS + "/work", {"spec": {"suspend": True}}, MERGE, pick=("spec.suspend", "metadata.generation")),
    Req("DELETE", JOBS + "/work", params={"propagationPolicy": "Background"}, pick=DELETED),
    WaitGone(JOBS + "/work"),
    WaitFor(PODS + "?labelSelector=job-name%3Dwork", "items", [], timeout=60),
]

SEQUENCES["job_orphaned_pods_by_default"] = [
    Req("POST", JOBS, job("keep", completions=1), pick=("spec.completions",)),
    WaitFor(JOBS + "/keep", "status.succeeded", 1, timeout=60),
    Req("DELETE", JOBS + "/keep", pick=("metadata.finalizers",)),
    WaitGone(JOBS + "/keep"),
    WaitFor(PODS + "?labelSelector=job-name%3Dkeep", "items.0.metadata.ownerReferences", None),
    Req("GET", PODS, params=sel(labelSelector="job-name=keep"),
        pick=("items.*.metadata.ownerReferences", "items.*.status.phase")),
]

SEQUENCES["cronjob_defaults_and_validation"] = [
    Req("POST", CRONJOBS, cronjob("nightly"), pick=("spec.concurrencyPolicy", "spec.suspend",
                                                     "spec.successfulJobsHistoryLimit", "spec.failedJobsHistoryLimit",
                                                     "spec.jobTemplate.spec.template.spec.restartPolicy",
                                                     "spec.jobTemplate.spec.backoffLimit", "status")),
    Req("POST", CRONJOBS, cronjob("badsched", "every day")),
    Req("POST", CRONJOBS, cronjob("tz", timeZone="Mars/Olympus")),
    Req("POST", CRONJOBS, cronjob("tzinline", "TZ=UTC 0 * * * *")),
    Req("POST", CRONJOBS, cronjob("restart", restart="Always")),
    Req("POST", CRONJOBS, cronjob("policy", concurrencyPolicy="Sometimes")),
    Req("POST", CRONJOBS, cronjob("macro", "@hourly", timeZone="Europe/Paris"),
        pick=("spec.schedule", "spec.timeZone")),
    Req("POST", CRONJOBS, cronjob("x" * 60)),
    Req("PATCH", CRONJOBS + "/nightly", {"spec": {"schedule": "0 3 * * *", "concurrencyPolicy": "Forbid"}}, MERGE,
        pick=("spec.schedule", "spec.concurrencyPolicy")),
    Req("PATCH", CRONJOBS + "/nightly", {"spec": {"startingDeadlineSeconds": -1}}, MERGE, brief=True),
    Req("PATCH", CRONJOBS + "/nightly/status", {"status": {"lastScheduleTime": "2024-01-01T00:00:00Z"}}, MERGE,
        pick=("status",)),
    Req("GET", CRONJOBS, pick=NAMES),
]

# --- Leases -------------------------------------------------------------------------------------------

SEQUENCES["lease_leader_election"] = [
    Req("POST", LEASES, lease("leader", holderIdentity="a", leaseDurationSeconds=15,
                              acquireTime="2024-01-01T00:00:00.000000Z", renewTime="2024-01-01T00:00:00.000000Z",
                              leaseTransitions=0), save={"v": "metadata.resourceVersion"}),
    Req("GET", LEASES + "/leader"),
    Req("PUT", LEASES + "/leader", {**lease("leader", holderIdentity="a", leaseDurationSeconds=15,
                                            acquireTime="2024-01-01T00:00:00.000000Z",
                                            renewTime="2024-01-01T00:00:10.000000Z", leaseTransitions=0),
                                    "metadata": {"name": "leader", "resourceVersion": "{rv:v}"}}),
    Req("PUT", LEASES + "/leader", {**lease("leader", holderIdentity="b", leaseDurationSeconds=15,
                                            leaseTransitions=1),
                                    "metadata": {"name": "leader", "resourceVersion": "{rv:v}"}}),
    Req("PATCH", LEASES + "/leader", {"spec": {"holderIdentity": "b", "leaseTransitions": 1,
                                               "renewTime": "2024-01-01T00:01:00.123456Z"}}, MERGE),
    Req("POST", LEASES, lease("zero", leaseDurationSeconds=0)),
    Req("POST", LEASES, lease("neg", leaseTransitions=-1)),
    Req("POST", LEASES, lease("badtime", renewTime="yesterday")),
    Req("POST", LEASES, lease("short", renewTime="2024-01-01T00:00:00Z"), pick=("spec",)),
    Req("POST", LEASES, lease("strategy", strategy="Bogus")),
    Req("GET", LEASES, pick=("items.*.metadata.name", "items.*.spec.holderIdentity")),
    Req("DELETE", LEASES + "/leader", params={"dryRun": "All"}, pick=("status",)),
    Req("GET", LEASES + "/leader", pick=("spec.holderIdentity",)),
]

# --- Events -------------------------------------------------------------------------------------------

CORE_EVENT = {"apiVersion": "v1", "kind": "Event", "metadata": {"name": "ev1"},
              "involvedObject": {"kind": "Pod", "name": "web-0", "namespace": "{ns}", "apiVersion": "v1"},
              "reason": "Started", "message": "Started container", "type": "Normal", "count": 1,
              "source": {"component": "kubelet"},
              "firstTimestamp": "2024-01-01T00:00:00Z", "lastTimestamp": "2024-01-01T00:00:00Z"}
NEW_EVENT = {"apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": {"name": "ev2"},
             "eventTime": "2024-01-01T00:00:00.000000Z", "reportingController": "example.com/op",
             "reportingInstance": "op-1", "action": "Reconcile", "reason": "Synced", "type": "Normal",
             "note": "all good", "regarding": {"kind": "ConfigMap", "name": "cfg", "namespace": "{ns}"}}

SEQUENCES["events_core_and_events_api"] = [
    Req("POST", EVENTS, CORE_EVENT),
    Req("GET", NEVENTS + "/ev1"),
    Req("POST", NEVENTS, NEW_EVENT),
    Req("GET", EVENTS + "/ev2"),
    Req("PATCH", EVENTS + "/ev1", {"count": 2, "lastTimestamp": "2024-01-01T00:01:00Z"}, MERGE,
        pick=("count", "lastTimestamp", "firstTimestamp")),
    Req("GET", EVENTS, params=sel(fieldSelector="involvedObject.name=web-0"), pick=NAMES),
    Req("GET", EVENTS, params=sel(fieldSelector="reason=Synced"), pick=NAMES),
    Req("GET", EVENTS, params=sel(fieldSelector="involvedObject.kind=ConfigMap,type=Normal"), pick=NAMES),
    Req("GET", NEVENTS, params=sel(fieldSelector="regarding.name=cfg"), pick=NAMES),
    Req("GET", NEVENTS, params=sel(fieldSelector="reportingController=example.com/op"), pick=NAMES),
    Req("GET", EVENTS, params=sel(fieldSelector="spec.bogus=1")),
    Req("DELETE", NEVENTS + "/ev1", pick=("status",)),
    Req("GET", EVENTS, pick=NAMES),
]

SEQUENCES["events_validation"] = [
    Req("POST", NEVENTS, {**NEW_EVENT, "metadata": {"name": "notime"}, "eventTime": None}),
    Req("POST", NEVENTS, {**NEW_EVENT, "metadata": {"name": "noaction"}, "action": ""}),
    Req("POST", NEVENTS, {**NEW_EVENT, "metadata": {"name": "badtype"}, "type": "Bogus"}),
    Req("POST", NEVENTS, {**NEW_EVENT, "metadata": {"name": "nocontroller"}, "reportingController": ""}),
    Req("POST", NEVENTS, {**NEW_EVENT, "metadata": {"name": "series"},
                          "series": {"count": 1, "lastObservedTime": "2024-01-01T00:00:00.000000Z"}}),
    Req("POST", NEVENTS, {**NEW_EVENT, "metadata": {"name": "longnote"}, "note": "n" * 1025}),
    Req("POST", NEVENTS, {**NEW_EVENT, "metadata": {"name": "otherns"},
                          "regarding": {"kind": "ConfigMap", "name": "cfg", "namespace": "elsewhere"}}),
    Req("POST", EVENTS, {**CORE_EVENT, "metadata": {"name": "coreother"},
                         "involvedObject": {"kind": "Pod", "name": "p", "namespace": "elsewhere"}}),
    Req("POST", EVENTS, {**CORE_EVENT, "metadata": {"name": "coretype"}, "type": "Bogus"}),
    Req("POST", EVENTS, {"apiVersion": "v1", "kind": "Event", "metadata": {"name": "bare"},
                         "involvedObject": {"kind": "Pod", "name": "p", "namespace": "{ns}"}}),
    Req("PATCH", NEVENTS + "/otherns", {"note": "x", "type": "Warning"}, MERGE, pick=("note", "type", "regarding")),
    Req("GET", NEVENTS, pick=("items.*.metadata.name", "items.*.type")),
]

# --- ServiceAccounts ----------------------------------------------------------------------------------

SEQUENCES["serviceaccount_and_tokens"] = [
    Req("POST", SAS, {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "robot"},
                      "automountServiceAccountToken": False, "imagePullSecrets": [{"name": "regcred"}]}),
    Req("GET", SAS + "/robot"),
    Req("POST", SAS + "/robot/token", {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
                                       "spec": {"audiences": ["example.com"]}},
        pick=("kind", "apiVersion", "spec")),
    Req("POST", SAS + "/robot/token", {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
                                       "spec": {"expirationSeconds": 100}}),
    Req("POST", SAS + "/ghost/token", {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
                                       "spec": {}}),
    Req("POST", SAS, {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "Robot"}}),
    Req("POST", PODS, pod("as-robot", serviceAccountName="robot"),
        pick=("spec.serviceAccountName", "spec.serviceAccount", "spec.automountServiceAccountToken", "spec.volumes")),
    Req("POST", PODS, pod("mounted", serviceAccountName="robot", automountServiceAccountToken=True),
        pick=("spec.volumes.*.projected.sources", "spec.containers.*.volumeMounts.*.mountPath")),
    Req("PATCH", SAS + "/robot", {"secrets": [{"name": "extra"}]}, MERGE, pick=("secrets", "imagePullSecrets")),
    Req("DELETE", SAS + "/robot", pick=("metadata.name",)),
    Req("GET", SAS, pick=NAMES),
]

# --- Selectors, paging, watches ----------------------------------------------------------------------

SELECTOR_CMS: list[Step] = [
    Req("POST", CMS, cm("red-small", labels={"color": "red", "size": "s"})),
    Req("POST", CMS, cm("red-large", labels={"color": "red", "size": "l"})),
    Req("POST", CMS, cm("blue", labels={"color": "blue"})),
    Req("POST", CMS, cm("plain")),
]

SEQUENCES["label_selectors"] = [
    *SELECTOR_CMS,
    Req("GET", CMS, params=sel(labelSelector="color=red"), pick=NAMES),
    Req("GET", CMS, params=sel(labelSelector="color!=red"), pick=NAMES),
    Req("GET", CMS, params=sel(labelSelector="color in (red,blue),size notin (l)"), pick=NAMES),
    Req("GET", CMS, params=sel(labelSelector="size"), pick=NAMES),
    Req("GET", CMS, params=sel(labelSelector="!color"), pick=NAMES),
    Req("GET", CMS, params=sel(labelSelector="color==blue"), pick=NAMES),
    Req("GET", CMS, params=sel(labelSelector="color=red,size=s"), pick=NAMES),
    Req("GET", CMS, params=sel(labelSelector="color in red")),
    Req("GET", CMS, params=sel(labelSelector="Bad Key=x")),
    Req("GET", CMS, params=sel(labelSelector="size>1"), pick=NAMES),
    Req("DELETE", CMS, params=sel(labelSelector="color=red"), pick=NAMES),
    Req("GET", CMS, pick=NAMES),
]

SEQUENCES["field_selectors"] = [
    *SELECTOR_CMS,
    Req("GET", CMS, params=sel(fieldSelector="metadata.name=blue"), pick=NAMES),
    Req("GET", CMS, params=sel(fieldSelector="metadata.name!=blue"), pick=NAMES),
    Req("GET", CMS, params=sel(fieldSelector="metadata.namespace={ns}"), pick=NAMES),
    Req("GET", CMS, params=sel(fieldSelector="metadata.name=blue", labelSelector="color=red"), pick=NAMES),
    Req("GET", CMS, params=sel(fieldSelector="data.key=x")),
    Req("GET", CMS, params=sel(fieldSelector="metadata.name==plain"), pick=NAMES),
    Req("POST", PODS, pod("p1", labels={"app": "x"})),
    Req("POST", PODS, pod("p2", gated=False, nodeName="diff-node")),
    Req("GET", PODS, params=sel(fieldSelector="spec.nodeName=diff-node"), pick=NAMES),
    Req("GET", PODS, params=sel(fieldSelector="status.phase=Pending,spec.nodeName!=diff-node"), pick=NAMES),
    Req("GET", PODS, params=sel(fieldSelector="spec.schedulerName=default-scheduler"), pick=NAMES),
    Req("GET", PODS, params=sel(fieldSelector="spec.restartPolicy=Always"), pick=NAMES),
    Req("GET", "/api/v1/pods", params=sel(fieldSelector="metadata.namespace={ns},spec.nodeName=diff-node"),
        pick=NAMES),
    Req("GET", NAMESPACES, params=sel(fieldSelector="metadata.name={ns}"), pick=NAMES),
    Req("DELETE", PODS + "/p2", params={"gracePeriodSeconds": "0"}, pick=("metadata.name",)),
]

SEQUENCES["list_paging"] = [
    *[Req("POST", CMS, cm(f"page-{i}", labels={"paged": "yes"})) for i in range(5)],
    Req("GET", CMS, params={"limit": "2", "labelSelector": "paged=yes"}, save={"c1": "metadata.continue"},
        pick=("items.*.metadata.name", "metadata.remainingItemCount")),
    Req("GET", CMS, params={"limit": "2", "labelSelector": "paged=yes", "continue": "{m:c1}"},
        save={"c2": "metadata.continue"}, pick=NAMES),
    Req("GET", CMS, params={"limit": "2", "labelSelector": "paged=yes", "continue": "{m:c2}"},
        pick=("items.*.metadata.name", "metadata.remainingItemCount")),
    Req("GET", CMS, params={"limit": "3"}, save={"c3": "metadata.continue"},
        pick=("items.*.metadata.name", "metadata.remainingItemCount")),
    Req("POST", CMS, cm("page-9", labels={"paged": "yes"})),
    Req("DELETE", CMS + "/page-4"),
    Req("GET", CMS, params={"limit": "10", "continue": "{m:c3}"}, pick=NAMES),
    Req("GET", CMS, params={"continue": "not-a-token"}),
    Req("GET", CMS, params={"limit": "-1"}, pick=NAMES),
    Req("GET", CMS, params={"limit": "0"}, pick=NAMES),
    Req("GET", CMS, params={"limit": "2", "fieldSelector": "metadata.name!=page-0"},
        pick=("items.*.metadata.name", "metadata.remainingItemCount")),
]

SEQUENCES["watch_configmaps_from_mark"] = [
    Req("POST", CMS, cm("before", {"a": "1"})),
    Mark("m0", CMS),
    Req("POST", CMS, cm("w1", {"a": "1"}, labels={"watch": "yes"})),
    Req("PUT", CMS + "/w1", cm("w1", {"a": "2"}, labels={"watch": "yes"})),
    Req("PATCH", CMS + "/w1", {"metadata": {"labels": {"watch": "no"}}}, MERGE),
    Req("POST", CMS, cm("w2", labels={"watch": "yes"})),
    Req("DELETE", CMS + "/w2"),
    Req("DELETE", CMS + "/before"),
    Watch(CMS, since="m0"),
    Watch(CMS, since="m0", params=sel(labelSelector="watch=yes")),
    Watch(CMS, since="m0", params=sel(fieldSelector="metadata.name=w1")),
    Watch(CMS + "?fieldSelector=metadata.name%3Dbefore", since="m0"),
    Watch(CMS, params={"resourceVersion": "1"}),
]

SEQUENCES["watch_initial_events_and_workloads"] = [
    Req("POST", SECRETS, secret("s1", data={"k": "dg=="})),
    Req("POST", SECRETS, secret("s2", data={"k": "dg=="})),
    Watch(SECRETS, params={"sendInitialEvents": "true", "allowWatchBookmarks": "true",
                           "resourceVersionMatch": "NotOlderThan", "fieldSelector": "type=Opaque"}),
    Watch(SECRETS, params={"sendInitialEvents": "true", "allowWatchBookmarks": "true"}),
    Mark("m1", LEASES),
    Req("POST", LEASES, lease("l1", holderIdentity="me")),
    Req("PATCH", LEASES + "/l1", {"spec": {"holderIdentity": "you"}}, MERGE),
    Req("DELETE", LEASES + "/l1"),
    Watch(LEASES, since="m1"),
    Mark("m2", SAS),
    Req("POST", SAS, {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "watched"}}),
    Req("DELETE", SAS + "/watched"),
    Watch(SAS, since="m2", to_last_write=True),
    Watch(SAS + "/watched", since="m2"),
]

# --- dryRun, preconditions ----------------------------------------------------------------------------

SEQUENCES["dry_run_everywhere"] = [
    Req("POST", CMS, cm("dry", {"a": "1"}), params={"dryRun": "All"}),
    Req("GET", CMS + "/dry"),
    Req("POST", CMS, cm("dry", {"a": "1"})),
    Req("PUT", CMS + "/dry", cm("dry", {"a": "2"}), params={"dryRun": "All"}, pick=("data",)),
    Req("PATCH", CMS + "/dry", {"data": {"b": "3"}}, MERGE, params={"dryRun": "All"}, pick=("data",)),
    Req("DELETE", CMS + "/dry", params={"dryRun": "All"}, pick=("status",)),
    Req("GET", CMS + "/dry", pick=("data",)),
    Req("POST", CMS, cm("dry2"), params={"dryRun": "Bogus"}),
    Req("POST", PODS, pod("drypod"), params={"dryRun": "All"}, pick=POD_DEFAULTS),
    Req("GET", PODS + "/drypod"),
    Req("POST", DEPLOYS, deploy("drydeploy", 0), params={"dryRun": "All"}, pick=DEPLOY_DEFAULTS),
    Req("POST", SVCS, svc("drysvc"), params={"dryRun": "All"}, pick=("spec.type", "spec.ports")),
    Req("POST", CMS, cm("Bad"), params={"dryRun": "All"}),
    Req("PATCH", CMS + "/dry", cm("dry", {"k": "v"}), APPLY, params={"dryRun": "All", "fieldManager": "dry"},
        pick=("data",)),
    Req("GET", CMS, pick=NAMES),
]

SEQUENCES["delete_preconditions"] = [
    Req("POST", CMS, cm("guarded", {"a": "1"}), save={"uid": "metadata.uid", "rv": "metadata.resourceVersion"}),
    Req("DELETE", CMS + "/guarded", {"apiVersion": "v1", "kind": "DeleteOptions",
                                     "preconditions": {"uid": "00000000-0000-0000-0000-000000000000"}}),
    Req("PATCH", CMS + "/guarded", {"data": {"a": "2"}}, MERGE, pick=("data",)),
    Req("DELETE", CMS + "/guarded", {"apiVersion": "v1", "kind": "DeleteOptions",
                                     "preconditions": {"resourceVersion": "{rv:rv}"}}),
    Req("DELETE", CMS + "/guarded", {"apiVersion": "v1", "kind": "DeleteOptions",
                                     "preconditions": {"uid": "{m:uid}"}}),
    Req("GET", CMS + "/guarded"),
    Req("POST", CMS, cm("guarded", {"a": "new"}), save={"rv2": "metadata.resourceVersion"}),
    Req("DELETE", CMS + "/guarded", {"apiVersion": "v1", "kind": "DeleteOptions",
                                     "preconditions": {"uid": "{m:uid}"}}),
    Req("DELETE", CMS + "/guarded", {"apiVersion": "v1", "kind": "DeleteOptions",
                                     "preconditions": {"resourceVersion": "{rv:rv2}"}}),
    Req("DELETE", CMS + "/guarded", {"apiVersion": "v1", "kind": "DeleteOptions", "propagationPolicy": "Sideways"}),
    Req("DELETE", CMS + "/guarded", {"apiVersion": "v1", "kind": "DeleteOptions", "gracePeriodSeconds": -1}),
]

# --- Owner references, garbage collection, finalizers -------------------------------------------------

SEQUENCES["ownerrefs_background_gc"] = [
    Req("POST", CMS, cm("parent"), save={"p": "metadata.uid"}),
    Req("POST", CMS, cm("child-a", ownerReferences=[owner("ConfigMap", "parent", "p")]),
        pick=("metadata.ownerReferences",)),
    Req("POST", SECRETS, secret("child-b") | {"metadata": {"name": "child-b", "ownerReferences": [
        owner("ConfigMap", "parent", "p", controller=True, blockOwnerDeletion=True)]}},
        pick=("metadata.ownerReferences",)),
    Req("POST", CMS, cm("nouid", ownerReferences=[{"apiVersion": "v1", "kind": "ConfigMap", "name": "parent"}])),
    Req("POST", CMS, cm("twoctl", ownerReferences=[owner("ConfigMap", "parent", "p", controller=True),
                                                   {**owner("ConfigMap", "other", "p", controller=True),
                                                    "uid": "11111111-1111-1111-1111-111111111111"}])),
    Req("POST", CMS, cm("noapi", ownerReferences=[{"kind": "ConfigMap", "name": "parent", "uid": "{m:p}"}])),
    Req("DELETE", CMS + "/parent"),
    WaitGone(CMS + "/child-a"),
    WaitGone(SECRETS + "/child-b"),
    Req("GET", CMS, pick=NAMES),
]

SEQUENCES["ownerrefs_foreground_and_orphan"] = [
    Req("POST", CMS, cm("fg-owner"), save={"o": "metadata.uid"}),
    Req("POST", CMS, cm("fg-dep", ownerReferences=[owner("ConfigMap", "fg-owner", "o", blockOwnerDeletion=True)],
                        finalizers=["example.com/slow"])),
    Req("DELETE", CMS + "/fg-owner", params={"propagationPolicy": "Foreground"},
        pick=("metadata.finalizers", "metadata.deletionTimestamp")),
    WaitFor(CMS + "/fg-dep", "metadata.deletionTimestamp", "<set>"),
    Req("GET", CMS + "/fg-owner", pick=("metadata.finalizers",)),
    Req("PATCH", CMS + "/fg-dep", {"metadata": {"finalizers": None}}, MERGE, pick=("metadata.name",)),
    WaitGone(CMS + "/fg-owner"),
    Req("POST", CMS, cm("or-owner"), save={"o2": "metadata.uid"}),
    Req("POST", CMS, cm("or-dep", ownerReferences=[owner("ConfigMap", "or-owner", "o2")])),
    Req("DELETE", CMS + "/or-owner", {"apiVersion": "v1", "kind": "DeleteOptions", "propagationPolicy": "Orphan"},
        pick=("metadata.finalizers",)),
    WaitGone(CMS + "/or-owner"),
    WaitFor(CMS + "/or-dep", "metadata.ownerReferences", None),
    Req("GET", CMS + "/or-dep", pick=("metadata.ownerReferences", "metadata.name")),
    Req("POST", CMS, cm("dangling", ownerReferences=[{**owner("ConfigMap", "gone", "o"),
                                                      "uid": "22222222-2222-2222-2222-222222222222"}])),
    WaitGone(CMS + "/dangling"),
]

SEQUENCES["ownerrefs_workloads_gc"] = [
    Req("POST", DEPLOYS, deploy("owned", 0), save={"d": "metadata.uid"}),
    Req("POST", CMS, cm("deploy-child", ownerReferences=[owner("Deployment", "owned", "d", api="apps/v1",
                                                                 controller=True)])),
    Req("POST", SVCS, svc("owned") | {"metadata": {"name": "owned", "ownerReferences": [
        owner("Deployment", "owned", "d", api="apps/v1")]}}, pick=("metadata.ownerReferences",)),
    Req("POST", JOBS, job("owned", suspend=True), save={"j": "metadata.uid"}),
    Req("POST", CMS, cm("job-child", ownerReferences=[owner("Job", "owned", "j", api="batch/v1")])),
    Req("DELETE", DEPLOYS + "/owned", pick=DELETED),
    WaitGone(CMS + "/deploy-child"),
    WaitGone(SVCS + "/owned"),
    Req("DELETE", JOBS + "/owned", params={"propagationPolicy": "Background"}, pick=DELETED),
    WaitGone(CMS + "/job-child"),
    Req("GET", CMS, pick=NAMES),
]

SEQUENCES["finalizers_block_deletion"] = [
    Req("POST", CMS, cm("fin", {"a": "1"}, finalizers=["example.com/cleanup"])),
    Req("POST", CMS, cm("badfin", finalizers=["bad finalizer"])),
    Req("POST", CMS, cm("unqualified", finalizers=["cleanup"])),
    Req("DELETE", CMS + "/fin", pick=("metadata.deletionTimestamp", "metadata.finalizers", "metadata.name")),
    Req("GET", CMS + "/fin", pick=("metadata.deletionTimestamp", "metadata.deletionGracePeriodSeconds")),
    Req("PATCH", CMS + "/fin", {"data": {"a": "2"}}, MERGE, pick=("data",)),
    Req("PATCH", CMS + "/fin", {"metadata": {"finalizers": ["example.com/cleanup", "example.com/new"]}}, MERGE,
        brief=True),
    Req("DELETE", CMS + "/fin", pick=("metadata.finalizers",)),
    Req("PATCH", CMS + "/fin", {"metadata": {"deletionTimestamp": None}}, MERGE,
        pick=("metadata.deletionTimestamp",)),
    Req("PATCH", CMS + "/fin", [{"op": "remove", "path": "/metadata/finalizers/0"}], JSON, pick=("metadata.name",)),
    Req("GET", CMS + "/fin"),
    Req("POST", CMS, cm("fin", {"a": "reborn"}), pick=("data", "metadata.finalizers")),
]

# --- Server-side apply ---------------------------------------------------------------------------------

SEQUENCES["server_side_apply_configmap"] = [
    Req("PATCH", CMS + "/applied", cm("applied", {"a": "1", "b": "2"}), APPLY, params={"fieldManager": "alice"},
        pick=("data", "metadata.managedFields")),
    Req("PATCH", CMS + "/applied", cm("applied", {"a": "changed"}), APPLY, params={"fieldManager": "bob"}),
    Req("PATCH", CMS + "/applied", cm("applied", {"a": "changed"}), APPLY,
        params={"fieldManager": "bob", "force": "true"}, pick=("data", "metadata.managedFields")),
    Req("PATCH", CMS + "/applied", cm("applied", {"a": "changed"}), APPLY, params={"fieldManager": "alice"},
        pick=("data",)),
    Req("PATCH", CMS + "/applied", cm("applied", {"c": "3"}), APPLY, params={"fieldManager": "bob"},
        pick=("data",)),
    Req("PATCH", CMS + "/applied", cm("applied", {"x": "1"}), APPLY),
    Req("PATCH", CMS + "/applied", {"metadata": {"name": "applied"}, "data": {"x": "1"}}, APPLY,
        params={"fieldManager": "carol"}),
    Req("PATCH", CMS + "/applied", cm("other-name"), APPLY, params={"fieldManager": "carol"}),
    Req("PATCH", CMS + "/applied", {"data": {"z": "9"}}, MERGE, params={"fieldManager": "kubectl-edit"},
        pick=("data", "metadata.managedFields.*.manager", "metadata.managedFields.*.operation")),
    Req("PATCH", CMS + "/applied", cm("applied", {"z": "10"}), APPLY, params={"fieldManager": "alice"}),
    Req("GET", CMS + "/applied", pick=("data", "metadata.managedFields.*.manager")),
    Req("PATCH", CMS + "/applied", cm("applied", {"b": "2"}), APPLY,
        params={"fieldManager": "alice", "force": "maybe"}, pick=("data",)),
]

SEQUENCES["server_side_apply_workloads"] = [
    Req("PATCH", DEPLOYS + "/ssa", deploy("ssa", 0), APPLY, params={"fieldManager": "operator"},
        pick=DEPLOY_DEFAULTS),
    Req("PATCH", DEPLOYS + "/ssa", {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "ssa"},
                                    "spec": {"replicas": 1}}, APPLY, params={"fieldManager": "hpa"}),
    Req("PATCH", DEPLOYS + "/ssa", {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "ssa"},
                                    "spec": {"replicas": 0}}, APPLY, params={"fieldManager": "hpa"},
        pick=("spec.replicas",)),
    Req("PATCH", DEPLOYS + "/ssa", deploy("ssa") | {"spec": {**deploy("ssa")["spec"], "template": {
        "metadata": {"labels": {"app": "ssa"}},
        "spec": {"containers": [container(), container("side", "busybox:1.36")]}}}}, APPLY,
        params={"fieldManager": "operator"},
        pick=("spec.replicas", "spec.template.spec.containers.*.name", "spec.template.spec.containers.*.image")),
    Req("PATCH", DEPLOYS + "/ssa", {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "ssa"},
                                    "spec": {"template": {"spec": {"containers": [
                                        {"name": "c", "image": "other:1"}]}}}}, APPLY,
        params={"fieldManager": "intruder"}),
    Req("PATCH", PODS + "/ssapod", pod("ssapod"), APPLY, params={"fieldManager": "op"}, pick=POD_DEFAULTS),
    Req("PATCH", PODS + "/ssapod", {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "ssapod",
                                                                                    "labels": {"a": "b"}}},
        APPLY, params={"fieldManager": "labeler"}, pick=("metadata.labels", "spec.containers.*.name")),
    Req("PATCH", SVCS + "/ssasvc", svc("ssasvc"), APPLY, params={"fieldManager": "op"},
        pick=("spec.ports", "spec.type")),
    Req("PATCH", SVCS + "/ssasvc", svc("ssasvc", ports=[{"port": 80}, {"port": 443, "name": "https"}]) | {},
        APPLY, params={"fieldManager": "op"}),
    Req("PATCH", LEASES + "/ssalease", lease("ssalease", holderIdentity="x"), APPLY, params={"fieldManager": "op"},
        pick=("spec",)),
]

SEQUENCES["strategic_merge_directives"] = [
    Req("POST", DEPLOYS, deploy("smp", 0) | {"spec": {**deploy("smp", 0)["spec"], "template": template(
        {"app": "smp"}, containers=[container("a", env=[{"name": "X", "value": "1"}, {"name": "Y", "value": "2"}],
                                              ports=[{"containerPort": 80, "name": "http"}]),
                                    container("b")])}}, pick=("spec.template.spec.containers.*.name",)),
    Req("PATCH", DEPLOYS + "/smp", {"spec": {"template": {"spec": {"containers": [
        {"name": "a", "env": [{"name": "Z", "value": "3"}]}]}}}}, STRATEGIC,
        pick=("spec.template.spec.containers.*.env",)),
    Req("PATCH", DEPLOYS + "/smp", {"spec": {"template": {"spec": {"containers": [
        {"name": "a", "env": [{"name": "X", "$patch": "delete"}]}]}}}}, STRATEGIC,
        pick=("spec.template.spec.containers.*.env",)),
    Req("PATCH", DEPLOYS + "/smp", {"spec": {"template": {"spec": {
        "$setElementOrder/containers": [{"name": "b"}, {"name": "a"}],
        "containers": [{"name": "a", "image": "busybox:1.36"}]}}}}, STRATEGIC,
        pick=("spec.template.spec.containers.*.name", "spec.template.spec.containers.*.image")),
    Req("PATCH", DEPLOYS + "/smp", {"spec": {"template": {"spec": {"containers": [
        {"name": "b", "$patch": "delete"}]}}}}, STRATEGIC, pick=("spec.template.spec.containers.*.name",)),
    Req("PATCH", DEPLOYS + "/smp", {"spec": {"template": {"spec": {"containers": [
        {"name": "a", "ports": [{"containerPort": 443, "name": "https"}]}]}}}}, STRATEGIC,
        pick=("spec.template.spec.containers.*.ports",)),
    Req("PATCH", DEPLOYS + "/smp", {"metadata": {"labels": {"$patch": "replace", "only": "this"}}}, STRATEGIC,
        pick=("metadata.labels",)),
    Req("PATCH", DEPLOYS + "/smp", {"spec": {"template": {"spec": {"containers": [{"image": "noname"}]}}}},
        STRATEGIC, brief=True),
    Req("PATCH", DEPLOYS + "/smp", {"spec": {"template": {"spec": {"containers": {"name": "a"}}}}}, STRATEGIC,
        brief=True),
    Req("PATCH", ECHOES + "/none", {"spec": {"message": "x"}}, STRATEGIC),
    Req("PATCH", DEPLOYS + "/smp", {"spec": {"$retainKeys": ["type"], "strategy": {"type": "Recreate"}}}, STRATEGIC),
    Req("PATCH", DEPLOYS + "/smp", {"spec": {"strategy": {"$retainKeys": ["type"], "type": "Recreate"}}}, STRATEGIC,
        pick=("spec.strategy",)),
]

# --- Custom resources (a few; the sister suite covers them in depth) -----------------------------------

ECHO = {"apiVersion": "test.kubeloop.dev/v1", "kind": "Echo"}

SEQUENCES["echo_operator_reconcile_loop"] = [
    Req("POST", ECHOES, {**ECHO, "metadata": {"name": "e1", "finalizers": ["test.kubeloop.dev/cleanup"]},
                         "spec": {"message": "hi", "copies": 2}}, save={"e": "metadata.uid"}),
    Req("PATCH", ECHOES + "/e1/status", {"status": {"observedGeneration": 1, "seen": "hi",
                                                    "conditions": [{"type": "Ready", "status": "True"}]}}, MERGE),
    Req("PATCH", ECHOES + "/e1", {"spec": {"message": "bye"}}, MERGE, pick=("metadata.generation", "status")),
    Req("PATCH", ECHOES + "/e1", {"status": {"seen": "ignored"}}, MERGE, pick=("metadata.generation", "status")),
    Req("POST", CMS, cm("echo-out", {"message": "bye"}, ownerReferences=[
        owner("Echo", "e1", "e", api="test.kubeloop.dev/v1", controller=True, blockOwnerDeletion=True)]),
        pick=("metadata.ownerReferences",)),
    Req("PATCH", ECHOES + "/e1", {"spec": {"copies": -1}}, MERGE),
    Req("DELETE", ECHOES + "/e1", pick=("metadata.deletionTimestamp", "metadata.finalizers")),
    Req("PATCH", ECHOES + "/e1", {"metadata": {"finalizers": []}}, MERGE, pick=("metadata.finalizers",)),
    WaitGone(ECHOES + "/e1"),
    WaitGone(CMS + "/echo-out"),
]

SEQUENCES["echo_list_watch_and_apply"] = [
    Mark("em", ECHOES),
    Req("PATCH", ECHOES + "/a1", {**ECHO, "metadata": {"name": "a1", "labels": {"tier": "x"}},
                                  "spec": {"message": "one"}}, APPLY, params={"fieldManager": "op"}),
    Req("PATCH", ECHOES + "/a1", {**ECHO, "metadata": {"name": "a1"}, "spec": {"message": "two"}}, APPLY,
        params={"fieldManager": "user"}),
    Req("POST", ECHOES, {**ECHO, "metadata": {"name": "a2"}, "spec": {"message": "other"}}),
    Req("GET", ECHOES, params=sel(labelSelector="tier=x"), pick=NAMES),
    Req("GET", ECHOES, params={"limit": "1"}, pick=("items.*.metadata.name", "metadata.remainingItemCount")),
    Req("DELETE", ECHOES + "/a2"),
    Watch(ECHOES, since="em"),
]

# --- More day-to-day operator and kubectl moves ---------------------------------------------------------

SEQUENCES["pod_ephemeral_containers_debug"] = [
    Req("POST", PODS, pod("dbg"), pick=("spec.ephemeralContainers",)),
    Req("GET", PODS + "/dbg/ephemeralcontainers", pick=("kind", "spec.ephemeralContainers")),
    Req("PATCH", PODS + "/dbg/ephemeralcontainers", {"spec": {"ephemeralContainers": [
        {"name": "debugger", "image": "busybox:1.36", "targetContainerName": "c", "stdin": True, "tty": True}]}},
        STRATEGIC, pick=("spec.ephemeralContainers",)),
    Req("PATCH", PODS + "/dbg/ephemeralcontainers", {"spec": {"ephemeralContainers": [
        {"name": "withports", "image": "busybox", "ports": [{"containerPort": 80}]}]}}, STRATEGIC, brief=True),
    Req("PATCH", PODS + "/dbg/ephemeralcontainers", {"spec": {"ephemeralContainers": [
        {"name": "c", "image": "busybox"}]}}, STRATEGIC, brief=True),
    Req("PATCH", PODS + "/dbg/ephemeralcontainers", {"spec": {"ephemeralContainers": None}}, MERGE, brief=True),
    Req("PATCH", PODS + "/dbg", {"spec": {"ephemeralContainers": [{"name": "sneaky", "image": "busybox"}]}},
        STRATEGIC, brief=True),
    Req("PATCH", PODS + "/dbg/ephemeralcontainers", {"spec": {"ephemeralContainers": [
        {"name": "debugger", "image": "busybox:1.37", "targetContainerName": "c", "stdin": True, "tty": True}]}},
        STRATEGIC, brief=True),
    Req("GET", PODS + "/dbg", pick=("spec.ephemeralContainers.*.name", "spec.containers.*.name")),
]

SEQUENCES["pod_watch_by_label"] = [
    Mark("pm", PODS),
    Req("POST", PODS, pod("w-a", labels={"watch": "me"}), pick=("metadata.labels",)),
    Req("POST", PODS, pod("w-b", labels={"watch": "other"}), pick=("metadata.labels",)),
    Req("PATCH", PODS + "/w-a", {"metadata": {"annotations": {"seen": "1"}}}, MERGE, pick=("metadata.annotations",)),
    Req("PATCH", PODS + "/w-b", {"metadata": {"labels": {"watch": "me"}}}, MERGE, pick=("metadata.labels",)),
    Req("PATCH", PODS + "/w-a", {"metadata": {"labels": {"watch": "gone"}}}, MERGE, pick=("metadata.labels",)),
    Req("DELETE", PODS + "/w-b", pick=("metadata.name",)),
    Watch(PODS, since="pm", params=sel(labelSelector="watch=me")),
    Watch(PODS, since="pm", params=sel(fieldSelector="metadata.name=w-b")),
    Req("GET", PODS, params=sel(labelSelector="watch"), pick=("items.*.metadata.name", "items.*.metadata.labels")),
]

SEQUENCES["json_patch_pointer_escapes"] = [
    Req("POST", CMS, cm("ptr", {"a": "1"}, labels={"app.kubernetes.io/name": "x"})),
    Req("PATCH", CMS + "/ptr", [{"op": "replace", "path": "/metadata/labels/app.kubernetes.io~1name", "value": "y"}],
        JSON, pick=("metadata.labels",)),
    Req("PATCH", CMS + "/ptr", [{"op": "add", "path": "/metadata/annotations", "value": {"a~b": "tilde"}}], JSON,
        pick=("metadata.annotations",)),
    Req("PATCH", CMS + "/ptr", [{"op": "copy", "from": "/data/a", "path": "/data/b"},
                                {"op": "move", "from": "/data/a", "path": "/data/c"}], JSON, pick=("data",)),
    Req("PATCH", CMS + "/ptr", [{"op": "add", "path": "/metadata/labels/kubectl.kubernetes.io~1restartedAt",
                                 "value": "now"}], JSON, pick=("metadata.labels",)),
    Req("PATCH", CMS + "/ptr", [{"op": "remove", "path": "/metadata/labels/app.kubernetes.io~1name"}], JSON,
        pick=("metadata.labels",)),
    Req("PATCH", CMS + "/ptr", [{"op": "bogus", "path": "/data/b"}], JSON),
    Req("PATCH", CMS + "/ptr", {"op": "add", "path": "/data/x", "value": "1"}, JSON),
    Req("PATCH", CMS + "/ptr", [{"op": "replace", "path": "/metadata/name", "value": "renamed"}], JSON),
    Req("PATCH", CMS + "/ptr", [{"op": "add", "path": "/data", "value": None}], JSON, pick=("data",)),
    Req("PATCH", CMS + "/ptr", [{"op": "add", "path": "/metadata/resourceVersion", "value": "1"}], JSON),
    Req("GET", CMS + "/ptr", pick=("data", "metadata.labels", "metadata.annotations")),
]

SEQUENCES["namespace_finalize_subresource"] = [
    Req("POST", NAMESPACES, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "{ns}-env"}},
        pick=("spec", "status")),
    Req("POST", NAMESPACES + "/{ns}-env/configmaps", cm("held", finalizers=["example.com/hold"]),
        pick=("metadata.finalizers",)),
    Req("PUT", NAMESPACES + "/{ns}-env/finalize", {"apiVersion": "v1", "kind": "Namespace",
                                                  "metadata": {"name": "{ns}-env"}, "spec": {"finalizers": []}},
        pick=("spec", "status")),
    Req("GET", NAMESPACES + "/{ns}-env", pick=("spec", "status")),
    Req("PUT", NAMESPACES + "/{ns}-env/finalize", {"apiVersion": "v1", "kind": "Namespace",
                                                  "metadata": {"name": "{ns}-env"},
                                                  "spec": {"finalizers": ["bad finalizer"]}}, brief=True),
    Req("PATCH", NAMESPACES + "/{ns}-env/status", {"status": {"phase": "Bogus"}}, MERGE, brief=True),
    Req("PUT", NAMESPACES + "/{ns}-env/finalize", {"apiVersion": "v1", "kind": "Namespace",
                                                  "metadata": {"name": "{ns}-env"},
                                                  "spec": {"finalizers": ["kubernetes"]}}, pick=("spec",)),
    Req("DELETE", NAMESPACES + "/{ns}-env", pick=("status.phase", "spec")),
    WaitFor(NAMESPACES + "/{ns}-env/configmaps/held", "metadata.deletionTimestamp", "<set>",
            timeout=120),
    Req("PUT", NAMESPACES + "/{ns}-env/finalize", {"apiVersion": "v1", "kind": "Namespace",
                                                  "metadata": {"name": "{ns}-env"}, "spec": {"finalizers": []}},
        pick=("metadata.name", "spec", "status.phase")),
    Req("GET", NAMESPACES + "/{ns}-env"),
    Req("GET", NAMESPACES + "/{ns}-env/configmaps/held", pick=("metadata.finalizers", "metadata.namespace")),
    Req("PATCH", NAMESPACES + "/{ns}-env/configmaps/held", {"metadata": {"finalizers": None}}, MERGE,
        pick=("metadata.name",)),
    Req("GET", NAMESPACES + "/{ns}-env/configmaps/held"),
]

SEQUENCES["service_nodeports_and_lb_status"] = [
    Req("POST", SVCS, svc("fixed-np", ports=[{"port": 80, "nodePort": 31777}], type="NodePort"),
        pick=("spec.ports",)),
    Req("POST", SVCS, svc("clash-np", ports=[{"port": 80, "nodePort": 31777}], type="NodePort")),
    Req("POST", SVCS, svc("range-np", ports=[{"port": 80, "nodePort": 80}], type="NodePort")),
    Req("POST", SVCS, svc("cip-np", ports=[{"port": 80, "nodePort": 31778}])),
    Req("POST", SVCS, svc("local", externalTrafficPolicy="Local")),
    Req("POST", SVCS, svc("lb-local", type="LoadBalancer", externalTrafficPolicy="Local"),
        pick=("spec.externalTrafficPolicy", "spec.type")),
    Req("PATCH", SVCS + "/lb-local/status", {"status": {"loadBalancer": {"ingress": [{"ip": "192.0.2.1"}]}}}, MERGE,
        pick=("status",)),
    Req("PATCH", SVCS + "/lb-local/status", {"status": {"loadBalancer": {"ingress": [{"ip": "not-an-ip"}]}}}, MERGE,
        brief=True),
    Req("PATCH", SVCS + "/lb-local/status", {"status": {"loadBalancer": {"ingress": [
        {"hostname": "lb.example.com", "ipMode": "Proxy"}]}}}, MERGE, pick=("status",)),
    Req("PATCH", SVCS + "/fixed-np", {"spec": {"type": "ClusterIP"}}, MERGE,
        pick=("spec.type", "spec.ports", "spec.externalTrafficPolicy")),
    Req("POST", SVCS, svc("reuse-np", ports=[{"port": 80, "nodePort": 31777}], type="NodePort"),
        pick=("spec.ports",)),
    Req("DELETE", SVCS + "/reuse-np", pick=("metadata.name",)),
    Req("DELETE", SVCS + "/lb-local", pick=("metadata.name",)),
    Req("GET", SVCS, pick=NAMES),
]

SEQUENCES["replicaset_direct"] = [
    Req("POST", RSS, {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "bare"},
                      "spec": {"replicas": 0, "selector": {"matchLabels": {"app": "bare"}},
                               "template": template({"app": "bare"})}},
        pick=("spec.replicas", "spec.minReadySeconds", "metadata.generation", "spec.template.spec.restartPolicy")),
    Req("PATCH", RSS + "/bare", {"spec": {"selector": {"matchLabels": {"app": "bare", "x": "y"}}}}, STRATEGIC,
        brief=True),
    Req("GET", RSS + "/bare/scale", pick=("kind", "spec", "status")),
    Req("PATCH", RSS + "/bare/scale", {"spec": {"replicas": 2}}, MERGE, pick=("spec",)),
    WaitFor(RSS + "/bare", "status.readyReplicas", 2, timeout=60),
    Req("GET", PODS, params=sel(labelSelector="app=bare"),
        pick=("items.*.metadata.ownerReferences.*.kind", "items.*.metadata.generateName")),
    Req("PATCH", RSS + "/bare/scale", {"spec": {"replicas": 0}}, MERGE, pick=("spec",)),
    WaitFor(PODS + "?labelSelector=app%3Dbare", "items", [], timeout=60),
    Req("POST", RSS, {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "badrs"},
                      "spec": {"selector": {"matchLabels": {"app": "x"}}, "template": template({"app": "y"})}}),
    Req("DELETE", RSS + "/bare", pick=DELETED),
]

SEQUENCES["cronjob_manual_job_and_gc"] = [
    Req("POST", CRONJOBS, cronjob("backup"), save={"cj": "metadata.uid"}, pick=("spec.suspend",)),
    Req("POST", JOBS, {**job("backup-manual", suspend=True), "metadata": {
        "name": "backup-manual", "annotations": {"cronjob.kubernetes.io/instantiate": "manual"},
        "ownerReferences": [owner("CronJob", "backup", "cj", api="batch/v1", controller=True,
                                  blockOwnerDeletion=True)]}},
        pick=("metadata.ownerReferences", "metadata.annotations", "spec.suspend")),
    Req("GET", JOBS, params=sel(labelSelector="job-name=backup-manual"), pick=NAMES),
    Req("PATCH", CRONJOBS + "/backup", {"spec": {"jobTemplate": {"spec": {"template": {"spec": {
        "containers": [{"name": "c", "image": "busybox:1.36"}]}}}}}}, STRATEGIC,
        pick=("spec.jobTemplate.spec.template.spec.containers.*.image", "metadata.generation")),
    Req("PATCH", CRONJOBS + "/backup", {"spec": {"suspend": False, "schedule": "0 0 1 1 *"}}, MERGE,
        pick=("spec.suspend", "spec.schedule")),
    Req("DELETE", CRONJOBS + "/backup", params={"propagationPolicy": "Foreground"},
        pick=("metadata.finalizers", "metadata.deletionTimestamp")),
    WaitGone(JOBS + "/backup-manual"),
    WaitGone(CRONJOBS + "/backup"),
    Req("GET", JOBS, pick=NAMES),
]

SEQUENCES["cross_namespace_lists"] = [
    Req("POST", CMS, cm("tagged", labels={"run": "{ns}"})),
    Req("POST", SECRETS, secret("tagged") | {"metadata": {"name": "tagged", "labels": {"run": "{ns}"}}}),
    Req("POST", NAMESPACES, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "{ns}-b"}},
        pick=("metadata.name",)),
    Req("POST", NAMESPACES + "/{ns}-b/configmaps", cm("tagged", labels={"run": "{ns}"}), pick=("metadata.namespace",)),
    Req("GET", "/api/v1/configmaps", params=sel(labelSelector="run={ns}"),
        pick=("items.*.metadata.namespace", "items.*.metadata.name", "kind")),
    Req("GET", "/api/v1/secrets", params=sel(labelSelector="run={ns}"), pick=("items.*.metadata.namespace",)),
    Req("GET", "/api/v1/configmaps", params={"labelSelector": "run={ns}", "fieldSelector": "metadata.namespace={ns}"},
        pick=("items.*.metadata.namespace",)),
    Req("GET", "/api/v1/configmaps", params={"labelSelector": "run={ns}", "limit": "1"},
        pick=("items.*.metadata.namespace",)),
    Req("DELETE", NAMESPACES + "/{ns}-b", pick=("status.phase",)),
    WaitGone(NAMESPACES + "/{ns}-b", timeout=120),
    Req("GET", "/api/v1/configmaps", params=sel(labelSelector="run={ns}"), pick=("items.*.metadata.namespace",)),
]

SEQUENCES["serviceaccount_token_secret_controller"] = [
    Req("POST", SAS, {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "legacy"}},
        save={"sa": "metadata.uid"}, pick=("metadata.name",)),
    Req("POST", SECRETS, {"apiVersion": "v1", "kind": "Secret", "type": "kubernetes.io/service-account-token",
                          "metadata": {"name": "legacy-token",
                                       "annotations": {"kubernetes.io/service-account.name": "legacy"}}},
        pick=("type", "metadata.annotations")),
    WaitFor(SECRETS + "/legacy-token", "data.token", "<set>"),
    Req("GET", SECRETS + "/legacy-token", pick=("type", "metadata.annotations")),
    Req("PATCH", SECRETS + "/legacy-token", {"metadata": {"labels": {"rotated": "no"}}}, MERGE,
        pick=("metadata.labels", "type")),
    Req("GET", SECRETS, params=sel(fieldSelector="type=kubernetes.io/service-account-token"), pick=NAMES),
    Req("DELETE", SAS + "/legacy", pick=("metadata.name",)),
    WaitGone(SECRETS + "/legacy-token"),
]

SEQUENCES["pod_affinity_and_topology_validation"] = [
    Req("POST", PODS, pod("aff", affinity={"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": [{"key": "disk", "operator": "In", "values": ["ssd"]}]}]}}}),
        pick=("spec.affinity",)),
    Req("POST", PODS, pod("badop", affinity={"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": [{"key": "disk", "operator": "Maybe"}]}]}}})),
    Req("POST", PODS, pod("novals", affinity={"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": [{"key": "disk", "operator": "In"}]}]}}})),
    Req("POST", PODS, pod("podaff", affinity={"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 101, "podAffinityTerm": {"topologyKey": "kubernetes.io/hostname",
                                            "labelSelector": {"matchLabels": {"a": "b"}}}}]}})),
    Req("POST", PODS, pod("notopo", affinity={"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {"a": "b"}}}]}})),
    Req("POST", PODS, pod("spread", topologySpreadConstraints=[{"maxSkew": 1, "topologyKey": "zone",
                                                                "whenUnsatisfiable": "DoNotSchedule",
                                                                "labelSelector": {"matchLabels": {"a": "b"}}}]),
        pick=("spec.topologySpreadConstraints",)),
    Req("POST", PODS, pod("badspread", topologySpreadConstraints=[{"maxSkew": 0, "topologyKey": "zone",
                                                                   "whenUnsatisfiable": "Sometimes"}])),
    Req("POST", PODS, pod("tol", tolerations=[{"key": "k", "operator": "Exists", "value": "v"}])),
    Req("POST", PODS, pod("tol2", tolerations=[{"key": "k", "operator": "Equal", "value": "v",
                                                "effect": "NoExecute", "tolerationSeconds": 10}]),
        pick=("spec.tolerations",)),
    Req("GET", PODS, pick=NAMES),
]
