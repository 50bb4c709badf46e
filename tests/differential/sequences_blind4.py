"""The fourth blind differential suite (45 sequences, 490 steps).

Written on 2026-12-03 by a session blind to the fake API server, the fourth such suite: it did not read
``kubeloop/testing/apiserver/``, the earlier sequence modules, the fuzzer, the fake's tests or ``docs/``, nor
the git history, and ran nothing against the fake. It read only
``tests/differential/harness.py`` (what a step is and how outcomes are normalised), ``blind.py``,
``compare.py``, ``conftest.py``, ``play_real.py``, ``tests/integration/conftest.py`` (the Echo CRD) and
public material: the Kubernetes sources (validation, registry strategies, apimachinery) and the request
patterns of real operators (cert-manager, external-secrets, Reloader, Flux, Argo CD, the Prometheus operator,
client-go's leader election and event recorder, controller-runtime's status writer and CreateOrPatch, Kopf).

Each sequence is either an operator's pattern or a new user's mistake. Every step was checked against
kube-apiserver 1.35.4 only (``tests/differential/play_real.py``) and gave the same normalised answer over two
runs (each sequence is played twice per run, and two complete runs gave equal outcomes); fields a
controller writes (a workload's status, a Service's cluster IP...) are left out with ``pick``.
"""

from __future__ import annotations

from typing import Any

from tests.differential.harness import APPLY, JSON, MERGE, STRATEGIC, Mark, Req, Step, WaitFor, WaitGone, Watch

NS = "/api/v1/namespaces/{ns}"
CM = NS + "/configmaps"
SEC = NS + "/secrets"
PODS = NS + "/pods"
SVC = NS + "/services"
SA = NS + "/serviceaccounts"
EV = NS + "/events"
EV1 = "/apis/events.k8s.io/v1/namespaces/{ns}/events"
APPS = "/apis/apps/v1/namespaces/{ns}"
BATCH = "/apis/batch/v1/namespaces/{ns}"
HPA = "/apis/autoscaling/v2/namespaces/{ns}/horizontalpodautoscalers"
LEASES = "/apis/coordination.k8s.io/v1/namespaces/{ns}/leases"
ECHO = "/apis/test.kubeloop.dev/v1/namespaces/{ns}/echoes"
CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
B64 = {"crt": "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0t", "key": "LS0tLS1CRUdJTiBQUklWQVRFIEtFWS0tLS0t",
       "ca": "Y2EtYnVuZGxl", "v2": "cmVuZXdlZA=="}


def cm(name: str, data: dict[str, str] | None = None, **meta: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, **meta}, "data": data or {}}


def echo(name: str, message: str = "hi", **meta: Any) -> dict[str, Any]:
    return {"apiVersion": "test.kubeloop.dev/v1", "kind": "Echo", "metadata": {"name": name, **meta},
            "spec": {"message": message}}


def container(name: str = "app", image: str = "registry.local/app:1.0", **extra: Any) -> dict[str, Any]:
    return {"name": name, "image": image, **extra}


def template(labels: dict[str, str], **spec: Any) -> dict[str, Any]:
    return {"metadata": {"labels": labels}, "spec": {"containers": [container()], **spec}}


def deployment(name: str, replicas: int = 1, **spec: Any) -> dict[str, Any]:
    labels = {"app": name}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "labels": labels},
            "spec": {"replicas": replicas, "selector": {"matchLabels": labels}, "template": template(labels),
                     **spec}}


def pod(name: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"nodeName": "diff-node", "automountServiceAccountToken": False,
                     "containers": [container()], **spec}}


POD_PICK = ("metadata.name", "spec.containers", "spec.nodeName", "spec.restartPolicy", "spec.dnsPolicy",
            "spec.tolerations", "status.phase", "status.qosClass")


# --- cert-manager: TLS secrets and Certificate-like status conditions --------------------------------

CERTMANAGER_TLS_SECRET = [
    Req("POST", SEC, {"apiVersion": "v1", "kind": "Secret", "type": "kubernetes.io/tls",
                      "metadata": {"name": "web-tls", "labels": {"controller.cert-manager.io/fao": "true"},
                                   "annotations": {"cert-manager.io/certificate-name": "web",
                                                   "cert-manager.io/issuer-name": "ca-issuer"}},
                      "data": {"tls.crt": B64["crt"], "tls.key": B64["key"], "ca.crt": B64["ca"]}},
        save={"rv1": "metadata.resourceVersion"}),
    Req("POST", SEC, {"apiVersion": "v1", "kind": "Secret", "type": "kubernetes.io/tls",
                      "metadata": {"name": "half-tls"}, "data": {"tls.crt": B64["crt"]}}),
    Req("GET", SEC + "/web-tls"),
    Req("PUT", SEC + "/web-tls", {"apiVersion": "v1", "kind": "Secret", "type": "kubernetes.io/tls",
                                  "metadata": {"name": "web-tls", "resourceVersion": "{m:rv1}",
                                               "annotations": {"cert-manager.io/certificate-name": "web"}},
                                  "data": {"tls.crt": B64["v2"], "tls.key": B64["key"]}}),
    Req("PUT", SEC + "/web-tls", {"apiVersion": "v1", "kind": "Secret", "type": "kubernetes.io/tls",
                                  "metadata": {"name": "web-tls", "resourceVersion": "{m:rv1}"},
                                  "data": {"tls.crt": B64["crt"], "tls.key": B64["key"]}}),
    Req("PATCH", SEC + "/web-tls", {"type": "Opaque"}, MERGE),
    Req("PATCH", SEC + "/web-tls", {"data": {"tls.key": None}}, MERGE),
    Req("PATCH", SEC + "/web-tls", {"metadata": {"annotations": {"cert-manager.io/issuer-kind": "ClusterIssuer"}},
                                    "stringData": {"ca.crt": "plain-ca"}}, MERGE),
    Req("GET", SEC, params={"fieldSelector": "type=kubernetes.io/tls"}),
    Req("GET", SEC, params={"labelSelector": "controller.cert-manager.io/fao=true", "fieldSelector": "type=Opaque"}),
    Req("DELETE", SEC + "/web-tls"),
    Req("GET", SEC + "/web-tls"),
]

CERTMANAGER_STATUS_CONDITIONS = [
    Req("POST", ECHO, echo("cert", "web.example.com"), save={"rv1": "metadata.resourceVersion"}),
    Req("PUT", ECHO + "/cert/status", {**echo("cert", "web.example.com"), "status": {"observedGeneration": 1}}),
    Req("PUT", ECHO + "/cert/status", {
        **echo("cert", "ignored.example.com", resourceVersion="{m:rv1}"),
        "status": {"observedGeneration": 1, "conditions": [
            {"type": "Ready", "status": "False", "reason": "Issuing", "message": "Issuing certificate",
             "lastTransitionTime": "2026-12-03T10:00:00Z", "observedGeneration": 1}]}}),
    Req("PATCH", ECHO + "/cert/status", {"status": {"conditions": [
        {"type": "Ready", "status": "True", "reason": "Ready", "message": "Certificate is up to date",
         "lastTransitionTime": "2026-12-03T10:01:00Z", "observedGeneration": 1}]}}, MERGE),
    Req("PATCH", ECHO + "/cert/status", [{"op": "replace", "path": "/status/conditions/0/reason",
                                          "value": "Renewed"}], JSON),
    Req("PATCH", ECHO + "/cert", {"spec": {"message": "www.example.com"}, "status": {"seen": "main-resource"}},
        MERGE),
    Req("PATCH", ECHO + "/cert/status", {"status": {"observedGeneration": "two"}}, MERGE),
    Req("PATCH", ECHO + "/cert/status", {"status": {"observedGeneration": 2, "seen": "www.example.com"}}, MERGE),
    Req("GET", ECHO + "/cert/status"),
    Req("PATCH", ECHO + "/missing/status", {"status": {"seen": "x"}}, MERGE),
]

# --- external-secrets: a Secret owned by its ExternalSecret (an Echo here) ----------------------------

_OWNER = {"apiVersion": "test.kubeloop.dev/v1", "kind": "Echo", "name": "es", "uid": "{m:uid}",
          "controller": True, "blockOwnerDeletion": True}

EXTERNAL_SECRETS_OWNED_SECRET = [
    Req("POST", ECHO, echo("es", "vault:/db"), save={"uid": "metadata.uid"}),
    Req("POST", SEC, {"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
                      "metadata": {"name": "db-creds", "ownerReferences": [_OWNER],
                                   "labels": {"reconcile.external-secrets.io/managed": "true"},
                                   "annotations": {"reconcile.external-secrets.io/data-hash": "abc123"}},
                      "data": {"password": "czNjcjN0"}}),
    Req("PATCH", SEC + "/db-creds", {"metadata": {"annotations": {"reconcile.external-secrets.io/data-hash": "def"}},
                                     "data": {"password": "bjN3"}}, MERGE),
    Req("POST", SEC, {"apiVersion": "v1", "kind": "Secret", "metadata": {
        "name": "two-controllers", "ownerReferences": [_OWNER, {**_OWNER, "name": "other", "uid": "{m:uid}"}]}}),
    Req("POST", SEC, {"apiVersion": "v1", "kind": "Secret", "metadata": {
        "name": "no-uid", "ownerReferences": [{"apiVersion": "test.kubeloop.dev/v1", "kind": "Echo", "name": "es"}]}}),
    Req("POST", SEC, {"apiVersion": "v1", "kind": "Secret", "metadata": {
        "name": "bad-key"}, "data": {"bad key!": "eA=="}}),
    Req("GET", SEC, params={"labelSelector": "reconcile.external-secrets.io/managed"}),
    Req("DELETE", ECHO + "/es", {"kind": "DeleteOptions", "apiVersion": "v1", "propagationPolicy": "Background"}),
    WaitGone(SEC + "/db-creds"),
    Req("GET", SEC + "/db-creds"),
]

# --- Reloader: a pod-template annotation bumps the Deployment -----------------------------------------

_DEP_PICK = ("metadata.name", "metadata.labels", "spec")

RELOADER_DEPLOYMENT_ANNOTATION = [
    Req("POST", APPS + "/deployments", deployment("api"), pick=_DEP_PICK),
    Req("PATCH", APPS + "/deployments/api", {"spec": {"template": {"metadata": {"annotations": {
        "reloader.stakater.com/last-reloaded-from": '{"type":"CONFIGMAP","name":"api-config","hash":"a1"}'}}}}},
        STRATEGIC, pick=("spec.template.metadata",)),
    Req("PATCH", APPS + "/deployments/api", {"spec": {"template": {"metadata": {"annotations": {
        "reloader.stakater.com/last-reloaded-from": '{"type":"CONFIGMAP","name":"api-config","hash":"a1"}'}}}}},
        STRATEGIC, pick=("spec.template.metadata.annotations",)),
    Req("PATCH", APPS + "/deployments/api", {"metadata": {"annotations": {"reloader.stakater.com/auto": "true"}}},
        MERGE, pick=("metadata.name", "spec.template.metadata.annotations")),
    Req("PATCH", APPS + "/deployments/api", {"spec": {"template": {"spec": {"containers": [
        {"name": "app", "env": [{"name": "STAKATER_API_CONFIG_CONFIGMAP", "value": "a1"}]}]}}}}, STRATEGIC,
        pick=("spec.template.spec.containers",)),
    Req("PATCH", APPS + "/deployments/api", {"spec": {"template": {"spec": {"containers": [
        {"name": "app", "env": [{"name": "STAKATER_API_CONFIG_CONFIGMAP", "value": "b2"}]}]}}}}, STRATEGIC,
        pick=("spec.template.spec.containers.*.env",)),
    Req("PATCH", APPS + "/deployments/api", [{"op": "remove", "path": "/spec/template/spec/containers/0"}], JSON),
    Req("PATCH", APPS + "/deployments/api", {"spec": {"template": {"metadata": {"labels": {"app": "other"}}}}},
        STRATEGIC),
    Req("GET", APPS + "/deployments/api", pick=_DEP_PICK),
]

# --- Flux: server-side apply with field managers, conflicts and force --------------------------------

FLUX_SSA_FORCE_CONFLICT = [
    Req("PATCH", CM + "/app-settings", cm("app-settings", {"a": "1", "b": "2"}, labels={
        "kustomize.toolkit.fluxcd.io/name": "apps"}), APPLY, params={"fieldManager": "kustomize-controller"}),
    Req("PATCH", CM + "/app-settings", cm("app-settings", {"a": "helm"}), APPLY,
        params={"fieldManager": "helm-controller"}),
    Req("PATCH", CM + "/app-settings", cm("app-settings", {"a": "helm"}), APPLY,
        params={"fieldManager": "helm-controller", "force": "true"}),
    Req("PATCH", CM + "/app-settings", cm("app-settings", {"b": "2"}, labels={
        "kustomize.toolkit.fluxcd.io/name": "apps"}), APPLY, params={"fieldManager": "kustomize-controller"}),
    Req("PATCH", CM + "/app-settings", cm("app-settings", {}), APPLY, params={"fieldManager": "kustomize-controller"}),
    Req("GET", CM + "/app-settings"),
    Req("PATCH", CM + "/app-settings", cm("app-settings", {"c": "3"}), APPLY),
    Req("PATCH", CM + "/app-settings", cm("app-settings", {"c": "3"}), APPLY,
        params={"fieldManager": "helm-controller", "force": "maybe"}),
    Req("PATCH", CM + "/app-settings", {"data": {"d": "4"}}, MERGE, params={"fieldManager": "kubectl-edit"}),
    Req("PATCH", CM + "/app-settings", cm("app-settings", {"a": "flux", "d": "4"}), APPLY,
        params={"fieldManager": "helm-controller"}),
]

# --- Argo CD: server-side dry runs before a sync ------------------------------------------------------

ARGOCD_SSA_DRY_RUN_SYNC = [
    Req("PATCH", APPS + "/deployments/guestbook", deployment("guestbook", 2), APPLY,
        params={"fieldManager": "argocd-controller", "dryRun": "All"}, pick=_DEP_PICK),
    Req("GET", APPS + "/deployments/guestbook"),
    Req("PATCH", APPS + "/deployments/guestbook", deployment("guestbook", 2), APPLY,
        params={"fieldManager": "argocd-controller"}, pick=_DEP_PICK),
    Req("PATCH", APPS + "/deployments/guestbook", deployment("guestbook", 5), APPLY,
        params={"fieldManager": "argocd-controller", "dryRun": "All"}, pick=("spec.replicas", "spec.template")),
    Req("GET", APPS + "/deployments/guestbook", pick=("spec.replicas", "spec.template.metadata")),
    Req("PATCH", APPS + "/deployments/guestbook", deployment("guestbook", 5), APPLY,
        params={"fieldManager": "argocd-controller", "dryRun": "Everything"}),
    Req("PATCH", APPS + "/deployments/guestbook", cm("guestbook"), APPLY, params={"fieldManager": "argocd-controller"}),
    Req("DELETE", APPS + "/deployments/guestbook", params={"dryRun": "All"}),
    Req("GET", APPS + "/deployments/guestbook", pick=("metadata.name", "metadata.deletionTimestamp")),
    Req("POST", CM, cm("argocd-dry"), params={"dryRun": "All"}),
    Req("GET", CM + "/argocd-dry"),
]

# --- the Prometheus operator: a StatefulSet and its rule-file ConfigMap -------------------------------

_STS = {"apiVersion": "apps/v1", "kind": "StatefulSet",
        "metadata": {"name": "prometheus-main", "labels": {"app.kubernetes.io/managed-by": "prometheus-operator"}},
        "spec": {"replicas": 2, "serviceName": "prometheus-operated",
                 "selector": {"matchLabels": {"app.kubernetes.io/name": "prometheus"}},
                 "podManagementPolicy": "Parallel",
                 "template": template({"app.kubernetes.io/name": "prometheus"}),
                 "volumeClaimTemplates": [{"metadata": {"name": "data"}, "spec": {
                     "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}]}}

PROMETHEUS_OPERATOR_STATEFULSET = [
    Req("POST", CM, cm("prometheus-main-rulefiles-0", {"ns-rules.yaml": "groups: []\n"},
                       labels={"managed-by": "prometheus-operator", "prometheus-name": "main"})),
    Req("POST", APPS + "/statefulsets", _STS, pick=("metadata.generation", "spec")),
    Req("PATCH", APPS + "/statefulsets/prometheus-main", {"spec": {"template": {"metadata": {"annotations": {
        "kubectl.kubernetes.io/restartedAt": "2026-12-03T10:00:00Z"}}}}}, STRATEGIC,
        pick=("metadata.generation", "spec.template.metadata")),
    Req("PATCH", APPS + "/statefulsets/prometheus-main", {"spec": {"serviceName": "other"}}, MERGE),
    Req("PATCH", APPS + "/statefulsets/prometheus-main", {"spec": {"volumeClaimTemplates": [
        {"metadata": {"name": "data"}, "spec": {"accessModes": ["ReadWriteOnce"],
                                                "resources": {"requests": {"storage": "5Gi"}}}}]}}, MERGE),
    Req("GET", APPS + "/statefulsets/prometheus-main/scale", pick=("kind", "apiVersion", "metadata.name", "spec")),
    Req("PATCH", APPS + "/statefulsets/prometheus-main/scale", {"spec": {"replicas": 3}}, MERGE,
        pick=("spec",)),
    Req("GET", APPS + "/statefulsets/prometheus-main", pick=("metadata.generation", "spec.replicas")),
    Req("PATCH", APPS + "/statefulsets/prometheus-main/scale", {"spec": {"replicas": -1}}, MERGE),
    Req("PATCH", CM + "/prometheus-main-rulefiles-0", {"data": {"ns-rules.yaml": "groups:\n- name: up\n"}}, MERGE),
    Req("GET", CM, params={"labelSelector": "managed-by=prometheus-operator,prometheus-name in (main,other)"}),
    Req("POST", APPS + "/statefulsets", {**_STS, "metadata": {"name": "mismatched"}, "spec": {
        **_STS["spec"], "template": template({"app.kubernetes.io/name": "alertmanager"})}}),
]

# --- client-go leader election on a Lease ------------------------------------------------------------

def lease(holder: str, transitions: int = 0, renew: str = "2026-12-03T10:00:00.000000Z", **meta: Any) -> dict:
    return {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": "op-leader", **meta},
            "spec": {"holderIdentity": holder, "leaseDurationSeconds": 15, "acquireTime": "2026-12-03T10:00:00.000000Z",
                     "renewTime": renew, "leaseTransitions": transitions}}


LEADER_ELECTION_LEASE = [
    Req("GET", LEASES + "/op-leader"),
    Req("POST", LEASES, lease("pod-a_1111"), save={"rv1": "metadata.resourceVersion"}),
    Req("PUT", LEASES + "/op-leader", lease("pod-a_1111", renew="2026-12-03T10:00:10.000000Z",
                                            resourceVersion="{m:rv1}"), save={"rv2": "metadata.resourceVersion"}),
    Req("PUT", LEASES + "/op-leader", lease("pod-b_2222", 1, resourceVersion="{m:rv1}")),
    Req("PUT", LEASES + "/op-leader", lease("pod-b_2222", 1, renew="2026-12-03T10:00:30.000000Z",
                                            resourceVersion="{m:rv2}"),
        save={"uid": "metadata.uid", "rv3": "metadata.resourceVersion"}),
    Req("PUT", LEASES + "/op-leader", {**lease("pod-b_2222", 1, resourceVersion="{m:rv3}"), "spec": {
        "holderIdentity": "pod-b_2222", "leaseDurationSeconds": 0, "leaseTransitions": -1}}),
    Req("POST", LEASES, {**lease("x"), "metadata": {"name": "bad-time"},
                         "spec": {"holderIdentity": "x", "renewTime": "yesterday"}}),
    Req("PATCH", LEASES + "/op-leader", {"spec": {"holderIdentity": None}}, MERGE),
    Req("GET", LEASES + "/op-leader"),
    Req("DELETE", LEASES + "/op-leader", {"preconditions": {"uid": "00000000-0000-0000-0000-000000000000"}}),
    Req("DELETE", LEASES + "/op-leader", {"preconditions": {"uid": "{m:uid}"}}),
    Req("GET", LEASES),
]

# --- client-go's event recorder (core v1) and events.k8s.io/v1 --------------------------------------

_CORE_EVENT = {"apiVersion": "v1", "kind": "Event",
               "metadata": {"name": "web.18a2b3c4d5e6f7a8"},
               "involvedObject": {"kind": "Deployment", "apiVersion": "apps/v1", "name": "web", "namespace": "{ns}"},
               "reason": "ScalingReplicaSet", "message": "Scaled up replica set web-1 to 1", "type": "Normal",
               "source": {"component": "my-operator"}, "firstTimestamp": "2026-12-03T10:00:00Z",
               "lastTimestamp": "2026-12-03T10:00:00Z", "count": 1, "reportingComponent": "my-operator",
               "reportingInstance": "my-operator-0"}

CORE_EVENT_RECORDER = [
    Req("POST", EV, _CORE_EVENT),
    Req("PATCH", EV + "/web.18a2b3c4d5e6f7a8", {"count": 2, "lastTimestamp": "2026-12-03T10:05:00Z",
                                                  "message": "Scaled up replica set web-1 to 2"}, STRATEGIC),
    Req("POST", EV, {**_CORE_EVENT, "metadata": {"name": "elsewhere.1"},
                     "involvedObject": {"kind": "Pod", "name": "p", "namespace": "kube-system"}}),
    Req("POST", EV, {**_CORE_EVENT, "metadata": {"name": "warn.1"}, "type": "Warning", "reason": "BackOff",
                     "involvedObject": {"kind": "Pod", "name": "web-1-abc", "namespace": "{ns}"}}),
    Req("GET", EV, params={"fieldSelector": "involvedObject.name=web,reason=ScalingReplicaSet"}),
    Req("GET", EV, params={"fieldSelector": "type=Warning"}),
    Req("GET", EV, params={"fieldSelector": "involvedObject.kind=Pod,source=my-operator"}),
    Req("GET", EV1 + "/web.18a2b3c4d5e6f7a8"),
    Req("GET", EV, params={"fieldSelector": "count=2"}),
]

_EVENT_V1 = {"apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": {"name": "echo-sync.1"},
             "eventTime": "2026-12-03T10:00:00.000000Z", "reportingController": "kubeloop.dev/echo-operator",
             "reportingInstance": "echo-operator-7d9f", "action": "Reconcile", "reason": "Synced",
             "regarding": {"apiVersion": "test.kubeloop.dev/v1", "kind": "Echo", "name": "e", "namespace": "{ns}"},
             "note": "echo e synced", "type": "Normal"}

EVENTS_V1_SERIES = [
    Req("POST", EV1, {"apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": {"name": "bare"},
                      "reason": "Synced", "type": "Info"}, brief=True),
    Req("POST", EV1, _EVENT_V1),
    Req("PATCH", EV1 + "/echo-sync.1", {"series": {"count": 2, "lastObservedTime": "2026-12-03T10:01:00.000000Z"}},
        MERGE),
    Req("PATCH", EV1 + "/echo-sync.1", {"reason": "Changed"}, MERGE, brief=True),
    Req("PATCH", EV1 + "/echo-sync.1", {"note": "x" * 1025}, MERGE, brief=True),
    Req("GET", EV + "/echo-sync.1"),
    Req("POST", EV1, {**_EVENT_V1, "metadata": {"name": "no-time"}, "eventTime": None}, brief=True),
    Req("GET", EV1, params={"fieldSelector": "reason=Synced"}),
    Req("DELETE", EV1 + "/echo-sync.1"),
]

# --- Kopf: finalizers and last-handled annotations on a custom resource ------------------------------

KOPF_FINALIZER_LIFECYCLE = [
    Req("POST", ECHO, echo("kopf")),
    Req("PATCH", ECHO + "/kopf", {"metadata": {"finalizers": ["kopf.zalando.org/KopfFinalizerMarker"], "annotations": {
        "kopf.zalando.org/last-handled-configuration": '{"spec":{"message":"hi"}}'}}}, MERGE),
    Req("DELETE", ECHO + "/kopf"),
    Req("GET", ECHO + "/kopf"),
    Req("PATCH", ECHO + "/kopf", {"metadata": {"annotations": {"kopf.zalando.org/deletion": "started"}}}, MERGE),
    Req("PATCH", ECHO + "/kopf", {"metadata": {"finalizers": ["kopf.zalando.org/KopfFinalizerMarker",
                                                              "example.com/late"]}}, MERGE, brief=True),
    Req("DELETE", ECHO + "/kopf"),
    Req("PATCH", ECHO + "/kopf", {"metadata": {"deletionTimestamp": None}}, MERGE),
    Req("PATCH", ECHO + "/kopf", [{"op": "test", "path": "/metadata/finalizers/0",
                                   "value": "kopf.zalando.org/KopfFinalizerMarker"},
                                  {"op": "remove", "path": "/metadata/finalizers/0"}], JSON),
    Req("GET", ECHO + "/kopf"),
]

# --- controller-runtime: status writer and generation -------------------------------------------------

CONTROLLER_RUNTIME_STATUS_WRITER = [
    Req("POST", ECHO, {**echo("cr", "one"), "status": {"seen": "on-create"}},
        save={"rv1": "metadata.resourceVersion"}),
    Req("PUT", ECHO + "/cr", {**echo("cr", "two", resourceVersion="{m:rv1}"), "status": {"seen": "via-main"}},
        save={"rv2": "metadata.resourceVersion"}),
    Req("PUT", ECHO + "/cr/status", {**echo("cr", "three", resourceVersion="{m:rv2}"),
                                     "status": {"seen": "two", "observedGeneration": 2}},
        save={"rv3": "metadata.resourceVersion"}),
    Req("PUT", ECHO + "/cr/status", {**echo("cr", "two", resourceVersion="{m:rv2}"), "status": {"seen": "stale"}}),
    Req("PUT", ECHO + "/cr", {**echo("cr", "two", resourceVersion="{m:rv3}"), "metadata": {
        "name": "cr", "resourceVersion": "{m:rv3}", "labels": {"tier": "x"}}}),
    Req("PUT", ECHO + "/cr", {**echo("other", "two", resourceVersion="{m:rv3}")}),
    Req("PUT", ECHO + "/cr", {**echo("cr", "two"), "spec": {"copies": -1}}),
    Req("PUT", ECHO + "/cr", {"apiVersion": "test.kubeloop.dev/v1", "kind": "Echo",
                              "metadata": {"name": "cr", "resourceVersion": "{m:rv3}"}, "spec": {"copies": 2}}),
    Req("GET", ECHO + "/cr"),
]

# --- controller-runtime's CreateOrPatch on a ConfigMap ------------------------------------------------

CREATE_OR_PATCH_CONFIGMAP = [
    Req("GET", CM + "/settings"),
    Req("PATCH", CM + "/settings", {"data": {"k": "v"}}, MERGE),
    Req("POST", CM, cm("settings", {"k": "v"}, labels={"app.kubernetes.io/managed-by": "kubeloop"})),
    Req("POST", CM, cm("settings", {"k": "other"})),
    Req("PATCH", CM + "/settings", {"data": {"k": "v2", "extra": "1"}}, MERGE),
    Req("PATCH", CM + "/settings", {"data": {"k": "v2"}}, MERGE),
    Req("PATCH", CM + "/settings", [{"op": "test", "path": "/data/k", "value": "nope"},
                                    {"op": "replace", "path": "/data/k", "value": "v3"}], JSON),
    Req("PATCH", CM + "/settings", [{"op": "add", "path": "/metadata/annotations", "value": {"a": "b"}},
                                    {"op": "remove", "path": "/data/extra"}], JSON),
    Req("PATCH", CM + "/settings", [{"op": "remove", "path": "/data/absent"}], JSON),
    Req("PATCH", CM + "/settings", {"data": {"k": 3}}, MERGE, brief=True),
    Req("GET", CM + "/settings"),
]

# --- immutable ConfigMaps and Secrets ----------------------------------------------------------------

IMMUTABLE_CONFIGMAP_AND_SECRET = [
    Req("POST", CM, {**cm("frozen", {"k": "v"}), "immutable": True}),
    Req("PATCH", CM + "/frozen", {"data": {"k": "changed"}}, MERGE),
    Req("PATCH", CM + "/frozen", {"immutable": False}, MERGE),
    Req("PATCH", CM + "/frozen", {"metadata": {"labels": {"allowed": "yes"}}}, MERGE),
    Req("POST", SEC, {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "frozen"}, "immutable": True,
                      "stringData": {"token": "abc"}}),
    Req("PATCH", SEC + "/frozen", {"stringData": {"token": "def"}}, MERGE),
    Req("PATCH", SEC + "/frozen", {"data": {"token": "YWJj"}}, MERGE),
    Req("GET", SEC + "/frozen"),
    Req("PATCH", CM + "/frozen", {"binaryData": {"b": "AAE="}}, MERGE),
    Req("DELETE", CM + "/frozen"),
    Req("POST", CM, {**cm("thawed", {"k": "v"}), "immutable": False}),
    Req("PATCH", CM + "/thawed", {"data": {"k": "w"}, "immutable": True}, MERGE),
    Req("PATCH", CM + "/thawed", {"data": {"k": "x"}}, MERGE),
]

# --- a new user's metadata mistakes ------------------------------------------------------------------

INVALID_METADATA_MISTAKES = [
    Req("POST", CM, cm("MyConfig")),
    Req("POST", CM, cm("a" * 254)),
    Req("POST", CM, cm("ok-labels", labels={"app": "x" * 64})),
    Req("POST", CM, cm("bad-label-key", labels={"-app": "x", "example.com/": "y"})),
    Req("POST", CM, cm("bad-annotation", annotations={"bad key": "v"})),
    Req("POST", CM, cm("bad-value", labels={"version": "1.0 beta"})),
    Req("POST", CM, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {}, "data": {}}),
    Req("POST", CM, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "wrong-ns", "namespace": "other"}}),
    Req("POST", CM, cm("bad-data-key", {"no/slash": "x"})),
    Req("POST", CM, {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "kind-mismatch"}}),
    Req("POST", CM, {**cm("gen"), "metadata": {"generateName": "Bad_"}}, brief=True),
    Req("POST", CM, {**cm("gen"), "metadata": {"generateName": "cfg-"}}),
    Req("POST", CM, "not an object"),
]

# --- pod quantities and resources --------------------------------------------------------------------

POD_RESOURCE_QUANTITY_MISTAKES = [
    Req("POST", PODS, pod("q1", containers=[container(resources={"limits": {"cpu": "1.5.0"}})])),
    Req("POST", PODS, pod("q2", containers=[container(resources={"requests": {"memory": "2Gi"},
                                                                  "limits": {"memory": "1Gi"}})]), brief=True),
    Req("POST", PODS, pod("q3", containers=[container(resources={"requests": {"cpu": "-1"}})]), brief=True),
    Req("POST", PODS, pod("q4", containers=[container(resources={"limits": {"cpu": "500m", "memory": "128Mi"}})]),
        pick=POD_PICK),
    Req("POST", PODS, pod("q5", containers=[container(resources={"requests": {"cpu": "250m", "memory": "64Mi"}})]),
        pick=POD_PICK),
    Req("POST", PODS, pod("q6", containers=[container(resources={"requests": {"gpu": "1"}})]), brief=True),
    Req("POST", PODS, pod("q7", containers=[container(resources={"requests": {"cpu": 2, "memory": "1e3"}})]),
        pick=("spec.containers.*.resources",)),
    Req("GET", PODS, params={"fieldSelector": "status.phase=Pending"}, pick=("items.*.metadata.name",)),
    Req("POST", PODS, pod("q8", containers=[container(name="app"), container(name="app")]), brief=True),
    Req("POST", PODS, pod("q9", containers=[])),
]

# --- pods bound without a scheduler ------------------------------------------------------------------

POD_BINDING_UNSCHEDULED = [
    Req("POST", PODS, {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "waiting"},
                       "spec": {"schedulerName": "nobody-serves-this", "automountServiceAccountToken": False,
                                "containers": [container()]}}, pick=("spec.nodeName", "spec.schedulerName")),
    Req("POST", PODS + "/waiting/binding", {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "waiting"},
                                            "target": {"apiVersion": "v1", "kind": "Node", "name": "diff-node"}}),
    Req("GET", PODS + "/waiting", pick=("spec.nodeName", "spec.schedulerName")),
    Req("POST", PODS + "/waiting/binding", {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "waiting"},
                                            "target": {"apiVersion": "v1", "kind": "Node", "name": "diff-node"}}),
    Req("POST", PODS + "/absent/binding", {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "absent"},
                                           "target": {"apiVersion": "v1", "kind": "Node", "name": "diff-node"}}),
    Req("POST", PODS + "/waiting/binding", {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "other"},
                                            "target": {"apiVersion": "v1", "kind": "Node", "name": "diff-node"}}),
    Req("GET", PODS, params={"fieldSelector": "spec.nodeName=diff-node"}, pick=("items.*.metadata.name",)),
    Req("GET", PODS, params={"fieldSelector": "spec.schedulerName=nobody-serves-this"},
        pick=("items.*.metadata.name",)),
    Req("PATCH", PODS + "/waiting", {"spec": {"nodeName": "another-node"}}, MERGE, brief=True),
]

# --- pod update mistakes ------------------------------------------------------------------------------

POD_UPDATE_MISTAKES = [
    Req("POST", PODS, pod("web", containers=[container(ports=[{"containerPort": 8080, "name": "http"}])]),
        pick=POD_PICK),
    Req("PATCH", PODS + "/web", {"spec": {"containers": [{"name": "app", "image": "registry.local/app:1.1"}]}},
        STRATEGIC, pick=("spec.containers.*.image", "spec.containers.*.ports")),
    Req("PATCH", PODS + "/web", {"spec": {"containers": [{"name": "app", "ports": [{"containerPort": 9090}]}]}},
        STRATEGIC, brief=True),
    Req("PATCH", PODS + "/web", {"spec": {"restartPolicy": "Never"}}, MERGE, brief=True),
    Req("PATCH", PODS + "/web", {"spec": {"activeDeadlineSeconds": 600}}, MERGE, pick=("spec.activeDeadlineSeconds",)),
    Req("PATCH", PODS + "/web", {"spec": {"activeDeadlineSeconds": 0}}, MERGE, brief=True),
    Req("PATCH", PODS + "/web", {"metadata": {"labels": {"version": "v2"}}}, MERGE, pick=("metadata.labels",)),
    Req("PATCH", PODS + "/web", {"spec": {"tolerations": [{"key": "extra", "operator": "Exists",
                                                          "effect": "NoSchedule"}]}}, STRATEGIC,
        pick=("spec.tolerations",)),
    Req("POST", PODS, pod("web2", restartPolicy="Sometimes"), brief=True),
    Req("POST", PODS, pod("web3", containers=[container(image="")]), brief=True),
    Req("DELETE", PODS + "/web", {"gracePeriodSeconds": 0}, pick=("metadata.name",)),
    WaitGone(PODS + "/web"),
]

# --- Services --------------------------------------------------------------------------------------

_SVC_PICK = ("metadata.name", "spec.type", "spec.ports", "spec.selector", "spec.sessionAffinity",
             "spec.ipFamilyPolicy", "spec.internalTrafficPolicy", "spec.clusterIP")

SERVICE_MISTAKES = [
    Req("POST", SVC, {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "headless"},
                      "spec": {"clusterIP": "None", "selector": {"app": "db"},
                               "ports": [{"name": "pg", "port": 5432}]}}, pick=_SVC_PICK),
    Req("POST", SVC, {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "noports"},
                      "spec": {"selector": {"app": "db"}}}),
    Req("POST", SVC, {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "bigport"},
                      "spec": {"ports": [{"port": 70000}]}}),
    Req("POST", SVC, {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "dupnames"},
                      "spec": {"ports": [{"name": "a", "port": 80}, {"name": "a", "port": 81}]}}),
    Req("POST", SVC, {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "unnamed"},
                      "spec": {"ports": [{"port": 80}, {"port": 81}]}}),
    Req("POST", SVC, {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "ext"},
                      "spec": {"type": "ExternalName", "externalName": "db.example.com"}}, pick=_SVC_PICK),
    Req("PATCH", SVC + "/headless", {"spec": {"clusterIP": "10.0.0.50"}}, MERGE),
    Req("PATCH", SVC + "/headless", {"spec": {"ports": [{"name": "pg", "port": 5432, "targetPort": "postgres"}]}},
        MERGE, pick=_SVC_PICK),
    Req("POST", SVC, {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "badtype"},
                      "spec": {"type": "Internal", "ports": [{"port": 80}]}}),
    Req("POST", SVC, {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "proto"},
                      "spec": {"ports": [{"port": 80, "protocol": "HTTP"}]}}),
]

# --- ServiceAccounts -------------------------------------------------------------------------------

SERVICEACCOUNT_PULL_SECRETS = [
    Req("POST", SA, {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {
        "name": "operator", "labels": {"app.kubernetes.io/name": "operator"}}}),
    Req("PATCH", SA + "/operator", {"imagePullSecrets": [{"name": "regcred"}]}, STRATEGIC),
    Req("PATCH", SA + "/operator", {"imagePullSecrets": [{"name": "regcred2"}]}, STRATEGIC),
    Req("PATCH", SA + "/operator", {"automountServiceAccountToken": False}, MERGE),
    Req("GET", SA, params={"labelSelector": "app.kubernetes.io/name=operator"}),
    Req("POST", SA, {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "Operator"}}),
    Req("GET", SA + "/default", pick=("metadata.name", "secrets", "imagePullSecrets")),
    Req("DELETE", SA + "/operator", pick=("metadata.name", "imagePullSecrets")),
    Req("GET", SA + "/operator"),
]


# --- Secret types a new user gets wrong ----------------------------------------------------------------

def secret(name: str, type_: str, **data: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": name}, "type": type_, "stringData": data}


SECRET_TYPE_MISTAKES = [
    Req("POST", SEC, secret("regcred", "kubernetes.io/dockerconfigjson",
                            **{".dockerconfigjson": '{"auths":{"registry.local":{"auth":"dTpw"}}}'})),
    Req("POST", SEC, secret("badcred", "kubernetes.io/dockerconfigjson", **{".dockerconfigjson": "{not json"})),
    Req("POST", SEC, secret("nocred", "kubernetes.io/dockerconfigjson", config="{}")),
    Req("POST", SEC, secret("basic", "kubernetes.io/basic-auth", username="admin")),
    Req("POST", SEC, secret("basic-empty", "kubernetes.io/basic-auth")),
    Req("POST", SEC, secret("ssh", "kubernetes.io/ssh-auth", username="git")),
    Req("POST", SEC, secret("custom", "example.com/token", token="t")),
    Req("POST", SEC, secret("bad-type", "Bad Type!", token="t")),
    Req("POST", SEC, {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "notb64"}, "data": {"k": "%%%"}}),
    Req("PATCH", SEC + "/regcred", {"stringData": {".dockerconfigjson": "[]"}}, MERGE),
    Req("GET", SEC, params={"fieldSelector": "type!=Opaque"}, pick=("items.*.metadata.name", "items.*.type")),
]

# --- Jobs and CronJobs ----------------------------------------------------------------------------

def job(name: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name},
            "spec": {"suspend": True, "backoffLimit": 2,
                     "template": {"spec": {"restartPolicy": "Never", "containers": [container("work")]}}, **spec}}


_JOB_PICK = ("metadata.name", "spec.suspend", "spec.backoffLimit", "spec.completions", "spec.parallelism",
             "spec.completionMode", "spec.podReplacementPolicy", "spec.manualSelector", "spec.template.spec")

JOB_SUSPENDED_IMMUTABLE_TEMPLATE = [
    Req("POST", BATCH + "/jobs", job("migrate"), pick=_JOB_PICK),
    Req("GET", BATCH + "/jobs/migrate", pick=("metadata.labels", "spec.selector", "spec.template.metadata")),
    Req("PATCH", BATCH + "/jobs/migrate", {"spec": {"template": {"spec": {"containers": [
        {"name": "work", "image": "registry.local/app:2.0"}]}}}}, STRATEGIC, brief=True),
    Req("PATCH", BATCH + "/jobs/migrate", {"spec": {"parallelism": 3}}, MERGE, pick=("spec.parallelism",)),
    Req("PATCH", BATCH + "/jobs/migrate", {"spec": {"completions": 5}}, MERGE, brief=True),
    Req("PATCH", BATCH + "/jobs/migrate", {"spec": {"backoffLimit": -1}}, MERGE, brief=True),
    Req("POST", BATCH + "/jobs", {**job("always"), "spec": {"template": {"spec": {
        "restartPolicy": "Always", "containers": [container("work")]}}}}, brief=True),
    Req("POST", BATCH + "/jobs", job("indexed", completionMode="Indexed"), pick=_JOB_PICK),
    Req("POST", BATCH + "/jobs", job("indexed-ok", completionMode="Indexed", completions=3, parallelism=1),
        pick=_JOB_PICK),
    Req("POST", BATCH + "/jobs", job("ttl", ttlSecondsAfterFinished=-5), brief=True),
    Req("DELETE", BATCH + "/jobs/migrate", {"propagationPolicy": "Background"}, pick=("kind", "status", "details")),
    WaitGone(BATCH + "/jobs/migrate"),
]

def cronjob(name: str, schedule: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": name},
            "spec": {"schedule": schedule, "suspend": True, "jobTemplate": {"spec": {"template": {"spec": {
                "restartPolicy": "OnFailure", "containers": [container("backup")]}}}}, **spec}}


_CJ_PICK = ("metadata.name", "spec.schedule", "spec.suspend", "spec.concurrencyPolicy", "spec.timeZone",
            "spec.successfulJobsHistoryLimit", "spec.failedJobsHistoryLimit", "spec.jobTemplate.spec.template.spec")

CRONJOB_SCHEDULE_VALIDATION = [
    Req("POST", BATCH + "/cronjobs", cronjob("nightly", "0 2 * * *"), pick=_CJ_PICK),
    Req("POST", BATCH + "/cronjobs", cronjob("bad-minute", "61 * * * *"), brief=True),
    Req("POST", BATCH + "/cronjobs", cronjob("hourly", "@hourly", timeZone="Europe/Paris"), pick=_CJ_PICK),
    Req("POST", BATCH + "/cronjobs", cronjob("mars", "@daily", timeZone="Mars/Olympus_Mons"), brief=True),
    Req("POST", BATCH + "/cronjobs", cronjob("tz-in-schedule", "TZ=UTC 0 * * * *"), brief=True),
    Req("POST", BATCH + "/cronjobs", cronjob("policy", "*/5 * * * *", concurrencyPolicy="Sometimes"), brief=True),
    Req("PATCH", BATCH + "/cronjobs/nightly", {"spec": {"schedule": "30 3 * * 1-5", "concurrencyPolicy": "Forbid"}},
        MERGE, pick=_CJ_PICK),
    Req("PATCH", BATCH + "/cronjobs/nightly", {"spec": {"schedule": ""}}, MERGE, brief=True),
    Req("PATCH", BATCH + "/cronjobs/nightly", {"spec": {"successfulJobsHistoryLimit": -1}}, MERGE, brief=True),
    Req("GET", BATCH + "/cronjobs", pick=("items.*.metadata.name", "items.*.spec.schedule")),
]

# --- HorizontalPodAutoscaler autoscaling/v2 ------------------------------------------------------

def hpa(name: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": {"name": name},
            "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                     "minReplicas": 2, "maxReplicas": 10, **spec}}


_CPU = {"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 80}}}

HPA_V2_VALIDATION = [
    Req("POST", HPA, hpa("web", metrics=[_CPU]), pick=("metadata.name", "spec")),
    Req("POST", HPA, hpa("web-behavior", metrics=[_CPU], behavior={"scaleDown": {
        "stabilizationWindowSeconds": 120, "policies": [{"type": "Pods", "value": 1, "periodSeconds": 60}]}}),
        pick=("spec",)),
    Req("POST", HPA, hpa("zero", minReplicas=0), brief=True),
    Req("POST", HPA, hpa("inverted", minReplicas=5, maxReplicas=2), brief=True),
    Req("POST", HPA, hpa("no-target-kind", scaleTargetRef={"name": "web"}), brief=True),
    Req("POST", HPA, hpa("bad-metric", metrics=[{"type": "Resource", "resource": {
        "name": "cpu", "target": {"type": "Utilization"}}}]), brief=True),
    Req("POST", HPA, hpa("bad-type", metrics=[{"type": "Memory"}]), brief=True),
    Req("PATCH", HPA + "/web", {"spec": {"maxReplicas": 20, "metrics": [
        _CPU, {"type": "Resource", "resource": {"name": "memory", "target": {
            "type": "AverageValue", "averageValue": "500Mi"}}}]}}, MERGE, pick=("spec",)),
    Req("PATCH", HPA + "/web", {"spec": {"behavior": {"scaleUp": {"selectPolicy": "Sideways"}}}}, MERGE, brief=True),
    Req("GET", "/apis/autoscaling/v1/namespaces/{ns}/horizontalpodautoscalers/web",
        pick=("apiVersion", "spec")),
    Req("DELETE", HPA + "/web", pick=("kind", "status", "details")),
]

# --- DaemonSets ---------------------------------------------------------------------------------

def daemonset(name: str, **spec: Any) -> dict[str, Any]:
    labels = {"app": name}
    return {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": name},
            "spec": {"selector": {"matchLabels": labels}, "template": template(labels), **spec}}


DAEMONSET_UPDATE_STRATEGY = [
    Req("POST", APPS + "/daemonsets", daemonset("node-agent"), pick=("metadata.name", "spec")),
    Req("POST", APPS + "/daemonsets", daemonset("zero-zero", updateStrategy={
        "type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 0, "maxSurge": 0}}), brief=True),
    Req("POST", APPS + "/daemonsets", daemonset("ondelete", updateStrategy={"type": "OnDelete"}),
        pick=("spec.updateStrategy",)),
    Req("POST", APPS + "/daemonsets", daemonset("never", updateStrategy={"type": "Never"}), brief=True),
    Req("PATCH", APPS + "/daemonsets/node-agent", {"spec": {"selector": {"matchLabels": {"app": "x"}}}}, MERGE,
        brief=True),
    Req("PATCH", APPS + "/daemonsets/node-agent", {"spec": {"updateStrategy": {"rollingUpdate": {
        "maxUnavailable": "50%"}}}}, MERGE, pick=("spec.updateStrategy",)),
    Req("PATCH", APPS + "/daemonsets/node-agent", {"spec": {"template": {"spec": {"tolerations": [
        {"key": "dedicated", "operator": "Equal", "value": "agents", "effect": "NoSchedule"}]}}}}, STRATEGIC,
        pick=("spec.template.spec.tolerations",)),
    Req("PATCH", APPS + "/daemonsets/node-agent", {"spec": {"template": {"spec": {"restartPolicy": "OnFailure"}}}},
        MERGE, brief=True),
    Req("GET", APPS + "/daemonsets", pick=("items.*.metadata.name",)),
]

# --- label and field selectors ---------------------------------------------------------------------

SELECTOR_LISTING = [
    Req("POST", CM, cm("prod-web", labels={"env": "prod", "tier": "web"})),
    Req("POST", CM, cm("prod-db", labels={"env": "prod", "tier": "db"})),
    Req("POST", CM, cm("staging-web", labels={"env": "staging", "tier": "web"})),
    Req("POST", CM, cm("unlabelled")),
    Req("GET", CM, params={"labelSelector": "env in (prod,staging),tier=web"}, pick=("items.*.metadata.name",)),
    Req("GET", CM, params={"labelSelector": "env notin (prod)"}, pick=("items.*.metadata.name",)),
    Req("GET", CM, params={"labelSelector": "!env"}, pick=("items.*.metadata.name",)),
    Req("GET", CM, params={"labelSelector": "env==prod,tier!=db"}, pick=("items.*.metadata.name",)),
    Req("GET", CM, params={"labelSelector": "env in prod"}),
    Req("GET", CM, params={"labelSelector": "tier=web", "fieldSelector": "metadata.name!=prod-web"},
        pick=("items.*.metadata.name",)),
    Req("GET", CM, params={"fieldSelector": "metadata.namespace={ns},metadata.name=unlabelled"},
        pick=("items.*.metadata.name",)),
    Req("GET", CM, params={"fieldSelector": "data.k=v"}),
    Req("GET", "/api/v1/configmaps", params={"labelSelector": "env=staging",
                                             "fieldSelector": "metadata.namespace={ns}"},
        pick=("kind", "items.*.metadata.name")),
    Req("GET", CM, params={"labelSelector": "Bad Key=x"}),
]

# --- paging -----------------------------------------------------------------------------------

PAGING_WITH_CONTINUE = [
    *[Req("POST", CM, cm(f"page-{i}", {"i": str(i)}, labels={"paged": "yes"})) for i in range(5)],
    Req("GET", CM, params={"labelSelector": "paged=yes", "limit": "2"}, save={"c1": "metadata.continue"}),
    Req("GET", CM, params={"labelSelector": "paged=yes", "limit": "2", "continue": "{m:c1}"},
        save={"c2": "metadata.continue"}),
    Req("GET", CM, params={"labelSelector": "paged=yes", "limit": "2", "continue": "{m:c2}"}),
    Req("GET", CM, params={"labelSelector": "paged=yes", "limit": "0"}, pick=("items.*.metadata.name",
                                                                              "metadata.continue")),
    Req("GET", CM, params={"labelSelector": "paged=yes", "limit": "10"}, pick=("items.*.metadata.name",
                                                                               "metadata.remainingItemCount")),
    Req("GET", CM, params={"limit": "2", "continue": "not-a-token"}),
    Req("GET", CM, params={"labelSelector": "paged=yes", "limit": "-1"}, pick=("items.*.metadata.name",)),
]

# --- watches from a mark ---------------------------------------------------------------------------

WATCH_CONFIGMAP_LIFECYCLE = [
    Mark("start", CM),
    Req("POST", CM, cm("watched", {"v": "1"})),
    Req("PATCH", CM + "/watched", {"data": {"v": "2"}}, MERGE),
    Req("POST", CM, cm("other", {"v": "x"})),
    Req("DELETE", CM + "/watched"),
    Watch(CM, since="start", to_last_write=True),
    Watch(CM, since="start", params={"fieldSelector": "metadata.name=watched"}),
    Watch(CM + "/watched", since="start"),
]

WATCH_CR_STATUS_UPDATES = [
    Req("POST", ECHO, echo("w", "first", labels={"team": "a"})),
    Mark("after_create", ECHO),
    Req("PATCH", ECHO + "/w/status", {"status": {"seen": "first", "observedGeneration": 1}}, MERGE),
    Req("PATCH", ECHO + "/w", {"metadata": {"labels": {"team": "b"}}}, MERGE),
    Req("PATCH", ECHO + "/w", {"spec": {"message": "second"}}, MERGE),
    Watch(ECHO, since="after_create", params={"labelSelector": "team=a"}),
    Watch(ECHO, since="after_create", to_last_write=True),
    Watch(ECHO, params={"resourceVersion": "1"}),
]

WATCH_LEASE_RENEWALS = [
    Req("POST", LEASES, lease("ctrl-0"), save={"rv": "metadata.resourceVersion"}),
    Mark("held", LEASES),
    Req("PUT", LEASES + "/op-leader", lease("ctrl-0", renew="2026-12-03T10:00:05.000000Z", resourceVersion="{m:rv}"),
        save={"rv": "metadata.resourceVersion"}),
    Req("PUT", LEASES + "/op-leader", lease("ctrl-0", renew="2026-12-03T10:00:10.000000Z", resourceVersion="{m:rv}"),
        save={"rv": "metadata.resourceVersion"}),
    Req("PATCH", LEASES + "/op-leader", {"spec": {"holderIdentity": "ctrl-1", "leaseTransitions": 1}}, MERGE),
    Watch(LEASES, since="held", to_last_write=True),
    Req("DELETE", LEASES + "/op-leader", {"preconditions": {"resourceVersion": "{m:rv}"}}),
    Req("GET", LEASES + "/op-leader", pick=("spec",)),
]

# --- delete preconditions ----------------------------------------------------------------------------

DELETE_PRECONDITIONS = [
    Req("POST", CM, cm("guarded", {"k": "v"}), save={"rv1": "metadata.resourceVersion", "uid": "metadata.uid"}),
    Req("PATCH", CM + "/guarded", {"data": {"k": "v2"}}, MERGE, save={"rv2": "metadata.resourceVersion"}),
    Req("DELETE", CM + "/guarded", {"preconditions": {"resourceVersion": "{m:rv1}"}}),
    # a body's DeleteOptions win over the query: this dryRun is ignored and the object goes
    Req("DELETE", CM + "/guarded", {"preconditions": {"uid": "{m:uid}", "resourceVersion": "{m:rv2}"}},
        params={"dryRun": "All"}),
    Req("GET", CM + "/guarded"),
    Req("POST", CM, cm("guarded", {"k": "new"}), save={"uid2": "metadata.uid"}),
    Req("DELETE", CM + "/guarded", {"kind": "DeleteOptions", "apiVersion": "v1", "propagationPolicy": "Sideways"}),
    Req("DELETE", CM + "/guarded", {"preconditions": {"uid": "{m:uid}"}}),
    Req("DELETE", CM + "/guarded", {"dryRun": ["All"], "preconditions": {"uid": "{m:uid2}"}}),
    Req("GET", CM + "/guarded", pick=("metadata.name", "data")),
    Req("DELETE", CM + "/guarded", {"dryRun": ["Sometimes"]}),
    Req("DELETE", CM + "/guarded", {"preconditions": {"uid": "{m:uid2}"}}),
    Req("DELETE", CM + "/guarded"),
]

# --- garbage collection with propagation policies -------------------------------------------------

def _ref(name: str, mark: str, **extra: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "name": name, "uid": "{m:" + mark + "}", **extra}


GC_ORPHAN_AND_FOREGROUND = [
    Req("POST", CM, cm("parent"), save={"p": "metadata.uid"}),
    Req("POST", CM, cm("child-a", ownerReferences=[_ref("parent", "p", blockOwnerDeletion=True)])),
    Req("POST", CM, cm("child-b", ownerReferences=[_ref("parent", "p")])),
    Req("DELETE", CM + "/parent", {"propagationPolicy": "Orphan"}),
    WaitGone(CM + "/parent"),
    WaitFor(CM + "/child-a", "metadata.ownerReferences", None),
    Req("GET", CM + "/child-a", pick=("metadata.name", "metadata.ownerReferences", "data")),
    Req("POST", CM, cm("parent2"), save={"p2": "metadata.uid"}),
    Req("POST", CM, cm("child-c", ownerReferences=[_ref("parent2", "p2", blockOwnerDeletion=True)])),
    Req("DELETE", CM + "/parent2", {"propagationPolicy": "Foreground"}),
    WaitGone(CM + "/child-c"),
    WaitGone(CM + "/parent2"),
    Req("GET", CM, params={"fieldSelector": "metadata.name!=kube-root-ca.crt"}, pick=("items.*.metadata.name",)),
]

GC_DANGLING_OWNER_AND_MULTIPLE_OWNERS = [
    Req("POST", ECHO, echo("owner-1"), save={"o1": "metadata.uid"}),
    Req("POST", ECHO, echo("owner-2"), save={"o2": "metadata.uid"}),
    Req("POST", CM, cm("shared", ownerReferences=[
        {"apiVersion": "test.kubeloop.dev/v1", "kind": "Echo", "name": "owner-1", "uid": "{m:o1}"},
        {"apiVersion": "test.kubeloop.dev/v1", "kind": "Echo", "name": "owner-2", "uid": "{m:o2}"}])),
    Req("POST", CM, cm("dangling", ownerReferences=[
        {"apiVersion": "test.kubeloop.dev/v1", "kind": "Echo", "name": "ghost",
         "uid": "11111111-2222-3333-4444-555555555555"}])),
    Req("DELETE", ECHO + "/owner-1"),
    WaitFor(CM + "/shared", "metadata.ownerReferences.1", None),
    Req("GET", CM + "/shared", pick=("metadata.ownerReferences",)),
    WaitGone(CM + "/dangling"),
    Req("DELETE", ECHO + "/owner-2", {"propagationPolicy": "Background"}),
    WaitGone(CM + "/shared"),
    Req("GET", ECHO),
]

# --- deletecollection ------------------------------------------------------------------------------

DELETECOLLECTION_WITH_SELECTORS = [
    *[Req("POST", CM, cm(f"tmp-{i}", labels={"batch": "1" if i < 3 else "2"})) for i in range(5)],
    Req("DELETE", CM, params={"labelSelector": "batch=1", "dryRun": "All"}, pick=("kind", "items.*.metadata.name")),
    Req("GET", CM, params={"labelSelector": "batch"}, pick=("items.*.metadata.name",)),
    Req("DELETE", CM, params={"labelSelector": "batch=1"}, pick=("kind", "items.*.metadata.name")),
    Req("GET", CM, params={"labelSelector": "batch"}, pick=("items.*.metadata.name",)),
    Req("DELETE", CM, params={"labelSelector": "batch=2", "fieldSelector": "metadata.name=tmp-4"},
        pick=("items.*.metadata.name",)),
    Req("DELETE", ECHO, params={"labelSelector": "nothing=here"}),
    Req("DELETE", CM, params={"labelSelector": "batch in (("}),
    Req("GET", CM, params={"labelSelector": "batch"}, pick=("items.*.metadata.name",)),
]

# --- namespace deletion ---------------------------------------------------------------------------

NAMESPACE_DELETION = [
    Req("POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace",
                                       "metadata": {"name": "{ns}-child", "labels": {"team": "blind4"}}}),
    Req("POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "{ns}_Bad"}}),
    Req("POST", "/api/v1/namespaces/{ns}-child/configmaps", cm("inside", {"k": "v"})),
    Req("GET", "/api/v1/namespaces/{ns}-child", pick=("metadata.labels", "spec", "status")),
    Req("DELETE", "/api/v1/namespaces/{ns}-child", pick=("metadata.name", "spec", "status")),
    WaitGone("/api/v1/namespaces/{ns}-child"),
    Req("GET", "/api/v1/namespaces/{ns}-child/configmaps/inside"),
    Req("POST", "/api/v1/namespaces/{ns}-child/configmaps", cm("late")),
    Req("POST", "/api/v1/namespaces/{ns}-never/configmaps", cm("orphan")),
    Req("PATCH", "/api/v1/namespaces/{ns}", {"metadata": {"labels": {"kubernetes.io/metadata.name": "other"}}},
        MERGE, pick=("metadata.labels",)),
]


# --- CRDs of our own: versions, schema defaults and pruning, CEL rules, scale -----------------------------

GROUP = "{ns}.blind4.dev"


def crd(plural: str, kind: str, versions: list[dict[str, Any]]) -> dict[str, Any]:
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": plural + "." + GROUP},
            "spec": {"group": GROUP, "scope": "Namespaced", "versions": versions,
                     "names": {"plural": plural, "singular": kind.lower(), "kind": kind, "listKind": kind + "List"}}}


def version(name: str, spec: dict[str, Any], storage: bool = True, **extra: Any) -> dict[str, Any]:
    return {"name": name, "served": True, "storage": storage, "schema": {"openAPIV3Schema": {
        "type": "object", "properties": {"spec": spec, "status": {
            "type": "object", "x-kubernetes-preserve-unknown-fields": True}}}}, **extra}


def installed(plural: str, kind: str, ver: str = "v1") -> list[Step]:
    return [WaitFor(CRDS + "/" + plural + "." + GROUP, "status.acceptedNames.kind", kind),
            WaitFor("/apis/" + GROUP + "/" + ver + "/namespaces/{ns}/" + plural, "kind", kind + "List")]


def cr(ver: str, plural: str) -> str:
    return "/apis/" + GROUP + "/" + ver + "/namespaces/{ns}/" + plural


_CRD_PICK = ("metadata.name", "spec")
_STR, _INT = {"type": "string"}, {"type": "integer"}

CRD_MULTIVERSION_CONVERSION_NONE = [
    Req("POST", CRDS, crd("widgets", "Widget", [
        version("v1beta1", {"type": "object", "properties": {"size": _STR, "legacy": _STR}}, storage=False),
        version("v1", {"type": "object", "properties": {"size": _STR, "replicas": _INT}})]), pick=_CRD_PICK),
    *installed("widgets", "Widget"),
    Req("POST", cr("v1beta1", "widgets"), {"apiVersion": GROUP + "/v1beta1", "kind": "Widget",
                                          "metadata": {"name": "w1"}, "spec": {"size": "L", "legacy": "yes"}}),
    Req("GET", cr("v1", "widgets") + "/w1"),
    Req("PATCH", cr("v1", "widgets") + "/w1", {"spec": {"replicas": 3}}, MERGE),
    Req("GET", cr("v1beta1", "widgets") + "/w1"),
    Req("POST", cr("v1", "widgets"), {"apiVersion": GROUP + "/v1beta1", "kind": "Widget",
                                     "metadata": {"name": "w2"}, "spec": {"size": "S"}}),
    Req("GET", cr("v1beta1", "widgets"), pick=("apiVersion", "kind", "items.*.apiVersion", "items.*.metadata.name")),
    Req("GET", cr("v2", "widgets")),
    Req("DELETE", CRDS + "/widgets." + GROUP, pick=("metadata.name", "spec.group")),
]

CRD_DEFINITION_MISTAKES = [
    Req("POST", CRDS, crd("gadgets", "Gadget", [version("v1", {"type": "object"}),
                                                version("v2", {"type": "object"})]), brief=True),
    Req("POST", CRDS, {**crd("gadgets", "Gadget", [version("v1", {"type": "object"})]),
                       "metadata": {"name": "gadget." + GROUP}}, brief=True),
    Req("POST", CRDS, crd("gadgets", "Gadget", [version("v1", {"properties": {"a": {}}})]), brief=True),
    Req("POST", CRDS, crd("Gadgets", "gadget", [version("v1", {"type": "object"})]), brief=True),
    Req("POST", CRDS, crd("gadgets", "Gadget", [{"name": "v1", "served": True, "storage": True}]), brief=True),
    Req("POST", CRDS, crd("gadgets", "Gadget", [version("v1", {"type": "object", "x-kubernetes-validations": [
        {"rule": "self.missing.nope(", "message": "broken"}]})]), brief=True),
    Req("GET", CRDS + "/gadgets." + GROUP),
]

_SHAPE = {"type": "object", "required": ["name"], "properties": {
    "name": {"type": "string", "pattern": "^[a-z]+$", "maxLength": 8},
    "replicas": {"type": "integer", "default": 1, "minimum": 0, "maximum": 10},
    "mode": {"type": "string", "enum": ["auto", "manual"], "default": "auto"},
    "config": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
    "tags": {"type": "array", "maxItems": 3, "items": {"type": "string"}, "x-kubernetes-list-type": "set"},
    "ports": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
              "items": {"type": "object", "required": ["name"], "properties": {"name": _STR, "port": _INT}}}}}


def shape(obj: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": GROUP + "/v1", "kind": "Shape", "metadata": {"name": obj}, "spec": spec}


CRD_SCHEMA_DEFAULTS_AND_PRUNING = [
    Req("POST", CRDS, crd("shapes", "Shape", [version("v1", _SHAPE, subresources={"status": {}})]),
        pick=("metadata.name",)),
    *installed("shapes", "Shape"),
    Req("POST", cr("v1", "shapes"), {**shape("s1", name="circle", extra="pruned", config={"any": {"thing": 1}}),
                                     "unknownTop": True}),
    Req("POST", cr("v1", "shapes"), shape("s2", name="ABC", replicas=11, mode="turbo"), brief=True),
    Req("POST", cr("v1", "shapes"), shape("s3", replicas=2)),
    Req("POST", cr("v1", "shapes"), shape("s4", name="tags", tags=["a", "a"])),
    Req("POST", cr("v1", "shapes"), shape("s5", name="toolongname")),
    Req("POST", cr("v1", "shapes"), shape("s6", name="ports", ports=[{"name": "http", "port": 80},
                                                                   {"name": "http", "port": 81}])),
    Req("PATCH", cr("v1", "shapes") + "/s1", {"spec": {"replicas": None, "mode": "manual"}}, MERGE),
    Req("PATCH", cr("v1", "shapes") + "/s1", shape("s1", ports=[{"name": "metrics", "port": 9090}]), APPLY,
        params={"fieldManager": "monitoring"}),
    Req("PATCH", cr("v1", "shapes") + "/s1", shape("s1", ports=[{"name": "http", "port": 8080}]), APPLY,
        params={"fieldManager": "web"}),
    Req("GET", cr("v1", "shapes") + "/s1"),
    Req("DELETE", CRDS + "/shapes." + GROUP, pick=("metadata.name",)),
]

_LIMITS = {"type": "object", "x-kubernetes-validations": [
    {"rule": "self.minReplicas <= self.maxReplicas", "message": "minReplicas must not exceed maxReplicas"},
    {"rule": "self.mode != 'legacy' || has(self.legacyConfig)", "reason": "FieldValueRequired",
     "fieldPath": ".legacyConfig", "messageExpression": "'mode ' + self.mode + ' needs legacyConfig'"}],
    "required": ["minReplicas", "maxReplicas", "mode"],
    "properties": {"minReplicas": _INT, "maxReplicas": _INT, "mode": _STR, "legacyConfig": _STR,
                   "storageClass": {"type": "string", "x-kubernetes-validations": [
                       {"rule": "self == oldSelf", "message": "storageClass is immutable"}]}}}


def limits(name: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": GROUP + "/v1", "kind": "Limit", "metadata": {"name": name},
            "spec": {"minReplicas": 1, "maxReplicas": 3, "mode": "auto", **spec}}


CRD_CEL_VALIDATION_RULES = [
    Req("POST", CRDS, crd("limits", "Limit", [version("v1", _LIMITS)]), pick=("metadata.name",)),
    *installed("limits", "Limit"),
    Req("POST", cr("v1", "limits"), limits("ok", storageClass="fast")),
    Req("POST", cr("v1", "limits"), limits("inverted", minReplicas=5)),
    Req("POST", cr("v1", "limits"), limits("legacy", mode="legacy")),
    Req("POST", cr("v1", "limits"), limits("both", mode="legacy", minReplicas=9), brief=True),
    Req("PATCH", cr("v1", "limits") + "/ok", {"spec": {"storageClass": "slow"}}, MERGE),
    Req("PATCH", cr("v1", "limits") + "/ok", {"spec": {"maxReplicas": 0}}, MERGE),
    Req("PATCH", cr("v1", "limits") + "/ok", {"spec": {"maxReplicas": 7, "mode": "legacy",
                                                       "legacyConfig": "v0"}}, MERGE),
    Req("PATCH", cr("v1", "limits") + "/ok", [{"op": "remove", "path": "/spec/mode"}], JSON),
    Req("GET", cr("v1", "limits") + "/ok", pick=("spec", "metadata.generation")),
    Req("DELETE", CRDS + "/limits." + GROUP, pick=("metadata.name",)),
]

_REPLICAS = {"type": "object", "properties": {"replicas": _INT, "selector": _STR}}

CRD_SCALE_SUBRESOURCE = [
    Req("POST", CRDS, crd("workers", "Worker", [version("v1", _REPLICAS, subresources={
        "status": {}, "scale": {"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas",
                                "labelSelectorPath": ".status.selector"}})]), pick=("spec.versions",)),
    *installed("workers", "Worker"),
    Req("POST", cr("v1", "workers"), {"apiVersion": GROUP + "/v1", "kind": "Worker", "metadata": {"name": "pool"},
                                     "spec": {"replicas": 2}}),
    Req("GET", cr("v1", "workers") + "/pool/scale"),
    Req("PATCH", cr("v1", "workers") + "/pool/status", {"status": {"replicas": 2, "selector": "app=pool"}}, MERGE),
    Req("GET", cr("v1", "workers") + "/pool/scale", save={"rv": "metadata.resourceVersion"}),
    Req("PATCH", cr("v1", "workers") + "/pool/scale", {"spec": {"replicas": 5}}, MERGE),
    Req("GET", cr("v1", "workers") + "/pool", pick=("spec", "status", "metadata.generation")),
    Req("PUT", cr("v1", "workers") + "/pool/scale", {"apiVersion": "autoscaling/v1", "kind": "Scale", "metadata": {
        "name": "pool", "resourceVersion": "{m:rv}"}, "spec": {"replicas": 1}}),
    Req("PATCH", cr("v1", "workers") + "/pool/scale", {"spec": {"replicas": -1}}, MERGE),
    Req("PATCH", cr("v1", "workers") + "/pool/scale", {"spec": {"replicas": "many"}}, MERGE, brief=True),
    Req("GET", cr("v1", "workers") + "/absent/scale"),
    Req("DELETE", CRDS + "/workers." + GROUP, pick=("metadata.name",)),
]

# --- a new user's request mistakes ----------------------------------------------------------------

WRONG_CONTENT_TYPES_AND_PATCH_MISTAKES = [
    Req("POST", CM, cm("ct", {"k": "v"}, annotations={"kopf.zalando.org/last-handled-configuration": "{}"})),
    Req("PATCH", CM + "/ct", {"data": {"k": "w"}}, "application/json"),
    Req("PATCH", CM + "/ct", {"data": {"k": "w"}}, "text/plain"),
    Req("PATCH", CM + "/ct", [{"data": {"k": "w"}}], MERGE),
    Req("PATCH", CM + "/ct", {"op": "replace", "path": "/data/k", "value": "w"}, JSON),
    Req("PATCH", CM + "/ct", [{"op": "upsert", "path": "/data/k", "value": "w"}], JSON),
    Req("PATCH", CM + "/ct", [{"op": "replace", "path": "/metadata/annotations/kopf.zalando.org~1last-handled-"
                                                      "configuration", "value": '{"k":"v"}'}], JSON),
    Req("PATCH", ECHO + "/nobody", {"spec": {"message": "x"}}, MERGE),
    Req("PATCH", ECHO + "/nobody", {"spec": {"message": "x"}}, STRATEGIC),
    Req("PATCH", ECHO + "/nobody", echo("nobody", "made by apply"), APPLY, params={"fieldManager": "kopf"}),
    Req("POST", CM, cm("via-patch-type"), MERGE),
    Req("PUT", CM, cm("ct")),
    Req("GET", CM + "/ct", pick=("metadata.annotations", "data")),
]

TYPE_ERRORS_IN_BODIES = [
    Req("POST", APPS + "/deployments", {**deployment("typed"), "spec": {**deployment("typed")["spec"],
                                                                        "replicas": "three"}}),
    Req("POST", CM, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "l", "labels": ["a", "b"]}}),
    Req("POST", CM, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": 42}}),
    Req("POST", ECHO, {**echo("e1"), "spec": {"message": "hi", "copies": "two"}}),
    Req("POST", ECHO, {**echo("e2"), "spec": {"message": "hi", "copies": -1}}),
    Req("POST", ECHO, {**echo("e3"), "spec": "just a string"}),
    Req("POST", ECHO, {**echo("e4"), "spec": {"message": 7, "copies": 1.5}}),
    Req("POST", ECHO, {**echo("e5"), "specs": {"message": "typo"}}),
    Req("POST", ECHO, {**echo("e6"), "kind": "Eco"}),
    Req("POST", ECHO, {**echo("e7"), "apiVersion": "test.kubeloop.dev/v2"}),
    Req("POST", PODS, {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
                       "spec": {"nodeName": "diff-node", "containers": {"name": "app", "image": "x"}}}),
    Req("POST", LEASES, {**lease("x"), "spec": {"holderIdentity": "x", "leaseDurationSeconds": 1.5}}),
    Req("GET", ECHO, pick=("items.*.metadata.name", "items.*.spec")),
]

DRY_RUN_WRITES = [
    Req("POST", CM, cm("dry", {"k": "v"}), save={"rv": "metadata.resourceVersion"}),
    Req("PUT", CM + "/dry", cm("dry", {"k": "put"}, resourceVersion="{m:rv}"), params={"dryRun": "All"}),
    Req("PATCH", CM + "/dry", {"data": {"k": "patched"}}, MERGE, params={"dryRun": "All"}),
    Req("PATCH", CM + "/dry", {"metadata": {"name": "Renamed"}}, MERGE, params={"dryRun": "All"}),
    Req("GET", CM + "/dry"),
    Req("PATCH", CM + "/dry-apply", cm("dry-apply", {"a": "1"}), APPLY,
        params={"fieldManager": "argocd-controller", "dryRun": "All"}),
    Req("GET", CM + "/dry-apply"),
    Req("POST", CM, {**cm("x"), "metadata": {"generateName": "dry-"}}, params={"dryRun": "All"}),
    Req("POST", ECHO, echo("dry-echo"), params={"dryRun": "All"}),
    Req("POST", ECHO, echo("real-echo")),
    Req("PATCH", ECHO + "/real-echo/status", {"status": {"seen": "dry"}}, MERGE, params={"dryRun": "All"}),
    Req("GET", ECHO, pick=("items.*.metadata.name", "items.*.status")),
    Req("PUT", CM + "/dry", cm("dry", {"k": "stale"}, resourceVersion="1"), params={"dryRun": "All"}),
]

# --- server-side apply on a StatefulSet's containers (a list keyed by name) -----------------------------

def sts_apply(containers: list[dict[str, Any]], full: bool = True) -> dict[str, Any]:
    body: dict[str, Any] = {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "alertmanager"},
                            "spec": {"template": {"spec": {"containers": containers}}}}
    if full:
        labels = {"app": "alertmanager"}
        body["spec"].update({"serviceName": "alertmanager-operated", "replicas": 1,
                             "selector": {"matchLabels": labels}})
        body["spec"]["template"]["metadata"] = {"labels": labels}
    return body


_CONTAINERS = ("spec.template.spec.containers.*.name", "spec.template.spec.containers.*.image")
_STS_PATH = APPS + "/statefulsets/alertmanager"

SSA_STATEFULSET_CONTAINER_OWNERSHIP = [
    Req("PATCH", _STS_PATH, sts_apply([container("alertmanager", "quay.local/alertmanager:0.27"),
                                       container("config-reloader", "quay.local/reloader:0.7")]), APPLY,
        params={"fieldManager": "prometheus-operator"}, pick=_CONTAINERS),
    Req("PATCH", _STS_PATH, sts_apply([container("istio-proxy", "istio.local/proxy:1.22")], full=False), APPLY,
        params={"fieldManager": "sidecar-injector"}, pick=_CONTAINERS),
    Req("PATCH", _STS_PATH, sts_apply([container("alertmanager", "quay.local/alertmanager:0.27")]), APPLY,
        params={"fieldManager": "prometheus-operator"}, pick=_CONTAINERS),
    Req("PATCH", _STS_PATH, sts_apply([container("alertmanager", "quay.local/alertmanager:0.28")], full=False),
        APPLY, params={"fieldManager": "sidecar-injector"}),
    Req("PATCH", _STS_PATH, sts_apply([container("alertmanager", "quay.local/alertmanager:0.28")], full=False),
        APPLY, params={"fieldManager": "sidecar-injector", "force": "true"}, pick=_CONTAINERS),
    Req("PATCH", _STS_PATH, sts_apply([container("alertmanager", "quay.local/alertmanager:0.27")]), APPLY,
        params={"fieldManager": "prometheus-operator"}),
    Req("PATCH", _STS_PATH, {**sts_apply([container("alertmanager", "quay.local/alertmanager:0.27")]),
                             "spec": {"serviceName": "renamed"}}, APPLY,
        params={"fieldManager": "prometheus-operator", "force": "true"}, brief=True),
    Req("PATCH", _STS_PATH, sts_apply([{"name": "no-image"}], full=False), APPLY,
        params={"fieldManager": "sidecar-injector"}, brief=True),
    Req("GET", _STS_PATH, pick=(*_CONTAINERS, "spec.serviceName", "spec.replicas")),
]

# --- strategic-merge-patch directives (kubectl-style edits of a Deployment) -----------------------------

_SMP = APPS + "/deployments/smp"
_SMP_PICK = ("spec.strategy", "spec.template.spec.containers.*.name", "spec.template.spec.containers.*.env",
             "spec.template.spec.volumes")

STRATEGIC_MERGE_DIRECTIVES = [
    Req("POST", APPS + "/deployments", {**deployment("smp"), "spec": {**deployment("smp")["spec"], "template": {
        "metadata": {"labels": {"app": "smp"}}, "spec": {
            "containers": [container("app", env=[{"name": "A", "value": "1"}, {"name": "B", "value": "2"}]),
                           container("sidecar", "registry.local/sidecar:1")],
            "volumes": [{"name": "cache", "emptyDir": {}}, {"name": "tmp", "emptyDir": {}}]}}}}, pick=_SMP_PICK),
    Req("PATCH", _SMP, {"spec": {"template": {"spec": {"containers": [
        {"name": "app", "env": [{"name": "A", "$patch": "delete"}]}]}}}}, STRATEGIC, pick=_SMP_PICK),
    Req("PATCH", _SMP, {"spec": {"template": {"spec": {"$setElementOrder/containers": [
        {"name": "sidecar"}, {"name": "app"}]}}}}, STRATEGIC, pick=_SMP_PICK),
    Req("PATCH", _SMP, {"spec": {"template": {"spec": {"volumes": [
        {"name": "data", "emptyDir": {}}, {"$patch": "replace"}]}}}}, STRATEGIC, pick=_SMP_PICK),
    Req("PATCH", _SMP, {"spec": {"strategy": {"type": "Recreate"}}}, STRATEGIC),
    Req("PATCH", _SMP, {"spec": {"strategy": {"$retainKeys": ["type"], "type": "Recreate"}}}, STRATEGIC,
        pick=_SMP_PICK),
    Req("PATCH", _SMP, {"spec": {"template": {"spec": {"containers": [
        {"name": "sidecar", "$patch": "delete"}]}}}}, STRATEGIC, pick=_SMP_PICK),
    Req("PATCH", _SMP, {"spec": {"template": {"spec": {"containers": [
        {"name": "app", "$patch": "explode"}]}}}}, STRATEGIC),
    Req("PATCH", _SMP, {"spec": {"template": {"spec": {"containers": [{"image": "nameless"}]}}}}, STRATEGIC),
    Req("GET", _SMP, pick=_SMP_PICK),
]


SEQUENCES: dict[str, list[Step]] = {
    "certmanager_tls_secret_issue_and_renew": CERTMANAGER_TLS_SECRET,
    "certmanager_status_conditions_on_cr": CERTMANAGER_STATUS_CONDITIONS,
    "external_secrets_owned_secret_gc": EXTERNAL_SECRETS_OWNED_SECRET,
    "reloader_deployment_template_annotation": RELOADER_DEPLOYMENT_ANNOTATION,
    "flux_ssa_conflict_and_force": FLUX_SSA_FORCE_CONFLICT,
    "argocd_ssa_dry_run_sync": ARGOCD_SSA_DRY_RUN_SYNC,
    "prometheus_operator_statefulset_and_rules": PROMETHEUS_OPERATOR_STATEFULSET,
    "leader_election_lease_takeover": LEADER_ELECTION_LEASE,
    "core_event_recorder_and_field_selectors": CORE_EVENT_RECORDER,
    "events_v1_series_and_validation": EVENTS_V1_SERIES,
    "kopf_finalizer_lifecycle": KOPF_FINALIZER_LIFECYCLE,
    "controller_runtime_status_writer": CONTROLLER_RUNTIME_STATUS_WRITER,
    "create_or_patch_configmap": CREATE_OR_PATCH_CONFIGMAP,
    "immutable_configmap_and_secret": IMMUTABLE_CONFIGMAP_AND_SECRET,
    "invalid_metadata_mistakes": INVALID_METADATA_MISTAKES,
    "pod_resource_quantity_mistakes": POD_RESOURCE_QUANTITY_MISTAKES,
    "pod_binding_unscheduled": POD_BINDING_UNSCHEDULED,
    "pod_update_mistakes": POD_UPDATE_MISTAKES,
    "service_mistakes": SERVICE_MISTAKES,
    "serviceaccount_pull_secrets": SERVICEACCOUNT_PULL_SECRETS,
    "secret_type_mistakes": SECRET_TYPE_MISTAKES,
    "job_suspended_immutable_template": JOB_SUSPENDED_IMMUTABLE_TEMPLATE,
    "cronjob_schedule_validation": CRONJOB_SCHEDULE_VALIDATION,
    "hpa_v2_validation": HPA_V2_VALIDATION,
    "daemonset_update_strategy": DAEMONSET_UPDATE_STRATEGY,
    "label_and_field_selector_listing": SELECTOR_LISTING,
    "paging_with_continue_tokens": PAGING_WITH_CONTINUE,
    "watch_configmap_lifecycle_from_mark": WATCH_CONFIGMAP_LIFECYCLE,
    "watch_cr_status_updates": WATCH_CR_STATUS_UPDATES,
    "watch_lease_renewals": WATCH_LEASE_RENEWALS,
    "delete_preconditions": DELETE_PRECONDITIONS,
    "gc_orphan_and_foreground": GC_ORPHAN_AND_FOREGROUND,
    "gc_dangling_and_multiple_owners": GC_DANGLING_OWNER_AND_MULTIPLE_OWNERS,
    "deletecollection_with_selectors": DELETECOLLECTION_WITH_SELECTORS,
    "namespace_deletion": NAMESPACE_DELETION,
    "crd_multiversion_conversion_none": CRD_MULTIVERSION_CONVERSION_NONE,
    "crd_definition_mistakes": CRD_DEFINITION_MISTAKES,
    "crd_schema_defaults_and_pruning": CRD_SCHEMA_DEFAULTS_AND_PRUNING,
    "crd_cel_validation_rules": CRD_CEL_VALIDATION_RULES,
    "crd_scale_subresource": CRD_SCALE_SUBRESOURCE,
    "wrong_content_types_and_patch_mistakes": WRONG_CONTENT_TYPES_AND_PATCH_MISTAKES,
    "type_errors_in_bodies": TYPE_ERRORS_IN_BODIES,
    "dry_run_writes": DRY_RUN_WRITES,
    "ssa_statefulset_container_ownership": SSA_STATEFULSET_CONTAINER_OWNERSHIP,
    "strategic_merge_directives": STRATEGIC_MERGE_DIRECTIVES,
}

