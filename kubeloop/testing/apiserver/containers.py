"""A pod spec's containers (core validation's ``validateContainers`` and ``validateContainerCommon``):
names that are DNS labels and unique, an image, ports in range with a protocol, mounts of volumes the pod
has, a pull policy of the three, requests no larger than limits, environment variables (names, one value
source, key references), probes with one handler; and of the pod spec itself, volume names and the DNS
policy. Defaults (pull policy, termination message, probes, volume modes) are in ``defaults``; volume
sources, lifecycle hooks and security contexts are not checked."""

from __future__ import annotations

from typing import Any

from kubeloop.testing.apiserver import names, quantity, scheduling
from kubeloop.testing.apiserver.causes import Cause, duplicate, forbidden, invalid, mapping, required, unsupported


def causes(spec: Any, path: str) -> list[Cause]:
    """``path``: the pod spec's (``spec``, ``spec.template.spec``...)."""
    if not isinstance(spec, dict):
        return [required(f"{path}.containers")]
    containers = spec.get("containers") or []
    if not containers:
        return [required(f"{path}.containers")]
    out: list[Cause] = _volumes(spec.get("volumes"), f"{path}.volumes") + _dns_policy(spec, path)
    seen: set[str] = set()
    volumes = {v.get("name") for v in spec.get("volumes") or [] if isinstance(v, dict)}
    for i, c in enumerate(containers if isinstance(containers, list) else []):
        if not isinstance(c, dict):
            continue
        here, name = f"{path}.containers[{i}]", c.get("name") or ""
        out += _name_and_image(c, here)
        out += _ports(c.get("ports"), f"{here}.ports")
        if spec.get("hostNetwork") is True:  # (on the host's network a port is the host's port)
            out += [invalid(f"{here}.ports[{j}].hostPort", p["hostPort"], "must match `containerPort` when "
                            "`hostNetwork` is true") for j, p in enumerate(c.get("ports") or [])
                    if isinstance(p, dict) and p.get("hostPort") and p.get("hostPort") != p.get("containerPort")]
        out += _mounts(c.get("volumeMounts"), volumes, f"{here}.volumeMounts")
        policy = c.get("imagePullPolicy")
        if policy is not None and policy not in _PULL_POLICIES:
            out.append(required(f"{here}.imagePullPolicy") if policy == "" else
                       unsupported(f"{here}.imagePullPolicy", policy, _PULL_POLICIES))
        out += _resources(c.get("resources"), f"{here}.resources")
        out += _env(c.get("env"), f"{here}.env")
        for probe in ("livenessProbe", "readinessProbe", "startupProbe"):
            out += _probe(c.get(probe), f"{here}.{probe}")
        if name in seen:  # (an empty name is reported once, as missing)
            out.append(duplicate(f"{here}.name", name))
        seen.add(name)
    return out + _ephemeral(spec, f"{path}.ephemeralContainers") + scheduling.causes(spec, path)


# The fields an ephemeral container may set (allowedEphemeralContainerFields, by their JSON names); any
# other that is not empty "cannot be set for an Ephemeral Container".
_EPHEMERAL_ALLOWED = frozenset({"name", "image", "command", "args", "workingDir", "envFrom", "env", "volumeMounts",
                                "volumeDevices", "terminationMessagePath", "terminationMessagePolicy",
                                "imagePullPolicy", "securityContext", "stdin", "stdinOnce", "tty",
                                "targetContainerName"})


def _ephemeral(spec: dict[str, Any], path: str) -> list[Cause]:
    """``validateEphemeralContainers``: each one's common container rules, a name unique among all the
    pod's containers, a target that is one of its (non-ephemeral) containers, only the allowed fields,
    mounts without sub paths."""
    listed = spec.get("ephemeralContainers")
    if not isinstance(listed, list) or not listed:
        return []
    regular = {c.get("name") for f in ("containers", "initContainers") for c in spec.get(f) or []
               if isinstance(c, dict)}
    taken = set(regular)
    volumes = {v.get("name") for v in spec.get("volumes") or [] if isinstance(v, dict)}
    out: list[Cause] = []
    for i, c in enumerate(listed):
        if not isinstance(c, dict):
            continue
        here, name = f"{path}[{i}]", c.get("name") or ""
        out += _name_and_image(c, here)
        out += _mounts(c.get("volumeMounts"), volumes, f"{here}.volumeMounts")
        policy = c.get("imagePullPolicy")
        if policy is not None and policy not in _PULL_POLICIES:
            out.append(unsupported(f"{here}.imagePullPolicy", policy, _PULL_POLICIES))
        out += _env(c.get("env"), f"{here}.env")
        if name in taken:
            out.append(duplicate(f"{here}.name", name))
        taken.add(name)
        target = c.get("targetContainerName")
        if target and target not in regular:
            out.append(("FieldValueNotFound", f"{here}.targetContainerName", f'Not found: "{target}"'))
        out += [forbidden(f"{here}.{k}", "cannot be set for an Ephemeral Container") for k, v in c.items()
                if k not in _EPHEMERAL_ALLOWED and v not in (None, "", [], {}, False, 0)]
        for j, mount in enumerate(c.get("volumeMounts") or []):
            for field in ("subPath", "subPathExpr"):
                if isinstance(mount, dict) and mount.get(field):
                    out.append(forbidden(f"{here}.volumeMounts[{j}].{field}", "cannot be set for an Ephemeral "
                                         "Container"))
    return out


_PULL_POLICIES = ["Always", "IfNotPresent", "Never"]


def _mounts(mounts: Any, volumes: set[Any], path: str) -> list[Cause]:
    """Each mount names a volume of the pod."""
    out: list[Cause] = []
    for j, mount in enumerate(mounts if isinstance(mounts, list) else []):
        name = mount.get("name") if isinstance(mount, dict) else None
        if not name:
            out.append(required(f"{path}[{j}].name"))
        elif name not in volumes:
            out.append(("FieldValueNotFound", f"{path}[{j}].name", f'Not found: "{name}"'))
    return out


def _ports(ports: Any, path: str) -> list[Cause]:
    out: list[Cause] = []
    seen: set[str] = set()
    for i, port in enumerate(ports if isinstance(ports, list) else []):
        if not isinstance(port, dict):
            continue
        name = port.get("name") or ""
        if name:
            errs = names.port_name(name)
            out += [invalid(f"{path}[{i}].name", name, e) for e in errs]
            if not errs and name in seen:
                out.append(duplicate(f"{path}[{i}].name", name))
            seen.add(name)
        for field in ("containerPort", "hostPort"):
            number = port.get(field) or 0
            if not isinstance(number, int):
                continue
            if field == "containerPort" and number == 0:
                out.append(required(f"{path}[{i}].containerPort"))
            elif number and not 1 <= number <= 65535:
                out.append(invalid(f"{path}[{i}].{field}", number, "must be between 1 and 65535, inclusive"))
        protocol = port.get("protocol")  # (defaulted to TCP)
        if not protocol:
            out.append(required(f"{path}[{i}].protocol"))
        elif protocol not in _PROTOCOLS:
            out.append(unsupported(f"{path}[{i}].protocol", protocol, _PROTOCOLS))
    return out


_PROTOCOLS = ["SCTP", "TCP", "UDP"]
_DNS_POLICIES = ["ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"]
_HANDLERS = ("exec", "httpGet", "tcpSocket", "grpc")
_FIELD_PATHS = ["metadata.name", "metadata.namespace", "metadata.uid", "spec.nodeName", "spec.serviceAccountName",
                "status.hostIP", "status.hostIPs", "status.podIP", "status.podIPs"]


def _volumes(volumes: Any, path: str) -> list[Cause]:
    out: list[Cause] = []
    seen: set[str] = set()
    for i, volume in enumerate(volumes if isinstance(volumes, list) else []):
        name = mapping(volume).get("name") or ""
        out += [required(f"{path}[{i}].name")] if not name else [
            invalid(f"{path}[{i}].name", name, e) for e in names.dns1123_label(name)]
        out += [duplicate(f"{path}[{i}].name", name)] if name in seen else []
        seen.add(name)
    return out


def _dns_policy(spec: dict[str, Any], path: str) -> list[Cause]:
    policy = spec.get("dnsPolicy")  # (defaulted to ClusterFirst)
    if policy is None or policy in _DNS_POLICIES:
        return []
    return [required(f"{path}.dnsPolicy")] if policy == "" else [unsupported(f"{path}.dnsPolicy", policy,
                                                                              _DNS_POLICIES)]


def _env(env: Any, path: str) -> list[Cause]:
    """``ValidateEnv`` with relaxed names (printable ASCII but ``=``, 1.35's default) and value sources."""
    out: list[Cause] = []
    for i, var in enumerate(env if isinstance(env, list) else []):
        var, here = mapping(var), f"{path}[{i}]"
        name = var.get("name") or ""
        if not name:
            out.append(required(f"{here}.name"))
        elif any(not 32 <= ord(c) <= 126 or c == "=" for c in name):
            out.append(invalid(f"{here}.name", name, "a valid environment variable name must consist only of "
                               "printable ASCII characters other than '='"))
        out += _value_from(var, f"{here}.valueFrom")
    return out


def _value_from(var: dict[str, Any], path: str) -> list[Cause]:
    source = var.get("valueFrom")
    if not isinstance(source, dict):
        return []
    out: list[Cause] = []
    given = [k for k in ("fieldRef", "resourceFieldRef", "configMapKeyRef", "secretKeyRef", "fileKeyRef")
             if source.get(k) is not None]
    for key in ("configMapKeyRef", "secretKeyRef"):
        if key in given:
            ref = mapping(source[key])
            name = ref.get("name") or ""
            out += [invalid(f"{path}.{key}.name", name, e) for e in names.dns1123_subdomain(name)]
            out += [required(f"{path}.{key}.key")] if not ref.get("key") else []
    if "fieldRef" in given:
        ref = mapping(source["fieldRef"])
        if not ref.get("fieldPath"):
            out.append(required(f"{path}.fieldRef.fieldPath"))
        elif ref["fieldPath"] not in _FIELD_PATHS and not ref["fieldPath"].startswith(("metadata.labels[",
                                                                                      "metadata.annotations[")):
            out.append(unsupported(f"{path}.fieldRef.fieldPath", ref["fieldPath"], _FIELD_PATHS))
    if not given:
        out.append(invalid(path, "", "must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef`, "
                           "`secretKeyRef` or `fileKeyRef`"))
    elif var.get("value"):
        out.append(invalid(path, "", "may not be specified when `value` is not empty"))
    elif len(given) > 1:
        out.append(invalid(path, "", "may not have more than one field specified at a time"))
    return out


def _probe(probe: Any, path: str) -> list[Cause]:
    """``validateProbe``: one handler; counts that are not negative."""
    if not isinstance(probe, dict):
        return []
    handlers = [h for h in _HANDLERS if probe.get(h) is not None]
    out = [required(path, "must specify a handler type")] if not handlers else [
        forbidden(f"{path}.{h}", "may not specify more than 1 handler type") for h in handlers[1:]]
    for field in ("initialDelaySeconds", "timeoutSeconds", "periodSeconds", "successThreshold", "failureThreshold"):
        value = probe.get(field)
        if isinstance(value, int) and value < 0:
            out.append(invalid(f"{path}.{field}", value, "must be greater than or equal to 0"))
    return out


_STANDARD = ("cpu", "memory", "ephemeral-storage")


# helper.IsStandardResourceName: the resources the core API names (quota's among them).
_STANDARD_RESOURCES = frozenset({
    "cpu", "memory", "ephemeral-storage", "requests.cpu", "requests.memory", "requests.ephemeral-storage",
    "limits.cpu", "limits.memory", "limits.ephemeral-storage", "pods", "services", "replicationcontrollers",
    "resourcequotas", "secrets", "configmaps", "persistentvolumeclaims", "storage", "requests.storage",
    "services.nodeports", "services.loadbalancers"})


def resource_name(name: str, path: str, *, container: bool) -> list[Cause]:
    """``validateResourceName`` (a qualified name; a standard one when it has no domain) and, for
    containers' resources, ``validateContainerResourceName`` (cpu, memory, ephemeral storage, huge pages,
    or an extended resource whose name is a valid ``requests.`` key)."""
    out = [invalid(path, name, e) for e in names.qualified_name(name)]
    bare = "/" not in name
    if not out and bare and name not in _STANDARD_RESOURCES and not name.startswith(("hugepages-",
                                                                                      "requests.hugepages-")):
        out.append(invalid(path, name, "must be a standard resource type or fully qualified"))
    if not container:
        return out
    if bare and name not in _STANDARD and not name.startswith("hugepages-"):
        out.append(invalid(path, name, "must be a standard resource for containers"))
    elif not bare and not _native(name) and (name.startswith("requests.") or
                                             names.qualified_name("requests." + name)):
        out.append(invalid(path, name, "doesn't follow extended resource name standard"))
    return out


def _native(name: str) -> bool:
    """``IsNativeResource``: no domain, or one under kubernetes.io."""
    return "/" not in name or "kubernetes.io/" in name


def _overcommit(name: str) -> bool:
    """``IsOvercommitAllowed``: native resources but huge pages may be asked for below their limit."""
    return _native(name) and not name.startswith("hugepages-")


def _amount(value: Any) -> Any:
    try:
        return quantity.parse(value)[0] if isinstance(value, str) else None
    except ValueError:
        return None  # (refused when decoded)


def _resource(name: str, value: Any, path: str) -> list[Cause]:
    """``validateContainerResourceName`` (a standard name, or a domain-qualified extended one),
    ``ValidateResourceQuantityValue`` (not negative; a whole number for extended resources) and a huge
    page amount that is a multiple of its page size."""
    out = resource_name(name, path, container=True)
    amount = _amount(value)
    if amount is None:
        return out
    if amount < 0:
        out.append(invalid(path, value, "must be greater than or equal to 0"))
    if not _native(name) and amount.denominator != 1:
        out.append(invalid(path, value, "must be an integer"))
    if name.startswith("hugepages-"):
        page = _amount(name[len("hugepages-"):])
        whole = page is not None and page > 0 and page.denominator == 1
        if not whole or int(amount) % int(page or 1):
            out.append(invalid(path, value, f"{value} is not positive integer multiple of {name}"))
    return out


def _resources(resources: Any, path: str) -> list[Cause]:
    """A request above its limit (or, for huge pages and extended resources, other than it, or without
    one) is invalid, reported on ``requests`` with the request's canonical value; huge pages need cpu or
    memory asked for too."""
    if not isinstance(resources, dict):
        return []
    limits = mapping(resources.get("limits"))
    requests = mapping(resources.get("requests"))
    out: list[Cause] = []
    for which, listed in (("limits", limits), ("requests", requests)):
        for name, value in listed.items():
            out += _resource(name, value, f"{path}.{which}[{name}]")
            if which == "requests" and name not in limits and not _overcommit(name):
                out.append(required(f"{path}.limits", "Limit must be set for non overcommitable resources"))
    for name, wanted in requests.items():
        asked, cap = _amount(wanted), _amount(limits.get(name))
        if asked is None or cap is None:
            continue
        if not _overcommit(name) and asked != cap:
            out.append(invalid(f"{path}.requests", wanted, f"must be equal to {name} limit of {limits[name]}"))
        elif asked > cap:
            out.append(invalid(f"{path}.requests", wanted, f"must be less than or equal to {name} limit of "
                               f"{limits[name]}"))
    asked_for = set(limits) | set(requests)
    if any(n.startswith("hugepages-") for n in asked_for) and not asked_for & {"cpu", "memory"}:
        out.append(forbidden(path, "HugePages require cpu or memory"))
    return out


def _name_and_image(c: dict[str, Any], here: str) -> list[Cause]:
    """A container's name (required, a DNS-1123 label) and image (required): every kind of container."""
    name = c.get("name") or ""
    out = [required(f"{here}.name")] if not name else [invalid(f"{here}.name", name, e)
                                                         for e in names.dns1123_label(name)]
    return out + ([] if c.get("image") else [required(f"{here}.image")])
