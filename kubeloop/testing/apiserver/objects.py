"""Object rules shared by every write: names, metadata the server owns, generation, status subresource,
namespaces that must exist, CR pruning/defaulting/validation.
"""

from __future__ import annotations

import copy
import random
import uuid
from typing import Any

from kubeloop.testing.apiserver import (
    builtin,
    crds,
    defaults,
    embedded,
    errors,
    godecode,
    quantity,
    ratchet,
    schema,
    services,
    validation,
)
from kubeloop.testing.apiserver.kinds import Kind

GEN_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
CRD_KEY = ("apiextensions.k8s.io", "customresourcedefinitions")
# Fields the server owns: a client's values are ignored (create) or kept from the stored object (update).
SERVER_META = ("uid", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "generation",
               "resourceVersion", "selfLink")


# Its own source of randomness: a test's seeding of the ``random`` module (hypothesis does it for every
# example) must not make generated names repeat.
RNG = random.SystemRandom()


def check_name(kind: Kind, meta: dict[str, Any], taken: Any = lambda name: False) -> None:
    """Fills ``generateName`` (trying again, as the real server does, while ``taken(name)``, up to 8
    times); a missing name is a 422 at once (the rest of the name rules are in ``validation``, reported
    with the other causes)."""
    if not meta.get("name") and meta.get("generateName"):
        for _ in range(8):
            # (the prefix cut to 58 characters, as the real name generator does: the name fits in 63)
            meta["name"] = meta["generateName"][:58] + "".join(RNG.choices(GEN_ALPHABET, k=5))
            if not taken(meta["name"]):
                break
        if kind.key == ("", "namespaces"):  # the name label, once there is a name
            meta.setdefault("labels", {})["kubernetes.io/metadata.name"] = meta["name"]
    if not meta.get("name"):
        raise errors.invalid(kind.kind, kind.group, "", [("FieldValueRequired", "metadata.name",
                                                          "Required value: name or generateName is required")])


def validate_create(kind: Kind, version: str, obj: dict[str, Any], ns: str | None = None,
                    extra: list[tuple[str, str, str]] | None = None) -> dict[str, Any]:
    """Metadata and the kind's own rules (a custom resource's schema, after pruning and defaults), all
    causes in one 422 as the real server reports them; returns the object as stored. ``extra``: causes
    the caller found (a Job's generated selector)."""
    causes = validation.metadata_causes(kind, obj["metadata"], creating=True) + list(extra or [])
    if kind.key == CRD_KEY:
        causes += crds.causes(obj, creating=True)
    if kind.crd is None:
        causes += validation.object_causes(kind, obj, ns)
    else:
        try:
            obj = custom_checks(kind, version, obj, None)
        except errors.StatusError as exc:
            if exc.code != 422 or not causes:
                raise
            causes += [(c["reason"], c["field"], c["message"]) for c in (exc.details or {}).get("causes", [])]
    if causes:
        raise errors.invalid(kind.kind, _registry_group(kind), obj["metadata"].get("name", ""), causes)
    return obj


def _registry_group(kind: Kind) -> str:
    """The group a validation error names: events.k8s.io Events are core Events to their registry."""
    return "" if kind.key == ("events.k8s.io", "events") else kind.group


def validate_update(kind: Kind, old: dict[str, Any], sent: dict[str, Any], new: dict[str, Any],
                    subresource: str | None = None) -> None:
    """``sent``: the object as the client's update or patch left it, before server-owned fields were
    restored from ``old`` (so a changed uid or name is seen)."""
    changed = validation.update_metadata_causes(old["metadata"], sent.get("metadata") or {})
    if kind.crd is not None and subresource is None:
        _custom_metadata_update(kind, old, new, changed)
    causes = list(changed)
    if subresource == "finalize":  # a namespace's: its spec.finalizers are checked again, item by item
        causes += validation.namespace_finalizer_causes(new, indexed=True)
    asked_uid = (sent.get("metadata") or {}).get("uid")
    if kind.key == ("batch", "jobs") and asked_uid and asked_uid != old["metadata"].get("uid"):
        causes += validation.job_uid_causes(new, asked_uid)
    causes += validation.metadata_causes(kind, new["metadata"], creating=False)
    if subresource == "ephemeralcontainers":  # (ValidatePodEphemeralContainersUpdate)
        causes += validation.object_causes(kind, new, creating=False) + validation.ephemeral_update(old, new)
    elif kind.crd is None:
        causes += validation.object_causes(kind, new, creating=False) + validation.update_causes(kind, old, new)
    if kind.key == CRD_KEY:
        causes += crds.causes(new, creating=False, old=old)
    if causes:
        raise errors.invalid(kind.kind, _registry_group(kind), old["metadata"]["name"], causes)


def _custom_metadata_update(kind: Kind, old: dict[str, Any], new: dict[str, Any],
                            changed: list[tuple[str, str, str]]) -> None:
    """A custom resource's metadata update: its update checks run twice (the generic store's common
    checks, the strategy's), its ObjectMeta checks three times (once more, on the object alone)."""
    meta = validation.metadata_causes(kind, new["metadata"], creating=False)
    if changed or meta:
        causes = sorted(changed * 2 + meta * 3, key=lambda c: c[1])  # (grouped by field, as reported)
        raise errors.invalid_repeated(kind.kind, kind.group, old["metadata"]["name"], causes)


def validate_status_update(kind: Kind, old: dict[str, Any], sent: dict[str, Any], new: dict[str, Any]) -> None:
    """A built-in's ``/status`` write: its metadata (which the write may change) and its status rules."""
    causes = validation.update_metadata_causes(old["metadata"], sent.get("metadata") or {})
    causes += validation.metadata_causes(kind, new["metadata"], creating=False)
    causes += validation.status_causes(kind, new)
    if causes:
        raise errors.invalid(kind.kind, kind.group, old["metadata"]["name"], causes)


# What a built-in's ``/status`` write may not change besides the spec (the status strategies' resets).
STATUS_RESETS: dict[tuple[str, str], tuple[str, ...]] = {
    ("", "pods"): ("ownerReferences",), ("apps", "deployments"): ("labels",),
}


def new_metadata(kind: Kind, meta: dict[str, Any], now: str, uid: str | None = None) -> dict[str, Any]:
    out = {k: v for k, v in meta.items() if k not in SERVER_META and k != "managedFields"}
    out["uid"] = uid or str(uuid.uuid4())
    out["creationTimestamp"] = now
    if kind.generation or kind.crd is not None:
        out["generation"] = 1
    return out


def body_of(kind: Kind, obj: dict[str, Any]) -> dict[str, Any]:
    """What counts for ``generation``: everything but metadata, and status where a status subresource
    holds it (a custom resource without one bumps its generation on a status change too)."""
    skip = ("metadata", "apiVersion", "kind", "status") if kind.status or kind.crd is None else (
        "metadata", "apiVersion", "kind")
    return {k: v for k, v in obj.items() if k not in skip}


# What a Go zero value of the kind serializes to: a create's managedFields are its difference from this,
# so fields of non-pointer structs (a CRD's spec, names) never get a "." of their own.
ZERO: dict[tuple[str, str], dict[str, Any]] = {
    ("apiextensions.k8s.io", "customresourcedefinitions"): {
        "spec": {"group": "", "names": {"plural": "", "kind": ""}, "scope": "", "versions": None}},
    ("apps", "deployments"): {"spec": {"selector": None, "template": {"metadata": {"creationTimestamp": None},
                                                                      "spec": {"containers": None}},
                                       "strategy": {}}},
    ("apps", "replicasets"): {"spec": {"selector": None, "template": {"metadata": {"creationTimestamp": None},
                                                                      "spec": {"containers": None}}}},
    ("", "pods"): {"spec": {"containers": None}},
    ("batch", "jobs"): {"spec": {"template": {"metadata": {}, "spec": {"containers": None}}}},
    ("", "events"): {"source": {}, "involvedObject": {}},
    ("coordination.k8s.io", "leases"): {"spec": {}}, ("", "services"): {"spec": {}},
    ("", "limitranges"): {"spec": {}}, ("", "resourcequotas"): {"spec": {}},
}


def decode_defaults(kind: Kind, version: str, body: dict[str, Any]) -> dict[str, Any]:
    """Defaults applied when a request is decoded, before field ownership is computed (so they are
    owned by the writer): a Secret's type, a namespace's name label, a CRD's conversion strategy, a
    workload's and a pod's (``defaults``)."""
    obj = copy.deepcopy(body)
    obj["apiVersion"], obj["kind"] = kind.api_version(version), kind.kind
    meta = obj.setdefault("metadata", {})
    if kind.key == ("", "namespaces") and meta.get("name"):
        meta.setdefault("labels", {})["kubernetes.io/metadata.name"] = meta["name"]
    if kind.key in (("", "configmaps"), ("", "secrets")):
        _check_data(kind, version, obj)
    if kind.key == ("", "secrets"):
        obj.setdefault("type", "Opaque")
        _decode_string_data(obj)
    if kind.key == ("apiextensions.k8s.io", "customresourcedefinitions"):
        crds.clean(obj)
        obj.setdefault("spec", {}).setdefault("conversion", {"strategy": "None"})
        names = obj["spec"].get("names")
        if isinstance(names, dict) and isinstance(names.get("kind"), str) and names["kind"]:
            names.setdefault("singular", names["kind"].lower())
            names.setdefault("listKind", names["kind"] + "List")
    if kind.key == ("batch", "jobs"):
        _job_labels_from_template(obj)
    obj = builtin.decode(kind, version, obj)
    defaults.apply(kind.key, obj)
    return tidy(kind, obj)


# A Lease's fields behind the CoordinatedLeaderElection gate, off in kube-apiserver 1.35: dropped unless
# the stored Lease has them already.
_LEASE_GATED = ("preferredHolder", "strategy")


def stored(kind: Kind, obj: dict[str, Any]) -> dict[str, Any]:
    """A custom resource as stored: converted (conversion None) to the storage version, whose schema prunes it
    too, after field ownership was recorded from the version written (kube-apiserver 1.35.4)."""
    storage = kind.storage_schema() if kind.crd is not None else None
    return schema.prune(obj, storage) if storage is not None else obj


def managed_fields_fit(kind: Kind, version: str, entries: list[dict[str, Any]]) -> bool:
    """Whether every field the managedFields name exists in the custom resource's schema at ``version``: the
    real field manager, failing to convert them, resets them (the object is then untracked)."""
    declared = kind.schema(version) if kind.crd is not None else None
    if declared is None:
        return True

    def fits(tree: Any, node: Any) -> bool:
        if not isinstance(tree, dict) or not isinstance(node, dict) or node.get("x-kubernetes-preserve-unknown-fields"):
            return True
        props = node.get("properties") or {}
        for key, sub in tree.items():
            if not key.startswith("f:"):
                continue  # (".", list elements "k:"/"v:"/"i:": their schema is the items')
            name = key[2:]
            if name in props:
                child = props[name]
                child = child.get("items", child) if child.get("type") == "array" else child
                if not fits(sub, child):
                    return False
            elif props and not isinstance(node.get("additionalProperties"), dict):
                return False
        return True

    return all(fits({k: v for k, v in (e.get("fieldsV1") or {}).items() if k not in ("f:metadata", "f:apiVersion",
                                                                                      "f:kind")}, declared)
               for e in entries)


def strategy_create(kind: Kind, obj: dict[str, Any], now: str, account: dict[str, Any] | None = None) -> dict[str, Any]:
    """What the kind's strategy (and admission) sets on create, after field ownership (so nobody owns it);
    ``account``: a new pod's ServiceAccount."""
    if kind.status:
        obj.pop("status", None)
    if kind.key == ("", "services"):  # a struct Go always writes (so a /status write of it changes nothing)
        obj["status"] = {"loadBalancer": {}}
        services.on_create(obj)
    if kind.key == ("", "pods"):
        from kubeloop.testing.apiserver import admission

        admission.admit_pod(obj, account)
        obj["status"] = {"phase": "Pending", "qosClass": pod_qos_class(obj.get("spec") or {})}
        if (obj.get("spec") or {}).get("schedulingGates"):  # (the strategy's applySchedulingGatedCondition)
            obj["status"]["conditions"] = [{
                "type": "PodScheduled", "status": "False", "lastProbeTime": None, "lastTransitionTime": now,
                "reason": "SchedulingGated", "message": "Scheduling is blocked due to non-empty scheduling gates"}]
    if kind.key == ("", "resourcequotas"):  # (its controller fills it in)
        obj["status"] = {}
    if kind.key == ("apps", "daemonsets"):
        obj["metadata"].setdefault("annotations", {})[TEMPLATE_GENERATION] = "1"
    if kind.key == ("coordination.k8s.io", "leases") and isinstance(obj.get("spec"), dict):
        for field in _LEASE_GATED:  # (recorded as the writer's, then dropped)
            obj["spec"].pop(field, None)
    if kind.key == ("batch", "jobs"):
        # Defaulted again when read (the real server defaults what it decodes from etcd): a Job stored
        # without labels answers with its template's, generated ones included, never validated or owned.
        _job_labels_from_template(obj)
    if kind.key == ("", "namespaces"):  # the namespace controller's own finalizer joins the client's
        sent = list((obj.get("spec") or {}).get("finalizers") or [])
        obj["spec"] = {"finalizers": sent if "kubernetes" in sent else [*sent, "kubernetes"]}
        obj["status"] = {"phase": "Active"}
    if kind.key == ("apiextensions.k8s.io", "customresourcedefinitions"):
        obj["status"] = {"conditions": None, "acceptedNames": {"plural": "", "kind": ""},
                         "storedVersions": [v["name"] for v in obj["spec"].get("versions", [])
                                            if v.get("storage")]}
    return obj


def _job_labels_from_template(obj: dict[str, Any]) -> None:
    """SetDefaults_Job: a Job without labels takes a copy of its pod template's."""
    template = (obj.get("spec") or {}).get("template")
    labels = ((template or {}).get("metadata") or {}).get("labels") if isinstance(template, dict) else None
    if labels and not obj.setdefault("metadata", {}).get("labels"):
        obj["metadata"]["labels"] = copy.deepcopy(labels)


def pod_qos_class(spec: dict[str, Any]) -> str:
    """The QoS class the real Pod strategy records on create: BestEffort without any cpu or memory request
    or limit, Guaranteed when every container limits both with requests equal to the limits (a missing
    request takes its limit), else Burstable. (Init containers count too; overhead does not.)"""
    containers = [*(spec.get("initContainers") or []), *(spec.get("containers") or [])]
    guaranteed, any_set = True, False
    for c in containers:
        res = c.get("resources") or {}
        requests, limits = res.get("requests") or {}, res.get("limits") or {}
        for name in ("cpu", "memory"):
            limit, request = limits.get(name), requests.get(name, limits.get(name))
            any_set = any_set or limit is not None or request is not None
            if limit is None or request is None or _amount(request) != _amount(limit):
                guaranteed = False
    if not any_set:
        return "BestEffort"
    return "Guaranteed" if guaranteed and containers else "Burstable"


def _amount(value: Any) -> Any:
    try:
        return quantity.parse(str(value))[0]
    except ValueError:
        return str(value)


def job_selector(obj: dict[str, Any], uid: str, name_generated: bool = False) -> None:
    """The Job strategy's generated selector: the Job's uid and name as pod template labels, and a
    selector on the uid (unless the client chose ``manualSelector``). A Job whose labels were defaulted
    from its template's gets the generated ones too (in Go both are one map), unless its name was
    generated (``name_generated``: the real store copies the object before it generates a name)."""
    spec = obj.setdefault("spec", {})
    if spec.get("manualSelector") or not isinstance(spec.get("template", {}), dict):
        return
    name = obj["metadata"]["name"]
    labels = spec.setdefault("template", {}).setdefault("metadata", {}).setdefault("labels", {})
    shared = obj["metadata"].get("labels") == labels and not name_generated
    # (labels the client set are kept, and a selector it gave is added to: validation refuses both)
    for key, value in (("job-name", name), ("batch.kubernetes.io/job-name", name), ("controller-uid", uid),
                       ("batch.kubernetes.io/controller-uid", uid)):
        labels.setdefault(key, value)
    selector: dict[str, Any] = spec["selector"] if isinstance(spec.get("selector"), dict) else {}
    matching: dict[str, Any] = selector["matchLabels"] if isinstance(selector.get("matchLabels"), dict) else {}
    selector["matchLabels"] = {**matching, "batch.kubernetes.io/controller-uid": matching.get(
        "batch.kubernetes.io/controller-uid", uid)}
    spec["selector"] = selector
    if shared:
        obj["metadata"]["labels"] = dict(labels)


# Where pod specs sit in each kind: their containers' ``resources`` is a struct the real server always
# serializes (``{}`` when empty).
_POD_SPECS = defaults.POD_SPECS


# Struct fields of status conditions Go always writes (a zero time is null): per kind, per condition.
_CONDITION_ZEROS: dict[tuple[str, str], dict[str, Any]] = {
    ("", "pods"): {"lastProbeTime": None, "lastTransitionTime": None},
    ("", "services"): {"lastTransitionTime": None, "reason": "", "message": ""},
}
# Top-level fields a core v1 Event always has (structs and strings Go does not omit).
_EVENT_ZEROS: dict[str, Any] = {"source": {}, "firstTimestamp": None, "lastTimestamp": None, "eventTime": None,
                "reportingComponent": "", "reportingInstance": ""}


# And an events.k8s.io/v1 Event's (the deprecated core fields included).
_EVENT_V1_ZEROS: dict[str, Any] = {"eventTime": None, "deprecatedSource": {}, "deprecatedFirstTimestamp": None,
                                   "deprecatedLastTimestamp": None}


# The status a workload is written with before any controller fills it: a struct Go always writes, with the
# fields it does not omit (kube-apiserver 1.35.4; an HPA as autoscaling/v2 writes it).
_WORKLOAD_STATUS: dict[tuple[str, str], dict[str, Any]] = {
    ("apps", "deployments"): {}, ("batch", "jobs"): {}, ("batch", "cronjobs"): {},
    ("apps", "replicasets"): {"replicas": 0},
    ("apps", "statefulsets"): {"replicas": 0, "availableReplicas": 0},
    ("apps", "daemonsets"): {"currentNumberScheduled": 0, "numberMisscheduled": 0, "desiredNumberScheduled": 0,
                             "numberReady": 0},
    ("autoscaling", "horizontalpodautoscalers"): {"desiredReplicas": 0, "currentMetrics": None},
}


# ObjectMeta's fields in Go's declaration order, which the real server writes them in.
_META_RANK = {k: i for i, k in enumerate((
    "name", "generateName", "namespace", "selfLink", "uid", "resourceVersion", "generation", "creationTimestamp",
    "deletionTimestamp", "deletionGracePeriodSeconds", "labels", "annotations", "ownerReferences", "finalizers",
    "managedFields"))}


def _status_zeros(kind: Kind, obj: dict[str, Any]) -> dict[str, Any]:
    zeros_of_event = {("", "events"): _EVENT_ZEROS, ("events.k8s.io", "events"): _EVENT_V1_ZEROS}.get(kind.key)
    if zeros_of_event is not None:
        return obj if all(k in obj for k in zeros_of_event) else {**copy.deepcopy(zeros_of_event), **obj}
    zeros = _CONDITION_ZEROS.get(kind.key)
    status = obj.get("status")
    if zeros is None or not isinstance(status, dict):
        return obj
    conditions = [c for c in status.get("conditions") or [] if isinstance(c, dict)]
    lb = kind.key == ("", "services") and not isinstance(status.get("loadBalancer"), dict)
    if not lb and all(all(k in c for k in zeros) for c in conditions):
        return obj
    out = {**obj, "status": copy.deepcopy(status)}
    if lb:
        out["status"]["loadBalancer"] = {}
    for c in out["status"].get("conditions") or []:
        if isinstance(c, dict):
            for key, zero in zeros.items():
                c.setdefault(key, zero)
    return out


def serialized(kind: Kind, obj: dict[str, Any]) -> dict[str, Any]:
    """An object as the real server's JSON encoder writes it: empty structs it cannot omit are ``{}``,
    zero times of status conditions null (a copy when anything is added; stored objects and their field
    ownership are left alone)."""
    obj = _status_zeros(kind, obj)
    meta = obj.get("metadata")
    if isinstance(meta, dict):
        ranked = sorted(meta, key=lambda k: _META_RANK.get(k, 99))
        if list(meta) != ranked:
            obj = {**obj, "metadata": {k: meta[k] for k in ranked}}
    if kind.key == ("coordination.k8s.io", "leases") and "spec" not in obj:
        return {**obj, "spec": {}}
    zero = _WORKLOAD_STATUS.get(kind.key)
    status = obj.get("status")
    if zero is not None and (status is None or (isinstance(status, dict) and not zero.keys() <= status.keys())):
        obj = {**obj, "status": {**copy.deepcopy(zero), **(status or {})}}
    path = _POD_SPECS.get(kind.key)
    if path is None:
        return obj
    spec: Any = obj
    for part in path:
        spec = spec.get(part) if isinstance(spec, dict) else None
    if not isinstance(spec, dict) or all(isinstance(c, dict) and c.get("resources") is not None
                                         for f in ("containers", "initContainers") for c in spec.get(f) or []):
        return obj
    out = copy.deepcopy(obj)
    spec = out
    for part in path:
        spec = spec[part]
    for field in ("containers", "initContainers"):
        for container in spec.get(field) or []:
            if isinstance(container, dict) and container.get("resources") is None:
                container["resources"] = {}
    return out


def tidy(kind: Kind, obj: dict[str, Any]) -> dict[str, Any]:
    """Drops what Go's ``omitempty`` drops: empty metadata maps/lists; a built-in's empty data maps."""
    meta = obj.get("metadata") or {}
    for key in ("labels", "annotations", "finalizers", "ownerReferences"):
        if key in meta and not meta[key]:
            del meta[key]
    if kind.crd is None:
        for key in ("data", "binaryData", "stringData"):
            if key in obj and not obj[key]:
                del obj[key]
    if kind.key == ("", "events"):  # a core Event's omitempty strings and count
        for key in ("reason", "message", "type", "action", "count"):
            if key in obj and obj[key] in ("", 0, None) and obj[key] is not False:
                del obj[key]
    return obj


def scope(kind: Kind, subresource: str | None) -> Any:
    """Which field paths a write through this endpoint may own (the real server's reset fields)."""
    if subresource == "status" and kind.key == CRD_KEY:  # (metadata and spec are reset)
        return lambda path: path[:1] == ("f:status",)
    if subresource == "status" and kind.crd is not None:  # spec is reset (and the rest dropped later)
        return lambda path: path[:1] != ("f:spec",)
    if subresource == "status":  # a built-in's: all but its spec and what its status strategy resets
        resets = {("f:metadata", f"f:{key}") for key in STATUS_RESETS.get(kind.key, ())}
        return lambda path: path[:1] != ("f:spec",) and path[:2] not in resets
    reset = {("f:status",)} if kind.status else set()
    if kind.key == ("", "namespaces") and subresource != "finalize":  # (written by /finalize only)
        reset.add(("f:spec",))
    return lambda path: path[:1] not in reset


def _check_data(kind: Kind, version: str, obj: dict[str, Any]) -> None:
    """Decoding errors (400): values that are not strings; base64 that does not decode."""
    import base64
    import binascii

    def refuse(why: str) -> errors.StatusError:
        return errors.bad_request(f'{kind.kind} in version "{version}" cannot be handled as a {kind.kind}: {why}')

    fields = ("data", "stringData") if kind.plural == "configmaps" else ("data", "stringData")
    for field in (*fields, "binaryData"):
        values = obj.get(field)
        if values is None:
            continue
        text = field == "stringData" or (field == "data" and kind.plural == "configmaps")
        go = "string" if text else "[]uint8"  # (a Secret's data and any binaryData are bytes)
        if not isinstance(values, dict):
            raise refuse(f"json: cannot unmarshal {_json_type(values)} into Go struct field {kind.kind}.{field} of "
                         f"type map[string]{go}")
        for value in values.values():
            if not isinstance(value, str) and value is not None:
                raise refuse(f"json: cannot unmarshal {_json_type(value)} into Go struct field {kind.kind}.{field} "
                             f"of type {go}")
            if (field == "binaryData" or (field == "data" and kind.plural == "secrets")) and value:
                try:
                    base64.b64decode(value, validate=True)
                except (binascii.Error, ValueError):
                    raise refuse(f"illegal base64 data at input byte {godecode.bad_base64_byte(value)}") from None


def _json_type(value: Any) -> str:
    return {bool: "bool", int: "number", float: "number", list: "array", dict: "object", str: "string"}.get(
        type(value), "value")


def _decode_string_data(obj: dict[str, Any]) -> None:
    import base64

    for key, value in (obj.pop("stringData", None) or {}).items():
        obj.setdefault("data", {})[key] = base64.b64encode(str(value).encode()).decode()


# The errors that keep CEL rules from running (apiextensions' hasBlockingErr): a wrong type or format, a
# missing required field, an unsupported enum value, too long a string, too many items or properties.
_BLOCKING = ("FieldValueTypeInvalid", "FieldValueRequired", "FieldValueNotSupported", "FieldValueTooLong",
             "FieldValueTooMany")
_UNCHECKED = ("FieldValueInvalid", "<nil>", "Invalid value: null: some validation rules were not checked because "
              "the object was invalid; correct the existing errors to complete validation")


def custom_checks(kind: Kind, version: str, obj: dict[str, Any], old: dict[str, Any] | None, *,
                  status_only: bool = False) -> dict[str, Any]:
    """Prunes, defaults and validates a custom resource against its CRD version's schema: the schema's
    rules and its list types, then the CEL rules, unless an error of the first kind blocks them (then a
    cause says so, as on the real server). A ``/status`` write (``status_only``) has its status checked
    by the status schema alone: the causes' fields start at ``status``, their messages do not."""
    if kind.crd is None:
        return obj
    spec_schema = kind.schema(version)
    if spec_schema is None:
        return obj
    obj = decoded(kind, version, obj, spec_schema)
    obj = schema.default(obj, spec_schema)
    if status_only:
        status_schema = (spec_schema.get("properties") or {}).get("status")
        found = [] if "status" not in obj or not isinstance(status_schema, dict) else \
            schema.validate(obj["status"], status_schema)
        if old is not None:  # (relative to status, as the status schema alone validates it)
            found = ratchet.unchanged_dropped(found, obj["status"], old.get("status"), status_schema)
        causes = [] if "status" not in obj or not isinstance(status_schema, dict) else [
            (reason, "status" if field == "<root>" else field if field == "<nil>" else f"status{_sep(field)}{field}",
             message.replace(": <root> in body", ":  in body"))
            for reason, field, message in found + schema.list_causes(obj["status"], status_schema)] + \
            embedded.causes(obj.get("status"), status_schema, "status")
    else:
        causes = schema.validate(obj, spec_schema)
        if old is not None:  # (an unchanged value keeps passing: validation ratcheting)
            causes = ratchet.unchanged_dropped(causes, obj, old, spec_schema)
        causes += embedded.causes(obj, spec_schema, "") + schema.list_causes(obj, spec_schema)
    from kubeloop.testing.apiserver import cel

    if cel.has_rules(spec_schema):
        if any(c[0] in _BLOCKING for c in causes):
            causes.append(_UNCHECKED)
        else:
            causes += cel.causes(kind, spec_schema, obj, old)
    if causes:
        raise errors.invalid(kind.kind, kind.group, obj["metadata"].get("name", ""), causes)
    return obj


def decoded(kind: Kind, version: str, obj: dict[str, Any], spec_schema: dict[str, Any] | None) -> dict[str, Any]:
    """A custom resource pruned as its decoder prunes it; an embedded object it cannot coerce is a 400."""
    try:
        pruned: dict[str, Any] = schema.prune(obj, spec_schema)
    except embedded.Malformed as exc:
        raise errors.bad_request(f'{kind.kind} in version "{version}" cannot be handled as a {kind.kind}: '
                                 f"{exc}") from None
    return pruned


def _sep(field: str) -> str:
    return "" if field.startswith("[") else "."


# What etcd takes in one request (its --max-request-bytes default, 1.5 MiB), and the largest message
# kube-apiserver's etcd client sends (2 MiB). A custom resource is stored as JSON; the request holds its
# key twice (the transaction's condition and its write), an update's (an apply's, also when it creates)
# three times (it reads the object back when the condition fails). The framing (40 and 26 bytes, 4 more
# for an update) was measured on kube-apiserver 1.35.4 with etcd 3.6, to within a few bytes.
ETCD_MAX_REQUEST = 1536 * 1024
ETCD_GRPC_MAX_SEND = 2048 * 1024


def _etcd_refusal(kind: Kind, obj: dict[str, Any], update: bool) -> errors.StatusError | None:
    import json

    meta = obj.get("metadata") or {}
    stored = {**obj, "metadata": {k: v for k, v in meta.items() if k != "resourceVersion"}}
    size = len(json.dumps(stored, separators=(",", ":"), ensure_ascii=False).encode())
    where = f"{meta['namespace']}/{meta['name']}" if meta.get("namespace") else meta.get("name", "")
    key = len(f"/registry/{kind.group}/{kind.plural}/{where}".encode())
    size += (3 * key + 4) if update else 2 * key
    if size + 26 > ETCD_GRPC_MAX_SEND:
        return errors.StatusError(500, "", f"rpc error: code = ResourceExhausted desc = trying to send message "
                                  f"larger than max ({size + 26} vs. {ETCD_GRPC_MAX_SEND})")
    if size + 40 > ETCD_MAX_REQUEST:
        return errors.StatusError(500, "", "etcdserver: request is too large")
    return None


def fit_in_etcd(kind: Kind, obj: dict[str, Any], *, update: bool, retry: bool = True) -> dict[str, Any]:
    """A custom resource as the real server stores it: refused (500, as etcd refuses it) when too large,
    after a second try without its managedFields, which the real server drops to make it fit (not for
    an apply: ``retry=False``)."""
    if kind.crd is None:
        return obj
    refusal = _etcd_refusal(kind, obj, update)
    if refusal is None:
        return obj
    if retry and obj.get("metadata", {}).get("managedFields"):
        lean = {**obj, "metadata": {k: v for k, v in obj["metadata"].items() if k != "managedFields"}}
        refusal = _etcd_refusal(kind, lean, update)
        if refusal is None:
            return lean
    raise refusal


def check_immutable(kind: Kind, old: dict[str, Any], new: dict[str, Any]) -> None:
    """An ``immutable`` ConfigMap or Secret refuses changes to its data (and to ``immutable``)."""
    if kind.key not in (("", "configmaps"), ("", "secrets")) or not old.get("immutable"):
        return
    msg = "Forbidden: field is immutable when `immutable` is set"
    causes = [("FieldValueForbidden", field, msg) for field in ("data", "binaryData")
              if (old.get(field) or {}) != (new.get(field) or {})]
    if new.get("immutable") is not True:
        causes.append(("FieldValueForbidden", "immutable", msg))
    if causes:
        raise errors.invalid(kind.kind, kind.group, old["metadata"]["name"], causes)


# A DaemonSet's template generation (a field of the internal type, an annotation in apps/v1): set by the
# server, moved on by each change of the template, never by a client.
TEMPLATE_GENERATION = "deprecated.daemonset.template.generation"


def _template_generation(old: dict[str, Any], new: dict[str, Any]) -> None:
    kept = (old["metadata"].get("annotations") or {}).get(TEMPLATE_GENERATION)
    changed = (old.get("spec") or {}).get("template") != (new.get("spec") or {}).get("template")
    annotations = new["metadata"].setdefault("annotations", {})
    if kept is None:
        annotations.pop(TEMPLATE_GENERATION, None)
    else:
        annotations[TEMPLATE_GENERATION] = str(int(kept) + 1) if changed else kept


def status_write_seen(kind: Kind, body: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """What the field manager records of a ``/status`` write: a custom resource's status strategy keeps only
    the status, but after the field manager saw the writer's metadata too, so its labels, annotations and
    finalizers are recorded as the writer's though not stored (kube-apiserver 1.35.4)."""
    if kind.crd is None:
        return new
    kept = set(SERVER_META) | {"name", "namespace", "managedFields"}
    sent = body.get("metadata") or {}
    meta = {k: v for k, v in sent.items() if k not in kept}
    meta.update((k, v) for k, v in new["metadata"].items() if k in kept)
    return {**new, "metadata": meta}


def merge_update(kind: Kind, old: dict[str, Any], new: dict[str, Any], subresource: str | None
                 ) -> dict[str, Any]:
    """The object an update stores: server-owned metadata from ``old``; with a status subresource the
    main resource keeps the old status and ``/status`` keeps everything but status from ``old``."""
    if subresource == "status":
        out = copy.deepcopy(old)
        if "status" in new:
            out["status"] = copy.deepcopy(new["status"])
        else:
            out.pop("status", None)
        if kind.key == ("", "services") and isinstance(out.get("status"), dict):
            out["status"].setdefault("loadBalancer", {})
            services.ingress_defaults(out["status"])
        if kind.key == ("apiextensions.k8s.io", "customresourcedefinitions"):
            # a CRD's status strategy keeps the writer's finalizers (the cleanup finalizer comes this way)
            out["metadata"]["finalizers"] = copy.deepcopy((new.get("metadata") or {}).get("finalizers") or [])
        elif kind.crd is None:  # a built-in's keeps the writer's metadata too, but for the server's own
            sent = new.get("metadata") or {}
            kept = set(SERVER_META) | {"name", "namespace", "managedFields"} | set(STATUS_RESETS.get(kind.key, ()))
            out["metadata"] = {**{k: copy.deepcopy(v) for k, v in sent.items() if k not in kept},
                               **{k: v for k, v in out["metadata"].items() if k in kept}}
        return tidy(kind, out)
    if subresource == "ephemeralcontainers":  # the pod as it was, with the writer's ephemeral containers
        out = copy.deepcopy(old)
        listed = (new.get("spec") or {}).get("ephemeralContainers") if isinstance(new.get("spec"), dict) else None
        if listed:
            out.setdefault("spec", {})["ephemeralContainers"] = copy.deepcopy(listed)
        else:
            out.get("spec", {}).pop("ephemeralContainers", None)
        if body_of(kind, out) != body_of(kind, old):
            out["metadata"]["generation"] = int(old["metadata"].get("generation", 1)) + 1
        return tidy(kind, out)
    out = copy.deepcopy(new)
    out["apiVersion"], out["kind"] = old["apiVersion"], old["kind"]
    meta = out.setdefault("metadata", {})
    for key in SERVER_META:
        if key in old["metadata"]:
            meta[key] = old["metadata"][key]
        else:
            meta.pop(key, None)
    meta["name"] = old["metadata"]["name"]
    if "namespace" in old["metadata"]:
        meta["namespace"] = old["metadata"]["namespace"]
    if kind.status:
        if "status" in old:
            out["status"] = copy.deepcopy(old["status"])
        else:
            out.pop("status", None)
    if kind.key == ("coordination.k8s.io", "leases") and isinstance(out.get("spec"), dict):
        for field in _LEASE_GATED:
            if field not in (old.get("spec") or {}):
                out["spec"].pop(field, None)
    if kind.key == ("", "namespaces"):  # spec.finalizers change through /finalize only
        spec = new.get("spec") if subresource == "finalize" else old.get("spec")
        out["spec"] = copy.deepcopy(spec) if isinstance(spec, dict) else {}
        if not out["spec"].get("finalizers"):
            out["spec"].pop("finalizers", None)
    if kind.plural == "secrets":
        _decode_string_data(out)
    if kind.key == ("apps", "daemonsets"):
        _template_generation(old, out)
    if kind.key == ("", "services"):
        services.keep_allocated(old, out)
    # A Deployment's annotations count too (they are copied to its ReplicaSets).
    annotations_moved = kind.key == ("apps", "deployments") and (
        (meta.get("annotations") or {}) != (old["metadata"].get("annotations") or {}))
    if (kind.generation or kind.crd is not None) and (body_of(kind, out) != body_of(kind, old) or annotations_moved):
        meta["generation"] = int(old["metadata"].get("generation", 1)) + 1
    if kind.key == CRD_KEY:
        crds.add_stored_version(out)
    return tidy(kind, out)
