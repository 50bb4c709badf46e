"""A Service's rules (core validation's ``validateService`` and ``validateServicePort``), what its
registry sets on create (cluster IPs of a headless Service, IP families), and the update rule that its
cluster IPs may not change once set. Read from kube-apiserver v1.35.4. Cluster IPs themselves are not
allocated: a Service that is not headless has none on the fake."""

from __future__ import annotations

import ipaddress
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
    out += _cluster_ips(spec)
    if kind in (None, "ClusterIP"):  # (the type defaults to ClusterIP)
        out += [forbidden(f"spec.ports[{i}].nodePort", "may not be used when `type` is 'ClusterIP'")
                for i, port in enumerate(ports) if isinstance(port, dict) and port.get("nodePort")]
    return out or _allocation(spec, ports)  # the allocators run only on a valid Service


def _needs_node_port(spec: dict[str, Any]) -> bool:
    return spec.get("type") == "NodePort" or (spec.get("type") == "LoadBalancer" and
                                              spec.get("allocateLoadBalancerNodePorts") is not False)


def _ips(spec: dict[str, Any]) -> list[Any]:
    """The cluster IPs as validation sees them (the strategy fills ``clusterIPs`` from ``clusterIP``)."""
    return listing(spec.get("clusterIPs")) or ([spec["clusterIP"]] if spec.get("clusterIP") else [])


def _cluster_ips(spec: dict[str, Any]) -> list[Cause]:
    """Each cluster IP an IP address ("None" only alone, first)."""
    if spec.get("type") == "ExternalName":
        return []
    ips = _ips(spec)
    out: list[Cause] = []
    for i, ip in enumerate(ips):
        if i == 0 and ip == "None":
            if len(ips) > 1:
                out.append(invalid("spec.clusterIPs", ips, "'None' must be the first and only value"))
            continue
        try:
            ipaddress.ip_address(ip if isinstance(ip, str) else "")
        except ValueError:
            out.append(invalid(f"spec.clusterIPs[{i}]", ip, "must be a valid IP address, (e.g. 10.9.8.7 or "
                               "2001:db8::ffff)"))
    return out


_IP_MODES = ["Proxy", "VIP"]


def ingress_defaults(status: dict[str, Any]) -> None:
    """SetDefaults_Service: a load balancer ingress with an IP is a VIP unless it says otherwise."""
    for item in listing(mapping(status.get("loadBalancer")).get("ingress")):
        if isinstance(item, dict) and item.get("ip") and item.get("ipMode") is None:
            item["ipMode"] = "VIP"


def ingress_causes(ingress: Any) -> list[Cause]:
    """``ValidateLoadBalancerStatus``' per-ingress rules: an IP address, an IP mode exactly when there is an
    IP (VIP or Proxy), a host name that is a DNS name and not an IP."""
    out: list[Cause] = []
    for i, raw in enumerate(listing(ingress)):
        item, here = mapping(raw), f"status.loadBalancer.ingress[{i}]"
        ip, mode, host = item.get("ip") or "", item.get("ipMode"), item.get("hostname") or ""
        if ip:
            try:
                ipaddress.ip_address(ip)
            except ValueError:
                out.append(invalid(f"{here}.ip", ip, "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"))
        if mode is None:
            if ip:
                out.append(required(f"{here}.ipMode", "must be specified when `ip` is set"))
        elif not ip:
            out.append(forbidden(f"{here}.ipMode", "may not be specified when `ip` is not set"))
        elif mode not in _IP_MODES:
            out.append(unsupported(f"{here}.ipMode", mode, _IP_MODES))
        if host:
            out += [invalid(f"{here}.hostname", host, e) for e in names.dns1123_subdomain(host)]
            try:
                ipaddress.ip_address(host)
                out.append(invalid(f"{here}.hostname", host, "must be a DNS name, not an IP address"))
            except ValueError:
                pass
    return out


def denied_external_ips(old: dict[str, Any] | None, new: dict[str, Any]) -> bool:
    """DenyServiceExternalIPs (on in the control plane the fake is judged against): a Service may not
    gain external IPs; it may keep or drop those it has."""
    wanted = listing(mapping(new.get("spec")).get("externalIPs"))
    had = set(listing(mapping((old or {}).get("spec")).get("externalIPs")))
    return bool(wanted) and (old is None or not set(wanted) <= had)


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
SERVICE_CIDR = ipaddress.ip_network("10.0.0.0/24")  # (cluster IPs are not allocated by the fake, only checked)


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
    ips = _ips(spec) if spec.get("type") != "ExternalName" else []
    if ips and ips[0] != "None" and ipaddress.ip_address(ips[0]) not in SERVICE_CIDR:
        out.append(invalid("spec.clusterIPs", ips, f"failed to allocate IP {ips[0]}: the provided network does not "
                           "match the current range"))
    return out


def _external_name(spec: dict[str, Any]) -> list[Cause]:
    out = [forbidden("spec.clusterIPs", "may not be set for ExternalName services")] if spec.get("clusterIPs") else []
    out += [forbidden(f"spec.{f}", "may not be set for ExternalName services") for f in ("ipFamilies", "ipFamilyPolicy")
            if spec.get(f)]
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
    if _needs_node_port(before) and not _needs_node_port(after):  # (dropTypeDependentFields: node ports the
        old_ports = {(p.get("port"), p.get("protocol")): p.get("nodePort") for p in listing(before.get("ports"))
                     if isinstance(p, dict)}  # update kept as they were go with the type that needed them)
        new_ports = [p for p in listing(after.get("ports")) if isinstance(p, dict)]
        if all(p.get("nodePort") == old_ports.get((p.get("port"), p.get("protocol"))) for p in new_ports
               if p.get("nodePort")):
            for p in new_ports:
                p.pop("nodePort", None)
    if after.get("type") == "ExternalName":
        if before.get("type") != "ExternalName":  # dropTypeDependentFields: what it set, unless changed
            if (before.get("clusterIP"), before.get("clusterIPs")) == (after.get("clusterIP"), after.get("clusterIPs")):
                after.pop("clusterIP", None)
                after.pop("clusterIPs", None)
            for field in ("ipFamilies", "ipFamilyPolicy"):
                if before.get(field) == after.get(field):
                    after.pop(field, None)
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
