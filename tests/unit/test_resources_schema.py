"""Pydantic models → structural OpenAPI schemas: every supported feature, with exact fragments."""

from __future__ import annotations

from datetime import date, datetime, timedelta
from enum import IntEnum, StrEnum
from typing import Annotated, Any, Literal

import pytest
from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from kubeloop.resources import (
    Conditions,
    Format,
    Int32,
    Int64,
    IntOrString,
    NotStructuralError,
    crd_root_schema,
    embedded_resource,
    list_type,
    map_type,
    nullable,
    opaque,
    openapi_schema,
    preserve_unknown_fields,
    structural_problems,
    validation,
)


def props(model: type[BaseModel]) -> dict[str, Any]:
    return openapi_schema(model)["properties"]


def walk(node: Any, path: str = "") -> list[tuple[str, str]]:
    """Every (path, key) of every dict in the tree, property names excluded."""
    found: list[tuple[str, str]] = []
    if isinstance(node, dict):
        for key, value in node.items():
            found.append((path, key))
            if key == "properties":
                for name, sub in value.items():
                    found += walk(sub, f"{path}.{name}")
            else:
                found += walk(value, f"{path}/{key}")
    elif isinstance(node, list):
        for i, item in enumerate(node):
            found += walk(item, f"{path}[{i}]")
    return found


def _values(node: Any, key: str) -> list[Any]:
    if isinstance(node, dict):
        return ([node[key]] if key in node else []) + [v for sub in node.values() for v in _values(sub, key)]
    if isinstance(node, list):
        return [v for sub in node for v in _values(sub, key)]
    return []


class Color(StrEnum):
    RED = "red"
    BLUE = "blue"


class Level(IntEnum):
    LOW = 1
    HIGH = 2


class Port(BaseModel):
    name: str
    port: Int32
    protocol: Literal["TCP", "UDP"] = "TCP"


class Window(BaseModel):
    """A time window."""

    __validations__ = [validation("self.start <= self.end", message="start must not be after end")]

    start: int = 0
    end: int = 10


class Everything(BaseModel):
    """Every feature at once."""

    count: int = Field(1, ge=0, le=10, description="How many.")
    ratio: float = Field(0.5, gt=0, lt=1)
    step: int = Field(5, multiple_of=5)
    name: str = Field("a", min_length=1, max_length=63, pattern=r"^[a-z]+$")
    tags: list[str] = Field(default_factory=list, min_length=1, max_length=3)
    unique: set[str] = Field(default_factory=set)
    color: Color = Color.RED
    level: Level = Level.LOW
    mode: Literal["fast", "slow"] = "fast"
    fixed: Literal["only"] = "only"
    maybe: int | None = None
    really_null: Annotated[int | None, nullable()] = None
    when: datetime | None = None
    day: date | None = None
    wait: timedelta | None = None
    big: Int64 = 0
    target: IntOrString = 80
    target_or_none: IntOrString | None = None
    labels: dict[str, str] = Field(default_factory=dict)
    windows: dict[str, Window] = Field(default_factory=dict)
    blob: dict[str, Any] = Field(default_factory=dict)
    anything: Any = None
    kept: Annotated[Port, preserve_unknown_fields()] | None = None
    ports: Annotated[list[Port], list_type("map", "name", "protocol")] = Field(default_factory=list)
    args: Annotated[list[str], list_type("atomic")] = Field(default_factory=list)
    selector: Annotated[dict[str, str], map_type("atomic")] = Field(default_factory=dict)
    template: Annotated[dict[str, Any], embedded_resource()] = Field(default_factory=dict)
    window: Window = Field(default_factory=Window, description="The window of the field.")
    other_window: Window | None = None
    uri: Annotated[str, Format("uri")] = ""


S = openapi_schema(Everything)
P = S["properties"]


def test_top_level_object_with_docstring() -> None:
    assert S["type"] == "object"
    assert S["description"] == "Every feature at once."
    assert "required" not in S  # everything has a default


def test_numeric_bounds() -> None:
    assert P["count"] == {
        "type": "integer",
        "minimum": 0,
        "maximum": 10,
        "default": 1,
        "description": "How many.",
    }
    assert P["ratio"] == {
        "type": "number",
        "minimum": 0,
        "exclusiveMinimum": True,
        "maximum": 1,
        "exclusiveMaximum": True,
        "default": 0.5,
    }
    assert P["step"] == {"type": "integer", "multipleOf": 5, "default": 5}


def test_string_constraints() -> None:
    assert P["name"] == {
        "type": "string",
        "minLength": 1,
        "maxLength": 63,
        "pattern": "^[a-z]+$",
        "default": "a",
    }


def test_lists() -> None:
    assert P["tags"] == {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 3}
    # uniqueItems is forbidden by the server; a set list expresses the same thing
    assert P["unique"] == {"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "set"}
    assert P["args"] == {"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "atomic"}


def test_list_map() -> None:
    ports = P["ports"]
    assert ports["x-kubernetes-list-type"] == "map"
    assert ports["x-kubernetes-list-map-keys"] == ["name", "protocol"]
    assert ports["items"] == {
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "port": {"type": "integer", "format": "int32"},
            "protocol": {"type": "string", "enum": ["TCP", "UDP"], "default": "TCP"},
        },
        "required": ["name", "port"],
    }


def test_enums() -> None:
    assert P["color"] == {"type": "string", "enum": ["red", "blue"], "default": "red"}
    assert P["level"] == {"type": "integer", "enum": [1, 2], "default": 1}
    assert P["mode"] == {"type": "string", "enum": ["fast", "slow"], "default": "fast"}
    assert P["fixed"] == {"type": "string", "enum": ["only"], "default": "only"}  # const → enum


def test_optional_is_not_nullable_unless_asked() -> None:
    assert P["maybe"] == {"type": "integer"}  # default None dropped: null is not a valid value
    assert P["really_null"] == {"type": "integer", "nullable": True}


def test_formats() -> None:
    assert P["when"] == {"type": "string", "format": "date-time"}
    assert P["day"] == {"type": "string", "format": "date"}
    assert P["wait"] == {"type": "string"}  # ISO 8601 durations are not the server's "duration"
    assert P["big"] == {"type": "integer", "format": "int64", "default": 0}
    assert P["uri"] == {"type": "string", "format": "uri", "default": ""}


def test_int_or_string() -> None:
    assert P["target"] == {"x-kubernetes-int-or-string": True, "default": 80}
    assert P["target_or_none"] == {"x-kubernetes-int-or-string": True}


def test_plain_int_or_str_union_is_int_or_string() -> None:
    class M(BaseModel):
        x: int | str

    assert openapi_schema(M)["properties"]["x"] == {"x-kubernetes-int-or-string": True}


def test_maps_and_unknown_fields() -> None:
    assert P["labels"] == {"type": "object", "additionalProperties": {"type": "string"}}
    assert P["windows"]["type"] == "object"
    assert P["windows"]["additionalProperties"]["properties"]["start"] == {"type": "integer", "default": 0}
    assert P["blob"] == {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    assert P["anything"] == {"x-kubernetes-preserve-unknown-fields": True}
    assert P["kept"]["x-kubernetes-preserve-unknown-fields"] is True
    assert P["kept"]["properties"]["port"] == {"type": "integer", "format": "int32"}
    assert P["selector"] == {
        "type": "object",
        "additionalProperties": {"type": "string"},
        "x-kubernetes-map-type": "atomic",
    }
    assert P["template"] == {
        "type": "object",
        "x-kubernetes-embedded-resource": True,
        "x-kubernetes-preserve-unknown-fields": True,
    }


def test_extra_allow_model_preserves_unknown_fields() -> None:
    class Loose(BaseModel):
        model_config = ConfigDict(extra="allow")
        a: int = 1

    class Strict(BaseModel):
        model_config = ConfigDict(extra="forbid")
        a: int = 1

    assert openapi_schema(Loose) == {
        "type": "object",
        "properties": {"a": {"type": "integer", "default": 1}},
        "x-kubernetes-preserve-unknown-fields": True,
    }
    assert openapi_schema(Strict) == {
        "type": "object",
        "properties": {"a": {"type": "integer", "default": 1}},
    }


def test_nested_model_inlined_with_descriptions() -> None:
    window = P["window"]
    assert window["description"] == "The window of the field."  # the field's description wins
    assert window["properties"] == {
        "start": {"type": "integer", "default": 0},
        "end": {"type": "integer", "default": 10},
    }
    assert P["other_window"]["description"] == "A time window."  # else the model's docstring
    assert "$ref" not in P["other_window"]


def test_model_level_validation() -> None:
    rule = {"rule": "self.start <= self.end", "message": "start must not be after end"}
    assert P["window"]["x-kubernetes-validations"] == [rule]
    assert P["other_window"]["x-kubernetes-validations"] == [rule]


def test_field_validations_all_options_and_transition_rules() -> None:
    class Spec(BaseModel):
        size: Annotated[
            int,
            validation("self >= oldSelf", message="cannot shrink", reason="FieldValueForbidden"),
            validation("self <= 10", message_expression="'too big: ' + string(self)"),
        ] = 1
        window: Annotated[Window, validation("self.end < 100", field_path=".end")] = Field(
            default_factory=Window
        )
        name: Annotated[str, validation("self == oldSelf", message="immutable", optional_old_self=True)] = ""

    p = props(Spec)
    assert p["size"]["x-kubernetes-validations"] == [
        {"rule": "self >= oldSelf", "message": "cannot shrink", "reason": "FieldValueForbidden"},
        {"rule": "self <= 10", "messageExpression": "'too big: ' + string(self)"},
    ]
    # the model's own rule first, then the field's
    assert p["window"]["x-kubernetes-validations"] == [
        {"rule": "self.start <= self.end", "message": "start must not be after end"},
        {"rule": "self.end < 100", "fieldPath": ".end"},
    ]
    assert p["name"]["x-kubernetes-validations"] == [
        {"rule": "self == oldSelf", "message": "immutable", "optionalOldSelf": True}
    ]


def test_validation_helper_rejects_bad_arguments() -> None:
    with pytest.raises(ValueError, match="reason"):
        validation("self > 0", reason="Nope")
    with pytest.raises(ValueError, match="field_path"):
        validation("self > 0", field_path="spec.x")
    with pytest.raises(ValueError, match="empty"):
        validation("  ")


def test_aliases_from_alias_generator() -> None:
    class Spec(BaseModel):
        model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True)
        tantrum_mode: bool = False
        excluded_namespaces: list[str]
        explicit: int = Field(0, alias="EXPLICIT")

    schema = openapi_schema(Spec)
    assert list(schema["properties"]) == ["tantrumMode", "excludedNamespaces", "EXPLICIT"]
    assert schema["required"] == ["excludedNamespaces"]
    assert Spec(tantrum_mode=True, excluded_namespaces=[]).tantrum_mode is True  # both spellings accepted
    assert Spec.model_validate({"tantrumMode": True, "excludedNamespaces": []}).tantrum_mode is True


def test_attribute_docstrings() -> None:
    class Spec(BaseModel):
        model_config = ConfigDict(use_attribute_docstrings=True)
        size: int = 1
        """How big it gets."""

    assert props(Spec)["size"] == {"type": "integer", "default": 1, "description": "How big it gets."}


def test_object_defaults_drop_nulls() -> None:
    class Inner(BaseModel):
        a: int = 1
        b: str | None = None

    class Outer(BaseModel):
        inner: Inner = Inner()

    assert props(Outer)["inner"]["default"] == {"a": 1}


def test_required_fields() -> None:
    class Spec(BaseModel):
        must: str
        may: str = ""
        also_must: list[int]

    assert openapi_schema(Spec)["required"] == ["must", "also_must"]


@pytest.mark.parametrize("model", [Everything, Port, Window])
def test_no_forbidden_keys_anywhere(model: type[BaseModel]) -> None:
    schema = openapi_schema(model)
    keys = walk(schema)
    for bad in (
        "$ref",
        "$defs",
        "definitions",
        "anyOf",
        "oneOf",
        "allOf",
        "title",
        "const",
        "uniqueItems",
        "prefixItems",
        "examples",
        "readOnly",
    ):
        assert not [p for p, k in keys if k == bad], bad
    assert all(isinstance(v, dict) for v in _values(schema, "additionalProperties"))
    assert structural_problems(schema) == []


def test_every_node_has_a_type_or_an_escape() -> None:
    def check(node: dict[str, Any], path: str) -> None:
        assert (
            "type" in node
            or node.get("x-kubernetes-int-or-string")
            or node.get("x-kubernetes-preserve-unknown-fields")
        ), path
        for name, sub in node.get("properties", {}).items():
            check(sub, f"{path}.{name}")
        for key in ("items", "additionalProperties"):
            if isinstance(node.get(key), dict):
                check(node[key], f"{path}/{key}")

    check(S, "")


def test_structural_problems_detects_violations() -> None:
    bad = {
        "type": "object",
        "title": "X",
        "properties": {
            "a": {"$ref": "#/$defs/A"},
            "b": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
            "c": {"type": "array", "items": {"type": "string"}, "uniqueItems": True},
            "d": {"type": "object", "additionalProperties": False},
        },
    }
    problems = structural_problems(bad)
    assert any(p.startswith("<root>: title") for p in problems)
    assert any(p.startswith(".a: $ref") for p in problems)
    assert any(p.startswith(".a: type is missing") for p in problems)
    assert any(p.startswith(".b: anyOf") for p in problems)
    assert any(p.startswith(".c: uniqueItems") for p in problems)
    assert any(p.startswith(".d: additionalProperties") for p in problems)


# ------------------------------------------------------------------------------------------- rejections


class A(BaseModel):
    a: int = 0


class B(BaseModel):
    b: int = 0


class Tree(BaseModel):
    children: list[Tree] = Field(default_factory=list)


class OpaqueTree(BaseModel):
    name: str = ""
    children: Annotated[list[OpaqueTree], opaque()] = Field(default_factory=list)


def test_recursive_models_are_refused_with_a_hint() -> None:
    with pytest.raises(NotStructuralError, match=r"Tree\.children\[\]: Tree refers to itself.*opaque\(\)"):
        openapi_schema(Tree)
    assert props(OpaqueTree)["children"] == {"x-kubernetes-preserve-unknown-fields": True}


@pytest.mark.parametrize(
    ("annotation", "message"),
    [
        (A | B, r"\.x: union of A, B is not structural"),
        (Literal[1, "a"], "enum mixes types"),
        (tuple[int, str], "fixed-length tuples"),
        (dict[Annotated[str, Field(pattern="^a")], int], "constrained dict keys"),
        (Annotated[list[A], list_type("set")], "needs scalar items"),
        (Annotated[list[Port], list_type("map", "nope")], "map key 'nope' is not a field"),
        (Annotated[list[Port], list_type("map", "port", "tags")], "map key 'tags' is not a field"),
        (Annotated[list[Window], list_type("map", "start")], None),  # defaulted keys are fine
    ],
)
def test_non_structural_constructs_are_refused(annotation: Any, message: str | None) -> None:
    class M(BaseModel):
        x: annotation  # type: ignore[valid-type]

    M.model_rebuild()
    if message is None:
        openapi_schema(M)
    else:
        with pytest.raises(NotStructuralError, match=message):
            openapi_schema(M)


def test_list_type_marker_arguments() -> None:
    with pytest.raises(ValueError):
        list_type("map")
    with pytest.raises(ValueError):
        list_type("set", "name")
    with pytest.raises(ValueError):
        list_type("bag")  # type: ignore[arg-type]


def test_map_key_must_be_required_or_defaulted() -> None:
    class Item(BaseModel):
        key: str | None = None

    class M(BaseModel):
        items: Annotated[list[Item], list_type("map", "key")]

    with pytest.raises(NotStructuralError, match="must be required or have a default"):
        openapi_schema(M)


def test_crd_root_schema_envelope() -> None:
    class Root(BaseModel):
        """The root."""

        apiVersion: str = ""
        kind: str = ""
        metadata: dict[str, Any] = Field(default_factory=dict)
        spec: Port

    root = crd_root_schema(Root)
    assert root["properties"]["apiVersion"] == {"type": "string"}
    assert root["properties"]["kind"] == {"type": "string"}
    assert root["properties"]["metadata"] == {"type": "object"}
    assert root["required"] == ["spec"]
    assert root["description"] == "The root."


def test_conditions_list_is_a_map_keyed_by_type() -> None:
    class Status(BaseModel):
        conditions: Conditions = Field(default_factory=list)

    schema = props(Status)["conditions"]
    assert schema["x-kubernetes-list-type"] == "map"
    assert schema["x-kubernetes-list-map-keys"] == ["type"]
    assert schema["items"]["required"] == ["type", "status"]
    assert schema["items"]["properties"]["status"] == {"type": "string", "enum": ["True", "False", "Unknown"]}
    assert schema["items"]["properties"]["lastTransitionTime"] == {"type": "string", "format": "date-time"}
