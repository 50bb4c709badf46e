"""HTTP: URL → (kind, namespace, name, subresource) → verb, and the answers' shapes (lists, Status,
PartialObjectMetadata). Anything not served is a 501 naming what was asked."""

from __future__ import annotations

import asyncio
import copy
import json
from dataclasses import dataclass
from typing import Any

import orjson
import yaml
from aiohttp import web

from kubeloop.testing.apiserver import binding, crds, errors, listopts, objects, scale, schema, selectors, tokens, watch
from kubeloop.testing.apiserver import strict as checks
from kubeloop.testing.apiserver.bodytype import real_resources
from kubeloop.testing.apiserver.kinds import Kind, Kinds
from kubeloop.testing.apiserver.patches import APPLY
from kubeloop.testing.apiserver.store import Obj
from kubeloop.testing.apiserver.verbs import Api

VERSION = {"major": "1", "minor": "35", "gitVersion": "v1.35.4-kubeloop-fake", "platform": "linux/amd64"}


# Subresources the real server has for these kinds and the fake does not serve (501, not 404).
_UNSERVED: dict[tuple[str, str], tuple[str, ...]] = {
    ("", "pods"): ("log", "exec", "attach", "portforward", "proxy", "eviction", "resize"),
    ("", "services"): ("proxy",),
}


@dataclass
class Target:
    kind: Kind
    version: str
    namespace: str | None
    name: str | None
    subresource: str | None


def json_response(body: Any, status: int = 200) -> web.Response:
    return web.Response(body=orjson.dumps(body), status=status, content_type="application/json")


class Router:
    """The aiohttp handler for every path."""

    def __init__(self, api: Api, kinds: Kinds, closing: asyncio.Event) -> None:
        self.api, self.kinds, self.closing = api, kinds, closing

    async def handle(self, request: web.Request) -> web.StreamResponse:
        try:
            return await self._dispatch(request)
        except errors.StatusError as exc:
            return json_response(exc.body(), exc.code)

    async def _dispatch(self, request: web.Request) -> web.StreamResponse:
        path = request.path.rstrip("/")
        parts = [p for p in path.split("/") if p]
        if path == "/version":
            return json_response(VERSION)
        if parts[:1] == ["openapi"]:  # no schemas of built-ins here: as a server with OpenAPI off answers
            return _plain_404()
        if request.method == "GET" and parts in (["api"], ["apis"]):
            address = request.host if ":" in request.host else "127.0.0.1"
            return json_response(self.kinds.api_versions(address) if parts == ["api"] else self.kinds.api_groups())
        if request.method == "GET" and len(parts) == 2 and parts[0] == "apis":
            found = self.kinds.api_group(parts[1])
            if found is None:
                if any(gv.startswith(parts[1] + "/") for gv in real_resources()):
                    raise errors.not_served(f"the API group {parts[1]}, which kube-apiserver serves")
                return _plain_404()
            return json_response(found)
        if request.method == "GET" and (parts == ["api", "v1"] or (len(parts) == 3 and parts[0] == "apis")):
            group, version = ("", "v1") if parts[0] == "api" else (parts[1], parts[2])
            if not self.kinds.group_served(group, version):
                _refuse_real_builtin(group, version, [])
                return _plain_404()
            return json_response(self.kinds.api_resources(group, version))
        if parts[:1] == ["apis"] and len(parts) >= 3 and not self.kinds.group_served(parts[1], parts[2]):
            _refuse_real_builtin(parts[1], parts[2], parts[3:])
            return _plain_404()
        legacy = _legacy_watch(parts)
        if legacy is not None:  # /api/v1/watch/..., /apis/<group>/<version>/watch/...: a watch of the rest
            return await self._legacy_watch(request, legacy, path)
        if len(parts) == 5 and parts[:3] == ["api", "v1", "namespaces"] and parts[4] == "bindings":
            return await self._bind(request, parts[3], None)  # (the pod named in the Binding)
        if self._custom_unserved(parts):
            return _plain_404()
        target = self._target(parts, path, request.method)
        if target is None:
            if parts and parts[0] in ("api", "apis"):
                raise _page_not_found(path)
            raise errors.not_served(f"{request.method} {path}")
        return await self._verb(request, target)

    async def _legacy_watch(self, request: web.Request, parts: list[str], path: str) -> web.StreamResponse:
        """The deprecated ``/watch/`` paths the real server still serves: a watch of the collection (of one
        object, by a ``metadata.name`` field selector, when the path names it), whatever ``watch`` says."""
        target = self._target(parts, path)
        if target is None or target.subresource:
            raise _page_not_found(path)
        if request.method != "GET":
            raise errors.method_not_allowed()
        _check_params("GET", Target(target.kind, target.version, target.namespace, None, None), request.query)
        if target.name is not None:  # a field selector, if any, must require exactly this name
            given = request.query.get("fieldSelector")
            if given and selectors.exact_field(given, "metadata.name") != target.name:
                raise errors.bad_request("fieldSelector metadata.name doesn't match requested name")
            if not given:
                request = request.clone(rel_url=request.rel_url.update_query(
                    {"fieldSelector": f"metadata.name={target.name}"}))
        collection = Target(target.kind, target.version, target.namespace, None, None)
        meta_only = "as=PartialObjectMetadata" in request.headers.get("Accept", "")
        return await self._collection_get(request, collection, meta_only, watching=True)

    def _custom_unserved(self, parts: list[str]) -> bool:
        """A path of a group only CRDs serve that names no resource served as the path asks (a resource
        no Established CRD has, a cluster-scoped one under a namespace): the real CRD handler passes it
        on to the mux, which answers in plain text."""
        if parts[:1] != ["apis"] or len(parts) < 4:
            return False
        group, version, rest = parts[1], parts[2], parts[3:]
        if any(k.group == group and k.crd is None for k in self.kinds.all()):
            return False
        namespaced = len(rest) >= 3 and rest[0] == "namespaces"
        kind = self.kinds.get(group, version, rest[2] if namespaced else rest[0])
        return kind is None or (namespaced and not kind.namespaced)

    def _target(self, parts: list[str], path: str, method: str = "") -> Target | None:
        if len(parts) >= 3 and parts[:2] == ["api", "v1"]:
            group, version, rest = "", "v1", parts[2:]
        elif len(parts) >= 4 and parts[0] == "apis":
            group, version, rest = parts[1], parts[2], parts[3:]
        else:
            return None
        ns = None
        if len(rest) >= 3 and rest[0] == "namespaces":
            inner = self.kinds.get(group, version, rest[2])
            if inner is not None and inner.namespaced:
                ns, rest = rest[1], rest[2:]
            elif inner is None:  # a namespaced kind the real server serves (endpoints...): 501, not a 404
                _refuse_real_builtin(group, version, rest)
        kind = self.kinds.get(group, version, rest[0])
        if kind is None:
            _refuse_real_builtin(group, version, rest)
        if kind is None or len(rest) > 3:
            raise _page_not_found(path) if kind is None else errors.not_served(path)
        if ns is not None and not kind.namespaced:
            raise _page_not_found(path)
        name = rest[1] if len(rest) > 1 else None
        sub = rest[2] if len(rest) > 2 else None
        own = (sub, kind.key) in (("finalize", ("", "namespaces")), ("binding", ("", "pods")),
                                  ("ephemeralcontainers", ("", "pods")),
                                  ("token", ("", "serviceaccounts")))  # (one kind's)
        served = sub in ("status", "scale") and kind.has_subresource(sub, version)
        if sub and not served and not own:
            if sub in _UNSERVED.get(kind.key, ()):  # the real server has it; the fake does not
                raise errors.not_served(f"the {sub} subresource of {errors.qualified(kind.plural, kind.group)}")
            if kind.crd is not None and method == "GET" and name:  # (the CRD handler's get finds no such object)
                raise errors.not_found(kind.plural, kind.group, name)
            raise _page_not_found(path)
        return Target(kind, version, ns, name, sub)

    async def _verb(self, request: web.Request, t: Target) -> web.StreamResponse:
        q = request.query
        if t.subresource == "binding":
            return await self._bind(request, t.namespace or "", t.name)
        if t.subresource == "token":
            return await self._token(request, t)
        _check_dry_run(request.method, q.getall("dryRun", []))
        dry_run = bool(q.get("dryRun"))
        if dry_run and t.subresource == "scale":
            raise errors.not_served("dryRun on a scale subresource")
        _check_params(request.method, t, q)
        method = request.method
        _check_write_options(method, q)
        strict = q.get("fieldValidation") == "Strict"
        manager = q.get("fieldManager") or _agent_manager(request)
        if t.subresource == "scale":
            return await self._scale(request, t, manager)
        if t.subresource == "finalize" and method != "PUT":  # a namespace's finalize is an update only
            raise errors.method_not_allowed()
        if t.subresource == "ephemeralcontainers":  # a pod's: read as the pod, written as its ephemeral containers
            if method not in ("GET", "PUT", "PATCH"):
                raise errors.method_not_allowed()
            if method == "PATCH" and request.headers.get("Content-Type", "").split(";")[0].strip() == APPLY:
                raise errors.not_served("server-side apply of a pod's ephemeralcontainers subresource")
        meta_only = "as=PartialObjectMetadata" in request.headers.get("Accept", "")
        if t.name is None:
            if method == "GET":
                return await self._collection_get(request, t, meta_only)
            if method == "POST":
                body = await _body(request)
                if strict and isinstance(body, dict):
                    checks.check(t.kind, t.version, body)
                created = self.api.create(t.kind, t.version, t.namespace, body, manager, dry_run=dry_run)
                return json_response(self._view(t, created), 201)
            if method == "DELETE":
                if t.kind.key == ("", "namespaces"):  # namespaces have no deletecollection
                    raise errors.method_not_allowed()
                options = await _body(request, optional=True)
                _check_delete_options(options or _query_opts(q))
                dry_run = _delete_dry_run(options, dry_run)
                return json_response(self._delete_collection(t, q, options, dry_run))
            raise errors.method_not_allowed()
        if method == "GET":
            rv = q.get("resourceVersion")
            listopts.check_resource_version(rv, listing=False)
            if rv and rv != "0":  # a get at least that fresh waits for it, then gives up as a list does
                self.api.fresh_enough(int(rv))
            return json_response(self._view(t, self.api.get(t.kind, t.namespace, t.name), meta_only))
        if method == "PUT":
            body = await _body(request)
            if strict and isinstance(body, dict):
                checks.check(t.kind, t.version, body)
            existed = self.api.store.get(t.kind.key, (t.namespace or "", t.name)) is not None
            obj = self.api.update(t.kind, t.version, t.namespace, t.name, body, manager, t.subresource,
                                  dry_run=dry_run)
            return json_response(self._view(t, obj), 200 if existed else 201)  # (a kind created by PUT)
        if method == "PATCH":
            content_type = request.headers.get("Content-Type", "").split(";")[0].strip()
            patch_body = await _body(request, yaml_ok=content_type == APPLY)
            # (the patched object, an apply's configuration, is checked by the patcher)
            existed = self.api.store.get(t.kind.key, (t.namespace or "", t.name)) is not None
            obj = self.api.patch(t.kind, t.version, t.namespace, t.name, content_type,
                                 patch_body, manager, t.subresource,
                                 field_manager=q.get("fieldManager"), force=q.get("force") == "true",
                                 dry_run=dry_run, strict=strict)
            return json_response(self._view(t, obj), 200 if existed else 201)
        if method == "DELETE":
            if t.subresource:
                raise _not_supported(t, "delete")
            body = await _body(request, optional=True)
            options = body or _query_opts(q)
            _check_delete_options(options)
            dry_run = _delete_dry_run(body, dry_run)
            out = self.api.delete(t.kind, t.namespace, t.name, options, dry_run=dry_run)
            return json_response(out if out.get("kind") == "Status" else self._view(t, out))
        raise _not_supported(t, {"POST": "create"}.get(method, method.lower()))

    async def _bind(self, request: web.Request, ns: str, name: str | None) -> web.StreamResponse:
        """A Pod's binding (POST only); ``name`` None: the ``bindings`` collection, the pod named in the body."""
        if request.method != "POST":
            raise errors.method_not_allowed()
        pod = self.kinds.get("", "v1", "pods")
        assert pod is not None
        _check_params("POST", Target(pod, "v1", ns, name, "binding"), request.query)
        _check_dry_run("POST", request.query.getall("dryRun", []))
        body = await _body(request)
        named = ((body.get("metadata") or {}).get("name") or "") if isinstance(body, dict) else ""
        done = binding.bind(self.api.store, pod, ns, name if name is not None else named, body,
                            self.api.clock.stamp(), dry_run=bool(request.query.get("dryRun")))
        self.api.kick()
        return json_response(done, 201)

    async def _token(self, request: web.Request, t: Target) -> web.StreamResponse:
        """A ServiceAccount's TokenRequest (POST only): see tokens.py. Its managed fields are the spec the
        field manager saw (the body's, with the defaulted expiry), as the token subresource's."""
        if request.method != "POST":
            raise errors.method_not_allowed()
        unknown = sorted(k for k in request.query if k not in _WRITE)
        if unknown or request.query.get("dryRun"):
            raise errors.not_served(f"the query parameters {', '.join(unknown) or 'dryRun'} on a TokenRequest")
        body = await _body(request)
        account = self.api.store.get(t.kind.key, (t.namespace or "", t.name or ""))
        answer, seen = tokens.request(account, t.name or "", body, self.api.clock.now())
        fields: dict[str, Any] = {"f:spec": {f"f:{k}": {} for k, v in seen["spec"].items() if v is not None}}
        answer["metadata"]["managedFields"] = [{
            "manager": request.query.get("fieldManager") or _agent_manager(request), "operation": "Update",
            "apiVersion": "authentication.k8s.io/v1", "time": answer["metadata"]["creationTimestamp"],
            "fieldsType": "FieldsV1", "fieldsV1": fields, "subresource": "token"}]
        return json_response(answer, 201)

    async def _scale(self, request: web.Request, t: Target, manager: str) -> web.StreamResponse:
        """GET, PUT and PATCH of ``<object>/scale``: written as an update of the object's replicas."""
        obj = self.api.get(t.kind, t.namespace, t.name or "")
        if request.method == "GET":
            return json_response(scale.view(t.kind, obj))
        if request.method not in ("PUT", "PATCH"):
            raise _not_supported(t, {"POST": "create"}.get(request.method, request.method.lower()))
        content_type = request.headers.get("Content-Type", "").split(";")[0].strip()
        new = scale.updated(t.kind, obj, await _body(request), content_type if request.method == "PATCH" else None)
        written = self.api._write(t.kind, t.version, obj, new, manager, None)  # noqa: SLF001 - same path as PUT
        return json_response(scale.view(t.kind, written))

    async def _collection_get(self, request: web.Request, t: Target, meta_only: bool,
                              watching: bool = False) -> web.StreamResponse:
        q = request.query
        match = _match(t, q)  # (a selector that does not parse is a 400 before the options are checked)
        watching = watching or listopts.truthy(q.get("watch"))
        listopts.check(q, watching)
        listopts.check_resource_version(q.get("resourceVersion"), listing=not watching)
        if watching:
            return await watch.serve(request, self.api.store, t.kind, t.namespace, match,
                                     lambda o: self._view(t, o, meta_only), self.closing,
                                     t.kind.api_version(t.version))
        limit = int(q["limit"]) if q.get("limit", "").isdigit() and int(q["limit"]) > 0 else None
        page = self.api.list(t.kind, t.namespace, match, limit=limit, token=q.get("continue"),
                             rv=q.get("resourceVersion"), rv_match=q.get("resourceVersionMatch"),
                             filtered=bool(q.get("labelSelector") or q.get("fieldSelector")))
        items = [self._view(t, o, meta_only, in_list=True) for o in page["items"]]
        if meta_only:
            return json_response({"kind": "PartialObjectMetadataList", "apiVersion": "meta.k8s.io/v1",
                                  "metadata": page["metadata"], "items": items})
        meta = page["metadata"]
        if t.kind.crd is not None:  # custom resource lists always carry "continue" (empty on the last page)
            meta = {"continue": "", **meta}
        return json_response({"kind": f"{t.kind.kind}List", "apiVersion": t.kind.api_version(t.version),
                              "metadata": meta, "items": items})

    def _delete_collection(self, t: Target, q: Any, options: dict[str, Any] | None,
                           dry_run: bool = False) -> dict[str, Any]:
        match = _match(t, q)
        listopts.check(q, False)
        options = options or _query_opts(q)  # (propagationPolicy, gracePeriodSeconds as query parameters too)
        rv = self.api.store.rv  # the list the real server answers is the one it read before deleting
        gone = []
        for obj in self.api.store.items(t.kind.key):
            if (t.namespace is None or obj["metadata"].get("namespace") == t.namespace) and match(obj):
                self._delete_one(t, obj, options, dry_run)
                gone.append(self._view(t, obj, in_list=True))  # (as read before it was deleted)
        meta = {"continue": "", "resourceVersion": str(rv)} if t.kind.crd is not None else {"resourceVersion": str(rv)}
        return {"kind": f"{t.kind.kind}List", "apiVersion": t.kind.api_version(t.version), "metadata": meta,
                "items": gone}

    def _delete_one(self, t: Target, obj: Obj, options: dict[str, Any] | None, dry_run: bool = False) -> Obj:
        meta = obj["metadata"]
        out = self.api.delete(t.kind, meta.get("namespace"), meta["name"], options, dry_run=dry_run)
        return obj if out.get("kind") == "Status" else out

    def _view(self, t: Target, obj: Obj, meta_only: bool = False, in_list: bool = False) -> Obj:
        """An object as served at the requested version (lists of built-ins carry no apiVersion/kind)."""
        if meta_only:
            return {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
                    "metadata": copy.deepcopy(obj["metadata"])}
        obj = objects.serialized(t.kind, obj)
        api_version = t.kind.api_version(t.version)
        served = t.kind.schema(t.version) if t.kind.crd is not None else None
        if served is not None and served is not t.kind.storage_schema():  # converted: pruned by that version
            obj = schema.prune(copy.deepcopy(obj), served)
        if obj.get("apiVersion") != api_version or (in_list and t.kind.crd is None):
            obj = dict(obj)
            obj["apiVersion"] = api_version
            if in_list and t.kind.crd is None:
                obj.pop("apiVersion")
                obj.pop("kind", None)
        return obj


_FIELD_VALIDATION = ("", "Ignore", "Strict", "Warn")


def _check_write_options(method: str, q: Any) -> None:
    """A write's options, validated before its body: ``fieldValidation`` one of four spellings (case
    matters), ``fieldManager`` at most 128 bytes."""
    if method not in ("POST", "PUT", "PATCH"):
        return
    options = _OPTIONS[method]
    value, manager = q.get("fieldValidation"), q.get("fieldManager") or ""
    if value is not None and value not in _FIELD_VALIDATION:
        supported = ", ".join(f'"{v}"' for v in _FIELD_VALIDATION)
        raise _invalid_options(options, "FieldValueNotSupported", "fieldValidation",
                               f'Unsupported value: "{value}": supported values: {supported}')
    if len(manager.encode()) > 128:
        raise _invalid_options(options, "FieldValueTooLong", "fieldManager", "Too long: may not be more than 128 bytes")


def _invalid_options(options: str, reason: str, field: str, why: str) -> errors.StatusError:
    return errors.StatusError(422, "Invalid", f'{options}.meta.k8s.io "" is invalid: {field}: {why}', {
        "group": "meta.k8s.io", "kind": options, "causes": [{"reason": reason, "message": why, "field": field}]})


def _legacy_watch(parts: list[str]) -> list[str] | None:
    """The path without its ``watch`` segment, if it is a legacy watch path."""
    if parts[:3] == ["api", "v1", "watch"] and len(parts) > 3:
        return parts[:2] + parts[3:]
    if parts[:1] == ["apis"] and len(parts) > 4 and parts[3] == "watch":
        return parts[:3] + parts[4:]
    return None


def _match(t: Target, q: Any) -> selectors.Match:
    labels = selectors.parse_labels(q.get("labelSelector"))
    crd = t.kind.crd
    fields = selectors.parse_fields(q.get("fieldSelector"), t.kind.key, custom=crd is not None,
                                    selectable=crds.selectable_fields(crd, t.version) if crd is not None else ())
    return lambda o: labels(o) and fields(o)


# The query parameters the fake models, per method (and collection or object): any other is refused by
# name rather than ignored, since the real server would act on it.
_COMMON = {"pretty"}
_WRITE = _COMMON | {"fieldManager", "fieldValidation", "dryRun"}
_SELECT = {"labelSelector", "fieldSelector"}
_LIST = _COMMON | _SELECT | {"limit", "continue", "resourceVersion", "resourceVersionMatch", "timeoutSeconds",
                             "watch", "allowWatchBookmarks", "sendInitialEvents"}
_PARAMS: dict[tuple[str, bool], set[str]] = {
    # (a named GET ignores ``watch``: the real handler answers the object, or 404, not a stream)
    ("GET", True): _LIST, ("GET", False): _COMMON | {"resourceVersion", "watch"},
    ("POST", True): _WRITE, ("PUT", False): _WRITE, ("PATCH", False): _WRITE | {"force"},
    ("DELETE", False): _COMMON | {"propagationPolicy", "gracePeriodSeconds", "orphanDependents", "dryRun"},
    ("DELETE", True): _COMMON | _SELECT | {"propagationPolicy", "gracePeriodSeconds", "orphanDependents", "dryRun",
                                           "limit", "continue", "resourceVersion", "resourceVersionMatch",
                                           "timeoutSeconds"},
}
_BINDING = _COMMON | {"dryRun"}  # (a Binding's fieldManager would name the manager of the Pod's nodeName)


def _check_params(method: str, t: Target, q: Any) -> None:
    allowed = _BINDING if t.subresource == "binding" else _PARAMS.get((method, t.name is None), _COMMON)
    unknown = sorted(k for k in q if k not in allowed)
    if unknown:
        raise errors.not_served(f"the query parameter{'s' if len(unknown) > 1 else ''} {', '.join(unknown)} on "
                                f"{method} {errors.qualified(t.kind.plural, t.kind.group)}")


_OPTIONS = {"POST": "CreateOptions", "PUT": "UpdateOptions", "PATCH": "PatchOptions", "DELETE": "DeleteOptions"}


def _options_invalid(method: str, causes: list[tuple[str, str, str]]) -> errors.StatusError:
    return errors.invalid(_OPTIONS.get(method, "CreateOptions"), "meta.k8s.io", "", causes)


def _check_dry_run(method: str, values: Any) -> None:
    """ValidateDryRun: ``All`` is the only dry run there is."""
    values = values if isinstance(values, list) else [values]
    if any(v != "All" for v in values):
        raise _options_invalid(method, [("FieldValueNotSupported", "dryRun", "Unsupported value: " + json.dumps(
            values, separators=(",", ":")) + ': supported values: "All"')])


_POLICIES = ("Foreground", "Background", "Orphan")


def _delete_dry_run(body: Any, from_query: bool) -> bool:
    """A DELETE's body, when it has one, holds all its options: the query's are not read then."""
    if not isinstance(body, dict):
        return from_query
    if body.get("dryRun"):
        _check_dry_run("DELETE", body["dryRun"])
    return bool(body.get("dryRun"))


def _check_delete_options(options: Any) -> None:
    """ValidateDeleteOptions: a propagation policy the garbage collector knows, and not beside
    ``orphanDependents``."""
    if not isinstance(options, dict):
        return
    policy, causes = options.get("propagationPolicy"), []
    if policy is not None and options.get("orphanDependents") is not None:
        causes.append(("FieldValueInvalid", "propagationPolicy", f'Invalid value: "{policy}": orphanDependents '
                       "and deletionPropagation cannot be both set"))
    if policy is not None and policy not in _POLICIES:
        causes.append(("FieldValueNotSupported", "propagationPolicy", f'Unsupported value: "{policy}": supported '
                       'values: "Foreground", "Background", "Orphan", "nil"'))
    if causes:
        raise _options_invalid("DELETE", causes)


def _query_opts(q: Any) -> dict[str, Any] | None:
    out: dict[str, Any] = {}
    if q.get("propagationPolicy"):
        out["propagationPolicy"] = q["propagationPolicy"]
    if q.get("gracePeriodSeconds", "").lstrip("-").isdigit():
        out["gracePeriodSeconds"] = int(q["gracePeriodSeconds"])
    if q.get("orphanDependents") in ("true", "false"):
        out["orphanDependents"] = q["orphanDependents"] == "true"
    return out or None


def _agent_manager(request: web.Request) -> str:
    """The real server's default field manager: the User-Agent up to its first '/'."""
    return request.headers.get("User-Agent", "unknown").split("/")[0][:128]


def _refuse_real_builtin(group: str, version: str, rest: list[str]) -> None:
    gv = f"{group}/{version}" if group else version
    served = real_resources().get(gv)  # refused by name, not a 404
    if served is None:
        return
    if not rest:
        raise errors.not_served(f"the API group {gv}, which kube-apiserver serves")
    if len(rest) >= 3 and rest[0] == "namespaces":
        rest = rest[2:]
    if rest and rest[0] in served:
        raise errors.not_served(f"{errors.qualified(rest[0], group)} ({gv}), a built-in kind it does not model")


def _not_supported(t: Target, verb: str) -> errors.StatusError:
    """A verb a subresource does not serve: a custom resource's handler names it (NewMethodNotSupported),
    a built-in's mux answers in general terms."""
    if t.kind.crd is None or not t.subresource:
        return errors.method_not_allowed()
    resource = errors.qualified(t.kind.plural, t.kind.group)
    return errors.StatusError(405, "MethodNotAllowed", f'{verb} is not supported on resources of kind "{resource}"',
                              {"group": t.kind.group, "kind": t.kind.plural})


def _plain_404() -> web.Response:
    """An unknown group/version: the real server's mux answers in plain text."""
    return web.Response(text="404 page not found\n", status=404, content_type="text/plain")


def _page_not_found(path: str) -> errors.StatusError:
    return errors.StatusError(404, "NotFound", "the server could not find the requested resource", {})


_DECODABLE = ("", "application/json", "application/yaml")  # (no Content-Type: JSON)


async def _body(request: web.Request, *, optional: bool = False, yaml_ok: bool = False) -> Any:
    content_type = request.headers.get("Content-Type", "").split(";")[0].strip().lower()
    if "protobuf" in content_type:  # client-go falls back to JSON on a 415
        raise errors.StatusError(415, "UnsupportedMediaType", "the kubeloop fake API server reads JSON only, not "
                                 "protobuf", {})
    if request.method in ("POST", "PUT") and content_type not in _DECODABLE:
        raise errors.StatusError(415, "UnsupportedMediaType", "the body of the request was in an unknown format - "
                                 "accepted media types include: application/json, application/yaml, "
                                 "application/vnd.kubernetes.protobuf")
    yaml_ok = yaml_ok or content_type == "application/yaml"
    try:
        raw = await request.read()
    except web.HTTPRequestEntityTooLarge:
        raise errors.StatusError(413, "RequestEntityTooLarge", f"Request entity too large: limit is "
                                 f"{request.app._client_max_size}", {}) from None  # noqa: SLF001
    if not raw:
        if optional:
            return None
        raise errors.bad_request("the body of the request was empty")
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        if yaml_ok:
            try:
                return yaml.safe_load(raw)
            except yaml.YAMLError as exc:
                raise errors.bad_request(f"error decoding YAML: {exc}") from None
        raise errors.bad_request("the body of the request could not be decoded as JSON") from None
