"""What kube-apiserver's validation refuses with 422 Invalid, for the rules an operator's writes meet:

- metadata on every write: names per kind (RFC 1123 subdomain, RFC 1123 label for Namespaces, RFC 1035
  label for Services, 52 characters for CronJobs), label keys and values, annotation keys and their
  256 KiB total, finalizer names, owner references (apiVersion, kind, name, uid; one controller);
- metadata on update: name, namespace and uid are immutable; no new finalizer once deletion started;
- per kind, the required fields and enums a minimal body gets wrong (a Pod's containers and images, a
  Deployment's selector matching its template, a Service's ports, a Job's restart policy, a CronJob's
  schedule, a Lease's duration, an Event's reporting controller) and the fields that are immutable
  (a Pod's spec but its images and deadline, a Deployment's selector, a Job's template and selector,
  a Secret's type).

Causes are (reason, field, message) as the real server reports them. Rules not listed here are not
checked: the fake accepts what the real server might refuse for them (docs/reference/fake-api-server.md).
"""

from __future__ import annotations

import base64
import binascii
import copy
import re
from collections.abc import Callable
from typing import Any

from kubeloop.testing.apiserver import (
    autoscaling,
    batch,
    containers,
    events,
    limitranges,
    names,
    quotas,
    scheduling,
    secrets,
    selectors,
    services,
    workloads,
)
from kubeloop.testing.apiserver.causes import Cause, shown
from kubeloop.testing.apiserver.causes import invalid as _invalid
from kubeloop.testing.apiserver.causes import required as _required
from kubeloop.testing.apiserver.causes import unsupported as _unsupported
from kubeloop.testing.apiserver.kinds import Kind

ANNOTATIONS_LIMIT = 256 * 1024
_STANDARD_FINALIZERS = {"kubernetes", "orphan", "foregroundDeletion"}
_IMMUTABLE = "field is immutable"


def name_causes(kind: Kind, name: str) -> list[Cause]:
    if kind.key == ("", "events"):  # a core v1 Event: only the generic path-segment rule (no length, dots...)
        bad = [f"may not contain '{c}'" for c in ("/", "%") if c in name]
        return [_invalid("metadata.name", name, f"may not be '{name}'")] if name in (".", "..") else [
            _invalid("metadata.name", name, why) for why in bad]
    if kind.key == ("", "namespaces"):
        errs = names.dns1123_label(name)
    elif kind.key == ("", "services"):
        errs = names.dns1035_label(name)
    elif kind.key == ("apps", "statefulsets"):  # (its name is its pods' host names, and a label value)
        errs = names.dns1123_label(name)
    else:
        errs = names.dns1123_subdomain(name)
    out = [_invalid("metadata.name", name, e) for e in errs]
    if kind.key == ("batch", "cronjobs") and len(name) > 52:
        out.append(_invalid("metadata.name", name, "must be no more than 52 characters"))
    return out


def metadata_causes(kind: Kind, meta: dict[str, Any], *, creating: bool) -> list[Cause]:
    out: list[Cause] = name_causes(kind, meta.get("name") or "") if creating else []
    prefix = meta.get("generateName")
    if creating and isinstance(prefix, str) and prefix:  # checked as a prefix: a trailing dash is allowed
        masked = prefix[:-1] + "a" if prefix.endswith("-") else prefix
        out += [(reason, "metadata.generateName", message.replace(shown(masked), shown(prefix), 1))
                for reason, _, message in name_causes(kind, masked)]
    for key, value in (meta.get("labels") or {}).items():
        out += [_invalid("metadata.labels", key, e) for e in names.qualified_name(key)]
        if not isinstance(value, str):
            continue
        out += [_invalid("metadata.labels", value, e) for e in names.label_value(value)]
    annotations = meta.get("annotations") or {}
    for key in annotations:
        out += [_invalid("metadata.annotations", key, e) for e in names.qualified_name(key.lower())]
    size = sum(len(k) + len(v) for k, v in annotations.items() if isinstance(v, str))
    if size > ANNOTATIONS_LIMIT:
        out.append(("FieldValueTooLong", "metadata.annotations", f"Too long: may not be more than {ANNOTATIONS_LIMIT} "
                                                                 "bytes"))
    out += _owner_causes(meta.get("ownerReferences") or [])
    out += finalizer_causes(kind, meta.get("finalizers") or [])
    return out


def _owner_causes(refs: list[Any]) -> list[Cause]:
    out: list[Cause] = []
    controller = ""
    for ref in refs:
        if not isinstance(ref, dict):
            continue
        for key, msg in (("apiVersion", "version must not be empty"), ("kind", "must not be empty"),
                         ("name", "must not be empty"), ("uid", "must not be empty")):
            if not ref.get(key):
                out.append(_invalid(f"metadata.ownerReferences.{key}", ref.get(key, ""), msg))
        if ref.get("controller") is True:
            this = f"{ref.get('kind')}/{ref.get('name')}"
            if controller:
                out.append(_invalid("metadata.ownerReferences", [_go_owner(r) for r in refs if isinstance(r, dict)],
                                    "Only one reference can have Controller set to "
                                    f'true. Found "true" in references for {controller} and {this}'))
            else:
                controller = this
    return out


_OWNER_FIELDS = ("apiVersion", "kind", "name", "uid", "controller", "blockOwnerDeletion")


def _go_owner(ref: dict[str, Any]) -> dict[str, Any]:
    """An owner reference as Go marshals it: its fields in order, the unset pointers left out."""
    return {k: ref.get(k, "") for k in _OWNER_FIELDS[:4]} | {k: ref[k] for k in _OWNER_FIELDS[4:]
                                                              if ref.get(k) is not None}


def finalizer_causes(kind: Kind, finalizers: list[Any]) -> list[Cause]:
    out: list[Cause] = []
    for fin in finalizers:
        if isinstance(fin, str):
            out += [_invalid("metadata.finalizers", fin, e) for e in names.qualified_name(fin)]
    if "orphan" in finalizers and "foregroundDeletion" in finalizers:
        out.append(_invalid("metadata.finalizers", "", "finalizer orphan and foregroundDeletion cannot be both set"))
    if _core_validated(kind):
        out += _kube_finalizer_causes(finalizers)
    return out


def _core_validated(kind: Kind) -> bool:
    """Built-in kinds validated by the core API's metadata rules (CRDs and custom resources are not)."""
    return kind.crd is None and kind.group not in ("apiextensions.k8s.io", "coordination.k8s.io") and \
        kind.key != ("", "events")  # (core Events: apimachinery's rules only; events.k8s.io's: the core API's)


def namespace_finalizer_causes(obj: dict[str, Any], *, indexed: bool) -> list[Cause]:
    """A Namespace's ``spec.finalizers``: qualified names, a bare one only if standard. Its create names
    the list (``spec.finalizers``), its ``/finalize`` update each item (``spec.finalizers[i]``)."""
    spec = obj.get("spec")
    out: list[Cause] = []
    for i, fin in enumerate((spec.get("finalizers") if isinstance(spec, dict) else None) or []):
        if not isinstance(fin, str):
            continue
        field = f"spec.finalizers[{i}]" if indexed else "spec.finalizers"
        out += [_invalid(field, fin, e) for e in names.qualified_name(fin)]
        if "/" not in fin and fin not in _STANDARD_FINALIZERS:
            out.append(_invalid(field, fin, "name is neither a standard finalizer name nor is it fully qualified"))
    return out


def _kube_finalizer_causes(finalizers: list[Any]) -> list[Cause]:
    """Built-in kinds refuse a finalizer without a domain unless it is one of the standard ones."""
    return [_invalid(f"metadata.finalizers[{i}]", fin, "name is neither a standard finalizer name nor is it fully "
                     "qualified") for i, fin in enumerate(finalizers)
            if isinstance(fin, str) and "/" not in fin and fin not in _STANDARD_FINALIZERS]


def update_metadata_causes(old: dict[str, Any], new: dict[str, Any]) -> list[Cause]:
    """What ``ValidateObjectMetaUpdate`` adds on update: immutable identity, no new finalizers once deleting."""
    out: list[Cause] = []
    if old.get("deletionTimestamp"):
        extra = sorted(set(new.get("finalizers") or []) - set(old.get("finalizers") or []))
        if extra:
            shown = ", ".join(f'"{f}"' for f in extra)
            out.append(("FieldValueForbidden", "metadata.finalizers", "Forbidden: no new finalizers can be added if "
                        f"the object is being deleted, found new finalizers []string{{{shown}}}"))
    for key in ("name", "namespace", "uid"):
        if key in new and new.get(key) != old.get(key):
            out.append(_invalid(f"metadata.{key}", new.get(key), _IMMUTABLE))
    return out


# --- per kind ----------------------------------------------------------------------------------------

def _containers(spec: Any, path: str) -> list[Cause]:
    return containers.causes(spec, path)


def _restart(spec: Any, path: str, allowed: list[str]) -> list[Cause]:
    policy = (spec or {}).get("restartPolicy") if isinstance(spec, dict) else None
    if policy is not None and policy not in allowed:
        return [_unsupported(f"{path}.restartPolicy", policy, allowed)]
    return []


def _pod(obj: dict[str, Any]) -> list[Cause]:
    spec = obj.get("spec")
    return _containers(spec, "spec") + _restart(spec, "spec", ["Always", "OnFailure", "Never"])


def _workload(word: str) -> Any:
    """A Deployment's, StatefulSet's or DaemonSet's spec: a selector that selects its template's labels,
    a pod template that restarts Always."""
    def check(obj: dict[str, Any]) -> list[Cause]:
        spec = obj.get("spec") or {}
        out: list[Cause] = []
        if word != "daemonset" and isinstance(spec.get("replicas"), int) and spec["replicas"] < 0:
            out.append(_invalid("spec.replicas", spec["replicas"], "must be greater than or equal to 0"))
        if isinstance(spec.get("minReadySeconds"), int) and spec["minReadySeconds"] < 0:
            out.append(_invalid("spec.minReadySeconds", spec["minReadySeconds"], "must be greater than or equal "
                                "to 0"))
        template = spec.get("template") or {}
        selector = spec.get("selector")
        labels = (template.get("metadata") or {}).get("labels") or {}
        mismatch = _invalid("spec.template.metadata.labels", labels, "`selector` does not match template `labels`")
        if selector is None:  # and so the template's labels match nothing (a DaemonSet says only that)
            out += [mismatch] if word == "daemonset" else [_required("spec.selector"), mismatch]
        else:
            out += selectors.label_selector_causes(selector, "spec.selector")
            matches = selectors.label_selector_matches(selector, labels)
            if not (selector or {}).get("matchLabels") and not (selector or {}).get("matchExpressions"):
                out.append(_invalid("spec.selector", _go_selector(selector), f"empty selector is invalid for {word}"))
            elif matches is None and word != "daemonset":  # (a StatefulSet's says no more than its value)
                out.append(_invalid("spec.selector", _go_selector(selector), "invalid label selector")
                           if word == "deployment" else ("FieldValueInvalid", "spec.selector",
                                                         f"Invalid value: {shown(_go_selector(selector))}"))
            elif matches is False:
                out.append(mismatch)
        pod_spec = template.get("spec")
        if word == "statefulset" and isinstance(pod_spec, dict) and spec.get("volumeClaimTemplates"):
            claims = workloads.claim_volumes(spec)  # (the pods get them: mounts of them are fine)
            taken = {c["name"] for c in claims}
            pod_spec = {**pod_spec, "volumes": claims + [v for v in pod_spec.get("volumes") or []
                                                        if not (isinstance(v, dict) and v.get("name") in taken)]}
        out += _containers(pod_spec, "spec.template.spec")
        out += _restart(template.get("spec"), "spec.template.spec", ["Always"])
        return out
    return check


def _go_selector(selector: dict[str, Any]) -> dict[str, Any]:
    """A LabelSelector as Go's json.Marshal prints it: its fields in declaration order, empty ones left out."""
    return {k: selector[k] for k in ("matchLabels", "matchExpressions") if selector.get(k)}


def _job_template(template: Any, path: str, failure_policy: bool = False) -> list[Cause]:
    """A Job's (or a CronJob's job's) pod template: ``Always`` (the default) is refused as a required
    value; another policy the pod spec does not know, by both checks; a pod failure policy takes ``Never``
    only (kube-apiserver 1.35.4's ``validateJobSpec``)."""
    spec = (template or {}).get("spec") if isinstance(template, dict) else None
    out = _containers(spec, f"{path}.spec")
    policy = (spec or {}).get("restartPolicy") if isinstance(spec, dict) else None
    if policy in (None, "", "Always"):
        out.append(("FieldValueRequired", f"{path}.spec.restartPolicy",
                    'Required value: valid values: "OnFailure", "Never"'))
    elif policy not in ("OnFailure", "Never"):
        out += _restart(spec, f"{path}.spec", ["Always", "OnFailure", "Never"])
        out.append(_unsupported(f"{path}.spec.restartPolicy", policy, ["OnFailure", "Never"]))
    elif failure_policy and policy != "Never":
        out.append(_invalid(f"{path}.spec.restartPolicy", policy, 'only "Never" is supported when podFailurePolicy '
                            "is specified"))
    return out


def _job(obj: dict[str, Any]) -> list[Cause]:
    template = (obj.get("spec") or {}).get("template")
    labels = ((template or {}).get("metadata") or {}).get("labels") if isinstance(template, dict) else None
    out = []
    for value in (labels or {}).values():  # the generated job-name label is the Job's name
        if isinstance(value, str):
            out += [_invalid("spec.template.labels", value, e) for e in names.label_value(value)]
    failure_policy = (obj.get("spec") or {}).get("podFailurePolicy") is not None
    return out + _job_template(template, "spec.template", failure_policy=failure_policy) + batch.job(obj)


def _cronjob(obj: dict[str, Any]) -> list[Cause]:
    job = ((obj.get("spec") or {}).get("jobTemplate") or {}).get("spec") or {}
    return batch.cronjob(obj) + _job_template(job.get("template"), "spec.jobTemplate.spec.template",
                                              failure_policy=job.get("podFailurePolicy") is not None)


def _lease(obj: dict[str, Any]) -> list[Cause]:
    duration = (obj.get("spec") or {}).get("leaseDurationSeconds")
    transitions = (obj.get("spec") or {}).get("leaseTransitions")
    out = [_invalid("spec.leaseDurationSeconds", duration, "must be greater than 0")] if isinstance(
        duration, int) and duration <= 0 else []
    if isinstance(transitions, int) and transitions < 0:
        out.append(_invalid("spec.leaseTransitions", transitions, "must be greater than or equal to 0"))
    return out


# What a ConfigMap's or Secret's values may hold together (api.MaxSecretSize): 1 MiB.
MAX_DATA_BYTES = 1024 * 1024
_TOO_BIG = f"Too long: may not be more than {MAX_DATA_BYTES} bytes"


def _decoded_size(value: Any) -> int:
    try:
        return len(base64.b64decode(value or "", validate=True))
    except (binascii.Error, ValueError):
        return 0  # (refused when decoded)


def config_key(key: str) -> list[str]:
    """apimachinery's IsConfigMapKey, one message per rule broken (a key is also a file name in a volume)."""
    out = ["must be no more than 253 characters"] if len(key) > 253 else []
    if not re.fullmatch(r"[-._a-zA-Z0-9]+", key):
        out.append("a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  "
                   "or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')")
    if key in (".", ".."):
        out.append(f"must not be '{key}'")
    elif key.startswith(".."):
        out.append("must not start with '..'")
    return out


def _configmap(obj: dict[str, Any]) -> list[Cause]:
    """Keys, a key in both data and binaryData, and the values' total size: over 1 MiB is too long (on
    the field ``[]``, as the real server names the whole object); binaryData counts decoded."""
    out: list[Cause] = []
    binary = obj.get("binaryData") or {}
    total = 0
    for field in ("data", "binaryData"):
        for key, value in (obj.get(field) or {}).items():
            out += [_invalid(f"{field}[{key}]", key, why) for why in config_key(key)]
            if field == "data" and key in binary:
                out.append(_invalid(f"data[{key}]", key, "duplicate of key present in binaryData"))
            total += len((value or "").encode()) if field == "data" else _decoded_size(value)
    if total > MAX_DATA_BYTES:
        out.append(("FieldValueTooLong", "[]", _TOO_BIG))
    return out


def _secret(obj: dict[str, Any]) -> list[Cause]:
    """A ConfigMap's key rules; the decoded values (stringData merged in) at most 1 MiB, on ``data``."""
    out = _configmap({"data": obj.get("data")})
    out = [c for c in out if c[1] != "[]"]
    if sum(_decoded_size(v) for v in (obj.get("data") or {}).values()) > MAX_DATA_BYTES:
        out.append(("FieldValueTooLong", "data", _TOO_BIG))
    return out + secrets.causes(obj)


def _both(*rules: Callable[[dict[str, Any]], list[Cause]]) -> Callable[[dict[str, Any]], list[Cause]]:
    return lambda obj: [cause for rule in rules for cause in rule(obj)]


_SPEC: dict[tuple[str, str], Any] = {
    ("", "pods"): _pod, ("apps", "deployments"): _both(_workload("deployment"), workloads.deployment),
    ("apps", "replicasets"): _workload("deployment"),  # (ValidateReplicaSetSpec: a Deployment's words, even)
    ("batch", "jobs"): _job, ("apps", "statefulsets"): _both(_workload("statefulset"), workloads.statefulset),
    ("apps", "daemonsets"): _both(_workload("daemonset"), workloads.daemonset),
    ("batch", "cronjobs"): _cronjob, ("", "services"): services.causes, ("coordination.k8s.io", "leases"): _lease,
    ("", "configmaps"): _configmap, ("", "secrets"): _secret,
    ("autoscaling", "horizontalpodautoscalers"): autoscaling.causes, ("", "limitranges"): limitranges.causes,
    ("", "resourcequotas"): quotas.causes,
}


def object_causes(kind: Kind, obj: dict[str, Any], ns: str | None = None, *, creating: bool = True) -> list[Cause]:
    """``ns``: the request's namespace (a new object's metadata does not hold it yet)."""
    if kind.key == ("", "events"):
        return _core_event(obj, ns or (obj.get("metadata") or {}).get("namespace") or "")
    if kind.key == ("events.k8s.io", "events"):
        return events.causes(obj, ns or (obj.get("metadata") or {}).get("namespace") or "", creating=creating)
    if kind.key == ("", "namespaces"):  # (an update keeps the old spec: only /finalize checks it again)
        return namespace_finalizer_causes(obj, indexed=False) if creating else []
    rule = _SPEC.get(kind.key)
    out = rule(obj) if rule else []
    if creating and kind.key == ("apps", "statefulsets"):
        out += workloads.statefulset_create(obj)
    return out + _pod_create(obj) if creating and kind.key == ("", "pods") else out


def _pod_create(obj: dict[str, Any]) -> list[Cause]:
    """What ``ValidatePodCreate`` adds to a pod spec's rules: no ephemeral containers (they come through
    their subresource), no node before the scheduling gates are gone."""
    spec: dict[str, Any] = obj["spec"] if isinstance(obj.get("spec"), dict) else {}
    out = [("FieldValueForbidden", "spec.ephemeralContainers", "Forbidden: cannot be set on create")] if spec.get(
        "ephemeralContainers") else []
    if spec.get("nodeName") and spec.get("schedulingGates"):
        out.append(("FieldValueForbidden", "spec.nodeName", "Forbidden: cannot be set until all schedulingGates "
                    "have been cleared"))
    return out


def _core_event(obj: dict[str, Any], ns: str) -> list[Cause]:
    """A core v1 Event (legacyValidateEvent): without eventTime, its involved object's namespace is its
    own; with one, the rules of an events.k8s.io Event under core v1's names."""
    involved = (obj.get("involvedObject") or {}).get("namespace") or "" if isinstance(
        obj.get("involvedObject"), dict) else ""
    if not obj.get("eventTime"):
        return events.untimed(involved, ns)
    return events.timed(obj, ns, involved=involved, reporter="reportingComponent", note=("message", 4096))


# --- immutability per kind ---------------------------------------------------------------------------

def _pod_update(old: dict[str, Any], new: dict[str, Any]) -> list[Cause]:
    """A Pod's spec may change only in its images and (downwards) its active deadline. As the real
    check runs: the containers (adding or removing one stops it; each needs an image), the deadline
    (raising it stops it), then any other change of the spec."""
    before, after = copy.deepcopy(old.get("spec") or {}), copy.deepcopy(new.get("spec") or {})
    out: list[Cause] = []
    for field in ("containers", "initContainers"):
        was, now = before.get(field) or [], after.get(field) or []
        if len(was) != len(now):
            return [("FieldValueForbidden", f"spec.{field}", "Forbidden: pod updates may not add or remove "
                     "containers")]
        out += [_required(f"spec.{field}[{i}].image") for i, c in enumerate(now)
                if isinstance(c, dict) and not c.get("image")]
    was, now = before.pop("tolerations", None) or [], after.pop("tolerations", None) or []
    for toleration in was:  # each kept, but for its tolerationSeconds; more may be added
        if not any(isinstance(t, dict) and {**toleration, "tolerationSeconds": t.get("tolerationSeconds")} ==
                   {**t, "tolerationSeconds": t.get("tolerationSeconds")} for t in now):
            out.append(("FieldValueForbidden", "spec.tolerations", "Forbidden: existing toleration can not be "
                        "modified except its tolerationSeconds"))
            break
    old_deadline, new_deadline = before.get("activeDeadlineSeconds"), after.get("activeDeadlineSeconds")
    if new_deadline is None and old_deadline is not None:
        out.append(_invalid("spec.activeDeadlineSeconds", None, "must not update from a positive integer to nil "
                            "value"))
    elif isinstance(new_deadline, int) and isinstance(old_deadline, int) and new_deadline > old_deadline:
        return out + [_invalid("spec.activeDeadlineSeconds", new_deadline, "must be less than or equal to "
                               "previous value")]
    out += scheduling.gated_update(before, after)
    for spec in (before, after):
        spec.pop("activeDeadlineSeconds", None)
        for field in ("containers", "initContainers"):
            for c in spec.get(field) or []:
                if isinstance(c, dict):
                    c.pop("image", None)
    if before != after:
        out.append(("FieldValueForbidden", "spec", "Forbidden: pod updates may not change fields other than "
                    "`spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,"
                    "`spec.tolerations` (only additions to existing tolerations),"
                    "`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)"))
    return out


def ephemeral_update(old: dict[str, Any], new: dict[str, Any]) -> list[Cause]:
    """A pod's ephemeral containers may be added, never removed or changed. (The real message of a
    changed one ends with a diff of Go structs, which the fake leaves out.)"""
    listed = {c.get("name"): c for c in (new.get("spec") or {}).get("ephemeralContainers") or []
              if isinstance(c, dict)}
    out: list[Cause] = []
    for was in (old.get("spec") or {}).get("ephemeralContainers") or []:
        now = listed.get(was.get("name"))
        if now is None:
            out.append(("FieldValueForbidden", "spec.ephemeralContainers", f'Forbidden: existing ephemeral '
                        f'containers "{was.get("name")}" may not be removed\n'))
        elif now != was:
            out.append(("FieldValueForbidden", "spec.ephemeralContainers", f'Forbidden: existing ephemeral '
                        f'containers "{was.get("name")}" may not be changed\n'))
    return out


def _immutable(*paths: str) -> Callable[[dict[str, Any], dict[str, Any]], list[Cause]]:
    def check(old: dict[str, Any], new: dict[str, Any]) -> list[Cause]:
        return [_invalid(p, _dig(new, p), _IMMUTABLE) for p in paths if _dig(old, p) != _dig(new, p)]
    return check


def _dig(obj: Any, dotted: str) -> Any:
    for part in dotted.split("."):
        obj = obj.get(part) if isinstance(obj, dict) else None
    return obj


# events.k8s.io/v1 fields an update may not change, and the core Event field each is reported as, in the
# real check's order (which checks the reason twice: a changed reason has two causes).
_EVENT_FIXED = (("regarding", "involvedObject"), ("reason", "reason"), ("note", "message"),
                ("deprecatedSource", "source"), ("deprecatedFirstTimestamp", "firstTimestamp"),
                ("deprecatedLastTimestamp", "lastTimestamp"), ("deprecatedCount", "count"), ("reason", "reason"),
                ("type", "type"), ("eventTime", "eventTime"), ("action", "action"), ("related", "related"),
                ("reportingController", "reportingController"), ("reportingInstance", "reportingInstance"))


def _event_update(old: dict[str, Any], new: dict[str, Any]) -> list[Cause]:
    return [_invalid(core, new.get(field), _IMMUTABLE) for field, core in _EVENT_FIXED
            if old.get(field) != new.get(field)]


def _deployment_update(old: dict[str, Any], new: dict[str, Any]) -> list[Cause]:
    out = _immutable("spec.selector")(old, new)
    if (new.get("spec") or {}).get("selector") is None:  # the template's labels no longer match anything
        labels = (((new.get("spec") or {}).get("template") or {}).get("metadata") or {}).get("labels")
        out.append(_invalid("spec.template.metadata.labels", labels, "`selector` does not match template "
                            "`labels`"))
    return out


_SCHEDULING = ("nodeSelector", "tolerations", "affinity", "schedulingGates")


def _job_update(old: dict[str, Any], new: dict[str, Any]) -> list[Cause]:
    """A Job's selector is immutable; its pod template too but for its metadata (and, while the Job is
    suspended, its scheduling directives); the template's labels must still match the selector."""
    out = _immutable("spec.selector")(old, new)
    suspended = bool((new.get("spec") or {}).get("suspend"))

    def shape(job: dict[str, Any]) -> Any:
        spec = copy.deepcopy(((job.get("spec") or {}).get("template") or {}).get("spec") or {})
        for key in _SCHEDULING if suspended else ():
            spec.pop(key, None)
        return spec

    if shape(old) != shape(new):
        out.append(_invalid("spec.template", "", _IMMUTABLE))
    chosen = (new.get("spec") or {}).get("selector") or (old.get("spec") or {}).get("selector")
    selector = (chosen or {}).get("matchLabels") or {}
    labels = (((new.get("spec") or {}).get("template") or {}).get("metadata") or {}).get("labels") or {}
    if any(labels.get(k) != v for k, v in selector.items()):
        out.append(_invalid("spec.template.metadata.labels", labels, "`selector` does not match template "
                            "`labels`"))
    return out + batch.job_update(old, new)


# What a StatefulSet update may change in its spec (the rest is fixed at creation).
_STS_MUTABLE = ("replicas", "ordinals", "template", "updateStrategy", "revisionHistoryLimit",
                "persistentVolumeClaimRetentionPolicy", "minReadySeconds")


def _statefulset_update(old: dict[str, Any], new: dict[str, Any]) -> list[Cause]:
    before, after = (({k: v for k, v in (o.get("spec") or {}).items() if k not in _STS_MUTABLE}) for o in (old, new))
    if before == after:
        return []
    return [("FieldValueForbidden", "spec", "Forbidden: updates to statefulset spec for fields other than "
             "'replicas', 'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', "
             "'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden")]


def job_generated_selector(job: dict[str, Any], uid: str) -> list[Cause]:
    """``validateGeneratedSelector`` of a new Job whose selector the server generated: its template has
    the uid and name labels with their values, and its selector selects exactly what they say."""
    spec = job.get("spec") or {}
    if spec.get("manualSelector") or not isinstance(spec.get("selector"), dict):
        return []
    name = job["metadata"].get("name") or ""
    labels = (((spec.get("template") or {}).get("metadata") or {}).get("labels")) or {}
    expected = {"controller-uid": uid, "job-name": name, "batch.kubernetes.io/controller-uid": uid,
                "batch.kubernetes.io/job-name": name}
    out: list[Cause] = []
    for key, value in expected.items():
        path = f"spec.template.metadata.labels[{key}]"
        if key not in labels:
            out.append(_required(path, f"must be '{value}'"))
        elif labels[key] != value:
            out.append(_invalid(path, dict(sorted(labels.items())), f"must be '{value}'"))
    selector = spec["selector"]
    if selectors.label_selector_matches(selector, expected) is False:
        shown = {k: dict(sorted(v.items())) if isinstance(v, dict) else v for k, v in selector.items()}
        out.append(_invalid("spec.selector", shown, "`selector` not auto-generated"))
    return out


def job_uid_causes(job: dict[str, Any], uid: str) -> list[Cause]:
    """A Job whose selector was generated checks it, and its template's uid labels, against ``uid`` (on
    an update, the uid the body asked for, which is refused anyway)."""
    spec = job.get("spec") or {}
    if spec.get("manualSelector"):
        return []
    labels = ((spec.get("template") or {}).get("metadata") or {}).get("labels")
    if not isinstance(labels, dict):
        return [_required("spec.template.metadata.labels")]
    path = "spec.template.metadata.labels"
    out = [_invalid(f"{path}[{key}]", labels.get(key, ""), f"must be '{uid}'")
           for key in ("controller-uid", "batch.kubernetes.io/controller-uid") if labels.get(key) != uid]
    selector = spec.get("selector")
    if selector != {"matchLabels": {"batch.kubernetes.io/controller-uid": uid}}:
        out.append(_invalid("spec.selector", selector, "`selector` not auto-generated"))
    return out


_UPDATE: dict[tuple[str, str], Any] = {
    ("apps", "statefulsets"): _statefulset_update,
    ("apps", "daemonsets"): _immutable("spec.selector"),
    ("events.k8s.io", "events"): _event_update,
    ("", "pods"): _pod_update,
    ("apps", "deployments"): _deployment_update, ("apps", "replicasets"): _immutable("spec.selector"),
    ("batch", "jobs"): _job_update,
    ("", "secrets"): _immutable("type"),
    ("", "services"): services.update_causes,
    ("", "resourcequotas"): quotas.update_causes,
}


def update_causes(kind: Kind, old: dict[str, Any], new: dict[str, Any]) -> list[Cause]:
    rule = _UPDATE.get(kind.key)
    return rule(old, new) if rule else []


# --- status updates ------------------------------------------------------------------------------

def _counts(status: dict[str, Any], fields: tuple[str, ...]) -> list[Cause]:
    out = []
    for field in fields:
        value = status.get(field)
        if isinstance(value, int) and not isinstance(value, bool) and value < 0:
            out.append(_invalid(f"status.{field}", value, "must be greater than or equal to 0"))
    return out


def _at_most(status: dict[str, Any], pairs: tuple[tuple[str, str], ...]) -> list[Cause]:
    out = []
    for field, bound in pairs:
        value, limit = status.get(field) or 0, status.get(bound) or 0
        if isinstance(value, int) and isinstance(limit, int) and value > limit:
            shown = f"status.{bound}" if bound == "replicas" else bound
            out.append(_invalid(f"status.{field}", value, f"cannot be greater than {shown}"))
    return out


def _deployment_status(status: dict[str, Any]) -> list[Cause]:
    return _counts(status, ("observedGeneration", "replicas", "updatedReplicas", "readyReplicas", "availableReplicas",
                            "unavailableReplicas", "terminatingReplicas", "collisionCount")) + _at_most(status, (
        ("updatedReplicas", "replicas"), ("readyReplicas", "replicas"), ("availableReplicas", "replicas"),
        ("availableReplicas", "readyReplicas")))


def _replicaset_status(status: dict[str, Any]) -> list[Cause]:
    return _counts(status, ("replicas", "fullyLabeledReplicas", "readyReplicas", "availableReplicas",
                            "observedGeneration", "terminatingReplicas")) + _at_most(status, (
        ("fullyLabeledReplicas", "replicas"), ("readyReplicas", "replicas"), ("availableReplicas", "replicas"),
        ("availableReplicas", "readyReplicas")))


def _statefulset_status(status: dict[str, Any]) -> list[Cause]:
    return _counts(status, ("observedGeneration", "replicas", "readyReplicas", "currentReplicas", "updatedReplicas",
                            "availableReplicas", "collisionCount")) + _at_most(status, (
        ("readyReplicas", "replicas"), ("currentReplicas", "replicas"), ("updatedReplicas", "replicas"),
        ("availableReplicas", "replicas"), ("availableReplicas", "readyReplicas")))


def _daemonset_status(status: dict[str, Any]) -> list[Cause]:
    return _counts(status, ("currentNumberScheduled", "numberMisscheduled", "desiredNumberScheduled", "numberReady",
                            "observedGeneration", "updatedNumberScheduled", "numberAvailable", "numberUnavailable",
                            "collisionCount"))


def _namespace_status(obj: dict[str, Any]) -> list[Cause]:
    phase = (obj.get("status") or {}).get("phase")
    if obj["metadata"].get("deletionTimestamp"):
        if phase != "Terminating":
            return [_invalid("status.Phase", phase or "", "may only be 'Terminating' if `deletionTimestamp` is not "
                             "empty")]
    elif phase != "Active":
        return [_invalid("status.Phase", phase or "", "may only be 'Active' if `deletionTimestamp` is empty")]
    return []


def _service_status(obj: dict[str, Any]) -> list[Cause]:
    ingress = ((obj.get("status") or {}).get("loadBalancer") or {}).get("ingress")
    if ingress and (obj.get("spec") or {}).get("type") != "LoadBalancer":
        return [("FieldValueForbidden", "status.loadBalancer.ingress", "Forbidden: may only be used when `spec.type` "
                 "is 'LoadBalancer'")]
    return services.ingress_causes(ingress)


def _pod_status(obj: dict[str, Any]) -> list[Cause]:
    import ipaddress

    status = obj.get("status") or {}
    out: list[Cause] = []
    for field, plural in (("podIP", "podIPs"), ("hostIP", "hostIPs")):
        ips = [i.get("ip") for i in status.get(plural) or [] if isinstance(i, dict)] or (
            [status[field]] if status.get(field) else [])
        for i, ip in enumerate(ips):
            try:
                ipaddress.ip_address(ip or "")
            except ValueError:
                out.append(_invalid(f"status.{plural}[{i}]", ip, "must be a valid IP address, (e.g. 10.9.8.7 or "
                                    "2001:db8::ffff)"))
    return out


_STATUS: dict[tuple[str, str], Any] = {
    ("apps", "deployments"): lambda o: _deployment_status(o.get("status") or {}),
    ("apps", "replicasets"): lambda o: _replicaset_status(o.get("status") or {}),
    ("apps", "statefulsets"): lambda o: _statefulset_status(o.get("status") or {}),
    ("apps", "daemonsets"): lambda o: _daemonset_status(o.get("status") or {}),
    ("", "namespaces"): _namespace_status, ("", "services"): _service_status, ("", "pods"): _pod_status,
    ("", "resourcequotas"): quotas.status_causes,
}


def status_causes(kind: Kind, obj: dict[str, Any]) -> list[Cause]:
    """The rules a built-in's ``/status`` write is checked by, where the fake models them (Deployment,
    StatefulSet and DaemonSet counts, a namespace's phase, a Service's load balancer, a pod's IPs)."""
    rule = _STATUS.get(kind.key)
    return rule(obj) if rule else []
