"""What kube-controller-manager and the apiextensions controllers do, in the fake's own event loop:

- every namespace gets its ``default`` ServiceAccount and ``kube-root-ca.crt`` ConfigMap;
- a terminating namespace is emptied (finalizers respected), then finalized (its "kubernetes" spec
  finalizer goes), which removes it unless other finalizers hold it;
- a new CRD is Established (its kind served), a deleted one takes its custom resources with it;
- garbage collection: dependents whose owners are all gone are deleted (background), ``orphan`` and
  ``foregroundDeletion`` finalizers are honoured; Events are not tracked (as the real collector ignores them);
- with ``kubelet=True``, a kwok-like kubelet: every new pod is bound to node ``fake-node`` and reported
  Running and Ready at once (no container runs; a pod whose phase a test sets to Failed stays so).

It runs after every write (``kick``), one sweep at a time, until a sweep changes nothing.
"""

from __future__ import annotations

import asyncio
import copy
import logging
from typing import Any

from kubeloop.testing.apiserver import errors, quotas, tokens
from kubeloop.testing.apiserver.kinds import Kind
from kubeloop.testing.apiserver.store import Obj
from kubeloop.testing.apiserver.verbs import CRD_FINALIZER, Api

log = logging.getLogger("kubeloop.testing.apiserver")
KCM = "kube-controller-manager"
CA_NOTE = ("Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints "
           "such as the internal service IP or kubernetes.default.svc. No other usage is guaranteed across "
           "distributions of Kubernetes clusters.")


class Controllers:
    """The background loop; ``kick()`` is passed to ``Api`` and wakes it."""

    def __init__(self, api: Api, ca_pem: str = "", kubelet: bool = False) -> None:
        self.api = api
        self.ca_pem = ca_pem
        self.kubelet = kubelet
        self._wake = asyncio.Event()
        # The quota controller's view: per quota uid, the counted objects (and terminal pods) it last saw.
        self._quota_seen: dict[str, frozenset[tuple[Any, ...]]] = {}
        self._task: asyncio.Task[None] | None = None

    def kick(self) -> None:
        self._wake.set()

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._run())

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            try:
                await self._task
            except asyncio.CancelledError:
                pass

    async def _run(self) -> None:
        while True:
            await self._wake.wait()
            self._wake.clear()
            await asyncio.sleep(0)  # let the request that kicked answer first, as a real controller lags
            for _ in range(50):
                try:
                    if not self.sweep():
                        break
                except Exception:  # noqa: BLE001 - a bug here must not stop the server; it is logged
                    log.exception("fake API server controllers failed")
                    break

    def sweep(self) -> bool:
        """One pass of every controller; True if anything was written."""
        changed = False
        for step in (self._crds, self._namespaces, self._gc, self._pods, self._quotas, self._tokens):
            changed = step() or changed
        return changed

    # --- helpers ------------------------------------------------------------------------------------

    def _all(self, kind: Kind) -> list[Obj]:
        return self.api.store.items(kind.key)

    def _kind(self, group: str, plural: str) -> Kind:
        return self.api.kinds.by_key((group, plural))

    def _drop_finalizer(self, kind: Kind, obj: Obj, name: str) -> None:
        new = copy.deepcopy(obj)
        new["metadata"]["finalizers"] = [f for f in obj["metadata"].get("finalizers", []) if f != name]
        if not new["metadata"]["finalizers"]:
            del new["metadata"]["finalizers"]
        self.api._write(kind, kind.versions[0], obj, new, KCM, None)  # noqa: SLF001

    def _delete(self, kind: Kind, obj: Obj, policy: str | None = None) -> None:
        meta = obj["metadata"]
        try:
            self.api.delete(kind, meta.get("namespace"), meta["name"],
                            {"propagationPolicy": policy} if policy else None)
        except errors.StatusError:
            pass

    # --- service account tokens ---------------------------------------------------------------------

    def _tokens(self) -> bool:
        """The tokens controller: service account token Secrets filled in, or deleted with their account."""
        secret_kind, account_kind = self._kind("", "secrets"), self._kind("", "serviceaccounts")
        changed = False
        for secret in self._all(secret_kind):
            if secret.get("type") != tokens.TOKEN_TYPE or secret["metadata"].get("deletionTimestamp"):
                continue
            ns = secret["metadata"]["namespace"]
            name = (secret["metadata"].get("annotations") or {}).get(tokens.NAME) or ""
            new = tokens.legacy_secret(secret, self.api.store.get(account_kind.key, (ns, name)), self.ca_pem)
            if new == {}:
                self._delete(secret_kind, secret)
                changed = True
            elif new is not None:
                self.api._write(secret_kind, "v1", secret, new, KCM, None)  # noqa: SLF001
                changed = True
        return changed

    # --- resource quotas ----------------------------------------------------------------------------

    def _quotas(self) -> bool:
        """kube-controller-manager's quota controller: a quota is recounted when it is new or its hard limits
        changed, and when an object it counts goes or a pod it counts finishes (replenishment); otherwise
        its usage is what admission charged (a real controller's full resync, every 5 minutes, is not run)."""
        quota_kind = self._kind("", "resourcequotas")
        changed = False
        for quota in self._all(quota_kind):
            ns, uid = quota["metadata"]["namespace"], quota["metadata"]["uid"]
            objects = [(k, o) for k in self.api.kinds.all() if k.namespaced and k.crd is None
                       for o in self.api.store.items(k.key) if o["metadata"].get("namespace") == ns]
            seen = frozenset((k.key, o["metadata"]["name"], o["metadata"]["uid"],
                              (o.get("status") or {}).get("phase") in ("Succeeded", "Failed")) for k, o in objects)
            before = self._quota_seen.get(uid)
            self._quota_seen[uid] = seen
            hard = (quota.get("spec") or {}).get("hard") or {}
            gone = before is not None and bool({s[:3] for s in before} - {s[:3] for s in seen})
            finished = before is not None and bool({s for s in seen if s[3]} - before)
            if (quota.get("status") or {}).get("hard") == hard and before is not None and not gone and not finished:
                continue
            status = quotas.status(quota, objects)
            if status != quota.get("status"):
                self.api._write(quota_kind, "v1", quota, {**quota, "status": status}, KCM, "status")  # noqa: SLF001
                changed = True
        return changed

    # --- namespaces ---------------------------------------------------------------------------------

    def _namespaces(self) -> bool:
        changed = False
        ns_kind = self._kind("", "namespaces")
        for ns in self._all(ns_kind):
            name = ns["metadata"]["name"]
            if ns["metadata"].get("deletionTimestamp"):
                changed = self._empty(ns_kind, ns) or changed
                continue
            defaults = self._defaults()
            for plural, body in defaults:
                kind = self._kind("", plural)
                if self.api.store.get(kind.key, (name, body["metadata"]["name"])) is None:
                    self.api.create(kind, "v1", name, body, KCM)
                    changed = True
        return changed

    def _defaults(self) -> list[tuple[str, dict[str, Any]]]:
        """What kube-controller-manager creates in every namespace."""
        account = {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "default"}}
        root_ca = {"apiVersion": "v1", "kind": "ConfigMap", "data": {"ca.crt": self.ca_pem},
                   "metadata": {"name": "kube-root-ca.crt", "annotations": {"kubernetes.io/description": CA_NOTE}}}
        return [("serviceaccounts", account), ("configmaps", root_ca)]

    def _empty(self, ns_kind: Kind, ns: Obj) -> bool:
        """Deletes a terminating namespace's content; once none is left, takes "kubernetes" out of its
        spec.finalizers through /finalize (the rest sorted, as the real controller's set), which removes
        the namespace if no other finalizer, in its spec or metadata, holds it. One whose spec.finalizers
        are empty already is finalized: the real controller does not touch it (nor its content)."""
        name = ns["metadata"]["name"]
        spec_finalizers = (ns.get("spec") or {}).get("finalizers") or []
        if not spec_finalizers:
            return False
        left = False
        changed = False
        for kind in self.api.kinds.all():
            if not kind.namespaced:
                continue
            for obj in self._all(kind):
                if obj["metadata"].get("namespace") != name:
                    continue
                left = True
                if not obj["metadata"].get("deletionTimestamp"):
                    self._delete(kind, obj)
                    changed = True
        if left:
            return changed
        new = copy.deepcopy(ns)
        new["spec"]["finalizers"] = sorted(set(spec_finalizers) - {"kubernetes"})
        if new["spec"]["finalizers"] == spec_finalizers:  # finalized by us already: held by a client's
            return changed
        self.api._write(ns_kind, "v1", ns, new, KCM, "finalize")  # noqa: SLF001 - the path a PUT takes
        return True

    # --- CRDs ---------------------------------------------------------------------------------------

    def _crds(self) -> bool:
        changed = False
        crd_kind = self._kind("apiextensions.k8s.io", "customresourcedefinitions")
        for crd in self._all(crd_kind):
            spec = crd.get("spec", {})
            key = (spec.get("group", ""), (crd.get("status", {}).get("acceptedNames") or {}).get("plural")
                   or spec.get("names", {}).get("plural", ""))
            if crd["metadata"].get("deletionTimestamp"):
                changed = self._remove_crd(crd_kind, crd, key) or changed
                continue
            changed = self._name_and_establish(crd_kind, crd) or changed
            current = self.api.store.get(crd_kind.key, _k(crd)) or crd
            if _established(current):
                self._register(current)
        return changed

    def _register(self, crd: Obj) -> Kind:
        """Serves an Established CRD under its accepted names (what the naming controller let it have)."""
        spec = crd["spec"]
        names = crd.get("status", {}).get("acceptedNames") or spec["names"]
        versions = [v["name"] for v in spec.get("versions", []) if v.get("served", True)]
        versions.sort(key=lambda v: not any(x["name"] == v and x.get("storage") for x in spec["versions"]))
        subs: dict[str, Any] = {}
        for v in spec.get("versions", []):
            subs.update(v.get("subresources") or {})
        kind = Kind(spec["group"], versions, names["plural"], names["kind"],
                    namespaced=spec.get("scope") == "Namespaced", short_names=list(names.get("shortNames") or []),
                    status="status" in subs, scale="scale" in subs, crd=crd)
        known = self.api.kinds.get(kind.group, kind.versions[0], kind.plural) if kind.versions else None
        kind.watch_from = known.watch_from if known is not None and known.crd is not None else self.api.store.rv
        self.api.kinds.add(kind)
        return kind

    def _name_and_establish(self, crd_kind: Kind, crd: Obj) -> bool:
        """The naming controller (names no other CRD of the group has accepted) and the establishing one
        (Established once the names are accepted, and for good), in one status write."""
        status = crd.get("status") or {}
        requested = _names_as_status(crd["spec"]["names"])
        accepted = status.get("acceptedNames") or {"plural": "", "kind": ""}
        conditions = [c for c in status.get("conditions") or [] if isinstance(c, dict)]
        if requested == accepted and _established(crd):
            return False
        others = [o for o in self._all(crd_kind) if o["metadata"]["name"] != crd["metadata"]["name"]
                  and o.get("spec", {}).get("group") == crd["spec"].get("group")]
        names, why = _accept_names(requested, accepted, others)
        now = self.api.clock.stamp()
        naming = {"type": "NamesAccepted", "status": "False" if why else "True",
                  "reason": why[0] if why else "NoConflicts", "message": why[1] if why else "no conflicts found"}
        established = next((c for c in conditions if c.get("type") == "Established"), None) or {
            "type": "Established", "status": "False", "reason": "NotAccepted", "message": "not all names are accepted"}
        if established.get("status") != "True" and not why:  # (the establishing controller's step)
            established = {"type": "Established", "status": "True", "reason": "InitialNamesAccepted",
                           "message": "the initial names have been accepted"}
        new_conditions = _set_condition(_set_condition(conditions, naming, now), established, now)
        if names == accepted and new_conditions == conditions:
            return False
        new = copy.deepcopy(crd)
        new["status"] = {**status, "conditions": new_conditions, "acceptedNames": names,
                         "storedVersions": status.get("storedVersions", [])}
        self.api._write(crd_kind, "v1", crd, new, "kube-apiserver", "status")  # noqa: SLF001
        return True

    def _remove_crd(self, crd_kind: Kind, crd: Obj, key: tuple[str, str]) -> bool:
        try:
            kind = self.api.kinds.by_key(key)
        except KeyError:
            kind = None
        if kind is not None:
            items = self._all(kind)
            for obj in items:
                if not obj["metadata"].get("deletionTimestamp"):
                    self._delete(kind, obj)
            if self._all(kind):
                return bool(items)
            self.api.kinds.remove(key)
            self.api.store.drop_kind(key)
        if CRD_FINALIZER in (crd["metadata"].get("finalizers") or []):
            self._drop_finalizer(crd_kind, crd, CRD_FINALIZER)
            return True
        return False

    # --- garbage collection -------------------------------------------------------------------------

    def _gc(self) -> bool:
        everything: list[tuple[Kind, Obj]] = [(k, o) for k in self.api.kinds.all() for o in self._all(k)]
        changed = False
        for kind, obj in everything:
            meta = obj["metadata"]
            fins = meta.get("finalizers") or [] if kind.key not in _GC_IGNORED else []
            if meta.get("deletionTimestamp") and "orphan" in fins:
                self._orphan(everything, meta["uid"])
                self._drop_finalizer(kind, self.api.store.get(kind.key, _k(obj)) or obj, "orphan")
                changed = True
            elif meta.get("deletionTimestamp") and "foregroundDeletion" in fins:
                changed = self._foreground(everything, kind, obj) or changed
        owners = {o["metadata"]["uid"]: (k, o) for k, o in everything}
        for kind, obj in everything:
            refs = obj["metadata"].get("ownerReferences") or []
            if kind.key in _GC_IGNORED:
                continue
            if not refs or obj["metadata"].get("deletionTimestamp"):
                continue
            solid = [r for r in refs if _solid(r, obj, owners)]
            if not solid and self.api.store.get(kind.key, _k(obj)) is not None:
                self._delete(kind, obj)
                changed = True
            elif len(solid) < len(refs):  # another owner remains: the references to the gone ones are removed
                new = copy.deepcopy(obj)
                new["metadata"]["ownerReferences"] = solid
                self.api._write(kind, kind.versions[0], obj, new, KCM, None)  # noqa: SLF001
                changed = True
        return changed

    def _dependents(self, everything: list[tuple[Kind, Obj]], uid: str) -> list[tuple[Kind, Obj]]:
        return [(k, o) for k, o in everything if k.key not in _GC_IGNORED
                and any(r.get("uid") == uid for r in o["metadata"].get("ownerReferences") or [])]

    def _orphan(self, everything: list[tuple[Kind, Obj]], uid: str) -> None:
        for kind, obj in self._dependents(everything, uid):
            new = copy.deepcopy(obj)
            refs = [r for r in obj["metadata"]["ownerReferences"] if r.get("uid") != uid]
            if refs:
                new["metadata"]["ownerReferences"] = refs
            else:
                del new["metadata"]["ownerReferences"]
            self.api._write(kind, kind.versions[0], obj, new, KCM, None)  # noqa: SLF001

    def _foreground(self, everything: list[tuple[Kind, Obj]], kind: Kind, obj: Obj) -> bool:
        deps = self._dependents(everything, obj["metadata"]["uid"])
        for dep_kind, dep in deps:
            if not dep["metadata"].get("deletionTimestamp"):
                self._delete(dep_kind, dep, "Foreground")
        blocking = [d for _, d in deps if any(r.get("uid") == obj["metadata"]["uid"] and r.get("blockOwnerDeletion")
                                              for r in d["metadata"].get("ownerReferences") or [])]
        if blocking:
            return bool(deps)
        self._drop_finalizer(kind, obj, "foregroundDeletion")
        return True


    # --- kubelet -------------------------------------------------------------------------------------

    def _pods(self) -> bool:
        if not self.kubelet:
            return False
        kind = self._kind("", "pods")
        changed = False
        for pod in self._all(kind):
            meta = pod["metadata"]
            if meta.get("deletionTimestamp") and not meta.get("finalizers") and pod["spec"].get("nodeName") == NODE:
                self.api.store.remove(kind.key, _k(pod))  # the kubelet has stopped it (kwok: at once)
                changed = True
                continue
            if meta.get("deletionTimestamp") or (pod.get("status") or {}).get("phase") not in (None, "Pending"):
                continue  # (created Pending, as by the real Pod strategy; started once)
            bound = copy.deepcopy(pod)
            bound.setdefault("spec", {})["nodeName"] = bound["spec"].get("nodeName") or NODE
            self.api._write(kind, "v1", pod, bound, "kube-scheduler", None, validate=False)  # noqa: SLF001
            pod = self.api.store.get(kind.key, _k(pod)) or bound
            now = self.api.clock.stamp()
            running = copy.deepcopy(pod)
            conditions = [{"type": t, "status": "True", "lastProbeTime": None, "lastTransitionTime": now}
                          for t in ("PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady",
                                    "PodScheduled")]
            running["status"] = {"phase": "Running", "conditions": conditions, "hostIP": "10.0.0.1",
                                 "podIP": "10.0.1.1", "startTime": now, "containerStatuses": [
                                     {"name": c.get("name", ""), "image": c.get("image", ""), "ready": True,
                                      "started": True, "restartCount": 0, "state": {"running": {"startedAt": now}}}
                                     for c in pod["spec"].get("containers") or []],
                                 "qosClass": (pod.get("status") or {}).get("qosClass")}
            self.api._write(kind, "v1", pod, running, "kubelet", "status")  # noqa: SLF001
            changed = True
        return changed


NODE = "fake-node"  # the fake kubelet's node


# Kinds the real garbage collector does not track: their owner references are never acted on.
_GC_IGNORED = {("", "events"), ("events.k8s.io", "events")}


def _solid(ref: dict[str, Any], dependent: Obj, owners: dict[str, tuple[Kind, Obj]]) -> bool:
    """An owner exists as the real garbage collector sees it: same uid, name and kind, and (for a
    namespaced owner) in the dependent's namespace; otherwise the dependent is deleted."""
    found = owners.get(ref.get("uid", ""))
    if found is None:
        return False
    kind, owner = found
    if owner["metadata"]["name"] != ref.get("name") or kind.kind != ref.get("kind"):
        return False
    return not kind.namespaced or owner["metadata"].get("namespace") == dependent["metadata"].get("namespace")


def _k(obj: Obj) -> tuple[str, str]:
    return (obj["metadata"].get("namespace", ""), obj["metadata"]["name"])


def _names_as_status(names: dict[str, Any]) -> dict[str, Any]:
    """spec.names as status.acceptedNames holds them: empty optional names left out, as Go omits them."""
    out = {k: names.get(k) for k in ("plural", "singular", "shortNames", "kind", "listKind", "categories")}
    return {k: v for k, v in out.items() if v or k in ("plural", "kind")} | {
        "plural": names.get("plural") or "", "kind": names.get("kind") or ""}


def _accept_names(requested: dict[str, Any], accepted: dict[str, Any], others: list[Obj]
                  ) -> tuple[dict[str, Any], tuple[str, str] | None]:
    """calculateNamesAndConditions: each requested name is taken unless another CRD of the group has
    accepted it already (then the old accepted one stays); the last conflict found is the reason."""
    resources: set[str] = set()
    kinds: set[str] = set()
    for other in others:
        theirs = (other.get("status") or {}).get("acceptedNames") or {}
        resources.update(n for n in (theirs.get("plural"), theirs.get("singular"), *(theirs.get("shortNames") or []))
                         if n)
        kinds.update(n for n in (theirs.get("kind"), theirs.get("listKind")) if n)
    names = dict(accepted)
    why: tuple[str, str] | None = None

    def fresh(key: str, used: set[str]) -> None:
        nonlocal why
        want, have = requested.get(key) or "", accepted.get(key) or ""
        if want != have and want in used:
            why = (f"{key[0].upper()}{key[1:]}Conflict", f'"{want}" is already in use')
        else:
            names[key] = want
    fresh("plural", resources)
    fresh("singular", resources)
    short, had = requested.get("shortNames") or [], accepted.get("shortNames") or []
    if short != had:
        taken = [f'"{n}" is already in use' for n in short if n not in had and n in resources]
        if taken:  # (an aggregate of errors: one is shown as it is, more in brackets)
            why = ("ShortNamesConflict", taken[0] if len(taken) == 1 else "[" + ", ".join(taken) + "]")
        else:
            names["shortNames"] = short
    fresh("kind", kinds)
    fresh("listKind", kinds)
    names["categories"] = requested.get("categories")
    return {k: v for k, v in names.items() if v or k in ("plural", "kind")}, why


def _set_condition(conditions: list[dict[str, Any]], condition: dict[str, Any], now: str) -> list[dict[str, Any]]:
    """SetCRDCondition: replaced in place (its transition time kept unless its status changes), or appended."""
    out = [dict(c) for c in conditions]
    for c in out:
        if c.get("type") == condition["type"]:
            moved = c.get("status") != condition["status"]
            c.update(condition)
            c["lastTransitionTime"] = now if moved else c.get("lastTransitionTime", now)
            return out
    return [*out, {"type": condition["type"], "status": condition["status"], "lastTransitionTime": now,
                   "reason": condition["reason"], "message": condition["message"]}]


def _established(crd: Obj) -> bool:
    return any(c.get("type") == "Established" and c.get("status") == "True"
               for c in (crd.get("status") or {}).get("conditions") or [])


__all__ = ["Controllers"]
