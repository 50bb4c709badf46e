"""The admission plugins of a default kube-apiserver that change what a new Pod looks like:

- ServiceAccount: ``serviceAccountName`` defaults to ``default``, and unless automounting is off a
  projected ``kube-api-access-<random>`` volume (token, root CA, namespace) is added and mounted in
  every container at /var/run/secrets/kubernetes.io/serviceaccount;
- DefaultTolerationSeconds: tolerations of 300 s for the not-ready and unreachable node taints, on an
  update too (``tolerations``), so that a patch replacing the list keeps them;
- Priority: with no priority class (and none is a default), priority 0 and preemption of lower
  priorities; an update that leaves them out keeps the old ones (``keep_priority``).

Admission comes after the field manager, so nobody owns what these plugins add.

A later update of the Pod's spec that drops them is then refused as on a real server (a pod's spec is
immutable but for its images and deadline).
"""

from __future__ import annotations

from typing import Any

from kubeloop.testing.apiserver.objects import GEN_ALPHABET, RNG, pod_qos_class

MOUNT = "/var/run/secrets/kubernetes.io/serviceaccount"


def _volume(name: str) -> dict[str, Any]:
    return {"name": name, "projected": {"defaultMode": 420, "sources": [
        {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
        {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
        {"downwardAPI": {"items": [{"path": "namespace", "fieldRef": {"apiVersion": "v1",
                                                                       "fieldPath": "metadata.namespace"}}]}}]}}


def tolerations(spec: dict[str, Any]) -> None:
    """DefaultTolerationSeconds: each taint is tolerated already by a toleration of its key (or of any key)
    for NoExecute (or any effect); otherwise its 300 s toleration is appended. Then PodTolerationRestriction
    (on in the hardened profile the fake is judged against): a pod that is not BestEffort tolerates memory
    pressure."""
    have = [t for t in spec.get("tolerations") or [] if isinstance(t, dict)]
    for key in ("node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"):
        if not any(t.get("key") in (key, "", None) and t.get("effect") in ("NoExecute", "", None) for t in have):
            spec.setdefault("tolerations", []).append({"key": key, "operator": "Exists", "effect": "NoExecute",
                                                       "tolerationSeconds": 300})
    pressure = {"key": "node.kubernetes.io/memory-pressure", "operator": "Exists", "effect": "NoSchedule"}
    if pod_qos_class(spec) != "BestEffort" and not any(_covers(t, pressure) for t in have):
        spec.setdefault("tolerations", []).append(pressure)


def _covers(have: dict[str, Any], wanted: dict[str, Any]) -> bool:
    """MergeTolerations keeps an existing toleration that already tolerates what is added."""
    return have.get("key") in (wanted["key"], "", None) and have.get("effect") in (wanted["effect"], "", None) and \
        (have.get("operator") == "Exists" or not have.get("key"))


def keep_priority(old: dict[str, Any], new: dict[str, Any]) -> None:
    for field in ("priority", "preemptionPolicy"):
        if new.get(field) is None and old.get(field) is not None:
            new[field] = old[field]


def admit_pod(pod: dict[str, Any]) -> None:
    spec = pod.get("spec")
    if not isinstance(spec, dict):
        return
    if not spec.get("priorityClassName"):
        spec.setdefault("priority", 0)
        spec.setdefault("preemptionPolicy", "PreemptLowerPriority")
    spec["serviceAccountName"] = spec.get("serviceAccountName") or spec.get("serviceAccount") or "default"
    spec["serviceAccount"] = spec["serviceAccountName"]
    tolerations(spec)
    if spec.get("automountServiceAccountToken") is False:
        return
    containers = [c for f in ("initContainers", "containers") for c in spec.get(f) or [] if isinstance(c, dict)]
    if any(m.get("mountPath") == MOUNT for c in containers for m in c.get("volumeMounts") or []):
        return
    name = "kube-api-access-" + "".join(RNG.choices(GEN_ALPHABET, k=5))
    spec.setdefault("volumes", []).append(_volume(name))
    for container in containers:
        container.setdefault("volumeMounts", []).append({"name": name, "readOnly": True, "mountPath": MOUNT})
