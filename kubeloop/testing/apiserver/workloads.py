"""The update strategies and limits of Deployments, DaemonSets and StatefulSets (apps validation's
``ValidateDeploymentStrategy``, ``ValidateDaemonSetUpdateStrategy``, ``ValidateStatefulSetSpec``): a
rolling update that can make progress (not both bounds 0; for a DaemonSet, exactly one of them), no
rolling-update bounds on another strategy, counts that are not negative. Read from kube-apiserver
v1.35.4; the selectors and templates are checked in ``validation``."""

from __future__ import annotations

import json
import re
from typing import Any

from kubeloop.testing.apiserver.causes import Cause, forbidden, invalid, mapping, required, unsupported

_PERCENT_MSG = ("a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', "
                "regex used for validation is '[0-9]+%')")
_NONNEGATIVE = "must be greater than or equal to 0"


def _amount(value: Any) -> int:
    """An int-or-percent's number (getIntOrPercentValue): a percent's digits, an int as it is, else 0."""
    if isinstance(value, str) and re.fullmatch(r"[0-9]+%", value):
        return int(value[:-1])
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _int_or_percent(value: Any, path: str) -> list[Cause]:
    if isinstance(value, str) and not re.fullmatch(r"[0-9]+%", value):
        return [invalid(path, value, _PERCENT_MSG)]
    if isinstance(value, int) and value < 0:
        return [invalid(path, value, _NONNEGATIVE)]
    return []


def _at_most_100(value: Any, path: str) -> list[Cause]:
    if isinstance(value, str) and re.fullmatch(r"[0-9]+%", value) and int(value[:-1]) > 100:
        return [invalid(path, value, "must not be greater than 100%")]
    return []


def _nonnegative(spec: dict[str, Any], *fields: str) -> list[Cause]:
    return [invalid(f"spec.{f}", spec[f], _NONNEGATIVE) for f in fields
            if isinstance(spec.get(f), int) and not isinstance(spec.get(f), bool) and spec[f] < 0]


def deployment(obj: dict[str, Any]) -> list[Cause]:
    spec = mapping(obj.get("spec"))
    out: list[Cause] = []
    strategy = mapping(spec.get("strategy"))
    rolling, path = strategy.get("rollingUpdate"), "spec.strategy.rollingUpdate"
    if strategy.get("type") not in ("Recreate", "RollingUpdate"):  # the internal struct, shown without JSON tags
        shown = json.dumps({"Type": strategy.get("type") or "", "RollingUpdate": None if rolling is None else {
            "MaxUnavailable": mapping(rolling).get("maxUnavailable"), "MaxSurge": mapping(rolling).get("maxSurge")}},
            separators=(",", ":"))
        out.append(("FieldValueNotSupported", "spec.strategy", f'Unsupported value: {shown}: supported values: '
                    '"Recreate", "RollingUpdate"'))
    elif strategy.get("type") == "Recreate" and rolling is not None:
        out.append(forbidden(path, "may not be specified when strategy `type` is 'Recreate'"))
    elif strategy.get("type") == "RollingUpdate" and isinstance(rolling, dict):
        unavailable, surge = rolling.get("maxUnavailable"), rolling.get("maxSurge")
        out += _int_or_percent(unavailable, f"{path}.maxUnavailable") + _int_or_percent(surge, f"{path}.maxSurge")
        if _amount(unavailable) == 0 and _amount(surge) == 0:  # it could never replace a pod
            out.append(invalid(f"{path}.maxUnavailable", unavailable or 0, "may not be 0 when `maxSurge` is 0"))
        out += _at_most_100(unavailable, f"{path}.maxUnavailable")
    out += _nonnegative(spec, "revisionHistoryLimit", "progressDeadlineSeconds")
    deadline, ready = spec.get("progressDeadlineSeconds"), spec.get("minReadySeconds") or 0
    if isinstance(deadline, int) and isinstance(ready, int) and deadline <= ready:
        out.append(invalid("spec.progressDeadlineSeconds", deadline, "must be greater than minReadySeconds"))
    return out


def daemonset(obj: dict[str, Any]) -> list[Cause]:
    spec = mapping(obj.get("spec"))
    out = _nonnegative(spec, "revisionHistoryLimit")
    strategy = mapping(spec.get("updateStrategy"))
    rolling, path = strategy.get("rollingUpdate"), "spec.updateStrategy.rollingUpdate"
    if strategy.get("type") not in ("RollingUpdate", "OnDelete"):  # (the internal struct is the value shown)
        shown = {"Type": strategy.get("type") or "", "RollingUpdate": _go_rolling(rolling)}
        return [*out, unsupported("spec.updateStrategy", shown, ["RollingUpdate", "OnDelete"])]
    if strategy.get("type") != "RollingUpdate":
        return out
    if not isinstance(rolling, dict):
        return [*out, required(path)]
    unavailable, surge = rolling.get("maxUnavailable"), rolling.get("maxSurge")
    out += _int_or_percent(unavailable, f"{path}.maxUnavailable") + _int_or_percent(surge, f"{path}.maxSurge")
    out += _at_most_100(unavailable, f"{path}.maxUnavailable") + _at_most_100(surge, f"{path}.maxSurge")
    if _amount(unavailable) and _amount(surge):  # one node at a time: either take pods down or surge
        out.append(invalid(f"{path}.maxSurge", surge, "may not be set when maxUnavailable is non-zero"))
    elif not _amount(unavailable) and not _amount(surge):
        out.append(required(f"{path}.maxUnavailable", "cannot be 0 when maxSurge is 0"))
    return out


def _go_rolling(rolling: Any) -> Any:
    if not isinstance(rolling, dict):
        return None
    return {"MaxUnavailable": rolling.get("maxUnavailable"), "MaxSurge": rolling.get("maxSurge")}


_POLICIES = ("OrderedReady", "Parallel")


def statefulset(obj: dict[str, Any]) -> list[Cause]:
    spec = mapping(obj.get("spec"))
    out = _nonnegative(spec, "revisionHistoryLimit")
    policy = spec.get("podManagementPolicy")
    if not policy:
        out.append(required("spec.podManagementPolicy"))
    elif policy not in _POLICIES:
        out.append(invalid("spec.podManagementPolicy", policy, "must be 'OrderedReady' or 'Parallel'"))
    strategy = mapping(spec.get("updateStrategy"))
    rolling = strategy.get("rollingUpdate")
    if strategy.get("type") == "OnDelete" and rolling is not None:
        shown = {"Partition": (rolling or {}).get("partition") or 0, "MaxUnavailable": (rolling or {}).get(
            "maxUnavailable")}  # (the internal type, marshalled without JSON tags)
        out.append(invalid("spec.updateStrategy.rollingUpdate", shown, "only allowed for updateStrategy "
                           "'RollingUpdate'"))
    elif strategy.get("type") == "RollingUpdate" and isinstance(rolling, dict):
        partition = rolling.get("partition")
        if isinstance(partition, int) and partition < 0:
            out.append(invalid("spec.updateStrategy.rollingUpdate.partition", partition, _NONNEGATIVE))
    elif strategy.get("type") not in (None, "", "OnDelete", "RollingUpdate"):
        shown = {"Type": strategy.get("type"), "RollingUpdate": None if rolling is None else {  # (internal type)
            "Partition": mapping(rolling).get("partition") or 0, "MaxUnavailable": mapping(rolling).get(
                "maxUnavailable")}}
        out.append(invalid("spec.updateStrategy", shown, "must be 'RollingUpdate' or 'OnDelete'"))
    start = mapping(spec.get("ordinals")).get("start")
    if isinstance(start, int) and not isinstance(start, bool) and start < 0:
        out.append(invalid("spec.ordinals.start", start, _NONNEGATIVE))
    retention = mapping(spec.get("persistentVolumeClaimRetentionPolicy"))
    for when in ("whenDeleted", "whenScaled"):
        value = retention.get(when)
        if value is not None and value not in _RETENTION:
            out.append(unsupported(f"spec.persistentVolumeClaimRetentionPolicy.{when}", value, _RETENTION))
    return out


_RETENTION = ["Delete", "Retain"]


_ACCESS_MODES = ["ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"]
_VOLUME_MODES = ["Block", "Filesystem"]


def statefulset_create(obj: dict[str, Any]) -> list[Cause]:
    """What only a new StatefulSet is checked by (an update tolerates what was stored): its service name
    (a DNS label) and its volume claim templates (``ValidatePersistentVolumeClaimSpec``: access modes, a
    positive storage request, the volume mode)."""
    from kubeloop.testing.apiserver import names, quantity, selectors

    spec = mapping(obj.get("spec"))
    out: list[Cause] = []
    service = spec.get("serviceName")
    if isinstance(service, str) and service:
        out += [invalid("spec.serviceName", service, e) for e in names.dns1123_label(service)]
    for i, claim in enumerate(spec.get("volumeClaimTemplates") or []):
        claim_spec, here = mapping(mapping(claim).get("spec")), f"spec.volumeClaimTemplates[{i}].spec"
        modes = claim_spec.get("accessModes") or []
        if not modes:
            out.append(required(f"{here}.accessModes", "at least 1 access mode is required"))
        if claim_spec.get("selector") is not None:
            out += selectors.label_selector_causes(claim_spec["selector"], f"{here}.selector")
        out += [unsupported(f"{here}.accessModes", m, _ACCESS_MODES) for m in modes if m not in _ACCESS_MODES]
        if "ReadWriteOncePod" in modes and any(m in _ACCESS_MODES and m != "ReadWriteOncePod" for m in modes):
            out.append(forbidden(f"{here}.accessModes", "may not use ReadWriteOncePod with other access modes"))
        storage = mapping(mapping(claim_spec.get("resources")).get("requests")).get("storage")
        if storage is None:
            out.append(required(f"{here}.resources[storage]"))
        else:
            try:
                positive = quantity.parse(str(storage))[0] > 0
            except ValueError:
                positive = True  # (refused when decoded)
            if not positive:
                out.append(invalid(f"{here}.resources[storage]", storage, "must be greater than zero"))
        mode = claim_spec.get("volumeMode")
        if mode is not None and mode not in _VOLUME_MODES:
            out.append(unsupported(f"{here}.volumeMode", mode, _VOLUME_MODES))
    return out


def claim_volumes(spec: dict[str, Any]) -> list[dict[str, Any]]:
    """The volumes a StatefulSet's claim templates add to its pods (its template is validated with them)."""
    return [{"name": mapping(mapping(c).get("metadata")).get("name"), "persistentVolumeClaim": {
        "claimName": mapping(mapping(c).get("metadata")).get("name")}} for c in spec.get("volumeClaimTemplates") or []
        if mapping(mapping(c).get("metadata")).get("name")]
