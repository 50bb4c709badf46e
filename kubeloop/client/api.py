"""The Kubernetes API verbs on plain dicts: get, list, watch, create, replace, patch, apply, delete."""

from __future__ import annotations

import builtins
import logging
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from kubeloop.client.config import Config
from kubeloop.client.discovery import Registry
from kubeloop.client.errors import ApiError, Forbidden, Rule
from kubeloop.client.resource import Resource
from kubeloop.client.transport import BURST, QPS, WATCH_INACTIVITY_TIMEOUT, Transport

log = logging.getLogger("kubeloop.client")

# An API object as the client returns it and the cache holds it: a plain dict, decoded once by orjson.
# The hot path stays on dicts; typed models are built at the user's edge (see ``kubeloop.resources``).
Obj = dict[str, Any]
PatchType = Literal["merge", "json", "strategic", "apply"]
_PATCH_CONTENT = {
    "merge": "application/merge-patch+json",
    "json": "application/json-patch+json",
    "strategic": "application/strategic-merge-patch+json",
    "apply": "application/apply-patch+yaml",  # JSON is YAML
}


class HasResource(Protocol):
    @classmethod
    def resource(cls) -> Resource: ...


ResourceRef = str | Resource | type[HasResource]


@dataclass(frozen=True, slots=True)
class UsedPermission:
    """One kind of request the client made, as RBAC sees it (``namespace`` None = cluster-wide)."""

    verb: str
    group: str
    resource: str
    subresource: str | None
    namespace: str | None


class Client:
    """An async Kubernetes client. Cheap to share: one connection pool, one discovery registry.

    ``record_permissions=True`` makes it remember every (verb, group, resource, subresource, scope) it
    used, which the RBAC audit compares with a generated role.
    """

    def __init__(self, config: Config, *, qps: float = QPS, burst: int = BURST,
                 field_manager: str = "kubeloop", record_permissions: bool = False) -> None:
        self.config = config
        self.transport = Transport(config, qps=qps, burst=burst)
        self.registry = Registry(self.transport)
        self.field_manager = field_manager
        self.used_permissions: set[UsedPermission] | None = set() if record_permissions else None
        # Whether the operator's generated RBAC has a rule (set by the manager running an operator), so
        # that a 403 says whether regenerating the RBAC helps or the operator must declare more.
        self.generated_rbac: Callable[[Rule], bool] | None = None

    @classmethod
    async def load(cls, kubeconfig: str | None = None, context: str | None = None, **kw: Any) -> Client:
        """kubectl's order: explicit kubeconfig, $KUBECONFIG or ~/.kube/config, then in-cluster."""
        return cls(Config.load(kubeconfig, context), **kw)

    @classmethod
    async def from_kubeconfig(cls, path: str | None = None, context: str | None = None, **kw: Any) -> Client:
        """A client for a kubeconfig file (default: $KUBECONFIG, else ~/.kube/config) and context."""
        return cls(Config.from_kubeconfig(path, context), **kw)

    async def close(self) -> None:
        """Closes the connection pool; ``async with`` a client does it too."""
        await self.transport.close()

    async def __aenter__(self) -> Client:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    @property
    def default_namespace(self) -> str:
        """The kubeconfig context's namespace (in a pod: its own), used when a call names none."""
        return self.config.namespace

    async def resource(self, ref: ResourceRef) -> Resource:
        """The ``Resource`` for a reference: a Resource as is, a model's, or a string ("configmaps",
        "deployments.apps", "apps/v1/Deployment") resolved through discovery (``NotFound`` if not served).
        """
        if isinstance(ref, Resource):
            return ref
        if isinstance(ref, str):
            return await self.registry.resolve(ref)
        return ref.resource()

    async def resource_of(self, body: dict[str, Any]) -> Resource:
        """The ``Resource`` of an object body, from its ``apiVersion`` and ``kind``."""
        return await self.registry.resolve(f"{body['apiVersion']}/{body['kind']}")

    # --- reads -------------------------------------------------------------------------------------

    async def get(self, ref: ResourceRef, name: str, namespace: str | None = None, *,
                  subresource: str | None = None) -> dict[str, Any]:
        """GETs one object (or its ``subresource``); ``NotFound`` if it does not exist."""
        res = await self.resource(ref)
        ns = self._ns(res, namespace)
        self._record("get", res, subresource, ns)
        obj: Obj = await self.transport.request("GET", res.path(ns, name, subresource), verb="GET")
        return obj

    async def list_pages(self, ref: ResourceRef, namespace: str | None = None, *,
                         label_selector: str | None = None, field_selector: str | None = None,
                         limit: int | None = 500, resource_version: str | None = None,
                         metadata_only: bool = False, shard_selector: str | None = None,
                         ) -> AsyncIterator[dict[str, Any]]:
        """Yields the pages of a paginated list (``limit``/``continue``). ``shard_selector``: KEP-5866's
        ``shardSelector`` (kubeloop/sharding/hashing.py), sent with every page."""
        res = await self.resource(ref)
        self._record("list", res, None, namespace if res.namespaced else None)
        params: dict[str, Any] = {"labelSelector": label_selector, "fieldSelector": field_selector,
                                  "limit": limit, "resourceVersion": resource_version,
                                  "shardSelector": shard_selector}
        accept = _METADATA_ACCEPT if metadata_only else "application/json"
        while True:
            page = await self.transport.request("GET", res.path(namespace), params=params, verb="LIST",
                                                accept=accept)
            yield page
            token = page.get("metadata", {}).get("continue")
            if not token:
                return
            params = {"labelSelector": label_selector, "fieldSelector": field_selector, "limit": limit,
                      "continue": token, "shardSelector": shard_selector}

    async def list(self, ref: ResourceRef, namespace: str | None = None, **kw: Any) -> dict[str, Any]:
        """All pages merged into one list object (``items`` and the last page's ``metadata``).
        ``namespace=None`` lists across all namespaces."""
        items: list[dict[str, Any]] = []
        page: dict[str, Any] = {}
        async for page in self.list_pages(ref, namespace, **kw):
            items.extend(page.get("items") or [])
        return {**page, "items": items}

    async def watch(self, ref: ResourceRef, namespace: str | None = None, *,
                    resource_version: str | None = None, label_selector: str | None = None,
                    field_selector: str | None = None, timeout_seconds: int | None = None,
                    allow_bookmarks: bool = True, read_timeout: float = WATCH_INACTIVITY_TIMEOUT,
                    metadata_only: bool = False, send_initial_events: bool = False,
                    shard_selector: str | None = None) -> AsyncIterator[dict[str, Any]]:
        """Yields watch events (``{"type": ..., "object": ...}``) until the server closes the stream.

        ``send_initial_events``: a streaming list — the stream starts with an ADDED event per existing
        object, then a bookmark annotated ``k8s.io/initial-events-end`` (Kubernetes ≥ 1.27 with the
        WatchList feature, on by default from 1.34)."""
        res = await self.resource(ref)
        ns = namespace if res.namespaced else None
        self._record("watch", res, None, ns)
        if send_initial_events:
            self._record("list", res, None, ns)  # it is a list as much as a watch
        params = {"watch": True, "resourceVersion": resource_version, "labelSelector": label_selector,
                  "fieldSelector": field_selector, "timeoutSeconds": timeout_seconds,
                  "allowWatchBookmarks": allow_bookmarks or send_initial_events,
                  "sendInitialEvents": send_initial_events,
                  "resourceVersionMatch": "NotOlderThan" if send_initial_events else None,
                  "shardSelector": shard_selector}
        accept = _METADATA_WATCH_ACCEPT if metadata_only else "application/json"
        async for event in self.transport.stream(res.path(namespace), params, read_timeout=read_timeout,
                                                 accept=accept):
            yield event

    # --- writes ------------------------------------------------------------------------------------

    async def create(self, body: dict[str, Any], namespace: str | None = None, *,
                     resource: ResourceRef | None = None, subresource: str | None = None,
                     name: str | None = None, dry_run: bool = False,
                     field_validation: str | None = None) -> dict[str, Any]:
        """POSTs ``body`` (its namespace from ``namespace`` or its metadata); ``AlreadyExists`` if taken."""
        res = await (self.resource(resource) if resource else self.resource_of(body))
        ns = self._ns(res, namespace or body.get("metadata", {}).get("namespace"))
        self._record("create", res, subresource, ns)
        if self.used_permissions is not None:
            await self._record_owners(body, ns)
        path = res.path(ns, name, subresource) if subresource else res.path(ns)
        try:
            obj: Obj = await self.transport.request("POST", path, body=body, params=_write_params(
                dry_run, field_validation, None, None), verb="POST")
            return obj
        except Forbidden as exc:
            raise await self._explained(exc, body, ns) from None

    async def replace(self, body: dict[str, Any], *, resource: ResourceRef | None = None,
                      subresource: str | None = None, dry_run: bool = False,
                      field_validation: str | None = None) -> dict[str, Any]:
        """PUT; the body's ``metadata.resourceVersion`` makes it conditional (409 Conflict if stale)."""
        res = await (self.resource(resource) if resource else self.resource_of(body))
        meta = body["metadata"]
        ns = self._ns(res, meta.get("namespace"))
        self._record("update", res, subresource, ns)
        if self.used_permissions is not None:
            await self._record_owners(body, ns)
        try:
            obj: Obj = await self.transport.request("PUT", res.path(ns, meta["name"], subresource), body=body,
                                                    params=_write_params(dry_run, field_validation, None, None),
                                                    verb="PUT")
            return obj
        except Forbidden as exc:
            raise await self._explained(exc, body, ns) from None

    async def patch(self, ref: ResourceRef, name: str, patch: Any, namespace: str | None = None, *,
                    type: PatchType = "merge", subresource: str | None = None,
                    field_manager: str | None = None, force: bool = False, dry_run: bool = False,
                    field_validation: str | None = None) -> dict[str, Any]:
        """PATCHes an object with ``type`` "merge", "json" (a list of operations), "strategic" or
        "apply" (server-side apply, with ``field_manager`` and ``force``).
        """
        res = await self.resource(ref)
        ns = self._ns(res, namespace)
        self._record("patch", res, subresource, ns)
        if type == "apply" and not subresource:
            self._record("create", res, None, ns)  # apply creates a missing object: RBAC checks "create"
        if self.used_permissions is not None:
            await self._record_owners(patch, ns)
        manager = field_manager or (self.field_manager if type == "apply" else None)
        try:
            obj: Obj = await self.transport.request(
                "PATCH", res.path(ns, name, subresource), body=patch, content_type=_PATCH_CONTENT[type],
                params=_write_params(dry_run, field_validation, manager, force if type == "apply" else None),
                verb="PATCH")
            return obj
        except Forbidden as exc:
            raise await self._explained(exc, patch, ns) from None

    async def apply(self, body: dict[str, Any], *, field_manager: str | None = None, force: bool = True,
                    subresource: str | None = None, dry_run: bool = False,
                    resource: ResourceRef | None = None) -> dict[str, Any]:
        """Server-side apply of a (partial) object: fields this manager set before and omits now are
        removed; fields of other managers are left alone (``force`` takes over conflicting ones)."""
        res = await (self.resource(resource) if resource else self.resource_of(body))
        meta = body["metadata"]
        return await self.patch(res, meta["name"], body, meta.get("namespace"), type="apply",
                                subresource=subresource, field_manager=field_manager, force=force,
                                dry_run=dry_run)

    async def delete(self, ref: ResourceRef, name: str, namespace: str | None = None, *,
                     propagation_policy: str | None = None, grace_period_seconds: int | None = None,
                     uid: str | None = None, resource_version: str | None = None,
                     dry_run: bool = False) -> dict[str, Any]:
        """Deletes one object. ``uid``/``resource_version`` are preconditions: the delete fails with
        409 Conflict instead of removing a different or changed object of the same name."""
        res = await self.resource(ref)
        ns = self._ns(res, namespace)
        self._record("delete", res, None, ns)
        obj: Obj = await self.transport.request("DELETE", res.path(ns, name), body=_delete_options(
            propagation_policy, grace_period_seconds, uid, resource_version, dry_run), verb="DELETE")
        return obj

    async def delete_collection(self, ref: ResourceRef, namespace: str | None = None, *,
                                label_selector: str | None = None, field_selector: str | None = None,
                                propagation_policy: str | None = None, dry_run: bool = False) -> Obj:
        """Deletes the objects matching the selectors in one request."""
        res = await self.resource(ref)
        self._record("deletecollection", res, None, namespace)
        obj: Obj = await self.transport.request(
            "DELETE", res.path(namespace), params={"labelSelector": label_selector,
                                                   "fieldSelector": field_selector},
            body=_delete_options(propagation_policy, None, None, None, dry_run), verb="DELETECOLLECTION")
        return obj

    async def patch_status(self, ref: ResourceRef, name: str, status: dict[str, Any],
                           namespace: str | None = None) -> dict[str, Any]:
        """Merge-patches the status subresource (never bumps ``metadata.generation``)."""
        return await self.patch(ref, name, {"status": status}, namespace, subresource="status")

    # --- helpers -----------------------------------------------------------------------------------

    def _ns(self, res: Resource, namespace: str | None) -> str | None:
        if not res.namespaced:
            return None
        return namespace or self.config.namespace

    def _record(self, verb: str, res: Resource, subresource: str | None, namespace: str | None) -> None:
        if self.used_permissions is not None:
            self.used_permissions.add(UsedPermission(verb, res.group, res.plural, subresource, namespace))

    async def _owner_rules(self, body: Any, namespace: str | None) -> builtins.list[Rule]:
        """The rules an API server with the OwnerReferencesPermissionEnforcement admission plugin checks
        for this write: ``update`` on ``<owner>/finalizers`` of every ownerReference that sets
        ``blockOwnerDeletion`` (in the child's namespace when the owner is namespaced)."""
        rules = []
        for ref in _blocking_owner_refs(body):
            try:
                owner = await self.registry.for_kind(ref.get("apiVersion", ""), ref.get("kind", ""))
            except (ApiError, OSError, ValueError):
                continue  # an owner kind the server does not serve: the write fails on its own
            rules.append(Rule("update", owner.group, owner.plural, "finalizers",
                              namespace if owner.namespaced else None))
        return rules

    async def _record_owners(self, body: Any, namespace: str | None) -> None:
        """The admission plugin's check is a request of its own as far as RBAC goes: the audit sees it."""
        assert self.used_permissions is not None
        for r in await self._owner_rules(body, namespace):
            self.used_permissions.add(UsedPermission(r.verb, r.group, r.resource, r.subresource, r.namespace))

    async def _explained(self, exc: Forbidden, body: Any, namespace: str | None) -> Forbidden:
        """Names the rule an ownerReference refusal is about (the API server's message does not) and
        whether the operator's generated RBAC has the rule."""
        if exc.rule is None and "blockOwnerDeletion" in exc.message:
            rules = await self._owner_rules(body, namespace)
            if rules:
                exc.rule = rules[0]
        if exc.rule is not None and self.generated_rbac is not None:
            exc.generated = self.generated_rbac(exc.rule)
        return exc


_METADATA_ACCEPT = ("application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io,"
                    "application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io,application/json")
# A watch streams single objects: asked for the List form first, the API server sends an empty stream.
_METADATA_WATCH_ACCEPT = "application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io,application/json"


def _blocking_owner_refs(body: Any) -> list[dict[str, Any]]:
    """The ownerReferences with ``blockOwnerDeletion: true`` in an object, a merge/apply patch, or the
    values of a JSON patch's operations."""
    if isinstance(body, list):  # a JSON patch: values added at /metadata/ownerReferences[/-]
        found: list[dict[str, Any]] = []
        for op in body:
            if isinstance(op, dict) and str(op.get("path", "")).startswith("/metadata/ownerReferences"):
                value = op.get("value")
                found += [r for r in (value if isinstance(value, list) else [value])
                          if isinstance(r, dict) and r.get("blockOwnerDeletion") is True]
        return found
    if not isinstance(body, dict):
        return []
    refs = (body.get("metadata") or {}).get("ownerReferences") or ()
    return [r for r in refs if isinstance(r, dict) and r.get("blockOwnerDeletion") is True]


def _write_params(dry_run: bool, field_validation: str | None, field_manager: str | None,
                  force: bool | None) -> dict[str, Any]:
    return {"dryRun": "All" if dry_run else None, "fieldValidation": field_validation,
            "fieldManager": field_manager, "force": force}


def _delete_options(propagation: str | None, grace: int | None, uid: str | None, rv: str | None,
                    dry_run: bool) -> dict[str, Any] | None:
    opts: dict[str, Any] = {"kind": "DeleteOptions", "apiVersion": "v1"}
    if propagation:
        opts["propagationPolicy"] = propagation
    if grace is not None:
        opts["gracePeriodSeconds"] = grace
    if uid or rv:
        opts["preconditions"] = {k: v for k, v in (("uid", uid), ("resourceVersion", rv)) if v}
    if dry_run:
        opts["dryRun"] = ["All"]
    return opts if len(opts) > 2 else None
