"""What core validation (kube-apiserver 1.35.4's ``ValidatePodSpec``) checks of the fields that tell the
scheduler where a pod may go, for a Pod and every pod template:

- ``affinity``: node affinity (``ValidateNodeSelector``: at least one term; each requirement's operator
  and values, its key a qualified name, the values label values where the term is required; preferred
  terms weigh 1-100), pod affinity and anti-affinity (label and namespace selectors, namespaces, a
  topology key that is set and a qualified name; weights 1-100);
- ``topologySpreadConstraints``: a positive ``maxSkew``, a topology key, ``whenUnsatisfiable`` one of the
  two actions, no repeated {topologyKey, whenUnsatisfiable}, ``minDomains`` positive and only with
  ``DoNotSchedule``, the node inclusion policies, the label selector;
- ``tolerations``: a qualified key, ``Exists`` when the key is empty, ``tolerationSeconds`` only with
  ``NoExecute``, the operator (``Lt``/``Gt`` are behind a gate that is off) and its value, the effect;
- ``schedulingGates``: qualified names, no repeats;
- ``dnsConfig``: required (with a name server) when ``dnsPolicy`` is ``None``, at most three name servers.

And the update rules of a gated pod's scheduling fields (``ValidatePodUpdate``): gates may only be
removed, and while the old pod is gated, node selector entries may be added and a node affinity set where
it had no required terms. ``matchLabelKeys``/``mismatchLabelKeys`` are not checked.
"""

from __future__ import annotations

import ipaddress
from typing import Any

from kubeloop.testing.apiserver import names, selectors
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

_NODE_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")
_ACTIONS = ["DoNotSchedule", "ScheduleAnyway"]
_POLICIES = ["Honor", "Ignore"]
_EFFECTS = ["NoSchedule", "PreferNoSchedule", "NoExecute"]
MAX_NAMESERVERS = 3


def causes(spec: dict[str, Any], path: str) -> list[Cause]:
    """``path``: the pod spec's (``spec``, ``spec.template.spec``...)."""
    out = affinity(spec.get("affinity"), f"{path}.affinity")
    out += topology_spread(spec.get("topologySpreadConstraints"), f"{path}.topologySpreadConstraints")
    out += tolerations(spec.get("tolerations"), f"{path}.tolerations")
    out += scheduling_gates(spec.get("schedulingGates"), f"{path}.schedulingGates")
    return out + dns_config(spec, f"{path}.dnsConfig")


def _label_name(value: Any, path: str) -> list[Cause]:
    """``ValidateLabelName``: a qualified name, each rule it breaks its own cause."""
    text = value if isinstance(value, str) else ""
    return [invalid(path, text, e) for e in names.qualified_name(text)]


# --- affinity ------------------------------------------------------------------------------------------

def affinity(value: Any, path: str) -> list[Cause]:
    aff = mapping(value)
    out: list[Cause] = []
    if aff.get("nodeAffinity") is not None:
        out += _node_affinity(mapping(aff["nodeAffinity"]), f"{path}.nodeAffinity")
    for field in ("podAffinity", "podAntiAffinity"):
        if aff.get(field) is not None:
            out += _pod_affinity(mapping(aff[field]), f"{path}.{field}")
    return out


def _node_affinity(na: dict[str, Any], path: str) -> list[Cause]:
    out: list[Cause] = []
    hard = na.get("requiredDuringSchedulingIgnoredDuringExecution")
    if hard is not None:
        here = f"{path}.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms"
        terms = listing(mapping(hard).get("nodeSelectorTerms"))
        if not terms:
            out.append(required(here, "must have at least one node selector term"))
        for i, term in enumerate(terms):
            out += _node_selector_term(mapping(term), f"{here}[{i}]", label_values=True)
    for i, pref in enumerate(listing(na.get("preferredDuringSchedulingIgnoredDuringExecution"))):
        here = f"{path}.preferredDuringSchedulingIgnoredDuringExecution[{i}]"
        out += _weight(mapping(pref).get("weight"), f"{here}.weight")
        # (invalid label values are allowed in preferred terms: they may match on a one-node cluster)
        out += _node_selector_term(mapping(mapping(pref).get("preference")), f"{here}.preference",
                                   label_values=False)
    return out


def _weight(weight: Any, path: str) -> list[Cause]:
    number = weight if isinstance(weight, int) and not isinstance(weight, bool) else 0
    return [] if 0 < number <= 100 else [invalid(path, number, "must be in the range 1-100")]


def _node_selector_term(term: dict[str, Any], path: str, *, label_values: bool) -> list[Cause]:
    out: list[Cause] = []
    for j, req in enumerate(listing(term.get("matchExpressions"))):
        out += _node_requirement(mapping(req), f"{path}.matchExpressions[{j}]", label_values)
    for j, req in enumerate(listing(term.get("matchFields"))):
        out += _node_field_requirement(mapping(req), f"{path}.matchFields[{j}]")
    return out


def _node_requirement(req: dict[str, Any], path: str, label_values: bool) -> list[Cause]:
    op, values = req.get("operator") or "", listing(req.get("values"))
    out: list[Cause] = []
    if op in ("In", "NotIn"):
        if not values:
            out.append(required(f"{path}.values", "must be specified when `operator` is 'In' or 'NotIn'"))
    elif op in ("Exists", "DoesNotExist"):
        if values:
            out.append(forbidden(f"{path}.values", "may not be specified when `operator` is 'Exists' or "
                                 "'DoesNotExist'"))
    elif op in ("Gt", "Lt"):
        if len(values) != 1:
            out.append(required(f"{path}.values", "must be specified single value when `operator` is 'Lt' or 'Gt'"))
    else:
        out.append(invalid(f"{path}.operator", op, "not a valid selector operator"))
    out += _label_name(req.get("key"), f"{path}.key")
    if label_values:
        for k, value in enumerate(values):
            if isinstance(value, str):
                out += [invalid(f"{path}.values[{k}]", value, e) for e in names.label_value(value)]
    return out


def _node_field_requirement(req: dict[str, Any], path: str) -> list[Cause]:
    op, values, key = req.get("operator") or "", listing(req.get("values")), req.get("key") or ""
    out: list[Cause] = []
    if op in ("In", "NotIn"):
        if len(values) != 1:
            out.append(required(f"{path}.values", "must be only one value when `operator` is 'In' or 'NotIn' for "
                                "node field selector"))
    else:
        out.append(invalid(f"{path}.operator", op, "not a valid selector operator"))
    if key != "metadata.name":  # (the one node field a term may select by)
        out.append(invalid(f"{path}.key", key, "not a valid field selector key"))
    else:
        for k, value in enumerate(values):
            if isinstance(value, str):
                out += [invalid(f"{path}.values[{k}]", value, e) for e in names.dns1123_subdomain(value)]
    return out


def _pod_affinity(pa: dict[str, Any], path: str) -> list[Cause]:
    out: list[Cause] = []
    hard = f"{path}.requiredDuringSchedulingIgnoredDuringExecution"
    for i, term in enumerate(listing(pa.get("requiredDuringSchedulingIgnoredDuringExecution"))):
        out += _pod_affinity_term(mapping(term), f"{hard}[{i}]")
    soft = f"{path}.preferredDuringSchedulingIgnoredDuringExecution"
    for i, weighted in enumerate(listing(pa.get("preferredDuringSchedulingIgnoredDuringExecution"))):
        out += _weight(mapping(weighted).get("weight"), f"{soft}[{i}].weight")
        out += _pod_affinity_term(mapping(mapping(weighted).get("podAffinityTerm")), f"{soft}[{i}].podAffinityTerm")
    return out


def _pod_affinity_term(term: dict[str, Any], path: str) -> list[Cause]:
    out: list[Cause] = []
    for field in ("labelSelector", "namespaceSelector"):
        if term.get(field) is not None:
            out += selectors.label_selector_causes(term[field], f"{path}.{field}")
    for ns in listing(term.get("namespaces")):
        if isinstance(ns, str):  # (reported on "namespace", as the real check names it)
            out += [invalid(f"{path}.namespace", ns, e) for e in names.dns1123_label(ns)]
    if not term.get("topologyKey"):
        out.append(required(f"{path}.topologyKey", "can not be empty"))
    return out + _label_name(term.get("topologyKey"), f"{path}.topologyKey")


# --- topology spread -----------------------------------------------------------------------------------

def topology_spread(value: Any, path: str) -> list[Cause]:
    constraints = [mapping(c) for c in listing(value)]
    out: list[Cause] = []
    for i, c in enumerate(constraints):
        here = f"{path}[{i}]"
        skew = c.get("maxSkew")
        skew = skew if isinstance(skew, int) and not isinstance(skew, bool) else 0
        if skew <= 0:
            out.append(invalid(f"{here}.maxSkew", skew, "must be greater than zero"))
        if not c.get("topologyKey"):
            out.append(required(f"{here}.topologyKey", "can not be empty"))
        action = c.get("whenUnsatisfiable") or ""
        if action not in _ACTIONS:
            out.append(unsupported(f"{here}.whenUnsatisfiable", action, _ACTIONS))
        if any(c.get("topologyKey") == o.get("topologyKey") and action == (o.get("whenUnsatisfiable") or "")
               for o in constraints[i + 1:]):
            out.append(duplicate(f"{here}.{{topologyKey, whenUnsatisfiable}}",
                                 f"{{{c.get('topologyKey') or ''}, {action}}}"))
        domains = c.get("minDomains")
        if isinstance(domains, int) and not isinstance(domains, bool):
            if domains <= 0:
                out.append(invalid(f"{here}.minDomains", domains, "must be greater than zero"))
            if action != "DoNotSchedule":
                out.append(invalid(f"{here}.minDomains", domains, "can only use minDomains if "
                                   f"whenUnsatisfiable=DoNotSchedule, not {action}"))
        for field in ("nodeAffinityPolicy", "nodeTaintsPolicy"):
            policy = c.get(field)
            if policy is not None and policy not in _POLICIES:
                out.append(unsupported(f"{here}.{field}", policy, _POLICIES))
        if c.get("labelSelector") is not None:
            out += selectors.label_selector_causes(c["labelSelector"], f"{here}.labelSelector")
    return out


# --- tolerations, gates, DNS ---------------------------------------------------------------------------

def tolerations(value: Any, path: str) -> list[Cause]:
    out: list[Cause] = []
    for i, item in enumerate(listing(value)):
        t, here = mapping(item), f"{path}[{i}]"
        key, op, effect = t.get("key") or "", t.get("operator") or "", t.get("effect") or ""
        val = t.get("value") or ""
        if key:
            out += _label_name(key, f"{here}.key")
        if not key and op != "Exists":
            out.append(invalid(f"{here}.operator", op, "operator must be Exists when `key` is empty, which means "
                               '"match all values and all keys"'))
        if t.get("tolerationSeconds") is not None and effect != "NoExecute":
            out.append(invalid(f"{here}.effect", effect, "effect must be 'NoExecute' when `tolerationSeconds` is set"))
        if op in ("Equal", ""):
            errs = names.label_value(val) if isinstance(val, str) else []
            if errs:
                out.append(invalid(f"{here}.operator", val, ";".join(errs)))
        elif op == "Exists":
            if val:
                out.append(invalid(f"{here}.operator", val, "value must be empty when `operator` is 'Exists'"))
        elif op in ("Lt", "Gt"):  # (the TaintTolerationComparisonOperators gate is off)
            out.append(unsupported(f"{here}.operator", op, ["Equal", "Exists", "Lt", "Gt"]))
        else:
            out.append(unsupported(f"{here}.operator", op, ["Equal", "Exists"]))
        if effect and effect not in _EFFECTS:
            out.append(unsupported(f"{here}.effect", effect, _EFFECTS))
    return out


def scheduling_gates(value: Any, path: str) -> list[Cause]:
    out: list[Cause] = []
    seen: set[str] = set()
    for i, gate in enumerate(listing(value)):
        name = mapping(gate).get("name") or ""
        out += [invalid(f"{path}[{i}]", name, e) for e in names.qualified_name(name)]
        if name in seen:
            out.append(duplicate(f"{path}[{i}]", name))
        seen.add(name)
    return out


def dns_config(spec: dict[str, Any], path: str) -> list[Cause]:
    config = spec.get("dnsConfig")
    if spec.get("dnsPolicy") == "None":
        if config is None:
            return [required(path, "must provide `dnsConfig` when `dnsPolicy` is None")]
        if not listing(mapping(config).get("nameservers")):
            return [required(f"{path}.nameservers", "must provide at least one DNS nameserver when `dnsPolicy` is "
                             "None")]
    if config is None:
        return []
    servers = listing(mapping(config).get("nameservers"))
    out: list[Cause] = []
    if len(servers) > MAX_NAMESERVERS:
        out.append(invalid(f"{path}.nameservers", servers, f"must not have more than {MAX_NAMESERVERS} nameservers"))
    for i, server in enumerate(servers):
        try:
            ipaddress.ip_address(server if isinstance(server, str) else "")
        except ValueError:
            out.append(invalid(f"{path}.nameservers[{i}]", server, "must be a valid IP address, (e.g. 10.9.8.7 or "
                               "2001:db8::ffff)"))
    return out


# --- a pod's update ------------------------------------------------------------------------------------

def gated_update(old: dict[str, Any], new: dict[str, Any]) -> list[Cause]:
    """Munges ``new`` (a copy of the new spec) where a pod's update may change its scheduling fields, as
    ``ValidatePodUpdate`` does before it compares the specs, and returns the causes those changes have:
    gates may only be removed; while the old pod is gated, node selector entries may be added (not changed
    or removed) and a node affinity may be set where the old one had no required terms."""
    out: list[Cause] = []
    old_gates = {mapping(g).get("name") for g in listing(old.get("schedulingGates"))}
    for i, gate in enumerate(listing(new.get("schedulingGates"))):
        name = mapping(gate).get("name") or ""
        if name not in old_gates:
            out.append(forbidden(f"spec.schedulingGates[{i}].name", "only deletion is allowed, but found new "
                                 f"scheduling gate '{name}'"))
    _put(new, "schedulingGates", old.get("schedulingGates"))
    if not old.get("schedulingGates"):
        return out
    old_selector, new_selector = mapping(old.get("nodeSelector")), mapping(new.get("nodeSelector"))
    if new_selector != old_selector:
        if any(new_selector.get(k) != v for k, v in old_selector.items()):
            out.append(invalid("spec.nodeSelector", new_selector, "only additions to spec.nodeSelector are allowed "
                               "(no mutations or deletions)"))
        _put(new, "nodeSelector", old.get("nodeSelector"))
    old_node = mapping(old.get("affinity")).get("nodeAffinity")
    new_node = mapping(new.get("affinity")).get("nodeAffinity")
    if old_node != new_node and mapping(old_node).get("requiredDuringSchedulingIgnoredDuringExecution") is None:
        rest = {k: v for k, v in mapping(new.get("affinity")).items() if k != "nodeAffinity"}
        if old.get("affinity") is None and not rest:
            new.pop("affinity", None)
        else:
            _put(new, "affinity", {**rest, **({"nodeAffinity": old_node} if old_node is not None else {})})
    return out


def _put(spec: dict[str, Any], field: str, value: Any) -> None:
    if value is None:
        spec.pop(field, None)
    else:
        spec[field] = value
