"""A Job's and a CronJob's own fields (batch validation's ``validateJobSpec``, ``ValidateJobSpec``,
``validateCronJobSpec`` and ``validateCompletions``): counts that are not negative, an Indexed Job's
completions, a manual selector that is there, a schedule robfig/cron parses and without ``TZ=``, a
time zone that exists, a concurrency policy; on update, a NonIndexed Job's completions and every Job's
completion mode are fixed. Read from kube-apiserver v1.35.4; restart policies, templates and the
generated selector are checked in ``validation``."""

from __future__ import annotations

from typing import Any

from kubeloop.testing.apiserver import cron
from kubeloop.testing.apiserver.causes import Cause, invalid, required, unsupported

_NONNEGATIVE = "must be greater than or equal to 0"
_COUNTS = ("parallelism", "completions", "activeDeadlineSeconds", "backoffLimit", "ttlSecondsAfterFinished",
           "backoffLimitPerIndex", "maxFailedIndexes")
_MODES = ["NonIndexed", "Indexed"]
_CONCURRENCY = ["Allow", "Forbid", "Replace"]


def _spec(holder: Any) -> dict[str, Any]:
    spec = holder.get("spec") if isinstance(holder, dict) else None
    return spec if isinstance(spec, dict) else {}


def _nonnegative(spec: dict[str, Any], path: str, fields: tuple[str, ...]) -> list[Cause]:
    return [invalid(f"{path}.{f}", spec[f], _NONNEGATIVE) for f in fields
            if isinstance(spec.get(f), int) and not isinstance(spec.get(f), bool) and spec[f] < 0]


def job_spec(spec: dict[str, Any], path: str) -> list[Cause]:
    """What a Job's and a CronJob's job template share."""
    out = _nonnegative(spec, path, _COUNTS)
    mode = spec.get("completionMode")
    if mode is not None and mode not in _MODES:
        out.append(unsupported(f"{path}.completionMode", mode, _MODES))
    if mode == "Indexed" and spec.get("completions") is None:
        out.append(required(f"{path}.completions", "when completion mode is Indexed"))
    return out


def job(obj: dict[str, Any]) -> list[Cause]:
    spec = _spec(obj)
    out = job_spec(spec, "spec")
    if spec.get("selector") is None:  # (generated unless the Job asks to choose its own)
        labels = ((spec.get("template") or {}).get("metadata") or {}).get("labels") if isinstance(
            spec.get("template"), dict) else None
        out += [required("spec.selector"), invalid("spec.template.metadata.labels", labels or None,
                                                   "`selector` does not match template `labels`")]
    return out


def job_update(old: dict[str, Any], new: dict[str, Any]) -> list[Cause]:
    before, after = _spec(old), _spec(new)
    out: list[Cause] = []
    if after.get("completionMode") != "Indexed":
        if after.get("completions") != before.get("completions"):
            out.append(invalid("spec.completions", after.get("completions"), "field is immutable"))
    elif after.get("completions") not in (None, before.get("completions")) and \
            after.get("completions") != after.get("parallelism"):
        out.append(invalid("spec.completions", after["completions"], "can only be modified in tandem with "
                           "spec.parallelism"))
    if after.get("completionMode") != before.get("completionMode"):
        out.append(invalid("spec.completionMode", after.get("completionMode"), "field is immutable"))
    return out


def cronjob(obj: dict[str, Any]) -> list[Cause]:
    spec = _spec(obj)
    out: list[Cause] = []
    schedule = spec.get("schedule")
    if not schedule:
        out.append(required("spec.schedule"))
    else:
        why = cron.error(schedule)
        out += [invalid("spec.schedule", schedule, why)] if why else []
        if "TZ" in schedule:
            out.append(invalid("spec.schedule", schedule, "cannot use TZ or CRON_TZ in schedule, use timeZone "
                               "field instead"))
    out += _nonnegative(spec, "spec", ("startingDeadlineSeconds", "successfulJobsHistoryLimit",
                                       "failedJobsHistoryLimit"))
    out += _time_zone(spec.get("timeZone"))
    policy = spec.get("concurrencyPolicy")
    if not policy:
        out.append(required("spec.concurrencyPolicy"))
    elif policy not in _CONCURRENCY:
        out.append(unsupported("spec.concurrencyPolicy", policy, _CONCURRENCY))
    return out + job_spec(_spec(spec.get("jobTemplate")), "spec.jobTemplate.spec")


def _time_zone(zone: Any) -> list[Cause]:
    if not isinstance(zone, str):
        return []
    if not zone:
        return [invalid("spec.timeZone", zone, "timeZone must be nil or non-empty string")]
    import re

    for part in zone.split("/"):
        if part in (".", "..") or part.startswith("-") or not re.fullmatch(r"[A-Za-z.\-_0-9+]{1,14}", part):
            return [invalid("spec.timeZone", zone, f"unknown time zone {zone}")]
    out = [invalid("spec.timeZone", zone, "timeZone must be an explicit time zone as defined in "
                   "https://www.iana.org/time-zones")] if zone.lower() == "local" else []
    why = cron.zone_error(zone)
    return out + ([invalid("spec.timeZone", zone, why)] if why else [])
