"""ResourceQuotas (core v1), as kube-apiserver 1.35.4 and kube-controller-manager keep them:

- validation (``ValidateResourceQuotaSpec``): resource names a quota knows, quantities that are not
  negative (whole for counted resources), standard and compatible scopes; scopes are fixed once made;
- the quota controller (``status``): ``status.hard`` is the spec's, ``status.used`` what the namespace
  holds of each resource;
- the ResourceQuota admission plugin (``admit``), for new objects: a pod that does not ask for a compute
  resource a quota limits is refused ("failed quota"), a quota whose usage is not known yet too ("status
  unknown"), and a new object that would take a quota's usage over its hard limit ("exceeded quota");
  an admitted object's usage is added to the quotas' ``status.used`` before it is stored, as the real
  plugin does.

What is counted: object counts (``count/<resource>[.<group>]`` of the kinds the fake serves, and the
legacy ``configmaps``, ``secrets``, ``services``, ``resourcequotas``, ``pods``) and pods' compute resources
(``cpu``, ``memory``, ``ephemeral-storage``, their ``requests.`` and ``limits.`` forms). A quota naming any
other resource (node ports, load balancers, storage, huge pages, extended resources, kinds the fake does
not serve) or using scopes is refused with 501 when it is written: the fake would not count it.
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
from typing import Any

from kubeloop.testing.apiserver import containers, errors, quantity
from kubeloop.testing.apiserver.causes import Cause, invalid, listing, mapping
from kubeloop.testing.apiserver.kinds import Kind

Obj = dict[str, Any]
Amount = tuple[Fraction, str]  # (value, the format Quantity.String writes it in)
Usage = dict[str, Amount]

_ALIASES = {("", "configmaps"): "configmaps", ("", "secrets"): "secrets", ("", "services"): "services",
            ("", "resourcequotas"): "resourcequotas"}
_COMPUTE = ("cpu", "memory", "ephemeral-storage")
POD_RESOURCES = frozenset({"count/pods", "pods", *_COMPUTE, *(f"{w}.{r}" for w in ("requests", "limits")
                                                                for r in _COMPUTE)})
# What a pod's every container must ask for when a quota limits it (podEvaluator.Constraints).
_MUST_ASK = frozenset({"cpu", "memory", "requests.cpu", "requests.memory", "limits.cpu", "limits.memory"})
_SCOPES = ("Terminating", "NotTerminating", "BestEffort", "NotBestEffort", "PriorityClass", "VolumeAttributesClass",
           "CrossNamespacePodAffinity")
_INTEGER = frozenset({"pods", "resourcequotas", "services", "replicationcontrollers", "secrets", "configmaps",
                      "persistentvolumeclaims", "services.nodeports", "services.loadbalancers"})
_QUOTA_RESOURCES = frozenset({*_COMPUTE, "requests.cpu", "requests.memory", "requests.storage",
                              "requests.ephemeral-storage", "limits.cpu", "limits.memory", "limits.ephemeral-storage",
                              *_INTEGER})
_EVENTS = (("", "events"), ("events.k8s.io", "events"))  # (never counted by quota)


def count_name(kind: Kind) -> str:
    return f"count/{kind.plural}" + (f".{kind.group}" if kind.group else "")


def _amount(value: Any) -> Amount:
    try:
        return quantity.parse(str(value))
    except ValueError:
        return Fraction(0), "decimal"  # (refused when decoded)


def shown(amount: Amount) -> str:
    return quantity.render(*amount)


# --- validation ----------------------------------------------------------------------------------------

def update_causes(old: Obj, new: Obj) -> list[Cause]:
    """A quota's scopes are fixed once it is made."""
    scopes = listing(mapping(new.get("spec")).get("scopes"))
    if set(listing(mapping(old.get("spec")).get("scopes"))) != set(scopes):
        return [invalid("spec.scopes", scopes, "field is immutable")]
    return []


def status_causes(obj: Obj) -> list[Cause]:
    """``ValidateResourceQuotaStatusUpdate``: the names and amounts of ``status.hard`` and ``status.used``."""
    out: list[Cause] = []
    for field in ("hard", "used"):
        out += _amounts(mapping(mapping(obj.get("status")).get(field)), f"status.{field}")
    return out


def _amounts(listed: dict[str, Any], path: str) -> list[Cause]:
    out: list[Cause] = []
    for key, value in sorted(listed.items()):
        here = f"{path}[{key}]"
        out += containers.resource_name(key, here, container=False)
        if "/" not in key and key not in _QUOTA_RESOURCES and not key.startswith(("hugepages-", "requests.hugepages-")):
            out.append(invalid(here, key, "must be a standard resource for quota"))
        amount, _ = _amount(value)
        if amount < 0:
            out.append(invalid(here, value, "must be greater than or equal to 0"))
        extended = "/" in key and "kubernetes.io/" not in key and not key.startswith("requests.")
        if (key in _INTEGER or extended) and amount.denominator != 1:
            out.append(invalid(here, value, "must be an integer"))
    return out


def causes(obj: Obj) -> list[Cause]:
    spec = mapping(obj.get("spec"))
    out = _amounts(mapping(spec.get("hard")), "spec.hard")
    scopes = listing(spec.get("scopes"))
    for scope in scopes:
        if scope not in _SCOPES:
            out.append(invalid("spec.scopes", scopes, "unsupported scope"))
        for key in sorted(mapping(spec.get("hard"))):
            standard = key in _QUOTA_RESOURCES or key.startswith(("hugepages-", "requests.hugepages-"))
            if standard and not _scope_fits(scope, key):
                out.append(invalid("spec.scopes", scopes, "unsupported scope applied to resource"))
    for pair in (("BestEffort", "NotBestEffort"), ("Terminating", "NotTerminating")):
        if all(s in scopes for s in pair):
            out.append(invalid("spec.scopes", scopes, "conflicting scopes"))
    return out


_POD_COMPUTE = frozenset({"cpu", "memory", "limits.cpu", "limits.memory", "requests.cpu", "requests.memory"})


def _scope_fits(scope: str, resource: str) -> bool:
    """``IsResourceQuotaScopeValidForResource``."""
    if scope in ("Terminating", "NotTerminating", "NotBestEffort", "PriorityClass", "CrossNamespacePodAffinity"):
        return resource == "pods" or resource in _POD_COMPUTE
    if scope == "BestEffort":
        return resource == "pods"
    if scope == "VolumeAttributesClass":
        return resource in ("persistentvolumeclaims", "requests.storage")
    return True


def unmodelled(obj: Obj, served: Callable[[str], bool]) -> str | None:
    """What of a valid quota the fake would not count (None: all of it); ``served(count_name)``: whether a
    ``count/`` resource names a kind the fake serves."""
    spec = mapping(obj.get("spec"))
    if spec.get("scopes") or spec.get("scopeSelector"):
        return "ResourceQuota scopes and scope selectors"
    for key in sorted(mapping(spec.get("hard"))):
        known = key in POD_RESOURCES or key in _ALIASES.values() or (key.startswith("count/") and served(key))
        if not known:
            return f"the ResourceQuota resource {key}"
    return None


# --- usage ---------------------------------------------------------------------------------------------

def usage(kind: Kind, obj: Obj) -> Usage:
    """What one object counts for (``Usage`` of its evaluator)."""
    if kind.key in _EVENTS:
        return {}
    one: Amount = (Fraction(1), "decimal")
    out: Usage = {count_name(kind): one}
    if kind.key in _ALIASES:
        out[_ALIASES[kind.key]] = one
    if kind.key == ("", "pods") and mapping(obj.get("status")).get("phase") not in ("Succeeded", "Failed"):
        out.update(_pod_compute(obj))
    return out


def _pod_compute(pod: Obj) -> Usage:
    """podComputeUsageHelper over the pod's requests and limits (its containers summed, raised to any init
    container's)."""
    requests, limits = pod_totals(pod)
    out: Usage = {"pods": (Fraction(1), "decimal")}
    for resource in _COMPUTE:
        if resource in requests:
            out[resource] = out[f"requests.{resource}"] = requests[resource]
        if resource in limits:
            out[f"limits.{resource}"] = limits[resource]
    return out


def pod_totals(pod: Obj) -> tuple[Usage, Usage]:
    spec = mapping(pod.get("spec"))
    inits = [c for c in listing(spec.get("initContainers")) if isinstance(c, dict)]
    if spec.get("resources") or spec.get("overhead") or any(c.get("restartPolicy") == "Always" for c in inits):
        raise errors.not_served("quota of a pod with sidecar containers, pod-level resources or overhead")
    totals: list[Usage] = []
    for field in ("requests", "limits"):
        summed: Usage = {}
        for c in listing(spec.get("containers")):
            for key, value in mapping(mapping(mapping(c).get("resources")).get(field)).items():
                summed[key] = add(summed.get(key), _amount(value))
        for c in inits:
            for key, value in mapping(mapping(c.get("resources")).get(field)).items():
                if key not in summed or _amount(value)[0] > summed[key][0]:
                    summed[key] = _amount(value)
        totals.append(summed)
    return totals[0], totals[1]


def add(a: Amount | None, b: Amount) -> Amount:
    """``Quantity.Add``: the sum in the first term's format (the second's when the first is zero)."""
    return b if a is None or a[0] == 0 else (a[0] + b[0], a[1])


def _used(resources: list[str], objects: list[tuple[Kind, Obj]]) -> Usage:
    total: Usage = {}
    for kind, obj in objects:
        for key, amount in usage(kind, obj).items():
            if key in resources:
                total[key] = add(total.get(key), amount)
    return {key: total.get(key, (Fraction(0), "decimal")) for key in resources}


def status(quota: Obj, objects: list[tuple[Kind, Obj]]) -> Obj:
    """The quota controller's status: the spec's hard limits and what ``objects`` (the namespace's) use."""
    hard = dict(mapping(mapping(quota.get("spec")).get("hard")))
    used = _used(sorted(hard), objects)
    return {"hard": hard, "used": {k: shown(v) for k, v in used.items()}} if hard else {}


# --- admission -----------------------------------------------------------------------------------------

def _matching(kind: Kind, resources: list[str]) -> list[str]:
    """The evaluator's MatchingResources: what of a quota's resources this kind counts towards."""
    mine = {count_name(kind), _ALIASES.get(kind.key, "")} | (POD_RESOURCES if kind.key == ("", "pods") else set())
    return sorted(r for r in resources if r in mine)


def admit(kind: Kind, obj: Obj, quotas: list[Obj]) -> list[tuple[Obj, Obj]]:
    """CheckRequest for a new object: raises the real 403s; returns (quota, its new status) for each quota
    whose usage the object changes, for the caller to store before the object."""
    if kind.key in _EVENTS:
        return []
    name = obj["metadata"].get("name") or ""

    def refuse(why: str) -> errors.StatusError:
        return errors.forbidden(kind.plural, kind.group, name, why)

    interesting: list[Obj] = []
    for quota in quotas:
        hard = mapping(mapping(quota.get("status")).get("hard"))
        restricted = _matching(kind, sorted(hard))
        if not restricted:
            continue
        quota_name = quota["metadata"]["name"]
        if kind.key == ("", "pods"):
            missing = _missing(obj, restricted)
            if missing:
                raise refuse(f"failed quota: {quota_name}: must specify {missing}")
        used = mapping(mapping(quota.get("status")).get("used"))
        if any(r not in used for r in restricted):
            raise refuse(f"status unknown for quota: {quota_name}, resources: {','.join(restricted)}")
        interesting.append(quota)
    if not interesting:
        return []
    delta = {k: v for k, v in usage(kind, obj).items() if v[0] != 0}
    out: list[tuple[Obj, Obj]] = []
    for quota in interesting:
        state = mapping(quota.get("status"))
        hard, used = mapping(state.get("hard")), mapping(state.get("used"))
        requested = {k: v for k, v in delta.items() if k in hard}
        if not requested:
            continue
        new = {k: _amount(v) for k, v in used.items()}
        for key, amount in requested.items():
            new[key] = add(new.get(key), amount)
        exceeded = sorted(k for k in requested if new[k][0] > _amount(hard[k])[0])
        if exceeded:
            raise refuse(f"exceeded quota: {quota['metadata']['name']}, requested: {_listed(requested, exceeded)}, "
                         f"used: {_listed(dict(used), exceeded)}, limited: {_listed(dict(hard), exceeded)}")
        out.append((quota, {**state, "used": {k: shown(v) for k, v in new.items()}}))
    return out


def _listed(values: dict[str, Any], keys: list[str]) -> str:
    """prettyPrint of a ResourceList masked to ``keys``: ``name=amount`` by name, comma separated."""
    return ",".join(f"{k}={values[k] if isinstance(values[k], str) else shown(values[k])}" for k in keys
                    if k in values)


def _missing(pod: Obj, restricted: list[str]) -> str:
    """podEvaluator.Constraints: the compute resources a limited quota needs every container to ask for."""
    required = set(restricted) & _MUST_ASK
    missing: dict[str, set[str]] = {}
    spec = mapping(pod.get("spec"))
    for field in ("containers", "initContainers"):
        for c in listing(spec.get(field)):
            resources = mapping(mapping(c).get("resources"))
            asked = set(_container_usage(mapping(resources.get("requests")), mapping(resources.get("limits"))))
            for resource in required - asked:
                missing.setdefault(resource, set()).add(mapping(c).get("name") or "")
    return "; ".join(f"{r} for: {','.join(sorted(missing[r]))}" for r in sorted(missing))


def _container_usage(requests: dict[str, Any], limits: dict[str, Any]) -> list[str]:
    out = ["pods"]
    for resource in _COMPUTE:
        out += [resource, f"requests.{resource}"] if resource in requests else []
        out += [f"limits.{resource}"] if resource in limits else []
    return out
