"""AdmissionReview parsing, the Denied status, and the allowing review's patch."""

from __future__ import annotations

import base64
import copy
from typing import Any

import orjson
import pytest

from kubeloop.webhooks.admission import Denied, MalformedReview, allow, deny, parse_admission


def review(**request: Any) -> dict[str, Any]:
    base = {"uid": "u-1", "operation": "UPDATE", "kind": {"group": "", "version": "v1", "kind": "ConfigMap"},
            "resource": {"group": "", "version": "v1", "resource": "configmaps"}, "name": "cm",
            "namespace": "ns", "userInfo": {"username": "alice", "groups": ["dev", "system:authenticated"]},
            "object": {"metadata": {"name": "cm"}, "data": {"a": "2"}},
            "oldObject": {"metadata": {"name": "cm"}, "data": {"a": "1"}}, "dryRun": True}
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {**base, **request}}


def test_request_view() -> None:
    req = parse_admission(review())
    assert (req.uid, req.operation, req.namespace, req.name, req.key) == ("u-1", "UPDATE", "ns", "cm", "ns/cm")
    assert req.user.username == "alice" and req.user.groups == ("dev", "system:authenticated")
    assert req.old_object == {"metadata": {"name": "cm"}, "data": {"a": "1"}}
    assert req.dry_run is True and req.resource["resource"] == "configmaps" and req.kind["kind"] == "ConfigMap"


@pytest.mark.parametrize(("body", "reason"), [
    ([], "not an AdmissionReview"),
    ({"kind": "AdmissionReview", "apiVersion": "admission.k8s.io/v1beta1", "request": {}}, "admissionReviewVersions"),
    ({"kind": "AdmissionReview", "apiVersion": "admission.k8s.io/v1"}, "AdmissionReview.request must be a dict"),
    (review(operation="PATCH"), "request.operation 'PATCH'"),
    (review(uid=7), "request.uid must be a str"),
    (review(object="x"), "request.object must be an object"),
    (review(userInfo=["alice"]), "request.userInfo must be an object"),
])
def test_malformed_reviews_say_what_is_wrong(body: Any, reason: str) -> None:
    with pytest.raises(MalformedReview, match=reason):
        parse_admission(body)


def test_denied_with_field_is_invalid_with_the_path() -> None:
    out = deny(parse_admission(review()), Denied("must be at most 10", field="spec.replicas"))
    status = out["response"]["status"]
    assert out["response"] == {"uid": "u-1", "allowed": False, "status": status}
    assert status["code"] == 422 and status["message"] == "spec.replicas: must be at most 10"
    assert status["details"]["causes"][0]["field"] == "spec.replicas"


def test_denied_without_field_is_forbidden() -> None:
    status = deny(parse_admission(review()), Denied("no"))["response"]["status"]
    assert (status["code"], status["reason"]) == (403, "Forbidden")


def test_allow_carries_patch_and_warnings() -> None:
    req = parse_admission(review())
    req.warn("deprecated field")
    sent = copy.deepcopy(req.object)
    mutated = {**req.object, "data": {"a": "2", "b": "x"}}
    out = allow(req, mutated, sent)["response"]
    assert out["allowed"] and out["patchType"] == "JSONPatch" and out["warnings"] == ["deprecated field"]
    assert orjson.loads(base64.b64decode(out["patch"])) == [{"op": "add", "path": "/data/b", "value": "x"}]
    assert "patch" not in allow(req, copy.deepcopy(req.object))["response"], "no change, no patch"
