"""The differential fuzzer's vocabulary: hypothesis strategies for request sequences over the kinds
operators use, with valid and invalid input, and the projection its comparison looks at.

A sequence is a list of ``Op`` (one request, a paged list that follows ``continue`` to the end, a mark
or a watch from one). Each op names its kind, so the tally can give an agreement figure per kind.
Bodies are built from a valid template per kind, then maybe broken by one mutation (a label value with
a space, a finalizer without a domain, an ownerReference without uid, a ConfigMap value that is not a
string...). Besides every verb on one object: deletecollection by a selector only the sequence's objects
match, and ``/status`` writes (merge patches of valid and invalid status bodies; PUT and apply for the
kinds no controller writes the status of: Pods, Services, the custom resource).

What is compared (``project``): the status code; for errors the reason and the field paths of the
causes; for objects the metadata a client relies on (name, labels, annotations, finalizers,
ownerReferences, generation, whether deletion started) and, for kinds the real server does not default
or reconcile (ConfigMap, Secret, Lease, the custom resource), the whole object after the harness's
normalisation; for lists the names in order; for watches each event's type and that projection of its
object. Messages, resourceVersions and defaulted fields of kinds
that controllers write (a Deployment's status, a Pod's node) are not compared.
"""

from __future__ import annotations

import base64
import os
from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st

from tests.differential.harness import APPLY, JSON, MERGE, STRATEGIC, Normaliser, _pick

NS2 = "{ns}-x1"  # a second namespace whose name has the first as a prefix (all-namespace paging)
CORE_SOURCE = "fuzzcore.kubeloop.dev"  # the component of the core Events the fuzzer writes


@dataclass(frozen=True)
class KindSpec:
    kind: str
    api_version: str
    plural: str
    namespaced: bool = True
    full: bool = False  # compare the whole object (no server defaults, no controller writes)
    strategic: bool = True
    # Otherwise, besides metadata: these dotted paths ("*" maps over a list), which the real server
    # neither defaults nor has a controller write.
    pick: tuple[str, ...] = ()
    body_kind: str = ""  # the objects' kind, when the tally's name differs (CoreEvent: a core v1 Event)
    # /status writes: merge patches of these status bodies (name → status), and whether PUT and apply go
    # there too (not for kinds a controller writes the status of); their answers compare ``status_pick``.
    status: tuple[tuple[str, Any], ...] = ()
    status_writes: bool = False
    status_pick: tuple[str, ...] = ()

    def base(self, ns: str = "{ns}") -> str:
        prefix = "/api/v1" if self.api_version == "v1" else f"/apis/{self.api_version}"
        return f"{prefix}/namespaces/{ns}/{self.plural}" if self.namespaced else f"{prefix}/{self.plural}"


_REPLICA_STATUS = (("replicas-negative", {"replicas": -1}),
                   ("ready-over-replicas", {"replicas": 0, "readyReplicas": 1}),
                   ("observed", {"observedGeneration": 1}))
# What the real server defaults on decode (kubeloop/testing/apiserver/defaults.py), compared as returned;
# a Pod's admission additions (service account volume, tolerations, priority) are not.
_POD_SPEC = ("restartPolicy", "dnsPolicy", "schedulerName", "securityContext", "terminationGracePeriodSeconds")
_POD_DEFAULTS = (*(f"spec.{f}" for f in _POD_SPEC), "spec.enableServiceLinks")
# (not a container's defaults, which the fake does not model, nor its volumeMounts, which the service
# account admission plugin adds; a Pod's resources are its QoS class's)
_CONTAINER_FIELDS = ("name", "image")
_HISTORY = ("spec.revisionHistoryLimit",)


def _template(at: str) -> tuple[str, ...]:
    return (f"{at}.metadata", *(f"{at}.spec.{f}" for f in _POD_SPEC),
            *(f"{at}.spec.containers.*.{f}" for f in _CONTAINER_FIELDS))


KINDS: dict[str, KindSpec] = {k.kind: k for k in (
    KindSpec("ConfigMap", "v1", "configmaps", full=True),
    KindSpec("Secret", "v1", "secrets", full=True),
    KindSpec("Namespace", "v1", "namespaces", namespaced=False, status=(
        ("phase-active", {"phase": "Active"}), ("phase-terminating", {"phase": "Terminating"})),
        status_pick=("status.phase",)),
    KindSpec("Pod", "v1", "pods", pick=(*(f"spec.containers.*.{f}" for f in (*_CONTAINER_FIELDS, "resources")),
                                        "spec.activeDeadlineSeconds", *_POD_DEFAULTS), status=(
        ("phase-running", {"phase": "Running"}), ("phase-odd", {"phase": "Bogus"}), ("bad-ip", {"podIP": "nope"}),
        ("message", {"message": "m", "reason": "R"})), status_writes=True,
        status_pick=("status.phase", "status.message")),
    KindSpec("Service", "v1", "services", pick=("spec.ports.*.port", "spec.selector"), status=(
        ("ingress-on-cluster-ip", {"loadBalancer": {"ingress": [{"ip": "1.2.3.4"}]}}), ("empty", {"loadBalancer": {}})),
        status_writes=True, status_pick=("status.loadBalancer",)),
    KindSpec("Deployment", "apps/v1", "deployments", pick=("spec.replicas", "spec.selector", "spec.minReadySeconds",
                                                            *_template("spec.template"), "spec.strategy", *_HISTORY,
                                                            "spec.progressDeadlineSeconds"), status=_REPLICA_STATUS),
    KindSpec("StatefulSet", "apps/v1", "statefulsets", pick=("spec.replicas", "spec.selector", "spec.minReadySeconds",
                                                              "spec.serviceName", *_template("spec.template"),
                                                              "spec.updateStrategy",
                                                              "spec.podManagementPolicy", *_HISTORY,
                                                              "spec.persistentVolumeClaimRetentionPolicy"),
             status=_REPLICA_STATUS),
    KindSpec("DaemonSet", "apps/v1", "daemonsets", pick=("spec.selector", "spec.minReadySeconds",
                                                          *_template("spec.template"), "spec.updateStrategy",
                                                          *_HISTORY), status=(
        ("negative", {"numberReady": -1}), ("zero", {"numberReady": 0, "desiredNumberScheduled": 0}))),
    KindSpec("Job", "batch/v1", "jobs", pick=("spec.selector", *_template("spec.template"), "spec.suspend",
                                               "spec.activeDeadlineSeconds", "spec.completions", "spec.parallelism",
                                               "spec.backoffLimit", "spec.completionMode", "spec.manualSelector",
                                               "spec.podReplacementPolicy")),
    KindSpec("CronJob", "batch/v1", "cronjobs", pick=("spec.schedule", "spec.suspend", "spec.jobTemplate.metadata",
                                                  *_template("spec.jobTemplate.spec.template"),
                                                  "spec.concurrencyPolicy", "spec.successfulJobsHistoryLimit",
                                                  "spec.failedJobsHistoryLimit")),
    KindSpec("Lease", "coordination.k8s.io/v1", "leases", full=True),
    KindSpec("Event", "events.k8s.io/v1", "events", pick=("note", "reason", "type", "action", "regarding")),
    KindSpec("CoreEvent", "v1", "events", body_kind="Event", pick=(
        "reason", "message", "type", "involvedObject", "source", "count", "reportingComponent", "eventTime")),
    KindSpec("Echo", "test.kubeloop.dev/v1", "echoes", full=True, strategic=False, status=(
        ("seen", {"seen": "x"}), ("seen-number", {"seen": 5}), ("observed-string", {"observedGeneration": "x"}),
        ("unknown-field", {"seen": "y", "bogus": 1}), ("not-an-object", 5)), status_writes=True),
)}

_CONTAINER = {"name": "c", "image": "busybox:1"}
_TEMPLATE = {"metadata": {"labels": {"app": "f"}}, "spec": {"containers": [_CONTAINER], "restartPolicy": "Never"}}


def template(kind: str, name: str, variant: int) -> dict[str, Any]:
    """A valid body of ``kind`` named ``name``; ``variant`` (0/1) changes one mutable field."""
    spec = KINDS[kind]
    meta: dict[str, Any] = {"name": name}
    body: dict[str, Any] = {"apiVersion": spec.api_version, "kind": spec.body_kind or kind, "metadata": meta}
    v = str(variant)
    if kind == "ConfigMap":
        body["data"] = {"k": v}
    elif kind == "Secret":
        body["data"] = {"k": base64.b64encode(v.encode()).decode()}
    elif kind == "Pod":  # bound to a node nobody runs: no scheduler or kwok writes it in the background
        body["spec"] = {"containers": [_CONTAINER], "activeDeadlineSeconds": 100 + variant, "nodeName": "fuzz-node"}
    elif kind == "Service":
        body["spec"] = {"ports": [{"port": 80 + variant, "protocol": "TCP"}], "selector": {"app": "f"}}
    elif kind == "Deployment":
        body["spec"] = {"replicas": 0, "selector": {"matchLabels": {"app": "f"}},
                        "template": {**_TEMPLATE, "spec": {"containers": [_CONTAINER]}},
                        "minReadySeconds": variant + 1}  # (0 is omitted by the real server: not modelled)
    elif kind == "StatefulSet":
        body["spec"] = {"replicas": 0, "serviceName": "s", "selector": {"matchLabels": {"app": "f"}},
                        "template": {**_TEMPLATE, "spec": {"containers": [_CONTAINER]}}, "minReadySeconds": variant + 1}
    elif kind == "DaemonSet":  # for no node: the real controller makes no pods
        body["spec"] = {"selector": {"matchLabels": {"app": "f"}}, "minReadySeconds": variant + 1, "template": {
            **_TEMPLATE, "spec": {"containers": [_CONTAINER], "nodeSelector": {"fuzz.kubeloop.dev/none": "x"}}}}
    elif kind == "Job":
        body["spec"] = {"suspend": True, "template": _TEMPLATE, "activeDeadlineSeconds": 100 + variant}
    elif kind == "CronJob":
        body["spec"] = {"schedule": f"{variant} 0 * * *", "suspend": True,
                        "jobTemplate": {"spec": {"template": _TEMPLATE}}}
    elif kind == "Lease":
        body["spec"] = {"holderIdentity": f"h{v}", "leaseDurationSeconds": 10 + variant}
    elif kind == "Event":
        body.update(eventTime="2026-01-01T00:00:00.000000Z", reportingController="fuzz.kubeloop.dev/c",
                    reportingInstance="i", action="Do", reason="Did", type="Normal", note=f"n{v}",
                    regarding={"kind": "ConfigMap", "namespace": "{ns}", "name": "a", "apiVersion": "v1"})
    elif kind == "CoreEvent":  # (its own source: the events.k8s.io view of it is not the fuzzer's Event)
        body.update(involvedObject={"kind": "ConfigMap", "namespace": "{ns}", "name": "a", "apiVersion": "v1"},
                    reason="Did", message=f"m{v}", type="Normal", source={"component": CORE_SOURCE})
    elif kind == "Echo":
        body["spec"] = {"message": f"m{v}", "copies": variant}
    return body


# --- names -------------------------------------------------------------------------------------------

VALID_NAMES = ("a", "b", "c")
# Valid for some kinds and not others: a DNS-1035 label (Services), an RFC 1123 label (Namespaces),
# 52 characters (CronJobs), 63 and 253 (everything else).
ODD_NAMES = ("1svc", "a.b", "x" * 53, "y" * 64, "A", "a_b", "-a", "z" * 254, "a..b")


def names(kind: str, odd: bool = True) -> st.SearchStrategy[str]:
    """Names for a create (``odd``: sometimes one that is invalid for some kinds) or for a request on an
    object that may exist (mostly ``a``, the one every sequence starts by creating)."""
    valid = st.sampled_from(VALID_NAMES) if odd else st.sampled_from(("a", "a", "a", "b"))
    chosen = st.one_of(valid, valid, valid, st.sampled_from(ODD_NAMES)) if odd else valid
    if kind == "Namespace":  # cluster-scoped: embed the sequence's namespace so runs never collide
        return st.one_of(valid, valid, valid, st.sampled_from(("A", "a.b", "-a")) if odd else valid).map(
            lambda n: "{ns}-" + n)
    return chosen


# --- mutations (invalid and borderline input) ----------------------------------------------------

def _meta(key: str, value: Any) -> Any:
    def apply(body: dict[str, Any]) -> dict[str, Any]:
        body["metadata"][key] = value
        return body
    return apply


def _field(path: str, value: Any) -> Any:
    """Sets (or with _DROP removes) a dotted path; a number in the path indexes a list."""
    def apply(body: dict[str, Any]) -> dict[str, Any]:
        *parents, last = path.split(".")
        cur: Any = body
        for p in parents:
            cur = cur[int(p)] if p.isdigit() else cur.setdefault(p, {})
        if value is _DROP:
            cur.pop(last, None)
        else:
            cur[last] = value
        return body
    return apply


_DROP = object()
# The sequence's namespace owns what "owner-ok" marks (an owner that exists: the real garbage collector
# would delete, some time later, a dependent whose owner does not).
_OWNER = {"apiVersion": "v1", "kind": "Namespace", "name": "{ns}", "uid": "{m:nsuid}"}
_OTHER_UID = "0d6a1bc0-1111-4222-8333-444455556666"

META_MUTATIONS: dict[str, Any] = {
    "label-ok": _meta("labels", {"app": "x", "fuzz.kubeloop.dev/tier": "y"}),
    "label-space": _meta("labels", {"app": "a b"}),
    "label-long-value": _meta("labels", {"app": "v" * 64}),
    "label-63": _meta("labels", {"app": "v" * 63}),
    "label-bad-key": _meta("labels", {"-bad": "x"}),
    "label-bad-prefix": _meta("labels", {"Bad_Prefix/k": "x"}),
    "label-two-slashes": _meta("labels", {"a/b/c": "x"}),
    "label-empty-value": _meta("labels", {"app": ""}),
    "annotation-bad-key": _meta("annotations", {"bad key": "x"}),
    "annotation-ok": _meta("annotations", {"fuzz.kubeloop.dev/note": "free text: any value is fine"}),
    "annotations-too-big": _meta("annotations", {"big": "x" * (256 * 1024)}),
    "finalizer-unqualified": _meta("finalizers", ["nodomain"]),
    "finalizer-ok": _meta("finalizers", ["fuzz.kubeloop.dev/f"]),
    "finalizer-bad": _meta("finalizers", ["fuzz.kubeloop.dev/a b"]),
    "owner-no-uid": _meta("ownerReferences", [{k: v for k, v in _OWNER.items() if k != "uid"}]),
    "owner-two-controllers": _meta("ownerReferences", [
        {**_OWNER, "controller": True}, {**_OWNER, "name": "o2", "uid": _OTHER_UID, "controller": True}]),
    "owner-ok": _meta("ownerReferences", [_OWNER]),
    "owner-no-kind": _meta("ownerReferences", [{k: v for k, v in _OWNER.items() if k != "kind"}]),
    "resource-version": _meta("resourceVersion", "1"),
    "namespace-other": _meta("namespace", "other"),
    "generate-name": lambda b: {**b, "metadata": {**{k: v for k, v in b["metadata"].items() if k != "name"},
                                                  "generateName": "g-"}},
}

KIND_MUTATIONS: dict[str, dict[str, Any]] = {
    "ConfigMap": {"data-number": _field("data", {"k": 1}), "data-bad-key": _field("data", {"a b": "x"}),
                  "binary-bad-base64": _field("binaryData", {"b": "not base64!"})},
    "Secret": {"data-bad-base64": _field("data", {"k": "not base64!"}), "type-custom": _field("type", "x/y"),
               "string-data": _field("stringData", {"s": "plain"})},
    "Pod": {"no-containers": _field("spec.containers", []), "container-no-image": _field(
        "spec.containers", [{"name": "c"}]), "bad-restart": _field("spec.restartPolicy", "Sometimes"),
        "quantities": _field("spec.containers", [{**_CONTAINER, "resources": {
            "requests": {"cpu": "1000m", "memory": "1024Mi"}, "limits": {"cpu": 2, "memory": "1.5Gi"}}}]),
        "bad-quantity": _field("spec.containers", [{**_CONTAINER, "resources": {"requests": {"cpu": "1x"}}}]),
        "image-number": _field("spec.containers", [{"name": "c", "image": 5}]),
        "unknown-deep": _field("spec.containers", [{**_CONTAINER, "bogus": True}])},
    "Service": {"no-ports": _field("spec.ports", _DROP), "bad-port": _field(
        "spec.ports", [{"port": 70000}]), "bad-type": _field("spec.type", "Nope")},
    "Deployment": {"no-selector": _field("spec.selector", _DROP), "selector-mismatch": _field(
        "spec.selector", {"matchLabels": {"app": "other"}}), "negative-replicas": _field("spec.replicas", -1),
        "replicas-string": _field("spec.replicas", "3"), "unknown-spec-field": _field("spec.bogus", 1)},
    "StatefulSet": {"no-selector": _field("spec.selector", _DROP), "selector-mismatch": _field(
        "spec.selector", {"matchLabels": {"app": "other"}}), "negative-replicas": _field("spec.replicas", -1),
        "other-service": _field("spec.serviceName", "t"), "restart-never": _field(
            "spec.template.spec", {"containers": [_CONTAINER], "restartPolicy": "Never"}),
        "template-image": _field("spec.template.spec", {"containers": [{"name": "c", "image": "busybox:2"}]})},
    "DaemonSet": {"no-selector": _field("spec.selector", _DROP), "selector-other": _field(
        "spec.selector", {"matchLabels": {"app": "f", "tier": "t"}}), "empty-selector": _field("spec.selector", {}),
        "negative-min-ready": _field("spec.minReadySeconds", -1), "template-labels": _field(
            "spec.template.metadata", {"labels": {"app": "f", "v": "2"}}),
        "restart-never": _field("spec.template.spec", {"containers": [_CONTAINER], "restartPolicy": "Never",
                                                       "nodeSelector": {"fuzz.kubeloop.dev/none": "x"}})},
    "Job": {"restart-always": _field("spec.template.spec.restartPolicy", "Always"),
            "no-template-containers": _field("spec.template", {"spec": {"restartPolicy": "Never"}})},
    "CronJob": {"bad-schedule": _field("spec.schedule", "every day"), "no-schedule": _field("spec.schedule", _DROP)},
    "Lease": {"negative-duration": _field("spec.leaseDurationSeconds", -1),
              "duration-string": _field("spec.leaseDurationSeconds", "10"),
              "renew-time": _field("spec.renewTime", "2026-01-01T00:00:00.000000Z")},
    "Event": {"no-reason-controller": _field("reportingController", _DROP), "bad-type": _field("type", "Odd")},
    "CoreEvent": {"involved-elsewhere": _field("involvedObject.namespace", "other"),
                  "involved-no-namespace": _field("involvedObject.namespace", _DROP),
                  "event-time-alone": _field("eventTime", "2026-01-01T00:00:00.000000Z"),
                  "event-time-reported": lambda b: {**b, "eventTime": "2026-01-01T00:00:00.000000Z",
                                                    "reportingComponent": CORE_SOURCE + "/c",
                                                    "reportingInstance": "i", "action": "Do"},
                  "no-reason": _field("reason", _DROP), "bad-type": _field("type", "Odd"),
                  "count": _field("count", 3)},
    "Echo": {"copies-negative": _field("spec.copies", -1), "copies-string": _field("spec.copies", "two"),
             "unknown-field": _field("spec.extra", "x")},
}


def bodies(kind: str, name: str) -> st.SearchStrategy[tuple[str, dict[str, Any]]]:
    """(mutation name or "valid", body) for a create or update of ``kind`` named ``name``."""
    choices = ["valid", "valid", "valid", *META_MUTATIONS, *KIND_MUTATIONS.get(kind, {})]

    def build(choice: str, variant: int) -> tuple[str, dict[str, Any]]:
        import copy

        body = copy.deepcopy(template(kind, name, variant))
        mutate = META_MUTATIONS.get(choice) or KIND_MUTATIONS.get(kind, {}).get(choice)
        return choice, (mutate(body) if mutate else body)

    return st.builds(build, st.sampled_from(choices), st.integers(0, 1))


# --- operations ----------------------------------------------------------------------------------

@dataclass
class Op:
    """One request (``paged``: a list followed page by page with ``limit``, recording all names)."""

    kind: str
    label: str  # what the tally and a failure report show: verb and mutation
    method: str
    path: str
    body: Any = None
    ct: str = "application/json"
    params: dict[str, str] = field(default_factory=dict)
    paged: int = 0
    # "mark": lists the kind and keeps the list's resourceVersion; "watch": watches the kind from the
    # latest mark (or the sequence's start) and records the events until none come.
    special: str = ""

    def __repr__(self) -> str:
        shown = repr(self.body)[:300] if self.body is not None else ""
        return f"{self.kind} {self.label}: {self.method} {self.path} {self.params or ''} {shown}"


# What a deletecollection selects: only what the sequence wrote (never kube-root-ca.crt or the default
# ServiceAccount's kin, which the real controllers bring back later than the fake's).
COLLECTION_SELECTORS = (("labelSelector", "app=x"), ("labelSelector", "app"), ("fieldSelector", "metadata.name=a"),
                        ("fieldSelector", "metadata.name=b"))
SELECTORS = ("app=x", "app!=x", "app in (x,f)", "!app", "app", "app=a b", "app=,", "app in (x", "=x", "a/b/c=x",
             "app==x", "app notin (x)", "app=" + "v" * 64)
FIELD_SELECTORS = ("metadata.name=a", "metadata.name!=a", "metadata.namespace={ns}", "spec.nope=a", "metadata.name")


def ops(kind: str) -> st.SearchStrategy[Op]:
    spec = KINDS[kind]
    base = spec.base()

    def create(n: str, mb: tuple[str, dict[str, Any]]) -> Op:
        return Op(kind, f"create {mb[0]}", "POST", base, mb[1])

    def update(n: str, mb: tuple[str, dict[str, Any]]) -> Op:
        return Op(kind, f"update {mb[0]}", "PUT", f"{base}/{n}", mb[1])

    def merge(n: str, mb: tuple[str, dict[str, Any]]) -> Op:
        body = {k: v for k, v in mb[1].items() if k not in ("apiVersion", "kind")}
        body["metadata"] = {k: v for k, v in body["metadata"].items() if k != "name"}
        return Op(kind, f"merge-patch {mb[0]}", "PATCH", f"{base}/{n}", body, MERGE)

    def strategic(n: str, mb: tuple[str, dict[str, Any]]) -> Op:
        op = merge(n, mb)
        return Op(kind, f"strategic-patch {mb[0]}", "PATCH", op.path, op.body, STRATEGIC)

    def apply(n: str, mb: tuple[str, dict[str, Any]], manager: str, force: bool) -> Op:
        params = {"fieldManager": manager, **({"force": "true"} if force else {})}
        return Op(kind, f"apply {mb[0]}", "PATCH", f"{base}/{n}", {**mb[1], "metadata": {
            **mb[1]["metadata"], "name": n}}, APPLY, params)

    def json_patch(n: str, which: str) -> Op:
        patch = {
            "add-label": [{"op": "add", "path": "/metadata/labels", "value": {"app": "x"}}],
            "add-finalizer": [{"op": "add", "path": "/metadata/finalizers", "value": ["fuzz.kubeloop.dev/f"]}],
            "drop-finalizers": [{"op": "remove", "path": "/metadata/finalizers"}],
            "rename": [{"op": "replace", "path": "/metadata/name", "value": "renamed"}],
            "change-uid": [{"op": "replace", "path": "/metadata/uid", "value": _OTHER_UID}],
            "test-fails": [{"op": "test", "path": "/metadata/name", "value": "nope"}],
        }[which]
        return Op(kind, f"json-patch {which}", "PATCH", f"{base}/{n}", patch, JSON)

    def delete(n: str, how: str) -> Op:
        params = {} if how == "default" else {"propagationPolicy": how} if how != "grace0" else {
            "gracePeriodSeconds": "0"}
        if kind == "Pod" and how == "default":  # graceful pod deletion needs a kubelet: not modelled
            params = {"gracePeriodSeconds": "0"}
        return Op(kind, f"delete {how}", "DELETE", f"{base}/{n}", params=params)

    def delete_stale_uid(n: str) -> Op:
        return Op(kind, "delete stale-uid", "DELETE", f"{base}/{n}", {
            "kind": "DeleteOptions", "apiVersion": "v1", "preconditions": {"uid": _OTHER_UID}})

    def get(n: str) -> Op:
        return Op(kind, "get", "GET", f"{base}/{n}")

    # A cluster-scoped kind lists every sequence's objects: only this one's are asked for.
    own = "kubernetes.io/metadata.name in ({ns}-a,{ns}-b,{ns}-c)" if not spec.namespaced else ""

    def lst(sel: str, fsel: str | None) -> Op:
        params = {"labelSelector": ",".join(s for s in (sel, own) if s)} | ({"fieldSelector": fsel} if fsel else {})
        return Op(kind, "list", "GET", base, params=params)

    def paged(limit: int, sel: str | None) -> Op:
        chosen = ",".join(s for s in (sel, own) if s)
        return Op(kind, f"paged-list {limit}", "GET", base, params={"labelSelector": chosen} if chosen else {},
                  paged=limit)

    def delete_collection(sel: tuple[str, str], how: str) -> Op:
        params = {sel[0]: sel[1], **({"propagationPolicy": how} if how != "default" else {})}
        if kind == "Pod":  # (a pod bound to a node nobody runs would wait for its kubelet)
            params["gracePeriodSeconds"] = "0"
        return Op(kind, f"deletecollection {sel[1]} {how}", "DELETE", base, params=params)

    def status_merge(n: str, which: tuple[str, Any]) -> Op:
        return Op(kind, f"status-merge {which[0]}", "PATCH", f"{base}/{n}/status", {"status": which[1]}, MERGE)

    def status_put(n: str, which: tuple[str, Any]) -> Op:
        body = {**template(kind, n, 0), "status": which[1]}
        return Op(kind, f"status-put {which[0]}", "PUT", f"{base}/{n}/status", body)

    def status_apply(n: str, which: tuple[str, Any], manager: str) -> Op:
        body = {"apiVersion": spec.api_version, "kind": spec.body_kind or kind, "metadata": {"name": n},
                "status": which[1]}
        return Op(kind, f"status-apply {which[0]}", "PATCH", f"{base}/{n}/status", body, APPLY,
                  {"fieldManager": manager})

    n = names(kind, odd=False)
    mb = n.flatmap(lambda name: st.tuples(st.just(name), bodies(kind, name)))
    fresh = names(kind).flatmap(lambda name: st.tuples(st.just(name), bodies(kind, name)))
    choices = [
        fresh.map(lambda t: create(*t)), fresh.map(lambda t: create(*t)),
        mb.map(lambda t: update(*t)),
        mb.map(lambda t: merge(*t)),
        st.builds(lambda t, m, f: apply(t[0], t[1], m, f), mb, st.sampled_from(["m1", "m2"]), st.booleans()),
        st.builds(json_patch, n, st.sampled_from(["add-label", "add-finalizer", "drop-finalizers", "rename",
                                                  "change-uid", "test-fails"])),
        st.builds(delete, n, st.sampled_from(["default", "Orphan", "Foreground", "Background"])),
        st.builds(delete_stale_uid, n),
        st.builds(get, n),
        st.builds(lst, st.sampled_from(SELECTORS), st.one_of(st.none(), st.sampled_from(FIELD_SELECTORS))),
        st.builds(paged, st.integers(1, 2), st.one_of(st.none(), st.sampled_from(SELECTORS[:3]))),
    ]
    if spec.strategic:
        choices.append(mb.map(lambda t: strategic(*t)))
    if kind != "Namespace":  # (cluster-wide: it would take every namespace) scoped by a selector nothing else matches
        choices.append(st.builds(delete_collection, st.sampled_from(COLLECTION_SELECTORS),
                                 st.sampled_from(["default", "Orphan", "Foreground", "Background"])))
    if spec.status:
        statuses = st.sampled_from(spec.status)
        choices.append(st.builds(status_merge, n, statuses))
        if spec.status_writes:
            choices += [st.builds(status_put, n, statuses),
                        st.builds(status_apply, n, statuses, st.sampled_from(["m1", "m2"]))]
    if kind in WATCHED:
        choices += [st.just(Op(kind, "mark", "GET", base, special="mark")),
                    st.builds(lambda sel: Op(kind, "watch" + (f" {sel}" if sel else ""), "GET", base,
                                             params={"labelSelector": sel} if sel else {}, special="watch"),
                              st.sampled_from(["", "", "app=x", "app"]))]
    return st.one_of(*choices)


# Kinds whose watches are compared event by event: nothing but the sequence writes them on the real
# server (no controller updates their status or annotations in the background).
WATCHED = ("ConfigMap", "Secret", "Pod", "Service", "Lease", "Event", "CoreEvent", "Echo")


def cross_namespace_ops() -> st.SearchStrategy[Op]:
    """ConfigMaps in a second namespace named like the first plus a suffix, listed across namespaces
    page by page with a selector that only this sequence's objects carry."""
    cm = KINDS["ConfigMap"]

    def create(n: str) -> Op:
        body = template("ConfigMap", n, 0)
        body["metadata"]["labels"] = {"fuzz-run": "{ns}"}
        return Op("ConfigMap", "create in second namespace", "POST", cm.base(NS2), body)

    def create_first(n: str) -> Op:
        body = template("ConfigMap", n, 1)
        body["metadata"]["labels"] = {"fuzz-run": "{ns}"}
        return Op("ConfigMap", "create labelled", "POST", cm.base(), body)

    def paged(limit: int) -> Op:
        return Op("ConfigMap", f"all-namespaces paged-list {limit}", "GET", "/api/v1/configmaps",
                  params={"labelSelector": "fuzz-run={ns}"}, paged=limit)

    n = st.sampled_from(VALID_NAMES)
    return st.one_of(n.map(create), n.map(create_first), st.integers(1, 2).map(paged))


# --- CRDs -----------------------------------------------------------------------------------------

CRD_GROUP = "{ns}.fuzz.kubeloop.dev"
CRD_PLURALS = ("widgets", "gadgets")
CRD_BASE = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"


def crd_template(plural: str) -> dict[str, Any]:
    schema = {"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "size": {"type": "integer", "minimum": 0}}}}}
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": f"{plural}.{CRD_GROUP}"},
            "spec": {"group": CRD_GROUP, "scope": "Namespaced",
                     "names": {"plural": plural, "singular": plural[:-1], "kind": plural[:-1].capitalize()},
                     "versions": [{"name": "v1", "served": True, "storage": True,
                                   "schema": {"openAPIV3Schema": schema}}]}}


_SCHEMA = "spec.versions.0.schema.openAPIV3Schema"
_SIZE = _SCHEMA + ".properties.spec.properties.size"
CRD_MUTATIONS: dict[str, Any] = {
    "name-mismatch": _field("metadata.name", "others." + CRD_GROUP),
    "group-no-dot": lambda b: _field("metadata.name", b["spec"]["names"]["plural"] + ".{ns}")(
        _field("spec.group", "{ns}")(b)),
    "plural-upper": lambda b: _field("metadata.name", "Widgets." + CRD_GROUP)(
        _field("spec.names.plural", "Widgets")(b)),
    "no-kind": _field("spec.names.kind", _DROP),
    "kind-lower": _field("spec.names.kind", "widget"),
    "bad-scope": _field("spec.scope", "Global"),
    "no-versions": _field("spec.versions", []),
    "no-storage": _field("spec.versions.0.storage", False),
    "two-storage": lambda b: {**b, "spec": {**b["spec"], "versions": b["spec"]["versions"] + [
        {**b["spec"]["versions"][0], "name": "v2"}]}},
    "bad-version-name": _field("spec.versions.0.name", "V1"),
    "no-schema": _field("spec.versions.0.schema", _DROP),
    "root-not-object": _field(_SCHEMA + ".type", "string"),
    "untyped-property": _field(_SIZE, {"minimum": 0}),
    "cel-bad": _field(_SIZE + ".x-kubernetes-validations", [{"rule": "self >"}]),
    "cel-unknown-field": _field(_SCHEMA + ".properties.spec.x-kubernetes-validations",
                                    [{"rule": "self.nope > 0"}]),
    "cel-ok": _field(_SIZE + ".x-kubernetes-validations", [{"rule": "self >= 0", "message": "m"}]),
    "label-bad-key": _meta("labels", {"-bad": "x"}),
    "finalizer-unqualified": _meta("finalizers", ["nodomain"]),
}


def crd_ops() -> st.SearchStrategy[Op]:
    """CRDs created valid or broken by one mutation (names, scope, versions, storage, schema, CEL rules),
    read and deleted. Their group embeds the sequence's namespace so runs never collide."""
    kind = "CustomResourceDefinition"

    def create(plural: str, choice: str) -> Op:
        import copy

        body = copy.deepcopy(crd_template(plural))
        mutate = CRD_MUTATIONS.get(choice)
        return Op(kind, f"create {choice}", "POST", CRD_BASE, mutate(body) if mutate else body)

    def named(verb: str, plural: str) -> Op:
        return Op(kind, verb, "GET" if verb == "get" else "DELETE", f"{CRD_BASE}/{plural}.{CRD_GROUP}")

    plurals = st.sampled_from(CRD_PLURALS)
    return st.one_of(st.builds(create, plurals, st.sampled_from(["valid", "valid", *CRD_MUTATIONS])),
                     st.builds(named, st.just("get"), plurals), st.builds(named, st.just("delete"), plurals))


# ``KUBELOOP_FUZZ_KINDS=StatefulSet,DaemonSet`` focuses a run on some kinds (all by default; name
# CustomResourceDefinition, or none, for CRDs too).
_ASKED = [k for k in os.environ.get("KUBELOOP_FUZZ_KINDS", "").split(",") if k]
CRD_ASKED = "CustomResourceDefinition" in _ASKED
FUZZ_KINDS = tuple(k for k in _ASKED if k in KINDS) or (("ConfigMap",) if CRD_ASKED else tuple(KINDS))
FUZZ_CRDS = CRD_ASKED or not _ASKED


@st.composite
def sequences(draw: Any, max_ops: int = 8) -> list[Op]:
    """One sequence: mostly one or two kinds (so that ops meet the same objects), sometimes all."""
    focus = draw(st.lists(st.sampled_from(FUZZ_KINDS), min_size=1, max_size=2, unique=True))
    if {"Event", "CoreEvent"} <= set(focus):  # one store behind both APIs on the real server: not modelled
        focus = ["Event"]
    pool = [ops(k) for k in focus]
    if draw(st.integers(0, 5)) == 0:
        pool.append(cross_namespace_ops())
    if FUZZ_CRDS and (CRD_ASKED or draw(st.integers(0, 5)) == 0):
        pool.append(crd_ops())
    # Each kind starts with a valid object named "a" (most later requests name it).
    prelude = [prelude_create(k) for k in focus]
    steps = prelude + draw(st.lists(st.one_of(*pool), min_size=1, max_size=max_ops))
    watched = [k for k in focus if k in WATCHED]
    if watched and draw(st.booleans()):  # every event of the sequence on one kind, compared one by one
        kind = draw(st.sampled_from(watched))
        steps.append(Op(kind, "watch from the start", "GET", KINDS[kind].base(), special="watch-start"))
    return steps


def prelude_create(kind: str) -> Op:
    name = "{ns}-a" if kind == "Namespace" else "a"
    return Op(kind, "create valid", "POST", KINDS[kind].base(), template(kind, name, 0))


# --- comparison ----------------------------------------------------------------------------------

_META_KEYS = ("name", "generateName", "namespace", "labels", "annotations", "finalizers", "ownerReferences",
              "generation")


class FuzzNormaliser(Normaliser):
    """The harness's normaliser, plus generated names (``g-x7k2p``) wherever they appear, even in
    labels the server derives from them (a Job's ``job-name``)."""

    def __init__(self, ns: str) -> None:
        super().__init__(ns, [])
        self.generated: dict[str, str] = {}

    def learn(self, body: Any) -> None:
        for item in (body.get("items") or [body]) if isinstance(body, dict) else []:
            meta = item.get("metadata") if isinstance(item, dict) else None
            name, prefix = (meta or {}).get("name"), (meta or {}).get("generateName")
            if isinstance(name, str) and isinstance(prefix, str) and prefix and name.startswith(prefix) and \
                    len(name) == len(prefix) + 5:  # a name the server generated (a chosen one stays)
                self.generated[name] = prefix + "<gen>"

    def text(self, value: str) -> str:
        for name, shown in self.generated.items():
            value = value.replace(name, shown)
        return super().text(value)


def project(op: Op, outcome: dict[str, Any], norm: FuzzNormaliser) -> Any:
    """What the fuzzer compares of one answer (see the module's docstring)."""
    if op.special == "mark":
        return {"status": outcome["status"]}
    if op.special.startswith("watch"):
        if outcome["status"] != 200:
            return project(Op(op.kind, op.label, "GET", op.path), {"status": outcome["status"],
                                                                  "body": (outcome["events"] or [None])[0]}, norm)
        events = []
        for e in outcome["events"]:
            if not _written_here(op, e.get("object") or {}):
                continue
            norm.learn(e.get("object"))
            if e.get("type") == "ERROR":
                obj = e.get("object") or {}
                events.append(["ERROR", obj.get("code"), obj.get("reason")])
            else:
                events.append([e.get("type"), norm.text(_ident(e.get("object") or {})),
                               _object(op, e.get("object") or {}, norm)])
        return {"status": 200, "events": events}
    if op.paged:
        for page in outcome.get("pages", []):
            norm.learn(page)
        names = [norm.text(_ident(i)) for page in outcome.get("pages", []) for i in page.get("items", [])
                 if _written_here(op, i)]
        return {"status": outcome["status"], "names": names}
    status, body = outcome["status"], outcome.get("body")
    norm.learn(body)
    if not isinstance(body, dict):
        return {"status": status}
    if body.get("kind") == "Status":
        details = body.get("details") or {}
        # The set of fields: the real server reports some causes twice or more (its validation of
        # metadata runs more than once on update), an artifact the fake does not copy.
        causes = sorted({c.get("field", "") for c in details.get("causes") or []})
        return {"status": status, "reason": body.get("reason"), "causes": causes}
    if isinstance(body.get("items"), list):
        return {"status": status, "names": [norm.text(_ident(i)) for i in body["items"] if _written_here(op, i)]}
    return {"status": status, "object": _object(op, body, norm)}


def _written_here(op: Op, item: Any) -> bool:
    """Not an Event a real controller recorded (a Job's ``Suspended``...): the fake runs no such controller,
    and the sequence did not write it (nor, for core Events, through the other API)."""
    if op.kind not in ("Event", "CoreEvent") or not isinstance(item, dict) or item.get("kind") not in (None, "Event"):
        return True
    if op.kind == "CoreEvent":
        return str((item.get("source") or {}).get("component") or "") == CORE_SOURCE
    return str(item.get("reportingController") or "").startswith("fuzz.kubeloop.dev")


def _ident(item: dict[str, Any]) -> str:
    meta = item.get("metadata") or {}
    name = meta.get("generateName", "") + "<gen>" if meta.get("generateName") else meta.get("name", "")
    return f"{meta.get('namespace', '')}/{name}"


_CRD_PICK = ("spec.group", "spec.names", "spec.scope", "spec.versions.*.name", "spec.versions.*.storage")


def _object(op: Op, body: dict[str, Any], norm: Normaliser) -> Any:
    meta = dict(body.get("metadata") or {})
    spec = KINDS.get(op.kind) or KindSpec(op.kind, "", "", pick=_CRD_PICK)
    if spec.full:
        out = {k: v for k, v in body.items() if k != "metadata"}
        meta.pop("managedFields", None)
        meta.pop("resourceVersion", None)
        meta.pop("uid", None)
        meta.pop("creationTimestamp", None)
        return norm({**out, "metadata": {**meta, "deletionTimestamp": bool(meta.get("deletionTimestamp"))}})
    shown = {k: meta[k] for k in _META_KEYS if k in meta}
    shown["deleting"] = bool(meta.get("deletionTimestamp"))
    if op.kind == "Namespace" and isinstance(shown.get("finalizers"), list):
        # A namespace's delete rebuilds its finalizers from a Go map: their order is random on the real server.
        shown["finalizers"] = sorted(shown["finalizers"])
    if isinstance(shown.get("annotations"), dict):  # written later by a controller the fake does not run
        shown["annotations"] = {k: v for k, v in shown["annotations"].items() if k not in _CONTROLLER_ANNOTATIONS}
        if not shown["annotations"]:
            del shown["annotations"]
    out: dict[str, Any] = {"metadata": norm(shown, "metadata")}
    for path in spec.pick + (spec.status_pick if op.label.startswith("status") else ()):
        out[path] = norm(_pick(body, path.split(".")))
    return out


_CONTROLLER_ANNOTATIONS = {"deployment.kubernetes.io/revision"}
