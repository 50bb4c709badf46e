"""The admission plugins of a default kube-apiserver that change what a new Pod looks like:

- ServiceAccount: ``serviceAccountName`` defaults to ``default``; an account that does not exist is a 403
  (``service_account``); its image pull secrets go to a pod that has none; unless automounting is off (the
  pod's choice, else the account's) a
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

from collections.abc import Callable
from typing import Any

from kubeloop.testing.apiserver import errors
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


def service_account(pod: dict[str, Any], ns: str, lookup: Callable[[str], dict[str, Any] | None]) -> \
        dict[str, Any] | None:
    """The ServiceAccount plugin's lookup of a new pod's account (``serviceAccountName``, else the
    deprecated ``serviceAccount``, else ``default``): a 403 when it does not exist. Runs before the pod is
    validated, as mutating admission does; returns the account for ``admit_pod``."""
    spec = pod.get("spec")
    if not isinstance(spec, dict):
        return None
    name = spec.get("serviceAccountName") or spec.get("serviceAccount") or "default"
    account = lookup(name)
    # (``default`` is never refused: the real plugin waits for the controller that creates it in every
    # namespace, as the fake's does soon after the namespace is made)
    if account is None and name != "default":
        raise errors.forbidden("pods", "", pod["metadata"].get("name") or "", f"error looking up service account "
                               f'{ns}/{name}: serviceaccount "{name}" not found')
    return account


def admit_pod(pod: dict[str, Any], account: dict[str, Any] | None = None) -> None:
    """``account``: the pod's ServiceAccount (its image pull secrets are copied to a pod that names none;
    its ``automountServiceAccountToken`` is the default of the pod's)."""
    spec = pod.get("spec")
    if not isinstance(spec, dict):
        return
    if account is not None and not spec.get("imagePullSecrets") and account.get("imagePullSecrets"):
        spec["imagePullSecrets"] = [{"name": s.get("name") or ""} for s in account["imagePullSecrets"]
                                    if isinstance(s, dict)]
    if not spec.get("priorityClassName"):
        spec.setdefault("priority", 0)
        spec.setdefault("preemptionPolicy", "PreemptLowerPriority")
    spec["serviceAccountName"] = spec.get("serviceAccountName") or spec.get("serviceAccount") or "default"
    spec["serviceAccount"] = spec["serviceAccountName"]
    tolerations(spec)
    automount = spec.get("automountServiceAccountToken")
    if automount is False or (automount is None and (account or {}).get("automountServiceAccountToken") is False):
        return
    containers = [c for f in ("initContainers", "containers") for c in spec.get(f) or [] if isinstance(c, dict)]
    if any(m.get("mountPath") == MOUNT for c in containers for m in c.get("volumeMounts") or []):
        return
    name = "kube-api-access-" + "".join(RNG.choices(GEN_ALPHABET, k=5))
    spec.setdefault("volumes", []).append(_volume(name))
    for container in containers:
        container.setdefault("volumeMounts", []).append({"name": name, "readOnly": True, "mountPath": MOUNT})
