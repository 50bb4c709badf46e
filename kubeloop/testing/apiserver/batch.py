"""A Job's and a CronJob's own fields (batch validation's ``validateJobSpec``, ``ValidateJobSpec``,
``validateCronJobSpec`` and ``validateCompletions``): counts that are not negative, an Indexed Job's
completions and limits, per-index backoff, pod failure and success policies, pod replacement policy,
``managedBy``, a manual selector that is there, a schedule robfig/cron parses and without ``TZ=``, a
time zone that exists, a concurrency policy; on update, a NonIndexed Job's completions and every Job's
completion mode, policies, per-index backoff and ``managedBy`` are fixed. Read from kube-apiserver
v1.35.4; restart policies, templates and the generated selector are checked in ``validation``."""

from __future__ import annotations

import re
from typing import Any

from kubeloop.testing.apiserver import cron, names, selectors
from kubeloop.testing.apiserver.causes import Cause, duplicate, invalid, listing, mapping, required, unsupported

_NONNEGATIVE = "must be greater than or equal to 0"
_COUNTS = ("parallelism", "completions", "activeDeadlineSeconds", "backoffLimit", "ttlSecondsAfterFinished",
           "backoffLimitPerIndex", "maxFailedIndexes")
_MODES = ["NonIndexed", "Indexed"]
_CONCURRENCY = ["Allow", "Forbid", "Replace"]
_ACTIONS = ["Count", "FailIndex", "FailJob", "Ignore"]
_EXIT_OPERATORS = ["In", "NotIn"]
_CONDITION_STATUSES = ["False", "True", "Unknown"]
_REPLACEMENT = ["Failed", "TerminatingOrFailed"]
_INDEXED_LIMIT = 100_000  # parallelism, failed indexes and the soft limit of completions of an Indexed Job
_HIGH_LIMIT = 10_000  # parallelism and failed indexes above that soft limit, with per-index backoff
_HTTP_PATH = re.compile(r"[A-Za-z0-9/\-._~%!$&'()*+,;=:]+")


def _spec(holder: Any) -> dict[str, Any]:
    spec = holder.get("spec") if isinstance(holder, dict) else None
    return spec if isinstance(spec, dict) else {}


def _nonnegative(spec: dict[str, Any], path: str, fields: tuple[str, ...]) -> list[Cause]:
    return [invalid(f"{path}.{f}", spec[f], _NONNEGATIVE) for f in fields
            if isinstance(spec.get(f), int) and not isinstance(spec.get(f), bool) and spec[f] < 0]


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def job_spec(spec: dict[str, Any], path: str) -> list[Cause]:
    """What a Job's and a CronJob's job template share."""
    out = _nonnegative(spec, path, _COUNTS)
    mode = spec.get("completionMode")
    per_index, failed = _int(spec.get("backoffLimitPerIndex")), _int(spec.get("maxFailedIndexes"))
    if spec.get("maxFailedIndexes") is not None and spec.get("backoffLimitPerIndex") is None:
        out.append(required(f"{path}.backoffLimitPerIndex", "when maxFailedIndexes is specified"))
    out += _managed_by(spec.get("managedBy"), f"{path}.managedBy")
    if mode is not None and mode not in _MODES:
        out.append(unsupported(f"{path}.completionMode", mode, _MODES))
    if mode == "Indexed":
        out += _indexed(spec, path)
    elif mode in (None, "NonIndexed"):
        out += [invalid(f"{path}.{name}", value, "requires indexed completion mode")
                for name, value in (("backoffLimitPerIndex", per_index), ("maxFailedIndexes", failed))
                if spec.get(name) is not None]
    if isinstance(spec.get("podFailurePolicy"), dict):
        out += _pod_failure_policy(spec, f"{path}.podFailurePolicy")
    if isinstance(spec.get("successPolicy"), dict):
        if mode != "Indexed":
            out.append(invalid(f"{path}.successPolicy", _go_success_policy(spec["successPolicy"]),
                               "requires indexed completion mode"))
        else:
            out += _success_policy(spec, f"{path}.successPolicy")
    replacement = spec.get("podReplacementPolicy")
    if replacement is not None:
        allowed = ["Failed"] if spec.get("podFailurePolicy") is not None else _REPLACEMENT
        out += [unsupported(f"{path}.podReplacementPolicy", replacement, allowed)] if replacement not in allowed else []
    return out


def _managed_by(value: Any, path: str) -> list[Cause]:
    """``IsDomainPrefixedPath`` and at most 63 characters."""
    if not isinstance(value, str):
        return []
    if not value:
        return [required(path)]
    host, _, rest = value.partition("/")
    if not host or not rest:
        out = [invalid(path, value, 'must be a domain-prefixed path (such as "acme.io/foo")')]
    else:
        out = [invalid(path, host, e) for e in names.dns1123_subdomain(host)]
        if not _HTTP_PATH.fullmatch(rest):
            out.append(invalid(path, rest, "Invalid path (regex used for validation is "
                               f"'{_HTTP_PATH.pattern}')"))
    return out + ([("FieldValueTooLong", path, "Too long: may not be more than 63 bytes")] if len(value) > 63 else [])


def _indexed(spec: dict[str, Any], path: str) -> list[Cause]:
    completions, parallelism = _int(spec.get("completions")), _int(spec.get("parallelism"))
    per_index, failed = spec.get("backoffLimitPerIndex"), _int(spec.get("maxFailedIndexes"))
    out = [] if spec.get("completions") is not None else [
        required(f"{path}.completions", "when completion mode is Indexed")]
    if parallelism is not None and parallelism > _INDEXED_LIMIT:
        out.append(invalid(f"{path}.parallelism", parallelism, f"must be less than or equal to {_INDEXED_LIMIT} "
                           "when completion mode is Indexed"))
    if completions is not None and failed is not None and failed > completions:
        out.append(invalid(f"{path}.maxFailedIndexes", failed, "must be less than or equal to completions"))
    if failed is not None and failed > _INDEXED_LIMIT:
        out.append(invalid(f"{path}.maxFailedIndexes", failed, f"must be less than or equal to {_INDEXED_LIMIT}"))
    if completions is not None and completions > _INDEXED_LIMIT and per_index is not None:
        high = f"must be less than or equal to {_HIGH_LIMIT} when completions are above {_INDEXED_LIMIT} and used " \
            "with backoff limit per index"
        if spec.get("maxFailedIndexes") is None:
            out.append(required(f"{path}.maxFailedIndexes", f"must be specified when completions is above "
                                f"{_INDEXED_LIMIT}"))
        if parallelism is not None and parallelism > _HIGH_LIMIT:
            out.append(invalid(f"{path}.parallelism", parallelism, high))
        if failed is not None and failed > _HIGH_LIMIT:
            out.append(invalid(f"{path}.maxFailedIndexes", failed, high))
    return out


def _go_quoted(values: list[str]) -> str:
    """A list as Go's ``%q`` prints a slice: quoted, space-separated."""
    return " ".join(f'"{v}"' for v in values)


def _too_many(path: str, n: int, most: int) -> list[Cause]:
    return [("FieldValueTooMany", path, f"Too many: {n}: must have at most {most} items")] if n > most else []


def _pod_failure_policy(spec: dict[str, Any], path: str) -> list[Cause]:
    rules = listing(spec["podFailurePolicy"].get("rules"))
    out = _too_many(f"{path}.rules", len(rules), 20)
    pod = mapping(mapping(spec.get("template")).get("spec"))
    containers = {mapping(c).get("name") for c in listing(pod.get("containers")) + listing(pod.get("initContainers"))}
    for i, rule in enumerate(rules):
        out += _pod_failure_rule(spec, mapping(rule), f"{path}.rules[{i}]", containers)
    return out


def _pod_failure_rule(spec: dict[str, Any], rule: dict[str, Any], path: str, containers: set[Any]) -> list[Cause]:
    action, exits, conditions = rule.get("action"), rule.get("onExitCodes"), listing(rule.get("onPodConditions"))
    listed = _go_quoted(_ACTIONS)
    out: list[Cause] = []
    if not action:
        out.append(required(f"{path}.action", f"valid values: [{listed}]"))
    elif action == "FailIndex":
        if spec.get("backoffLimitPerIndex") is None:
            out.append(invalid(f"{path}.action", action, "requires the backoffLimitPerIndex to be set"))
    elif action not in _ACTIONS:
        out.append(unsupported(f"{path}.action", action, _ACTIONS))
    if isinstance(exits, dict):
        out += _on_exit_codes(exits, f"{path}.onExitCodes", containers)
    out += _too_many(f"{path}.onPodConditions", len(conditions), 20)
    for j, pattern in enumerate(conditions):
        out += _on_condition(mapping(pattern), f"{path}.onPodConditions[{j}]")
    if isinstance(exits, dict) and conditions:
        out.append(("FieldValueInvalid", path, "Invalid value: specifying both OnExitCodes and OnPodConditions "
                    "is not supported"))
    if exits is None and not conditions:
        out.append(("FieldValueInvalid", path, "Invalid value: specifying one of OnExitCodes and OnPodConditions "
                    "is required"))
    return out


def _on_condition(pattern: dict[str, Any], path: str) -> list[Cause]:
    kind, status = pattern.get("type"), pattern.get("status")
    out = [invalid(f"{path}.type", kind or "", e) for e in names.qualified_name(kind if isinstance(kind, str) else "")]
    if not status:
        listed = _go_quoted(_CONDITION_STATUSES)
        out.append(required(f"{path}.status", f"valid values: [{listed}]"))
    elif status not in _CONDITION_STATUSES:
        out.append(unsupported(f"{path}.status", status, _CONDITION_STATUSES))
    return out


def _on_exit_codes(exits: dict[str, Any], path: str, containers: set[Any]) -> list[Cause]:
    operator, values, name = exits.get("operator"), exits.get("values"), exits.get("containerName")
    out: list[Cause] = []
    if not operator:
        listed = _go_quoted(_EXIT_OPERATORS)
        out.append(required(f"{path}.operator", f"valid values: [{listed}]"))
    elif operator not in _EXIT_OPERATORS:
        out.append(unsupported(f"{path}.operator", operator, _EXIT_OPERATORS))
    if name is not None and name not in containers:
        out.append(invalid(f"{path}.containerName", name, "must be one of the container or initContainer names in "
                           "the pod template"))
    codes = [v for v in listing(values) if _int(v) is not None]
    if not codes:
        out.append(invalid(f"{path}.values", values, "at least one value is required"))
    out += _too_many(f"{path}.values", len(codes), 255)
    seen: set[int] = set()
    for j, code in enumerate(codes):
        if operator == "In" and code == 0:
            out.append(invalid(f"{path}.values[{j}]", code, "must not be 0 for the In operator"))
        out += [duplicate(f"{path}.values[{j}]", code)] if code in seen else []
        seen.add(code)
    if codes != sorted(codes):
        out.append(invalid(f"{path}.values", codes, "must be ordered"))
    return out


def _go_success_policy(policy: dict[str, Any]) -> dict[str, Any]:
    """The internal struct as Go's validation prints it (json.Marshal of fields without tags)."""
    return {"Rules": [{"SucceededIndexes": mapping(r).get("succeededIndexes"),
                       "SucceededCount": mapping(r).get("succeededCount")} for r in listing(policy.get("rules"))]}


def _success_policy(spec: dict[str, Any], path: str) -> list[Cause]:
    rules = listing(spec["successPolicy"].get("rules"))
    out = [] if rules else [required(f"{path}.rules", "at least one rules must be specified when the "
                                     "successPolicy is specified")]
    out += _too_many(f"{path}.rules", len(rules), 20)
    completions = _int(spec.get("completions")) or 0
    for i, rule in enumerate(rules):
        out += _success_rule(mapping(rule), f"{path}.rules[{i}]", completions)
    return out


def _success_rule(rule: dict[str, Any], path: str, completions: int) -> list[Cause]:
    indexes, count = rule.get("succeededIndexes"), _int(rule.get("succeededCount"))
    out = [] if indexes is not None or rule.get("succeededCount") is not None else [
        required(path, "at least one of succeededCount or succeededIndexes must be specified")]
    total = 0
    if isinstance(indexes, str):
        if len(indexes) > 64 * 1024:
            out.append(("FieldValueTooLong", f"{path}.succeededIndexes", f"Too long: may not be more than {64 * 1024} "
                        "bytes"))
        total, why = _indexes(indexes, completions)
        out += [invalid(f"{path}.succeededIndexes", indexes, f"error parsing succeededIndexes: {why}")] if why else []
    if count is not None:
        out += _nonnegative(rule, path, ("succeededCount",))
        if count > completions:
            out.append(invalid(f"{path}.succeededCount", count, f"must be less than or equal to {completions} (the "
                               "number of specified completions)"))
        if indexes is not None and count > total:
            out.append(invalid(f"{path}.succeededCount", count, f"must be less than or equal to {total} (the number "
                               "of indexes in the specified succeededIndexes field)"))
    return out


def _indexes(text: str, completions: int) -> tuple[int, str]:
    """(how many indexes, why not) of an interval list such as ``0,2-4`` (``validateIndexesFormat``)."""
    total, last = 0, None
    for interval in text.split(",") if text else []:
        limits = interval.split("-")
        if len(limits) > 2:
            return 0, (f'the fragment "{interval}" violates the requirement that an index interval can have at most '
                       "two parts separated by '-'")
        bounds = []
        for limit in limits:
            if not re.fullmatch(r"[+-]?\d+", limit):
                return 0, f'cannot convert string to integer for index: "{limit}"'
            if int(limit) >= completions:
                return 0, f'too large index: "{limit}"'
            bounds.append(int(limit))
        low, high = bounds[0], bounds[-1]
        if len(bounds) == 2 and low >= high:
            return 0, f"non-increasing order, previous: {low}, current: {high}"
        if last is not None and last >= low:
            return 0, f"non-increasing order, previous: {last}, current: {low}"
        total, last = total + high - low + 1, high
    return total, ""


def job(obj: dict[str, Any]) -> list[Cause]:
    spec = _spec(obj)
    out = job_spec(spec, "spec")
    if spec.get("selector") is None:  # (generated unless the Job asks to choose its own)
        labels = ((spec.get("template") or {}).get("metadata") or {}).get("labels") if isinstance(
            spec.get("template"), dict) else None
        out += [required("spec.selector"), invalid("spec.template.metadata.labels", labels or None,
                                                   "`selector` does not match template `labels`")]
    else:  # (a generated one is added to what was sent: the template must match it too)
        labels = mapping(mapping(spec.get("template")).get("metadata")).get("labels")
        out += selectors.label_selector_causes(spec["selector"], "spec.selector")
        if selectors.label_selector_matches(spec["selector"], mapping(labels)) is False:  # (a Go map: keys sorted)
            out.append(invalid("spec.template.metadata.labels", dict(sorted(labels.items())) if isinstance(
                labels, dict) else labels,
                               "`selector` does not match template `labels`"))
    name, completions = (obj.get("metadata") or {}).get("name"), _int(spec.get("completions"))
    if spec.get("completionMode") == "Indexed" and completions and isinstance(name, str):
        host = f"{name}-{completions - 1}"  # the last index's pod hostname
        if names.dns1123_label(host):
            out.append(invalid("metadata.name", name, f"will not able to create pod with invalid DNS label: {host}"))
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
    for name in ("backoffLimitPerIndex", "managedBy"):
        if after.get(name) != before.get(name):
            out.append(invalid(f"spec.{name}", after.get(name), "field is immutable"))
    for name, shown in (("podFailurePolicy", _go_failure_policy), ("successPolicy", _go_success_policy)):
        if after.get(name) != before.get(name):
            out.append(invalid(f"spec.{name}", shown(mapping(after.get(name))) if after.get(name) is not None
                               else None, "field is immutable"))
    return out


def _go_failure_policy(policy: dict[str, Any]) -> dict[str, Any]:
    def exits(e: Any) -> Any:
        return None if e is None else {"ContainerName": mapping(e).get("containerName"),
                                       "Operator": mapping(e).get("operator", ""), "Values": mapping(e).get("values")}
    return {"Rules": [{"Action": mapping(r).get("action", ""), "OnExitCodes": exits(mapping(r).get("onExitCodes")),
                       "OnPodConditions": [{"Type": mapping(p).get("type", ""), "Status": mapping(p).get("status", "")}
                                           for p in listing(mapping(r).get("onPodConditions"))] or None}
                      for r in listing(policy.get("rules"))]}


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
