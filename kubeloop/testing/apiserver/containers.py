"""A pod spec's containers (core validation's ``validateContainers`` and ``validateContainerCommon``):
names that are DNS labels and unique, an image, ports in range, mounts of volumes the pod has, a pull
policy of the three, requests no larger than limits. A container's defaults (pull policy, termination
message) are in ``defaults``; probes, volumes themselves, env and security contexts are not checked."""

from __future__ import annotations

from typing import Any

from kubeloop.testing.apiserver import names, quantity
from kubeloop.testing.apiserver.causes import Cause, duplicate, invalid, mapping, required, unsupported

# Resources a container may not ask for more or less of than its limit (IsOvercommitAllowed is false).
_EXACT_PREFIXES = ("hugepages-",)


def causes(spec: Any, path: str) -> list[Cause]:
    """``path``: the pod spec's (``spec``, ``spec.template.spec``...)."""
    if not isinstance(spec, dict):
        return [required(f"{path}.containers")]
    containers = spec.get("containers") or []
    if not containers:
        return [required(f"{path}.containers")]
    out: list[Cause] = []
    seen: set[str] = set()
    volumes = {v.get("name") for v in spec.get("volumes") or [] if isinstance(v, dict)}
    for i, c in enumerate(containers if isinstance(containers, list) else []):
        if not isinstance(c, dict):
            continue
        here, name = f"{path}.containers[{i}]", c.get("name") or ""
        if not name:
            out.append(required(f"{here}.name"))
        else:
            out += [invalid(f"{here}.name", name, e) for e in names.dns1123_label(name)]
        if not c.get("image"):
            out.append(required(f"{here}.image"))
        out += _ports(c.get("ports"), f"{here}.ports")
        out += _mounts(c.get("volumeMounts"), volumes, f"{here}.volumeMounts")
        policy = c.get("imagePullPolicy")
        if policy is not None and policy not in _PULL_POLICIES:
            out.append(required(f"{here}.imagePullPolicy") if policy == "" else
                       unsupported(f"{here}.imagePullPolicy", policy, _PULL_POLICIES))
        out += _resources(c.get("resources"), f"{here}.resources")
        if name in seen:  # (an empty name is reported once, as missing)
            out.append(duplicate(f"{here}.name", name))
        seen.add(name)
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
    return out


def _resources(resources: Any, path: str) -> list[Cause]:
    """A request above its limit (or, for huge pages, other than it) is invalid, reported on
    ``requests`` with the request's canonical value."""
    if not isinstance(resources, dict):
        return []
    limits = mapping(resources.get("limits"))
    requests = mapping(resources.get("requests"))
    out: list[Cause] = []
    for name, wanted in requests.items():
        if name not in limits or not isinstance(wanted, str) or not isinstance(limits[name], str):
            continue
        try:
            asked, cap = quantity.parse(wanted)[0], quantity.parse(limits[name])[0]
        except ValueError:
            continue  # (refused when decoded)
        if name.startswith(_EXACT_PREFIXES) and asked != cap:
            out.append(invalid(f"{path}.requests", wanted, f"must be equal to {name} limit of {limits[name]}"))
        elif asked > cap:
            out.append(invalid(f"{path}.requests", wanted, f"must be less than or equal to {name} limit of "
                               f"{limits[name]}"))
    return out
