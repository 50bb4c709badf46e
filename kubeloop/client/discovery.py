"""Discovery: which resources the API server serves, looked up by any name kubectl accepts."""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

from kubeloop.client.errors import ApiError, NotFound
from kubeloop.client.resource import Resource, split_api_version

if TYPE_CHECKING:
    from kubeloop.client.transport import Transport

log = logging.getLogger("kubeloop.client")

_AGGREGATED = ("application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,"
               "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json")


class Registry:
    """Resources by group/version/kind and by name. Refreshed when a name is not found, so a CRD
    installed after start just works."""

    def __init__(self, transport: Transport) -> None:
        self._transport = transport
        self._resources: list[Resource] = []  # preferred versions first
        self._lock = asyncio.Lock()
        self._loaded = False

    async def refresh(self) -> None:
        async with self._lock:
            found: list[Resource] = []
            for prefix in ("/api", "/apis"):
                doc = await self._transport.request("GET", prefix, accept=_AGGREGATED)
                if isinstance(doc, dict) and doc.get("kind") == "APIGroupDiscoveryList":
                    found += _from_aggregated(doc, core=prefix == "/api")
                else:
                    found += await self._legacy(prefix, doc)
            self._resources = found
            self._loaded = True

    async def _legacy(self, prefix: str, doc: dict[str, Any]) -> list[Resource]:
        """Pre-1.27 servers (or aggregated discovery off): one request per group version."""
        if prefix == "/api":
            gvs = [("", v, True) for v in doc.get("versions", [])]
        else:
            gvs = []
            for group in doc.get("groups", []):
                preferred = group.get("preferredVersion", {}).get("version")
                for v in group.get("versions", []):
                    gvs.append((group["name"], v["version"], v["version"] == preferred))
        gvs.sort(key=lambda g: not g[2])
        out: list[Resource] = []
        for group, version, _ in gvs:
            path = f"/apis/{group}/{version}" if group else f"/api/{version}"
            try:
                listing = await self._transport.request("GET", path)
            except ApiError as exc:  # an unavailable aggregated API must not break discovery
                log.warning("discovery of %s failed: %s", path, exc)
                continue
            subs: dict[str, set[str]] = {}
            for r in listing.get("resources", []):
                if "/" in r["name"]:
                    main, sub = r["name"].split("/", 1)
                    subs.setdefault(main, set()).add(sub)
            for r in listing.get("resources", []):
                if "/" not in r["name"]:
                    out.append(Resource(group, version, r["name"], r["kind"], r.get("namespaced", True),
                                        frozenset(r.get("verbs", [])), frozenset(subs.get(r["name"], ())),
                                        tuple(r.get("shortNames", [])), r.get("singularName", "")))
        return out

    async def resolve(self, name: str) -> Resource:
        """Finds a resource by ``plural``, ``Kind``, ``singular``, short name, ``plural.group``,
        ``Kind.group`` or ``group/version/Kind``; preferred versions win."""
        if not self._loaded:
            await self.refresh()
        found = self._match(name)
        if found is None:
            await self.refresh()
            found = self._match(name)
        if found is None:
            raise NotFound(404, "NotFound", f"the server doesn't have a resource type {name!r}")
        return found

    async def for_kind(self, api_version: str, kind: str) -> Resource:
        return await self.resolve(f"{api_version}/{kind}")

    def _match(self, name: str) -> Resource | None:
        if name.count("/") >= 1:
            api_version, _, kind = name.rpartition("/")
            group, version = split_api_version(api_version)
            for r in self._resources:
                if r.group == group and r.version == version and kind in (r.kind, r.plural):
                    return r
            return None
        base, _, group = name.partition(".")
        low = base.lower()
        for r in self._resources:
            if group and r.group != group:
                continue
            if low in (r.plural, r.singular, r.kind.lower()) or low in r.short_names:
                return r
        return None


def _from_aggregated(doc: dict[str, Any], core: bool) -> list[Resource]:
    out: list[Resource] = []
    for group in doc.get("items", []):
        gname = "" if core else group.get("metadata", {}).get("name", "")
        for version in group.get("versions", []):  # ordered by preference
            for r in version.get("resources", []):
                kind = (r.get("responseKind") or {}).get("kind", "")
                subs = frozenset(s["subresource"] for s in r.get("subresources", []) or [])
                out.append(Resource(gname, version["version"], r["resource"], kind,
                                    r.get("scope") == "Namespaced", frozenset(r.get("verbs", [])), subs,
                                    tuple(r.get("shortNames", [])), r.get("singularResource", "")))
    return out
