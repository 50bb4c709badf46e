"""A CronJob's schedule as kube-apiserver parses it (robfig/cron v3's ``ParseStandard``: five fields or
a descriptor, an optional ``TZ=``/``CRON_TZ=`` prefix): ``error(schedule)`` is the parser's message, or ""
when it parses. Written from the parser's rules, so that a refused schedule is reported in its words."""

from __future__ import annotations

import re

_MONTHS = {m: i + 1 for i, m in enumerate(("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct",
                                           "nov", "dec"))}
_DAYS = {d: i for i, d in enumerate(("sun", "mon", "tue", "wed", "thu", "fri", "sat"))}
# (minimum, maximum, names) of minute, hour, day of month, month, day of week
_BOUNDS: tuple[tuple[int, int, dict[str, int] | None], ...] = (
    (0, 59, None), (0, 23, None), (1, 31, None), (1, 12, _MONTHS), (0, 6, _DAYS))
_DESCRIPTORS = ("@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly")


def error(schedule: str) -> str:
    if not schedule:
        return "empty spec string"
    if schedule.startswith(("TZ=", "CRON_TZ=")):
        space = schedule.find(" ")
        zone = schedule[schedule.index("=") + 1: space if space >= 0 else len(schedule) - 1]
        why = zone_error(zone)
        if why:
            return f"provided bad location {zone}: {why}"
        schedule = schedule[space:].strip() if space >= 0 else ""
    if schedule.startswith("@"):
        return _descriptor(schedule)
    fields = schedule.split()
    if len(fields) != 5:
        return f"expected exactly 5 fields, found {len(fields)}: [{' '.join(fields)}]"
    for field, bounds in zip(fields, _BOUNDS, strict=True):
        for expr in (e for e in field.split(",") if e):
            why = _range(expr, *bounds)
            if why:
                return why
    return ""


def _descriptor(spec: str) -> str:
    if spec in _DESCRIPTORS:
        return ""
    if spec.startswith("@every "):  # a Go duration; only its shape is checked here
        if re.fullmatch(r"([0-9]*\.?[0-9]+(ns|us|µs|ms|s|m|h))+", spec[7:]):
            return ""
        return f'failed to parse duration {spec}: time: invalid duration "{spec[7:]}"'
    return f"unrecognized descriptor: {spec}"


def _int(expr: str) -> tuple[int, str]:
    if not re.fullmatch(r"[+-]?[0-9]+", expr):
        return 0, f'failed to parse int from {expr}: strconv.Atoi: parsing "{expr}": invalid syntax'
    number = int(expr)
    return (0, f"negative number ({number}) not allowed: {expr}") if number < 0 else (number, "")


def _value(expr: str, names: dict[str, int] | None) -> tuple[int, str]:
    if names and expr.lower() in names:
        return names[expr.lower()], ""
    return _int(expr)


def _range(expr: str, low: int, high: int, names: dict[str, int] | None) -> str:
    range_and_step = expr.split("/")
    ends = range_and_step[0].split("-")
    if ends[0] in ("*", "?"):
        start, end = low, high
    else:
        start, why = _value(ends[0], names)
        if why:
            return why
        if len(ends) > 2:
            return f"too many hyphens: {expr}"
        end, why = _value(ends[1], names) if len(ends) == 2 else (start, "")
        if why:
            return why
    if len(range_and_step) > 2:
        return f"too many slashes: {expr}"
    step = 1
    if len(range_and_step) == 2:
        step, why = _int(range_and_step[1])
        if why:
            return why
        if len(ends) == 1:
            end = high
    if start < low:
        return f"beginning of range ({start}) below minimum ({low}): {expr}"
    if end > high:
        return f"end of range ({end}) above maximum ({high}): {expr}"
    if start > end:
        return f"beginning of range ({start}) beyond end of range ({end}): {expr}"
    return f"step of range should be a positive number: {expr}" if step == 0 else ""


def zone_error(zone: str) -> str:
    """Go's ``time.LoadLocation`` error for an IANA zone name ("" when known; "UTC" and "" are UTC)."""
    if zone in ("", "UTC", "Local"):
        return ""
    import zoneinfo  # (only for a CronJob with a time zone: not on the hot path)

    try:
        zoneinfo.ZoneInfo(zone)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        return f"unknown time zone {zone}"
    return ""
