"""OwnWrites: which events are the echo of a controller's own write, and when a reconcile must wait
for one (kubeloop/controller/echo.py). The end-to-end proof is in tests/integration/test_spec_state_echo.py."""

from __future__ import annotations

from typing import Any

import pytest

from kubeloop.cache import Event
from kubeloop.controller.echo import OwnWrites

Obj = dict[str, Any]


def obj(version: str, status: Obj | None = None, **spec: Any) -> Obj:
    out: Obj = {"metadata": {"name": "a", "namespace": "ns", "resourceVersion": version}, "spec": spec}
    if status is not None:
        out["status"] = status
    return out


def set_status(status: Obj) -> Any:
    return lambda o: {**o, "status": {**(o.get("status") or {}), **status}}


def test_the_echo_of_a_write_nobody_waits_for_is_dropped() -> None:
    writes = OwnWrites()
    writes.record("ns/a", "2", set_status({"n": 1}), cached=obj("1"))
    assert "ns/a" in writes
    assert writes.on_event("ns/a", "modified", obj("2", {"n": 1}), obj("1")) == "echo"
    assert "ns/a" not in writes
    assert writes.on_event("ns/a", "modified", obj("3", {"n": 1}, x=1), obj("2", {"n": 1})) == "event"


def test_a_reconcile_waits_for_the_echo_which_then_releases_it() -> None:
    writes = OwnWrites()
    writes.record("ns/a", "2", set_status({"n": 1}), cached=obj("1"))
    assert writes.hold("ns/a") and writes.hold("ns/a")
    assert writes.on_event("ns/a", "modified", obj("2", {"n": 1}), obj("1")) == "release"
    assert not writes.hold("ns/a")


def test_someone_elses_change_in_between_is_an_event_and_the_wait_goes_on() -> None:
    writes = OwnWrites()
    writes.record("ns/a", "3", set_status({"n": 1}), cached=obj("1"))
    assert writes.hold("ns/a")
    # The other writer's version (before ours) arrives first: it lacks our write, so still hold.
    assert writes.on_event("ns/a", "modified", obj("2", x=2), obj("1")) == "event"
    assert writes.hold("ns/a")
    assert writes.on_event("ns/a", "modified", obj("3", {"n": 1}, x=2), obj("2", x=2)) == "release"


def test_a_version_with_our_resource_version_but_more_changes_is_not_an_echo() -> None:
    """A relist that jumped from before our write to it: another change hides in the jump."""
    writes = OwnWrites()
    writes.record("ns/a", "3", set_status({"n": 1}), cached=obj("1"))
    assert writes.on_event("ns/a", "modified", obj("3", {"n": 1}, x=2), obj("1")) == "event"
    assert "ns/a" not in writes


def test_a_relist_past_our_write_ends_the_wait() -> None:
    writes = OwnWrites()
    writes.record("ns/a", "2", set_status({"n": 1}), cached=obj("1"))
    assert writes.hold("ns/a")
    assert writes.on_event("ns/a", "modified", obj("4", {"n": 1}, x=3), obj("1")) == "release"


def test_several_writes_wait_for_the_last_echo() -> None:
    writes = OwnWrites()
    fin = lambda o: {**o, "metadata": {**o["metadata"], "finalizers": ["f"]}}  # noqa: E731
    with_fin = fin(obj("2"))
    writes.record("ns/a", "2", fin, cached=obj("1"))
    writes.record("ns/a", "3", set_status({"n": 1}), cached=obj("1"))
    assert writes.hold("ns/a")
    assert writes.on_event("ns/a", "modified", with_fin, obj("1")) == "echo"
    assert writes.hold("ns/a")
    done = {**with_fin, "status": {"n": 1}, "metadata": {**with_fin["metadata"], "resourceVersion": "3"}}
    assert writes.on_event("ns/a", "modified", done, with_fin) == "release"


def test_nothing_is_recorded_when_the_cache_already_has_the_write() -> None:
    writes = OwnWrites()
    writes.record("ns/a", "2", set_status({"n": 1}), cached=obj("2", {"n": 1}))
    writes.record("ns/a", "2", set_status({"n": 1}), cached=None)  # the object is gone
    assert "ns/a" not in writes and not writes.hold("ns/a")


def test_deletion_forgets_and_the_wait_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    writes = OwnWrites(wait=5.0)
    writes.record("ns/a", "2", set_status({"n": 1}), cached=obj("1"))
    assert writes.on_event("ns/a", "deleted", obj("2", {"n": 1}), None) == "event"
    assert "ns/a" not in writes
    now = [100.0]
    monkeypatch.setattr("kubeloop.clock.monotonic", lambda: now[0])
    writes.record("ns/a", "2", set_status({"n": 1}), cached=obj("1"))
    writes.record("ns/b", "2", set_status({"n": 1}), cached=obj("1"))
    assert writes.hold("ns/a") and writes.expired() == []
    now[0] = 105.0
    assert writes.expired() == ["ns/a"], "only a key whose reconcile waits is queued again"
    assert "ns/b" not in writes and not writes.hold("ns/a")


def test_events_during_a_write_wait_for_it_and_its_echo_is_dropped() -> None:
    """The echo can arrive before the write's own response: it is recognised then too."""
    writes = OwnWrites()
    writes.begin("ns/a")
    other = Event("modified", obj("2", x=1), obj("1"))
    echo = Event("modified", obj("3", {"n": 1}, x=1), obj("2", x=1))
    assert writes.stash("ns/a", other) and writes.stash("ns/a", echo)
    assert writes.end("ns/a", obj("3", {"n": 1}, x=1), set_status({"n": 1}), cached=echo.object) == [other]
    assert "ns/a" not in writes and not writes.stash("ns/a", other)


def test_a_write_that_failed_or_whose_echo_is_late_lets_the_events_go_on() -> None:
    writes = OwnWrites()
    writes.begin("ns/a")
    other = Event("modified", obj("2", x=1), obj("1"))
    writes.stash("ns/a", other)
    assert writes.end("ns/a", None, set_status({"n": 1}), cached=obj("2", x=1)) == [other]
    assert "ns/a" not in writes
    writes.begin("ns/a")
    assert writes.end("ns/a", obj("3", {"n": 1}), set_status({"n": 1}), cached=obj("2", x=1)) == []
    assert "ns/a" in writes, "its echo is still to come"


def _reference_same(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """The comparison's definition: equal once the volatile metadata fields are removed from both."""
    def essence(obj: dict[str, Any]) -> dict[str, Any]:
        meta = {k: v for k, v in obj.get("metadata", {}).items() if k not in ("resourceVersion", "managedFields")}
        return {**obj, "metadata": meta}
    return essence(a) == essence(b)


@pytest.mark.parametrize("a, b", [
    ({"metadata": {"name": "x", "resourceVersion": "1"}, "spec": {"v": 1}},
     {"metadata": {"name": "x", "resourceVersion": "2", "managedFields": []}, "spec": {"v": 1}}),  # volatile only
    ({"metadata": {"name": "x"}, "spec": {"v": 1}}, {"metadata": {"name": "x"}, "spec": {"v": 2}}),  # spec differs
    ({"metadata": {"name": "x"}}, {"metadata": {"name": "x", "labels": {"a": "b"}}}),  # a field more in b
    ({"metadata": {"name": "x", "labels": {"a": "b"}}}, {"metadata": {"name": "x"}}),  # a field more in a
    ({"metadata": {"name": "x", "labels": None}}, {"metadata": {"name": "x"}}),  # None is not absent
    ({"spec": {}}, {"metadata": {"resourceVersion": "3"}, "spec": {}}),  # no metadata = empty metadata
    ({"spec": {}}, {"metadata": {"name": "x"}, "spec": {}}),
    ({"spec": {}, "status": None}, {"spec": {}}),  # a top-level key more in a
    ({"spec": {}}, {"spec": {}, "status": {"o": 1}}),  # a top-level key more in b
    ({"metadata": {"resourceVersion": "1", "uid": "u"}}, {"metadata": {"uid": "u", "generation": 2}}),
])
def test_same_ignores_exactly_the_volatile_metadata(a: dict[str, Any], b: dict[str, Any]) -> None:
    from kubeloop.controller.echo import _same

    assert _same(a, b) == _reference_same(a, b)
    assert _same(b, a) == _reference_same(b, a)
