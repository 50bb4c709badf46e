"""The ImmortalContainer's status, computed from what the reconcile found (pure, unit-tested).

``startTimes`` counts a pod once, when its UID first appears in ``podUID``: whether the status write
comes right after the create or only after an operator restart, a retry or a stale cache can never
count the same pod twice.
"""

from __future__ import annotations

from dataclasses import dataclass

from kubeloop import Obj, conditions
from kubeloop.operators.immortal import pods
from kubeloop.operators.immortal.models import HISTORY_LIMIT


@dataclass(frozen=True)
class Report:
    """The conditions a reconcile step leads to: (status, reason, message) of Available and Progressing,
    and the ReplicaFailure (reason, message) if something blocks the pod (None removes the condition,
    as Deployments do)."""

    available: tuple[bool, str, str]
    progressing: tuple[bool, str, str]
    failure: tuple[str, str] | None = None


def running(pod: Obj) -> Report:
    name = pod["metadata"]["name"]
    if pods.is_ready(pod):
        return Report((True, "PodReady", f"pod {name} is Ready"), (True, "PodAvailable", f"pod {name} runs"))
    return Report((False, "PodNotReady", f"pod {name} is {pods.phase(pod)}"),
                  (True, "PodStarting", f"waiting for pod {name} to be Ready"))


def no_pod(reason: str, message: str, failure: tuple[str, str] | None = None) -> Report:
    """Stalled without a running pod: backing off, refused, namespace going away, name taken."""
    return Report((False, "NoPod", "no pod is running"), (False, reason, message), failure)


def going(pod: Obj, available_reason: str, progressing_reason: str, message: str) -> Report:
    """Progress is under way: the pod is going away (terminating, finished, replaced)."""
    return Report((False, available_reason, f"pod {pod['metadata']['name']} is {pods.phase(pod)}"),
                  (True, progressing_reason, message))


def record_start(current: Obj, pod: Obj, reason: str) -> Obj:
    """The status fields that change when ``pod`` is seen: a new UID is one more start."""
    meta = pod["metadata"]
    if current.get("podUID") == meta["uid"]:
        return {"currentPod": meta["name"]}
    entry = {"pod": meta["name"], "uid": meta["uid"], "reason": reason,
             "time": meta.get("creationTimestamp") or conditions.now_rfc3339()}
    history = [*(current.get("history") or []), entry][-HISTORY_LIMIT:]
    return {"currentPod": meta["name"], "podUID": meta["uid"],
            "startTimes": int(current.get("startTimes") or 0) + 1, "history": history}


def compute(current: Obj, generation: int | None, pod: Obj | None, report: Report,
            start_reason: str = "Created") -> Obj:
    """The status to write. ``pod``: our pod if there is one (counted if new); ``start_reason``: why it
    was started, for the history."""
    status: Obj = {"observedGeneration": generation}
    if pod is not None:
        status.update(record_start(current, pod, start_reason))
    status["phase"] = pods.phase(pod) if pod is not None else None  # None removes the field
    conds = current.get("conditions")
    conds = conditions.set_condition(conds, "Available", *report.available, generation)
    conds = conditions.set_condition(conds, "Progressing", *report.progressing, generation)
    if report.failure:
        conds = conditions.set_condition(conds, "ReplicaFailure", True, *report.failure, generation)
    else:
        conds = [c for c in conds if c.get("type") != "ReplicaFailure"]
    status["conditions"] = conds
    return status


def changes(current: Obj, wanted: Obj) -> Obj:
    """Only the fields that differ (a steady state writes nothing)."""
    return {k: v for k, v in wanted.items() if current.get(k) != v}
