"""The defaults kube-apiserver sets when it decodes a workload or a pod, so that they are stored, returned
and owned by the writer (an apply that changes one conflicts with the creator, as on the real server).

Read from kube-apiserver v1.35.4's defaulting functions (``pkg/apis/core/v1/defaults.go``
``SetDefaults_PodSpec``/``_Container``/``_Pod``, ``pkg/apis/apps/v1/defaults.go``,
``pkg/apis/batch/v1/defaults.go``, with 1.35's default feature gates) and checked against what that server
returns for a minimal object of each kind. Only what a value left empty gets. Not modelled: a container's
defaults (pull policy, termination message, port protocol: the fake owns lists whole, and a defaulted
member would make every later apply of the list conflict, where the real server merges containers by
name) and admission plugins' additions to a Pod (service account volume, tolerations, priority).

- ``apply(kind_key, obj)`` fills in place what is missing; a value of the wrong type is left to validation.
"""

from __future__ import annotations

from typing import Any

Obj = dict[str, Any]


def apply(key: tuple[str, str], obj: Obj) -> None:
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    fill = _KINDS.get(key)
    if fill is not None:
        fill(spec)


def _pod(spec: Obj) -> None:
    _pod_spec(spec)
    spec.setdefault("enableServiceLinks", True)


def _pod_spec(spec: Any) -> None:
    if not isinstance(spec, dict):
        return
    for field, value in (("dnsPolicy", "ClusterFirst"), ("restartPolicy", "Always"),
                         ("schedulerName", "default-scheduler"), ("terminationGracePeriodSeconds", 30)):
        if spec.get(field) in (None, ""):
            spec[field] = value
    if spec.get("securityContext") is None:
        spec["securityContext"] = {}


def _template(holder: Obj) -> None:
    template = holder.get("template")
    if template is None:
        return
    if isinstance(template, dict):
        if template.get("metadata") is None:
            template["metadata"] = {}
        _pod_spec(template.get("spec"))


def _rolling(spec: Obj, field: str, max_unavailable: int | str, max_surge: int | str) -> None:
    """A Deployment's or DaemonSet's strategy: RollingUpdate, with its bounds when it is one."""
    strategy = spec.setdefault(field, {})
    if isinstance(strategy, dict):
        strategy.setdefault("type", "RollingUpdate")
        rolling = strategy.setdefault("rollingUpdate", {}) if strategy["type"] == "RollingUpdate" else None
        if isinstance(rolling, dict):
            rolling.setdefault("maxUnavailable", max_unavailable)
            rolling.setdefault("maxSurge", max_surge)


def _deployment(spec: Obj) -> None:
    spec.setdefault("replicas", 1)
    _rolling(spec, "strategy", "25%", "25%")
    spec.setdefault("revisionHistoryLimit", 10)
    spec.setdefault("progressDeadlineSeconds", 600)
    _template(spec)


def _statefulset(spec: Obj) -> None:
    spec.setdefault("podManagementPolicy", "OrderedReady")
    strategy = spec.setdefault("updateStrategy", {})
    if isinstance(strategy, dict):
        if not strategy.get("type"):
            strategy["type"] = "RollingUpdate"
            strategy.setdefault("rollingUpdate", {})
        rolling = strategy.get("rollingUpdate")
        if strategy["type"] == "RollingUpdate" and isinstance(rolling, dict):
            rolling.setdefault("partition", 0)  # (maxUnavailable only behind a gate that is off in 1.35)
    retention = spec.setdefault("persistentVolumeClaimRetentionPolicy", {})
    if isinstance(retention, dict):
        for field in ("whenDeleted", "whenScaled"):
            retention[field] = retention.get(field) or "Retain"
    spec.setdefault("replicas", 1)
    spec.setdefault("revisionHistoryLimit", 10)
    _template(spec)


def _daemonset(spec: Obj) -> None:
    _rolling(spec, "updateStrategy", 1, 0)
    spec.setdefault("revisionHistoryLimit", 10)
    _template(spec)


def _job(spec: Obj) -> None:
    if spec.get("completions") is None and spec.get("parallelism") is None:
        spec["completions"] = 1
    spec.setdefault("parallelism", 1)
    spec.setdefault("backoffLimit", 2147483647 if spec.get("backoffLimitPerIndex") is not None else 6)
    spec.setdefault("completionMode", "NonIndexed")
    spec.setdefault("suspend", False)
    spec.setdefault("podReplacementPolicy", "Failed" if spec.get("podFailurePolicy") is not None
                    else "TerminatingOrFailed")
    spec.setdefault("manualSelector", False)
    _template(spec)


def _cronjob(spec: Obj) -> None:
    spec.setdefault("concurrencyPolicy", "Allow")
    spec.setdefault("suspend", False)
    spec.setdefault("successfulJobsHistoryLimit", 3)
    spec.setdefault("failedJobsHistoryLimit", 1)
    job = spec.get("jobTemplate")
    if isinstance(job, dict):
        if job.get("metadata") is None:
            job["metadata"] = {}
        if isinstance(job.get("spec"), dict):
            _template(job["spec"])  # (the Job's own defaults come when the CronJob creates it)


_KINDS = {
    ("", "pods"): _pod,
    ("apps", "deployments"): _deployment,
    ("apps", "statefulsets"): _statefulset,
    ("apps", "daemonsets"): _daemonset,
    ("batch", "jobs"): _job,
    ("batch", "cronjobs"): _cronjob,
}
