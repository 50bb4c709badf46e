"""The pod of an ImmortalContainer: its definition (name, labels, template hash) and how to read its state.

Pure functions on plain dicts, so they are unit-tested without a cluster.
"""

from __future__ import annotations

import datetime as dt
import hashlib

import orjson

from kubeloop import Obj, clock, ownership
from kubeloop.operators.immortal.models import GROUP, ImmortalContainer

POD_SUFFIX = "-immortalpod"  # the article's naming: <name>-immortalpod
CONTAINER = "immortal"
NAME_LABEL = f"{GROUP}/name"  # which ImmortalContainer a pod belongs to (used to adopt orphans)
# The operator caches only pods carrying NAME_LABEL (a server-side label selector), not every pod.
POD_SELECTOR = NAME_LABEL
ARTICLE_LABEL = "controller"  # the article's label, controller=<name>: kept for those who select by it
HASH_LABEL = f"{GROUP}/template-hash"  # which version of the spec a pod runs
MANAGED_BY = ("app.kubernetes.io/managed-by", "kubeloop-immortal")

# Container fields of PodTemplate; the rest are pod fields (labels/annotations go to metadata).
_CONTAINER_FIELDS = ("command", "args", "workingDir", "env", "envFrom", "ports", "resources",
                     "imagePullPolicy", "livenessProbe", "readinessProbe", "startupProbe", "volumeMounts",
                     "securityContext")
_METADATA_FIELDS = ("labels", "annotations")


def pod_name(owner_name: str) -> str:
    return owner_name + POD_SUFFIX


def owner_name(pod_name: str) -> str | None:
    """The ImmortalContainer a pod of this name would belong to (None if the name does not fit)."""
    return pod_name[: -len(POD_SUFFIX)] if pod_name.endswith(POD_SUFFIX) else None


def label_value(name: str) -> str:
    """Label values are limited to 63 characters; object names are not. Long names get a hashed tail."""
    if len(name) <= 63:
        return name
    return f"{name[:52].rstrip('-_.')}-{hashlib.sha256(name.encode()).hexdigest()[:10]}"


def template_hash(template: Obj) -> str:
    """A short, stable digest of what the pod should run: a change of image or template changes it."""
    return hashlib.sha256(orjson.dumps(template, option=orjson.OPT_SORT_KEYS)).hexdigest()[:10]


def pod_template(ic: ImmortalContainer) -> Obj:
    """The pod's labels, annotations and spec as the ImmortalContainer asks for them (no identity)."""
    extra = ic.spec.template.model_dump(exclude_none=True, mode="json") if ic.spec.template else {}
    container: Obj = {"name": CONTAINER, "image": ic.spec.image}
    container.update({k: extra[k] for k in _CONTAINER_FIELDS if k in extra})
    spec: Obj = {k: v for k, v in extra.items() if k not in _CONTAINER_FIELDS + _METADATA_FIELDS}
    # Container crashes are the kubelet's job (with its own backoff); the operator replaces the pod only
    # when the pod itself is gone or finished.
    spec.update(restartPolicy="Always", containers=[container])
    return {"labels": extra.get("labels") or {}, "annotations": extra.get("annotations") or {}, "spec": spec}


def desired_pod(ic: ImmortalContainer, owner: Obj) -> Obj:
    """The article's "pod definition": pod ``<name>-immortalpod`` running ``spec.image``, controlled by
    the ImmortalContainer (so deleting it garbage-collects the pod)."""
    template = pod_template(ic)
    name = ic.metadata.name or ""
    labels = {ARTICLE_LABEL: label_value(name), **template["labels"], MANAGED_BY[0]: MANAGED_BY[1],
              NAME_LABEL: label_value(name), HASH_LABEL: template_hash(template)}
    meta: Obj = {"name": pod_name(name), "namespace": ic.metadata.namespace, "labels": labels,
                 "ownerReferences": [ownership.controller_reference(owner)]}
    if template["annotations"]:
        meta["annotations"] = template["annotations"]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": template["spec"]}


# --- reading a pod ---------------------------------------------------------------------------------------


def uid(pod: Obj) -> str:
    return str(pod["metadata"]["uid"])


def is_terminating(pod: Obj) -> bool:
    return bool(pod["metadata"].get("deletionTimestamp"))


def is_terminal(pod: Obj) -> bool:
    """Finished for good: with restartPolicy Always only eviction, node shutdown or a hand edit get here."""
    return (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed")


def end_reason(pod: Obj) -> str:
    """Why a terminal pod ended, as recorded in the next start's history entry."""
    status = pod.get("status") or {}
    return "PodEvicted" if status.get("reason") == "Evicted" else f"Pod{status.get('phase', 'Deleted')}"


def is_current(pod: Obj, desired: Obj) -> bool:
    """Does the pod run the current template? Pods made before the hash label existed are judged by
    their image, so an operator upgrade does not restart them."""
    labels = pod["metadata"].get("labels") or {}
    want = desired["metadata"]["labels"][HASH_LABEL]
    if HASH_LABEL in labels:
        return bool(labels[HASH_LABEL] == want)
    images = [c.get("image") for c in pod.get("spec", {}).get("containers") or []]
    return images == [c["image"] for c in desired["spec"]["containers"]]


def ready_since(pod: Obj) -> dt.datetime | None:
    """When the pod became Ready (its Ready condition's transition time), or None if it is not Ready."""
    for cond in (pod.get("status") or {}).get("conditions") or ():
        if cond.get("type") == "Ready" and cond.get("status") == "True":
            stamp = cond.get("lastTransitionTime")
            return _parse_time(stamp) if stamp else clock.now()
    return None


def is_ready(pod: Obj) -> bool:
    return ready_since(pod) is not None


def phase(pod: Obj) -> str:
    if is_terminating(pod):
        return "Terminating"
    return str((pod.get("status") or {}).get("phase") or "Pending")


def controlled_by(pod: Obj, owner: Obj) -> bool:
    ref = ownership.controller_of(pod)
    return bool(ref and ref.get("uid") == owner["metadata"]["uid"])


def is_orphan_of(pod: Obj, owner: Obj) -> bool:
    """An orphan (no controller) carrying our name label: ours to adopt, like a ReplicaSet would."""
    labels = pod["metadata"].get("labels") or {}
    return ownership.controller_of(pod) is None and labels.get(NAME_LABEL) == label_value(owner["metadata"]["name"])


def is_from_previous_incarnation(pod: Obj, owner: Obj) -> bool:
    """Controlled by an ImmortalContainer of the same name that was deleted (another UID): the garbage
    collector is about to remove it, so it is waited for, not reported as a conflict."""
    ref = ownership.controller_of(pod) or {}
    return bool(ref.get("kind") == owner["kind"] and ref.get("apiVersion", "").startswith(GROUP + "/")
                and ref.get("name") == owner["metadata"]["name"] and ref.get("uid") != owner["metadata"]["uid"])


def _parse_time(stamp: str) -> dt.datetime:
    return dt.datetime.fromisoformat(stamp.replace("Z", "+00:00"))
