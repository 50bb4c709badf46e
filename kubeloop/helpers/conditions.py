"""``status.conditions`` by Kubernetes API conventions."""

from __future__ import annotations

import re
from typing import Any

from kubeloop import clock
from kubeloop.resources import condition_rules as rules

_TYPE, _REASON = re.compile(rules.TYPE_PATTERN), re.compile(rules.REASON_PATTERN)
_CUT = " … (cut)"


def now_rfc3339() -> str:
    """The current time as Kubernetes writes timestamps (UTC, seconds)."""
    return clock.now().strftime("%Y-%m-%dT%H:%M:%SZ")


def set_condition(conditions: list[dict[str, Any]] | None, type: str, status: bool | str, reason: str,
                  message: str = "", observed_generation: int | None = None) -> list[dict[str, Any]]:
    """Returns a new list with the condition set. ``lastTransitionTime`` changes only when the status
    value changes, so a reconcile that finds nothing new writes nothing new.

    ``type`` and ``reason`` are checked against metav1.Condition's rules (a bad one is the operator's
    bug: the API server would refuse every status write); a ``message`` longer than its 32,768
    characters is cut (it often quotes an error or the object's own input)."""
    _check(type, reason)
    if len(message) > rules.MESSAGE_MAX:
        message = message[:rules.MESSAGE_MAX - len(_CUT)] + _CUT
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
    if len(out) >= rules.CONDITIONS_MAX:
        raise ValueError(f"condition type {type!r}: the object has {len(out)} conditions already, the most a "
                         f"kubeloop CRD admits ({rules.CONDITIONS_MAX}); use fewer condition types")
    out.append(new)
    return out


def _check(type: str, reason: str) -> None:
    if len(type) > rules.TYPE_MAX or not _TYPE.match(type):
        raise ValueError(f"condition type {type!r}: must be a CamelCase word or a qualified name such as "
                         f"example.com/Ready (at most {rules.TYPE_MAX} characters), as metav1.Condition "
                         "requires")
    if len(reason) > rules.REASON_MAX or not _REASON.match(reason):
        raise ValueError(f"condition reason {reason!r} (type {type}): must be one CamelCase word such as "
                         f"InvalidSpec (letters, digits, '_', ',' or ':'; at most {rules.REASON_MAX} "
                         "characters), as metav1.Condition requires; put the explanation in the message")


def get_condition(conditions: list[dict[str, Any]] | None, type: str) -> dict[str, Any] | None:
    """The condition of ``type``, or None."""
    return next((c for c in conditions or [] if c.get("type") == type), None)


def is_true(conditions: list[dict[str, Any]] | None, type: str) -> bool:
    """Whether the condition of ``type`` exists with status "True"."""
    cond = get_condition(conditions, type)
    return bool(cond and cond.get("status") == "True")
