"""kubeloop's own Prometheus metric types: ``Counter``, ``Gauge``, ``Histogram`` and their ``Registry``.

Why not prometheus_client: importing it costs ~47 M instructions at start-up (it pulls http.server,
email, urllib.request, inspect, json) and its per-update bookkeeping (``_created`` samples, a lock on
every ``labels()``, linear bucket search) shows in per-object CPU. Contract:

- The surface is the subset of prometheus_client's that kubeloop uses: ``Metric(name, documentation,
  labelnames, registry=, buckets=)``, ``.labels(*values)`` / ``.labels(**kw)`` returning a cached child
  with ``inc``/``dec``/``set``/``set_function``/``observe``; a label-less metric takes those calls itself.
- Thread-safe: each child's update holds its own lock (~110 ns measured), so user code updating a metric from
  ``asyncio.to_thread`` loses no increments; ``labels()`` of an existing child takes no lock.
- Exposition is the text format 0.0.4 with controller-runtime's shape: counters as ``<name>_total``,
  histograms as cumulative ``_bucket{le=...}`` ending in ``+Inf`` plus ``_sum`` and ``_count``, and
  no ``_created`` samples.
- Collectors of prometheus_client (``prometheus_client.Counter(..., registry=kubeloop.metrics.REGISTRY)``)
  still register: they are kept and rendered by prometheus_client itself, imported only then.
- Two metrics whose series names overlap cannot both register: ``ValueError`` names the metric.
"""

from __future__ import annotations

import math
import re
import threading
from bisect import bisect_left
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

_NAME = re.compile(r"^[a-zA-Z_:][a-zA-Z0-9_:]*$")
_LABEL = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_]*$")
DEFAULT_BUCKETS = (.005, .01, .025, .05, .075, .1, .25, .5, .75, 1.0, 2.5, 5.0, 7.5, 10.0, math.inf)
# Series names each type exposes, by suffix (also what a prometheus_client family of that type reserves).
_SUFFIXES = {"counter": ("_total", "_created"), "gauge": (), "histogram": ("_bucket", "_sum", "_count", "_created"),
             "summary": ("_sum", "_count", "_created"), "info": ("_info",), "stateset": (), "enum": (),
             "gaugehistogram": ("_bucket", "_gsum", "_gcount"), "unknown": ()}
Sample = tuple[str, dict[str, str], float]


def format_float(value: float) -> str:
    """A sample value or ``le`` bound as Prometheus writes it: ``+Inf``, ``-Inf``, ``NaN`` or repr."""
    if value == math.inf:
        return "+Inf"
    if value == -math.inf:
        return "-Inf"
    return "NaN" if math.isnan(value) else repr(float(value))


def _escape_label(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _escape_help(text: str) -> str:
    return text.replace("\\", "\\\\").replace("\n", "\\n")


class _CounterChild:
    __slots__ = ("_lock", "_value")

    def __init__(self) -> None:
        self._lock, self._value = threading.Lock(), 0.0

    def inc(self, amount: float = 1) -> None:
        if amount < 0:
            raise ValueError(f"counters only go up: inc({amount}) is negative; use a Gauge")
        with self._lock:
            self._value += amount

    def get(self) -> float:
        return self._value


class _GaugeChild:
    __slots__ = ("_function", "_lock", "_value")

    def __init__(self) -> None:
        self._lock, self._value = threading.Lock(), 0.0
        self._function: Callable[[], float] | None = None

    def inc(self, amount: float = 1) -> None:
        with self._lock:
            self._value += amount

    def dec(self, amount: float = 1) -> None:
        with self._lock:
            self._value -= amount

    def set(self, value: float) -> None:
        self._value = float(value)  # one store: atomic without the lock

    def set_function(self, function: Callable[[], float]) -> None:
        """Read ``function()`` at every scrape instead of a stored value."""
        self._function = function

    def get(self) -> float:
        return float(self._function()) if self._function is not None else self._value


class _HistogramChild:
    __slots__ = ("_counts", "_lock", "_sum", "_upper")

    def __init__(self, upper: tuple[float, ...]) -> None:
        self._lock, self._upper, self._sum = threading.Lock(), upper, 0.0
        self._counts = [0] * len(upper)  # per bucket, not cumulative: one increment per observation

    def observe(self, value: float) -> None:
        # the first bound >= value (le is inclusive); NaN compares false to all: +Inf, as the Go client does
        index = bisect_left(self._upper, value) if value == value else len(self._upper) - 1
        with self._lock:
            self._counts[index] += 1
            self._sum += value

    def snapshot(self) -> tuple[list[int], float]:
        with self._lock:
            return list(self._counts), self._sum


class _Metric:
    """Common part: name checks, label children, registration."""

    type = ""

    def __init__(self, name: str, documentation: str, labelnames: Iterable[str] = (), *,
                 registry: Registry | None = None, unit: str = "") -> None:
        if unit:
            raise ValueError(f"metric {name!r}: unit= is not supported; put the unit in the name")
        if not _NAME.match(name):
            raise ValueError(f"metric name {name!r} is invalid: use [a-zA-Z_:][a-zA-Z0-9_:]*")
        self.name, self.documentation = name, documentation
        self.labelnames = tuple(labelnames)
        for label in self.labelnames:
            if not _LABEL.match(label) or label.startswith("__"):
                raise ValueError(f"metric {name!r}: label name {label!r} is invalid")
        self._children: dict[Any, Any] = {}  # label values as passed → child
        self._series: dict[tuple[str, ...], Any] = {}  # label values as strings → child, in creation order
        self._lock = threading.Lock()
        if not self.labelnames:
            self._series[()] = self._children[()] = self._new_child()
        if registry is not None:
            registry.register(self)

    def _new_child(self) -> Any:
        raise NotImplementedError

    def labels(self, *values: Any, **by_name: Any) -> Any:
        """The child for these label values (created on first use, then cached)."""
        if by_name:
            try:
                values = (*values, *(by_name[label] for label in self.labelnames))
            except KeyError:
                values = ()  # reported just below
            if len(values) != len(self.labelnames) or len(by_name) != len(self.labelnames):
                raise ValueError(f"metric {self.name!r}: labels() takes exactly {self.labelnames}, "
                                 f"got {tuple(by_name)}")
        child = self._children.get(values)
        return child if child is not None else self._add_child(values)

    def _add_child(self, values: tuple[Any, ...]) -> Any:
        if not self.labelnames:
            raise ValueError(f"metric {self.name!r} has no labels: call its methods without labels()")
        if len(values) != len(self.labelnames):
            raise ValueError(f"metric {self.name!r}: labels() needs {len(self.labelnames)} values "
                             f"{self.labelnames}, got {len(values)}")
        key = tuple(str(v) for v in values)
        with self._lock:
            child = self._series.get(key)
            if child is None:
                child = self._series[key] = self._new_child()
            self._children[values] = child
        return child

    def remove(self, *values: Any) -> None:
        """Drop one child (its series disappears from the exposition)."""
        key = tuple(str(v) for v in values)
        with self._lock:
            child = self._series.pop(key, None)
            for raw in [raw for raw, c in self._children.items() if c is child]:
                del self._children[raw]

    def _only(self) -> Any:
        if self.labelnames:
            raise ValueError(f"metric {self.name!r} has labels {self.labelnames}: call .labels(...) first")
        return self._series[()]

    def series_names(self) -> set[str]:
        return {self.name, *(self.name + suffix for suffix in _SUFFIXES[self.type])}

    def samples(self) -> Iterator[Sample]:
        for values, child in list(self._series.items()):
            yield from self._child_samples(dict(zip(self.labelnames, values, strict=True)), child)

    def _child_samples(self, labels: dict[str, str], child: Any) -> Iterator[Sample]:
        yield self.name, labels, child.get()


class Counter(_Metric):
    """Only goes up; exposed as ``<name>_total`` (a ``_total`` given in the name is taken off first)."""

    type = "counter"

    def __init__(self, name: str, documentation: str, labelnames: Iterable[str] = (), **kw: Any) -> None:
        super().__init__(name.removesuffix("_total"), documentation, labelnames, **kw)

    def _new_child(self) -> _CounterChild:
        return _CounterChild()

    def inc(self, amount: float = 1) -> None:
        self._only().inc(amount)

    def _child_samples(self, labels: dict[str, str], child: Any) -> Iterator[Sample]:
        yield self.name + "_total", labels, child.get()


class Gauge(_Metric):
    """Goes up and down, or reads a function at scrape time (``set_function``)."""

    type = "gauge"

    def _new_child(self) -> _GaugeChild:
        return _GaugeChild()

    def inc(self, amount: float = 1) -> None:
        self._only().inc(amount)

    def dec(self, amount: float = 1) -> None:
        self._only().dec(amount)

    def set(self, value: float) -> None:
        self._only().set(value)

    def set_function(self, function: Callable[[], float]) -> None:
        self._only().set_function(function)


class Histogram(_Metric):
    """Observations counted in buckets (upper bounds, inclusive); ``+Inf`` is added if missing."""

    type = "histogram"

    def __init__(self, name: str, documentation: str, labelnames: Iterable[str] = (), *,
                 buckets: Sequence[float] = DEFAULT_BUCKETS, **kw: Any) -> None:
        upper = [float(b) for b in buckets]
        if upper != sorted(upper) or len(set(upper)) != len(upper) or not upper:
            raise ValueError(f"histogram {name!r}: buckets must be distinct and in increasing order: {buckets}")
        if upper[-1] != math.inf:
            upper.append(math.inf)
        self.buckets = tuple(upper)
        if "le" in labelnames:
            raise ValueError(f"histogram {name!r}: 'le' is reserved for buckets, not a label name")
        super().__init__(name, documentation, labelnames, **kw)

    def _new_child(self) -> _HistogramChild:
        return _HistogramChild(self.buckets)

    def observe(self, value: float) -> None:
        self._only().observe(value)

    def _child_samples(self, labels: dict[str, str], child: Any) -> Iterator[Sample]:
        counts, total = child.snapshot()
        cumulative = 0
        for bound, count in zip(self.buckets, counts, strict=True):
            cumulative += count
            yield self.name + "_bucket", {**labels, "le": format_float(bound)}, float(cumulative)
        yield self.name + "_count", labels, float(cumulative)
        yield self.name + "_sum", labels, total


def _render(metric: _Metric) -> Iterator[str]:
    # Counters are announced under their _total name, as the Go client (and prometheus_client) do.
    announced = metric.name + "_total" if metric.type == "counter" else metric.name
    yield f"# HELP {announced} {_escape_help(metric.documentation)}\n# TYPE {announced} {metric.type}\n"
    for name, labels, value in metric.samples():
        if labels:
            pairs = ",".join(f'{label}="{_escape_label(v)}"' for label, v in labels.items())
            yield f"{name}{{{pairs}}} {format_float(value)}\n"
        else:
            yield f"{name} {format_float(value)}\n"


def _foreign_names(collector: Any) -> tuple[str, set[str]]:
    """The series names a prometheus_client collector reserves, and the name to report it by."""
    describe = getattr(collector, "describe", None)
    families = list(describe() if describe is not None else collector.collect())
    names = {family.name + suffix for family in families for suffix in ("", *_SUFFIXES.get(family.type, ()))}
    return (families[0].name if families else repr(collector)), names


class _Collectors:
    """Stands for a registry in prometheus_client's ``generate_latest``: it only calls ``collect()``."""

    def __init__(self, collectors: list[Any]) -> None:
        self.collectors = collectors

    def collect(self) -> Iterator[Any]:
        for collector in self.collectors:
            yield from collector.collect()


class Registry:
    """kubeloop's metrics plus any prometheus_client collectors registered into it (see the module doc)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._metrics: list[_Metric] = []
        self._foreign: list[Any] = []
        self._owners: dict[str, str] = {}  # series name → the metric that reserved it

    def register(self, collector: Any) -> None:
        if isinstance(collector, _Metric):
            owner, names = collector.name, collector.series_names()
        else:
            owner, names = _foreign_names(collector)
        with self._lock:
            taken = sorted(names & self._owners.keys())
            if taken:
                raise ValueError(f"metric {owner!r} cannot be registered: its series {taken[0]!r} is already "
                                 f"exposed by metric {self._owners[taken[0]]!r}; give one of them another name")
            self._owners.update(dict.fromkeys(names, owner))
            (self._metrics if isinstance(collector, _Metric) else self._foreign).append(collector)

    def unregister(self, collector: Any) -> None:
        with self._lock:
            kept = self._metrics if isinstance(collector, _Metric) else self._foreign
            kept.remove(collector)
            names = collector.series_names() if isinstance(collector, _Metric) else _foreign_names(collector)[1]
            for name in names:
                self._owners.pop(name, None)

    def get_sample_value(self, name: str, labels: dict[str, str] | None = None) -> float | None:
        """One sample's value (``None`` if absent), as prometheus_client's registry answers it; for tests."""
        labels = labels or {}
        for metric in list(self._metrics):
            if name in metric.series_names():
                for sample, sample_labels, value in metric.samples():
                    if sample == name and sample_labels == labels:
                        return value
        for family in _Collectors(list(self._foreign)).collect():
            for s in family.samples:
                if s.name == name and s.labels == labels:
                    return float(s.value)
        return None

    def expose(self) -> bytes:
        """The text exposition format 0.0.4 of every metric (what ``/metrics`` serves)."""
        text = "".join(line for metric in list(self._metrics) for line in _render(metric))
        if self._foreign:  # prometheus_client is loaded already: its user registered these collectors
            from prometheus_client.exposition import generate_latest
            text += generate_latest(_Collectors(list(self._foreign))).decode()
        return text.encode()

    def collect(self) -> Iterator[Any]:
        """prometheus_client metric families of everything here, so ``generate_latest(REGISTRY)`` and
        other prometheus_client tools still accept this registry (they import prometheus_client anyway)."""
        from prometheus_client.core import Metric
        for metric in list(self._metrics):
            family = Metric(metric.name, metric.documentation, metric.type)
            for name, labels, value in metric.samples():
                family.add_sample(name, labels, value)
            yield family
        yield from _Collectors(list(self._foreign)).collect()
