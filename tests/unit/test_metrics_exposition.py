"""kubeloop's own metric types (kubeloop/metrics/core.py) expose what prometheus_client exposed for the same
metrics and operations (``_created`` aside, which controller-runtime does not emit), keep users'
prometheus_client collectors working, and refuse ambiguous names."""

from __future__ import annotations

import math
import threading
from collections.abc import Callable
from typing import Any

import prometheus_client
import pytest
from prometheus_client.parser import text_string_to_metric_families

from kubeloop import metrics
from kubeloop.metrics import core as ours

Samples = dict[tuple[str, str], set[tuple[str, tuple[tuple[str, str], ...], float]]]


def parsed(text: str) -> Samples:
    """family (name, type) → its samples, `_created` dropped, NaN made comparable."""
    out: Samples = {}
    for family in text_string_to_metric_families(text):
        samples = {(s.name, tuple(sorted(s.labels.items())), -1.0 if math.isnan(s.value) else s.value)
                   for s in family.samples if not s.name.endswith("_created")}
        if family.name.endswith("_created") and family.type == "gauge":
            continue  # prometheus_client writes a counter's _created as a family of its own
        out[(family.name, family.type)] = samples
    return out


def twins(build: Callable[[Any, Any], None]) -> tuple[str, str]:
    """Run ``build(module, registry)`` with prometheus_client and with ours; both expositions."""
    theirs_registry = prometheus_client.CollectorRegistry()
    build(prometheus_client, theirs_registry)
    our_registry = ours.Registry()
    build(ours, our_registry)
    return prometheus_client.generate_latest(theirs_registry).decode(), our_registry.expose().decode()


def test_same_samples_as_prometheus_client_for_every_operation() -> None:
    def build(lib: Any, registry: Any) -> None:
        c = lib.Counter("jobs_total", 'Done \\ jobs\nsecond "line".', ["kind", "path"], registry=registry)
        c.labels("a", "/x").inc()
        c.labels(kind='we"ird\\va\nlue', path="ü").inc(2.5)
        c.labels("a", "/x").inc(0)
        lib.Counter("plain", "No labels.", registry=registry).inc(3)
        g = lib.Gauge("depth", "Depth.", ["q"], registry=registry)
        g.labels("one").set(7)
        g.labels("one").dec(2)
        g.labels("two").inc()
        g.labels("fn").set_function(lambda: 42)
        g.labels("inf").set(math.inf)
        lib.Gauge("temp", "No labels.", registry=registry).set(-1.5)
        h = lib.Histogram("lat_seconds", "Latency.", ["v"], buckets=(0.1, 1, 10), registry=registry)
        for value in (0.05, 0.1, 0.5, 1, 10, 11, -3):  # on bounds, between, below, above
            h.labels("GET").observe(value)
        h.labels("PUT")  # a child with no observation yet: zero buckets
        lib.Histogram("default_buckets", "Defaults.", registry=registry).observe(0.3)
        lib.Counter("unused", "Labelled, never used.", ["x"], registry=registry)

    theirs, mine = twins(build)
    assert parsed(mine) == parsed(theirs)
    assert "_created" not in mine
    assert "# HELP jobs_total Done \\\\ jobs\\nsecond \"line\"." in mine


def test_kubeloops_own_metrics_expose_as_prometheus_client_did() -> None:
    """Every metric of kubeloop/metrics, rebuilt with prometheus_client: same names, help, labels."""
    defined = [m for m in vars(metrics).values() if isinstance(m, ours._Metric)]
    assert len(defined) > 20

    def build(lib: Any, registry: Any) -> None:
        for m in defined:
            kw = {"buckets": m.buckets} if m.type == "histogram" else {}
            twin = getattr(lib, m.type.capitalize())(m.name, m.documentation, m.labelnames, registry=registry, **kw)
            child = twin.labels(*(f"{label}-value" for label in m.labelnames))
            {"counter": lambda c: c.inc(4), "gauge": lambda c: c.set(2),
             "histogram": lambda c: c.observe(0.3)}[m.type](child)

    theirs, mine = twins(build)
    assert parsed(mine) == parsed(theirs)


def test_a_users_prometheus_client_metric_in_kubeloops_registry_is_served() -> None:
    registry = ours.Registry()
    ours.Counter("kubeloop_side", "Ours.", ["a"], registry=registry).labels("1").inc()
    users = prometheus_client.Counter("myop_things", "Users'.", ["kind"], registry=registry)
    users.labels("pod").inc(5)
    families = parsed(registry.expose().decode())
    assert families[("myop_things", "counter")] == {("myop_things_total", (("kind", "pod"),), 5.0)}
    assert families[("kubeloop_side", "counter")] == {("kubeloop_side_total", (("a", "1"),), 1.0)}
    assert registry.get_sample_value("myop_things_total", {"kind": "pod"}) == 5.0
    assert registry.get_sample_value("kubeloop_side_total", {"a": "1"}) == 1.0
    assert registry.get_sample_value("kubeloop_side_total", {"a": "2"}) is None
    # prometheus_client's own tools still take the registry
    assert parsed(prometheus_client.generate_latest(registry).decode()) == families
    registry.unregister(users)
    assert "myop_things" not in registry.expose().decode()


@pytest.mark.parametrize("second", [
    lambda r: ours.Counter("clash", "again", registry=r),
    lambda r: ours.Gauge("clash_total", "a gauge named like the counter's series", registry=r),
    lambda r: prometheus_client.Counter("clash", "users'", registry=r),
    lambda r: prometheus_client.Gauge("clash_total", "users'", registry=r),
])
def test_a_name_collision_is_an_error_naming_the_metric(second: Callable[[Any], Any]) -> None:
    registry = ours.Registry()
    ours.Counter("clash", "first", registry=registry)
    with pytest.raises(ValueError, match=r"metric 'clash(_total)?' cannot be registered: its series "
                                         r"'clash(_total)?' is already exposed by metric 'clash'"):
        second(registry)


def test_the_bundled_registry_refuses_a_duplicate_of_a_framework_metric() -> None:
    with pytest.raises(ValueError, match="workqueue_depth"):
        prometheus_client.Gauge("workqueue_depth", "dup", ["name"], registry=metrics.REGISTRY)


def test_bad_use_is_a_clear_error() -> None:
    c = ours.Counter("errs", "Errors.", ["a", "b"])
    with pytest.raises(ValueError, match=r"'errs': labels\(\) needs 2 values"):
        c.labels("only-one")
    with pytest.raises(ValueError, match=r"'errs': labels\(\) takes exactly"):
        c.labels(a="x", c="y")
    with pytest.raises(ValueError, match="call .labels"):
        c.inc()
    with pytest.raises(ValueError, match="negative"):
        c.labels("x", "y").inc(-1)
    with pytest.raises(ValueError, match="has no labels"):
        ours.Gauge("g", "G.").labels("x")
    with pytest.raises(ValueError, match="'le' is reserved"):
        ours.Histogram("h", "H.", ["le"])
    with pytest.raises(ValueError, match="increasing order"):
        ours.Histogram("h", "H.", buckets=(1, 0.5))
    with pytest.raises(ValueError, match="metric name 'bad-name'"):
        ours.Gauge("bad-name", "B.")


def test_children_are_cached_and_values_stringified_once() -> None:
    c = ours.Counter("codes", "Codes.", ["code"])
    assert c.labels(200) is c.labels("200") is c.labels(code="200")
    c.labels(200).inc()
    assert [s[1:] for s in c.samples()] == [({"code": "200"}, 1.0)]


def test_a_nan_observation_counts_in_the_inf_bucket_as_in_the_go_client() -> None:
    h = ours.Histogram("nan_h", "N.", buckets=(1, 2))
    h.observe(math.nan)
    h.observe(1.5)
    counts, total = h._only().snapshot()
    assert counts == [0, 1, 1] and math.isnan(total)


def test_updates_from_threads_lose_nothing() -> None:
    c = ours.Counter("threads", "T.", ["x"])
    g = ours.Gauge("threads_g", "T.", ["x"])
    h = ours.Histogram("threads_h", "T.", ["x"], buckets=(1,))

    def work() -> None:
        for _ in range(20_000):
            c.labels("a").inc()
            g.labels("a").inc()
            h.labels("a").observe(0.5)

    threads = [threading.Thread(target=work) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert c.labels("a").get() == g.labels("a").get() == 120_000
    assert h.labels("a").snapshot() == ([120_000, 0], 60_000.0)
