"""LimitRanges (core v1), as kube-apiserver 1.35.4 stores, validates and enforces them:

- defaults on decode (``SetDefaults_LimitRangeItem``): a ``Container`` item's default limit is its max,
  its default request its default limit, else its min;
- validation (``ValidateLimitRange``): each item's type (``Pod``, ``Container``, ``PersistentVolumeClaim``
  or a qualified name), once per range; its resource names; no defaults for ``Pod`` items; a PVC item's
  storage bound; min <= default request <= default <= max, a ratio of at least 1 that max/min allows,
  default and default request equal for resources that cannot be overcommitted;
- the LimitRanger admission plugin, for new pods only (as on the real server): ``admit`` fills each
  container's missing requests and limits from the namespace's ``Container`` items and records what it
  set in the ``kubernetes.io/limit-ranger`` annotation (before validation, owned by nobody); ``enforce``
  refuses (403) a container outside a ``Container`` item's min, max or limit/request ratio, and a pod
  outside a ``Pod`` item's, summing its containers (a pod with sidecar init containers or pod-level
  resources under a ``Pod`` item is refused with 501: the fake does not add those up).
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

from kubeloop.testing.apiserver import containers, errors, names, quantity
from kubeloop.testing.apiserver.causes import Cause, duplicate, forbidden, invalid, listing, mapping, required

Obj = dict[str, Any]
ANNOTATION = "kubernetes.io/limit-ranger"
_TYPES = ("Pod", "Container", "PersistentVolumeClaim")
_FIELDS = ("max", "min", "default", "defaultRequest", "maxLimitRequestRatio")


def _amount(value: Any) -> Fraction:
    try:
        return quantity.parse(str(value))[0]
    except ValueError:
        return Fraction(0)  # (refused when decoded)


# --- defaults and validation ---------------------------------------------------------------------------

def apply_defaults(spec: Obj) -> None:
    """``SetDefaults_LimitRangeItem`` for each ``Container`` item of a LimitRange's spec."""
    for item in listing(spec.get("limits")):
        if not isinstance(item, dict) or item.get("type") != "Container":
            continue
        default, request = dict(mapping(item.get("default"))), dict(mapping(item.get("defaultRequest")))
        for key, value in mapping(item.get("max")).items():
            default.setdefault(key, value)
        for key, value in default.items():
            request.setdefault(key, value)
        for key, value in mapping(item.get("min")).items():
            request.setdefault(key, value)
        for field, values in (("default", default), ("defaultRequest", request)):
            if values:  # (an empty map is omitted, as Go's omitempty writes it)
                item[field] = values


def _resource_name(limit_type: str, name: str, path: str) -> list[Cause]:
    """``validateContainerResourceName`` for Pod and Container items, ``validateResourceName`` for others."""
    return containers.resource_name(name, path, container=limit_type in ("Pod", "Container"))


def causes(obj: Obj) -> list[Cause]:
    out: list[Cause] = []
    seen: set[str] = set()
    for i, raw in enumerate(listing(mapping(obj.get("spec")).get("limits"))):
        item, here = mapping(raw), f"spec.limits[{i}]"
        kind = item.get("type") or ""
        type_errs = [invalid(f"{here}.type", kind, e) for e in names.qualified_name(kind)]
        if not type_errs and "/" not in kind and kind not in _TYPES:
            type_errs = [invalid(f"{here}.type", kind, "must be a standard limit type or fully qualified")]
        out += type_errs
        if kind in seen:
            out.append(duplicate(f"{here}.type", kind))
        seen.add(kind)
        lists = {field: mapping(item.get(field)) for field in _FIELDS}
        for field in ("max", "min"):
            out += [c for key in lists[field] for c in _resource_name(kind, key, f"{here}.{field}[{key}]")]
        if kind == "Pod":
            out += [forbidden(f"{here}.{f}", "may not be specified when `type` is 'Pod'") for f in
                    ("default", "defaultRequest") if lists[f]]
            lists["default"], lists["defaultRequest"] = {}, {}
        else:
            for field in ("default", "defaultRequest"):
                out += [c for key in lists[field] for c in _resource_name(kind, key, f"{here}.{field}[{key}]")]
        if kind == "PersistentVolumeClaim" and "storage" not in lists["min"] and "storage" not in lists["max"]:
            out.append(required(f"{here}.limits", "either minimum or maximum storage value is required, but neither "
                                "was provided"))
        out += [c for key in lists["maxLimitRequestRatio"]
                for c in _resource_name(kind, key, f"{here}.maxLimitRequestRatio[{key}]")]
        keys = sorted({key for field in _FIELDS for key in lists[field]})
        for key in keys:
            out += _bounds(key, {f: lists[f].get(key) for f in _FIELDS}, here)
    return out


def _bounds(key: str, given: dict[str, Any], here: str) -> list[Cause]:
    low, high, ratio = given["min"], given["max"], given["maxLimitRequestRatio"]
    default, request = given["default"], given["defaultRequest"]
    out: list[Cause] = []

    def more(a: Any, b: Any) -> bool:
        return a is not None and b is not None and _amount(a) > _amount(b)

    if more(low, high):
        out.append(invalid(f"{here}.min[{key}]", low, f"min value {low} is greater than max value {high}"))
    if more(low, request):
        out.append(invalid(f"{here}.defaultRequest[{key}]", request, f"min value {low} is greater than default "
                           f"request value {request}"))
    if more(request, high):
        out.append(invalid(f"{here}.defaultRequest[{key}]", request, f"default request value {request} is greater "
                           f"than max value {high}"))
    if more(request, default):
        out.append(invalid(f"{here}.defaultRequest[{key}]", request, f"default request value {request} is greater "
                           f"than default limit value {default}"))
    if more(low, default):
        out.append(invalid(f"{here}.default[{key}]", low, f"min value {low} is greater than default value {default}"))
    if more(default, high):
        out.append(invalid(f"{here}.default[{key}]", high, f"default value {default} is greater than max value "
                           f"{high}"))
    if ratio is not None and _amount(ratio) < 1:
        out.append(invalid(f"{here}.maxLimitRequestRatio[{key}]", ratio, f"ratio {ratio} is less than 1"))
    if ratio is not None and low is not None and high is not None and _amount(low) > 0:
        allowed = float(_milli(high)) / float(_milli(low))
        if float(_milli(ratio)) / 1000 > allowed:
            out.append(invalid(f"{here}.maxLimitRequestRatio[{key}]", ratio, f"ratio {ratio} is greater than "
                               f"max/min = {allowed:f}"))
    overcommit = ("/" not in key or "kubernetes.io/" in key) and not key.startswith("hugepages-")
    if not overcommit and default is not None and request is not None and _amount(default) != _amount(request):
        out.append(invalid(f"{here}.defaultRequest[{key}]", request, f"default value {default} must equal to "
                           f"defaultRequest value {request} in {key}"))
    return out


def _milli(value: Any) -> int:
    """``MilliValue``: rounded up to a whole milli unit."""
    return math.ceil(_amount(value) * 1000)


# --- admission -----------------------------------------------------------------------------------------

def _containers(pod: Obj) -> list[tuple[str, Obj]]:
    spec = mapping(pod.get("spec"))
    return [(prefix, c) for field, prefix in (("containers", "container"), ("initContainers", "init container"))
            for c in listing(spec.get(field)) if isinstance(c, dict)]


def admit(pod: Obj, ranges: list[Obj]) -> None:
    """PodMutateLimitFunc for each LimitRange of the namespace, in order: missing requests and limits
    from its ``Container`` items, and the annotation saying what was set."""
    for limit_range in ranges:
        limits: dict[str, Any] = {}
        requests: dict[str, Any] = {}
        for item in listing(mapping(limit_range.get("spec")).get("limits")):
            if isinstance(item, dict) and item.get("type") == "Container":
                requests.update(mapping(item.get("defaultRequest")))
                limits.update(mapping(item.get("default")))
        notes: list[str] = []
        for prefix, container in _containers(pod):
            resources = container.setdefault("resources", {})
            set_requests: list[str] = []
            set_limits: list[str] = []
            for field, wanted, written in (("limits", limits, set_limits), ("requests", requests, set_requests)):
                have = resources.setdefault(field, {}) if isinstance(resources.get(field), dict | None) else {}
                resources[field] = have if have is not None else {}
                for key, value in wanted.items():
                    if key not in resources[field]:
                        resources[field][key] = value
                        written.append(key)
                if not resources[field]:
                    del resources[field]
            name = container.get("name") or ""
            if set_requests:
                notes.append(f"{', '.join(sorted(set_requests))} request for {prefix} {name}")
            if set_limits:
                notes.append(f"{', '.join(sorted(set_limits))} limit for {prefix} {name}")
        if notes:
            pod["metadata"].setdefault("annotations", {})[ANNOTATION] = "LimitRanger plugin set: " + "; ".join(notes)


def enforce(pod: Obj, ranges: list[Obj]) -> None:
    """PodValidateLimitFunc for each LimitRange: the first that refuses the pod is its 403 (its errors in
    one message, as Go's aggregate prints them; the real order of a range's errors follows Go's map
    iteration, which varies: here they are sorted by resource)."""
    for limit_range in ranges:
        found: list[str] = []
        for item in listing(mapping(limit_range.get("spec")).get("limits")):
            if not isinstance(item, dict):
                continue
            kind = item.get("type")
            if kind == "Container":
                for _, container in _containers(pod):
                    resources = mapping(container.get("resources"))
                    found += _check("Container", item, mapping(resources.get("requests")),
                                    mapping(resources.get("limits")))
            elif kind == "Pod" and any(mapping(item.get(f)) for f in ("min", "max", "maxLimitRequestRatio")):
                requests, limits = _pod_totals(pod)
                found += _check("Pod", item, requests, limits)
        if found:
            why = found[0] if len(found) == 1 else "[" + ", ".join(found) + "]"
            raise errors.forbidden("pods", "", pod["metadata"].get("name") or "", why)


def _check(kind: str, item: Obj, requests: dict[str, Any], limits: dict[str, Any]) -> list[str]:
    out: list[str] = []
    for key, bound in sorted(mapping(item.get("min")).items()):
        if key not in requests:
            out.append(f"minimum {key} usage per {kind} is {bound}.  No request is specified")
        elif _amount(requests[key]) < _amount(bound):
            out.append(f"minimum {key} usage per {kind} is {bound}, but request is {requests[key]}")
        elif key in limits and _amount(limits[key]) < _amount(bound):
            out.append(f"minimum {key} usage per {kind} is {bound}, but limit is {limits[key]}")
    for key, bound in sorted(mapping(item.get("max")).items()):
        if key not in limits:
            out.append(f"maximum {key} usage per {kind} is {bound}.  No limit is specified")
        elif _amount(limits[key]) > _amount(bound):
            out.append(f"maximum {key} usage per {kind} is {bound}, but limit is {limits[key]}")
        elif key in requests and _amount(requests[key]) > _amount(bound):
            out.append(f"maximum {key} usage per {kind} is {bound}, but request is {requests[key]}")
    for key, bound in sorted(mapping(item.get("maxLimitRequestRatio")).items()):
        asked, cap = _milli(requests[key]) if key in requests else 0, _milli(limits[key]) if key in limits else 0
        if not asked:
            out.append(f"{key} max limit to request ratio per {kind} is {bound}, but no request is specified or "
                       "request is 0")
        elif not cap:
            out.append(f"{key} max limit to request ratio per {kind} is {bound}, but no limit is specified or "
                       "limit is 0")
        elif cap / asked * 1000 > _milli(bound):
            out.append(f"{key} max limit to request ratio per {kind} is {bound}, but provided ratio is "
                       f"{cap / asked:f}")
    return out


def _pod_totals(pod: Obj) -> tuple[dict[str, str], dict[str, str]]:
    """A pod's requests and limits: its containers' summed, raised to any init container's."""
    spec = mapping(pod.get("spec"))
    inits = [c for c in listing(spec.get("initContainers")) if isinstance(c, dict)]
    if spec.get("resources") or any(c.get("restartPolicy") == "Always" for c in inits):
        raise errors.not_served("a LimitRange of type Pod for a pod with sidecar containers or pod-level resources")
    totals: list[dict[str, str]] = []
    for field in ("requests", "limits"):
        summed: dict[str, Fraction] = {}
        forms: dict[str, str] = {}  # (a sum keeps its first term's format, as Quantity.Add does)
        for c in listing(spec.get("containers")):
            for key, value in mapping(mapping(mapping(c).get("resources")).get(field)).items():
                if not summed.get(key):  # (a sum keeps its first non-zero term's format)
                    forms[key] = _form(value)
                summed[key] = summed.get(key, Fraction(0)) + _amount(value)
        for c in inits:
            for key, value in mapping(mapping(c.get("resources")).get(field)).items():
                if _amount(value) > summed.get(key, Fraction(0)):
                    summed[key], forms[key] = _amount(value), _form(value)
        totals.append({k: quantity.render(v, forms[k]) for k, v in summed.items()})
    return totals[0], totals[1]


def _form(value: Any) -> str:
    try:
        return quantity.parse(str(value))[1]
    except ValueError:
        return "decimal"
