"""Reflector's and kubernetes-replicator's annotations: never honoured, never silent."""

from __future__ import annotations

from typing import Any

from kubeloop import Event
from kubeloop.operators.copyrator.foreign import ADVICE, describe, foreign_annotations
from kubeloop.operators.copyrator.models import CopyratorRule
from kubeloop.operators.copyrator.operator import foreign_changed
from kubeloop.operators.copyrator.plan import plan

REFLECTOR = "reflector.v1.k8s.emberstack.com/"
REPLICATOR = "replicator.v1.mittwald.de/"


def obj(kind: str, ns: str, annotations: dict[str, str]) -> dict[str, Any]:
    return {"kind": kind, "metadata": {"name": "shared", "namespace": ns, "uid": "u", "labels": {"share": "yes"},
                                       "annotations": annotations}, "data": {"k": "v"}}


def rule(**extra: Any) -> CopyratorRule:
    return CopyratorRule.from_dict({"apiVersion": "flant.com/v1", "kind": "CopyratorRule",
                                    "metadata": {"name": "r", "namespace": "a"}, "ruleType": "secret",
                                    "selector": {"share": "yes"}, "namespace": ["a", "b"], **extra})


def test_every_spelling_of_both_tools_names_copyrators() -> None:
    assert set(ADVICE) == {REFLECTOR + k for k in ("reflection-allowed", "reflection-allowed-namespaces",
                                                  "reflection-auto-enabled", "reflection-auto-namespaces",
                                                  "reflects")} | {
        REPLICATOR + k for k in ("replication-allowed", "replication-allowed-namespaces", "replicate-to",
                                 "replicate-to-matching", "replicate-from")}
    for key in ADVICE:
        message = describe({key: "x"})
        assert key in message and "copyrator.flant.com/" in message and len(message) <= 1000


def test_a_secret_consenting_reflectors_way_is_skipped_naming_copyrators_consent() -> None:
    own = obj("Secret", "a", {REFLECTOR + "reflection-allowed": "true",
                              REFLECTOR + "reflection-allowed-namespaces": "c"})
    other = {**obj("Secret", "b", {REPLICATOR + "replicate-to": "c"})}
    private = {**obj("Secret", "b", {REPLICATOR + "replication-allowed": "false"}),
               "metadata": {**other["metadata"], "name": "private",
                            "annotations": {REPLICATOR + "replication-allowed": "false"}}}
    desired = plan(rule(), [own, other, private], [{"metadata": {"name": "c"}}])
    assert desired.copies == {}
    assert ("a/shared", "ForeignConsent") in desired.skipped and ("b/shared", "ForeignConsent") in desired.skipped
    assert [k for k, _ in desired.foreign] == ["a/shared", "b/shared"]  # b/private: not shared, not named
    assert "copyrator.flant.com/allow-copy" in desired.foreign[0][1]


def test_the_event_predicate_fires_when_foreign_annotations_appear_or_change() -> None:
    plain, marked = obj("ConfigMap", "a", {}), obj("ConfigMap", "a", {REFLECTOR + "reflects": "x/y"})
    assert foreign_changed(Event("added", marked, None)) and not foreign_changed(Event("added", plain, None))
    assert foreign_changed(Event("modified", marked, plain))
    assert not foreign_changed(Event("modified", marked, marked))  # a resync or a data change: said already
    assert not foreign_changed(Event("deleted", marked, None))
    assert foreign_annotations(marked) == {REFLECTOR + "reflects": "x/y"}
