"""The verbs on stored objects: get, list, create, update, patch, delete — with the real server's
preconditions (409 on a stale resourceVersion), finalizers and ``deletionTimestamp``.

Asynchronous cluster behaviour (garbage collection, namespace cleanup, CRD establishment) is not here
but in ``controllers.py``, which ``kick`` wakes after every write.
"""

from __future__ import annotations

import base64
import builtins
import copy
import datetime as dt
import json
import uuid
from collections.abc import Callable
from typing import Any, cast

import orjson

from kubeloop.testing.apiserver import (
    admission,
    bodytype,
    builtin,
    causes,
    defaults,
    errors,
    gojson,
    limitranges,
    listopts,
    objects,
    patches,
    podsecurity,
    quotas,
    services,
    validation,
)
from kubeloop.testing.apiserver.clock import Clock
from kubeloop.testing.apiserver.fields import Managers, Typing, custom_lists
from kubeloop.testing.apiserver.kinds import Kind, Kinds
from kubeloop.testing.apiserver.selectors import Match
from kubeloop.testing.apiserver.store import Obj, Store

_B64 = set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
_CONTINUE_TOO_OLD = (
    "The provided continue parameter is too old to display a consistent list result. You can start a new list "
    "without the continue parameter, or use the continue token in this response to retrieve the remainder of "
    "the results. Continuing with the provided token results in an inconsistent list - objects that were "
    "created, modified, or deleted between the time the first chunk was returned and now may show up in the "
    "list.")


IMMORTAL_NAMESPACES = ("default", "kube-system", "kube-public")
CRD_FINALIZER = "customresourcecleanup.apiextensions.k8s.io"
# Kinds whose PUT creates an absent object (the real strategies' AllowCreateOnUpdate), and built-in
# kinds whose update needs a resourceVersion (AllowUnconditionalUpdate false; custom resources too).
CREATE_ON_UPDATE = {("", "services"), ("", "events"), ("events.k8s.io", "events"), ("coordination.k8s.io", "leases"),
                    ("", "limitranges")}
NO_UNCONDITIONAL_UPDATE = {("coordination.k8s.io", "leases"), ("apiextensions.k8s.io", "customresourcedefinitions")}
_EXTERNAL_IPS = "Use of external IPs is denied by admission control"  # (DenyServiceExternalIPs)
QUOTA_ADMISSION = "kube-apiserver"  # (the manager of the quota plugin's status writes: its loopback client's)


class Api:
    """Verbs on the store. ``manager`` is the field manager a write is recorded under."""

    def __init__(self, store: Store, kinds: Kinds, clock: Clock, kick: Callable[[], None]) -> None:
        self.store, self.kinds, self.clock, self.kick = store, kinds, clock, kick

    # --- reads --------------------------------------------------------------------------------------

    def get(self, kind: Kind, ns: str | None, name: str) -> Obj:
        obj = self.store.get(kind.key, (ns or "", name))
        if obj is None:
            raise errors.not_found(kind.plural, kind.group, name)
        return obj

    def list(self, kind: Kind, ns: str | None, match: Match, *, limit: int | None, token: str | None,
             rv: str | None, rv_match: str | None, filtered: bool) -> dict[str, Any]:
        """One page: items in key order after ``token``'s key, at the token's (or the list's) RV."""
        start, at = "", None
        if token:
            start, at = self._decode_continue(token)
            if rv and rv != "0":  # the token holds the list's resourceVersion
                raise errors.bad_request("specifying resource version is not allowed when using continue")
        elif rv and rv != "0":
            at = self._list_rv(int(rv) if rv.isdigit() else -1, rv, rv_match)
        elif rv == "0":
            limit = None  # served from the watch cache, which does not paginate
        snapshot = at if at is not None else self.store.rv
        scope = [o for o in self.store.items(kind.key, at)
                 if (ns is None or o["metadata"].get("namespace") == ns) and _key(o) > start]
        # As etcd-backed paging does: the page fills with matching objects in key order, and it has a
        # continue token whenever any object of the scope (matching or not) comes after the last one read,
        # since the server cannot know whether the rest match without reading them.
        items: list[Obj] = []
        read = 0
        for obj in scope:
            if limit and len(items) >= limit:
                break
            read += 1
            if match(obj):
                items.append(obj)
        meta: dict[str, Any] = {"resourceVersion": str(snapshot)}
        if limit and read < len(scope):
            meta["continue"] = _encode_continue(snapshot, _key(items[-1]))
            if not filtered:
                meta["remainingItemCount"] = len(scope) - read
        return {"metadata": meta, "items": items}

    def _list_rv(self, wanted: int, raw: str, rv_match: str | None) -> int | None:
        if wanted < 0:  # (the router refuses a resourceVersion that is not a number first)
            raise errors.bad_request(f"invalid resource version: {listopts.parse_error(raw)}")
        self.fresh_enough(wanted)
        if rv_match == "Exact":
            if wanted < self.store.compacted:
                raise errors.expired("The resourceVersion for the provided list is too old.")
            return wanted
        return None

    def fresh_enough(self, wanted: int) -> None:
        """A read at a resourceVersion the store has not reached: the real watch cache's 504 (it waits up
        to 3 s for it first; the fake answers at once)."""
        if wanted > self.store.rv:
            raise errors.StatusError(504, "Timeout", f"Timeout: Too large resource version: {wanted}, "
                                     f"current: {self.store.rv}", {"causes": [
                                         {"reason": "ResourceVersionTooLarge",
                                          "message": "Too large resource version"}], "retryAfterSeconds": 1})

    def _decode_continue(self, token: str) -> tuple[str, int]:
        bad = next((i for i, c in enumerate(token) if c not in _B64), None)
        if bad is None and len(token) % 4 == 1:
            bad = len(token) - 1
        if bad is not None:
            raise errors.bad_request(f"invalid continue token: continue key is not valid: illegal base64 data at "
                                     f"input byte {bad}")
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
        why = gojson.error(raw)  # a token that is not JSON is refused in Go's words
        if why:
            raise errors.bad_request(f"invalid continue token: continue key is not valid: {why}")
        try:
            data = json.loads(raw)
            start, rv = data["start"], int(data["rv"])
        except Exception:  # noqa: BLE001 - any other undecodable token is the same 400
            raise errors.bad_request("invalid continue token: continue key is not valid: invalid continue "
                                     "token") from None
        if rv < self.store.compacted:
            raise errors.expired(_CONTINUE_TOO_OLD)
        return start.rstrip("\x00"), rv

    # --- writes -------------------------------------------------------------------------------------

    def create(self, kind: Kind, version: str, ns: str | None, body: Any, manager: str,
               subresource: str | None = None, *, managed: bool = True, applied: Managers | None = None,
               dry_run: bool = False) -> Obj:
        """``applied``: the field managers of an apply that creates (its fields are recorded already).
        ``dry_run``: every check of a create (name, defaults, validation, the namespace, a taken name),
        and the object as it would be stored, but nothing stored (nor sent to etcd, whose size limit a
        dry run does not meet)."""
        if subresource:
            raise errors.not_served(f"POST to the {subresource} subresource of {kind.plural}")
        body = _require_object(body, kind)
        self._check_type(kind, version, body)
        _custom_kind(kind, version, body)
        meta = body.get("metadata") or {}
        if kind.namespaced and meta.get("namespace") and meta["namespace"] != ns:
            raise errors.bad_request("the namespace of the provided object does not match the namespace sent "
                                     "on the request")
        obj = objects.decode_defaults(kind, version, body)
        if kind.crd is not None and self._crd_terminating(kind):  # (admission: before names and validation)
            raise errors.forbidden(kind.plural, kind.group, obj["metadata"].get("name") or "",
                                   "create not allowed while custom resource definition is terminating")
        objects.check_name(kind, obj["metadata"], lambda name: self.store.get(kind.key, (ns or "", name)) is not None)
        uid = str(uuid.uuid4())
        before_selector = None  # a Job's, for the field manager: what the strategy generates is nobody's
        if kind.key == ("batch", "jobs"):  # generated before validation, which sees its labels
            before_selector = copy.deepcopy(obj)
            objects.job_selector(obj, uid, name_generated=not meta.get("name"))
        # A new pod's mutating admission, after the field manager saw it (``owned``: what it records) and
        # before validation: LimitRanger's defaults, the ServiceAccount plugin's lookup.
        account, owned, admitted = None, obj, kind.key == ("", "pods") and self.store.get(
            ("", "namespaces"), ("", ns or "")) is not None
        if admitted:
            owned = copy.deepcopy(obj)
            limitranges.admit(obj, self._in_namespace("limitranges", ns or ""))
            account = admission.service_account(obj, ns or "", lambda name: self.store.get(
                ("", "serviceaccounts"), (ns or "", name)))
        generated = validation.job_generated_selector(obj, uid) if kind.key == ("batch", "jobs") else []
        obj = objects.validate_create(kind, version, obj, ns, extra=generated)
        if kind.key == ("", "services"):
            self._node_ports_free(obj, None)
            if services.denied_external_ips(None, obj):
                raise errors.forbidden("services", "", obj["metadata"]["name"], _EXTERNAL_IPS)
        if admitted:  # validating admission, after validation
            limitranges.enforce(obj, self._in_namespace("limitranges", ns or ""))
            podsecurity.enforce(obj, self.store.get(("", "namespaces"), ("", ns or "")))
        if kind.key == ("", "namespaces"):
            self._pod_security_labels(obj, None)
        given = str(meta.get("resourceVersion") or "")  # refused by the storage, after validation, if it
        if given.isascii() and given.isdigit() and 0 < int(given) < 2 ** 64:  # parses as a version (else ignored)
            raise errors.StatusError(500, "", "resourceVersion should not be set on objects to be created")
        if kind.namespaced:
            self._namespace_open(kind, ns or "", obj["metadata"]["name"])
        self._quota_modelled(kind, obj)
        # ResourceQuota admission, the last plugin: charged before the store is asked (so also for a create
        # the store then refuses, until the quota controller next recounts, as on a real server)
        charged = quotas.admit(kind, obj, self._in_namespace("resourcequotas", ns or "")) if kind.namespaced else []
        if not dry_run:
            for quota, status in charged:
                quota_kind = self.kinds.by_key(("", "resourcequotas"))
                self._write(quota_kind, "v1", quota, {**quota, "status": status}, QUOTA_ADMISSION, "status")
        key = (ns or "", obj["metadata"]["name"])
        existing = self.store.get(kind.key, key)
        if existing is not None:
            taken = errors.already_exists(kind.plural, kind.group, key[1])
            if existing["metadata"].get("deletionTimestamp"):  # (the generic store says why it is still there)
                taken.message = f"object is being deleted: {taken.message}"
            raise taken
        managers = self.managers(kind, None, None)
        if managed:  # an apply that creates records its own fields
            managers.update(manager, kind.api_version(version), "", objects.ZERO.get(kind.key, {}),
                            (owned if admitted else obj) if before_selector is None else before_selector,
                            self.clock.stamp(),
                            creating=True)
        obj = objects.stored(kind, objects.strategy_create(kind, obj, self.clock.stamp(), account))
        obj["metadata"] = objects.new_metadata(kind, obj["metadata"], self.clock.stamp(), uid)
        if kind.namespaced:
            obj["metadata"]["namespace"] = ns
        else:
            obj["metadata"].pop("namespace", None)
        if applied is not None:
            obj["metadata"]["managedFields"] = applied.entries()
        else:
            _set_managed(obj, managers)
        if dry_run:
            return obj
        obj = objects.fit_in_etcd(kind, obj, update=applied is not None, retry=applied is None)
        self.store.put(kind.key, key, obj)
        self.kick()
        return obj

    def _pod_security_labels(self, ns: Obj, old: Obj | None) -> None:
        """PodSecurity's namespace validation: its labels must parse, on create and when they change."""
        found = podsecurity.label_causes(ns["metadata"].get("labels") or {})
        before = podsecurity.label_causes((old or {}).get("metadata", {}).get("labels") or {}) if old else []
        if found and (old is None or not before or found != before):
            raise errors.invalid("Namespace", "", ns["metadata"]["name"], found)

    def _node_ports_free(self, svc: Obj, old: Obj | None) -> None:
        """The node port allocator: a node port the Service asks for (and did not hold already) that another
        Service of the cluster holds is a 422. (The fake allocates none itself.)"""
        held = {p.get("nodePort") for p in ((old or {}).get("spec") or {}).get("ports") or [] if isinstance(p, dict)}
        taken = {p.get("nodePort") for o in self.store.items(("", "services")) if o["metadata"]["uid"] != (
            (old or {}).get("metadata") or {}).get("uid") for p in (o.get("spec") or {}).get("ports") or []
            if isinstance(p, dict) and p.get("nodePort")}
        clashes = [causes.invalid(f"spec.ports[{i}].nodePort", p["nodePort"], "provided port is already allocated")
                   for i, p in enumerate((svc.get("spec") or {}).get("ports") or []) if isinstance(p, dict)
                   and p.get("nodePort") and p["nodePort"] not in held and p["nodePort"] in taken]
        if clashes:
            raise errors.invalid("Service", "", svc["metadata"]["name"], clashes)

    def _quota_modelled(self, kind: Kind, obj: Obj) -> None:
        """A ResourceQuota the fake would not count all of is refused (501), not accepted half-enforced."""
        if kind.key != ("", "resourcequotas"):
            return
        served = {quotas.count_name(k) for k in self.kinds.all() if k.namespaced and k.crd is None}
        missing = quotas.unmodelled(obj, lambda name: name in served)
        if missing:
            raise errors.not_served(missing)

    def _in_namespace(self, plural: str, ns: str) -> builtins.list[Obj]:
        """The core objects of one kind in a namespace, by name (what an admission plugin's lister holds)."""
        return sorted((o for o in self.store.items(("", plural)) if o["metadata"].get("namespace") == ns),
                      key=lambda o: o["metadata"]["name"])

    def managers(self, kind: Kind, old: Obj | None, subresource: str | None) -> Managers:
        """The field managers of ``old`` (None: a new object), scoped to the endpoint written."""
        entries = old["metadata"].get("managedFields") if old else None
        typed: Typing = True if kind.crd is None else custom_lists(
            [(v.get("schema") or {}).get("openAPIV3Schema") or {} for v in kind.crd["spec"].get("versions", [])])
        return Managers(entries, typed=typed, scope=objects.scope(kind, subresource))

    def _namespace_open(self, kind: Kind, ns: str, name: str) -> None:
        namespace = self.store.get(("", "namespaces"), ("", ns))
        if namespace is None:
            raise errors.not_found("namespaces", "", ns)
        if namespace["metadata"].get("deletionTimestamp"):
            raise errors.StatusError(403, "Forbidden", f'{errors.qualified(kind.plural, kind.group)} "{name}" is '
                                     f"forbidden: unable to create new content in namespace {ns} because it is "
                                     "being terminated", {"name": name, **({"group": kind.group} if kind.group
                                                                             else {}), "kind": kind.plural,
                                     "causes": [{"reason": "NamespaceTerminating", "message":
                                                 f"namespace {ns} is being terminated",
                                                 "field": "metadata.namespace"}]})

    def update(self, kind: Kind, version: str, ns: str | None, name: str, body: Any, manager: str,
               subresource: str | None = None, *, require_rv: bool | None = None, dry_run: bool = False) -> Obj:
        body = _require_object(body, kind)
        self._check_type(kind, version, body)
        if kind.crd is None:  # the body is decoded first: a wrongly typed value fails before any other check
            builtin.check_types(kind, version, body)
        meta = body.get("metadata") or {}
        if not meta.get("name"):
            raise errors.bad_request(f"the name of the object ({name} based on URL) was undeterminable: name must be "
                                     "provided")
        if meta["name"] != name:
            raise errors.bad_request(f"the name of the object ({meta['name']}) does not match the name on the URL "
                                     f"({name})")
        if kind.namespaced and meta.get("namespace") and meta["namespace"] != ns:  # checked with the name,
            # before the object is looked up (the real handler's checkName): 400, even for a missing object
            raise errors.bad_request("the namespace of the provided object does not match the namespace sent on "
                                     "the request")
        old = self.store.get(kind.key, (ns or "", name))
        if old is None and kind.key in CREATE_ON_UPDATE:  # (also a PUT to /status: its status is dropped)
            if meta.get("resourceVersion"):
                _rv_number(meta["resourceVersion"])  # parsed, though a create then ignores it
            # the body's resourceVersion is ignored: the real store creates through its update path, which
            # does not refuse one as a create does
            body = {**body, "metadata": {k: v for k, v in meta.items() if k != "resourceVersion"}}
            return self.create(kind, version, ns, body, manager, dry_run=dry_run)
        old = self.get(kind, ns, name)
        if meta.get("uid") and meta["uid"] != old["metadata"]["uid"]:  # the body's uid is a precondition
            raise errors.conflict(kind.plural, kind.group, name, f"StorageError: invalid object, Code: 4, Key: "
                                  f"{_etcd_key(kind, ns, name)}, ResourceVersion: 0, AdditionalErrorMsg: Precondition "
                                  f"failed: UID in precondition: {meta['uid']}, UID in object meta: "
                                  f"{old['metadata']['uid']}")
        rv = _rv_number(meta["resourceVersion"]) if meta.get("resourceVersion") else 0  # 0: none given
        if rv and rv != int(old["metadata"]["resourceVersion"]):
            raise errors.conflict(kind.plural, kind.group, name)
        needs_rv = (kind.crd is not None or kind.key in NO_UNCONDITIONAL_UPDATE) if require_rv is None else require_rv
        if not rv and needs_rv:
            raise errors.invalid(kind.plural, kind.group, name, [
                ("FieldValueInvalid", "metadata.resourceVersion",
                 "Invalid value: 0: must be specified for an update")])
        _custom_kind(kind, version, body)
        return self._write(kind, version, old, body, manager, subresource, dry_run=dry_run)

    def _crd_terminating(self, kind: Kind) -> bool:
        """Whether the custom resource's CRD is being deleted (its Terminating condition True)."""
        crd = self.store.get(objects.CRD_KEY, ("", f"{kind.plural}.{kind.group}"))
        return any(c.get("type") == "Terminating" and c.get("status") == "True"
                   for c in ((crd or {}).get("status") or {}).get("conditions") or [])

    def _check_type(self, kind: Kind, version: str, body: Obj) -> None:
        """The type the body names, as the decoder judges it (400)."""
        bodytype.check(kind, version, body, self.kinds.all())

    def _write(self, kind: Kind, version: str, old: Obj, body: Obj, manager: str, subresource: str | None,
               managers: Managers | None = None, *, validate: bool = True, dry_run: bool = False) -> Obj:
        """Stores an update of ``old``; ``managers`` given means apply already recorded the fields;
        ``validate=False``: a write the real server makes through a path without update validation
        (a pod's binding); ``dry_run``: every check, the object as it would be stored, nothing stored."""
        sent_ns = (body.get("metadata") or {}).get("namespace")
        if not kind.namespaced and sent_ns:  # cluster-scoped: a namespace in the body is dropped
            body = {**body, "metadata": {k: v for k, v in body["metadata"].items() if k != "namespace"}}
        if kind.namespaced and sent_ns and sent_ns != old["metadata"].get("namespace"):
            raise errors.bad_request("the namespace of the provided object does not match the namespace sent on "
                                     "the request")
        if subresource != "status":
            _deletion_kept(kind, old, body)
        if kind.crd is None and subresource != "status":
            body = objects.decode_defaults(kind, version, body)  # as a PUT's body is decoded: defaults too
        else:
            body = builtin.decode(kind, version, body)
        new = objects.merge_update(kind, old, body, subresource)
        if kind.key == ("", "pods") and subresource is None and isinstance(new.get("spec"), dict):
            admission.tolerations(new["spec"])  # (admission plugins of updates too)
            admission.keep_priority(old.get("spec") or {}, new["spec"])
        objects.check_immutable(kind, old, new)
        if subresource != "status" and validate:
            objects.validate_update(kind, old, body, new, subresource)
            self._quota_modelled(kind, new)
            if kind.key == ("", "namespaces") and subresource is None:
                self._pod_security_labels(new, old)
            if kind.key == ("", "pods") and subresource in (None, "ephemeralcontainers") and \
                    podsecurity.significant_update(old, new):
                podsecurity.enforce(new, self.store.get(("", "namespaces"), ("", old["metadata"]["namespace"])))
            if kind.key == ("", "services"):
                self._node_ports_free(new, old)
                if services.denied_external_ips(old, new):
                    raise errors.forbidden("services", "", old["metadata"]["name"], _EXTERNAL_IPS)
        elif subresource == "status" and validate and kind.crd is None and kind.key != objects.CRD_KEY:
            objects.validate_status_update(kind, old, body, new)
        if kind.crd is not None:  # (a /status write's too: pruned, its status checked, as on the real server)
            new = objects.custom_checks(kind, version, new, old, status_only=subresource == "status")
            if "generation" in old["metadata"] and objects.body_of(kind, new) == objects.body_of(kind, old):
                new["metadata"]["generation"] = old["metadata"]["generation"]  # what changed was pruned
        applying = managers is not None
        if managers is None:
            sent = (body.get("metadata") or {}).get("managedFields")
            # managedFields sent, and not the live ones, replace them (an empty list: the object is then
            # untracked until an apply, as the real field manager resets it)
            given = isinstance(sent, list) and sent != old["metadata"].get("managedFields")
            managers = self.managers(kind, {"metadata": {"managedFields": sent}} if given else old, subresource)
            seen = objects.status_write_seen(kind, body, new) if subresource == "status" else new
            if subresource == "ephemeralcontainers":  # the field manager saw the patched pod, before the
                seen = body  # strategy kept only its ephemeral containers (the rest is recorded, not stored)
            if objects.managed_fields_fit(kind, version, old["metadata"].get("managedFields") or []):
                managers.update(manager, kind.api_version(version), subresource or "", old, seen, self.clock.stamp())
            else:  # (they do not convert to this version: reset, and the object is untracked)
                managers = self.managers(kind, None, subresource)
        _set_managed(new, managers)
        key = (old["metadata"].get("namespace", ""), old["metadata"]["name"])
        if _same(old, new):
            return old
        if dry_run:
            return new
        if _finalized(kind, old, new):
            self.store.remove(kind.key, key)  # the last finalizer went: the object goes now
            self.kick()
            return new
        new = objects.fit_in_etcd(kind, objects.stored(kind, new), update=True, retry=not applying)
        self.store.put(kind.key, key, new)
        self.kick()
        return new

    def patch(self, kind: Kind, version: str, ns: str | None, name: str, content_type: str, body: Any,
              manager: str, subresource: str | None, *, field_manager: str | None, force: bool,
              dry_run: bool = False, strict: bool = False) -> Obj:
        if content_type == patches.APPLY:
            return self.apply(kind, version, ns, name, body, field_manager, force, subresource, dry_run=dry_run)
        if kind.crd is not None and content_type not in (patches.MERGE, patches.JSON):
            raise errors.StatusError(415, "UnsupportedMediaType", "the body of the request was in an unknown format "
                                     "- accepted media types include: application/json-patch+json, "
                                     "application/merge-patch+json, application/apply-patch+yaml")
        old = self.get(kind, ns, name)
        if content_type in (patches.MERGE, patches.STRATEGIC) and not isinstance(body, dict):
            prefix = "error decoding patch: " if content_type == patches.MERGE else ""
            raise errors.bad_request(f"{prefix}json: cannot unmarshal array into Go value of type "
                                     "map[string]interface {}")
        if content_type == patches.MERGE:
            new = patches.merge_patch(old, body)
        elif content_type == patches.JSON:
            new = patches.json_patch(old, body)
        elif content_type == patches.STRATEGIC:
            new = patches.strategic_merge(old, body, keys=patches.KIND_KEYS.get(kind.key))
        else:
            raise errors.StatusError(415, "UnsupportedMediaType", "415: Unsupported Media Type", {})
        if kind.crd is not None:
            _same_type(kind, version, old, new)
            _string_maps(new)
            if strict:  # the patched object is decoded strictly: its unknown fields are the patch's fault
                _strict_patched(kind, version, new, False)
        elif strict:  # the real server decodes the patched object strictly (a strategic patch: the patch)
            _strict_patched(kind, version, body if content_type == patches.STRATEGIC else new,
                            content_type == patches.STRATEGIC)
        patched_name = (new.get("metadata") or {}).get("name")
        if patched_name != name:
            raise errors.bad_request(f"the name of the object ({patched_name}) does not match the name on the URL "
                                     f"({name})")
        rv = (new.get("metadata") or {}).get("resourceVersion")
        if rv and _rv_number(rv) not in (0, int(old["metadata"]["resourceVersion"])):
            raise errors.conflict(kind.plural, kind.group, name)
        try:
            return self._write(kind, version, old, new, manager, subresource, dry_run=dry_run)
        except errors.StatusError as exc:
            if exc.code == 400 and "cannot be handled as" in exc.message:  # the patched object does not decode
                why = exc.message.split(": ", 1)[-1]
                raise errors.StatusError(422, "Invalid", f' "" is invalid: patch: Invalid value: "...": {why}',
                                         {"causes": [{"reason": "FieldValueInvalid", "message": why,
                                                      "field": "patch"}]}) from None
            raise

    def apply(self, kind: Kind, version: str, ns: str | None, name: str, body: Any, field_manager: str | None,
              force: bool, subresource: str | None, *, dry_run: bool = False) -> Obj:
        if not field_manager:
            raise errors.StatusError(422, "Invalid", 'PatchOptions.meta.k8s.io "" is invalid: fieldManager: '
                                     "Required value: is required for apply patch", {
                                         "group": "meta.k8s.io", "kind": "PatchOptions", "causes": [
                                             {"reason": "FieldValueRequired", "message": "Required value: is "
                                              "required for apply patch", "field": "fieldManager"}]})
        body = _require_object(body, kind)
        # the applied object names its type (a custom resource's, its own: the patcher converts it as such)
        if not body.get("apiVersion") or not body.get("kind") or (kind.crd is not None and body["kind"] != kind.kind):
            group, _, asked = str(body.get("apiVersion") or "").rpartition("/")
            raise errors.bad_request(f"invalid object type: {group}/{asked}, Kind={body.get('kind') or ''}")
        old = self.store.get(kind.key, (ns or "", name))
        api_version = kind.api_version(version)
        config = {k: v for k, v in body.items() if k not in ("apiVersion", "kind")}
        if old is None and subresource and kind.key not in CREATE_ON_UPDATE:  # before the configuration's types
            raise errors.not_found(kind.plural, kind.group, name)
        builtin.check_applied(kind, version, name, config)
        applied_name = (config.get("metadata") or {}).get("name")
        if applied_name and applied_name != name:
            raise errors.bad_request(f"the name of the object ({applied_name}) does not match the name on the URL "
                                     f"({name})")
        if kind.crd is None:
            defaults.applied_containers(kind.key, config)
        if old is None:
            managers = self.managers(kind, None, None)
            merged = managers.apply(field_manager, api_version, "", {}, config, force, self.clock.stamp())
            merged.setdefault("metadata", {})["name"] = name
            merged["metadata"].pop("resourceVersion", None)  # an apply that creates ignores it
            return self.create(kind, version, ns, {**merged, "apiVersion": api_version, "kind": kind.kind},
                               field_manager, managed=False, applied=managers, dry_run=dry_run)
        applied_rv = (config.get("metadata") or {}).get("resourceVersion")
        managers = self.managers(kind, old, subresource)
        if subresource == "status":
            config = {"status": config.get("status", {})} if "status" in config else {}
        merged = managers.apply(field_manager, api_version, subresource or "", _plain(old), config, force,
                                self.clock.stamp())  # field conflicts first, then the precondition
        if applied_rv and applied_rv != old["metadata"]["resourceVersion"]:
            raise errors.conflict(kind.plural, kind.group, name)
        merged["apiVersion"], merged["kind"] = old["apiVersion"], old["kind"]
        merged.setdefault("metadata", {})["resourceVersion"] = old["metadata"]["resourceVersion"]
        return self._write(kind, version, old, merged, field_manager, subresource, managers, dry_run=dry_run)

    def delete(self, kind: Kind, ns: str | None, name: str, options: dict[str, Any] | None, *,
               dry_run: bool = False) -> Obj:
        """Deletes now, or marks for deletion while finalizers remain; returns what the server answers.
        ``dry_run``: the same checks and answer, nothing stored or removed."""
        options = options or {}
        if dry_run:
            return self._dry(lambda: self.delete(kind, ns, name, options))
        old = self.get(kind, ns, name)
        pre = options.get("preconditions") or {}
        for field, label, why in (("uid", "UID", "deleted and then recreated"),
                                  ("resourceVersion", "ResourceVersion", "modified")):
            if pre.get(field) and pre[field] != old["metadata"].get(field):
                shown = f"{kind.kind}.{kind.group}" if kind.group else kind.kind
                raise errors.StatusError(409, "Conflict", f'Operation cannot be fulfilled on {shown} "{name}": the '
                                         f"{label} in the precondition ({pre[field]}) does not match the {label} in "
                                         f"record ({old['metadata'].get(field)}). The object might have been {why}",
                                         {"name": name, **({"group": kind.group} if kind.group else {}),
                                          "kind": kind.kind})
        meta = old["metadata"]
        finalizers = list(meta.get("finalizers") or [])
        if kind.key == ("apiextensions.k8s.io", "customresourcedefinitions") and CRD_FINALIZER not in finalizers:
            finalizers.append(CRD_FINALIZER)  # the CRD's own delete adds it: its custom resources go first
        finalizers = _gc_finalizers(kind, finalizers, options)
        if kind.plural == "namespaces" and kind.group == "":
            if name in IMMORTAL_NAMESPACES:  # the NamespaceLifecycle admission plugin
                raise errors.StatusError(403, "Forbidden", f'namespaces "{name}" is forbidden: this namespace may '
                                         "not be deleted", {"name": name, "kind": "namespaces"})
            return self._terminate_namespace(kind, old, finalizers)
        grace = _pod_grace(old, options) if kind.key == ("", "pods") else 0
        if grace:
            return self._graceful(kind, old, grace, finalizers)
        if not finalizers:
            if kind.key == ("", "pods"):  # a pod is marked on its way out (one write, then the delete), as
                gone = copy.deepcopy(old)  # the real store does for a kind with graceful deletion
                gone["metadata"].setdefault("deletionTimestamp", self.clock.stamp())
                gone["metadata"]["deletionGracePeriodSeconds"] = 0
                if not meta.get("deletionTimestamp") and gone["metadata"].get("generation"):
                    gone["metadata"]["generation"] += 1
                if gone != old:
                    self.store.put(kind.key, (ns or "", name), gone)
                self.store.remove(kind.key, (ns or "", name))
                self.kick()
                return gone
            self.store.remove(kind.key, (ns or "", name))
            self.kick()
            if kind.key in _RETURN_DELETED:  # these answer with the object, not a Status
                return old
            return _success(kind, old)
        if meta.get("deletionTimestamp"):  # deleting already: only the collector's finalizers may change
            if finalizers == (meta.get("finalizers") or []):
                return old
            new = copy.deepcopy(old)
            new["metadata"]["finalizers"] = finalizers
            self.store.put(kind.key, (ns or "", name), new)
            self.kick()
            return new
        new = copy.deepcopy(old)
        new["metadata"]["finalizers"] = finalizers
        new["metadata"]["deletionTimestamp"] = self.clock.stamp()
        if kind.key != ("apiextensions.k8s.io", "customresourcedefinitions"):
            new["metadata"]["deletionGracePeriodSeconds"] = 0
            if new["metadata"].get("generation"):
                new["metadata"]["generation"] += 1
        else:  # a CRD's own delete: no grace period, no new generation, a Terminating condition
            new.setdefault("status", {}).setdefault("conditions", []).append({
                "type": "Terminating", "status": "True", "lastTransitionTime": self.clock.stamp(),
                "reason": "InstanceDeletionPending",
                "message": "CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon"})
        self.store.put(kind.key, (ns or "", name), new)
        self.kick()
        return new

    def _dry(self, act: Callable[[], Obj]) -> Obj:
        """Runs ``act`` against a store that takes no writes (a dry run: what the server would answer)."""
        store, kick = self.store, self.kick
        self.store, self.kick = cast(Store, _ReadOnly(store)), lambda: None
        try:
            return act()
        finally:
            self.store, self.kick = store, kick

    def _graceful(self, kind: Kind, old: Obj, grace: int, finalizers: builtins.list[str]) -> Obj:
        """A bound pod's deletion: marked to go in ``grace`` seconds, and gone when its kubelet says so
        (the fake's kubelet at once; without one it stays, as on a cluster whose node is gone)."""
        meta = old["metadata"]
        current = meta.get("deletionGracePeriodSeconds")
        if meta.get("deletionTimestamp") and current is not None and current <= grace:
            return old  # (nor does a pod in its grace period take the collector's finalizers)
        new = copy.deepcopy(old)
        deadline = self.clock.now() + dt.timedelta(seconds=grace)
        new["metadata"]["deletionTimestamp"] = deadline.strftime("%Y-%m-%dT%H:%M:%SZ")
        new["metadata"]["deletionGracePeriodSeconds"] = grace
        if finalizers:
            new["metadata"]["finalizers"] = finalizers
        if not meta.get("deletionTimestamp") and new["metadata"].get("generation"):
            new["metadata"]["generation"] += 1
        self.store.put(kind.key, (meta.get("namespace", ""), meta["name"]), new)
        self.kick()
        return new

    def _terminate_namespace(self, kind: Kind, old: Obj, finalizers: builtins.list[str]) -> Obj:
        """The first delete marks the namespace (its controller empties it); a later one, once its
        spec.finalizers are gone, is an ordinary delete (held by metadata finalizers only)."""
        if old["metadata"].get("deletionTimestamp"):
            if (old.get("spec") or {}).get("finalizers"):
                return old
            if not finalizers:
                self.store.remove(kind.key, ("", old["metadata"]["name"]))
                self.kick()
                return old
            if finalizers == (old["metadata"].get("finalizers") or []):
                return old
            new = copy.deepcopy(old)
            new["metadata"]["finalizers"] = finalizers
            self.store.put(kind.key, ("", old["metadata"]["name"]), new)
            self.kick()
            return new
        new = copy.deepcopy(old)
        if finalizers:
            new["metadata"]["finalizers"] = finalizers
        new["metadata"]["deletionTimestamp"] = self.clock.stamp()
        new["status"] = {"phase": "Terminating"}
        self.store.put(kind.key, ("", old["metadata"]["name"]), new)
        self.kick()
        return new


class _ReadOnly:
    """A store's reads, with its writes dropped: a dry run's view of it."""

    def __init__(self, store: Store) -> None:
        self._store = store

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)

    def put(self, *args: Any, **kwargs: Any) -> None:
        pass

    def remove(self, *args: Any, **kwargs: Any) -> None:
        pass


_GC_FINALIZERS = ("orphan", "foregroundDeletion")


def _gc_finalizers(kind: Kind, existing: list[str], options: dict[str, Any]) -> list[str]:
    """The finalizers a delete leaves: the garbage collector's ``orphan`` or ``foregroundDeletion`` as
    the options ask (an explicit ``orphanDependents``, then ``propagationPolicy``, then the one the object
    already has, then the kind's default: orphan for batch/v1 Jobs), also on an object already being
    deleted; none for Events, which have no collection policy. Unchanged as a set, the order stays."""
    if kind.plural == "events" and kind.group in ("", "events.k8s.io"):
        return existing
    asked, policy = options.get("orphanDependents"), options.get("propagationPolicy")
    had = next((f for f in existing if f in _GC_FINALIZERS), None)
    if asked is not None:
        wanted = "orphan" if asked else None
    elif policy:
        wanted = {"Orphan": "orphan", "Foreground": "foregroundDeletion"}.get(policy)
    else:
        wanted = had or ("orphan" if kind.key == ("batch", "jobs") else None)
    out = [f for f in existing if f not in _GC_FINALIZERS] + ([wanted] if wanted else [])
    return existing if sorted(out) == sorted(existing) else out


def _rv_number(rv: Any) -> int:
    """An update's resourceVersion as the storage reads it (strconv.ParseUint, base 10): a number, 0
    meaning none given; anything else (a sign, a fraction, letters, too large) is that parse's error,
    a 500 with no reason. (A create does not parse it: there any value but a number > 0 is ignored.)"""
    text = str(rv)
    quoted = json.dumps(text, ensure_ascii=False)
    if not text.isascii() or not text.isdigit():
        raise errors.StatusError(500, "", f"strconv.ParseUint: parsing {quoted}: invalid syntax")
    if int(text) >= 2 ** 64:
        raise errors.StatusError(500, "", f"strconv.ParseUint: parsing {quoted}: value out of range")
    return int(text)


def _finalized(kind: Kind, old: Obj, new: Obj) -> bool:
    """An update that removes the object: the last finalizer of one being deleted went, and its grace
    period (a pod's, until its kubelet confirms) is over or was none. A namespace's spec.finalizers
    hold it too (ShouldDeleteNamespaceDuringUpdate)."""
    grace = old["metadata"].get("deletionGracePeriodSeconds")
    if kind.key == ("", "namespaces") and (new.get("spec") or {}).get("finalizers"):
        return False
    return bool(old["metadata"].get("deletionTimestamp") and not new["metadata"].get("finalizers") and not grace)


def _pod_grace(pod: Obj, options: dict[str, Any]) -> int:
    """The grace period of a pod's deletion: none for a pod no node runs or that has finished, else
    the request's, else the pod's own (30 s by default)."""
    phase = (pod.get("status") or {}).get("phase")
    if not (pod.get("spec") or {}).get("nodeName") or phase in ("Succeeded", "Failed"):
        return 0
    asked = options.get("gracePeriodSeconds")
    if asked is not None:
        return max(0, int(asked))
    own = (pod.get("spec") or {}).get("terminationGracePeriodSeconds")
    return 30 if own is None else int(own)


def _key(obj: Obj) -> str:
    meta = obj["metadata"]
    return f"{meta.get('namespace', '')}/{meta['name']}"


def _encode_continue(rv: int, start: str) -> str:
    data = {"v": "meta.k8s.io/v1", "rv": rv, "start": start + "\x00"}
    return base64.urlsafe_b64encode(json.dumps(data, separators=(",", ":")).encode()).decode().rstrip("=")


def _same_type(kind: Kind, version: str, old: Obj, new: Obj) -> None:
    """A patch may not change a custom resource's kind or apiVersion: 422, as the custom resource
    validator words it (the patched object must be the kind and version of the URL)."""
    found = []
    if new.get("kind") != old.get("kind"):
        found.append(causes.invalid("kind", new.get("kind"), f"must be {kind.kind}"))
    if new.get("apiVersion") != old.get("apiVersion"):
        found.append(causes.invalid("apiVersion", new.get("apiVersion"), f"must be {kind.group}/{version}"))
    if found:  # the error names the kind and group the patched object claims
        claimed = str(new.get("apiVersion") or "")
        raise errors.invalid(str(new.get("kind") or ""), claimed.rpartition("/")[0],
                             (new.get("metadata") or {}).get("name", ""), found)


def _custom_kind(kind: Kind, version: str, body: Obj) -> None:
    """A custom resource's body of another kind: its validator's 422 (another group/version is the
    decoder's 400 before)."""
    if kind.crd is not None and body.get("kind"):
        expected = {"apiVersion": kind.api_version(version), "kind": kind.kind}
        _same_type(kind, version, expected, {**expected, "kind": body["kind"], "metadata": body.get("metadata")})


_TYPE_META = 'struct { APIVersion string "json:\\"apiVersion,omitempty\\""; Kind string "json:\\"kind,omitempty\\"" }'


def _require_object(body: Any, kind: Kind) -> dict[str, Any]:
    """A body that is not an object fails the decoder's look for its apiVersion and kind (a JSON null is an
    empty object to it)."""
    if body is None:
        return {}
    if not isinstance(body, dict):
        word = {bool: "bool", int: "number", float: "number", str: "string", list: "array"}.get(type(body), "value")
        raise errors.bad_request(f"the object provided is unrecognized (must be of type {kind.kind}): couldn't get "
                                 f"version/kind; json parse error: json: cannot unmarshal {word} into Go value of type "
                                 f"{_TYPE_META} ({orjson.dumps(body).hex()})")
    return body


def _plain(obj: Obj) -> Obj:
    """An object as apply merges it: without apiVersion/kind and server-owned metadata."""
    out = copy.deepcopy({k: v for k, v in obj.items() if k not in ("apiVersion", "kind")})
    out["metadata"].pop("managedFields", None)
    return out


def _set_managed(obj: Obj, managers: Managers) -> None:
    entries = managers.entries()
    if entries:
        obj["metadata"]["managedFields"] = entries
    else:
        obj["metadata"].pop("managedFields", None)


def _same(old: Obj, new: Obj) -> bool:
    """A write that changes nothing but managedFields' times is a no-op (no new resourceVersion)."""
    def strip(o: Obj) -> Obj:
        c = copy.deepcopy(o)
        for e in c["metadata"].get("managedFields") or []:
            e.pop("time", None)
        return c
    return strip(old) == strip(new)


# Kinds whose registry returns the deleted object (ReturnDeletedObject; pods and namespaces go through
# graceful deletion and answer with the object too).
_RETURN_DELETED = frozenset({("", "services"), ("", "serviceaccounts")})


def _success(kind: Kind, old: Obj) -> dict[str, Any]:
    details: dict[str, Any] = {"name": old["metadata"]["name"]}
    if kind.group:
        details["group"] = kind.group
    details["kind"] = kind.plural
    details["uid"] = old["metadata"]["uid"]
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "details": details}


def _invalid_patch(shown: str, why: str) -> errors.StatusError:
    """A patched object that does not decode: the patcher's 422 on the field ``patch``."""
    return errors.StatusError(422, "Invalid", f' "" is invalid: patch: Invalid value: "{shown}": {why}',
                              {"causes": [{"reason": "FieldValueInvalid", "message": f'Invalid value: "{shown}": {why}',
                                           "field": "patch"}]})


def _strict_patched(kind: Kind, version: str, decoded: Obj, strategic: bool) -> None:
    """``fieldValidation=Strict`` on a patch of a built-in: the first unknown field of what is decoded."""
    from kubeloop.testing.apiserver import strict

    unknown = strict.unknown_message(kind, version, decoded)
    if unknown:
        shown = patches.go_map(decoded) if strategic else json.dumps(decoded, sort_keys=True, separators=(",", ":"),
                                                                     ensure_ascii=False)
        raise _invalid_patch(shown.replace('"', '\\"'), f"strict decoding error: {unknown}")


_GO_TYPES = {bool: "bool", int: "number", float: "number", list: "array", dict: "object"}


def _string_maps(obj: Obj) -> None:
    """A custom resource's patched metadata is decoded into ObjectMeta: labels and annotations are strings."""
    meta = obj.get("metadata") or {}
    for field in ("labels", "annotations"):
        values = meta.get(field)
        for value in (values.values() if isinstance(values, dict) else ()):
            if value is not None and not isinstance(value, str):
                shown = json.dumps(obj, sort_keys=True, separators=(",", ":")).replace('"', '\\"')
                raise _invalid_patch(shown, f"json: cannot unmarshal {_GO_TYPES.get(type(value), 'value')} into Go "
                                            f"struct field ObjectMeta.metadata.{field} of type string")


def _etcd_key(kind: Kind, ns: str | None, name: str) -> str:
    """Where the real server keeps the object in etcd (its storage errors name the key): built-ins under
    their resource, custom resources under their group too."""
    prefix = kind.plural if kind.crd is None else f"{kind.group}/{kind.plural}"
    return f"/registry/{prefix}/{ns}/{name}" if ns else f"/registry/{prefix}/{name}"


def _deletion_kept(kind: Kind, old: Obj, body: Obj) -> None:
    """Only a DELETE sets deletionTimestamp and deletionGracePeriodSeconds: a write that sets or changes
    either is refused (reported twice, as the real server's common and per-kind metadata checks both do;
    its message says it once)."""
    sent, had = body.get("metadata") or {}, old["metadata"]
    for field in ("deletionTimestamp", "deletionGracePeriodSeconds"):
        value = sent.get(field)
        if value is not None and value != had.get(field):
            shown = f'"{value}"' if isinstance(value, str) else value
            cause = ("FieldValueInvalid", f"metadata.{field}", f"Invalid value: {shown}: field is immutable")
            raise errors.invalid(kind.kind, kind.group, had["name"], [cause, cause])
