"""Go's ``time.Parse`` for the two layouts ``metav1`` decodes timestamps with, and the form it writes them in:

- ``Time`` (creationTimestamp, conditions' lastTransitionTime, ...): RFC 3339, written in UTC to the second;
- ``MicroTime`` (a Lease's renewTime, an Event's eventTime): RFC 3339 with exactly six fractional digits,
  written in UTC to the microsecond.

``parse`` returns the instant or Go's error message (``parsing time "x" as "<layout>": cannot parse ...``,
``... month out of range``, ``... extra text: ...``), element by element as Go's parser meets them.
"""

from __future__ import annotations

import calendar
import datetime as dt
import json

RFC3339 = "2006-01-02T15:04:05Z07:00"
RFC3339_MICRO = "2006-01-02T15:04:05.000000Z07:00"
_ELEMENTS = {RFC3339: ["2006", "-", "01", "-", "02", "T", "15", ":", "04", ":", "05", "Z07:00"],
             RFC3339_MICRO: ["2006", "-", "01", "-", "02", "T", "15", ":", "04", ":", "05", ".000000", "Z07:00"]}
_LITERAL = {"-", "T", ":"}


class _Bad(Exception):
    def __init__(self, rest: str, element: str = "", message: str = "") -> None:
        self.rest, self.element, self.message = rest, element, message


def _q(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def parse(value: str, layout: str) -> dt.datetime | str:
    """The instant ``value`` names in ``layout`` (aware, UTC), or Go's error message."""
    try:
        return _parse(value, layout)
    except _Bad as bad:
        if bad.message:
            return f"parsing time {_q(value)}: {bad.message}"
        return f"parsing time {_q(value)} as {_q(layout)}: cannot parse {_q(bad.rest)} as {_q(bad.element)}"


def _digits(rest: str, n: int, element: str) -> tuple[int, str]:
    if len(rest) < n or not rest[:n].isascii() or not rest[:n].isdigit():
        raise _Bad(rest, element)
    return int(rest[:n]), rest[n:]


def _parse(value: str, layout: str) -> dt.datetime:
    rest, got, micro, offset = value, {}, 0, 0
    for element in _ELEMENTS[layout]:
        if element in _LITERAL:
            if not rest.startswith(element):
                raise _Bad(rest, element)
            rest = rest[1:]
        elif element == "2006":
            got["year"], rest = _digits(rest, 4, element)
        elif element == "15":  # one or two digits
            width = 2 if len(rest) > 1 and rest[1].isdigit() else 1
            got["hour"], rest = _digits(rest, width, element)
            _in_range(element, got["hour"])
        elif element in ("01", "02", "04", "05"):
            got[element], rest = _digits(rest, 2, element)
            _in_range(element, got[element])
            if element == "05" and layout == RFC3339 and rest[:1] == "." and rest[1:2].isdigit():
                fraction = rest[1:len(rest) - len(rest[1:].lstrip("0123456789"))]
                micro, rest = int((fraction + "000000")[:6]), rest[1 + len(fraction):]
        elif element == ".000000":
            if len(rest) < 7 or rest[0] != "." or not rest[1:7].isdigit():
                raise _Bad(rest, element)
            micro, rest = int(rest[1:7]), rest[7:]
        else:  # Z07:00
            if rest[:1] == "Z":
                rest = rest[1:]
            elif len(rest) >= 6 and rest[0] in "+-" and rest[3] == ":" and rest[1:3].isdigit() and rest[4:6].isdigit():
                offset = (1 if rest[0] == "+" else -1) * (int(rest[1:3]) * 60 + int(rest[4:6]))
                rest = rest[6:]
            else:
                raise _Bad(rest, element)
    if rest:
        raise _Bad(rest, message=f"extra text: {_q(rest)}")
    if not 1 <= got["02"] <= calendar.monthrange(got["year"] or 2000, got["01"])[1]:  # (checked last)
        raise _Bad("", message="day out of range")
    zone = dt.timezone(dt.timedelta(minutes=offset))
    return dt.datetime(got["year"], got["01"], got["02"], got["hour"], got["04"], got["05"], micro, zone)


_RANGES = {"01": (1, 12, "month"), "15": (0, 23, "hour"), "04": (0, 59, "minute"), "05": (0, 59, "second")}


def _in_range(element: str, value: int) -> None:
    """Go checks a month, hour, minute or second as soon as it is read (a day only at the end)."""
    low, high, word = _RANGES.get(element, (value, value, ""))
    if not low <= value <= high:
        raise _Bad("", message=f"{word} out of range")


def written(instant: dt.datetime, layout: str) -> str:
    """The form ``metav1`` marshals: UTC, to the second (Time) or the microsecond (MicroTime)."""
    utc = instant.astimezone(dt.UTC)
    if layout == RFC3339:
        return utc.strftime("%Y-%m-%dT%H:%M:%SZ")
    return utc.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
