"""A Service's rules (core validation's ``validateService`` and ``validateServicePort``), what its
registry sets on create (cluster IPs of a headless Service, IP families), and the update rule that its
cluster IPs may not change once set. Read from kube-apiserver v1.35.4. Cluster IPs themselves are not
allocated: a Service that is not headless has none on the fake."""

from __future__ import annotations

from typing import Any

from kubeloop.testing.apiserver import names
from kubeloop.testing.apiserver.causes import (
    Cause,
    duplicate,
    forbidden,
    invalid,
    listing,
    mapping,
    required,
    unsupported,
)

TYPES = ["ClusterIP", "ExternalName", "LoadBalancer", "NodePort"]
_PROTOCOLS = ["SCTP", "TCP", "UDP"]
_AFFINITIES = ["ClientIP", "None"]
_TRAFFIC = ["Cluster", "Local"]


def _headless(spec: dict[str, Any]) -> bool:
    return spec.get("clusterIP") == "None"


def causes(obj: dict[str, Any]) -> list[Cause]:
    spec = mapping(obj.get("spec"))
    kind = spec.get("type")
    ports = listing(spec.get("ports"))
    out: list[Cause] = []
    if not ports and not _headless(spec) and kind != "ExternalName":
        out.append(required("spec.ports"))
    if kind == "ExternalName":
        out += _external_name(spec)
    out += _ports(ports)
    for key, value in (spec.get("selector") or {}).items():  # the selector is a label set
        out += [invalid("spec.selector", key, e) for e in names.qualified_name(key)]
        out += [invalid("spec.selector", value, e) for e in names.label_value(value) if isinstance(value, str)]
    # The real server defaults sessionAffinity and type before it validates, so neither is ever missing
    # there (a status write of a spec without them, too): only a value outside the set is refused.
    affinity = spec.get("sessionAffinity")
    if affinity and affinity not in _AFFINITIES:
        out.append(unsupported("spec.sessionAffinity", affinity, _AFFINITIES))
    if kind and kind not in TYPES:
        out.append(unsupported("spec.type", kind, TYPES))
    policy = spec.get("internalTrafficPolicy")
    if policy is not None and policy not in _TRAFFIC:
        out.append(unsupported("spec.internalTrafficPolicy", policy, _TRAFFIC))
    out += _external_traffic(spec)
    return out or _allocation(spec, ports)  # the allocators run only on a valid Service


def _externally_accessible(spec: dict[str, Any]) -> bool:
    return spec.get("type") in ("LoadBalancer", "NodePort") or (
        spec.get("type") == "ClusterIP" and bool(spec.get("externalIPs")))


def _external_traffic(spec: dict[str, Any]) -> list[Cause]:
    policy = spec.get("externalTrafficPolicy")
    if not _externally_accessible(spec):
        return [invalid("spec.externalTrafficPolicy", policy, "may only be set for externally-accessible services")
                ] if policy else []
    if not policy:
        return [required("spec.externalTrafficPolicy")]
    return [] if policy in _TRAFFIC else [unsupported("spec.externalTrafficPolicy", policy, _TRAFFIC)]


# The local control plane's ranges (kube-apiserver's defaults) and families (single-stack IPv4).
NODE_PORTS = range(30000, 32768)


def _allocation(spec: dict[str, Any], ports: list[Any]) -> list[Cause]:
    """What the registry's allocators refuse: a node port outside the range, dual stack required."""
    out: list[Cause] = []
    for i, port in enumerate(ports):
        number = port.get("nodePort") if isinstance(port, dict) else None
        if isinstance(number, int) and number and number not in NODE_PORTS:
            out.append(invalid(f"spec.ports[{i}].nodePort", number, "provided port is not in the valid range. The "
                               f"range of valid ports is {NODE_PORTS.start}-{NODE_PORTS.stop - 1}"))
    if spec.get("ipFamilyPolicy") == "RequireDualStack" and spec.get("type") != "ExternalName":
        out.append(invalid("spec.ipFamilyPolicy", "RequireDualStack",
                           "this cluster is not configured for dual-stack services"))
    return out


def _external_name(spec: dict[str, Any]) -> list[Cause]:
    out = [forbidden("spec.clusterIPs", "may not be set for ExternalName services")] if spec.get("clusterIPs") else []
    cname = (spec.get("externalName") or "").removesuffix(".")  # a trailing dot: fully qualified
    if not cname:
        return [*out, required("spec.externalName")]
    return out + [invalid("spec.externalName", cname, e) for e in names.dns1123_subdomain(cname)]


def _ports(ports: list[Any]) -> list[Cause]:
    out: list[Cause] = []
    seen_names: set[str] = set()
    seen: set[tuple[Any, Any]] = set()
    for i, port in enumerate(ports):
        if not isinstance(port, dict):
            continue
        path, name = f"spec.ports[{i}]", port.get("name") or ""
        if len(ports) > 1 and not name:  # several ports must be told apart by name
            out.append(required(f"{path}.name"))
        elif name:
            out += [invalid(f"{path}.name", name, e) for e in names.dns1123_label(name)]
            out += [duplicate(f"{path}.name", name)] if name in seen_names else []
            seen_names.add(name)
        number = port.get("port") or 0
        if isinstance(number, int) and not 1 <= number <= 65535:
            out.append(invalid(f"{path}.port", number, "must be between 1 and 65535, inclusive"))
        protocol = port.get("protocol")
        if not protocol:
            out.append(required(f"{path}.protocol"))
        elif protocol not in _PROTOCOLS:
            out.append(unsupported(f"{path}.protocol", protocol, _PROTOCOLS))
        out += port_number_or_name(port.get("targetPort"), f"{path}.targetPort")
        key = (protocol, number)  # a port may repeat only under another protocol
        if key in seen:
            out.append(("FieldValueDuplicate", path, f"Duplicate value: {_go_service_port(protocol, number)}"))
        seen.add(key)
    return out


def _go_service_port(protocol: Any, number: Any) -> str:
    """The duplicate key as Go marshals it: a ServicePort with only its protocol and port set."""
    return (f'{{"Name":"","Protocol":"{protocol or ""}","AppProtocol":null,"Port":{number},"TargetPort":0,'
            '"NodePort":0}')


def port_number_or_name(value: Any, path: str) -> list[Cause]:
    """A target or container port: a number in range, or an IANA service name."""
    if isinstance(value, int) and not isinstance(value, bool):
        return [] if 1 <= value <= 65535 else [invalid(path, value, "must be between 1 and 65535, inclusive")]
    if isinstance(value, str):
        return [invalid(path, value, e) for e in names.port_name(value)]
    return []


def update_causes(old: dict[str, Any], new: dict[str, Any]) -> list[Cause]:
    """A Service's cluster IPs may not change once set, unless it is or was an ExternalName, or stays
    headless."""
    before, after = old.get("spec") or {}, new.get("spec") or {}
    if "ExternalName" in (before.get("type"), after.get("type")) or (_headless(before) and _headless(after)):
        return []
    was, now = before.get("clusterIPs") or [], after.get("clusterIPs") or []
    if len(was) == len(now):
        return [invalid(f"spec.clusterIPs[{i}]", now, "may not change once set") for i, ip in enumerate(was)
                if ip != now[i]]
    if len(was) > len(now) and not now:
        return [invalid("spec.clusterIPs[0]", now, "primary clusterIP can not be unset")]
    if was and now and was[0] != now[0]:
        return [invalid("spec.clusterIPs[0]", now, "may not change once set")]
    return []


def on_create(obj: dict[str, Any]) -> None:
    """What the registry sets on create, after field ownership (nobody owns them): ``clusterIPs`` from
    ``clusterIP``, and a single IPv4 family for a Service that is not an ExternalName (the local control
    plane is single-stack)."""
    spec = obj.get("spec")
    if not isinstance(spec, dict) or spec.get("type") == "ExternalName":
        return
    if spec.get("clusterIP") and not spec.get("clusterIPs"):
        spec["clusterIPs"] = [spec["clusterIP"]]
    if not spec.get("ipFamilyPolicy") and _headless(spec) and not spec.get("selector"):
        spec["ipFamilyPolicy"] = "RequireDualStack"  # (a headless Service without selector: both families)
    if not spec.get("ipFamilies"):
        spec["ipFamilies"] = ["IPv4", "IPv6"] if spec.get("ipFamilyPolicy") == "RequireDualStack" and \
            _headless(spec) else ["IPv4"]
    if not spec.get("ipFamilyPolicy"):
        spec["ipFamilyPolicy"] = "SingleStack"


def keep_allocated(old: dict[str, Any], new: dict[str, Any]) -> None:
    """An update that leaves out what the registry set keeps the stored values (PatchAllocatedValues); a
    type that no longer needs an external traffic policy drops the one it kept (dropTypeDependentFields)."""
    before, after = old.get("spec"), new.get("spec")
    if not isinstance(before, dict) or not isinstance(after, dict):
        return
    if _externally_accessible(before) and not _externally_accessible(after) and \
            before.get("externalTrafficPolicy") == after.get("externalTrafficPolicy"):
        after.pop("externalTrafficPolicy", None)
    if after.get("type") == "ExternalName":
        return
    if not after.get("clusterIP") and before.get("clusterIP"):
        after["clusterIP"] = before["clusterIP"]
        after.setdefault("clusterIPs", before.get("clusterIPs"))
    was = before.get("clusterIPs") or []
    if before.get("clusterIP") and was and after.get("clusterIP") != before["clusterIP"] and \
            after.get("clusterIPs") == was:  # (normalizeClusterIPs: the primary follows clusterIP)
        after["clusterIPs"] = [after["clusterIP"], *was[1:]]
    for field in ("ipFamilies", "ipFamilyPolicy"):
        if not after.get(field) and before.get(field):
            after[field] = before[field]
