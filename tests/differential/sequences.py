"""Written request sequences, one per semantic the fake claims to serve. ``{ns}`` is the sequence's own
namespace; cluster-scoped names embed it so that runs never collide."""

from __future__ import annotations

from typing import Any

from tests.differential.harness import APPLY, JSON, MERGE, STRATEGIC, Mark, Req, Step, WaitFor, WaitGone, Watch

CM = "/api/v1/namespaces/{ns}/configmaps"
SECRETS = "/api/v1/namespaces/{ns}/secrets"
ECHO = "/apis/test.kubeloop.dev/v1/namespaces/{ns}/echoes"
DEPLOY = "/apis/apps/v1/namespaces/{ns}/deployments"


def cm(name: str, data: dict[str, str] | None = None, labels: dict[str, str] | None = None,
       **meta: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, **meta}}
    if labels:
        body["metadata"]["labels"] = labels
    if data is not None:
        body["data"] = data
    return body


def echo(name: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "test.kubeloop.dev/v1", "kind": "Echo", "metadata": {"name": name},
            "spec": {"message": "hi", **spec}}


def crd(group: str, **extra: Any) -> dict[str, Any]:
    schema = {"type": "object", "properties": {
        "spec": {"type": "object", "required": ["size"], "properties": {
            "size": {"type": "integer", "minimum": 1, "maximum": 10},
            "mode": {"type": "string", "enum": ["fast", "slow"], "default": "slow"},
            "name": {"type": "string", "pattern": "^[a-z]+$", "maxLength": 8},
            "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 2},
            "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}},
        "status": {"type": "object", "properties": {"ready": {"type": "boolean"}}}}}
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": f"widgets.{group}"},
            "spec": {"group": group, "scope": "Namespaced",
                     "names": {"kind": "Widget", "plural": "widgets", "singular": "widget", "listKind": "WidgetList"},
                     "versions": [{"name": "v1", "served": True, "storage": True, "subresources": {"status": {}},
                                   "schema": {"openAPIV3Schema": schema}}], **extra}}


_CORE = ("namespaces", "namespaces/status", "configmaps", "secrets", "pods", "pods/status", "services",
         "services/status", "serviceaccounts", "events")
_APPS = ("deployments", "deployments/status", "deployments/scale", "statefulsets", "statefulsets/status",
         "statefulsets/scale", "daemonsets", "daemonsets/status")


def cel_crd(group: str) -> dict[str, Any]:
    """A CRD with the kinds of CEL rules kubeloop generates: root, object, fieldPath, reason, transition."""
    spec = {"type": "object", "x-kubernetes-validations": [
        {"rule": "self.minReplicas <= self.maxReplicas", "fieldPath": ".minReplicas",
         "message": "min must not exceed max"},
        {"rule": "!has(self.mode) || self.mode != 'off'", "reason": "FieldValueForbidden",
         "message": "mode off is forbidden"}],
        "properties": {
            "minReplicas": {"type": "integer"}, "maxReplicas": {"type": "integer"}, "mode": {"type": "string"},
            "size": {"type": "integer", "x-kubernetes-validations": [
                {"rule": "self >= oldSelf", "message": "size may not shrink"}]},
            "sel": {"type": "object", "required": ["operator"], "properties": {
                "operator": {"type": "string"},
                "values": {"type": "array", "maxItems": 10, "items": {"type": "string", "maxLength": 63}}},
                "x-kubernetes-validations": [{"rule": "self.operator in ['In', 'NotIn'] ? (has(self.values) && "
                                                      "size(self.values) > 0) : (!has(self.values) || "
                                                      "size(self.values) == 0)"}]}}}
    schema = {"type": "object", "x-kubernetes-validations": [
        {"rule": "self.metadata.name.size() <= 10", "message": "name too long"}],
        "properties": {"spec": spec}}
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": f"gizmos.{group}"},
            "spec": {"group": group, "scope": "Namespaced",
                     "names": {"kind": "Gizmo", "plural": "gizmos", "singular": "gizmo", "listKind": "GizmoList"},
                     "versions": [{"name": "v1", "served": True, "storage": True,
                                   "schema": {"openAPIV3Schema": schema}}]}}


def gizmo(group: str, name: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": f"{group}/v1", "kind": "Gizmo", "metadata": {"name": name},
            "spec": {"minReplicas": 1, "maxReplicas": 2, **spec}}


def _fmt(name: str) -> dict[str, Any]:
    return {"type": "string", "format": name}


_FORMATS = ("date-time", "datetime", "date", "duration", "byte", "uuid", "uuid4", "ipv4", "ipv6", "cidr", "mac",
            "hostname", "email", "uri", "password", "bsonobjectid", "isbn", "creditcard", "ssn", "hexcolor",
            "rgbcolor", "int32", "nosuchformat")


def keyword_crd(group: str, **extra_properties: Any) -> dict[str, Any]:
    """A CRD with every format and keyword the fake validates custom resources by (and CEL rules)."""
    spec = {"type": "object", "properties": {
        **{f.replace("-", "_"): _fmt(f) for f in _FORMATS},
        "ios": {"x-kubernetes-int-or-string": True, "anyOf": [{"type": "integer"}, {"type": "string"}]},
        "i32": {"type": "integer", "format": "int32"},
        "obj": {"type": "object", "maxProperties": 2, "minProperties": 1, "additionalProperties": {"type": "string"}},
        "one": {"type": "object", "maxProperties": 1, "additionalProperties": {"type": "string"}},
        "short": {"type": "string", "maxLength": 1},
        "few": {"type": "array", "maxItems": 1, "items": {"type": "string"}},
        "set": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
        "iset": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "integer"}},
        "map": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
                "items": {"type": "object", "required": ["name"], "properties": {
                    "name": {"type": "string"}, "v": {"type": "integer"}}}},
        "map2": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name", "port"],
                 "items": {"type": "object", "required": ["name"], "properties": {
                     "name": {"type": "string"}, "port": {"type": "integer", "default": 80}}}},
        "any": {"type": "integer", "anyOf": [{"minimum": 5}, {"maximum": 1}]},
        "one_of": {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
                   "oneOf": [{"required": ["a"]}, {"required": ["b"]}]},
        "any_of": {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
                   "anyOf": [{"required": ["a"]}, {"properties": {"b": {"maxLength": 1}}, "required": ["b"]}]},
        "all": {"type": "integer", "allOf": [{"minimum": 5}, {"maximum": 6}]},
        "not": {"type": "integer", "not": {"minimum": 5}},
        "arr": {"type": "array", "items": {"type": "integer", "anyOf": [{"minimum": 5}, {"maximum": 1}]}},
        "mult": {"type": "integer", "multipleOf": 3}, "multf": {"type": "number", "multipleOf": 0.5},
        "mult25": {"type": "number", "multipleOf": 2.5}, "multi": {"type": "integer", "multipleOf": 0.1},
        "cel": {"type": "integer", "maximum": 10, "x-kubernetes-validations": [{"rule": "self != 7",
                                                                               "message": "not seven"}]},
        **extra_properties},
        "x-kubernetes-validations": [{"rule": "!has(self.mult) || self.mult != 9", "message": "mult not nine"}]}
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": f"probes.{group}"},
            "spec": {"group": group, "scope": "Namespaced", "names": {"kind": "Probe", "plural": "probes"},
                     "versions": [{"name": "v1", "served": True, "storage": True,
                                   "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": spec}}}}]}}


_K = "{ns}.keywords.kubeloop.dev"
_PROBES = "/apis/{ns}.keywords.kubeloop.dev/v1/namespaces/{ns}/probes"
_KW_CRD = CRDS_PATH = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"


def _probe(name: str, **spec: Any) -> Req:
    body = {"apiVersion": f"{_K}/v1", "kind": "Probe", "metadata": {"name": name}, "spec": spec}
    return Req("POST", _PROBES, body, pick=("spec",))


def _bad_keyword(**extra: Any) -> list[Step]:
    """A CRD with one more property: refused, or created and deleted."""
    name = f"{CRDS_PATH}/probes.{_K}"
    return [Req("POST", CRDS_PATH, keyword_crd(_K, **extra), pick=("metadata.name", "spec.versions")),
            Req("DELETE", name, pick=("metadata.name",)), WaitGone(name)]


_G = "{ns}.cel.kubeloop.dev"
_GIZMOS = "/apis/{ns}.cel.kubeloop.dev/v1/namespaces/{ns}/gizmos"


def _owner(name: str, uid: str, block: bool = True) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "name": name, "uid": uid, "blockOwnerDeletion": block}


EVENTS = "/apis/events.k8s.io/v1/namespaces/{ns}/events"
CORE_EVENTS = "/api/v1/namespaces/{ns}/events"
_GONE_UID = "0d6a1bc0-1111-4222-8333-444455556666"  # an owner that never existed


def event(name: str) -> dict[str, Any]:
    return {"apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": {"name": name},
            "eventTime": "2026-01-01T00:00:00.000000Z", "reportingController": "diff.kubeloop.dev/c",
            "reportingInstance": "i", "action": "Do", "reason": "Did", "type": "Normal", "note": "n",
            "regarding": {"kind": "ConfigMap", "namespace": "{ns}", "name": "x", "apiVersion": "v1"}}


def core_event(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Event", "metadata": {"name": name}, "involvedObject": {
        "kind": "ConfigMap", "namespace": "{ns}", "name": "a", "apiVersion": "v1"}, "reason": "Did", "message": "m",
        "type": "Normal", "source": {"component": "diffcore"}}


PODS = "/api/v1/namespaces/{ns}/pods"
SVCS = "/api/v1/namespaces/{ns}/services"
JOBS = "/apis/batch/v1/namespaces/{ns}/jobs"
_JOB_PICK = ("metadata.name", "spec.completions", "spec.backoffLimit", "spec.backoffLimitPerIndex",
             "spec.maxFailedIndexes", "spec.podFailurePolicy", "spec.successPolicy", "spec.podReplacementPolicy",
             "spec.managedBy")


def job_with(name: str, restart: str = "Never", **spec: Any) -> dict[str, Any]:
    """A suspended Job (it never runs: no controller's writes to compare) with these spec fields."""
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name}, "spec": {
        "suspend": True, "template": {"spec": {"restartPolicy": restart, "containers": [
            {"name": "task", "image": "busybox:1.37"}]}}, **spec}}
_POD_PICK = ("metadata.name", "metadata.finalizers", "metadata.deletionGracePeriodSeconds", "spec.nodeName")


def pod(name: str, activeDeadlineSeconds: int | None = None, **meta: Any) -> dict[str, Any]:
    """A pod bound to a node nobody runs: no scheduler or kubelet touches it."""
    spec: dict[str, Any] = {"nodeName": "diff-node", "containers": [{"name": "c", "image": "busybox:1"}]}
    if activeDeadlineSeconds is not None:
        spec["activeDeadlineSeconds"] = activeDeadlineSeconds
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, **meta}, "spec": spec}


_UNBOUND = ("metadata.name", "spec.nodeName", "spec.schedulerName", "status")  # (volume names are random)


def unbound(name: str, **meta: Any) -> dict[str, Any]:
    """A pod no scheduler takes (its scheduler does not run): bound by the sequence, to the idle node."""
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, **meta}, "spec": {
        "schedulerName": "kubeloop-test-scheduler", "containers": [{"name": "c", "image": "busybox:1"}]}}


def binding_of(name: str, node: str = "diff-node", **meta: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": name, **meta},
            "target": {"apiVersion": "v1", "kind": "Node", "name": node}}


def _pod_patch(*ops: tuple[Any, ...]) -> Req:
    """A JSON patch of pod ``p`` (it keeps what admission added); errors compared by their causes."""
    patch = [{"op": o[0], "path": o[1], **({"value": o[2]} if len(o) > 2 else {})} for o in ops]
    return Req("PATCH", PODS + "/p", patch, JSON, brief=True,
               pick=("spec.activeDeadlineSeconds", "spec.containers.*.image"))


def _pod_put(spec: dict[str, Any]) -> Req:
    return Req("PUT", PODS + "/p", {**pod("p"), "spec": spec}, brief=True)


def gated(name: str, container: dict[str, Any] | None = None, **spec: Any) -> dict[str, Any]:
    """A pod held by a scheduling gate (never scheduled, never run) with these spec fields."""
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": {
        "containers": [{"name": "c", "image": "busybox:1", **(container or {})}], "automountServiceAccountToken": False,
        "schedulingGates": [{"name": "example.com/gate"}], **spec}}


def _node_term(*exprs: dict[str, Any]) -> dict[str, Any]:
    return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": list(exprs)}]}}}


_GATED = ("metadata.name", "spec.schedulingGates", "spec.nodeSelector", "spec.affinity")


LIMITS = "/api/v1/namespaces/{ns}/limitranges"


def limit_range(name: str, *items: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "LimitRange", "metadata": {"name": name}, "spec": {"limits": list(items)}}


SAS = "/api/v1/namespaces/{ns}/serviceaccounts"
QUOTAS = "/api/v1/namespaces/{ns}/resourcequotas"


def quota(name: str, hard: dict[str, str], **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": name}, "spec": {"hard": hard, **spec}}


def _secret(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": name}}


# A second's pause (a wait for what never comes, on both servers alike): the real PodSecurity and quota
# plugins read namespaces and quotas from an informer's cache, which a write reaches a few milliseconds late.
_SETTLE = WaitFor("/api/v1/namespaces/{ns}", "metadata.annotations.never", "set", timeout=1.0)


def service(name: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name},
            "spec": {"selector": {"app": name}, "ports": [{"port": 80}], **spec}}


RSS = "/apis/apps/v1/namespaces/{ns}/replicasets"


def replica_set(name: str, selector: dict[str, str], labels: dict[str, str] | None = None,
                **spec: Any) -> dict[str, Any]:
    """A ReplicaSet of no pods (replicas 0 unless said): no controller's writes to compare."""
    return {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": name}, "spec": {
        "replicas": 0, "selector": {"matchLabels": selector}, **spec, "template": {
            "metadata": {"labels": labels if labels is not None else selector},
            "spec": {"containers": [{"name": "c", "image": "busybox:1"}]}}}}


LEASES = "/apis/coordination.k8s.io/v1/namespaces/{ns}/leases"


def lease(name: str, duration: Any) -> dict[str, Any]:
    return {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": name},
            "spec": {"holderIdentity": "h", "leaseDurationSeconds": duration}}


STS = "/apis/apps/v1/namespaces/{ns}/statefulsets"
DS = "/apis/apps/v1/namespaces/{ns}/daemonsets"
_WL_PICK = ("metadata.name", "metadata.generation", "metadata.annotations", "spec.minReadySeconds")
_WL_TEMPLATE = {"metadata": {"labels": {"app": "w"}}, "spec": {
    "containers": [{"name": "c", "image": "busybox:1"}], "nodeSelector": {"diff.kubeloop.dev/none": "x"}}}


def sts(name: str) -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": name}, "spec": {
        "replicas": 0, "serviceName": "s", "selector": {"matchLabels": {"app": "w"}}, "template": _WL_TEMPLATE}}


def ds(name: str) -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": name}, "spec": {
        "selector": {"matchLabels": {"app": "w"}}, "template": _WL_TEMPLATE}}


CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
# Mutations of the fuzzer's CRD (each makes it invalid, or is valid where a check might think otherwise).
_CRD_CHECKS = ("name-mismatch", "group-no-dot", "plural-upper", "no-kind", "kind-lower", "bad-scope", "no-versions",
               "no-storage", "two-storage", "bad-version-name", "no-schema", "root-not-object", "untyped-property",
               "cel-bad", "cel-unknown-field")


def _crd_mutated(mutation: str) -> dict[str, Any]:
    import copy

    from tests.differential.fuzz import CRD_MUTATIONS, crd_template

    return CRD_MUTATIONS[mutation](copy.deepcopy(crd_template("widgets")))


_BAD_BINARY = {"apiVersion": "v1", "kind": "ConfigMap", "binaryData": {"b": "not base64!"}}


def _p(**kw: str) -> dict[str, str]:
    return kw


def with_selector(workload: dict[str, Any], selector: dict[str, Any]) -> dict[str, Any]:
    return {**workload, "spec": {**workload["spec"], "selector": selector}}


def deployment(name: str, containers: list[dict[str, Any]]) -> dict[str, Any]:
    labels = {"app": name}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "labels": labels},
            "spec": {"replicas": 1, "selector": {"matchLabels": labels},
                     "template": {"metadata": {"labels": labels}, "spec": {"containers": containers}}}}


_DEPLOY_PICK = ("metadata.generation", "metadata.labels", "spec.replicas", "spec.template.spec.containers.*.name",
                "spec.template.spec.containers.*.image", "spec.template.spec.containers.*.env",
                "spec.template.spec.containers.*.args")


_SCALE_PICK = ("kind", "apiVersion", "metadata.name", "spec.replicas", "status.selector")


NSS = "/api/v1/namespaces"
_RV = "{m:rv}"  # a resourceVersion saved from an earlier answer
_NSF = ("metadata.name", "metadata.labels", "metadata.finalizers", "spec.finalizers", "status.phase")


def ns_with(name: str, spec_finalizers: list[str] | None = None, **meta: Any) -> dict[str, Any]:
    """A Namespace; ``spec_finalizers`` are what the namespace controller waits on, ``meta`` its metadata."""
    body: dict[str, Any] = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, **meta}}
    if spec_finalizers is not None:
        body["spec"] = {"finalizers": spec_finalizers}
    return body


# CRDs the seventh blind suite's differences led to (2026-12-04): a group of their own per sequence.
_U = "{ns}.crdup.kubeloop.dev"
_UCRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"


def plain_crd(plural: str, kind: str, versions: tuple[str, ...] = ("v1",), storage: str = "v1",
              group: str = _U, **names: Any) -> dict[str, Any]:
    """A CRD of ``group`` whose versions share one open schema; ``storage`` names the storage version."""
    schema = {"openAPIV3Schema": {"type": "object", "properties": {"spec": {
        "type": "object", "properties": {"size": {"type": "integer"}}}}}}
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": f"{plural}.{group}"},
            "spec": {"group": group, "scope": "Namespaced",
                     "names": {"plural": plural, "singular": kind.lower(), "kind": kind, "listKind": kind + "List",
                               **names},
                     "versions": [{"name": v, "served": True, "storage": v == storage, "schema": schema}
                                  for v in versions]}}


def crd_up(plural: str, kind: str, **kw: Any) -> list[Step]:
    """Creates a CRD of ``_U`` and waits until its custom resources are served."""
    return [Req("POST", _UCRDS, plain_crd(plural, kind, **kw), pick=("metadata.name", "status.storedVersions")),
            WaitFor(f"{_UCRDS}/{plural}.{_U}", "status.conditions.1.status", "True"),
            WaitFor(f"/apis/{_U}/v1/namespaces/{{ns}}/{plural}", "kind", kind + "List")]


_CRD_STATUS = ("metadata.generation", "status.acceptedNames", "status.conditions.*.type",
               "status.conditions.*.status", "status.conditions.*.reason", "status.conditions.*.message")


def schema_crd(plural: str, kind: str, spec: dict[str, Any], group: str = _U, **version: Any) -> dict[str, Any]:
    """A CRD of ``group`` whose one version's spec has the schema ``spec``."""
    body = plain_crd(plural, kind, group=group)
    body["spec"]["versions"][0]["schema"] = {"openAPIV3Schema": {"type": "object", "properties": {"spec": spec}}}
    body["spec"]["versions"][0].update(version)
    return body


_EMBEDDING = {"type": "object", "properties": {
    "template": {"type": "object", "x-kubernetes-embedded-resource": True,
                 "x-kubernetes-preserve-unknown-fields": True},
    "typed": {"type": "object", "x-kubernetes-embedded-resource": True, "properties": {
        "data": {"type": "object", "additionalProperties": {"type": "string"}}}},
    "known": {"type": "string"}}}
_HOLDERS = f"/apis/{_U}/v1/namespaces/{{ns}}/holders"


def holder(name: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": f"{_U}/v1", "kind": "Holder", "metadata": {"name": name}, "spec": spec}


def ruled(rules: list[dict[str, Any]], **properties: Any) -> dict[str, Any]:
    """An object schema with CEL ``rules`` and ``properties``."""
    return {"type": "object", "x-kubernetes-validations": rules, "properties": properties}


_STAGED = ruled([{"rule": "has(self.id) == has(oldSelf.id)", "message": "id may not be added or removed"}],
                id={"type": "string", "maxLength": 16,
                    "x-kubernetes-validations": [{"rule": "self == oldSelf", "message": "frozen"}]},
                stage={"type": "string", "maxLength": 16, "x-kubernetes-validations": [
                    {"rule": "!oldSelf.hasValue() || oldSelf.value() != 'done'", "optionalOldSelf": True,
                     "message": "done is final"},
                    {"rule": "oldSelf.orValue('') != 'locked' || self == 'locked'", "optionalOldSelf": True,
                     "messageExpression": "'was locked, now ' + self"}]},
                keyed={"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["k"],
                       "maxItems": 4, "items": {
                           **ruled([{"rule": "self.v >= oldSelf.v", "message": "v may not go down"}],
                                   k={"type": "string", "maxLength": 8}, v={"type": "integer"}), "required": ["k"]}})
_STAGES = f"/apis/{_U}/v1/namespaces/{{ns}}/stages"


def stage(name: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": f"{_U}/v1", "kind": "Stage", "metadata": {"name": name}, "spec": spec}


_RATCHETS = f"/apis/{_U}/v1/namespaces/{{ns}}/ratchets"
_LOOSE_SPEC = {"type": "object", "properties": {
    "name": {"type": "string"}, "n": {"type": "integer"},
    "tags": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
    "ports": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["p"],
              "items": {"type": "object", "required": ["p"], "properties": {"p": {"type": "integer"},
                                                                          "label": {"type": "string"}}}},
    "port": {"x-kubernetes-int-or-string": True, "anyOf": [{"type": "integer"}, {"type": "string"}]},
    "bare": {"x-kubernetes-int-or-string": True}}}


def _tightened() -> dict[str, Any]:
    """_LOOSE_SPEC with bounds every value stored under it breaks."""
    import copy

    spec = copy.deepcopy(_LOOSE_SPEC)
    props = spec["properties"]
    props["name"]["maxLength"] = 5
    props["tags"]["items"]["maxLength"] = 2
    props["ports"]["items"]["properties"]["label"]["maxLength"] = 2
    props["ports"]["items"]["required"] = ["p", "label"]
    spec["x-kubernetes-validations"] = [{"rule": "self.n < 10", "message": "n too big"}]
    return spec


def ratchet(obj_name: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": f"{_U}/v1", "kind": "Ratchet", "metadata": {"name": obj_name}, "spec": spec}


_HELD = f"/apis/{_U}/v1/namespaces/{{ns}}/helds"


def held(obj_name: str, **meta: Any) -> dict[str, Any]:
    return {"apiVersion": f"{_U}/v1", "kind": "Held", "metadata": {"name": obj_name, **meta}, "spec": {"size": 1}}


_APPLY_SPEC = {"type": "object", "properties": {
    "ports": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name", "proto"],
              "items": {"type": "object", "required": ["name"], "properties": {
                  "name": {"type": "string"}, "port": {"type": "integer"},
                  "proto": {"type": "string", "default": "TCP"}}}},
    "sel": {"type": "object", "x-kubernetes-map-type": "atomic", "additionalProperties": {"type": "string"}},
    "env": {"type": "object", "additionalProperties": {"type": "string"}}}}
_APPLIERS = f"/apis/{_U}/v1/namespaces/{{ns}}/appliers"
_SSA = ("metadata.managedFields.*.manager", "metadata.managedFields.*.fieldsV1", "spec")


def applied(manager: str, force: bool = False, **spec: Any) -> Req:
    params = {"fieldManager": manager, **({"force": "true"} if force else {})}
    return Req("PATCH", _APPLIERS + "/a1", {"apiVersion": f"{_U}/v1", "kind": "Applier", "metadata": {"name": "a1"},
                                            "spec": spec}, APPLY, params=params, pick=_SSA)


SEQUENCES: dict[str, list[Step]] = {
    "crud_configmap": [
        Req("POST", CM, cm("a", {"k": "v"}, {"app": "x"})),
        Req("POST", CM, cm("a")),
        Req("GET", CM + "/a"),
        Req("GET", CM + "/missing"),
        Req("PUT", CM + "/a", cm("a", {"k": "w"})),
        Req("PUT", CM + "/missing", cm("missing", {"k": "w"})),
        Req("DELETE", CM + "/a"),
        Req("DELETE", CM + "/a"),
        Req("GET", CM + "/a"),
    ],
    "conflict_stale_resource_version": [
        Req("POST", CM, cm("a", {"k": "v"})),
        Req("PATCH", CM + "/a", {"data": {"k": "w"}}, MERGE),
        Req("PUT", CM + "/a", {**cm("a", {"k": "x"}), "metadata": {"name": "a", "resourceVersion": "1"}}),
        Req("PATCH", CM + "/a", {"metadata": {"resourceVersion": "1"}, "data": {"k": "y"}}, MERGE),
        Req("GET", CM + "/a"),
    ],
    "noop_update_keeps_resource_version": [
        Req("POST", CM, cm("a", {"k": "v"})),
        Req("PATCH", CM + "/a", {"data": {"k": "v"}}, MERGE),
        Req("PUT", CM + "/a", cm("a", {"k": "v"})),
        Req("GET", CM + "/a"),
    ],
    "validation_names": [
        Req("POST", CM, cm("Bad_Name")),
        Req("POST", CM, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {}}),
        Req("POST", CM, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x", "namespace": "other"}}),
        Req("POST", CM, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"generateName": "gen-"}}),
        Req("PUT", CM + "/y", cm("z")),
        Req("POST", "/api/v1/namespaces/{ns}-nope/configmaps", cm("a")),
    ],
    "immutable_configmap": [
        Req("POST", CM, {**cm("i", {"k": "v"}), "immutable": True}),
        Req("PATCH", CM + "/i", {"data": {"k": "w"}}, MERGE),
        Req("PATCH", CM + "/i", {"immutable": False}, MERGE),
        Req("PATCH", CM + "/i", {"data": {"k": "w"}, "immutable": False}, MERGE),
        Req("PATCH", CM + "/i", {"metadata": {"labels": {"still": "mutable"}}}, MERGE),
        Req("GET", CM + "/i"),
    ],
    "secret_string_data": [
        Req("POST", SECRETS, {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"},
                              "stringData": {"password": "hunter2"}}),
        Req("GET", SECRETS + "/s"),
    ],
    "generation_and_status_subresource": [
        Req("POST", ECHO, {**echo("e"), "status": {"seen": "x"}}),
        Req("PATCH", ECHO + "/e", {"spec": {"message": "changed"}}, MERGE),
        Req("PATCH", ECHO + "/e", {"metadata": {"labels": {"l": "1"}}}, MERGE),
        Req("PATCH", ECHO + "/e", {"status": {"seen": "ignored on the main resource"}}, MERGE),
        Req("PATCH", ECHO + "/e/status", {"status": {"seen": "yes"}, "spec": {"message": "ignored"}}, MERGE),
        Req("GET", ECHO + "/e/status"),
        Req("PUT", ECHO + "/e/status", {**echo("e"), "status": {"seen": "no rv"}}),
        Req("GET", ECHO + "/e"),
    ],
    "custom_resource_pruning_and_validation": [
        Req("POST", ECHO, {**echo("e"), "spec": {"message": "m", "unknown": 1}, "extra": True}),
        Req("PATCH", ECHO + "/e", {"spec": {"copies": -1}}, MERGE),
        Req("PATCH", ECHO + "/e", {"spec": {"message": 5}}, MERGE),
        Req("PATCH", ECHO + "/e", {"spec": {"copies": 2}}, STRATEGIC),
        Req("GET", ECHO + "/e"),
        Req("GET", ECHO, params=_p(limit="5")),
        # An apply is typed by the schema first: an undeclared field is the real server's 500, not pruned.
        Req("PATCH", ECHO + "/e", {**echo("e"), "spec": {"message": "m", "unknown": 1}}, APPLY,
            _p(fieldManager="m1")),
        Req("PATCH", ECHO + "/a", {**echo("a"), "extra": True}, APPLY, _p(fieldManager="m1")),
        Req("PATCH", ECHO + "/a", echo("a"), APPLY, _p(fieldManager="m1")),
        Req("GET", ECHO + "/a"),
    ],
    "merge_patch": [
        Req("POST", CM, cm("a", {"k": "v", "drop": "me"}, {"x": "1"})),
        Req("PATCH", CM + "/a", {"data": {"drop": None, "new": "n"}, "metadata": {"labels": {"y": "2"}}}, MERGE),
        Req("PATCH", CM + "/missing", {"data": {"k": "v"}}, MERGE),
        Req("PATCH", CM + "/a", {"data": {"k": "w"}}, "application/unknown-patch"),
    ],
    "json_patch": [
        Req("POST", CM, cm("a", {"k": "v"}, {"x": "1"})),
        Req("PATCH", CM + "/a", [{"op": "test", "path": "/data/k", "value": "v"},
                                 {"op": "replace", "path": "/data/k", "value": "w"},
                                 {"op": "add", "path": "/data/n", "value": "1"},
                                 {"op": "remove", "path": "/metadata/labels/x"}], JSON),
        Req("PATCH", CM + "/a", [{"op": "test", "path": "/data/k", "value": "stale"},
                                 {"op": "replace", "path": "/data/k", "value": "z"}], JSON),
        Req("PATCH", CM + "/a", [{"op": "remove", "path": "/data/absent"}], JSON),
        Req("PATCH", CM + "/a", [{"op": "replace", "path": "/data/absent", "value": "1"}], JSON),
        Req("PATCH", CM + "/a", [{"op": "bogus", "path": "/data/k"}], JSON),
        Req("PATCH", CM + "/a", [{"op": "copy", "from": "/data/k", "path": "/data/c"},
                                 {"op": "move", "from": "/data/n", "path": "/data/m"}], JSON),
        Req("GET", CM + "/a"),
    ],
    "strategic_merge_patch": [
        Req("POST", CM, cm("a", {"k": "v"}, {"x": "1"})),
        Req("PATCH", CM + "/a", {"data": {"k": None, "n": "1"}, "metadata": {"labels": {"y": "2"}}}, STRATEGIC),
        Req("GET", CM + "/a"),
    ],
    "patch_bodies_that_are_not_objects_and_patches_that_change_the_type": [
        # A merge or strategic patch must be a JSON object; a patch may not change a custom resource's
        # kind or apiVersion (the custom resource validator's 422).
        Req("POST", CM, cm("a", {"k": "v"})),
        Req("PATCH", CM + "/a", [{"data": {"k": "w"}}], STRATEGIC),
        Req("PATCH", CM + "/a", [{"data": {"k": "w"}}], MERGE),
        Req("POST", ECHO, echo("e")),
        Req("PATCH", ECHO + "/e", {"kind": "Other"}, MERGE),
        Req("PATCH", ECHO + "/e", {"apiVersion": "test.kubeloop.dev/v9"}, MERGE),
        Req("PATCH", ECHO + "/e", [{"op": "replace", "path": "/kind", "value": "Other"},
                                   {"op": "replace", "path": "/apiVersion", "value": "x.dev/v1"}], JSON),
        Req("PATCH", ECHO + "/e", {"kind": "Echo", "apiVersion": "test.kubeloop.dev/v1"}, MERGE),
        Req("GET", ECHO + "/e"),
    ],
    "strategic_merge_directives": [
        # $deleteFromPrimitiveList removes values from a list of scalars; $patch: merge is the default;
        # an unknown $patch is the real server's 500.
        Req("POST", CM, {**cm("d", {"k": "v", "j": "w"}), "metadata": {
            "name": "d", "finalizers": ["example.com/a", "example.com/b", "example.com/c"]}}),
        Req("PATCH", CM + "/d", {"metadata": {"$deleteFromPrimitiveList/finalizers": ["example.com/b", "x.io/y"]}},
            STRATEGIC),
        Req("PATCH", CM + "/d", {"data": {"$patch": "merge", "k": "u"}}, STRATEGIC),
        Req("PATCH", CM + "/d", {"data": {"$patch": "bogus"}}, STRATEGIC),
        Req("PATCH", CM + "/d", {"data": {"$patch": "other", "k": "1", "m": {"n": 2}}}, STRATEGIC),
        Req("PATCH", CM + "/d", {"metadata": {"finalizers": None}}, MERGE),
        Req("DELETE", CM + "/d"),
    ],
    "strategic_merge_patch_on_a_deployment": [
        Req("POST", DEPLOY, deployment("d", [{"name": "app", "image": "nginx:1", "env": [{"name": "A", "value": "1"}]},
                                             {"name": "side", "image": "busybox:1", "args": ["sleep", "1"]}]),
            pick=_DEPLOY_PICK),
        Req("PATCH", DEPLOY + "/d", {"spec": {"template": {"spec": {"containers": [
            {"name": "app", "image": "nginx:2", "env": [{"name": "B", "value": "2"}]}]}}}}, STRATEGIC,
            pick=_DEPLOY_PICK),
        Req("PATCH", DEPLOY + "/d", {"spec": {"template": {"spec": {"containers": [
            {"name": "side", "$patch": "delete"}]}}}}, STRATEGIC, pick=_DEPLOY_PICK),
        Req("PATCH", DEPLOY + "/d", {"metadata": {"labels": {"tier": "web"}}, "spec": {"replicas": 3}}, STRATEGIC,
            pick=_DEPLOY_PICK),
        Req("PATCH", DEPLOY + "/d", {"spec": {"template": {"spec": {"containers": [
            {"name": "app", "image": "nginx:3"}]}}}}, MERGE, pick=_DEPLOY_PICK),
        Req("PATCH", DEPLOY + "/d/status", {"status": {"observedGeneration": 99}}, MERGE,
            pick=("metadata.generation", "status.observedGeneration")),
        Req("GET", DEPLOY + "/d", pick=_DEPLOY_PICK),
    ],
    "apply_conflict_on_an_atomic_selector": [
        # LabelSelector is owned whole: another manager's apply that changes it conflicts on .spec.selector.
        Req("POST", DEPLOY, deployment("d", [{"name": "app", "image": "nginx:1"}]), pick=_DEPLOY_PICK),
        Req("PATCH", DEPLOY + "/d", {**deployment("d", [{"name": "app", "image": "nginx:1"}]),
                                     "spec": {**deployment("d", [])["spec"],
                                              "selector": {"matchLabels": {"app": "other"}},
                                              "template": {"metadata": {"labels": {"app": "d"}}, "spec": {
                                                  "containers": [{"name": "app", "image": "nginx:1"}]}}}},
            APPLY, _p(fieldManager="m1")),
        Req("PATCH", DEPLOY + "/d", {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
                                     "spec": {"selector": {"matchLabels": {"app": "d"}}}},
            APPLY, _p(fieldManager="m1"), pick=_DEPLOY_PICK),
    ],
    "apply_with_a_wrongly_typed_value": [
        # The configuration is made a typed object first: a wrong type is the real server's 500.
        Req("PATCH", DEPLOY + "/t", {**deployment("t", [{"name": "app", "image": "nginx:1"}]),
                                     "spec": {**deployment("t", [{"name": "app", "image": "nginx:1"}])["spec"],
                                              "replicas": "3"}}, APPLY, _p(fieldManager="m1")),
        Req("PATCH", CM + "/t", {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "t"},
                                 "data": {"a": 1}}, APPLY, _p(fieldManager="m1")),
        Req("POST", CM, cm("t", {"a": "1"})),
        Req("PATCH", CM + "/t", {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "t"},
                                 "data": {"a": True}}, APPLY, _p(fieldManager="m1")),
        Req("PATCH", CM + "/t", {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "t"},
                                 "data": {"a": "2"}, "bogus": 1}, APPLY, _p(fieldManager="m1")),
        Req("GET", CM + "/t"),
        Req("PATCH", CM + "/t", {**_BAD_BINARY, "metadata": {"name": "t"}}, APPLY, _p(fieldManager="m1")),
        Req("PATCH", CM + "/new", {**_BAD_BINARY, "metadata": {"name": "new"}}, APPLY, _p(fieldManager="m1")),
    ],
    "scale_subresource": [
        Req("POST", DEPLOY, deployment("s", [{"name": "app", "image": "nginx:1"}]), pick=_DEPLOY_PICK),
        Req("GET", DEPLOY + "/s/scale", pick=_SCALE_PICK),
        Req("PUT", DEPLOY + "/s/scale", {"apiVersion": "autoscaling/v1", "kind": "Scale", "metadata": {"name": "s"},
                                         "spec": {"replicas": 3}}, pick=_SCALE_PICK),
        Req("PATCH", DEPLOY + "/s/scale", {"spec": {"replicas": 2}}, MERGE, pick=_SCALE_PICK),
        Req("PUT", DEPLOY + "/s/scale", {"apiVersion": "autoscaling/v1", "kind": "Scale",
                                         "metadata": {"name": "s", "resourceVersion": "1"}, "spec": {"replicas": 5}}),
        Req("GET", DEPLOY + "/s", pick=_DEPLOY_PICK),
        Req("GET", DEPLOY + "/missing/scale"),
        Req("GET", CM + "/kube-root-ca.crt/scale"),
    ],
    "server_side_apply": [
        Req("PATCH", CM + "/s", cm("s", {"a": "1", "b": "2"}), APPLY),
        Req("PATCH", CM + "/s", cm("s", {"a": "1", "b": "2"}), APPLY, _p(fieldManager="one")),
        Req("PATCH", CM + "/s", cm("s", {"a": "1"}), APPLY, _p(fieldManager="same")),
        Req("PATCH", CM + "/s", cm("s", {"a": "9", "b": "8"}), APPLY, _p(fieldManager="two")),
        Req("PATCH", CM + "/s", cm("s", {"a": "9"}), APPLY, _p(fieldManager="three")),
        Req("PATCH", CM + "/s", {"data": {"b": "7"}}, MERGE, _p(fieldManager="mp")),
        Req("PATCH", CM + "/s", cm("s", {"a": "9", "c": "3"}), APPLY, _p(fieldManager="one", force="true")),
        Req("PATCH", CM + "/s", cm("s"), APPLY, _p(fieldManager="one")),
        Req("PATCH", CM + "/s", cm("s"), APPLY, _p(fieldManager="same")),
        Req("GET", CM + "/s"),
    ],
    "apply_labels_and_finalizers": [
        Req("PATCH", CM + "/s", cm("s", {"a": "1"}, {"team": "x"}, finalizers=["a.io/x"]), APPLY,
            _p(fieldManager="op")),
        Req("PATCH", CM + "/s", cm("s", None, {"owner": "y"}, finalizers=["b.io/y"]), APPLY,
            _p(fieldManager="other")),
        Req("PATCH", CM + "/s", cm("s", {"a": "1"}), APPLY, _p(fieldManager="op")),
        Req("PATCH", CM + "/s", {"metadata": {"finalizers": None}}, MERGE),
        Req("GET", CM + "/s"),
    ],
    "apply_to_an_untracked_object": [
        Req("POST", CM, cm("u")),
        Req("PATCH", CM + "/u", {"data": {"k": "v"}}, MERGE),
        Req("PATCH", CM + "/u", cm("u", {"k": "w"}), APPLY, _p(fieldManager="op")),
        Req("PATCH", CM + "/u", cm("u", {"k": "w"}), APPLY, _p(fieldManager="op", force="true")),
        Req("GET", CM + "/u"),
    ],
    "finalizers_and_deletion_timestamp": [
        Mark("start", CM),
        Req("POST", CM, cm("f", {"k": "v"}, finalizers=["kubeloop.dev/test"])),
        Req("DELETE", CM + "/f"),
        Req("DELETE", CM + "/f"),
        Req("PATCH", CM + "/f", {"data": {"k": "still writable"}}, MERGE),
        Req("PATCH", CM + "/f", [{"op": "remove", "path": "/metadata/finalizers"}], JSON),
        Req("GET", CM + "/f"),
        Watch(CM, since="start"),
    ],
    "custom_resource_finalizer_bumps_generation": [
        Req("POST", ECHO, {**echo("e"), "metadata": {"name": "e", "finalizers": ["x.io/y"]}}),
        Req("DELETE", ECHO + "/e"),
        Req("PATCH", ECHO + "/e", [{"op": "remove", "path": "/metadata/finalizers/0"}], JSON),
        Req("GET", ECHO + "/e"),
    ],
    "delete_preconditions": [
        Req("POST", CM, cm("p", {"k": "v"})),
        Req("DELETE", CM + "/p", {"kind": "DeleteOptions", "apiVersion": "v1",
                                  "preconditions": {"uid": "00000000-0000-0000-0000-000000000000"}}),
        Req("DELETE", CM + "/p", {"kind": "DeleteOptions", "apiVersion": "v1",
                                  "preconditions": {"resourceVersion": "1"}}),
        Req("GET", CM + "/p"),
    ],
    "label_selectors": [
        Req("POST", CM, cm("a", labels={"tier": "web", "env": "prod"})),
        Req("POST", CM, cm("b", labels={"tier": "db", "env": "prod"})),
        Req("POST", CM, cm("c", labels={"tier": "web"})),
        *[Req("GET", CM, params=_p(labelSelector=sel)) for sel in (
            "tier=web", "tier==web", "tier!=web", "tier in (web,db)", "tier notin (web)", "env", "!env",
            "tier=web,env=prod", "tier=web,!env")],
        Req("GET", CM, params=_p(labelSelector="tier in (web")),
    ],
    "field_selectors": [
        Req("POST", CM, cm("a")),
        Req("POST", CM, cm("b")),
        Req("GET", CM, params=_p(fieldSelector="metadata.name=a")),
        Req("GET", CM, params=_p(fieldSelector="metadata.name!=a")),
        Req("GET", CM, params=_p(fieldSelector="metadata.namespace={ns},metadata.name==b")),
        Req("GET", "/api/v1/configmaps", params=_p(fieldSelector="metadata.namespace={ns},metadata.name=b")),
        Req("GET", CM, params=_p(fieldSelector="data.k=v")),
    ],
    "pagination": [
        *[Req("POST", CM, cm(f"p{i}", labels={"page": "yes"})) for i in range(5)],
        Req("GET", CM, params=_p(limit="2")),
        Req("GET", CM, params=_p(limit="2", labelSelector="page=yes")),
        Req("GET", CM, params=_p(limit="100", labelSelector="page=yes")),
        Req("GET", CM, params=_p(limit="2", resourceVersion="0")),
        Req("GET", CM, params=_p(**{"continue": "bogus"})),
    ],
    "continue_token_sees_a_snapshot": [
        *[Req("POST", CM, cm(f"p{i}", labels={"page": "yes"})) for i in range(3)],
        Req("GET", CM, params=_p(limit="1", labelSelector="page=yes"), save={"token": "metadata.continue"}),
        Req("POST", CM, cm("p9", labels={"page": "yes"})),
        Req("DELETE", CM + "/p1"),
        Req("GET", CM, params=_p(limit="10", labelSelector="page=yes", **{"continue": "{m:token}"})),
        Req("GET", CM, params=_p(labelSelector="page=yes")),
    ],
    "watch_from_resource_version": [
        Mark("start", CM),
        Req("POST", CM, cm("w", {"k": "1"}, {"sel": "yes"})),
        Req("PATCH", CM + "/w", {"data": {"k": "2"}}, MERGE),
        Req("PATCH", CM + "/w", {"metadata": {"labels": {"sel": "no"}}}, MERGE),
        Req("PATCH", CM + "/w", {"metadata": {"labels": {"sel": "yes"}}}, MERGE),
        Req("DELETE", CM + "/w"),
        Watch(CM, since="start"),
        Watch(CM, since="start", params=_p(labelSelector="sel=yes")),
        Watch(CM, since="start", params=_p(fieldSelector="metadata.name=w")),
    ],
    "watch_send_initial_events": [
        Req("POST", CM, cm("i1", labels={"init": "x"})),
        Req("POST", CM, cm("i2", labels={"init": "x"})),
        Watch(CM, params=_p(sendInitialEvents="true", allowWatchBookmarks="true",
                            resourceVersionMatch="NotOlderThan", labelSelector="init=x")),
        Watch(CM, params=_p(sendInitialEvents="true", allowWatchBookmarks="true")),
        Watch(CM, params=_p(labelSelector="init=x")),
    ],
    "owner_references_background_gc": [
        Req("POST", CM, cm("owner"), save={"uid": "metadata.uid"}),
        Req("POST", CM, cm("dep", ownerReferences=[_owner("owner", "{m:uid}")])),
        Req("POST", CM, cm("other", ownerReferences=[_owner("owner", "{m:uid}"),
                                                      _owner("alive", "{m:uid}x", block=False)])),
        Req("DELETE", CM + "/owner"),
        WaitGone(CM + "/dep"),
        WaitGone(CM + "/other"),
        Req("GET", CM + "/dep"),
    ],
    "owner_references_foreground_gc": [
        Req("POST", CM, cm("owner"), save={"uid": "metadata.uid"}),
        Req("POST", CM, cm("dep", ownerReferences=[_owner("owner", "{m:uid}")])),
        Req("DELETE", CM + "/owner", {"kind": "DeleteOptions", "apiVersion": "v1",
                                      "propagationPolicy": "Foreground"}),
        WaitGone(CM + "/dep"),
        WaitGone(CM + "/owner"),
    ],
    "owner_references_orphan": [
        Req("POST", CM, cm("owner"), save={"uid": "metadata.uid"}),
        Req("POST", CM, cm("dep", ownerReferences=[_owner("owner", "{m:uid}")])),
        Req("DELETE", CM + "/owner", {"kind": "DeleteOptions", "apiVersion": "v1", "propagationPolicy": "Orphan"}),
        WaitGone(CM + "/owner"),
        WaitFor(CM + "/dep", "metadata.ownerReferences", None),
        Req("GET", CM + "/dep"),
    ],
    "events_have_no_garbage_collection_policy": [
        # Deleting an Event ignores any propagation policy (no orphan/foreground finalizer: gone at once),
        # and the garbage collector does not track Events: a dangling owner reference keeps it.
        Req("POST", EVENTS, event("fg"), pick=("metadata.name", "note")),
        Req("DELETE", EVENTS + "/fg", params=_p(propagationPolicy="Foreground")),
        Req("GET", EVENTS + "/fg"),
        Req("POST", EVENTS, event("or"), pick=("metadata.name", "note")),
        Req("DELETE", EVENTS + "/or", {"kind": "DeleteOptions", "apiVersion": "v1", "propagationPolicy": "Orphan"}),
        Req("GET", EVENTS + "/or"),
        Req("POST", CORE_EVENTS, {"apiVersion": "v1", "kind": "Event", "metadata": {
            "name": "kept", "ownerReferences": [_owner("gone", _GONE_UID)]}, "reason": "R", "message": "m",
            "type": "Normal", "involvedObject": {"kind": "ConfigMap", "namespace": "{ns}", "name": "x"}},
            pick=("metadata.name", "metadata.ownerReferences", "reason")),
        Req("POST", CM, cm("collected", ownerReferences=[_owner("gone", _GONE_UID)])),
        WaitGone(CM + "/collected"),
        Req("GET", CORE_EVENTS + "/kept", pick=("metadata.name", "metadata.ownerReferences")),
        Req("DELETE", CORE_EVENTS + "/kept", params=_p(propagationPolicy="Foreground")),
        Req("GET", CORE_EVENTS + "/kept"),
    ],
    "pod_grace_period_outlasts_its_finalizers": [
        # A bound pod's deletion waits for its kubelet (none runs on this node): the garbage collector's
        # orphan finalizer, or a user's, going does not remove it; a zero grace period then does.
        Req("POST", PODS, pod("o"), pick=_POD_PICK),
        Req("DELETE", PODS + "/o", params=_p(propagationPolicy="Orphan"), pick=_POD_PICK),
        WaitFor(PODS + "/o", "metadata.finalizers", None),
        Req("GET", PODS + "/o", pick=_POD_PICK),
        Req("POST", PODS, pod("f", finalizers=["diff.kubeloop.dev/hold"]), pick=_POD_PICK),
        Req("DELETE", PODS + "/f", pick=_POD_PICK),
        Req("PATCH", PODS + "/f", {"metadata": {"finalizers": None}}, MERGE, pick=_POD_PICK),
        Req("GET", PODS + "/f", pick=_POD_PICK),
        Req("DELETE", PODS + "/f", params=_p(gracePeriodSeconds="0"), pick=_POD_PICK),
        WaitGone(PODS + "/f"),
        Req("DELETE", PODS + "/o", params=_p(gracePeriodSeconds="0"), pick=_POD_PICK),
        WaitGone(PODS + "/o"),
    ],
    "pod_update_rules": [
        # What a pod update reports: the new spec's own errors, the containers' (a count change stops
        # there), the active deadline's (raising it stops there), and any other change of the spec, which
        # a PUT without the token volume the ServiceAccount admission added always makes.
        Req("POST", PODS, pod("p", activeDeadlineSeconds=100), pick=_POD_PICK),
        _pod_patch(("remove", "/spec/containers/0/image")),
        _pod_patch(("replace", "/spec/containers/0/image", "")),
        _pod_patch(("replace", "/spec/restartPolicy", "Sometimes")),
        _pod_patch(("replace", "/spec/containers", [])),
        _pod_patch(("add", "/spec/containers/-", {"name": "d", "image": "busybox:1"})),
        _pod_patch(("remove", "/spec/activeDeadlineSeconds")),
        _pod_patch(("replace", "/spec/activeDeadlineSeconds", 200)),
        _pod_patch(("replace", "/spec/activeDeadlineSeconds", 200), ("replace", "/spec/hostname", "h")),
        _pod_patch(("replace", "/spec/activeDeadlineSeconds", 50),
                   ("replace", "/spec/containers/0/image", "busybox:2")),
        _pod_put(pod("p", activeDeadlineSeconds=50)["spec"]),
        _pod_put({"nodeName": "diff-node", "containers": [{"name": "c"}], "activeDeadlineSeconds": 50}),
        _pod_put({**pod("p", activeDeadlineSeconds=50)["spec"], "restartPolicy": "Sometimes"}),
        _pod_put(pod("p")["spec"]),
    ],
    "checks_in_the_real_order": [
        # A body is decoded before anything else is checked (a wrong type is a 400 even without the
        # resourceVersion a Lease's update needs, or with a name that does not match the URL), and an
        # apply's field conflicts come before its resourceVersion precondition.
        Req("POST", LEASES, lease("l", 10), pick=("spec",)),
        Req("PUT", LEASES + "/l", lease("l", "10"), brief=True),
        Req("PUT", LEASES + "/l", lease("other", "10"), brief=True),
        Req("PUT", LEASES + "/l", lease("l", 20)),
        Req("PATCH", LEASES + "/l", lease("l", 30), APPLY, _p(fieldManager="m1"), pick=("spec",)),
        Req("PATCH", LEASES + "/l", {**lease("l", 40), "metadata": {"name": "l", "resourceVersion": "1"}}, APPLY,
            _p(fieldManager="m2")),
        Req("PATCH", LEASES + "/l", {**lease("l", 30), "metadata": {"name": "l", "resourceVersion": "1"}}, APPLY,
            _p(fieldManager="m2")),
    ],
    "workload_names_and_template_generation": [
        # StatefulSet names become pod names and label values; a DaemonSet's template generation is the
        # server's to keep.
        Req("POST", STS, sts("a.b"), pick=_WL_PICK),
        Req("POST", STS, sts("y" * 63), pick=_WL_PICK),
        Req("POST", STS, sts("y" * 64), pick=_WL_PICK),
        Req("POST", STS, {**sts("z"), "spec": {**sts("z")["spec"], "selector": None}}),
        Req("POST", DS, ds("d.e"), pick=_WL_PICK),
        Req("POST", DS, ds("y" * 64), pick=_WL_PICK),
        Req("POST", DS, {**ds("n"), "spec": {**ds("n")["spec"], "selector": None}}),
        Req("PATCH", DS + "/d.e", {"metadata": {"annotations": {"deprecated.daemonset.template.generation": "7"}}},
            MERGE, pick=_WL_PICK),
        Req("PATCH", DS + "/d.e", {"spec": {"minReadySeconds": 3}}, MERGE, pick=_WL_PICK),
        Req("PATCH", DS + "/d.e", {"spec": {"template": {"metadata": {"labels": {"v": "2"}}}}}, MERGE, pick=_WL_PICK),
        Req("PATCH", DS + "/d.e", {"spec": {"selector": {"matchLabels": {"v": "2"}}}}, MERGE, brief=True),
        Req("POST", STS, sts("w"), pick=_WL_PICK),
        Req("PATCH", STS + "/w", {"spec": {"serviceName": "other"}}, MERGE, brief=True),
        Req("PATCH", STS + "/w", {"spec": {"selector": {"matchLabels": {"app": "w", "v": "2"}}}}, MERGE, brief=True),
        Req("PATCH", STS + "/w", {"spec": {"replicas": 0, "minReadySeconds": 4}}, MERGE, pick=_WL_PICK),
    ],
    "crd_validation": [
        # A CRD is validated as the real server does: its name, group, names, scope, versions (one of them
        # the storage version), a structural schema for each, CEL rules that compile.
        *[Req("POST", CRDS, _crd_mutated(m), brief=True) for m in _CRD_CHECKS],
    ],
    "job_generated_selector_follows_the_uid": [
        # A patch changing a Job's uid is refused, and its generated selector and template labels are
        # judged against the uid asked for.
        Req("POST", JOBS, {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j"}, "spec": {
            "suspend": True, "template": {"spec": {"containers": [{"name": "c", "image": "busybox:1"}],
                                                   "restartPolicy": "Never"}}}}, pick=("metadata.name",)),
        Req("PATCH", JOBS + "/j", [{"op": "replace", "path": "/metadata/uid", "value": _GONE_UID}], JSON, brief=True),
        Req("PATCH", JOBS + "/j", [{"op": "replace", "path": "/metadata/uid", "value": _GONE_UID},
                                   {"op": "replace", "path": "/spec/selector", "value": {"matchLabels": {"a": "b"}}}],
            JSON, brief=True),
    ],
    "a_second_delete_changes_the_collectors_finalizers": [
        # An object already being deleted still takes the orphan or foregroundDeletion finalizer a later
        # delete asks for (a pod in its grace period too).
        Req("POST", CM, cm("s", finalizers=["diff.kubeloop.dev/hold"]), pick=("metadata.finalizers",)),
        Req("DELETE", CM + "/s", pick=("metadata.finalizers",)),
        Req("DELETE", CM + "/s", params=_p(propagationPolicy="Orphan"), pick=("metadata.finalizers",)),
        WaitFor(CM + "/s", "metadata.finalizers", ["diff.kubeloop.dev/hold"]),
        Req("DELETE", CM + "/s", params=_p(propagationPolicy="Foreground"), pick=("metadata.finalizers",)),
        WaitFor(CM + "/s", "metadata.finalizers", ["diff.kubeloop.dev/hold"]),
        Req("PATCH", CM + "/s", {"metadata": {"finalizers": None}}, MERGE, pick=("metadata.finalizers",)),
        WaitGone(CM + "/s"),
        Req("POST", PODS, pod("g"), pick=_POD_PICK),
        Req("DELETE", PODS + "/g", pick=_POD_PICK),
        Req("DELETE", PODS + "/g", params=_p(propagationPolicy="Orphan"), pick=_POD_PICK),
        WaitFor(PODS + "/g", "metadata.finalizers", None),
        Req("GET", PODS + "/g", pick=_POD_PICK),
        Req("DELETE", PODS + "/g", params=_p(gracePeriodSeconds="0"), pick=_POD_PICK),
        WaitGone(PODS + "/g"),
    ],
    "strategic_merge_of_finalizers": [
        # A list of scalars merged by a strategic patch: the patch's elements first, then the others.
        Req("POST", CM, cm("m", finalizers=["a.dev/x"]), pick=("metadata.finalizers",)),
        Req("PATCH", CM + "/m", {"metadata": {"finalizers": ["b.dev/y"]}}, STRATEGIC, pick=("metadata.finalizers",)),
        Req("PATCH", CM + "/m", {"metadata": {"finalizers": ["a.dev/x", "c.dev/z"]}}, STRATEGIC,
            pick=("metadata.finalizers",)),
        Req("PATCH", CM + "/m", {"metadata": {"finalizers": None}}, MERGE, pick=("metadata.finalizers",)),
    ],
    "deletecollection": [
        Req("POST", CM, cm("a", labels={"dc": "yes"})),
        Req("POST", CM, cm("b", labels={"dc": "yes"})),
        Req("POST", CM, cm("c", labels={"dc": "no"})),
        Req("DELETE", CM, params=_p(labelSelector="dc=yes")),
        Req("GET", CM, params=_p(labelSelector="dc")),
    ],
    "list_options_are_validated": [
        # apimachinery's ValidateListOptions (one 422 with every cause), then the resourceVersion's parse:
        # 400 on a list, 500 on a watch or a get; sendInitialEvents without bookmarks, or false.
        Req("POST", CM, cm("i", labels={"init": "x"}), pick=("metadata.name",)),
        *[Req("GET", CM, params=p) for p in (
            _p(resourceVersionMatch="Exact"), _p(resourceVersionMatch="NotOlderThan"),
            _p(resourceVersionMatch="Bogus"), _p(resourceVersionMatch="exact", resourceVersion="1"),
            _p(resourceVersionMatch="Exact", resourceVersion="0"),
            _p(resourceVersionMatch="Bogus", **{"continue": "x"}), _p(sendInitialEvents="true"),
            _p(sendInitialEvents="false", resourceVersion="0"), _p(resourceVersion="abc"),
            _p(resourceVersion="-1", limit="1"), _p(resourceVersion="abc", resourceVersionMatch="Bogus"),
            _p(resourceVersionMatch="NotOlderThan", resourceVersion="0", labelSelector="init=x"),
            _p(watch="1", resourceVersionMatch="Exact", resourceVersion="1"),
            _p(watch="1", resourceVersionMatch="NotOlderThan", resourceVersion="0"),
            _p(watch="1", sendInitialEvents="false"), _p(watch="1", resourceVersionMatch="Bogus", **{"continue": "x"}),
            _p(watch="1", sendInitialEvents="true", resourceVersionMatch="Exact"),
            _p(watch="1", sendInitialEvents="true", resourceVersionMatch="NotOlderThan", **{"continue": "x"}),
            _p(watch="1", resourceVersion="abc"))],
        Req("GET", CM + "/i", params=_p(resourceVersion="abc")),
        Req("DELETE", CM, params=_p(resourceVersionMatch="Exact")),
        Req("DELETE", CM, params=_p(resourceVersionMatch="Bogus", resourceVersion="1")),
        Watch(CM, params=_p(sendInitialEvents="true", resourceVersionMatch="NotOlderThan", labelSelector="init=x")),
        Watch(CM, params=_p(sendInitialEvents="false", resourceVersionMatch="NotOlderThan", labelSelector="init=x")),
    ],
    "legacy_watch_paths": [
        # /watch/ paths are watches (of one object when they name it), whatever ?watch says.
        Mark("start", CM),
        Req("POST", CM, cm("a", {"k": "1"})),
        Req("POST", CM, cm("b", {"k": "1"})),
        Req("PATCH", CM + "/a", {"data": {"k": "2"}}, MERGE),
        Watch("/api/v1/watch/namespaces/{ns}/configmaps", since="start"),
        Watch("/api/v1/watch/namespaces/{ns}/configmaps/a", since="start"),
        Watch("/api/v1/watch/namespaces/{ns}/configmaps/a", since="start",
              params=_p(fieldSelector="metadata.name=a")),
        Watch("/api/v1/watch/namespaces/{ns}/configmaps/a", since="start",
              params=_p(fieldSelector="metadata.name=b")),
        Watch("/api/v1/watch/namespaces/{ns}/configmaps", since="start", params=_p(watch="false")),
        Watch("/apis/test.kubeloop.dev/v1/watch/namespaces/{ns}/echoes", since="start"),
        Req("GET", "/api/v1/watch/namespaces/{ns}/configmaps/a/status"),
        Req("POST", "/api/v1/watch/namespaces/{ns}/configmaps", cm("c")),
        Req("GET", "/api/v1/watch/namespaces/{ns}/nothings"),
        Req("GET", "/api/v1/watch/namespaces/{ns}/configmaps", params=_p(resourceVersion="abc")),
    ],
    "size_limits": [
        # A ConfigMap's values (binaryData decoded) and a Secret's decoded data (stringData merged) hold at
        # most 1 MiB; a custom resource must fit etcd's 1.5 MiB request (the real server drops its
        # managedFields to make it fit, but not for an apply); over 2 MiB the etcd client refuses to send.
        Req("POST", CM, cm("full", {"k": "x" * 1048576}), pick=("metadata.name",)),
        Req("POST", CM, cm("over", {"k": "x" * 1048577}), pick=("metadata.name",)),
        Req("POST", CM, {**cm("both", {"k": "x" * 600000}), "binaryData": {"b": "eHh4" * 200000}},
            pick=("metadata.name",)),
        Req("POST", CM, {**cm("dup", {"k": "x"}), "binaryData": {"k": "eA=="}}),
        Req("PATCH", CM + "/full", {"data": {"k": "x" * 1048577}}, MERGE, pick=("metadata.name",)),
        Req("POST", SECRETS, {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s1"},
                              "data": {"k": "eHh4" * 349526}}, pick=("metadata.name",)),
        Req("POST", SECRETS, {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s2"},
                              "data": {"k": "eHh4" * 349525}, "stringData": {"z": "yy"}}, pick=("metadata.name",)),
        Req("POST", SECRETS, {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s3"},
                              "data": {"k": "eHh4" * 349525}}, pick=("metadata.name",)),
        Req("POST", ECHO, echo("a", message="x" * 1400000), pick=("metadata.name", "metadata.managedFields")),
        Req("POST", ECHO, echo("m", message="x" * 1572400), pick=("metadata.name", "metadata.managedFields")),
        Req("POST", ECHO, echo("b", message="x" * 1600000), pick=("metadata.name",)),
        Req("POST", ECHO, echo("c", message="x" * 2500000), pick=("metadata.name",)),
        Req("PATCH", ECHO + "/d", echo("d", message="x" * 1572300), APPLY, _p(fieldManager="m"),
            pick=("metadata.name",)),
        Req("PATCH", ECHO + "/a", {"spec": {"message": "y" * 1572200}}, MERGE, pick=("metadata.managedFields",)),
        Req("PATCH", ECHO + "/a", {"spec": {"message": "y" * 1600000}}, MERGE, pick=("metadata.name",)),
        Req("GET", ECHO + "/a", pick=("spec.message",)),
    ],
    "custom_resource_formats_and_keywords": [
        # format (as kube-openapi's strfmt checks them; an unknown format, or int32, is not checked),
        # min/maxProperties, multipleOf (an integer against the factor truncated), list-type set and map
        # (each second appearance), allOf/anyOf/oneOf/not; CEL rules run unless a type, format, required,
        # enum, too long or too many error blocks them (then a cause says they were not checked).
        Req("POST", CRDS_PATH, keyword_crd(_K), pick=("metadata.name",)),
        WaitFor(f"{CRDS_PATH}/probes.{_K}", "status.conditions.1.status", "True"),
        WaitFor("/apis/" + _K + "/v1", "kind", "APIResourceList"),
        WaitFor(_PROBES, "kind", "ProbeList"),
        _probe("ok", date_time="2026-01-01T00:00:00Z", date="2026-01-01", duration="1h", byte="aGk=",
               uuid="0d6a1bc0-1111-4222-8333-444455556666", ipv4="1.2.3.4", ipv6="::1", cidr="10.0.0.0/8",
               mac="00:11:22:33:44:55", hostname="ab.cd", email="a@b.c", uri="http://x/y", ios=3, obj={"a": "b"},
               set=["a", "b"], map=[{"name": "a"}, {"name": "b"}], any=7, mult=6, multf=1.5, mult25=7.5),
        *[_probe(f"f{i}", **{field: value}) for i, (field, value) in enumerate((
            ("date_time", "nope"), ("date_time", "2026-01-01"), ("date_time", "2026-01-01t00:00:00z"),
            ("date_time", "2026-01-01T00:00:00"), ("date_time", "2026-01-01T25:00:00Z"), ("datetime", "x"),
            ("date", "2026-13-01"), ("date", "2026-1-1"), ("duration", "5 days"), ("duration", "10"),
            ("duration", "P1D"), ("duration", "-1h"), ("byte", "aGk"), ("byte", ""), ("uuid", "nope"),
            ("uuid", "0D6A1BC0111142228333444455556666"), ("uuid4", "0d6a1bc0-1111-3222-8333-444455556666"),
            ("ipv4", "1.2.3"), ("ipv4", "01.2.3.4"), ("ipv4", "::ffff:1.2.3.4"), ("ipv6", "1.2.3.4"),
            ("cidr", "10.0.0.1/8"), ("cidr", "10.0.0.0"), ("mac", "0011.2233.4455"), ("mac", "00:11:22"),
            ("hostname", "a.b"), ("hostname", "my-host"), ("hostname", "a-b.com"), ("hostname", "1a.b"),
            ("email", "A <a@b.c>"), ("email", "nope"), ("uri", "/rel/path"), ("uri", "nope"), ("uri", "http://x y"),
            ("password", ""), ("bsonobjectid", "nope"), ("isbn", "123"), ("creditcard", "1234"), ("ssn", "12"),
            ("hexcolor", "#12"), ("rgbcolor", "rgb(1,2)"), ("int32", "abc"), ("nosuchformat", "any"),
            ("i32", 4294967296)))],
        _probe("obj-max", obj={"a": "1", "b": "2", "c": "3"}), _probe("obj-min", obj={}),
        _probe("one", one={"a": "1", "b": "2"}), _probe("short", short="ab"), _probe("few", few=["a", "b"]),
        _probe("set", set=["a", "b", "a", "a"]), _probe("iset", iset=[1, 2, 1]),
        _probe("map", map=[{"name": "a", "v": 1}, {"name": "a", "v": 2}]),
        _probe("map2", map2=[{"name": "a"}, {"name": "a", "port": 80}]),
        _probe("any", any=3), _probe("one-of-0", one_of={}), _probe("one-of-2", one_of={"a": "x", "b": "y"}),
        _probe("any-of-1", any_of={"b": "xy"}), _probe("all", all=7), _probe("not", **{"not": 6}),
        _probe("arr", arr=[7, 3, 0]), _probe("mult", mult=4), _probe("multf", multf=1.2), _probe("mult25", mult25=7),
        _probe("multi", multi=3),
        _probe("cel", cel=7), _probe("cel-max", cel=11),
        _probe("cel-and-max", cel=7, obj={"a": "1", "b": "2", "c": "3"}),
        _probe("cel-and-dup", mult=9, set=["a", "a"]), _probe("cel-and-format", mult=9, date="x"),
        _probe("cel-and-any", mult=9, any=3),
        Req("DELETE", f"{CRDS_PATH}/probes.{_K}", pick=("metadata.name",)),
        WaitGone(f"{CRDS_PATH}/probes.{_K}"),
        # What the CRD's own validation refuses in a schema, and an unknown key it drops.
        *_bad_keyword(typo={"type": "integer", "minimun": 3, "x-kubernetes-bogus": 1}),
        *_bad_keyword(u={"type": "array", "uniqueItems": True, "items": {"type": "string"}}),
        *_bad_keyword(r={"$ref": "#/definitions/x"}),
        *_bad_keyword(pp={"type": "object", "patternProperties": {"^a": {"type": "string"}}}),
        *_bad_keyword(defs={"type": "object", "definitions": {"a": {"type": "string"}}}),
        *_bad_keyword(sch={"type": "string", "$schema": "x"}),
        *_bad_keyword(items={"type": "array", "items": [{"type": "string"}]}),
        *_bad_keyword(both={"type": "object", "properties": {"a": {"type": "string"}},
                            "additionalProperties": {"type": "string"}}),
        *_bad_keyword(pu={"type": "object", "x-kubernetes-preserve-unknown-fields": False}),
        *_bad_keyword(setobj={"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "object"}}),
        *_bad_keyword(mapnokey={"type": "array", "x-kubernetes-list-type": "map", "items": {"type": "object"}}),
        *_bad_keyword(anyt={"type": "integer", "anyOf": [{"type": "integer", "minimum": 1}]}),
        *_bad_keyword(anyd={"type": "integer", "anyOf": [{"minimum": 1, "description": "d", "default": 2}]}),
        *_bad_keyword(anyn={"type": "integer", "anyOf": [{"nullable": True}], "not": {"title": "t"}}),
        *_bad_keyword(anyx={"type": "integer", "allOf": [{"x-kubernetes-validations": [{"rule": "self > 1"}]}]}),
        *_bad_keyword(ok={"type": "string", "externalDocs": {"url": "http://x"}, "example": "e", "title": "t",
                          "uniqueItems": False}),
    ],
    "status_writes": [
        # A built-in's /status write keeps the writer's metadata (not a pod's owner references, nor a
        # Deployment's labels) and is checked by its status rules; a custom resource's status is pruned and
        # checked by the status schema (its messages name fields from there); an apply names its type.
        Req("POST", CM, cm("o"), save={"owner": "metadata.uid"}, pick=("metadata.name",)),
        *[step for base, body in (
            (PODS, pod("p")), (SVCS, {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"},
                                      "spec": {"ports": [{"port": 80}]}}),
            (DEPLOY, deployment("d", [{"name": "app", "image": "nginx:1"}])), (STS, sts("w")), (DS, ds("w")),
            (JOBS, {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j"}, "spec": {
                "suspend": True, "template": {"spec": {"containers": [{"name": "c", "image": "busybox:1"}],
                                                       "restartPolicy": "Never"}}}}),
            ("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "{ns}-z"}}))
          for step in (
            Req("POST", base, body, pick=("metadata.name", "metadata.labels")),
            Req("PATCH", f"{base}/{body['metadata']['name']}/status", {"metadata": {
                "labels": {"x": "y"}, "annotations": {"a": "b"}, "finalizers": ["x.dev/f"],
                **({} if body["kind"] == "Namespace" else {  # (a namespace has no namespaced owner)
                    "ownerReferences": [_owner("o", "{m:owner}", block=False)]})}}, MERGE,
                # (the annotation sent: the real Deployment controller adds its revision when it gets there)
                pick=("metadata.labels", "metadata.annotations.a", "metadata.finalizers", "metadata.ownerReferences")),
            Req("PATCH", f"{base}/{body['metadata']['name']}/status", {"metadata": {"labels": {"a b": "c"}}}, MERGE,
                brief=True, pick=("metadata.labels",)),
            Req("PATCH", f"{base}/{body['metadata']['name']}", {"metadata": {"finalizers": None,
                                                                            "ownerReferences": None}}, MERGE,
                pick=("metadata.finalizers",)))],
        Req("PATCH", PODS + "/p/status", {"status": {"phase": "Running"}}, MERGE, pick=("status.phase",)),
        Req("PATCH", PODS + "/p/status", {"status": {"phase": "Bogus"}}, MERGE, pick=("status.phase",)),
        Req("PATCH", PODS + "/p/status", {"status": {"conditions": [{"type": "Ready", "status": "Maybe"}]}}, MERGE,
            pick=("status.conditions",)),
        Req("PATCH", PODS + "/p/status", {"status": {"podIP": "nope"}}, MERGE, brief=True),
        Req("PATCH", PODS + "/p/status", {"metadata": {"labels": {"x": "z"}}, "spec": {"nodeName": "other"}}, MERGE,
            pick=("metadata.labels", "spec.nodeName")),
        Req("PATCH", SVCS + "/s/status", {"status": {"loadBalancer": {"ingress": [{"ip": "1.2.3.4"}]}}}, MERGE,
            brief=True),
        Req("PATCH", SVCS + "/s/status", {"status": {"conditions": [{"type": "x", "status": "True"}]}}, MERGE,
            pick=("status",)),
        Req("PATCH", DEPLOY + "/d/status", {"status": {"replicas": -1}}, MERGE, brief=True),
        Req("PATCH", DEPLOY + "/d/status", {"status": {"replicas": 1, "readyReplicas": 2}}, MERGE, brief=True),
        Req("PATCH", DEPLOY + "/d/status", {"status": {"replicas": "x"}}, MERGE, brief=True),
        Req("PATCH", STS + "/w/status", {"status": {"replicas": 0, "readyReplicas": 1}}, MERGE, brief=True),
        Req("PATCH", DS + "/w/status", {"status": {"numberReady": -1}}, MERGE, brief=True),
        Req("PATCH", "/api/v1/namespaces/{ns}-z/status", {"status": {"phase": "Terminating"}}, MERGE),
        Req("POST", ECHO, echo("e"), pick=("metadata.name",)),
        Req("PATCH", ECHO + "/e/status", {"status": {"seen": 5}}, MERGE),
        Req("PATCH", ECHO + "/e/status", {"status": 5}, MERGE),
        Req("PATCH", ECHO + "/e/status", {"status": {"conditions": "x"}}, MERGE),
        Req("PATCH", ECHO + "/e/status", {"status": {"seen": "x", "bogus": 1, "conditions": [{"a": 1}]}}, MERGE),
        Req("PATCH", ECHO + "/e/status", {"status": {"seen": "y"}}, APPLY, _p(fieldManager="m")),
        Req("PATCH", ECHO + "/e/status", {"apiVersion": "test.kubeloop.dev/v1", "kind": "Echo",
                                          "metadata": {"name": "e"}, "status": {"seen": 3}}, APPLY,
            _p(fieldManager="m")),
        Req("PATCH", ECHO + "/e", {"apiVersion": "test.kubeloop.dev/v1", "kind": "Echo", "metadata": {"name": "e"},
                                   "spec": {"copies": "x"}}, APPLY, _p(fieldManager="m")),
        Req("PATCH", CM + "/x", {"apiVersion": "v1", "metadata": {"name": "x"}, "data": {"a": "b"}}, APPLY,
            _p(fieldManager="m")),
        Req("GET", ECHO + "/e"),
        Req("DELETE", "/api/v1/namespaces/{ns}-z", pick=("metadata.name",)),
    ],
    "core_events": [
        # A core v1 Event: without eventTime its involved object is in its namespace; with one, it needs
        # the reporting fields. Go writes its zero structs and times; its involved object is owned whole.
        Req("POST", CORE_EVENTS, core_event("a")),
        Req("POST", CORE_EVENTS, {**core_event("b"), "involvedObject": {"kind": "ConfigMap", "namespace": "other",
                                                                        "name": "a"}}),
        Req("POST", CORE_EVENTS, {**core_event("c"), "involvedObject": {"kind": "ConfigMap", "name": "a"}}),
        Req("POST", CORE_EVENTS, {**core_event("d"), "eventTime": "2026-01-01T00:00:00.000000Z"}),
        Req("POST", CORE_EVENTS, {**core_event("e"), "type": "Odd", "reason": ""}),
        Req("POST", CORE_EVENTS, {**core_event("g"), "eventTime": "2026-01-01T00:00:00.000000Z",
                                  "reportingComponent": "fuzz.kubeloop.dev/c", "reportingInstance": "i",
                                  "action": "Do"}),
        Req("POST", CORE_EVENTS, {**core_event("h"), "eventTime": "2026-01-01T00:00:00.000000Z",
                                  "reportingComponent": "bad comp", "reportingInstance": "i" * 200, "action": "Do"}),
        Req("PUT", CORE_EVENTS + "/a", {**core_event("a"), "message": "changed", "reason": "Other"}),
        Req("PATCH", CORE_EVENTS + "/a", {"involvedObject": {"name": "z"}, "count": 3}, MERGE),
        Req("POST", CORE_EVENTS, {**core_event("i"), "count": -1, "message": "x" * 5000}, pick=("metadata.name",)),
        Req("GET", CORE_EVENTS, params=_p(fieldSelector="involvedObject.name=z")),
        # An apply replaces an atomic map; a core Event takes a finalizer without a domain.
        Req("PATCH", CORE_EVENTS + "/a", {"apiVersion": "v1", "kind": "Event", "metadata": {"name": "a"},
                                          "involvedObject": {"kind": "ConfigMap", "name": "z"}}, APPLY,
            _p(fieldManager="m", force="true"), brief=True),
        Req("PATCH", CORE_EVENTS + "/a", {"apiVersion": "v1", "kind": "Event", "metadata": {"name": "a"},
                                          "involvedObject": {"kind": "ConfigMap", "name": "z", "namespace": "{ns}"}},
            APPLY, _p(fieldManager="m", force="true"), pick=("involvedObject",)),
        Req("POST", CORE_EVENTS, {**core_event("f"), "metadata": {"name": "f", "finalizers": ["nodomain"]}},
            pick=("metadata.finalizers",)),
        Req("PATCH", CORE_EVENTS + "/f", {"metadata": {"finalizers": None}}, MERGE, pick=("metadata.name",)),
    ],
    "what_the_long_fuzz_run_found": [
        # 2026-12-01 (seed 3000): a deletecollection's propagation policy and grace period as query
        # parameters; a Service's status always holds its load balancer; a PUT or an apply to /status
        # creates a Service, not a custom resource; a core Event's name is only a path segment; an owner
        # reference without uid is refused, not an apply conflict.
        Mark("start", LEASES),
        Req("POST", LEASES, lease("a", 10), pick=("metadata.name",)),
        Req("DELETE", LEASES, params=_p(fieldSelector="metadata.name=a", propagationPolicy="Foreground"),
            pick=("items.*.metadata",)),
        WaitGone(LEASES + "/a"),
        Watch(LEASES, since="start"),
        Req("POST", PODS, pod("q"), pick=("metadata.name",)),
        Req("DELETE", PODS + "/q", params=_p(gracePeriodSeconds="0"), pick=_POD_PICK),
        Req("POST", PODS, pod("p", labels={"app": "x"}), pick=("metadata.name",)),
        Req("DELETE", PODS, params=_p(labelSelector="app", gracePeriodSeconds="0", propagationPolicy="Background"),
            pick=("items.*.metadata.name", "items.*.metadata.generation", "items.*.metadata.deletionTimestamp")),
        WaitGone(PODS + "/p"),
        Req("POST", SVCS, {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"},
                           "spec": {"ports": [{"port": 80}]}}, pick=("status",)),
        Req("PATCH", SVCS + "/s/status", {"status": {"loadBalancer": {}}}, MERGE, pick=("status",)),
        Req("PUT", SVCS + "/t/status", {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "t"},
                                        "spec": {"ports": [{"port": 80}]},
                                        "status": {"loadBalancer": {"ingress": [{"ip": "1.2.3.4"}]}}},
            pick=("metadata.name", "status")),
        Req("PATCH", SVCS + "/u/status", {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "u"},
                                          "status": {"loadBalancer": {}}}, APPLY, _p(fieldManager="m"), brief=True),
        Req("PATCH", ECHO + "/missing/status", {"apiVersion": "test.kubeloop.dev/v1", "kind": "Echo",
                                                "metadata": {"name": "missing"}, "status": 5}, APPLY,
            _p(fieldManager="m")),
        Req("POST", CORE_EVENTS, core_event("a..b"), pick=("metadata.name",)),
        Req("POST", CORE_EVENTS, core_event("z" * 254), pick=("metadata.name",)),
        Req("POST", CORE_EVENTS, core_event(".."), brief=True),
        Req("GET", "/api/v1/namespaces/{ns}", pick=("metadata.name",), save={"nsuid": "metadata.uid"}),
        Req("POST", "/api/v1/namespaces", {"metadata": {"name": "{ns}-o"}}, pick=("metadata.name",)),
        Req("PATCH", "/api/v1/namespaces/{ns}-o", {"metadata": {"ownerReferences": [
            {"apiVersion": "v1", "kind": "Namespace", "name": "{ns}", "uid": "{m:nsuid}"}]}}, MERGE,
            pick=("metadata.name",)),
        Req("PATCH", "/api/v1/namespaces/{ns}-o", {"apiVersion": "v1", "kind": "Namespace", "metadata": {
            "name": "{ns}-o", "ownerReferences": [{"apiVersion": "v1", "kind": "Namespace", "name": "{ns}"}]}},
            APPLY, _p(fieldManager="m2"), brief=True),
        Req("DELETE", "/api/v1/namespaces/{ns}-o", pick=("metadata.name",)),
    ],
    "not_found_paths": [
        Req("GET", CM + "/a/status"),
        Req("GET", "/api/v1/namespaces/{ns}/nothings"),
        Req("GET", "/apis/nothing.example.com/v1/things"),
        Req("GET", DEPLOY + "/missing"),
    ],
    "discovery": [
        Req("GET", "/api"),
        Req("GET", "/api/v1", only=_CORE),
        Req("GET", "/apis/apps/v1", only=_APPS),
        Req("GET", "/apis/batch/v1", only=("jobs", "jobs/status", "cronjobs", "cronjobs/status")),
        Req("GET", "/apis/coordination.k8s.io/v1", only=("leases",)),
        Req("GET", "/apis/events.k8s.io/v1", only=("events",)),
        Req("GET", "/apis/apiextensions.k8s.io/v1", only=("customresourcedefinitions",
                                                          "customresourcedefinitions/status")),
        Req("GET", "/apis/test.kubeloop.dev/v1"),
    ],
    "namespace_termination": [
        Req("POST", "/api/v1/namespaces", {"metadata": {"name": "{ns}-t"}}),
        Req("GET", "/api/v1/namespaces/{ns}-t"),
        Req("POST", "/api/v1/namespaces/{ns}-t/configmaps", cm("held", finalizers=["kubeloop.dev/hold"])),
        Req("DELETE", "/api/v1/namespaces/{ns}-t"),
        WaitFor("/api/v1/namespaces/{ns}-t/configmaps/held", "metadata.deletionTimestamp", "<set>"),
        Req("POST", "/api/v1/namespaces/{ns}-t/configmaps", cm("late")),
        Req("PATCH", "/api/v1/namespaces/{ns}-t/configmaps/held", {"metadata": {"finalizers": None}}, MERGE),
        WaitGone("/api/v1/namespaces/{ns}-t"),
        Req("GET", "/api/v1/namespaces/{ns}-t/configmaps/held"),
    ],
    "cel_validation_rules": [
        Req("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", cel_crd(_G)),
        WaitFor("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gizmos." + _G,
                "status.conditions.1.status", "True"),
        WaitFor("/apis/" + _G + "/v1", "kind", "APIResourceList"),
        WaitFor("/apis/" + _G + "/v1/gizmos", "kind", "GizmoList"),  # served, not just discovered
        Req("POST", _GIZMOS, gizmo(_G, "ok", size=3, sel={"operator": "In", "values": ["a"]})),
        Req("POST", _GIZMOS, gizmo(_G, "minmax", minReplicas=3)),
        Req("POST", _GIZMOS, gizmo(_G, "a-much-too-long-name")),
        Req("POST", _GIZMOS, gizmo(_G, "off", mode="off")),
        Req("POST", _GIZMOS, gizmo(_G, "sel", sel={"operator": "Exists", "values": ["x"]})),
        Req("POST", _GIZMOS, gizmo(_G, "many", minReplicas=5, mode="off", sel={"operator": "In"})),
        Req("PATCH", _GIZMOS + "/ok", {"spec": {"size": 2}}, MERGE),
        Req("PATCH", _GIZMOS + "/ok", {"spec": {"size": 4}}, MERGE),
        Req("DELETE", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gizmos." + _G),
    ],
    "crd_registration_schema_and_removal": [
        Req("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd("{ns}.diff.kubeloop.dev")),
        WaitFor("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.{ns}.diff.kubeloop.dev",
                "status.conditions.1.status", "True"),
        WaitFor("/apis/{ns}.diff.kubeloop.dev/v1", "kind", "APIResourceList"),
        WaitFor("/apis/{ns}.diff.kubeloop.dev/v1/widgets", "kind", "WidgetList"),
        Req("POST", "/apis/{ns}.diff.kubeloop.dev/v1/namespaces/{ns}/widgets",
            {"apiVersion": "{ns}.diff.kubeloop.dev/v1", "kind": "Widget", "metadata": {"name": "w"},
             "spec": {"size": 3, "junk": 1, "free": {"any": {"thing": 1}}}}),
        Req("POST", "/apis/{ns}.diff.kubeloop.dev/v1/namespaces/{ns}/widgets",
            {"apiVersion": "{ns}.diff.kubeloop.dev/v1", "kind": "Widget", "metadata": {"name": "bad"},
             "spec": {"size": 11, "mode": "medium", "name": "UPPER", "tags": ["a", "b", "c"]}}),
        Req("POST", "/apis/{ns}.diff.kubeloop.dev/v1/namespaces/{ns}/widgets",
            {"apiVersion": "{ns}.diff.kubeloop.dev/v1", "kind": "Widget", "metadata": {"name": "none"}, "spec": {}}),
        Req("POST", "/apis/{ns}.diff.kubeloop.dev/v1/namespaces/{ns}/widgets",
            {"apiVersion": "{ns}.diff.kubeloop.dev/v1", "kind": "Widget", "metadata": {"name": "typed"},
             "spec": {"size": "3"}}),
        Req("DELETE", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.{ns}.diff.kubeloop.dev"),
        WaitGone("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.{ns}.diff.kubeloop.dev"),
    ],
    # Found by the fuzzer on 2026-12-02 (seeds 4000 and 5000): a Pod is created Pending with its QoS class
    # and a status apply of other fields keeps them; a Job applied into existence with a generateName
    # shares its defaulted labels with its template (the name is the URL's, nothing is generated first);
    # a PUT whose body names another namespace is a 400 even when the object does not exist.
    "fuzz_found_2026_12_02": [
        Req("POST", PODS, {**pod("q"), "spec": {**pod("q")["spec"], "containers": [
            {"name": "c", "image": "busybox:1", "resources": {"limits": {"cpu": "1", "memory": "64Mi"},
                                                             "requests": {"cpu": "1000m"}}}]}},
            pick=("status.phase", "status.qosClass")),
        Req("POST", PODS, pod("p"), pick=("status.phase", "status.qosClass")),
        Req("PATCH", PODS + "/p/status", {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
                                          "status": {"message": "m", "reason": "R"}}, APPLY,
            _p(fieldManager="m2"), pick=("status.phase", "status.message", "status.qosClass")),
        Req("PATCH", JOBS + "/b", {"apiVersion": "batch/v1", "kind": "Job", "metadata": {
            "name": "b", "generateName": "g-"}, "spec": {"suspend": True, "template": {
                "metadata": {"labels": {"app": "f"}},
                "spec": {"containers": [{"name": "c", "image": "busybox:1"}], "restartPolicy": "Never"}}}},
            APPLY, _p(fieldManager="m1", force="true"),
            pick=("metadata.labels.app", "metadata.labels.job-name", "spec.template.metadata.labels.job-name")),
        Req("PUT", DS + "/missing", {"apiVersion": "apps/v1", "kind": "DaemonSet",
                                     "metadata": {"name": "missing", "namespace": "other"},
                                     "spec": {"selector": {"matchLabels": {"app": "w"}}, "template": _WL_TEMPLATE}},
            brief=True),
    ],
    # Found by the fuzzer (2026-12-02, seed 4000): the fields the server defaults are the creator's, so an
    # apply by another manager that changes one conflicts (409) before validation would refuse it.
    "fuzz_found_defaults_are_the_creators": [
        Req("POST", STS, {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "s"}, "spec": {
            "serviceName": "s", "selector": {"matchLabels": {"app": "w"}}, "template": _WL_TEMPLATE}},
            pick=("spec.replicas", "spec.updateStrategy", "spec.podManagementPolicy", "spec.revisionHistoryLimit",
                  "spec.persistentVolumeClaimRetentionPolicy", "spec.template.spec.restartPolicy",
                  "spec.template.spec.dnsPolicy", "spec.template.spec.terminationGracePeriodSeconds")),
        Req("PATCH", STS + "/s", {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "s"}, "spec": {
            "serviceName": "s", "selector": {"matchLabels": {"app": "w"}}, "template": {
                **_WL_TEMPLATE, "spec": {**_WL_TEMPLATE["spec"], "restartPolicy": "Never"}}}},
            APPLY, _p(fieldManager="m2"), brief=True),
        Req("PATCH", STS + "/s", {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "s"}, "spec": {
            "replicas": 2, "podManagementPolicy": "Parallel"}}, APPLY, _p(fieldManager="m2"), brief=True),
        Req("POST", DEPLOY, {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"}, "spec": {
            "selector": {"matchLabels": {"app": "w"}}, "template": _WL_TEMPLATE}},
            pick=("spec.replicas", "spec.strategy", "spec.progressDeadlineSeconds")),
        Req("PATCH", DEPLOY + "/d", {"spec": {"strategy": {"type": "Recreate", "rollingUpdate": None}}}, MERGE,
            pick=("spec.strategy",)),
        Req("GET", DEPLOY + "/d/scale", pick=("spec.replicas",)),
    ],
    # Found by the fuzzer (2026-12-02, seed 8000): a Job without labels is stored without them and takes its
    # template's (the generated ones too) when read, so validation never sees them on its metadata.
    "fuzz_found_job_labels_defaulted_on_read": [
        Req("POST", JOBS, {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "-a"}, "spec": {
            "suspend": True, "template": {"spec": {"restartPolicy": "Never"}}}}, brief=True),
        Req("POST", JOBS, {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j"}, "spec": {
            "suspend": True, "template": {"spec": {"restartPolicy": "Never", "containers": [
                {"name": "c", "image": "busybox:1"}]}}}}, pick=("metadata.labels", "spec.template.metadata.labels")),
        Req("GET", JOBS + "/j", pick=("metadata.labels",)),
    ],
    # Found by the fuzzer (2026-12-02, seed 8000): a PUT that creates (a Service, a Lease) ignores the body's
    # resourceVersion, which a POST refuses.
    "fuzz_found_put_creates_ignoring_resource_version": [
        Req("PUT", "/api/v1/namespaces/{ns}/services/b", {"apiVersion": "v1", "kind": "Service", "metadata": {
            "name": "b", "resourceVersion": "1"}, "spec": {"ports": [{"port": 81, "protocol": "TCP"}]}},
            pick=("metadata.name", "spec.ports.*.port")),
        Req("PUT", "/apis/coordination.k8s.io/v1/namespaces/{ns}/leases/l", {
            "apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": "l", "resourceVersion": "7"},
            "spec": {"holderIdentity": "me"}}, pick=("metadata.name", "spec")),
        Req("POST", "/api/v1/namespaces/{ns}/services", {"apiVersion": "v1", "kind": "Service", "metadata": {
            "name": "c", "resourceVersion": "1"}, "spec": {"ports": [{"port": 81}]}}, brief=True),
    ],
    # Found by the fuzzer (2026-12-02, seed 11000): Namespaces take metadata.name and status.phase only; the
    # kinds that register field labels refuse any other as "not supported", the rest name what they take.
    "fuzz_found_field_labels_per_kind": [
        Req("POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "{ns}-f"}},
            pick=("metadata.name",)),
        *(Req("GET", path, params=_p(fieldSelector=selector), pick=("items.*.metadata.name",))
          for path, selector in (
              ("/api/v1/namespaces", "metadata.namespace={ns}"), ("/api/v1/namespaces", "name={ns}-f"),
              ("/api/v1/namespaces", "metadata.name={ns}-f"),
              ("/api/v1/namespaces", "status.phase=Active,metadata.name={ns}-f"),
              ("/api/v1/namespaces/{ns}/pods", "bogus=x"), ("/api/v1/namespaces/{ns}/pods", "spec.host=n"),
              ("/api/v1/namespaces/{ns}/secrets", "bogus=x"), ("/api/v1/namespaces/{ns}/services", "spec.type=x"),
              ("/api/v1/namespaces/{ns}/services", "bogus=x"), ("/api/v1/namespaces/{ns}/events", "bogus=x"),
              ("/apis/events.k8s.io/v1/namespaces/{ns}/events", "regarding.name=x"),
              ("/apis/events.k8s.io/v1/namespaces/{ns}/events", "involvedObject.name=x"),
              (CM, "bogus=x"), ("/apis/apps/v1/namespaces/{ns}/deployments", "bogus=x"),
              ("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", "metadata.namespace=x"))),
        Req("DELETE", "/api/v1/namespaces/{ns}-f", pick=("metadata.name",)),
    ],
    "fuzz_found_2026_12_02_echo": [
        Req("POST", ECHO, echo("a", message="m0", copies=0)),
        Req("PATCH", ECHO + "/a", {"metadata": {}, "spec": {"message": "m0", "copies": 0, "extra": "x"}}, MERGE),
        Req("DELETE", ECHO + "/a", params=_p(propagationPolicy="Background")),
        Req("PATCH", ECHO + "/a", {**echo("a", message="m0", copies=0), "metadata": {
            "name": "a", "finalizers": ["fuzz.kubeloop.dev/f"]}}, APPLY, _p(fieldManager="m1", force="true")),
        Req("PATCH", ECHO + "/a", {"metadata": {}, "spec": {"message": "m0", "copies": 0, "extra": "x"}}, MERGE),
        Req("PATCH", ECHO + "/a", {"metadata": {"finalizers": None}}, MERGE),
    ],
    "namespace_spec_finalizers_through_finalize": [
        # spec.finalizers: "kubernetes" is added on create; validated; only /finalize (PUT) changes them.
        Req("POST", NSS, ns_with("{ns}-a", ["example.com/two", "example.com/hold"]), pick=_NSF),
        Req("POST", NSS, ns_with("{ns}-b", ["kubernetes", "example.com/x"]), pick=_NSF),
        Req("POST", NSS, ns_with("{ns}-c", ["nope"]), brief=True),
        Req("POST", NSS, ns_with("{ns}-c", ["Not/A Finalizer", "x.io/"])),
        Req("PATCH", NSS + "/{ns}-a", {"metadata": {"labels": {"a": "1"}}, "spec": {"finalizers": []}}, MERGE,
            pick=_NSF),
        Req("PUT", NSS + "/{ns}-a", ns_with("{ns}-a", ["example.com/put"], labels={"a": "2"}), pick=_NSF),
        Req("PUT", NSS + "/{ns}-a/finalize", {**ns_with("{ns}-a", ["example.com/two", "kubernetes",
                                                                   "example.com/hold"], labels={"a": "3"}),
                                              "status": {"phase": "Terminating"}}, pick=_NSF),
        Req("GET", NSS + "/{ns}-a", pick=("metadata.managedFields",)),
        Req("PUT", NSS + "/{ns}-a/finalize", ns_with("{ns}-a", ["Not A Finalizer", "plain"])),
        Req("PATCH", NSS + "/{ns}-a/finalize", {"spec": {"finalizers": []}}, MERGE),
        Req("GET", NSS + "/{ns}-a/finalize"),
        Req("PUT", NSS + "/{ns}-nope/finalize", ns_with("{ns}-nope", [])),
        Req("POST", NSS + "/{ns}-a/configmaps", cm("content", {"k": "v"}), pick=("metadata.name",)),
        Req("DELETE", NSS + "/{ns}-a", pick=_NSF),
        # The namespace controller empties it, then takes "kubernetes" away (the rest sorted) and leaves it.
        WaitFor(NSS + "/{ns}-a", "spec.finalizers", ["example.com/hold", "example.com/two"], timeout=60),
        Req("GET", NSS + "/{ns}-a/configmaps/content"),
        Req("DELETE", NSS + "/{ns}-a", pick=_NSF),
        Req("PUT", NSS + "/{ns}-a/finalize", ns_with("{ns}-a", ["example.com/two"]), pick=_NSF),
        Req("PUT", NSS + "/{ns}-a/finalize", ns_with("{ns}-a", []), pick=_NSF),
        WaitGone(NSS + "/{ns}-a"),
        Req("DELETE", NSS + "/{ns}-b", pick=_NSF),
        WaitFor(NSS + "/{ns}-b", "spec.finalizers", ["example.com/x"], timeout=60),
        Req("PUT", NSS + "/{ns}-b/finalize", ns_with("{ns}-b", ["example.com/x", "example.com/y"]), pick=_NSF),
        Req("PUT", NSS + "/{ns}-b/finalize", ns_with("{ns}-b"), pick=_NSF),
        WaitGone(NSS + "/{ns}-b"),
    ],
    "namespace_held_by_metadata_finalizers_after_spec": [
        # Emptied and finalized, a namespace with a metadata finalizer stays until that goes; a spec
        # finalizer may still be added through /finalize (a metadata one may not, once deleting).
        Req("POST", NSS, ns_with("{ns}-m", finalizers=["example.com/meta"]), pick=_NSF),
        Req("POST", NSS + "/{ns}-m/configmaps", cm("content"), pick=("metadata.name",)),
        Req("DELETE", NSS + "/{ns}-m", pick=_NSF),
        WaitFor(NSS + "/{ns}-m", "spec.finalizers", None, timeout=60),
        Req("GET", NSS + "/{ns}-m", pick=_NSF),
        Req("GET", NSS + "/{ns}-m/configmaps/content"),
        Req("PUT", NSS + "/{ns}-m/finalize", ns_with("{ns}-m", ["example.com/late"]), pick=_NSF),
        Req("PATCH", NSS + "/{ns}-m", {"metadata": {"finalizers": None}}, MERGE, pick=_NSF),
        Req("PUT", NSS + "/{ns}-m/finalize", ns_with("{ns}-m", [], finalizers=["example.com/meta"]), brief=True),
        Req("PUT", NSS + "/{ns}-m/finalize", ns_with("{ns}-m", []), pick=_NSF),
        WaitGone(NSS + "/{ns}-m"),
        Req("GET", "/api/v1", only=("namespaces", "namespaces/finalize", "namespaces/status")),
        # Finalized before its delete: the delete marks it, the controller finds nothing to finalize.
        Req("POST", NSS, ns_with("{ns}-e"), pick=_NSF),
        Req("PUT", NSS + "/{ns}-e/finalize", ns_with("{ns}-e", []), pick=_NSF),
        Req("DELETE", NSS + "/{ns}-e", pick=_NSF),
        Req("GET", NSS + "/{ns}-e", pick=_NSF),
        Req("DELETE", NSS + "/{ns}-e", pick=_NSF),
        WaitGone(NSS + "/{ns}-e"),
    ],
    "put_with_a_resource_version_that_is_not_a_number": [
        Req("POST", CM, cm("a", {"k": "v"})),
        Req("PUT", CM + "/a", cm("a", {"k": "w"}, resourceVersion="abc")),
        Req("PUT", CM + "/a", cm("a", {"k": "w"}, resourceVersion="-1")),
        Req("PUT", CM + "/a", cm("a", {"k": "w"}, resourceVersion="99999999999999999999999")),
        Req("PUT", CM + "/a", cm("a", {"k": "w"}, resourceVersion="0")),
        Req("PUT", CM + "/a", cm("a", {"k": "u"}, resourceVersion="00")),
        Req("PATCH", CM + "/a", {"metadata": {"resourceVersion": "abc"}}, MERGE),
        Req("PATCH", CM + "/a", [{"op": "replace", "path": "/metadata/resourceVersion", "value": "1.5"}], JSON),
        Req("PATCH", CM + "/a", cm("a", {"k": "x"}, resourceVersion="abc"), APPLY, _p(fieldManager="m")),
        Req("POST", CM, cm("b", resourceVersion="abc")),
        Req("PUT", CM + "/missing", cm("missing", resourceVersion="abc")),
        Req("POST", ECHO, echo("e")),
        Req("PUT", ECHO + "/e", {**echo("e"), "metadata": {"name": "e", "resourceVersion": "x1"}}),
        Req("PUT", ECHO + "/e", {**echo("e"), "metadata": {"name": "e", "resourceVersion": "0"}}),
        Req("PUT", LEASES + "/new", {**lease("new", 5), "metadata": {"name": "new", "resourceVersion": "abc"}}),
        Req("GET", CM + "/a", pick=("data",)),
    ],
    "a_body_of_another_kind_posted_to_a_collection": [
        # A built-in endpoint decodes the body into its own type: another kind is a 400 (not registered at
        # that version, or no conversion), as is another group/version of it; a custom resource endpoint
        # refuses another group/version (400), then another kind (its validator's 422).
        Req("POST", CM, {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}, "data": {"k": "dg=="}}),
        Req("POST", CM, {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}}),
        Req("POST", CM, {"apiVersion": "apps/v1", "kind": "ConfigMap", "metadata": {"name": "q"}}),
        Req("POST", CM, {"apiVersion": "v1", "kind": "Nothing", "metadata": {"name": "n"}}),
        Req("POST", SECRETS, cm("c", {"k": "v"})),
        Req("PUT", CM + "/s", {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}}),
        Req("POST", ECHO, {**echo("e"), "kind": "Other"}),
        Req("POST", ECHO, {**echo("e"), "apiVersion": "test.kubeloop.dev/v9"}),
        Req("POST", ECHO, {**echo("e"), "apiVersion": "v1"}),
        Req("POST", ECHO, {**echo("e"), "apiVersion": "v1", "kind": "ConfigMap"}),
        Req("POST", ECHO, echo("e"), save={"rv": "metadata.resourceVersion"}),
        Req("PUT", ECHO + "/e", {**echo("e"), "kind": "Other"}),
        Req("PUT", ECHO + "/e", {**echo("e"), "kind": "Other", "metadata": {"name": "e", "resourceVersion": _RV}}),
        Req("PUT", ECHO + "/e", {**echo("e"), "apiVersion": "v1", "metadata": {"name": "e", "resourceVersion": _RV}}),
        Req("POST", CM, {"kind": "Secret", "metadata": {"name": "k"}}),
        Req("POST", CM, {"apiVersion": "apps/v1", "metadata": {"name": "k"}}),
        Req("POST", CM, {"apiVersion": "nothing.example.com/v1", "kind": "ConfigMap", "metadata": {"name": "k"}}),
        Req("POST", CM, {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "k"}}),
        Req("POST", CM, {"apiVersion": "v1", "kind": "ConfigMapList", "metadata": {"name": "k"}}),
        Req("POST", CM, {"apiVersion": "v1", "kind": "Status", "metadata": {"name": "k"}}),
        Req("POST", STS, {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "k"}}),
        Req("POST", "/apis/batch/v1/namespaces/{ns}/jobs", {"apiVersion": "apps/v1", "kind": "DaemonSet",
                                                             "metadata": {"name": "k"}}),
        Req("POST", "/apis/events.k8s.io/v1/namespaces/{ns}/events", {"apiVersion": "v1", "kind": "Event",
                                                                       "metadata": {"name": "k"}}),
        Req("POST", "/apis/coordination.k8s.io/v1/namespaces/{ns}/leases", {"apiVersion": "v1", "kind": "Pod",
                                                                             "metadata": {"name": "k"}}),
        Req("POST", CRDS, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "k"}}),
        Req("GET", CM + "/s"),
    ],
    # Found by the second blind suite (2026-12-03): a JSON patch's test of a missing member against null
    # (kube-rs's finalizer helper), fieldValidation's four spellings, a strict patch judged on the patched
    # object (a strategic one on the patch), a custom resource's metadata decoded as ObjectMeta, the
    # deletion fields only a DELETE sets, managedFields reset by a client, a stale uid's storage message.
    "blind2_found_patch_and_metadata_rules": [
        Req("POST", ECHO, echo("rs")),
        Req("PATCH", ECHO + "/rs", [{"op": "test", "path": "/metadata/finalizers", "value": None},
                                    {"op": "add", "path": "/metadata/finalizers", "value": ["kube.rs/cleanup"]}],
            JSON),
        Req("PATCH", ECHO + "/rs", [{"op": "test", "path": "/metadata/finalizers", "value": None}], JSON),
        Req("PATCH", ECHO + "/rs", [{"op": "test", "path": "/metadata/finalizers/0", "value": "kube.rs/cleanup"},
                                    {"op": "remove", "path": "/metadata/finalizers/0"}], JSON),
        Req("PATCH", ECHO + "/rs", {"metadata": {"labels": {"n": 1}}}, MERGE, brief=True),
        Req("PATCH", ECHO + "/rs", {"metadata": {"annotations": {"b": True}}}, MERGE, brief=True),
        Req("POST", CM, cm("fv", {"k": "v"}), params={"fieldValidation": "Pedantic"}),
        Req("POST", CM, cm("fv", {"k": "v"}), params={"fieldValidation": "strict"}),
        Req("POST", CM, cm("fv", {"k": "v"}), params={"fieldValidation": "Warn"}),
        Req("PUT", CM + "/fv", cm("fv", {"k": "w"}), params={"fieldValidation": "Pedantic"}),
        Req("PATCH", CM + "/fv", {"data": {"k": "x"}}, MERGE, params={"fieldValidation": "ignore"}),
        Req("PATCH", CM + "/fv", {"extra": 1}, MERGE, params={"fieldValidation": "Strict"}, brief=True),
        Req("PATCH", CM + "/fv", [{"op": "add", "path": "/extra", "value": 1}], JSON,
            params={"fieldValidation": "Strict"}, brief=True),
        Req("PATCH", CM + "/fv", {"extra": 1}, STRATEGIC, params={"fieldValidation": "Strict"}),
        Req("PATCH", CM + "/fv", {"extra": 1, "data": {"k": "y"}}, MERGE),
        Req("PATCH", CM + "/fv", {**cm("fv", {"k": "z"}), "extra": 1}, APPLY,
            params={"fieldManager": "tool", "fieldValidation": "Strict"}),
        Req("PATCH", CM + "/fv", {"metadata": {"deletionTimestamp": "2030-01-01T00:00:00Z"}}, MERGE),
        Req("PATCH", CM + "/fv", {"metadata": {"deletionGracePeriodSeconds": 5}}, MERGE),
        Req("PATCH", CM + "/fv", {"metadata": {"creationTimestamp": "2020-01-01T00:00:00Z", "generation": 7}},
            MERGE),
        Req("PATCH", CM + "/fv", {"metadata": {"managedFields": []}, "data": {"k": "reset"}}, MERGE),
        Req("PATCH", CM + "/fv", {"data": {"k": "untracked"}}, MERGE),
        Req("PUT", CM + "/fv", {**cm("fv", {"k": "u"}), "metadata": {
            "name": "fv", "uid": "0b2f3c4d-0000-4000-8000-000000000042"}}),
        Req("GET", CM + "/fv"),
    ],
    # Found by the second blind suite (2026-12-03), the rest: request checks, Secret keys, pod template and
    # workload rules, a Scale of 0, a Pod's priority and tolerations, Service rules, custom resource scale.
    "blind2_found_requests_and_workload_rules": [
        Req("POST", CM, cm("a", {"k": "v"})),
        Req("PATCH", CM + "/a", {"op": "add", "path": "/data/z", "value": "1"}, JSON),
        Req("PATCH", CM + "/a", {**cm("b", {"k": "v"})}, APPLY, params={"fieldManager": "kubectl"}),
        Req("PATCH", CM + "/a", cm("a", {"k": "w"}), APPLY, params={"fieldManager": "m" * 129}),
        Req("POST", CM, cm("b", {"k": "v"}), params={"fieldManager": "m" * 129}),
        Req("GET", CM, params={"limit": "1"}, save={"next": "metadata.continue"}, pick=("items.*.metadata.name",)),
        Req("GET", CM, params={"limit": "1", "continue": "{m:next}", "resourceVersion": "1"}),
        Req("GET", CM + "/a", params={"resourceVersion": "999999999999"}),
        Req("POST", SECRETS, {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "dots"},
                              "data": {"..": "eA=="}}),
        Req("POST", SECRETS, {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "dots"},
                              "data": {".": "eA==", "..x": "eA==", "ok": "eA=="}}),
        Req("POST", CM, cm("dot", {"..": "x"})),
        Req("POST", ECHO, echo("e")),
        Req("PATCH", ECHO + "/e", {"spec": {"message": "x"}}, "application/yaml"),
        Req("DELETE", ECHO, params={"dryRun": "All"}, pick=("kind", "items.*.metadata.name")),
        Req("GET", ECHO, pick=("items.*.metadata.name",)),
        Req("POST", DEPLOY, deployment("pull", [{"name": "c", "image": "busybox:1", "imagePullPolicy": "Sometimes"}])),
        Req("POST", DEPLOY, deployment("mount", [{"name": "c", "image": "busybox:1", "volumeMounts": [
            {"name": "data", "mountPath": "/data"}]}])),
        Req("POST", DEPLOY, {**deployment("bg", [{"name": "c", "image": "busybox:1"}]),
                             "spec": {**deployment("bg", [{"name": "c", "image": "busybox:1"}])["spec"],
                                      "strategy": {"type": "BlueGreen"}}}),
        Req("POST", DEPLOY, {**deployment("ports", [{"name": "c", "image": "busybox:1", "ports": [
            {"containerPort": 8080, "name": "http"}]}]), "spec": {**deployment("ports", [
                {"name": "c", "image": "busybox:1", "ports": [{"containerPort": 8080, "name": "http"}]}])["spec"],
                "replicas": 0}}, pick=("spec.template.spec.containers.*.ports",)),
        Req("PUT", DEPLOY + "/ports/scale", {"apiVersion": "autoscaling/v1", "kind": "Scale",
                                             "metadata": {"name": "ports"}, "spec": {"replicas": 0}},
            pick=("kind", "spec", "status.replicas")),
        Req("POST", STS, {**sts("neg"), "spec": {**sts("neg")["spec"], "ordinals": {"start": -1}}}),
        Req("POST", STS, {**sts("bogus"), "spec": {**sts("bogus")["spec"], "persistentVolumeClaimRetentionPolicy": {
            "whenDeleted": "Bogus"}}}, brief=True),
        Req("POST", STS, {**sts("nosvc"), "spec": {k: v for k, v in sts("nosvc")["spec"].items()
                                                   if k != "serviceName"}}, pick=("spec.serviceName",)),
        Req("POST", PODS, pod("p"), pick=("spec.priority", "spec.preemptionPolicy", "spec.tolerations")),
        Req("PATCH", PODS + "/p", {"spec": {"tolerations": [{"key": "example.com/gpu", "operator": "Exists",
                                                             "effect": "NoSchedule"}]}}, STRATEGIC,
            pick=("spec.tolerations",)),
        Req("PATCH", PODS + "/p", {"spec": {"tolerations": []}}, MERGE, brief=True),
        Req("POST", SVCS, {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "np-bad"}, "spec": {
            "type": "NodePort", "selector": {"app": "x"}, "ports": [{"port": 80, "nodePort": 80}]}}),
        Req("POST", SVCS, {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "local"}, "spec": {
            "selector": {"app": "x"}, "ports": [{"port": 80}], "externalTrafficPolicy": "Local"}}),
        Req("POST", SVCS, {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "dual"}, "spec": {
            "selector": {"app": "x"}, "ports": [{"port": 80}], "ipFamilyPolicy": "RequireDualStack"}}, brief=True),
        Req("POST", SVCS, {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "np"}, "spec": {
            "type": "NodePort", "selector": {"app": "x"}, "ports": [{"port": 80}]}},
            pick=("spec.type", "spec.externalTrafficPolicy")),
        Req("PATCH", SVCS + "/np", {"spec": {"type": "ClusterIP", "ports": [{"port": 80, "nodePort": None}]}}, MERGE,
            pick=("spec.type", "spec.externalTrafficPolicy", "spec.ports.*.nodePort")),
        Req("DELETE", SVCS + "/np", pick=("kind",)),
        Req("POST", "/apis/batch/v1/namespaces/{ns}/cronjobs", {
            "apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "always"}, "spec": {
                "schedule": "@daily", "jobTemplate": {"spec": {"template": {"spec": {
                    "restartPolicy": "Always", "containers": [{"name": "c", "image": "busybox:1"}]}}}}}}),
    ],
    # Both Event APIs read one store (events.k8s.io Events are core Events); the core API's computed
    # "source" field; events.k8s.io's validation errors named as core Events.
    "blind2_found_one_event_store": [
        Req("POST", CORE_EVENTS, core_event("c.1")),
        Req("GET", EVENTS + "/c.1"),
        Req("POST", EVENTS, event("v.1")),
        Req("GET", CORE_EVENTS + "/v.1"),
        Req("PATCH", EVENTS + "/v.1", {"series": {"count": 2, "lastObservedTime": "2026-01-01T00:05:00.000000Z"}},
            MERGE),
        Req("GET", CORE_EVENTS + "/v.1", pick=("series", "count", "message")),
        Req("PATCH", EVENTS + "/v.1", {"reason": "Other"}, MERGE),
        Req("PATCH", EVENTS + "/v.1", {"note": "x", "action": "Other"}, MERGE),
        Req("PATCH", CORE_EVENTS + "/c.1", {"reason": "Other"}, MERGE, pick=("reason",)),
        Req("GET", CORE_EVENTS, params={"fieldSelector": "source=diffcore"}, pick=("items.*.metadata.name",)),
        Req("GET", CORE_EVENTS, params={"fieldSelector": "source=diff.kubeloop.dev/c"},
            pick=("items.*.metadata.name",)),
        Req("GET", CORE_EVENTS, params={"fieldSelector": "reportingComponent=diff.kubeloop.dev/c"},
            pick=("items.*.metadata.name",)),
        Req("GET", EVENTS, params={"fieldSelector": "reason=Did"}, pick=("items.*.metadata.name",)),
        Req("POST", EVENTS, {**event("v.2"), "series": {"count": 1,
                                                        "lastObservedTime": "2026-01-01T00:05:00.000000Z"}}),
        Req("DELETE", EVENTS + "/c.1", pick=("kind",)),
        Req("GET", CORE_EVENTS + "/c.1"),
        Req("GET", EVENTS, pick=("items.*.metadata.name",)),
    ],
    # Server-side apply of keyed lists: a Deployment's containers by name, a custom resource's
    # x-kubernetes-list-type map by its keys; a Scale of a CRD without a selector path.
    "blind2_found_apply_of_keyed_lists": [
        Req("POST", DEPLOY, deployment("mesh", [{"name": "web", "image": "nginx:1.27"}]),
            params={"fieldManager": "flux"}, pick=("metadata.generation",)),
        Req("PATCH", DEPLOY + "/mesh", {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "mesh"},
                                        "spec": {"template": {"spec": {"containers": [
                                            {"name": "proxy", "image": "envoy:1.31"}]}}}}, APPLY,
            params={"fieldManager": "injector"}, pick=("spec.template.spec.containers.*.name", "metadata.generation")),
        Req("PATCH", DEPLOY + "/mesh", {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "mesh"},
                                        "spec": {"template": {"spec": {"containers": [
                                            {"name": "proxy", "image": "envoy:1.31"},
                                            {"name": "web", "image": "nginx:1.26"}]}}}}, APPLY,
            params={"fieldManager": "injector"}),
        Req("PATCH", DEPLOY + "/mesh", {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "mesh"},
                                        "spec": {"template": {"spec": {"containers": []}}}}, APPLY,
            params={"fieldManager": "injector"}, pick=("spec.template.spec.containers.*.name",)),
        Req("GET", DEPLOY + "/mesh", pick=("spec.template.spec.containers.*.name",)),
        Req("POST", CRDS, {**crd("{ns}.keyed.kubeloop.dev"), "spec": {**crd("{ns}.keyed.kubeloop.dev")["spec"],
            "versions": [{"name": "v1", "served": True, "storage": True, "subresources": {
                "scale": {"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas"}},
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object", "properties": {
                        "replicas": {"type": "integer"},
                        "ports": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": [
                            "name"], "items": {"type": "object", "required": ["name"], "properties": {
                                "name": {"type": "string"}, "port": {"type": "integer"}}}},
                        "tags": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}}}},
                    "status": {"type": "object", "properties": {"replicas": {"type": "integer"}}}}}}}]}}),
        WaitFor(CRDS + "/widgets.{ns}.keyed.kubeloop.dev", "status.conditions.1.status", "True"),
        WaitFor("/apis/{ns}.keyed.kubeloop.dev/v1/widgets", "kind", "WidgetList"),
        Req("PATCH", "/apis/{ns}.keyed.kubeloop.dev/v1/namespaces/{ns}/widgets/w", {
            "apiVersion": "{ns}.keyed.kubeloop.dev/v1", "kind": "Widget", "metadata": {"name": "w"},
            "spec": {"replicas": 1, "ports": [{"name": "http", "port": 80}], "tags": ["a"]}}, APPLY,
            params={"fieldManager": "a"}),
        Req("PATCH", "/apis/{ns}.keyed.kubeloop.dev/v1/namespaces/{ns}/widgets/w", {
            "apiVersion": "{ns}.keyed.kubeloop.dev/v1", "kind": "Widget", "metadata": {"name": "w"},
            "spec": {"ports": [{"name": "metrics", "port": 9090}], "tags": ["b"]}}, APPLY,
            params={"fieldManager": "b"}),
        Req("PATCH", "/apis/{ns}.keyed.kubeloop.dev/v1/namespaces/{ns}/widgets/w", {
            "apiVersion": "{ns}.keyed.kubeloop.dev/v1", "kind": "Widget", "metadata": {"name": "w"},
            "spec": {"ports": [{"name": "metrics", "port": 9191}]}}, APPLY, params={"fieldManager": "a"}),
        Req("PATCH", "/apis/{ns}.keyed.kubeloop.dev/v1/namespaces/{ns}/widgets/w", {
            "apiVersion": "{ns}.keyed.kubeloop.dev/v1", "kind": "Widget", "metadata": {"name": "w"},
            "spec": {"ports": []}}, APPLY, params={"fieldManager": "b"}),
        Req("GET", "/apis/{ns}.keyed.kubeloop.dev/v1/namespaces/{ns}/widgets/w/scale"),
        Req("GET", "/apis/{ns}.keyed.kubeloop.dev/v1/namespaces/{ns}/widgets/w"),
        Req("DELETE", CRDS + "/widgets.{ns}.keyed.kubeloop.dev", pick=("kind",)),
    ],
    # A Job's per-index backoff, pod failure and success policies, replacement policy and managedBy, as
    # batch validation of kube-apiserver 1.35.4 checks them (blind2's job_validation_and_immutability).
    "job_policies": [
        Req("POST", JOBS, job_with("per-index", backoffLimitPerIndex=1, completions=2)),
        Req("POST", JOBS, job_with("failed-alone", maxFailedIndexes=1, completionMode="Indexed", completions=2)),
        Req("POST", JOBS, job_with("too-many-failed", backoffLimitPerIndex=1, maxFailedIndexes=3,
                                   completionMode="Indexed", completions=2)),
        Req("POST", JOBS, job_with("indexed", backoffLimitPerIndex=1, maxFailedIndexes=1, completionMode="Indexed",
                                   completions=2), pick=_JOB_PICK),
        Req("POST", JOBS, job_with("x" * 62, completionMode="Indexed", completions=11)),
        Req("POST", JOBS, job_with("pfp-onfailure", restart="OnFailure", podFailurePolicy={"rules": [
            {"action": "FailJob", "onExitCodes": {"operator": "In", "values": [42]}}]})),
        Req("POST", JOBS, job_with("pfp-bad", podFailurePolicy={"rules": [
            {"action": "Explode", "onExitCodes": {"operator": "Like", "values": [3, 0, 3, 1],
                                                  "containerName": "nobody"}},
            {"action": "FailIndex", "onPodConditions": [{"type": "bad type!", "status": "Maybe"}]},
            {"action": "Ignore"},
            {"onExitCodes": {"operator": "In", "values": []}, "onPodConditions": [{"type": "DisruptionTarget"}]}]})),
        Req("POST", JOBS, job_with("pfp", podFailurePolicy={"rules": [
            {"action": "FailJob", "onExitCodes": {"operator": "In", "values": [42]}},
            {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]}]}), pick=_JOB_PICK),
        Req("PATCH", JOBS + "/pfp", {"spec": {"podFailurePolicy": {"rules": [
            {"action": "Count", "onExitCodes": {"operator": "NotIn", "values": [0]}}]}}}, MERGE, brief=True),
        Req("POST", JOBS, job_with("replace", podReplacementPolicy="TerminatingOrFailed", podFailurePolicy={
            "rules": [{"action": "FailJob", "onExitCodes": {"operator": "In", "values": [1]}}]})),
        Req("POST", JOBS, job_with("replace2", podReplacementPolicy="Sometimes")),
        Req("POST", JOBS, job_with("success", completions=2, successPolicy={"rules": [{"succeededCount": 1}]})),
        Req("POST", JOBS, job_with("success-bad", completions=3, completionMode="Indexed", successPolicy={"rules": [
            {}, {"succeededIndexes": "0,2-1"}, {"succeededIndexes": "0-1", "succeededCount": 3},
            {"succeededIndexes": "x"}, {"succeededIndexes": "5"}, {"succeededIndexes": "0-1-2"}]})),
        Req("POST", JOBS, job_with("success-ok", completions=3, completionMode="Indexed", successPolicy={"rules": [
            {"succeededIndexes": "0,2", "succeededCount": 1}]}), pick=_JOB_PICK),
        Req("POST", JOBS, job_with("success-empty", completions=3, completionMode="Indexed",
                                   successPolicy={"rules": []})),
        Req("POST", JOBS, job_with("managed", managedBy="kueue")),
        Req("POST", JOBS, job_with("managed2", managedBy="Kueue.x-k8s.io/multi kueue")),
        Req("POST", JOBS, job_with("managed3", managedBy="kueue.x-k8s.io/" + "m" * 60)),
        Req("POST", JOBS, job_with("managed-ok", managedBy="kueue.x-k8s.io/multikueue"), pick=_JOB_PICK),
        Req("PATCH", JOBS + "/managed-ok", {"spec": {"managedBy": "example.com/other"}}, MERGE, brief=True),
        Req("PATCH", JOBS + "/indexed", {"spec": {"backoffLimitPerIndex": 2}}, MERGE, brief=True),
    ],
    # A workload's spec.selector as ValidateLabelSelector and LabelSelectorAsSelector judge it: operators,
    # values, keys, expressions matching (or not) the template's labels, per kind (blind2's "Like").
    "workload_label_selectors": [
        Req("POST", DEPLOY, with_selector(deployment("like", [{"name": "c", "image": "busybox:1"}]), {
            "matchExpressions": [{"key": "app", "operator": "Like", "values": ["like"]}]})),
        Req("POST", DEPLOY, with_selector(deployment("novalues", [{"name": "c", "image": "busybox:1"}]), {
            "matchExpressions": [{"key": "app", "operator": "In"}, {"key": "bad key!", "operator": "Exists",
                                                                   "values": ["x"]}]})),
        Req("POST", DEPLOY, with_selector(deployment("badvalue", [{"name": "c", "image": "busybox:1"}]), {
            "matchLabels": {"app": "badvalue"}, "matchExpressions": [
                {"key": "tier", "operator": "NotIn", "values": ["not ok"]}]})),
        Req("POST", DEPLOY, with_selector(deployment("nomatch", [{"name": "c", "image": "busybox:1"}]), {
            "matchExpressions": [{"key": "app", "operator": "In", "values": ["other"]}]})),
        Req("POST", DEPLOY, with_selector(deployment("expr", [{"name": "c", "image": "busybox:1"}]), {
            "matchExpressions": [{"key": "app", "operator": "In", "values": ["expr", "x"]},
                                 {"key": "gone", "operator": "DoesNotExist"}]}), pick=("spec.selector",)),
        Req("POST", STS, with_selector(sts("like"), {"matchExpressions": [
            {"key": "app", "operator": "Like", "values": ["w"]}]})),
        Req("POST", STS, with_selector(sts("notin"), {"matchExpressions": [
            {"key": "app", "operator": "NotIn", "values": ["w"]}]})),
        Req("POST", DS, with_selector(ds("like"), {"matchExpressions": [
            {"key": "app", "operator": "Like", "values": ["w"]}]})),
        Req("POST", DS, with_selector(ds("exists"), {"matchExpressions": [{"key": "app", "operator": "Exists"}]}),
            pick=("spec.selector",)),
        Req("POST", JOBS, {**job_with("manual", manualSelector=True, selector={"matchExpressions": [
            {"key": "pick", "operator": "Like", "values": ["me"]}]})}),
        Req("POST", JOBS, {**job_with("manual2", manualSelector=True, selector={"matchLabels": {"pick": "me"}})}),
    ],
    # A custom scheduler binding pods (kube-apiserver 1.35.4's BindingREST): the subresource and the
    # bindings collection, their checks and refusals, what a binding changes in the pod.
    "pods_bound_by_a_scheduler": [
        Req("POST", PODS, unbound("p", labels={"app": "x"}), pick=_UNBOUND),
        Req("POST", PODS + "/p/binding", binding_of("other")),
        Req("POST", PODS + "/p/binding", {**binding_of("p"), "target": {"kind": "Pod", "name": ""}}),
        Req("POST", PODS + "/p/binding", {**binding_of("p"), "target": {"kind": "Node"}}),
        Req("POST", PODS + "/p/binding", binding_of("p", uid=_GONE_UID)),
        Req("POST", PODS + "/p/binding", binding_of("p"), params={"dryRun": "All"}),
        Req("GET", PODS + "/p", pick=("spec.nodeName", "status.conditions")),
        Req("POST", PODS + "/p/binding", binding_of("p", annotations={"scheduled-by": "me"}, labels={"zone": "a"})),
        Req("GET", PODS + "/p", pick=("metadata.generation", "metadata.annotations", "metadata.labels",
                                      "metadata.managedFields.*.manager", "spec.nodeName", "status.conditions.*.type",
                                      "status.conditions.*.status", "status.conditions.*.lastProbeTime")),
        Req("POST", PODS + "/p/binding", binding_of("p")),
        Req("GET", PODS + "/p/binding"),
        Req("PUT", PODS + "/p/binding", binding_of("p")),
        Req("POST", PODS + "/nobody/binding", binding_of("nobody")),
        Req("POST", PODS, {**unbound("gated"), "spec": {**unbound("gated")["spec"],
                                                        "schedulingGates": [{"name": "example.com/wait"}]}},
            pick=_UNBOUND),
        Req("POST", PODS + "/gated/binding", binding_of("gated")),
        Req("POST", PODS, {**unbound("held"), "metadata": {"name": "held", "finalizers": ["example.com/hold"]}},
            pick=_UNBOUND),
        Req("DELETE", PODS + "/held", pick=("metadata.name",)),
        Req("POST", PODS + "/held/binding", binding_of("held")),
        Req("PATCH", PODS + "/held", {"metadata": {"finalizers": None}}, MERGE, pick=("metadata.name",)),
        Req("POST", PODS, unbound("q"), pick=_UNBOUND),
        Req("POST", "/api/v1/namespaces/{ns}/bindings", binding_of("q")),
        Req("GET", PODS + "/q", pick=("spec.nodeName",)),
        Req("POST", "/api/v1/namespaces/{ns}/bindings", binding_of("nobody")),
        Req("GET", "/api/v1", only=("bindings", "pods/binding")),
        Req("DELETE", PODS, params={"gracePeriodSeconds": "0"}, pick=("kind",)),
    ],
    # Metadata sent to /status: a Pod's, a StatefulSet's and a Service's is stored; a Deployment's labels
    # are reset (and not recorded); a custom resource's is reset but recorded as the status writer's, as
    # the field manager saw it before the status strategy (kube-apiserver 1.35.4).
    "metadata_written_through_status": [
        Req("POST", PODS, unbound("p"), pick=("metadata.name",)),
        Req("PATCH", PODS + "/p/status", {"metadata": {"labels": {"via": "status"}, "annotations": {"a": "1"}},
                                          "status": {"message": "hi"}}, MERGE, params={"fieldManager": "st"},
            pick=("metadata.labels", "metadata.annotations", "status.message", "metadata.managedFields")),
        Req("POST", DEPLOY, {**deployment("d", [{"name": "c", "image": "busybox:1"}]),
                             "spec": {**deployment("d", [{"name": "c", "image": "busybox:1"}])["spec"], "replicas": 0}},
            pick=("metadata.name",)),
        Req("PATCH", DEPLOY + "/d/status", {"metadata": {"labels": {"via": "status"}, "annotations": {"a": "1"}}},
            MERGE, params={"fieldManager": "st"}, pick=("metadata.labels", "metadata.annotations.a")),
        Req("POST", STS, sts("s"), pick=("metadata.name",)),
        Req("PATCH", STS + "/s/status", {"metadata": {"labels": {"via": "status"}}}, MERGE,
            params={"fieldManager": "st"}, pick=("metadata.labels",)),
        Req("POST", SVCS, {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "svc"}, "spec": {
            "ports": [{"port": 80}]}}, pick=("metadata.name",)),
        Req("PATCH", SVCS + "/svc/status", {"metadata": {"labels": {"via": "status"}, "finalizers": ["x.io/y"]}},
            MERGE, params={"fieldManager": "st"}, pick=("metadata.labels", "metadata.finalizers",
                                                        "metadata.managedFields")),
        Req("PATCH", SVCS + "/svc", {"metadata": {"finalizers": None}}, MERGE, pick=("metadata.finalizers",)),
        Req("POST", ECHO, echo("e")),
        Req("PATCH", ECHO + "/e/status", {"metadata": {"labels": {"via": "status"}}, "status": {"seen": "x"}},
            MERGE, params={"fieldManager": "st"}),
        Req("PUT", ECHO + "/e/status", {**echo("e"), "metadata": {"name": "e", "annotations": {"b": "2"}},
                                        "status": {"seen": "y"}}, params={"fieldManager": "st2"}),
        Req("GET", ECHO + "/e"),
    ],
    # Found by the seventh blind suite (2026-12-04): an Established CRD's scope and kind, and any CRD's
    # group and plural, are immutable; other names change, and the naming controller accepts them; an
    # update needs a resourceVersion; the storage version joins status.storedVersions and a stored
    # version may not leave spec.versions; version names are unique; the cleanup finalizer comes with
    # the delete, and a custom resource may not be created while its CRD terminates.
    "blind7_found_crd_updates": [
        *crd_up("rigs", "Rig", versions=("v1", "v2")),
        Req("GET", f"{_UCRDS}/rigs.{_U}", pick=("metadata.finalizers", "status.storedVersions")),
        Req("PATCH", f"{_UCRDS}/rigs.{_U}", {"spec": {"scope": "Cluster"}}, MERGE),
        Req("PATCH", f"{_UCRDS}/rigs.{_U}", {"spec": {"group": "other.crdup.kubeloop.dev"}}, MERGE),
        Req("PATCH", f"{_UCRDS}/rigs.{_U}", {"spec": {"names": {"plural": "rigz", "kind": "Rigging"}}}, MERGE),
        Req("PATCH", f"{_UCRDS}/rigs.{_U}", {"spec": {"names": {"shortNames": ["rg"], "categories": ["up"]}}},
            MERGE, pick=("metadata.generation", "spec.names")),
        WaitFor(f"{_UCRDS}/rigs.{_U}", "status.acceptedNames.shortNames.0", "rg"),
        Req("GET", f"{_UCRDS}/rigs.{_U}", pick=_CRD_STATUS),
        WaitFor(f"/apis/{_U}/v1", "resources.0.shortNames.0", "rg"),  # (the real discovery follows a moment later)
        Req("GET", f"/apis/{_U}/v1"),
        Req("PUT", f"{_UCRDS}/rigs.{_U}", plain_crd("rigs", "Rig", versions=("v1", "v2"))),
        Req("PATCH", f"{_UCRDS}/rigs.{_U}", [{"op": "replace", "path": "/spec/versions/0/storage", "value": False},
                                             {"op": "replace", "path": "/spec/versions/1/storage", "value": True}],
            JSON, pick=("metadata.generation", "status.storedVersions")),
        Req("PATCH", f"{_UCRDS}/rigs.{_U}", [{"op": "remove", "path": "/spec/versions/0"}], JSON),
        Req("PATCH", f"{_UCRDS}/rigs.{_U}", [{"op": "replace", "path": "/spec/versions/1/storage", "value": False}],
            JSON),
        Req("POST", _UCRDS, plain_crd("dups", "Dup", versions=("v1", "v1"))),
        Req("POST", f"/apis/{_U}/v1/namespaces/{{ns}}/rigs", {"apiVersion": f"{_U}/v1", "kind": "Rig",
                                                           "metadata": {"name": "held", "finalizers": ["x.io/y"]}},
            pick=("metadata.name",)),
        Req("DELETE", f"{_UCRDS}/rigs.{_U}", pick=("metadata.finalizers", "status.conditions.*.type")),
        WaitFor(f"/apis/{_U}/v1/namespaces/{{ns}}/rigs/held", "metadata.deletionTimestamp", "<set>"),  # (seen)
        Req("POST", f"/apis/{_U}/v1/namespaces/{{ns}}/rigs", {"apiVersion": f"{_U}/v1", "kind": "Rig",
                                                           "metadata": {"name": "late"}}),
        Req("POST", f"/apis/{_U}/v1/namespaces/{{ns}}/rigs", {"apiVersion": f"{_U}/v1", "kind": "Rig",
                                                           "metadata": {"generateName": "late-"}}),
        Req("PATCH", f"/apis/{_U}/v1/namespaces/{{ns}}/rigs/held", {"metadata": {"finalizers": None}}, MERGE,
            pick=("metadata.name",)),
        WaitGone(f"{_UCRDS}/rigs.{_U}", timeout=90),
    ],
    # Found by the seventh blind suite (2026-12-04): the naming controller gives a CRD only the names no
    # other CRD of its group has accepted (the last conflict is the reason); one whose names are not all
    # accepted is not Established, nor served; its names are freed with it.
    "blind7_found_crd_name_conflicts": [
        *crd_up("cogs", "Cog", shortNames=["cg"]),
        Req("POST", _UCRDS, plain_crd("sprockets", "Cog"), pick=("metadata.name",)),
        WaitFor(f"{_UCRDS}/sprockets.{_U}", "status.conditions.0.status", "False"),
        Req("GET", f"{_UCRDS}/sprockets.{_U}", pick=_CRD_STATUS),
        Req("GET", f"/apis/{_U}/v1/namespaces/{{ns}}/sprockets"),
        Req("POST", _UCRDS, plain_crd("wheels", "Wheel", shortNames=["cg", "wh"]),
            pick=("metadata.name",)),
        WaitFor(f"{_UCRDS}/wheels.{_U}", "status.conditions.0.status", "False"),
        Req("GET", f"{_UCRDS}/wheels.{_U}", pick=_CRD_STATUS),
        Req("GET", f"/apis/{_U}/v1", pick=("resources.*.name", "resources.*.shortNames")),
        Req("DELETE", f"{_UCRDS}/cogs.{_U}", pick=("metadata.name",)),
        WaitGone(f"{_UCRDS}/cogs.{_U}", timeout=90),
        WaitFor(f"{_UCRDS}/sprockets.{_U}", "status.conditions.1.status", "True"),
        Req("GET", f"{_UCRDS}/sprockets.{_U}", pick=_CRD_STATUS),
        WaitFor(f"{_UCRDS}/wheels.{_U}", "status.conditions.1.status", "True"),
        Req("GET", f"{_UCRDS}/wheels.{_U}", pick=_CRD_STATUS),
        WaitFor(f"/apis/{_U}/v1/namespaces/{{ns}}/sprockets", "kind", "CogList"),  # (served at last)
        Req("DELETE", f"{_UCRDS}/sprockets.{_U}", pick=("metadata.name",)),
        Req("DELETE", f"{_UCRDS}/wheels.{_U}", pick=("metadata.name",)),
        WaitGone(f"{_UCRDS}/sprockets.{_U}", timeout=90),
        WaitGone(f"{_UCRDS}/wheels.{_U}", timeout=90),
    ],
    # Found by the seventh blind suite (2026-12-04): an embedded resource keeps its apiVersion, kind and
    # metadata (coerced to an ObjectMeta: unknown and empty fields dropped), must name its apiVersion and
    # kind, and has its metadata checked with path-segment names; its schema is an object with properties
    # or preserving unknown fields. Strict decoding names every unknown field, a merge patch's the patched
    # object's; with a status subresource the root schema holds no minProperties; an int-or-string's
    # anyOf pattern is exact.
    "blind7_found_embedded_resources": [
        Req("POST", _UCRDS, schema_crd("holders", "Holder", _EMBEDDING), pick=("metadata.name",)),
        WaitFor(f"{_UCRDS}/holders.{_U}", "status.conditions.1.status", "True"),
        WaitFor(_HOLDERS, "kind", "HolderList"),
        Req("POST", _HOLDERS, holder("h1", template={"apiVersion": "v1", "kind": "ConfigMap", "data": {"a": "b"},
                                                     "metadata": {"name": "Not_Valid", "bogus": 1, "labels": {},
                                                                  "annotations": {"x": "y"}, "namespace": "n1"}},
                                     typed={"apiVersion": "apps/v1", "kind": "Deployment", "data": {"k": "v"},
                                            "extra": 1, "metadata": {"generateName": "g-", "labels": None}}),
            pick=("spec",)),
        Req("POST", _HOLDERS, holder("h2", template={"metadata": {"name": "x"}}, typed={"kind": ""})),
        Req("POST", _HOLDERS, holder("h2", typed={"kind": "K", "apiVersion": 3})),
        Req("POST", _HOLDERS, holder("h2", typed={"metadata": {"labels": "wrong", "name": "n"}})),
        Req("POST", _HOLDERS, holder("h2", typed={"metadata": {"labels": {"a": 1}}})),
        Req("POST", _HOLDERS, holder("h2", typed={"metadata": {"finalizers": [True], "generation": 1.5}})),
        Req("POST", _HOLDERS, holder("h2", typed={"metadata": "x"})),
        Req("POST", _HOLDERS, holder("h2", typed={"apiVersion": "v1", "kind": "K", "metadata": None}),
            pick=("spec",)),
        Req("POST", _HOLDERS, holder("h3", template={"apiVersion": "a/b/c", "kind": "Not_ok",
                                                     "metadata": {"name": "a/b", "namespace": "Bad_NS",
                                                                  "labels": {"bad key!": "v"}}})),
        Req("POST", _HOLDERS, holder("h4", template={"apiVersion": "v1", "kind": "Pod", "metadata": {"name": ".."}},
                                     typed={"apiVersion": "v1", "kind": "X", "metadata": {"finalizers": ["a/b/c"]}})),
        Req("POST", _HOLDERS, {**holder("h5", known="k", unknown=1), "extra": True},
            params={"fieldValidation": "Strict"}),
        Req("POST", _HOLDERS, holder("h6", known="k", template={"apiVersion": "v1", "kind": "ConfigMap",
                                                                "metadata": {"bogus": 1}}),
            params={"fieldValidation": "Strict"}),
        Req("PATCH", _HOLDERS + "/h1", {"spec": {"unknown": 2}}, MERGE, params={"fieldValidation": "Strict"},
            brief=True),
        Req("PATCH", _HOLDERS + "/h1", {"spec": {"unknown": 2, "template": {"metadata": {"bogus": 2}}}}, MERGE,
            pick=("spec",)),
        Req("GET", _HOLDERS, pick=("items.*.metadata.name", "items.*.spec")),
        Req("POST", _UCRDS, schema_crd("bads", "Bad", {"type": "object", "properties": {
            "a": {"type": "string", "x-kubernetes-embedded-resource": True},
            "b": {"type": "object", "x-kubernetes-embedded-resource": True},
            "c": {"x-kubernetes-embedded-resource": True, "x-kubernetes-preserve-unknown-fields": True},
            "d": {"type": "object", "x-kubernetes-embedded-resource": True, "properties": {
                "kind": {"type": "integer"}, "metadata": {"type": "object", "properties": {"labels": {
                    "type": "object"}}}}},
            "e": {"type": "object", "x-kubernetes-embedded-resource": True,
                  "x-kubernetes-preserve-unknown-fields": True, "additionalProperties": {"type": "string"}}}})),
        Req("POST", _UCRDS, schema_crd("bads", "Bad", {"type": "object", "properties": {"a": {
            "x-kubernetes-int-or-string": True, "anyOf": [{"type": "integer", "minimum": 0}, {"type": "string"}]}}})),
        Req("POST", _UCRDS, {**schema_crd("bads", "Bad", {"type": "object"}, subresources={"status": {}})} | {
            "spec": {**schema_crd("bads", "Bad", {"type": "object"}, subresources={"status": {}})["spec"],
                     "versions": [{"name": "v1", "served": True, "storage": True, "subresources": {"status": {}},
                                   "schema": {"openAPIV3Schema": {"type": "object", "minProperties": 1,
                                                                  "properties": {"spec": {"type": "object"}}}}}]}},
            brief=True),
        Req("DELETE", f"{_UCRDS}/holders.{_U}", pick=("metadata.name",)),
        WaitGone(f"{_UCRDS}/holders.{_U}", timeout=90),
    ],
    # Found by the seventh blind suite (2026-12-04): a rule must evaluate to a bool and a messageExpression
    # to a string; oldSelf may not be used below a list that is not a map list, nor optionalOldSelf set on a
    # rule without oldSelf. With optionalOldSelf a transition rule runs on create too, oldSelf an optional
    # (hasValue, value, orValue); items of a map list correlate with their old selves.
    "blind7_found_cel_compilation_and_optionals": [
        Req("POST", _UCRDS, schema_crd("bads", "Bad", ruled([{"rule": "self.a"}], a={"type": "integer"}))),
        Req("POST", _UCRDS, schema_crd("bads", "Bad", ruled([{"rule": "self.s + 'x'"}], s={"type": "string"}))),
        Req("POST", _UCRDS, schema_crd("bads", "Bad", ruled([{"rule": "self.a > 0", "messageExpression": "1 + 1"}],
                                                           a={"type": "integer"}))),
        Req("POST", _UCRDS, schema_crd("bads", "Bad", ruled([{"rule": "self.a > 0", "optionalOldSelf": True}],
                                                           a={"type": "integer"}))),
        Req("POST", _UCRDS, schema_crd("bads", "Bad", {"type": "object", "properties": {"l": {
            "type": "array", "items": ruled([{"rule": "self == oldSelf"}], v={"type": "string"})}}})),
        Req("POST", _UCRDS, schema_crd("bads", "Bad", {"type": "object", "properties": {"m": {
            "type": "object", "x-kubernetes-map-type": "atomic", "properties": {
                "v": {"type": "string", "x-kubernetes-validations": [{"rule": "self == oldSelf"}]}}}}}),
            pick=("metadata.name",)),
        Req("DELETE", f"{_UCRDS}/bads.{_U}", pick=("metadata.name",)),
        Req("POST", _UCRDS, schema_crd("stages", "Stage", _STAGED), pick=("metadata.name",)),
        WaitFor(f"{_UCRDS}/stages.{_U}", "status.conditions.1.status", "True"),
        WaitFor(_STAGES, "kind", "StageList"),
        Req("POST", _STAGES, stage("s1", id="a", stage="new", keyed=[{"k": "x", "v": 2}]), pick=("spec",)),
        Req("PATCH", _STAGES + "/s1", {"spec": {"id": "b"}}, MERGE),
        Req("PATCH", _STAGES + "/s1", {"spec": {"keyed": [{"k": "x", "v": 1}, {"k": "y", "v": 0}]}}, MERGE),
        Req("PATCH", _STAGES + "/s1", {"spec": {"stage": "done"}}, MERGE, pick=("spec.stage",)),
        Req("PATCH", _STAGES + "/s1", {"spec": {"stage": "again"}}, MERGE),
        Req("PATCH", _STAGES + "/s1", {"spec": {"id": None}}, MERGE),
        Req("POST", _STAGES, stage("s2", stage="locked"), pick=("spec",)),
        Req("PATCH", _STAGES + "/s2", {"spec": {"stage": "open"}}, MERGE),
        Req("PATCH", _STAGES + "/s2", {"spec": {"id": "late"}}, MERGE),
        Req("DELETE", f"{_UCRDS}/stages.{_U}", pick=("metadata.name",)),
        WaitGone(f"{_UCRDS}/stages.{_U}", timeout=90),
    ],
    # Found by the seventh blind suite (2026-12-04): validation ratcheting (an update's errors on values it
    # left unchanged are dropped: fields by name, a map list's items by key, not a set's; CEL rules without
    # oldSelf too); an int-or-string holds an integer or a string, its anyOf pattern failing too; a rule
    # that cannot be evaluated (a missing key) fails on its own field.
    "blind7_found_ratcheting_and_int_or_string": [
        Req("POST", _UCRDS, schema_crd("ratchets", "Ratchet", _LOOSE_SPEC), pick=("metadata.name",)),
        WaitFor(f"{_UCRDS}/ratchets.{_U}", "status.conditions.1.status", "True"),
        WaitFor(_RATCHETS, "kind", "RatchetList"),
        Req("POST", _RATCHETS, ratchet("r1", name="much-too-long", n=20, tags=["long", "ok"],
                                       ports=[{"p": 1, "label": "long"}, {"p": 2}]), pick=("spec",)),
        # (tightened, and a v2 served at once: once v2 is served, the tightened schema is in force)
        Req("PATCH", f"{_UCRDS}/ratchets.{_U}", [
            {"op": "replace", "path": "/spec/versions/0/schema/openAPIV3Schema/properties/spec", "value": _tightened()},
            {"op": "add", "path": "/spec/versions/-", "value": {
                "name": "v2", "served": True, "storage": False, "schema": {"openAPIV3Schema": {
                    "type": "object", "properties": {"spec": _tightened()}}}}}], JSON,
            pick=("metadata.generation",)),
        WaitFor(f"/apis/{_U}/v2/namespaces/{{ns}}/ratchets", "kind", "RatchetList"),
        Req("PATCH", _RATCHETS + "/r1", {"spec": {"port": 80}}, MERGE, pick=("spec.port",)),
        Req("PATCH", _RATCHETS + "/r1", {"spec": {"name": "also-too-long"}}, MERGE),
        Req("PATCH", _RATCHETS + "/r1", {"spec": {"n": 30}}, MERGE),
        Req("PATCH", _RATCHETS + "/r1", {"spec": {"tags": ["ok", "long", "new"]}}, MERGE),
        Req("PATCH", _RATCHETS + "/r1", {"spec": {"ports": [{"p": 2}, {"p": 1, "label": "long"}, {"p": 3}]}}, MERGE),
        Req("PATCH", _RATCHETS + "/r1", {"spec": {"ports": [{"p": 1, "label": "longer"}, {"p": 2}]}}, MERGE),
        Req("PATCH", _RATCHETS + "/r1", {"spec": {"name": "short", "n": 1}}, MERGE, pick=("spec",)),
        Req("POST", _RATCHETS, ratchet("r2", name="much-too-long")),
        Req("POST", _RATCHETS, ratchet("r3", port=True)),
        Req("POST", _RATCHETS, ratchet("r3", port={"a": 1}, bare=[1])),
        Req("POST", _RATCHETS, ratchet("r3", port=1.5, bare=2.5)),
        Req("POST", _RATCHETS, ratchet("r3", port="http", bare=7), pick=("spec",)),
        Req("DELETE", f"{_UCRDS}/ratchets.{_U}", pick=("metadata.name",)),
        WaitGone(f"{_UCRDS}/ratchets.{_U}", timeout=90),
    ],
    # Found by the seventh blind suite (2026-12-04): a custom resource's metadata update errors are found
    # twice (the generic store's common checks, then the strategy's), so reported twice; a create of a name
    # still being deleted says so.
    "blind7_found_custom_resource_metadata_updates": [
        *crd_up("helds", "Held"),
        Req("POST", _HELD, held("h1", finalizers=["x.io/a"]), save={"rv": "metadata.resourceVersion"},
            pick=("metadata.name",)),
        Req("PATCH", _HELD + "/h1", {"metadata": {"uid": "00000000-0000-0000-0000-000000000001"}}, MERGE),
        Req("PUT", _HELD + "/h1", held("h1", uid="00000000-0000-0000-0000-000000000001", resourceVersion="{m:rv}",
                                       finalizers=["x.io/a"])),
        Req("DELETE", _HELD + "/h1", pick=("metadata.finalizers",)),
        Req("PATCH", _HELD + "/h1", {"metadata": {"finalizers": ["x.io/a", "x.io/b"]}}, MERGE),
        Req("PATCH", _HELD + "/h1", {"metadata": {"finalizers": ["x.io/a", "x.io/b"], "labels": {"a": "-bad-"}}},
            MERGE),
        Req("POST", _HELD, held("h1")),
        Req("POST", CM, cm("c1", finalizers=["x.io/a"]), pick=("metadata.name",)),
        Req("DELETE", CM + "/c1", pick=("metadata.finalizers",)),
        Req("POST", CM, cm("c1")),
        Req("PATCH", CM + "/c1", {"metadata": {"finalizers": None}}, MERGE, pick=("metadata.name",)),
        Req("PATCH", _HELD + "/h1", {"metadata": {"finalizers": None}}, MERGE, pick=("metadata.name",)),
        Req("DELETE", f"{_UCRDS}/helds.{_U}", pick=("metadata.name",)),
        WaitGone(f"{_UCRDS}/helds.{_U}", timeout=90),
    ],
    # Found by the seventh blind suite (2026-12-04): a custom resource needs its kind and apiVersion (the
    # 400s quote the body), an apply of another kind is refused; a subresource's unserved verb is named; an
    # unknown subresource (or status where the version has none) is looked up as the object, which is not
    # found; discovery lists each version's own subresources, status before scale.
    "blind7_found_custom_resource_requests": [
        Req("POST", _UCRDS, {**plain_crd("gears", "Gear", versions=("v1", "v1beta1"))} | {"spec": {
            **plain_crd("gears", "Gear", versions=("v1", "v1beta1"))["spec"],
            "versions": [{**v, "subresources": {"status": {}, "scale": {
                "specReplicasPath": ".spec.size", "statusReplicasPath": ".status.size"}}} if v["name"] == "v1" else v
                for v in plain_crd("gears", "Gear", versions=("v1", "v1beta1"))["spec"]["versions"]]}},
            pick=("metadata.name",)),
        WaitFor(f"{_UCRDS}/gears.{_U}", "status.conditions.1.status", "True"),
        WaitFor(f"/apis/{_U}/v1/namespaces/{{ns}}/gears", "kind", "GearList"),
        Req("GET", f"/apis/{_U}/v1"),
        Req("GET", f"/apis/{_U}/v1beta1"),
        Req("POST", f"/apis/{_U}/v1/namespaces/{{ns}}/gears", {"kind": "Gear", "metadata": {"name": "g0"}}),
        Req("POST", f"/apis/{_U}/v1/namespaces/{{ns}}/gears", {"apiVersion": f"{_U}/v1", "metadata": {"name": "g0"},
                                                              "spec": {"size": 1}}),
        Req("POST", f"/apis/{_U}/v1/namespaces/{{ns}}/gears", {"apiVersion": f"{_U}/v1", "metadata": {"name": "g"}}),
        Req("POST", f"/apis/{_U}/v1/namespaces/{{ns}}/gears", {"apiVersion": f"{_U}/v1", "kind": "Gear",
                                                              "metadata": {"name": "g1"}, "spec": {"size": 1}},
            pick=("metadata.name",)),
        Req("PATCH", f"/apis/{_U}/v1/namespaces/{{ns}}/gears/g1", {"apiVersion": f"{_U}/v1", "kind": "Cog",
                                                                  "metadata": {"name": "g1"}}, APPLY,
            params={"fieldManager": "m"}),
        Req("POST", f"/apis/{_U}/v1/namespaces/{{ns}}/gears/g1/status", {"status": {}}),
        Req("DELETE", f"/apis/{_U}/v1/namespaces/{{ns}}/gears/g1/status"),
        Req("POST", f"/apis/{_U}/v1/namespaces/{{ns}}/gears/g1/scale", {"spec": {"replicas": 2}}),
        Req("GET", f"/apis/{_U}/v1/namespaces/{{ns}}/gears/g1/bogus"),
        Req("GET", f"/apis/{_U}/v1beta1/namespaces/{{ns}}/gears/g1/status"),
        Req("GET", f"/apis/{_U}/v1/namespaces/{{ns}}/gears/missing/bogus"),
        Req("GET", f"/apis/{_U}/v1/namespaces/{{ns}}/nothings"),
        Req("DELETE", f"{_UCRDS}/gears.{_U}", pick=("metadata.name",)),
        WaitGone(f"{_UCRDS}/gears.{_U}", timeout=90),
    ],
    # Found by the seventh blind suite (2026-12-04): a CRD's kind and listKind errors give the label rule's
    # own message; a selector's value is an identifier or nothing; a continue token that is not JSON is
    # refused with the byte Go's scanner stopped at, quoted as Go quotes it.
    "blind7_found_names_selectors_tokens": [
        Req("POST", _UCRDS, plain_crd("gadgets", "Gad_get")),
        Req("POST", _UCRDS, plain_crd("gadgets", "Gadget", listKind="Gadget.List")),
        Req("POST", CM, cm("a", labels={"color": "red"}), pick=("metadata.name",)),
        Req("GET", CM, params={"labelSelector": "color=(red"}),
        Req("GET", CM, params={"labelSelector": "color==)"}),
        Req("GET", CM, params={"labelSelector": "color!=!x"}),
        Req("GET", CM, params={"labelSelector": "color="}, pick=("items.*.metadata.name",)),
        Req("GET", CM, params={"continue": "not-a-token"}),
        Req("GET", CM, params={"continue": "XHg="}),
        Req("GET", CM, params={"continue": "AQ=="}),
    ],
    # Found by the seventh blind suite (2026-12-04): an applied map list's items need a key (a key field or
    # its default) and distinct keys, else the typed patch object fails (500); a map with
    # x-kubernetes-map-type atomic is owned whole: another manager's different value conflicts.
    "blind7_found_apply_keys_and_atomic_maps": [
        Req("POST", _UCRDS, schema_crd("appliers", "Applier", _APPLY_SPEC), pick=("metadata.name",)),
        WaitFor(f"{_UCRDS}/appliers.{_U}", "status.conditions.1.status", "True"),
        WaitFor(_APPLIERS, "kind", "ApplierList"),
        applied("alice", ports=[{"name": "http", "port": 80}], sel={"a": "1", "b": "2"}, env={"A": "1"}),
        applied("alice", ports=[{"name": "http", "port": 80}, {"name": "http", "port": 8}]),
        applied("alice", ports=[{"name": "http", "port": 80}, {"name": "http", "proto": "UDP", "port": 8}]),
        applied("alice", ports=[{"port": 80}]),
        applied("bob", sel={"a": "1"}),
        applied("bob", env={"B": "2"}),
        applied("bob", force=True, sel={"a": "1"}),
        Req("GET", _APPLIERS + "/a1", pick=_SSA),
        Req("DELETE", f"{_UCRDS}/appliers.{_U}", pick=("metadata.name",)),
        WaitGone(f"{_UCRDS}/appliers.{_U}", timeout=90),
    ],
    # A pod spec's scheduling fields (found by the sixth blind suite): node and pod affinity, topology spread,
    # tolerations, scheduling gates and DNS config validated with the real paths and messages; a bound pod
    # cannot be gated; a negative grace period is 1 s, host-network ports are host ports, a ResourceList's
    # quantities are rounded up to milli units, extended resources are whole and limited, huge pages need cpu
    # or memory; a pod's ServiceAccount must exist; a gated pod's updates may remove gates and add node
    # selector entries (kube-apiserver 1.35.4).
    "pod_scheduling_fields_validated": [
        Req("POST", PODS, gated("na1", affinity=_node_term({"key": "zone", "operator": "Near"}))),
        Req("POST", PODS, gated("na2", affinity=_node_term({"key": "zone", "operator": "NotIn"},
                                                          {"key": "bad key", "operator": "Exists", "values": ["x"]}))),
        Req("POST", PODS, gated("na3", affinity={"nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": []},
            "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 0, "preference": {"matchFields": [
                {"key": "metadata.uid", "operator": "Exists"}]}}]}})),
        Req("POST", PODS, gated("pa1", affinity={"podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 200, "podAffinityTerm": {"topologyKey": "zone", "labelSelector": {"matchExpressions": [
                {"key": "app", "operator": "In"}]}}}]}, "podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [{"topologyKey": "", "namespaces": ["Bad_NS"]}]}})),
        Req("POST", PODS, gated("ts1", topologySpreadConstraints=[
            {"maxSkew": -1, "topologyKey": "", "whenUnsatisfiable": "Never"},
            {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "ScheduleAnyway", "minDomains": 2},
            {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "ScheduleAnyway",
             "nodeTaintsPolicy": "Sometimes"}])),
        Req("POST", PODS, gated("tol", tolerations=[
            {"operator": "Equal", "value": "v"}, {"key": "k", "operator": "Exists", "value": "v"},
            {"key": "k", "operator": "Gt", "value": "1"}, {"key": "k", "value": "v", "effect": "Sometimes"},
            {"key": "k", "operator": "Exists", "effect": "NoSchedule", "tolerationSeconds": 5}])),
        Req("POST", PODS, {**gated("gates"), "spec": {**gated("gates")["spec"], "schedulingGates": [
            {"name": "a/b/c"}, {"name": "example.com/gate"}, {"name": "example.com/gate"}]}}),
        Req("POST", PODS, gated("dns1", dnsPolicy="None")),
        Req("POST", PODS, gated("dns2", dnsPolicy="None", dnsConfig={"searches": ["x"]})),
        Req("POST", PODS, gated("dns3", dnsConfig={"nameservers": ["1.1.1.1", "2.2.2.2", "3.3.3.3", "nope"]})),
        Req("POST", PODS, gated("bound", nodeName="diff-node")),
        Req("POST", PODS, gated("ok", affinity=_node_term({"key": "zone", "operator": "In", "values": ["a"]}),
                                topologySpreadConstraints=[{"maxSkew": 1, "topologyKey": "zone",
                                                            "whenUnsatisfiable": "DoNotSchedule"}],
                                tolerations=[{"operator": "Exists"}], terminationGracePeriodSeconds=-3,
                                hostNetwork=True, container={"ports": [{"containerPort": 9000}], "resources": {
                                    "requests": {"cpu": "0.00025", "memory": "100.5"}}}),
            pick=("spec.terminationGracePeriodSeconds", "spec.containers.*.ports", "spec.containers.*.resources",
                  "metadata.managedFields.*.fieldsV1.f:spec.f:schedulingGates")),
        Req("POST", PODS, gated("ext", container={"resources": {"requests": {"example.com/dongle": "0.5"}}})),
        Req("POST", PODS, gated("ext2", container={"resources": {"requests": {"example.com/dongle": "1"},
                                                                 "limits": {"example.com/dongle": "2"}}})),
        Req("POST", PODS, gated("huge", container={"resources": {"limits": {"hugepages-1Gi": "1Mi"}}})),
        Req("POST", PODS, gated("nosa", serviceAccountName="missing")),
        Req("POST", PODS, gated("nosa2", serviceAccountName="missing", dnsPolicy="Bogus")),
        Req("PATCH", PODS + "/ok", {"spec": {"schedulingGates": [{"name": "example.com/gate"},
                                                                 {"name": "example.com/second"}]}},
            MERGE, brief=True),
        Req("PATCH", PODS + "/ok", {"spec": {"nodeSelector": {"disk": "ssd"}}}, STRATEGIC, pick=_GATED),
        Req("PATCH", PODS + "/ok", {"spec": {"nodeSelector": {"disk": "hdd"}}}, MERGE, brief=True),
        Req("PATCH", PODS + "/ok", {"spec": {"schedulingGates": None}}, MERGE, pick=_GATED),
        Req("PATCH", PODS + "/ok", {"spec": {"nodeSelector": {"more": "x"}}}, MERGE, brief=True),
        Req("GET", PODS, pick=("items.*.metadata.name",)),
    ],
    # LimitRanges (found by the sixth blind suite): stored with their Container items' defaults, validated,
    # and applied by the LimitRanger admission plugin to new pods: missing requests and limits filled in (and
    # the annotation saying so, owned by nobody), containers and pods outside the ranges refused with 403
    # (kube-apiserver 1.35.4).
    "limitranges_defaults_and_bounds": [
        Req("POST", LIMITS, limit_range("bad1", {"type": "Container", "min": {"cpu": "2"}, "max": {"cpu": "1"}},
                                        {"type": "Container"})),
        Req("POST", LIMITS, limit_range("bad2", {"type": "Pod", "default": {"cpu": "1"}, "max": {"gpu": "1"}},
                                        {"type": "PersistentVolumeClaim", "max": {"cpu": "1"}},
                                        {"type": "example.com/Thing", "maxLimitRequestRatio": {"cpu": "0.5"}})),
        Req("POST", LIMITS, limit_range("bad3", {"type": "Container", "defaultRequest": {"memory": "1Gi"},
                                                 "default": {"memory": "512Mi"}, "min": {"memory": "2Gi"}},
                                        {"type": "Pod", "min": {"cpu": "1"}, "max": {"cpu": "2"},
                                         "maxLimitRequestRatio": {"cpu": "3"}})),
        Req("POST", LIMITS, limit_range("bad4", {"type": "Container", "default": {"example.com/gpu": "2"},
                                                 "defaultRequest": {"example.com/gpu": "1"}}, {"type": "Mine"})),
        Req("POST", LIMITS, limit_range("box", {"type": "Container", "min": {"cpu": "50m"}, "max": {"memory": "1Gi"},
                                                "defaultRequest": {"cpu": "0.0501"},
                                                "maxLimitRequestRatio": {"memory": "4"}})),
        _SETTLE,
        Req("POST", PODS, gated("plain"), pick=("spec.containers.*.resources", "metadata.annotations",
                                                "status.qosClass", "metadata.managedFields.*.fieldsV1")),
        Req("POST", PODS, {**gated("init"), "spec": {**gated("init")["spec"], "initContainers": [
            {"name": "setup", "image": "busybox:1", "resources": {"requests": {"memory": "512Mi"}}}]}},
            pick=("spec.initContainers.*.resources", "spec.containers.*.resources", "metadata.annotations")),
        Req("POST", PODS, gated("small", container={"resources": {"requests": {"cpu": "10m"}}})),
        Req("POST", PODS, gated("nolimit", container={"resources": {"requests": {"cpu": "1"}}}),
            pick=("spec.containers.*.resources",)),
        Req("POST", PODS, gated("ratio", container={"resources": {"requests": {"memory": "100Mi"},
                                                                  "limits": {"memory": "1Gi"}}})),
        Req("POST", PODS, gated("big", container={"resources": {"limits": {"memory": "2Gi"}}})),
        Req("PUT", LIMITS + "/box", limit_range("box", {"type": "Container", "max": {"cpu": "1"},
                                                        "min": {"cpu": "2"}})),
        Req("PUT", LIMITS + "/made", limit_range("made", {"type": "Container", "max": {"pods": "1"}})),
        Req("PUT", LIMITS + "/made", limit_range("made", {"type": "Container", "max": {"example.com/x": "1"}}),
            pick=("spec",)),
        Req("POST", LIMITS, limit_range("pods", {"type": "Pod", "max": {"cpu": "1"}}), pick=("spec",)),
        _SETTLE,
        Req("POST", PODS, gated("pod", container={"resources": {"limits": {"cpu": "1500m", "memory": "128Mi"}}})),
        Req("DELETE", LIMITS + "/box", pick=("status",)),
        _SETTLE,
        Req("POST", PODS, gated("after", container={"resources": {"limits": {"cpu": "500m"}}}),
            pick=("spec.containers.*.resources", "metadata.annotations")),
        Req("GET", LIMITS, pick=("items.*.metadata.name",)),
        Req("GET", PODS, pick=("items.*.metadata.name",)),
    ],
    # ResourceQuotas (found by the sixth blind suite): validated; the quota controller's status (hard, used);
    # the admission plugin's refusals (a pod not asking for a limited resource, usage over the limit) and its
    # charge of an admitted object, which stays until the controller recounts (here: never, for a create the
    # store refused as AlreadyExists); deletions and finished pods recounted (kube-apiserver 1.35.4).
    "resourcequotas_admission_and_usage": [
        Req("POST", QUOTAS, quota("bad", {"bogus": "1", "requests.cpu": "-1", "pods": "1.5", "example.com/x": "0.5",
                                          "count/x": "2", "Requests.cpu": "1"},
                                  scopes=["BestEffort", "NotBestEffort"])),
        Req("POST", QUOTAS, quota("bad2", {"pods": "1"}, scopes=["Sometimes"])),
        Req("POST", QUOTAS, quota("q", {"pods": "2", "count/secrets": "2", "requests.memory": "1Gi",
                                        "limits.cpu": "1", "configmaps": "5"}), pick=("spec", "status")),
        WaitFor(QUOTAS + "/q", "status.used.pods", "0"),
        Req("GET", QUOTAS + "/q", pick=("status",)),
        Req("POST", PODS, gated("bare")),
        Req("POST", PODS, gated("half", container={"resources": {"requests": {"memory": "100Mi"}}})),
        Req("POST", PODS, gated("a", container={"resources": {"requests": {"memory": "600Mi"},
                                                              "limits": {"cpu": "0.5"}}}), pick=("metadata.name",)),
        Req("POST", PODS, gated("b", container={"resources": {"requests": {"memory": "600Mi"},
                                                              "limits": {"cpu": "700m"}}})),
        Req("POST", PODS, gated("c", container={"resources": {"requests": {"memory": "100Mi"},
                                                              "limits": {"cpu": "200m"}}}), pick=("metadata.name",)),
        Req("GET", QUOTAS + "/q", pick=("status.used",)),
        Req("POST", PODS, gated("d", container={"resources": {"requests": {"memory": "1Mi"},
                                                              "limits": {"cpu": "1m"}}})),
        Req("POST", SECRETS, _secret("s1"), pick=("metadata.name",)),
        Req("POST", SECRETS, {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s1"}}),
        Req("GET", QUOTAS + "/q", pick=("status.used",)),
        Req("POST", SECRETS, {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s2"}}),
        Req("POST", CM, cm("c1"), pick=("metadata.name",)),
        Req("DELETE", SECRETS + "/s1", pick=("status",)),
        WaitFor(QUOTAS + "/q", "status.used.count/secrets", "0"),
        Req("POST", SECRETS, _secret("s2"), pick=("metadata.name",)),
        Req("PATCH", PODS + "/a/status", {"status": {"phase": "Failed"}}, MERGE, pick=("status.phase",)),
        WaitFor(QUOTAS + "/q", "status.used.pods", "1"),
        Req("GET", QUOTAS + "/q", pick=("status",)),
        Req("PATCH", QUOTAS + "/q", {"spec": {"hard": {"pods": "1", "count/secrets": "-2"}}}, MERGE, brief=True),
        Req("PATCH", QUOTAS + "/q", {"spec": {"scopes": ["NotTerminating"]}}, MERGE, brief=True),
        Req("PATCH", QUOTAS + "/q", {"spec": {"hard": {"pods": "1"}}}, MERGE, pick=("spec",)),
        WaitFor(QUOTAS + "/q", "status.hard.pods", "1"),
        Req("POST", PODS, gated("e", container={"resources": {"requests": {"memory": "1Mi"},
                                                              "limits": {"cpu": "1m"}}})),
        Req("GET", QUOTAS, pick=("items.*.metadata.name", "items.*.status.used")),
    ],
    # A pod's ephemeralcontainers subresource (found by the sixth blind suite): read as the Pod, written as
    # its ephemeral containers only (other changes in the body are dropped), each defaulted as a container,
    # validated (allowed fields, unique names, a target among the pod's containers), never removed or
    # changed once added; recorded as the subresource's writer (kube-apiserver 1.35.4).
    "pod_ephemeral_containers": [
        Req("POST", PODS, gated("p"), pick=("metadata.name",)),
        Req("GET", PODS + "/p/ephemeralcontainers", pick=("kind", "apiVersion", "metadata.name", "spec.containers")),
        Req("PATCH", PODS + "/p/ephemeralcontainers", {"spec": {"ephemeralContainers": [
            {"name": "e1", "image": "busybox:1", "targetContainerName": "nope", "resources": {"limits": {"cpu": "1"}},
             "readinessProbe": {"exec": {"command": ["true"]}}, "volumeMounts": [{"name": "v", "mountPath": "/v",
                                                                                  "subPath": "x"}]}]}},
            STRATEGIC, brief=True),
        Req("PATCH", PODS + "/p/ephemeralcontainers", {"metadata": {"labels": {"via": "ephemeral"}}, "spec": {
            "ephemeralContainers": [{"name": "e1", "image": "busybox:1", "stdin": True}],
            "activeDeadlineSeconds": 5}}, STRATEGIC, params={"fieldManager": "kubectl-debug"},
            pick=("metadata.labels", "metadata.generation", "spec.activeDeadlineSeconds", "spec.ephemeralContainers",
                  "metadata.managedFields")),
        Req("PATCH", PODS + "/p/ephemeralcontainers", [{"op": "add", "path": "/spec/ephemeralContainers/-",
                                                       "value": {"name": "e1", "image": "busybox:2"}}], JSON,
            brief=True),
        Req("PATCH", PODS + "/p/ephemeralcontainers", [{"op": "replace", "path": "/spec/ephemeralContainers/0/image",
                                                       "value": "busybox:2"}], JSON, brief=True),
        Req("PUT", PODS + "/p/ephemeralcontainers", {**gated("p"), "spec": {
            **gated("p")["spec"], "ephemeralContainers": [{"name": "e2", "image": "busybox:1",
                                                           "targetContainerName": "c"}]}}, brief=True),
        Req("PATCH", PODS + "/p/ephemeralcontainers", {"spec": {"ephemeralContainers": [
            {"name": "e2", "image": "busybox:1", "targetContainerName": "c", "imagePullPolicy": "Always"}]}},
            STRATEGIC, pick=("metadata.generation", "spec.ephemeralContainers.*.name",
                             "spec.ephemeralContainers.*.imagePullPolicy")),
        Req("DELETE", PODS + "/p/ephemeralcontainers"),
        Req("GET", PODS + "/p", pick=("metadata.generation", "metadata.labels", "spec.ephemeralContainers.*.name",
                                      "metadata.managedFields.*.manager", "metadata.managedFields.*.subresource")),
    ],
    # A StatefulSet's name and service name are DNS labels, its update strategy one of two, its volume claim
    # templates checked as claims (and mountable by its template); a long generateName is cut to fit (found
    # by the sixth blind suite; kube-apiserver 1.35.4).
    "statefulset_names_strategy_and_claims": [
        Req("POST", STS, sts("Upper")),
        Req("POST", STS, sts("a.b")),
        Req("POST", STS, sts("x" * 64)),
        Req("POST", STS, {**sts("svc"), "spec": {**sts("svc")["spec"], "serviceName": "Bad.Name"}}),
        Req("POST", STS, {**sts("strat"), "spec": {**sts("strat")["spec"], "updateStrategy": {"type": "Sometimes"}}},
            brief=True),
        Req("POST", STS, {**sts("claims"), "spec": {**sts("claims")["spec"], "volumeClaimTemplates": [
            {"metadata": {"name": "a"}, "spec": {"accessModes": ["ReadWriteOncePod", "ReadOnlyMany", "Never"],
                                                 "resources": {"requests": {"storage": "0"}}, "volumeMode": "Disk"}},
            {"metadata": {"name": "b"}, "spec": {}}]}}),
        Req("POST", STS, {**sts("mounts"), "spec": {**sts("mounts")["spec"], "template": {
            **_WL_TEMPLATE, "spec": {"containers": [{"name": "c", "image": "busybox:1", "volumeMounts": [
                {"name": "data", "mountPath": "/data"}, {"name": "other", "mountPath": "/other"}]}]}},
            "volumeClaimTemplates": [{"metadata": {"name": "data"}, "spec": {
                "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}]}}),
        Req("POST", STS, {**sts("ok"), "spec": {**sts("ok")["spec"], "template": {
            **_WL_TEMPLATE, "spec": {"containers": [{"name": "c", "image": "busybox:1", "volumeMounts": [
                {"name": "data", "mountPath": "/data"}]}]}},
            "volumeClaimTemplates": [{"metadata": {"name": "data"}, "spec": {
                "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}]}},
            pick=("metadata.name", "spec.volumeClaimTemplates")),
        Req("POST", CM, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"generateName": "g" * 70}},
            pick=("metadata.generateName",)),
        Req("GET", STS, pick=("items.*.metadata.name",)),
    ],
    # A Job's generated selector (found by the sixth blind suite): a selector or uid and name labels the client
    # set are kept and then refused, the generated labels are nobody's in the Job's managed fields (its labels
    # are its template's, one map in Go) (kube-apiserver 1.35.4).
    "job_generated_selector_and_labels": [
        Req("POST", JOBS, job_with("sel", selector={"matchLabels": {"app": "sel"}})),
        Req("POST", JOBS, {**job_with("lbl"), "spec": {**job_with("lbl")["spec"], "template": {
            "metadata": {"labels": {"job-name": "other", "app": "x"}},
            "spec": job_with("lbl")["spec"]["template"]["spec"]}}}),
        Req("POST", JOBS, {**job_with("own"), "spec": {**job_with("own")["spec"], "template": {
            "metadata": {"labels": {"app": "own"}}, "spec": job_with("own")["spec"]["template"]["spec"]}}},
            pick=("metadata.labels", "metadata.managedFields.*.fieldsV1.f:metadata",
                  "metadata.managedFields.*.fieldsV1.f:spec.f:template.f:metadata")),
        Req("POST", JOBS, {**job_with("mine", manualSelector=True, selector={"matchLabels": {"app": "mine"}}),
                           "metadata": {"name": "mine", "labels": {"team": "a"}}, "spec": {
            **job_with("mine", manualSelector=True, selector={"matchLabels": {"app": "mine"}})["spec"],
            "template": {"metadata": {"labels": {"app": "mine"}},
                         "spec": job_with("mine")["spec"]["template"]["spec"]}}},
            pick=("metadata.labels", "spec.selector", "spec.template.metadata.labels")),
        Req("POST", JOBS, job_with("idx", completionMode="Indexed"), pick=("spec.completions", "spec.parallelism",
                                                                           "spec.completionMode")),
        Req("GET", JOBS, pick=("items.*.metadata.name",)),
    ],
    # Services (found by the sixth blind suite): external IPs denied by admission (DenyServiceExternalIPs, on in
    # the control plane judged against), cluster IPs that are IPs and in the service range, node ports only
    # for types that have them, not taken by another Service, and dropped with the type that needed them; a
    # switch to ExternalName drops the cluster IPs and families it had; a load balancer's ingress IPs, IP modes
    # (VIP by default) and host names (kube-apiserver 1.35.4).
    "service_ips_ports_and_ingress": [
        Req("POST", SVCS, service("ext", externalIPs=["192.0.2.7"])),
        Req("POST", SVCS, service("plain"), pick=("spec.type", "spec.ports")),
        Req("PATCH", SVCS + "/plain", {"spec": {"externalIPs": ["192.0.2.8"]}}, MERGE),
        Req("POST", SVCS, service("badip", clusterIP="300.1.1.1")),
        Req("POST", SVCS, service("far", clusterIP="10.99.0.5")),
        Req("POST", SVCS, service("twonone", clusterIP="None", clusterIPs=["None", "10.0.0.9"])),
        Req("POST", SVCS, service("cipnp", ports=[{"port": 80, "nodePort": 32123}])),
        Req("POST", SVCS, service("np", type="NodePort", ports=[{"port": 80, "nodePort": 32123}]),
            pick=("spec.type", "spec.ports")),
        Req("POST", SVCS, service("np2", type="NodePort", ports=[{"port": 81, "nodePort": 32123}])),
        Req("PATCH", SVCS + "/np", {"spec": {"type": "ClusterIP"}}, MERGE, pick=("spec.type", "spec.ports")),
        Req("POST", SVCS, service("np2", type="NodePort", ports=[{"port": 81, "nodePort": 32123}]),
            pick=("spec.ports",)),
        Req("PATCH", SVCS + "/plain", {"spec": {"type": "ExternalName", "externalName": "db.example.org"}}, MERGE,
            pick=("spec.type", "spec.clusterIP", "spec.clusterIPs", "spec.ipFamilies", "spec.ipFamilyPolicy")),
        Req("PATCH", SVCS + "/plain", {"spec": {"ipFamilyPolicy": "SingleStack", "ipFamilies": ["IPv4"]}}, MERGE),
        Req("POST", SVCS, service("lb", type="LoadBalancer"), pick=("spec.type",)),
        Req("PATCH", SVCS + "/lb/status", {"status": {"loadBalancer": {"ingress": [
            {"ip": "192.0.2.9"}, {"ip": "192.0.2.10", "ipMode": "Proxy"}]}}}, MERGE, pick=("status",)),
        Req("PATCH", SVCS + "/lb/status", {"status": {"loadBalancer": {"ingress": [
            {"ip": "nope", "ipMode": "Bridge"}, {"hostname": "192.0.2.11", "ipMode": "VIP"},
            {"hostname": "Not_A_Host"}]}}}, MERGE),
        Req("GET", SVCS, pick=("items.*.metadata.name",)),
    ],
    # PodSecurity admission (found by the sixth blind suite): a namespace's labels must parse; its enforce level
    # refuses new pods with the real violations, in the real order and words (kube-apiserver 1.35.4).
    "pod_security_levels": [
        Req("PATCH", "/api/v1/namespaces/{ns}", {"metadata": {"labels": {
            "pod-security.kubernetes.io/warn": "strict", "pod-security.kubernetes.io/audit-version": "1.30"}}},
            MERGE),
        Req("PATCH", "/api/v1/namespaces/{ns}", {"metadata": {"labels": {
            "pod-security.kubernetes.io/enforce": "baseline"}}}, MERGE, pick=("metadata.labels",)),
        _SETTLE,
        Req("POST", PODS, gated("host", hostNetwork=True, hostPID=True, container={
            "ports": [{"containerPort": 80, "hostPort": 8080}, {"containerPort": 81, "hostPort": 8081}],
            "securityContext": {"privileged": True, "capabilities": {"add": ["NET_ADMIN", "CHOWN", "SYS_TIME"]}}},
            volumes=[{"name": "h", "hostPath": {"path": "/tmp"}}, {"name": "h2", "hostPath": {"path": "/var"}}])),
        Req("POST", PODS, gated("host2", hostNetwork=True, hostIPC=True, container={
            "ports": [{"containerPort": 8080, "hostPort": 8080}], "securityContext": {"capabilities": {
                "add": ["BPF"]}}}, volumes=[{"name": "h", "hostPath": {"path": "/tmp"}}])),
        Req("POST", PODS, {**gated("seccomp", securityContext={"seccompProfile": {"type": "Unconfined"}}),
                           "spec": {**gated("seccomp")["spec"], "securityContext": {"seccompProfile": {
                               "type": "Unconfined"}}, "initContainers": [
                                   {"name": "i", "image": "busybox:1", "securityContext": {"seccompProfile": {
                                       "type": "Unconfined"}}}]}}),
        Req("POST", PODS, gated("ok-baseline", container={"securityContext": {"capabilities": {"add": ["CHOWN"]}}}),
            pick=("metadata.name",)),
        Req("PATCH", "/api/v1/namespaces/{ns}", {"metadata": {"labels": {
            "pod-security.kubernetes.io/enforce": "restricted"}}}, MERGE, pick=("metadata.labels",)),
        _SETTLE,
        Req("POST", PODS, {**gated("loose"), "spec": {**gated("loose")["spec"], "initContainers": [
            {"name": "i", "image": "busybox:1", "securityContext": {"runAsNonRoot": False, "runAsUser": 0}}],
            "volumes": [{"name": "n", "nfs": {"server": "x", "path": "/"}}, {"name": "e", "emptyDir": {}}]}}),
        Req("POST", PODS, gated("caps", securityContext={"runAsNonRoot": True, "runAsUser": 0, "seccompProfile": {
            "type": "RuntimeDefault"}}, container={"securityContext": {"allowPrivilegeEscalation": False,
                                                                       "capabilities": {"drop": ["NET_RAW"],
                                                                                        "add": ["NET_BIND_SERVICE",
                                                                                                "SYS_ADMIN"]}}})),
        Req("POST", PODS, gated("tight", securityContext={"runAsNonRoot": True, "seccompProfile": {
            "type": "RuntimeDefault"}}, container={"securityContext": {
                "allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"], "add": ["NET_BIND_SERVICE"]}}}),
            pick=("metadata.name",)),
        Req("PATCH", "/api/v1/namespaces/{ns}", {"metadata": {"labels": {
            "pod-security.kubernetes.io/enforce": "privileged"}}}, MERGE, pick=("metadata.labels",)),
        _SETTLE,
        Req("POST", PODS, gated("free", container={"securityContext": {"privileged": True}}), pick=("metadata.name",)),
        Req("GET", PODS, pick=("items.*.metadata.name",)),
    ],
    # Label selectors' gt and lt (``k>n``, ``k<n``: the label an integer on that side), their values integers;
    # a continue token whose first byte is no character, named as Go's scanner names it (found by the sixth
    # blind suite; kube-apiserver 1.35.4).
    "label_selector_gt_lt_and_token_bytes": [
        Req("POST", CM, cm("s1", labels={"size": "1"}), pick=("metadata.name",)),
        Req("POST", CM, cm("s5", labels={"size": "5"}), pick=("metadata.name",)),
        Req("POST", CM, cm("sneg", labels={"size": "-3"}), pick=("metadata.name",)),
        Req("POST", CM, cm("sx", labels={"size": "big"}), pick=("metadata.name",)),
        Req("GET", CM, params={"labelSelector": "size>1"}, pick=("items.*.metadata.name",)),
        Req("GET", CM, params={"labelSelector": "size<2"}, pick=("items.*.metadata.name",)),
        Req("GET", CM, params={"labelSelector": "size > -4,size<5"}, pick=("items.*.metadata.name",)),
        Req("GET", CM, params={"labelSelector": "size>x"}),
        Req("GET", CM, params={"labelSelector": "size>1.5"}),
        Req("GET", CM, params={"labelSelector": ">1"}),
        Req("GET", CM, params={"labelSelector": "=a"}),
        Req("GET", CM, params={"labelSelector": "size>2,,x"}),
        Req("GET", CM, params={"continue": "not-a-token"}),
        Req("GET", CM, params={"continue": "6Q"}),
    ],
    # A named GET with ``watch=true`` is a GET: the object, or 404 (found by the sixth blind suite; kube-apiserver
    # 1.35.4).
    "named_get_ignores_watch": [
        Req("POST", CM, cm("here", {"k": "v"}), pick=("metadata.name",)),
        Req("GET", CM + "/here", params={"watch": "true"}, pick=("kind", "metadata.name", "data")),
        Req("GET", CM + "/gone", params={"watch": "true"}),
        Req("GET", CM + "/here", params={"watch": "1", "resourceVersion": "0"}, pick=("kind", "metadata.name")),
    ],
    # A strategic merge patch's ``$retainKeys`` (found by the sixth blind suite): a list naming every key the
    # patch sets, else 400; the keys it does not list go (kube-apiserver 1.35.4).
    "strategic_retain_keys": [
        Req("POST", DEPLOY, {**deployment("d", [{"name": "c", "image": "busybox:1"}]),
                             "spec": {**deployment("d", [{"name": "c", "image": "busybox:1"}])["spec"], "replicas": 0}},
            pick=("spec.strategy",)),
        Req("PATCH", DEPLOY + "/d", {"spec": {"strategy": {"$retainKeys": ["type"], "type": "Recreate"}}}, STRATEGIC,
            pick=("spec.strategy",)),
        Req("PATCH", DEPLOY + "/d", {"spec": {"$retainKeys": ["type"], "strategy": {"type": "RollingUpdate"}}},
            STRATEGIC),
        Req("PATCH", DEPLOY + "/d", {"spec": {"strategy": {"$retainKeys": "type", "type": "Recreate"}}}, STRATEGIC),
        Req("PATCH", CM + "/none", {"data": {"$retainKeys": ["a"], "b": "1"}}, STRATEGIC),
        Req("POST", CM, cm("c", {"a": "1", "b": "2", "c": "3"}), pick=("data",)),
        Req("PATCH", CM + "/c", {"data": {"$retainKeys": ["a", "c"], "c": "4", "b": None}}, STRATEGIC, pick=("data",)),
        Req("PATCH", CM + "/c", {"data": {"$retainKeys": ["a"], "c": "5"}}, STRATEGIC),
        Req("GET", DEPLOY + "/d", pick=("spec.strategy",)),
    ],
    # ServiceAccount tokens (found by the sixth blind suite): a TokenRequest's checks and defaults; the tokens
    # controller fills a service account token Secret in, and deletes it with its account, or at once when
    # its account does not exist (kube-apiserver 1.35.4, kube-controller-manager).
    "serviceaccount_token_requests_and_secrets": [
        Req("POST", SAS, {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "bot"}},
            pick=("metadata.name",)),
        Req("POST", SAS + "/bot/token", {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
                                         "spec": {}}, params={"fieldManager": "asker"},
            pick=("kind", "apiVersion", "metadata.name", "metadata.namespace", "metadata.managedFields", "spec")),
        Req("POST", SAS + "/bot/token", {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
                                         "spec": {"audiences": ["a", "b"], "expirationSeconds": 7200}},
            pick=("spec", "metadata.managedFields.*.fieldsV1")),
        Req("POST", SAS + "/bot/token", {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
                                         "spec": {"expirationSeconds": 599}}),
        Req("POST", SAS + "/bot/token", {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
                                         "spec": {"expirationSeconds": 4294967297}}),
        Req("POST", SAS + "/nobody/token", {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest"}),
        Req("GET", SAS + "/bot/token"),
        Req("POST", SECRETS, {"apiVersion": "v1", "kind": "Secret", "type": "kubernetes.io/service-account-token",
                              "metadata": {"name": "bot-token", "annotations": {
                                  "kubernetes.io/service-account.name": "bot"}}}, pick=("type",)),
        WaitFor(SECRETS + "/bot-token", "data.namespace", "<set>"),
        Req("GET", SECRETS + "/bot-token", pick=("metadata.annotations", "type")),  # (data: base64 of the ns)
        Req("POST", SECRETS, {"apiVersion": "v1", "kind": "Secret", "type": "kubernetes.io/service-account-token",
                              "metadata": {"name": "orphan-token", "annotations": {
                                  "kubernetes.io/service-account.name": "nobody"}}}, pick=("type",)),
        WaitGone(SECRETS + "/orphan-token"),
        Req("DELETE", SAS + "/bot", pick=("metadata.name",)),
        WaitGone(SECRETS + "/bot-token"),
    ],
    # ReplicaSets (found by the sixth blind suite), stored as Deployments are, without their controller:
    # defaults, a Deployment's validation rules (and words), an immutable selector, scale and status
    # subresources (kube-apiserver 1.35.4).
    "replicaset_stored_and_validated": [
        Req("POST", RSS, replica_set("rs", {"app": "rs"}), pick=("spec", "status", "metadata.generation")),
        Req("POST", RSS, replica_set("bad", {"app": "x"}, {"app": "y"}, replicas=-1, minReadySeconds=-2)),
        Req("POST", RSS, replica_set("empty", {}, {"app": "y"})),
        Req("POST", RSS, {**replica_set("nosel", {"app": "z"}), "spec": {
            k: v for k, v in replica_set("nosel", {"app": "z"})["spec"].items() if k != "selector"}}),
        Req("PATCH", RSS + "/rs", {"spec": {"selector": {"matchLabels": {"app": "rs", "x": "y"}}}}, STRATEGIC,
            brief=True),
        Req("GET", RSS + "/rs/scale", pick=("kind", "apiVersion", "spec", "status")),
        Req("PATCH", RSS + "/rs/scale", {"spec": {"replicas": -1}}, MERGE),
        Req("PATCH", RSS + "/rs/scale", {"spec": {"replicas": 0}}, MERGE, pick=("spec",)),  # (none: the real
        Req("GET", RSS + "/rs", pick=("spec.replicas", "metadata.generation")),  # controller would make pods)
        Req("PATCH", RSS + "/rs/status", {"status": {"replicas": 1, "readyReplicas": 2, "availableReplicas": 3,
                                                    "fullyLabeledReplicas": -1}}, MERGE),
        Req("DELETE", RSS + "/rs", pick=("metadata.name",)),
        WaitGone(RSS + "/rs"),
        Req("GET", RSS, pick=("items.*.metadata.name",)),
    ],
    # An apply to a scale subresource names its object's type, or is a 400 (found by the sixth blind suite;
    # kube-apiserver 1.35.4; a typed apply there is not modelled).
    "scale_apply_needs_a_type": [
        Req("POST", DEPLOY, {**deployment("d", [{"name": "c", "image": "busybox:1"}]),
                             "spec": {**deployment("d", [{"name": "c", "image": "busybox:1"}])["spec"], "replicas": 0}},
            pick=("metadata.name",)),
        Req("PATCH", DEPLOY + "/d/scale", {"spec": {"replicas": 0}}, APPLY, params={"fieldManager": "m"}),
        Req("PATCH", DEPLOY + "/d/scale", {"kind": "Scale", "spec": {"replicas": 0}}, APPLY,
            params={"fieldManager": "m"}),
    ],
}
