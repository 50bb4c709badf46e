"""What the fake serves: the built-in kinds kubeloop's operators use, plus registered CRDs, and the
discovery documents (/api, /apis, /api/v1, /apis/<group>/<version>) that describe them.

A ``Kind`` is stored under (group, plural) whatever version is asked for: CRD versions are served
with conversion strategy None (only ``apiVersion`` changes), as the real server does for such CRDs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

CR_VERBS = ["delete", "deletecollection", "get", "list", "patch", "create", "update", "watch"]  # (sic)
VERBS = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]


@dataclass
class Kind:
    """One served resource. ``generation``: the strategy bumps ``metadata.generation`` on spec changes;
    ``status``: a status subresource exists (the main resource ignores status writes and vice versa)."""

    group: str
    versions: list[str]
    plural: str
    kind: str
    namespaced: bool = True
    short_names: list[str] = field(default_factory=list)
    status: bool = False
    scale: bool = False
    generation: bool = False
    crd: dict[str, Any] | None = None  # the CRD body for custom resources
    # The resourceVersion its watch cache started at (server start; a CRD's registration): a watch from
    # an older one is 410 Expired, as on a real server whose cache does not reach back that far.
    watch_from: int = 0

    @property
    def singular(self) -> str:
        return self.kind.lower()

    @property
    def key(self) -> tuple[str, str]:
        return (self.group, self.plural)

    def api_version(self, version: str | None = None) -> str:
        version = version or self.versions[0]
        return f"{self.group}/{version}" if self.group else version

    def storage_schema(self) -> dict[str, Any] | None:
        """The openAPIV3Schema of the CRD's storage version (None for built-ins)."""
        for v in (self.crd or {}).get("spec", {}).get("versions", []):
            if v.get("storage"):
                return (v.get("schema") or {}).get("openAPIV3Schema")
        return None

    def has_subresource(self, sub: str, version: str) -> bool:
        """Whether ``version`` serves the status or scale subresource (a CRD's versions each say)."""
        if self.crd is None:
            return bool(getattr(self, sub))
        for v in self.crd.get("spec", {}).get("versions", []):
            if v.get("name") == version:
                return sub in (v.get("subresources") or {})
        return False

    def schema(self, version: str) -> dict[str, Any] | None:
        """The CRD's openAPIV3Schema for ``version`` (None for built-ins)."""
        for v in (self.crd or {}).get("spec", {}).get("versions", []):
            if v.get("name") == version:
                return (v.get("schema") or {}).get("openAPIV3Schema")
        return None


def _k(group: str, version: str, plural: str, kind: str, **kw: Any) -> Kind:
    return Kind(group, [version], plural, kind, **kw)


BUILTINS: list[Kind] = [
    _k("", "v1", "namespaces", "Namespace", namespaced=False, short_names=["ns"], status=True),
    _k("", "v1", "configmaps", "ConfigMap", short_names=["cm"]),
    _k("", "v1", "secrets", "Secret"),
    _k("", "v1", "pods", "Pod", short_names=["po"], status=True, generation=True),
    _k("", "v1", "services", "Service", short_names=["svc"], status=True),
    _k("", "v1", "serviceaccounts", "ServiceAccount", short_names=["sa"]),
    _k("", "v1", "events", "Event", short_names=["ev"]),
    _k("", "v1", "limitranges", "LimitRange", short_names=["limits"]),
    _k("", "v1", "resourcequotas", "ResourceQuota", short_names=["quota"], status=True),
    _k("apps", "v1", "deployments", "Deployment", short_names=["deploy"], status=True, scale=True,
       generation=True),
    _k("apps", "v1", "replicasets", "ReplicaSet", short_names=["rs"], status=True, scale=True, generation=True),
    _k("apps", "v1", "statefulsets", "StatefulSet", short_names=["sts"], status=True, scale=True,
       generation=True),
    _k("apps", "v1", "daemonsets", "DaemonSet", short_names=["ds"], status=True, generation=True),
    _k("batch", "v1", "jobs", "Job", status=True, generation=True),
    _k("batch", "v1", "cronjobs", "CronJob", short_names=["cj"], status=True, generation=True),
    _k("autoscaling", "v2", "horizontalpodautoscalers", "HorizontalPodAutoscaler", short_names=["hpa"],
       status=True),
    _k("coordination.k8s.io", "v1", "leases", "Lease"),
    _k("events.k8s.io", "v1", "events", "Event", short_names=["ev"]),
    _k("apiextensions.k8s.io", "v1", "customresourcedefinitions", "CustomResourceDefinition",
       namespaced=False, short_names=["crd", "crds"], status=True, generation=True),
]


class Kinds:
    """The served kinds, looked up by (group, version, plural)."""

    def __init__(self) -> None:
        self._by_key: dict[tuple[str, str], Kind] = {k.key: k for k in BUILTINS}

    def get(self, group: str, version: str, plural: str) -> Kind | None:
        kind = self._by_key.get((group, plural))
        return kind if kind is not None and version in kind.versions else None

    def by_key(self, key: tuple[str, str]) -> Kind:
        return self._by_key[key]

    def by_kind(self, api_version: str, kind: str) -> Kind | None:
        group, _, version = api_version.rpartition("/")
        for k in self._by_key.values():
            if k.group == group and k.kind == kind and version in k.versions:
                return k
        return None

    def all(self) -> list[Kind]:
        return list(self._by_key.values())

    def add(self, kind: Kind) -> None:
        self._by_key[kind.key] = kind

    def remove(self, key: tuple[str, str]) -> None:
        self._by_key.pop(key, None)

    def group_served(self, group: str, version: str) -> bool:
        return any(k.group == group and version in k.versions for k in self._by_key.values())

    # --- discovery documents ------------------------------------------------------------------------

    def api_versions(self, address: str = "127.0.0.1") -> dict[str, Any]:
        return {"kind": "APIVersions", "versions": ["v1"], "serverAddressByClientCIDRs": [
            {"clientCIDR": "0.0.0.0/0", "serverAddress": address}]}

    def api_groups(self) -> dict[str, Any]:
        groups: dict[str, list[str]] = {}
        for k in self._by_key.values():
            if k.group:
                for v in k.versions:
                    if v not in groups.setdefault(k.group, []):
                        groups[k.group].append(v)
        items = [_group(name, versions) for name, versions in groups.items()]
        return {"kind": "APIGroupList", "apiVersion": "v1", "groups": items}

    def api_group(self, group: str) -> dict[str, Any] | None:
        """``/apis/<group>``: the group's versions, the preferred first; None when it serves none."""
        versions: list[str] = []
        for k in self._by_key.values():
            versions += [v for v in k.versions if k.group == group and v not in versions]
        return {"kind": "APIGroup", "apiVersion": "v1", **_group(group, versions)} if group and versions else None

    def api_resources(self, group: str, version: str) -> dict[str, Any]:
        resources: list[dict[str, Any]] = []
        for k in self._by_key.values():
            if k.group != group or version not in k.versions:
                continue
            verbs = CR_VERBS if k.crd is not None else [
                v for v in VERBS if not (k.key == ("", "namespaces") and v == "deletecollection")]
            entry: dict[str, Any] = {"name": k.plural, "singularName": k.singular, "namespaced": k.namespaced,
                                     "kind": k.kind, "verbs": verbs}
            if k.short_names:
                entry["shortNames"] = k.short_names
            resources.append(entry)
            for sub, kind, verbs in (("status", k.kind, ["get", "patch", "update"]),
                                     ("scale", "Scale", ["get", "patch", "update"])):
                if k.has_subresource(sub, version):
                    entry = {"name": f"{k.plural}/{sub}", "singularName": "", "namespaced": k.namespaced,
                             "kind": kind, "verbs": verbs}
                    if sub == "scale":
                        entry.update(group="autoscaling", version="v1")
                    resources.append(entry)
            if k.key == ("", "pods"):  # (a scheduler's POST: see binding.py)
                resources += [{"name": "bindings", "singularName": "binding", "namespaced": True, "kind": "Binding",
                               "verbs": ["create"]},
                              {"name": "pods/binding", "singularName": "", "namespaced": True, "kind": "Binding",
                               "verbs": ["create"]}]
            if k.key == ("", "namespaces"):  # (PUT only: how spec.finalizers change)
                resources.append({"name": "namespaces/finalize", "singularName": "", "namespaced": False,
                                  "kind": "Namespace", "verbs": ["update"]})
        if not any(k.group == group and k.crd is None for k in self._by_key.values()):
            # a group of CRDs: in their order, each resource then its status and scale (the CRD handler's)
            resources.sort(key=lambda r: r["name"].split("/")[0])
        else:
            resources.sort(key=lambda r: r["name"])
        if group:  # (the real server's core list has no apiVersion, the groups' lists do)
            return {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": f"{group}/{version}",
                    "resources": resources}
        return {"kind": "APIResourceList", "groupVersion": version, "resources": resources}


def _group(name: str, versions: list[str]) -> dict[str, Any]:
    ordered = sorted(versions, key=version_priority)
    gvs = [{"groupVersion": f"{name}/{v}", "version": v} for v in ordered]
    return {"name": name, "versions": gvs, "preferredVersion": gvs[0]}


def version_priority(version: str) -> tuple[int, int, int, str]:
    """Kubernetes' version order (apimachinery's CompareKubeAwareVersionStrings), as a sort key: GA before
    beta before alpha, higher major then higher minor first, other strings last in alphabetical order."""
    m = re.fullmatch(r"v([1-9][0-9]*)(?:(alpha|beta)([1-9][0-9]*))?", version)
    if not m:
        return (3, 0, 0, version)
    stage = {None: 0, "beta": 1, "alpha": 2}[m.group(2)]
    return (stage, -int(m.group(1)), -int(m.group(3) or 0), "")
