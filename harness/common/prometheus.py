"""Samples of the Prometheus text exposition format, as served on /metrics by an operator or the API
server. Enough for counters and gauges read by name and labels: comments, timestamps and escapes inside
label values are not interpreted."""

from __future__ import annotations

import re
from typing import NamedTuple

_SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})?\s+([-+0-9.eEnaNIf]+)')
_LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


class Sample(NamedTuple):
    name: str
    labels: dict[str, str]
    value: float


def parse(text: str, name: str | None = None) -> list[Sample]:
    """Every sample in ``text``, or only those of the metric ``name`` (the API server's /metrics is
    tens of thousands of lines: skipping the others before the regular expression is what keeps a
    scrape cheap)."""
    out = []
    for line in text.splitlines():
        if not line or line.startswith("#") or (name is not None and not line.startswith(name)):
            continue
        m = _SAMPLE.match(line)
        if not m or (name is not None and m.group(1) != name):
            continue
        try:
            value = float(m.group(4))
        except ValueError:
            continue
        out.append(Sample(m.group(1), dict(_LABEL.findall(m.group(3) or "")), value))
    return out


def total(text: str, name: str, **labels: str) -> float:
    """Sum of the samples of ``name`` whose labels include ``labels``."""
    return sum(s.value for s in parse(text, name) if all(s.labels.get(k) == want for k, want in labels.items()))
