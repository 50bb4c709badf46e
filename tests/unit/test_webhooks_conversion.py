"""Hub-and-spoke conversion: routing through the hub, metadata kept, failures reported, round trips."""

from __future__ import annotations

from typing import Any

import pytest

from kubeloop.webhooks.admission import MalformedReview
from kubeloop.webhooks.conversion import Converter, round_trip_failures, round_trip_test

HUB, OLD, OLDER = "ex.com/v1beta1", "ex.com/v1alpha1", "ex.com/v1alpha0"


def rename(src: str, dst: str):  # type: ignore[no-untyped-def]
    def fn(obj: dict[str, Any]) -> dict[str, Any]:
        spec = dict(obj.get("spec") or {})
        if src in spec:
            spec[dst] = spec.pop(src)
        return {**obj, "spec": spec}
    return fn


def converter() -> Converter:
    c = Converter(HUB)
    c.spoke(OLD, to_hub=rename("message", "text"), from_hub=rename("text", "message"))
    c.spoke(OLDER, to_hub=rename("msg", "text"), from_hub=rename("text", "msg"))
    return c


def obj(version: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": version, "kind": "Note", "metadata": {"name": "n", "namespace": "ns", "uid": "1"},
            "spec": spec}


def test_spoke_to_spoke_goes_through_the_hub() -> None:
    assert converter().convert(obj(OLDER, msg="hi"), OLD) == obj(OLD, message="hi")


def test_metadata_is_kept_even_if_a_function_changes_it() -> None:
    c = Converter(HUB)
    c.spoke(OLD, to_hub=lambda o: {**o, "metadata": {"name": "other"}}, from_hub=lambda o: o)
    assert c.convert(obj(OLD), HUB)["metadata"] == obj(OLD)["metadata"]


def request(*objects: Any, desired: str = HUB) -> dict[str, Any]:
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
            "request": {"uid": "u", "desiredAPIVersion": desired, "objects": list(objects)}}


def test_review_converts_every_object() -> None:
    out = converter().review(request(obj(OLD, message="a"), obj(OLDER, msg="b"), obj(HUB, text="c")))["response"]
    assert out["result"] == {"status": "Success"} and out["uid"] == "u"
    assert [o["spec"] for o in out["convertedObjects"]] == [{"text": "a"}, {"text": "b"}, {"text": "c"}]


def test_a_failing_function_fails_the_review_with_the_object_named() -> None:
    c = Converter(HUB)
    c.spoke(OLD, to_hub=lambda o: 1 / 0, from_hub=lambda o: o)  # type: ignore[arg-type,return-value]
    out = c.review(request(obj(OLD)))["response"]
    assert out["result"]["status"] == "Failure"
    assert "Note ns/n" in out["result"]["message"] and "ZeroDivisionError" in out["result"]["message"]
    assert "convertedObjects" not in out


def test_unknown_version_fails() -> None:
    out = converter().review(request(obj("ex.com/v9")))["response"]
    assert "unknown version 'ex.com/v9'" in out["result"]["message"]


@pytest.mark.parametrize("body", [{}, {"kind": "ConversionReview", "apiVersion": "apiextensions.k8s.io/v1beta1"},
                                  {**request(), "request": {"uid": "u", "objects": []}}])
def test_malformed_conversion_review(body: Any) -> None:
    with pytest.raises(MalformedReview):
        converter().review(body)


def test_round_trip_failures_finds_a_lossy_spoke() -> None:
    c = converter()
    assert round_trip_failures(c, [obj(HUB, text="x")]) == []
    c.spoke(OLD, to_hub=rename("message", "text"), from_hub=lambda o: {**o, "spec": {}})  # drops the field
    failures = round_trip_failures(c, [obj(HUB, text="x")])
    assert len(failures) == 1 and "via ex.com/v1alpha1" in failures[0]


test_generated_round_trips = round_trip_test(converter(), [obj(HUB, text="x"), obj(HUB)])
