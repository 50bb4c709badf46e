"""``status.conditions`` by Kubernetes API conventions."""

from __future__ import annotations

from typing import Any

from kubeloop import clock


def now_rfc3339() -> str:
    """The current time as Kubernetes writes timestamps (UTC, seconds)."""
    return clock.now().strftime("%Y-%m-%dT%H:%M:%SZ")


def set_condition(conditions: list[dict[str, Any]] | None, type: str, status: bool | str, reason: str,
                  message: str = "", observed_generation: int | None = None) -> list[dict[str, Any]]:
    """Returns a new list with the condition set. ``lastTransitionTime`` changes only when the status
    value changes, so a reconcile that finds nothing new writes nothing new."""
    value = status if isinstance(status, str) else ("True" if status else "False")
    out = [dict(c) for c in conditions or []]
    for cond in out:
        if cond.get("type") == type:
            if cond.get("status") != value:
                cond["lastTransitionTime"] = now_rfc3339()
            cond.update(status=value, reason=reason, message=message)
            if observed_generation is not None:
                cond["observedGeneration"] = observed_generation
            return out
    new: dict[str, Any] = {"type": type, "status": value, "reason": reason, "message": message,
           "lastTransitionTime": now_rfc3339()}
    if observed_generation is not None:
        new["observedGeneration"] = observed_generation
    out.append(new)
    return out


def get_condition(conditions: list[dict[str, Any]] | None, type: str) -> dict[str, Any] | None:
    """The condition of ``type``, or None."""
    return next((c for c in conditions or [] if c.get("type") == type), None)


def is_true(conditions: list[dict[str, Any]] | None, type: str) -> bool:
    """Whether the condition of ``type`` exists with status "True"."""
    cond = get_condition(conditions, type)
    return bool(cond and cond.get("status") == "True")
