"""Least-privilege RBAC for an operator: permissions → merged PolicyRules → manifests, plus an auditor
that compares the requests an operator really made with what it was granted."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import parse_qs

from kubeloop.client.resource import Resource
from kubeloop.resources.builtin import EVENT, LEASE
from kubeloop.resources.model import CustomResource

__all__ = [
    "AccessRequest", "AuditReport", "Permission", "RbacAudit", "generated_grants", "reconcile_permissions",
    "render_rbac",
    "request_from_http", "rules_for",
    "status_permissions", "watch_permissions", "write_permissions",
]

# Rule verbs are printed in this order (the order people read them in), unknown verbs last.
_VERB_ORDER = ("get", "list", "watch", "create", "update", "patch", "delete", "deletecollection")
READ_VERBS = ("get", "list", "watch")
WRITE_VERBS = ("create", "update", "patch", "delete")


def _verb_key(verb: str) -> tuple[int, str]:
    return (_VERB_ORDER.index(verb) if verb in _VERB_ORDER else len(_VERB_ORDER), verb)


@dataclass(frozen=True)
class Permission:
    """Verbs on one resource (or one subresource of it). ``namespaced`` tells what kind of resource it is;
    ``names`` limits the rule to those objects (``resourceNames``), e.g. the operator's own configurations."""

    group: str
    resource: str
    verbs: frozenset[str]
    subresource: str | None = None
    namespaced: bool = True
    names: tuple[str, ...] = ()

    def __init__(self, group: str, resource: str, verbs: Iterable[str], subresource: str | None = None,
                 namespaced: bool = True, names: Iterable[str] = ()) -> None:
        verbs = frozenset([verbs] if isinstance(verbs, str) else verbs)
        for part in (group, resource, subresource or "", *verbs):
            if "*" in part:
                raise ValueError(f"Permission({group!r}, {resource!r}): wildcards are never generated; "
                                 "name the resources and verbs")
        if not verbs or not resource:
            raise ValueError(f"Permission({group!r}, {resource!r}): needs a resource and at least one verb")
        for name, value in (("group", group), ("resource", resource), ("verbs", verbs),
                            ("subresource", subresource), ("namespaced", namespaced),
                            ("names", tuple(sorted(set(names))))):
            object.__setattr__(self, name, value)

    @property
    def rule_resource(self) -> str:
        """The name RBAC uses: ``deployments`` or ``deployments/status``."""
        return f"{self.resource}/{self.subresource}" if self.subresource else self.resource


def _resource(target: Resource | type[CustomResource]) -> Resource:
    return target.resource() if isinstance(target, type) else target


def watch_permissions(target: Resource | type[CustomResource]) -> Permission:
    """What an informer needs: get, list, watch."""
    r = _resource(target)
    return Permission(r.group, r.plural, READ_VERBS, namespaced=r.namespaced)


def write_permissions(target: Resource | type[CustomResource],
                      verbs: Iterable[str] = WRITE_VERBS) -> Permission:
    r = _resource(target)
    return Permission(r.group, r.plural, verbs, namespaced=r.namespaced)


def status_permissions(target: Resource | type[CustomResource],
                       verbs: Iterable[str] = ("get", "update", "patch")) -> Permission:
    """The status subresource is authorized separately from its object."""
    r = _resource(target)
    return Permission(r.group, r.plural, verbs, subresource="status", namespaced=r.namespaced)


def reconcile_permissions(target: Resource | type[CustomResource]) -> list[Permission]:
    """What a controller of ``target`` usually needs: watch it, update/patch it (finalizers), write status."""
    return [watch_permissions(target), write_permissions(target, ("update", "patch")),
            status_permissions(target)]


def rules_for(permissions: Iterable[Permission]) -> list[dict[str, Any]]:
    """Minimal PolicyRules: verbs merged per (group, resource), then one rule per group and verb set.
    Permissions limited to ``names`` get rules of their own (``resourceNames`` narrows a whole rule)."""
    verbs: dict[tuple[str, str, tuple[str, ...]], set[str]] = {}
    for p in permissions:
        verbs.setdefault((p.group, p.rule_resource, p.names), set()).update(p.verbs)
    rules: dict[tuple[str, tuple[str, ...], tuple[str, ...]], list[str]] = {}
    for (group, resource, names), vs in verbs.items():
        rules.setdefault((group, tuple(sorted(vs, key=_verb_key)), names), []).append(resource)
    out = []
    for (group, rule_verbs, names), resources in sorted(rules.items(),
                                                        key=lambda kv: (kv[0][0], kv[0][2], sorted(kv[1]))):
        rule: dict[str, Any] = {"apiGroups": [group], "resources": sorted(resources), "verbs": list(rule_verbs)}
        if names:
            rule["resourceNames"] = list(names)
        out.append(rule)
    return out


def _meta(name: str, namespace: str | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if namespace is not None:
        meta["namespace"] = namespace
    meta["labels"] = {"app.kubernetes.io/name": name, "app.kubernetes.io/managed-by": "kubeloop"}
    return meta


# Leases in the operator's namespace: leader election reads, creates and renews one; sharding
# (``kubeloop run --shards auto``) also lists the replicas' Leases and deletes its own and expired ones.
LEADER_ELECTION_LEASE_VERBS = ("get", "create", "update")
SHARDING_LEASE_VERBS = (*LEADER_ELECTION_LEASE_VERBS, "list", "delete")


def render_rbac(name: str, namespace: str, cluster_permissions: Iterable[Permission],
                namespaced_permissions: Iterable[Permission] = (), *, leader_election: bool = True,
                events: Literal["namespace", "cluster"] = "namespace",
                shards: bool = False) -> list[dict[str, Any]]:
    """ServiceAccount, ClusterRole(+Binding) for ``cluster_permissions`` and a Role(+Binding) in
    ``namespace`` for ``namespaced_permissions``, leader-election leases and events.

    Events land in the namespace of the object they are about, so an operator that records events on
    the objects it reconciles needs ``events="cluster"``; the default only covers its own namespace.
    ``shards``: the replicas run ``--shards auto`` (instead of leader election): the Lease rule adds
    ``list`` and ``delete``, still only in ``namespace``.
    """
    event_perm = Permission(EVENT.group, EVENT.plural, ("create", "patch"))
    cluster = list(cluster_permissions) + ([event_perm] if events == "cluster" else [])
    local = list(namespaced_permissions) + ([event_perm] if events == "namespace" else [])
    if shards:
        local.append(Permission(LEASE.group, LEASE.plural, SHARDING_LEASE_VERBS))
    elif leader_election:
        local.append(Permission(LEASE.group, LEASE.plural, LEADER_ELECTION_LEASE_VERBS))
    subject = [{"kind": "ServiceAccount", "name": name, "namespace": namespace}]
    objs: list[dict[str, Any]] = [
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": _meta(name, namespace)}]
    if cluster:
        objs += [
            {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": _meta(name),
             "rules": rules_for(cluster)},
            {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
             "metadata": _meta(name),
             "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name},
             "subjects": subject},
        ]
    if local:
        objs += [
            {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": _meta(name, namespace),
             "rules": rules_for(local)},
            {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
             "metadata": _meta(name, namespace),
             "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": name},
             "subjects": subject},
        ]
    return objs


def generated_grants(cluster_permissions: Iterable[Permission], namespaced_permissions: Iterable[Permission],
                     namespace: str | None, *, shards: bool = False) -> Callable[[Any], bool]:
    """Whether the RBAC ``kubeloop generate rbac`` makes of these permissions (events cluster-wide, its
    Role in ``namespace``) allows a request: what a 403 tells its reader (``Forbidden.generated``)."""
    audit = RbacAudit.from_manifests(render_rbac("operator", namespace or "default", cluster_permissions,
                                                 namespaced_permissions, events="cluster", shards=shards))
    audit.namespace = namespace
    return audit.allows


# ---------------------------------------------------------------------------------------------- audit


def _why(verb: str, subresource: str | None) -> str:
    """Why a rule no request names is needed: the admission plugin OwnerReferencesPermissionEnforcement
    authorizes ``update`` on the owner's ``finalizers`` when a write gives a child an ownerReference with
    ``blockOwnerDeletion`` (the client records it beside that write)."""
    if verb == "update" and subresource == "finalizers":
        return " [for children's ownerReferences with blockOwnerDeletion: OwnerReferencesPermissionEnforcement]"
    return ""


@dataclass(frozen=True)
class AccessRequest:
    """One request the operator made, as RBAC sees it (verb, group, resource, scope).

    Not ``kubeloop.Request``, the key a reconciler is handed: this one is an API call, for the audit.

    ``namespaced``: made inside a namespace (a Role can grant it); ``namespace``: which one, if known.
    """

    verb: str
    group: str
    resource: str
    subresource: str | None = None
    namespaced: bool = True
    namespace: str | None = None

    @classmethod
    def of(cls, used: Any) -> AccessRequest:
        """Accept an AccessRequest, a ``(verb, group, resource, subresource, namespaced)`` tuple, or anything with
        those attributes or with ``namespace`` instead of ``namespaced`` (the client's UsedPermission)."""
        if isinstance(used, AccessRequest):
            return used
        if isinstance(used, tuple):
            if not 3 <= len(used) <= 5:
                raise ValueError("expected (verb, group, resource[, subresource[, namespaced]]), "
                                 f"got {used!r}")
            verb, group, resource = used[:3]
            subresource = used[3] if len(used) > 3 else None
            scope = used[4] if len(used) > 4 else True
        else:
            verb, group, resource = used.verb, used.group, used.resource
            subresource = getattr(used, "subresource", None)
            scope = used.namespaced if hasattr(used, "namespaced") else used.namespace
        if isinstance(scope, bool):
            return cls(verb, group, resource, subresource or None, scope)
        return cls(verb, group, resource, subresource or None, scope is not None, scope)

    @property
    def rule_resource(self) -> str:
        return f"{self.resource}/{self.subresource}" if self.subresource else self.resource

    def describe(self) -> str:
        where = f"in namespace {self.namespace}" if self.namespace else (
            "in a namespace" if self.namespaced else "cluster-wide")
        return (f"{self.verb} {self.group + '/' if self.group else ''}{self.rule_resource} ({where})"
                + _why(self.verb, self.subresource))

    def sort_key(self) -> tuple[str, str, str, str, bool, str]:
        return (self.group, self.resource, self.subresource or "", self.verb, self.namespaced,
                self.namespace or "")


def request_from_http(method: str, path: str, query: str | Mapping[str, Any] = "") -> AccessRequest:
    """Map an HTTP request on the API to its RBAC verb and resource.

    ``GET /apis/apps/v1/namespaces/x/deployments?watch=1`` → ``watch apps/deployments (in a namespace)``.
    """
    params = parse_qs(query) if isinstance(query, str) else {k: [str(v)] for k, v in query.items()}
    parts = [p for p in path.split("?", 1)[0].split("/") if p]
    if parts[:1] == ["api"] and len(parts) >= 2:
        group, rest = "", parts[2:]
    elif parts[:1] == ["apis"] and len(parts) >= 3:
        group, rest = parts[1], parts[3:]
    else:
        raise ValueError(f"not a resource path: {path}")
    namespace = None
    # /namespaces/{ns}/{resource}/... is namespaced, except a namespace's own subresources.
    if len(rest) >= 3 and rest[0] == "namespaces" and rest[2] not in ("status", "finalize"):
        namespace, rest = rest[1], rest[2:]
    if not rest:
        raise ValueError(f"not a resource path: {path}")
    resource, name, sub = rest[0], rest[1] if len(rest) > 1 else None, rest[2] if len(rest) > 2 else None
    method = method.upper()
    if method == "GET":
        if params.get("watch", ["false"])[0].lower() in ("1", "true"):
            verb = "watch"
        else:
            verb = "get" if name else "list"
    else:
        verb = {"POST": "create", "PUT": "update", "PATCH": "patch",
                "DELETE": "delete" if name else "deletecollection"}.get(method, method.lower())
    return AccessRequest(verb, group, resource, sub, namespace is not None, namespace)


@dataclass(frozen=True)
class AuditReport:
    """``missing`` breaks the operator (``ok`` is False); ``unused`` only widens its privileges."""

    missing: tuple[AccessRequest, ...] = ()
    unused: tuple[Permission, ...] = ()

    @property
    def ok(self) -> bool:
        return not self.missing

    @property
    def message(self) -> str:
        lines = [f"RBAC audit: {len(self.missing)} missing, {len(self.unused)} unused"]
        if self.missing:
            lines.append("missing (used but not granted):")
            lines += [f"  - {r.describe()}" for r in self.missing]
        if self.unused:
            lines.append("unused (granted but never used):")
            lines += [f"  - {' '.join(sorted(p.verbs, key=_verb_key))} "
                      f"{p.group + '/' if p.group else ''}{p.rule_resource}"
                      + "".join(_why(v, p.subresource) for v in p.verbs) for p in self.unused]
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.message


@dataclass
class RbacAudit:
    """Compares used requests with rules bound cluster-wide (ClusterRole) and in a namespace (Role).

    Role rules only cover namespaced requests, and only in ``namespace`` when both it and the request's
    namespace are known. Wildcard rules (hand-written ones) match anything and are never reported unused.
    """

    cluster_rules: list[Mapping[str, Any]] = field(default_factory=list)
    namespaced_rules: list[Mapping[str, Any]] = field(default_factory=list)
    namespace: str | None = None

    @classmethod
    def from_manifests(cls, objs: Iterable[Mapping[str, Any]]) -> RbacAudit:
        """Collect the rules of the ClusterRoles and Roles among ``objs`` (e.g. ``render_rbac``'s output)."""
        audit = cls()
        for obj in objs:
            if obj.get("kind") == "ClusterRole":
                audit.cluster_rules += obj.get("rules", [])
            elif obj.get("kind") == "Role":
                audit.namespaced_rules += obj.get("rules", [])
                audit.namespace = obj.get("metadata", {}).get("namespace", audit.namespace)
        return audit

    @staticmethod
    def _matches(rule: Mapping[str, Any], r: AccessRequest) -> bool:
        resources = rule.get("resources", ())
        return (bool({r.group, "*"} & set(rule.get("apiGroups", ())))
                and bool({r.verb, "*"} & set(rule.get("verbs", ())))
                and (r.rule_resource in resources or "*" in resources
                     or (r.subresource is not None and f"*/{r.subresource}" in resources)))

    def _rules_for(self, r: AccessRequest) -> list[Mapping[str, Any]]:
        local = r.namespaced and (self.namespace is None or r.namespace is None
                                  or r.namespace == self.namespace)
        return self.cluster_rules + (self.namespaced_rules if local else [])

    def allows(self, used: Any) -> bool:
        """Whether these rules allow one request (an AccessRequest or what ``AccessRequest.of`` takes)."""
        r = AccessRequest.of(used)
        return any(self._matches(rule, r) for rule in self._rules_for(r))

    def check(self, used: Iterable[Any]) -> AuditReport:
        """``used``: Requests, ``(verb, group, resource, subresource, namespaced)`` tuples, or the
        client's UsedPermission records."""
        requests = sorted({AccessRequest.of(u) for u in used}, key=AccessRequest.sort_key)
        missing = [r for r in requests if not self.allows(r)]
        hit = {(r.group, r.rule_resource, r.verb) for r in requests}
        granted: dict[tuple[str, str], set[str]] = {}
        for rule in self.cluster_rules + self.namespaced_rules:
            for group in rule.get("apiGroups", ()):
                for res in rule.get("resources", ()):
                    for verb in rule.get("verbs", ()):
                        if "*" not in group + res + verb and (group, res, verb) not in hit:
                            granted.setdefault((group, res), set()).add(verb)
        unused = [Permission(g, res.partition("/")[0], vs, res.partition("/")[2] or None)
                  for (g, res), vs in sorted(granted.items())]
        return AuditReport(tuple(missing), tuple(unused))
