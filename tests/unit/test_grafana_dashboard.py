"""docs/grafana/kubeloop.json queries only metrics that kubeloop/metrics exports, with labels they
have, and shows every one of them: a renamed metric breaks this test, not a user's dashboard."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from kubeloop import metrics
from kubeloop.metrics import Counter, Gauge, Histogram

DASHBOARD = Path(__file__).resolve().parents[2] / "docs" / "grafana" / "kubeloop.json"
# Labels Prometheus adds at scrape time, and the histogram bucket label.
SCRAPE_LABELS = {"job", "instance", "le"}
_SUFFIXES = {"counter": ("_total",), "histogram": ("_bucket", "_sum", "_count"), "gauge": ("",)}
_SELECTOR = re.compile(r"([a-zA-Z_:][a-zA-Z0-9_:]*)\{([^}]*)\}")
_BY = re.compile(r"\bby\s*\(([^)]*)\)")


def exported() -> dict[str, set[str]]:
    """Every series name kubeloop's own metrics expose → its label names."""
    out: dict[str, set[str]] = {}
    for name in dir(metrics):
        metric = getattr(metrics, name)
        if not isinstance(metric, (Counter, Gauge, Histogram)):
            continue
        for suffix in _SUFFIXES[metric.type]:
            out[metric.name + suffix] = set(metric.labelnames)
    return out


def expressions(dashboard: dict[str, Any]) -> Iterator[str]:
    for panel in dashboard["panels"]:
        for target in panel.get("targets", []):
            yield target["expr"]
    for variable in dashboard["templating"]["list"]:
        query = variable.get("query")
        if isinstance(query, dict):
            yield query["query"].replace("label_values(", "", 1)


def _names(expr: str) -> list[tuple[str, set[str]]]:
    selectors = [(name, {part.split("=")[0].strip(" !~") for part in labels.split(",") if part.strip()})
                 for name, labels in _SELECTOR.findall(expr)]
    bare = re.findall(r"label_values\(([a-zA-Z_:][a-zA-Z0-9_:]*)\s*,", "label_values(" + expr)
    return selectors + [(name, set()) for name in bare]


def test_every_queried_metric_and_label_exists() -> None:
    series = exported()
    dashboard = json.loads(DASHBOARD.read_text())
    for expr in expressions(dashboard):
        found = _names(expr)
        assert found, f"no metric selector found in {expr!r}: write metrics as name{{...}}"
        for name, labels in found:
            assert name in series, f"{name} is not exported by kubeloop/metrics (in {expr!r})"
            assert labels <= series[name] | SCRAPE_LABELS, f"{name} has no label {labels - series[name]}"
        allowed = set().union(*(series[name] for name, _ in found)) | SCRAPE_LABELS
        for group in _BY.findall(expr):
            by = {label.strip() for label in group.split(",")}
            assert by <= allowed, f"{expr!r} groups by {by - allowed}, which its metrics do not have"


def test_every_exported_metric_is_on_the_dashboard() -> None:
    text = DASHBOARD.read_text()
    families = {name.rsplit("_", 1)[0] if name.endswith(("_bucket", "_sum", "_count", "_total")) else name
                for name in exported()}
    missing = sorted(f for f in families if f not in text)
    assert not missing, f"metrics not shown on the dashboard: {missing}"
