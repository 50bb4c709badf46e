"""A HorizontalPodAutoscaler (autoscaling/v2) as kube-apiserver 1.35.4 defaults and validates it
(``pkg/apis/autoscaling/v2/defaults.go``, ``pkg/apis/autoscaling/validation``, scale-to-zero gate off):

- defaults: ``minReplicas`` 1; no metrics → CPU at 80 % utilization; a behavior given fills in each
  direction's missing rules (up: no stabilization, Max of 4 pods or 100 % per 15 s; down: Max of 100 %
  per 15 s);
- validation: replica bounds, the target reference, each metric (its type, exactly its source, the
  target's type and values), each scaling rule and policy.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from kubeloop.testing.apiserver import quantity
from kubeloop.testing.apiserver.causes import Cause, forbidden, invalid, listing, mapping, required, unsupported

_SCALE_UP = {"stabilizationWindowSeconds": 0, "selectPolicy": "Max", "policies": [
    {"type": "Pods", "value": 4, "periodSeconds": 15}, {"type": "Percent", "value": 100, "periodSeconds": 15}]}
_SCALE_DOWN = {"selectPolicy": "Max", "policies": [{"type": "Percent", "value": 100, "periodSeconds": 15}]}
_SOURCES = ("object", "external", "pods", "resource", "containerResource")  # (the order they are checked in)
_TYPES = {"Object": "object", "Pods": "pods", "Resource": "resource", "External": "external",
          "ContainerResource": "containerResource"}
_POLICIES = ["Disabled", "Max", "Min"]


def defaults(spec: dict[str, Any]) -> None:
    if spec.get("minReplicas") is None:
        spec["minReplicas"] = 1
    if not spec.get("metrics"):
        spec["metrics"] = [{"type": "Resource", "resource": {"name": "cpu", "target": {
            "type": "Utilization", "averageUtilization": 80}}}]
    behavior = spec.get("behavior")
    if isinstance(behavior, dict):
        for direction, zero in (("scaleUp", _SCALE_UP), ("scaleDown", _SCALE_DOWN)):
            given = behavior.get(direction)
            rules = copy.deepcopy(zero)
            rules.update({k: v for k, v in mapping(given).items() if v is not None})
            behavior[direction] = rules


def causes(obj: dict[str, Any]) -> list[Cause]:
    spec = mapping(obj.get("spec"))
    low, high = spec.get("minReplicas"), spec.get("maxReplicas") or 0
    out: list[Cause] = []
    if isinstance(low, int) and low < 1:
        out.append(invalid("spec.minReplicas", low, "must be greater than or equal to 1"))
    if isinstance(high, int) and high < 1:
        out.append(invalid("spec.maxReplicas", high, "must be greater than 0"))
    if isinstance(low, int) and isinstance(high, int) and high < low:
        out.append(invalid("spec.maxReplicas", high, "must be greater than or equal to `minReplicas`"))
    out += reference(mapping(spec.get("scaleTargetRef")), "spec.scaleTargetRef")
    out += _metrics(listing(spec.get("metrics")), low)
    behavior = spec.get("behavior")
    for direction in ("scaleUp", "scaleDown"):
        rules = mapping(behavior).get(direction)
        out += _rules(rules, f"spec.behavior.{direction}") if isinstance(rules, dict) else []
    return out


def _segment(value: str) -> list[str]:
    """``IsValidPathSegmentName``."""
    if value in (".", ".."):
        return [f"may not be '{value}'"]
    return [f"may not contain '{c}'" for c in ("/", "%") if c in value]


def reference(ref: dict[str, Any], path: str) -> list[Cause]:
    out: list[Cause] = []
    for field in ("kind", "name"):
        value = ref.get(field) or ""
        out += [required(f"{path}.{field}")] if not value else [invalid(f"{path}.{field}", value, m)
                                                                 for m in _segment(value)]
    version = ref.get("apiVersion") or ""
    why = _group_version(version)
    return out + ([invalid(f"{path}.apiVersion", version, why)] if why else [])


def _group_version(text: str) -> str:
    """``schema.ParseGroupVersion``'s error, or that the version names no group."""
    if text.count("/") > 1:
        return f"unexpected GroupVersion string: {text}"
    return "" if "/" in text and text.split("/")[0] else "apiVersion must specify API group"


def _metrics(metrics: list[Any], low: Any) -> list[Cause]:
    out: list[Cause] = []
    kinds = set()
    for i, metric in enumerate(metrics):
        out += _metric(mapping(metric), f"spec.metrics[{i}]")
        kinds.add(mapping(metric).get("type"))
    if low == 0 and not kinds & {"Object", "External"}:
        out.append(forbidden("spec.metrics", "must specify at least one Object or External metric to support "
                             "scaling to zero replicas"))
    return out


def _metric(metric: dict[str, Any], path: str) -> list[Cause]:
    kind = metric.get("type") or ""
    out: list[Cause] = [required(f"{path}.type", "must specify a metric source type")] if not kind else []
    listed = sorted(_TYPES)
    if kind not in _TYPES:
        out.append(unsupported(f"{path}.type", kind, listed))
    present = [s for s in _SOURCES if metric.get(s) is not None]
    if present:
        first = present[0]
        out += _SOURCE_CHECKS[first](mapping(metric[first]), f"{path}.{first}")
    expected = _TYPES.get(kind)
    if expected is None:
        out.append(unsupported(f"{path}.type", kind, listed))
    elif metric.get(expected) is None:
        out.append(required(f"{path}.{expected}", "must populate information for the given metric source"))
    if len(present) != 1:
        out += [forbidden(f"{path}.{s}", "must populate the given metric source only") for s in present
                if s != expected]
    return out


def _target(target: dict[str, Any], path: str) -> list[Cause]:
    kind = target.get("type") or ""
    out: list[Cause] = [required(f"{path}.type", "must specify a metric target type")] if not kind else []
    if kind not in ("Utilization", "Value", "AverageValue"):
        out.append(invalid(f"{path}.type", kind, "must be either Utilization, Value, or AverageValue"))
    for field in ("value", "averageValue"):
        value = target.get(field)
        if value is not None and not _positive(value):
            out.append(invalid(f"{path}.{field}", value, "must be positive"))
    utilization = target.get("averageUtilization")
    if isinstance(utilization, int) and utilization < 1:
        out.append(invalid(f"{path}.averageUtilization", utilization, "must be greater than 0"))
    return out


def _positive(value: Any) -> bool:
    try:
        return quantity.parse(str(value))[0] > 0
    except ValueError:
        return True  # (refused when decoded)


def _identifier(metric: dict[str, Any], path: str) -> list[Cause]:
    name = metric.get("name") or ""
    if not name:
        return [required(f"{path}.name", "must specify a metric name")]
    return [invalid(f"{path}.name", name, m) for m in _segment(name)]


def _object(src: dict[str, Any], path: str) -> list[Cause]:
    target = mapping(src.get("target"))
    out = reference(mapping(src.get("describedObject")), f"{path}.describedObject")
    out += _identifier(mapping(src.get("metric")), f"{path}.metric") + _target(target, f"{path}.target")
    if target.get("value") is None and target.get("averageValue") is None:
        out.append(required(f"{path}.target.averageValue", "must set either a target value or averageValue"))
    return out


def _external(src: dict[str, Any], path: str) -> list[Cause]:
    target = mapping(src.get("target"))
    out = _identifier(mapping(src.get("metric")), f"{path}.metric") + _target(target, f"{path}.target")
    if target.get("value") is None and target.get("averageValue") is None:
        out.append(required(f"{path}.target.averageValue", "must set either a target value for metric or a "
                            "per-pod target"))
    if target.get("value") is not None and target.get("averageValue") is not None:
        out.append(forbidden(f"{path}.target.value", "may not set both a target value for metric and a per-pod "
                             "target"))
    return out


def _pods(src: dict[str, Any], path: str) -> list[Cause]:
    target = mapping(src.get("target"))
    out = _identifier(mapping(src.get("metric")), f"{path}.metric") + _target(target, f"{path}.target")
    if target.get("averageValue") is None:
        out.append(required(f"{path}.target.averageValue", "must specify a positive target averageValue"))
    return out


def _resource(src: dict[str, Any], path: str, container: bool = False) -> list[Cause]:
    target = mapping(src.get("target"))
    out = [] if src.get("name") else [required(f"{path}.name", "must specify a resource name")]
    if container and not src.get("container"):
        out.append(required(f"{path}.container", "must specify a container"))
    out += _target(target, f"{path}.target")
    if target.get("averageUtilization") is None and target.get("averageValue") is None:
        out.append(required(f"{path}.target.averageUtilization", "must set either a target raw value or a target "
                            "utilization"))
    if target.get("averageUtilization") is not None and target.get("averageValue") is not None:
        out.append(forbidden(f"{path}.target.averageValue", "may not set both a target raw value and a target "
                             "utilization"))
    return out


def _container_resource(src: dict[str, Any], path: str) -> list[Cause]:
    return _resource(src, path, container=True)


_SOURCE_CHECKS: dict[str, Callable[[dict[str, Any], str], list[Cause]]] = {
    "object": _object, "external": _external, "pods": _pods, "resource": _resource,
    "containerResource": _container_resource}


def _rules(rules: dict[str, Any], path: str) -> list[Cause]:
    window = rules.get("stabilizationWindowSeconds")
    out: list[Cause] = []
    if isinstance(window, int) and window < 0:
        out.append(invalid(f"{path}.stabilizationWindowSeconds", window, "must be greater than or equal to zero"))
    if isinstance(window, int) and window > 3600:
        out.append(invalid(f"{path}.stabilizationWindowSeconds", window, "must be less than or equal to 3600"))
    select = rules.get("selectPolicy")
    if select is not None and select not in _POLICIES:
        out.append(unsupported(f"{path}.selectPolicy", select, _POLICIES))
    policies = listing(rules.get("policies"))
    if not policies:
        out.append(required(f"{path}.policies", "must specify at least one Policy"))
    for i, policy in enumerate(policies):
        out += _policy(mapping(policy), f"{path}.policies[{i}]")
    return out


def _policy(policy: dict[str, Any], path: str) -> list[Cause]:
    out: list[Cause] = []
    if policy.get("type") not in ("Pods", "Percent"):
        out.append(unsupported(f"{path}.type", policy.get("type") or "", ["Percent", "Pods"]))
    value, period = policy.get("value") or 0, policy.get("periodSeconds") or 0
    if value <= 0:
        out.append(invalid(f"{path}.value", value, "must be greater than zero"))
    if period <= 0:
        out.append(invalid(f"{path}.periodSeconds", period, "must be greater than zero"))
    if period > 1800:
        out.append(invalid(f"{path}.periodSeconds", period, "must be less than or equal to 1800"))
    return out
