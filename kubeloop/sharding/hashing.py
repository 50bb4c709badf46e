"""The hash and the selector syntax of KEP-5866 server-side sharding (``shardSelector`` on list/watch).

- The API server hashes a field (``object.metadata.uid`` or ``object.metadata.namespace``) with 64-bit
  FNV-1a and keeps an object when ``start <= hash < end``; :func:`fnv1a64` is that hash, bit for bit.
- A range is a pair of ints ``[start, end)`` with ``0 <= start < end <= 2**64``.
- :func:`selector` writes a set of ranges as one selector: sorted, adjacent ranges merged, bounds as
  ``0x`` + 16 lowercase hex digits (the end may be ``0x10000000000000000``), joined with `` || ``. The
  server rejects any other spelling of a bound (``0x1``, ``0xFF...``), so we never emit one.
- :func:`parse_shard_info` reads the server's echo (``metadata.shardInfo.selector`` of a list), which
  tells whether the server filtered at all: an older server or one without the ``ShardedListAndWatch``
  gate ignores the parameter and echoes nothing, and then the caller must filter on the client.

Checked on a real v1.36.3 API server (tests/integration/test_sharding_serverside.py): the query
parameter is ``shardSelector`` on list and watch (streaming lists included); the echo is the selector
as the server re-writes it (our form, verbatim); custom resources are filtered but get no echo;
bookmarks carry none; a bad selector is refused with HTTP 500 "invalid shard selector" (short or upper
case bounds, other fields, mixed fields, ``start >= end``, ``&&``); at most 100,000 characters.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

SPACE = 1 << 64  # the size of the hash space; also the largest end bound
FIELDS = ("object.metadata.uid", "object.metadata.namespace")  # all the server accepts
_OFFSET = 0xCBF29CE484222325
_PRIME = 0x100000001B3
_MASK = SPACE - 1

Range = tuple[int, int]


def fnv1a64(value: str) -> int:
    """64-bit FNV-1a of ``value``'s UTF-8 bytes (Go's ``hash/fnv.New64a``, as the API server uses)."""
    h = _OFFSET
    for byte in value.encode():
        h = ((h ^ byte) * _PRIME) & _MASK
    return h


def hex_bound(value: int) -> str:
    """A bound as the server wants it: ``0x`` + 16 lowercase digits, or 17 for 2^64 exactly."""
    if not 0 <= value <= SPACE:
        raise ValueError(f"shard bound {value} is outside [0, 2^64]")
    return f"0x{value:016x}"


def merge(ranges: Iterable[Range]) -> list[Range]:
    """Sorted, with overlapping or adjacent ranges joined (``[0,5) + [5,9)`` is ``[0,9)``)."""
    out: list[Range] = []
    for start, end in sorted(ranges):
        if not 0 <= start < end <= SPACE:
            raise ValueError(f"shard range [{start}, {end}) is empty or outside [0, 2^64)")
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(end, out[-1][1]))
        else:
            out.append((start, end))
    return out


def selector(ranges: Iterable[Range], field: str = "object.metadata.uid") -> str:
    """The ``shardSelector`` for ``ranges`` on ``field``; empty string when they cover everything.

    No ranges at all is an error, not an empty selector: an empty selector means *every* object.
    """
    if field not in FIELDS:
        raise ValueError(f"shard field {field!r} is not one of {', '.join(FIELDS)}")
    merged = merge(ranges)
    if not merged:
        raise ValueError("no shard ranges: a member that owns nothing must not list or watch at all")
    if merged == [(0, SPACE)]:
        return ""
    return " || ".join(f"shardRange({field}, '{hex_bound(s)}', '{hex_bound(e)}')" for s, e in merged)


_CALL = re.compile(r"shardRange\(\s*([a-z.]+)\s*,\s*'0x([0-9a-f]{16,17})'\s*,\s*'0x([0-9a-f]{16,17})'\s*\)")


def parse_selector(text: str) -> tuple[str, list[Range]]:
    """(field, merged ranges) of a selector in the form :func:`selector` writes."""
    fields, ranges = set(), []
    for part in text.split("||"):
        m = _CALL.fullmatch(part.strip())
        if not m:
            raise ValueError(f"shard selector part {part.strip()!r} is not shardRange(field, '0x…', '0x…')")
        fields.add(m.group(1))
        ranges.append((int(m.group(2), 16), int(m.group(3), 16)))
    if len(fields) != 1 or not fields <= set(FIELDS):
        raise ValueError(f"shard selector uses fields {sorted(fields)}; it needs exactly one of {FIELDS}")
    return fields.pop(), merge(ranges)


def parse_shard_info(listing: Mapping[str, Any]) -> tuple[str, list[Range]] | None:
    """The selector a list response says the server applied, or None if the server did not filter."""
    info = (listing.get("metadata") or {}).get("shardInfo")
    if not info or not info.get("selector"):
        return None
    return parse_selector(info["selector"])


def contains(ranges: Iterable[Range], h: int) -> bool:
    """Whether hash ``h`` falls in one of ``ranges`` (the client-side filter, same rule as the server)."""
    return any(start <= h < end for start, end in ranges)
