"""A Pod's ``binding`` subresource, what a scheduler writes (kube-apiserver 1.35.4's ``BindingREST``):

- POST only (``pods/<name>/binding``, or ``bindings`` naming the pod in the body); the Binding's name is the
  pod's, its target a Node by name; a bad target is the real server's 500 (its errors are not a Status).
- The pod must exist, not be deleted, not be bound yet and have no scheduling gates (409 on ``pods/binding``);
  the Binding's uid and resourceVersion, when given, are preconditions on the pod.
- It sets ``spec.nodeName``, merges the Binding's annotations and labels into the pod's, clears the
  nominated node and marks the pod ``PodScheduled``; it bumps the pod's resourceVersion, not its generation,
  and records no managed fields (a storage update, not an update through the field manager).
- The answer is a ``Status`` of Success, 201; a dry run checks all of it and stores nothing.
"""

from __future__ import annotations

import copy
from typing import Any

from kubeloop.testing.apiserver import errors
from kubeloop.testing.apiserver.causes import mapping, shown
from kubeloop.testing.apiserver.kinds import Kind
from kubeloop.testing.apiserver.store import Store

SUCCESS = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201}


def _refused(why: str, name: str) -> errors.StatusError:
    return errors.conflict("pods/binding", "", name, why)


def _check(body: dict[str, Any], name: str) -> None:
    if mapping(body.get("metadata")).get("name") != name:
        raise errors.bad_request("name in URL does not match name in Binding object")
    target = mapping(body.get("target"))
    problems = []
    if target.get("kind") and target["kind"] != "Node":
        problems.append(f'target.kind: Unsupported value: {shown(target["kind"])}: supported values: "Node", '
                        '"<empty>"')
    if not target.get("name"):
        problems.append("target.name: Required value")
    if problems:  # an aggregate, not a Status: the real handler answers 500 without a reason
        raise errors.StatusError(500, "", problems[0] if len(problems) == 1 else f"[{', '.join(problems)}]")


def bind(store: Store, kind: Kind, ns: str, name: str, body: Any, stamp: str, *, dry_run: bool) -> dict[str, Any]:
    """Binds pod ``ns/name`` as the Binding ``body`` says; the Status of Success, or the error."""
    if not isinstance(body, dict):
        raise errors.bad_request(f"not a Binding object: {shown(body)}")
    _check(body, name)
    pod = store.get(kind.key, (ns, name))
    if pod is None:
        raise errors.not_found("pods", "", name)
    meta = mapping(body.get("metadata"))
    _preconditions(pod, meta, ns, name)
    spec = pod.get("spec") or {}
    if pod["metadata"].get("deletionTimestamp"):
        raise _refused(f"pod {name} is being deleted, cannot be assigned to a host", name)
    if spec.get("nodeName"):
        raise _refused(f'pod {name} is already assigned to node "{spec["nodeName"]}"', name)
    if spec.get("schedulingGates"):
        raise _refused(f"pod {name} has non-empty .spec.schedulingGates", name)
    if dry_run:
        return SUCCESS
    bound = copy.deepcopy(pod)
    bound["spec"]["nodeName"] = body["target"]["name"]
    for field in ("annotations", "labels"):
        if meta.get(field) or field == "annotations":  # (the annotations map is always made)
            bound["metadata"][field] = {**(bound["metadata"].get(field) or {}), **(meta.get(field) or {})}
    status = bound.setdefault("status", {})
    status.pop("nominatedNodeName", None)
    _scheduled(status, stamp)
    store.put(kind.key, (ns, name), bound)
    return SUCCESS


def _preconditions(pod: dict[str, Any], meta: dict[str, Any], ns: str, name: str) -> None:
    key = f"/registry/pods/{ns}/{name}"
    live_uid, live_rv = pod["metadata"]["uid"], pod["metadata"]["resourceVersion"]
    if meta.get("uid") and meta["uid"] != live_uid:
        why = f"UID in precondition: {meta['uid']}, UID in object meta: {live_uid}"
    elif meta.get("resourceVersion") and str(meta["resourceVersion"]) != live_rv:
        why = f"ResourceVersion in precondition: {meta['resourceVersion']}, ResourceVersion in object meta: {live_rv}"
    else:
        return
    raise errors.conflict("pods", "", name, f"StorageError: invalid object, Code: 4, Key: {key}, ResourceVersion: 0, "
                          f"AdditionalErrorMsg: Precondition failed: {why}")


def _scheduled(status: dict[str, Any], stamp: str) -> None:
    """``UpdatePodCondition`` with PodScheduled True: it replaces the old condition, whose transition time
    stays if it was True already."""
    conditions = status.setdefault("conditions", [])
    new = {"type": "PodScheduled", "status": "True", "lastProbeTime": None, "lastTransitionTime": stamp}
    for i, cond in enumerate(conditions):
        if cond.get("type") == "PodScheduled":
            if cond.get("status") == "True":
                new["lastTransitionTime"] = cond.get("lastTransitionTime")
            conditions[i] = new
            return
    conditions.append(new)
