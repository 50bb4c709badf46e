"""An in-memory ``Client`` for fast unit tests of reconcile functions and of the framework itself.

``FakeClient`` answers the client's verbs from a dict of objects, with the API server's bookkeeping
that reconcile code and the cache depend on:

- objects by resource, namespace and name; ``uid``, ``creationTimestamp``, ``generation`` (bumped when
  anything outside ``metadata`` and ``status`` changes) and one cluster-wide ``resourceVersion`` counter;
- the real client's errors: ``NotFound``, ``AlreadyExists``, ``Conflict`` (a stale ``resourceVersion``
  in a replace or a merge patch, or failed delete preconditions), ``Invalid`` for a failed JSON-patch
  ``test`` op (as the API server answers it);
- finalizers: a delete of an object holding some only sets ``deletionTimestamp``; it goes when the last
  one is removed;
- watches enough for the informer: a streaming list (ADDED events, then the end bookmark; or, with
  ``watch_list=False``, as a server older than 1.27 that ignores the request), resuming from a
  ``resourceVersion``, 410 Gone after ``compact()``, ``bookmark()`` and ``close_watches()``;
- ``calls``, a record of every request, and ``fail()``, to make the next request(s) of a verb fail (a
  watch also part-way through its stream).

It does not model, and tests must not rely on: validation and defaulting (schemas, CEL, admission),
server-side apply field ownership (``apply`` merges the body in; omitted fields are never removed),
strategic merge patch (applied as a JSON merge patch; one holding a list is refused, since list merge
keys are not modelled), subresources other than ``status``, garbage collection of owned
objects, namespaces' lifecycle, RBAC, watch selectors on changes (an object leaving a label selector
sends no DELETED), ``timeoutSeconds``, pagination, or any timing. Where those matter, test against the
real control plane (the ``kube_cluster``/``kube_client`` fixtures of ``kubeloop.testing``) instead.
"""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import uuid
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

from kubeloop.client.api import Client, Obj, PatchType, ResourceRef
from kubeloop.client.discovery import Registry
from kubeloop.client.errors import AlreadyExists, Conflict, Invalid, NotFound
from kubeloop.client.resource import Resource
from kubeloop.client.transport import WATCH_INACTIVITY_TIMEOUT
from kubeloop.resources import builtin
from kubeloop.testing import fakewrites as writes

_Place = tuple[str | None, str]  # (namespace, name)
_END = {"type": "END"}  # put on a live watch's queue by close_watches(): the stream ends
INITIAL_EVENTS_END = "k8s.io/initial-events-end"
_VERBS = ("get", "list", "watch", "create", "update", "patch", "delete")  # as recorded in ``calls``


@dataclass(frozen=True)
class Call:
    """One request the fake answered (or failed): what the API server would have seen."""

    verb: str  # one of _VERBS (update is a replace, as RBAC names it)
    resource: Resource
    namespace: str | None = None
    name: str | None = None
    body: Any = None
    options: dict[str, Any] = field(default_factory=dict)


@dataclass
class _Failure:
    verb: str
    error: Exception
    times: int
    resource: Resource | None
    name: str | None
    after: int = 0  # watches: events streamed before the error


class _Discovery(Registry):
    """Discovery's own name rules over the resources the fake knows; nothing to fetch."""

    def __init__(self, known: list[Resource]) -> None:  # deliberately not Registry.__init__: no transport
        self._resources = known  # the fake's list itself: resources it learns later are found too
        self._loaded = True

    async def refresh(self) -> None:
        """Nothing to fetch."""


class FakeClient(Client):
    """In memory, no HTTP: a stand-in for ``Client`` in unit tests (see the module's docstring for what
    it does not model). ``objects`` are stored as if created; ``resources`` are known besides the
    built-in kinds (a ``Resource`` or a model passed to a verb is learnt on first use too)."""

    def __init__(self, *objects: Obj, resources: tuple[Resource, ...] = (), namespace: str = "default",
                 field_manager: str = "kubeloop", watch_list: bool = True) -> None:
        # Deliberately not Client.__init__: no config, no transport, nothing to connect to.
        self.field_manager = field_manager
        self.used_permissions = None
        self.generated_rbac = None  # as on Client: set by the Manager so that a 403 can say what was generated
        self.namespace = namespace
        self.watch_list = watch_list  # False: ``send_initial_events`` is ignored (API servers before 1.27)
        self.calls: list[Call] = []
        self._known: list[Resource] = [*resources, *builtin.ALL]
        self.registry = _Discovery(self._known)
        self._objects: dict[Resource, dict[_Place, Obj]] = {}
        self._history: dict[Resource, list[tuple[int, str, Obj]]] = {}
        self._compacted: dict[Resource, int] = {}  # watches from before this resourceVersion get 410
        self._watches: dict[Resource, list[asyncio.Queue[dict[str, Any]]]] = {}
        self._failures: list[_Failure] = []
        self.resource_version = 0  # the latest resourceVersion handed out
        for obj in objects:
            self.add(obj)

    # --- set-up and inspection (synchronous, not recorded) -----------------------------------------

    def add(self, obj: Obj, resource: ResourceRef | None = None) -> Obj:
        """Stores ``obj`` as if it were created (no call recorded, no failure injected); returns it. A
        ``resourceVersion`` it carries is kept, so that fixtures may name theirs (versions only grow:
        a smaller one than the last handed out is refused); so is a ``uid`` (labels and owner references
        may name it)."""
        res = self._lookup(resource) if resource is not None else self._of_body(obj)
        given = obj.get("metadata", {}).get("resourceVersion")
        if given is not None:
            if not str(given).isdigit() or int(given) <= self.resource_version:
                raise ValueError(f"FakeClient.add: resourceVersion {given!r} must be a number above the last "
                                 f"one handed out ({self.resource_version}); leave it out to get the next")
            self.resource_version = int(given) - 1
        meta = obj.get("metadata", {})
        return copy.deepcopy(self._create(res, copy.deepcopy(obj), meta.get("namespace"), uid=meta.get("uid")))

    def stored(self, ref: ResourceRef, name: str, namespace: str | None = None) -> Obj | None:
        """A copy of the stored object, or None."""
        res = self._lookup(ref)
        obj = self._objects.get(res, {}).get((self._ns(res, namespace), name))
        return copy.deepcopy(obj) if obj is not None else None

    def objects(self, ref: ResourceRef) -> list[Obj]:
        """Copies of every stored object of ``ref``."""
        return [copy.deepcopy(o) for o in self._objects.get(self._lookup(ref), {}).values()]

    def fail(self, verb: str, error: Exception, *, times: int = 1, resource: ResourceRef | None = None,
             name: str | None = None, after: int = 0) -> None:
        """The next ``times`` requests of ``verb`` (of ``resource``/``name`` if given) raise ``error``;
        a watch only ``after`` that many events (a stream broken part-way)."""
        if verb not in _VERBS:
            raise ValueError(f"fail({verb!r}): the verbs are {', '.join(_VERBS)}")
        if after and verb != "watch":
            raise ValueError(f"fail(after={after}) is for watches, not {verb!r}")
        res = self._lookup(resource) if resource is not None else None
        self._failures.append(_Failure(verb, error, times, res, name, after))

    def verbs(self, resource: ResourceRef | None = None) -> list[str]:
        """The verbs of the recorded calls, in order (of ``resource`` only, if given)."""
        res = self._lookup(resource) if resource is not None else None
        return [c.verb for c in self.calls if res is None or c.resource == res]

    def compact(self) -> None:
        """Forgets the change history, as etcd compaction does: a watch resuming from an older
        resourceVersion is answered 410 Gone (and the informer relists)."""
        for res in self._history:
            self._history[res] = []
            self._compacted[res] = self.resource_version

    def bookmark(self, ref: ResourceRef) -> None:
        """Sends a BOOKMARK with the current resourceVersion to the open watches of ``ref``."""
        res = self._lookup(ref)
        event = {"type": "BOOKMARK", "object": {"kind": res.kind, "apiVersion": res.api_version,
                                                "metadata": {"resourceVersion": str(self.resource_version)}}}
        for queue in self._watches.get(res, []):
            queue.put_nowait(event)

    def close_watches(self) -> None:
        """Ends every open watch stream, as an API server closing them does."""
        for queues in self._watches.values():
            for queue in queues:
                queue.put_nowait(_END)

    # --- the Client's interface ----------------------------------------------------------------------

    @property
    def default_namespace(self) -> str:
        return self.namespace

    async def close(self) -> None:
        """Nothing to close."""

    async def resource(self, ref: ResourceRef) -> Resource:
        return self._lookup(ref)

    async def resource_of(self, body: Obj) -> Resource:
        return self._of_body(body)

    async def get(self, ref: ResourceRef, name: str, namespace: str | None = None, *,
                  subresource: str | None = None) -> Obj:
        res = self._lookup(ref)
        ns = self._ns(res, namespace)
        self._request(Call("get", res, ns, name, options={"subresource": subresource}))
        writes.only_status(subresource)
        return copy.deepcopy(self._existing(res, ns, name))

    async def list_pages(self, ref: ResourceRef, namespace: str | None = None, *,
                         label_selector: str | None = None, field_selector: str | None = None,
                         limit: int | None = 500, resource_version: str | None = None,
                         metadata_only: bool = False, shard_selector: str | None = None) -> AsyncIterator[Obj]:
        """One page with every match: pagination is not modelled, nor KEP-5866 sharding (``shard_selector``
        is ignored, as by a server without the ShardedListAndWatch gate: no ``shardInfo`` comes back)."""
        res = self._lookup(ref)
        ns = namespace if res.namespaced else None
        self._request(Call("list", res, ns, options={"label_selector": label_selector,
                                                      "field_selector": field_selector}))
        match = writes.matcher(ns, label_selector, field_selector)
        items = [copy.deepcopy(o) for o in self._objects.get(res, {}).values() if match(o)]
        yield {"apiVersion": res.api_version, "kind": f"{res.kind}List",
               "metadata": {"resourceVersion": str(self.resource_version)}, "items": items}

    async def watch(self, ref: ResourceRef, namespace: str | None = None, *,
                    resource_version: str | None = None, label_selector: str | None = None,
                    field_selector: str | None = None, timeout_seconds: int | None = None,
                    allow_bookmarks: bool = True, read_timeout: float = WATCH_INACTIVITY_TIMEOUT,
                    metadata_only: bool = False, send_initial_events: bool = False,
                    shard_selector: str | None = None) -> AsyncIterator[Obj]:
        res = self._lookup(ref)
        ns = namespace if res.namespaced else None
        broken = self._request(Call("watch", res, ns, options={
            "resource_version": resource_version, "send_initial_events": send_initial_events,
            "label_selector": label_selector, "field_selector": field_selector}))
        match = writes.matcher(ns, label_selector, field_selector)
        initial = send_initial_events and self.watch_list
        if resource_version and int(resource_version) < self._compacted.get(res, 0):
            yield {"type": "ERROR", "object": {"kind": "Status", "code": 410, "reason": "Expired",
                                               "message": f"too old resource version: {resource_version}"}}
            return
        # Everything up to here is synchronous: no change can fall between the backlog and the queue.
        backlog = self._backlog(res, resource_version, initial, match)
        queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self._watches.setdefault(res, []).append(queue)
        try:
            async for event in self._stream(backlog, queue, match):
                if broken is not None and broken.after <= 0:
                    raise broken.error
                yield event
                if broken is not None:
                    broken.after -= 1
        finally:
            self._watches[res].remove(queue)

    async def _stream(self, backlog: list[Obj], queue: asyncio.Queue[dict[str, Any]],
                      match: Callable[[Obj], bool]) -> AsyncIterator[Obj]:
        for event in backlog:
            yield event
        while (event := await queue.get()) is not _END:
            if event["type"] == "BOOKMARK" or match(event["object"]):
                yield copy.deepcopy(event)

    async def create(self, body: Obj, namespace: str | None = None, *, resource: ResourceRef | None = None,
                     subresource: str | None = None, name: str | None = None, dry_run: bool = False,
                     field_validation: str | None = None) -> Obj:
        res = self._lookup(resource) if resource is not None else self._of_body(body)
        ns = self._ns(res, namespace or body.get("metadata", {}).get("namespace"))
        self._request(Call("create", res, ns, body.get("metadata", {}).get("name"), copy.deepcopy(body),
                           {"dry_run": dry_run}))
        if subresource:
            raise NotImplementedError(f"FakeClient does not model creating subresource {subresource!r}")
        obj = copy.deepcopy(body)
        if dry_run:
            meta = obj.setdefault("metadata", {})
            if not meta.get("name") and meta.get("generateName"):  # a name is generated, and not kept
                meta["name"] = f"{meta['generateName']}{uuid.uuid4().hex[:5]}"
            self._existing(res, ns, meta.get("name", ""), absent=True)
            return obj
        return copy.deepcopy(self._create(res, obj, ns))

    async def replace(self, body: Obj, *, resource: ResourceRef | None = None, subresource: str | None = None,
                      dry_run: bool = False, field_validation: str | None = None) -> Obj:
        res = self._lookup(resource) if resource is not None else self._of_body(body)
        meta = body["metadata"]
        ns = self._ns(res, meta.get("namespace"))
        self._request(Call("update", res, ns, meta["name"], copy.deepcopy(body),
                           {"subresource": subresource}))
        writes.only_status(subresource)
        current = self._existing(res, ns, meta["name"])
        writes.check_version(current, meta.get("resourceVersion"))
        new = writes.written(res, current, copy.deepcopy(body), subresource)
        return copy.deepcopy(new) if dry_run else self._update(res, current, new)

    async def patch(self, ref: ResourceRef, name: str, patch: Any, namespace: str | None = None, *,
                    type: PatchType = "merge", subresource: str | None = None,
                    field_manager: str | None = None, force: bool = False, dry_run: bool = False,
                    field_validation: str | None = None) -> Obj:
        res = self._lookup(ref)
        ns = self._ns(res, namespace)
        self._request(Call("patch", res, ns, name, copy.deepcopy(patch),
                           {"type": type, "subresource": subresource, "field_manager": field_manager,
                            "dry_run": dry_run}))
        writes.only_status(subresource)
        if type == "apply" and (ns, name) not in self._objects.get(res, {}):
            return copy.deepcopy(self._create(res, copy.deepcopy(patch), ns))
        current = self._existing(res, ns, name)
        patched = writes.patched(current, patch, type)
        new = writes.written(res, current, patched, subresource)
        return copy.deepcopy(new) if dry_run else self._update(res, current, new)

    async def delete(self, ref: ResourceRef, name: str, namespace: str | None = None, *,
                     propagation_policy: str | None = None, grace_period_seconds: int | None = None,
                     uid: str | None = None, resource_version: str | None = None,
                     dry_run: bool = False) -> Obj:
        res = self._lookup(ref)
        ns = self._ns(res, namespace)
        self._request(Call("delete", res, ns, name, options={"uid": uid, "resource_version": resource_version,
                                                             "propagation_policy": propagation_policy,
                                                             "dry_run": dry_run}))
        current = self._existing(res, ns, name)
        meta = current["metadata"]
        if (uid and uid != meta.get("uid")) or (resource_version and resource_version != meta["resourceVersion"]):
            raise Conflict(409, "Conflict", f"Precondition failed for {res.plural} {name!r}: uid or "
                                            "resourceVersion differs")
        if dry_run:
            return copy.deepcopy(current)
        if not meta.get("finalizers"):
            return self._remove(res, current)
        if meta.get("deletionTimestamp"):
            return copy.deepcopy(current)
        new = copy.deepcopy(current)
        new["metadata"]["deletionTimestamp"] = writes.now()
        return self._update(res, current, new)

    async def delete_collection(self, ref: ResourceRef, namespace: str | None = None, *,
                                label_selector: str | None = None, field_selector: str | None = None,
                                propagation_policy: str | None = None, dry_run: bool = False) -> Obj:
        res = self._lookup(ref)
        page = await anext(self.list_pages(res, namespace, label_selector=label_selector,
                                           field_selector=field_selector))
        for obj in page["items"]:
            meta = obj["metadata"]
            await self.delete(res, meta["name"], meta.get("namespace"), dry_run=dry_run)
        return page

    # --- internals -----------------------------------------------------------------------------------

    def _lookup(self, ref: ResourceRef) -> Resource:
        """Discovery's rules on the known resources; a Resource or a model is learnt as is."""
        if isinstance(ref, Resource) or not isinstance(ref, str):
            res = ref if isinstance(ref, Resource) else ref.resource()
            if res not in self._known:
                self._known.insert(0, res)
            return res
        found = self.registry._match(ref)
        if found is not None:
            return found
        raise NotFound(404, "NotFound", f"the server doesn't have a resource type {ref!r} (FakeClient "
                                        "knows the built-in kinds and those passed as resources=...)")

    def _of_body(self, body: Obj) -> Resource:
        return self._lookup(f"{body['apiVersion']}/{body['kind']}")

    def _ns(self, res: Resource, namespace: str | None) -> str | None:
        return (namespace or self.namespace) if res.namespaced else None

    def _request(self, call: Call) -> _Failure | None:
        """Records the call, then raises the first matching injected failure (or, for a watch to break
        part-way, returns a copy of it)."""
        self.calls.append(call)
        for failure in self._failures:
            if failure.verb == call.verb and failure.resource in (None, call.resource) and \
                    failure.name in (None, call.name):
                failure.times -= 1
                if failure.times <= 0:
                    self._failures.remove(failure)
                if failure.after:
                    return dataclasses.replace(failure)
                raise failure.error
        return None

    def _existing(self, res: Resource, ns: str | None, name: str, absent: bool = False) -> Obj:
        obj = self._objects.get(res, {}).get((ns, name))
        if absent and obj is not None:
            raise AlreadyExists(409, "AlreadyExists", f'{res.plural} "{name}" already exists')
        if not absent and obj is None:
            raise NotFound(404, "NotFound", f'{res.plural} "{name}" not found')
        return obj or {}

    def _create(self, res: Resource, obj: Obj, ns: str | None, uid: str | None = None) -> Obj:
        meta = obj.setdefault("metadata", {})
        if not meta.get("name") and meta.get("generateName"):
            meta["name"] = f"{meta['generateName']}{uuid.uuid4().hex[:5]}"
        if not meta.get("name"):
            raise Invalid(422, "Invalid", "metadata.name: Required value: name or generateName is required")
        self._existing(res, ns, meta["name"], absent=True)
        obj.setdefault("apiVersion", res.api_version)
        obj.setdefault("kind", res.kind)
        if ns:
            meta["namespace"] = ns
        meta.update(uid=uid or str(uuid.uuid4()), creationTimestamp=writes.now(), generation=1)
        meta.pop("deletionTimestamp", None)
        return self._commit(res, obj, "ADDED")

    def _update(self, res: Resource, current: Obj, new: Obj) -> Obj:
        meta = new["metadata"]
        if writes.essence(current) != writes.essence(new):
            meta["generation"] = (current["metadata"].get("generation") or 1) + 1
        if meta.get("deletionTimestamp") and not meta.get("finalizers"):
            return self._remove(res, new)
        if new == current:
            return copy.deepcopy(current)  # a no-op write: the API server keeps the resourceVersion
        return copy.deepcopy(self._commit(res, new, "MODIFIED"))

    def _remove(self, res: Resource, obj: Obj) -> Obj:
        meta = obj["metadata"]
        del self._objects[res][(meta.get("namespace"), meta["name"])]
        return copy.deepcopy(self._commit(res, obj, "DELETED", store=False))

    def _commit(self, res: Resource, obj: Obj, etype: str, store: bool = True) -> Obj:
        self.resource_version += 1
        meta = obj["metadata"]
        meta["resourceVersion"] = str(self.resource_version)
        if store:
            self._objects.setdefault(res, {})[(meta.get("namespace"), meta["name"])] = obj
        self._history.setdefault(res, []).append((self.resource_version, etype, copy.deepcopy(obj)))
        for queue in self._watches.get(res, []):
            queue.put_nowait({"type": etype, "object": copy.deepcopy(obj)})
        return obj

    def _backlog(self, res: Resource, resource_version: str | None, initial: bool,
                 match: Callable[[Obj], bool]) -> list[Obj]:
        if not resource_version:  # the current state as ADDED events, then the changes from there
            added = [{"type": "ADDED", "object": copy.deepcopy(o)}
                     for o in self._objects.get(res, {}).values() if match(o)]
            if not initial:
                return added
            end = {"type": "BOOKMARK", "object": {"kind": res.kind, "apiVersion": res.api_version, "metadata": {
                "resourceVersion": str(self.resource_version), "annotations": {INITIAL_EVENTS_END: "true"}}}}
            return [*added, end]
        since = int(resource_version or 0)
        return [{"type": t, "object": copy.deepcopy(o)} for rv, t, o in self._history.get(res, [])
                if rv > since and match(o)]


__all__ = ["Call", "FakeClient"]

