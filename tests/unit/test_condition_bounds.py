"""status.conditions by metav1.Condition's rules: what set_condition refuses (the operator's bug, named
with its fix) and what it cuts (a message quoting input or an error), and the generated schema's bounds."""

from __future__ import annotations

import pytest
from pydantic import BaseModel, Field

from kubeloop.helpers.conditions import set_condition
from kubeloop.resources import Conditions, CustomResource, crd_for
from tests.schema_bounds import unbounded


@pytest.mark.parametrize("reason", ["not one word", "Ends_with,", "9Lives", "", "R" * 1025])
def test_a_reason_metav1_refuses_is_refused_naming_the_fix(reason: str) -> None:
    with pytest.raises(ValueError, match="condition reason .* one CamelCase word"):
        set_condition(None, "Ready", True, reason)


@pytest.mark.parametrize("type_", ["has spaces", "-Ready", "Example.com/Ready", "", "T" * 317])
def test_a_type_metav1_refuses_is_refused(type_: str) -> None:
    with pytest.raises(ValueError, match="condition type"):
        set_condition(None, type_, True, "Done")


@pytest.mark.parametrize("type_, reason", [("Ready", "Done"), ("example.com/Ready", "Min_Ready:3,ok"),
                                           ("a.b-c_D", "R" * 1024)])
def test_what_metav1_admits_is_written(type_: str, reason: str) -> None:
    assert set_condition(None, type_, "Unknown", reason)[0]["reason"] == reason


def test_a_long_message_is_cut_to_the_bound_saying_so() -> None:
    message = set_condition(None, "Ready", False, "Failed", "é" * 40_000)[0]["message"]
    assert len(message) == 32768 and message.endswith("(cut)")
    assert set_condition(None, "Ready", False, "Failed", "x" * 32768)[0]["message"] == "x" * 32768


def test_a_65th_condition_type_is_refused() -> None:
    conds = None
    for i in range(64):
        conds = set_condition(conds, f"T{i}", True, "Done")
    assert len(set_condition(conds, "T0", False, "Again")) == 64  # updating one stays within the bound
    with pytest.raises(ValueError, match="64"):
        set_condition(conds, "T64", True, "Done")


class _Status(BaseModel):
    conditions: Conditions = Field(default_factory=list)


class _Thing(CustomResource, group="bounds.test.kubeloop.dev", version="v1", kind="Thing"):
    status: _Status | None = None


def test_the_generated_conditions_schema_is_bounded() -> None:
    schema = crd_for(_Thing)["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    conditions = schema["properties"]["status"]["properties"]["conditions"]
    assert conditions["maxItems"] == 64
    item = conditions["items"]["properties"]
    assert (item["type"]["maxLength"], item["reason"]["maxLength"], item["message"]["maxLength"]) == (316, 1024,
                                                                                                       32768)
    assert "pattern" in item["reason"] and "pattern" in item["type"]
    assert unbounded(schema["properties"]["status"], ".status") == []
