"""Pydantic model → *structural* OpenAPI v3 schema, the only kind a v1 CRD accepts.

Pydantic's own JSON schema is the starting point (it already knows constraints, aliases, defaults and
docstrings); this module rewrites it into what the API server wants: ``$ref`` inlined, ``Optional[X]``
collapsed to ``X``, ``const`` → ``enum``, draft-2020 exclusive bounds → OpenAPI 3.0 booleans, no
``title``/``$defs``, a ``type`` on every node, and the ``x-kubernetes-*`` extensions added by the
markers below (usable inside ``Annotated[...]``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, ClassVar, Literal

from pydantic import BaseModel
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaValue
from pydantic_core import core_schema as cs

__all__ = [
    "Format", "Int32", "Int64", "IntOrString", "ListType", "NotStructuralError", "SchemaMarker",
    "Validation", "crd_root_schema", "embedded_resource", "list_type", "map_type", "nullable",
    "opaque", "openapi_schema", "preserve_unknown_fields", "structural_problems", "validation",
]

X_VALIDATIONS = "x-kubernetes-validations"
X_PRESERVE = "x-kubernetes-preserve-unknown-fields"
X_INT_OR_STRING = "x-kubernetes-int-or-string"
X_LIST_TYPE = "x-kubernetes-list-type"
X_LIST_MAP_KEYS = "x-kubernetes-list-map-keys"

# JSONSchemaProps fields we emit; everything else pydantic produces (title, examples, readOnly,
# deprecated, ...) is dropped. Constructs that would change meaning if dropped raise instead.
_KEEP = frozenset({
    "description", "type", "format", "default", "enum", "nullable", "example",
    "maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum", "multipleOf",
    "maxLength", "minLength", "pattern", "maxItems", "minItems", "maxProperties", "minProperties",
    "required", "items", "properties", "additionalProperties",
})
_REJECT = {
    "prefixItems": "fixed-length tuples have no structural equivalent; use list[X] with min/max_length",
    "patternProperties": "constrained dict keys have no structural equivalent; use a CEL validation()",
    "propertyNames": "constrained dict keys have no structural equivalent; use a CEL validation()",
    "not": "'not' is not supported; use a CEL validation()",
}
# Formats the API server knows. Others are dropped: pydantic's "duration" is ISO 8601 while the
# server's is Go's time.ParseDuration, and "binary"/"time" have no server meaning.
_KUBE_FORMATS = frozenset({
    "bsonobjectid", "uri", "email", "hostname", "ipv4", "ipv6", "cidr", "mac", "uuid", "uuid3",
    "uuid4", "uuid5", "isbn", "isbn10", "isbn13", "creditcard", "ssn", "hexcolor", "rgbcolor",
    "byte", "password", "date", "date-time", "datetime", "int32", "int64", "float", "double",
})
_SCALARS = frozenset({"string", "integer", "number", "boolean"})


class NotStructuralError(ValueError):
    """The model uses a construct a structural schema cannot express; the message says where and why."""


# ---------------------------------------------------------------------------------------------- markers


class SchemaMarker:
    """Base for objects placed in ``Annotated[T, marker]`` that edit the field's generated schema."""

    def apply(self, schema: dict[str, Any]) -> dict[str, Any]:
        raise NotImplementedError

    def __get_pydantic_json_schema__(self, core: cs.CoreSchema, handler: Any) -> JsonSchemaValue:
        return self.apply(dict(handler(core)))


@dataclass(frozen=True)
class Validation(SchemaMarker):
    """One CEL rule (``x-kubernetes-validations`` entry). Rules using ``oldSelf`` are transition rules."""

    rule: str
    message: str | None = None
    message_expression: str | None = None
    reason: str | None = None
    field_path: str | None = None
    optional_old_self: bool | None = None

    REASONS: ClassVar[frozenset[str]] = frozenset(
        {"FieldValueInvalid", "FieldValueForbidden", "FieldValueRequired", "FieldValueDuplicate"})

    def __post_init__(self) -> None:
        if not self.rule.strip():
            raise ValueError("validation(): rule must not be empty")
        if self.reason is not None and self.reason not in self.REASONS:
            raise ValueError(f"validation(): reason must be one of {sorted(self.REASONS)}, "
                             f"not {self.reason!r}")
        if self.field_path is not None and not self.field_path.startswith((".", "[")):
            raise ValueError("validation(): field_path must be relative, like '.spec.x', "
                             f"not {self.field_path!r}")

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"rule": self.rule}
        for key, value in (("message", self.message), ("messageExpression", self.message_expression),
                           ("reason", self.reason), ("fieldPath", self.field_path),
                           ("optionalOldSelf", self.optional_old_self)):
            if value is not None:
                out[key] = value
        return out

    def apply(self, schema: dict[str, Any]) -> dict[str, Any]:
        schema[X_VALIDATIONS] = [*schema.get(X_VALIDATIONS, ()), self.to_dict()]
        return schema


def validation(rule: str, message: str | None = None, *, message_expression: str | None = None,
               reason: str | None = None, field_path: str | None = None,
               optional_old_self: bool | None = None) -> Validation:
    """A CEL rule for a field (``Annotated[T, validation(...)]``) or a model (``__validations__ = [...]``)."""
    return Validation(rule, message, message_expression, reason, field_path, optional_old_self)


@dataclass(frozen=True)
class ListType(SchemaMarker):
    """``x-kubernetes-list-type`` (+ map keys): how server-side apply merges the list."""

    type: Literal["atomic", "set", "map"]
    map_keys: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.type not in ("atomic", "set", "map"):
            raise ValueError(f"list_type(): type must be atomic, set or map, not {self.type!r}")
        if (self.type == "map") != bool(self.map_keys):
            raise ValueError("list_type(): map keys are required for 'map' lists and only for them")

    def apply(self, schema: dict[str, Any]) -> dict[str, Any]:
        schema[X_LIST_TYPE] = self.type
        if self.map_keys:
            schema[X_LIST_MAP_KEYS] = list(self.map_keys)
        return schema


def list_type(type: Literal["atomic", "set", "map"], *map_keys: str) -> ListType:
    """``Annotated[list[Port], list_type("map", "name")]``."""
    return ListType(type, tuple(map_keys))


@dataclass(frozen=True)
class _Extra(SchemaMarker):
    """Sets fixed keys on the schema node."""

    items: tuple[tuple[str, Any], ...]

    def apply(self, schema: dict[str, Any]) -> dict[str, Any]:
        schema.update(self.items)
        return schema


def Format(name: str) -> SchemaMarker:  # noqa: N802 - reads like a type in Annotated[...]
    """``format`` of a scalar, e.g. ``Annotated[int, Format("int32")]``."""
    return _Extra((("format", name),))


def nullable() -> SchemaMarker:
    """Let the field be ``null`` (``Optional[X]`` alone only makes it omittable)."""
    return _Extra((("nullable", True),))


def preserve_unknown_fields() -> SchemaMarker:
    """Keep fields the schema does not declare instead of pruning them."""
    return _Extra(((X_PRESERVE, True),))


class _Opaque(SchemaMarker):
    """Replaces the field's schema instead of editing it, so its type is never walked."""

    def __get_pydantic_json_schema__(self, core: cs.CoreSchema, handler: Any) -> JsonSchemaValue:
        return {X_PRESERVE: True}


def opaque() -> SchemaMarker:
    """Any JSON value, stored as sent and not validated by the server (also breaks type recursion)."""
    return _Opaque()


def embedded_resource() -> SchemaMarker:
    """The field holds a whole object (apiVersion/kind/metadata validated like a top-level one)."""
    return _Extra((("x-kubernetes-embedded-resource", True), (X_PRESERVE, True)))


def map_type(type: Literal["atomic", "granular"]) -> SchemaMarker:
    """``x-kubernetes-map-type`` of an object or a dict."""
    return _Extra((("x-kubernetes-map-type", type),))


IntOrString = Annotated[int | str, _Extra(((X_INT_OR_STRING, True),))]
Int32 = Annotated[int, Format("int32")]
Int64 = Annotated[int, Format("int64")]


class _KubeJsonSchema(GenerateJsonSchema):
    """Adds a model's class-level ``__validations__`` rules to the model's schema."""

    def model_schema(self, schema: cs.ModelSchema) -> JsonSchemaValue:
        json_schema = super().model_schema(schema)
        rules = getattr(schema["cls"], "__validations__", None) or ()
        for rule in rules:
            if not isinstance(rule, Validation):
                raise TypeError(f"{schema['cls'].__name__}.__validations__ must hold validation(...) objects")
            json_schema = rule.apply(json_schema)
        return json_schema


# ---------------------------------------------------------------------------------------------- rewrite


def openapi_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The structural schema of ``model`` (properties by alias, validation-mode view)."""
    raw = model.model_json_schema(by_alias=True, schema_generator=_KubeJsonSchema, mode="validation")
    defs = raw.pop("$defs", {})
    schema = _Rewriter(defs).node(raw, model.__name__, ())
    problems = structural_problems(schema)
    if problems:  # a bug in the rewrite, not in the user's model
        raise NotStructuralError(f"{model.__name__}: " + "; ".join(problems))
    return schema


def crd_root_schema(model: type[BaseModel]) -> dict[str, Any]:
    """``openAPIV3Schema`` of a custom resource: the server owns ``metadata``, so only its type is given."""
    schema = openapi_schema(model)
    props = schema.setdefault("properties", {})
    props["apiVersion"] = {"type": "string"}
    props["kind"] = {"type": "string"}
    props["metadata"] = {"type": "object"}
    required = [r for r in schema.get("required", ()) if r not in ("apiVersion", "kind", "metadata")]
    if required:
        schema["required"] = required
    else:
        schema.pop("required", None)
    return schema


def _merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    """``over`` (the use site: field description, default, markers) wins; CEL rules accumulate."""
    out = {**base, **over}
    if X_VALIDATIONS in base and X_VALIDATIONS in over:
        out[X_VALIDATIONS] = [*base[X_VALIDATIONS], *over[X_VALIDATIONS]]
    return out


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    raise TypeError(type(value).__name__)


def _drop_nulls(value: Any) -> Any:
    """Object defaults built from models carry ``None`` for unset optionals; the server would reject them."""
    if isinstance(value, dict):
        return {k: _drop_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_drop_nulls(v) for v in value]
    return value


class _Rewriter:
    def __init__(self, defs: dict[str, Any]) -> None:
        self.defs = defs

    def fail(self, path: str, why: str) -> NotStructuralError:
        return NotStructuralError(f"{path}: {why}")

    def resolve(self, node: dict[str, Any], path: str,
                stack: tuple[str, ...]) -> tuple[dict[str, Any], tuple[str, ...]]:
        """Inline ``$ref``/single ``allOf`` and collapse ``anyOf`` until the node is plain."""
        while True:
            if "allOf" in node:
                parts = node["allOf"]
                if len(parts) != 1:
                    raise self.fail(path, "allOf of several schemas is not supported")
                node = _merge(parts[0], {k: v for k, v in node.items() if k != "allOf"})
            elif "$ref" in node:
                name = node["$ref"].rsplit("/", 1)[-1]
                if name in stack:
                    raise self.fail(path, f"{name} refers to itself and cannot be inlined; mark the field "
                                          "Annotated[..., opaque()] to store it unvalidated")
                stack = (*stack, name)
                node = _merge(self.defs[name], {k: v for k, v in node.items() if k != "$ref"})
            elif "anyOf" in node or "oneOf" in node:
                key = "anyOf" if "anyOf" in node else "oneOf"
                options = node[key]
                rest = {k: v for k, v in node.items() if k != key}
                non_null = [o for o in options if o.get("type") != "null"]
                if node.get(X_INT_OR_STRING):
                    node = rest
                elif len(non_null) == 1:
                    node = _merge(non_null[0], rest)
                elif sorted(o.get("type", "") for o in non_null) == ["integer", "string"] and all(
                        set(o) <= {"type"} for o in non_null):
                    node = {**rest, X_INT_OR_STRING: True}
                else:
                    kinds = ", ".join(o.get("type") or o.get("$ref", "?").rsplit("/", 1)[-1]
                                      for o in non_null)
                    raise self.fail(path, f"union of {kinds} is not structural; use one model with optional "
                                          "fields (plus a CEL validation() for exclusivity) or IntOrString")
            else:
                return node, stack

    def node(self, raw: dict[str, Any], path: str, stack: tuple[str, ...]) -> dict[str, Any]:
        node, stack = self.resolve(dict(raw), path, stack)
        for key, why in _REJECT.items():
            if key in node:
                raise self.fail(path, why)
        if node.get("type") == "null":
            raise self.fail(path, "a field that can only be null has no structural type")

        out: dict[str, Any] = {}
        for key, value in node.items():
            if key in _KEEP or key.startswith("x-kubernetes-"):
                out[key] = value
        if "description" in out and not out["description"]:
            del out["description"]

        if "const" in node:
            out["enum"] = [node["const"]]
        if "enum" in out and "type" not in out:
            types = {_json_type(v) for v in out["enum"]}
            if len(types) != 1:
                raise self.fail(path, f"enum mixes types {sorted(types)}; Kubernetes needs one type")
            out["type"] = types.pop()
        for bound, flag in (("minimum", "exclusiveMinimum"), ("maximum", "exclusiveMaximum")):
            # draft 2020-12 puts the bound in exclusive*; OpenAPI 3.0 wants the bound plus a boolean
            if flag in out and not isinstance(out[flag], bool):
                out[bound] = out[flag]
                out[flag] = True
        if out.get("format") is not None and out["format"] not in _KUBE_FORMATS:
            del out["format"]
        if "default" in out:
            # the server cannot store a null default (it reads as "no default"), so never emit one
            if out["default"] is None:
                del out["default"]
            else:
                out["default"] = _drop_nulls(out["default"])

        if "properties" in out:
            out["properties"] = {
                name: self.node(sub, f"{path}.{name}", stack) for name, sub in out["properties"].items()}
        if "items" in out:
            out["items"] = self.node(out["items"], f"{path}[]", stack)
        if node.get("uniqueItems"):
            # the server forbids uniqueItems: true (quadratic); a set list gives the same guarantee
            if out.get("items", {}).get("type") not in _SCALARS:
                raise self.fail(path, "a set of non-scalar items is not supported; use a list")
            out.setdefault(X_LIST_TYPE, "set")
        additional = out.pop("additionalProperties", None)
        if isinstance(additional, dict):
            if additional and "properties" not in out:
                out["additionalProperties"] = self.node(additional, f"{path}.*", stack)
            else:  # dict[str, Any]
                out[X_PRESERVE] = True
        elif additional is True:  # dict[str, Any] or a model with extra="allow"
            out[X_PRESERVE] = True
        # additionalProperties: false (extra="forbid") is dropped: the server prunes unknown fields anyway

        if "type" not in out and not out.get(X_INT_OR_STRING):
            out[X_PRESERVE] = True  # Any: no type, so the value must be kept as is
        self.check_list(out, path)
        return out

    def check_list(self, out: dict[str, Any], path: str) -> None:
        kind = out.get(X_LIST_TYPE)
        if kind is None:
            return
        if out.get("type") != "array":
            raise self.fail(path, "list_type() applies to lists only")
        items = out.get("items", {})
        if kind == "set" and items.get("type") not in _SCALARS:
            raise self.fail(path, "list_type('set') needs scalar items")
        if kind == "map":
            if items.get("type") != "object":
                raise self.fail(path, "list_type('map') needs object items")
            props, required = items.get("properties", {}), set(items.get("required", ()))
            for key in out.get(X_LIST_MAP_KEYS, ()):
                if key not in props:
                    raise self.fail(path, f"map key {key!r} is not a field of the items")
                if key not in required and "default" not in props[key]:
                    raise self.fail(path, f"map key {key!r} must be required or have a default")


# ---------------------------------------------------------------------------------------------- checks

_FORBIDDEN = ("$ref", "$defs", "definitions", "title", "const", "prefixItems", "oneOf", "allOf", "not")


def structural_problems(schema: dict[str, Any], path: str = "") -> list[str]:
    """Everything in ``schema`` that would make the API server call it non-structural (empty = fine)."""
    problems: list[str] = []
    where = path or "<root>"
    for key in _FORBIDDEN:
        if key in schema:
            problems.append(f"{where}: {key} is not allowed")
    if "anyOf" in schema and any(set(o) & {"type", "properties", "items"} for o in schema["anyOf"]):
        problems.append(f"{where}: anyOf may not specify types")
    if "type" not in schema and not (schema.get(X_INT_OR_STRING) or schema.get(X_PRESERVE)):
        problems.append(f"{where}: type is missing")
    if schema.get("uniqueItems"):
        problems.append(f"{where}: uniqueItems must not be true")
    additional = schema.get("additionalProperties")
    if additional is not None and (additional is False or additional is True or "properties" in schema):
        problems.append(f"{where}: additionalProperties must be a schema and exclude properties")
    if schema.get("type") == "array" and not isinstance(schema.get("items"), dict):
        problems.append(f"{where}: arrays need a single items schema")
    for name, sub in schema.get("properties", {}).items():
        problems += structural_problems(sub, f"{path}.{name}")
    if isinstance(schema.get("items"), dict):
        problems += structural_problems(schema["items"], f"{path}[]")
    if isinstance(additional, dict):
        problems += structural_problems(additional, f"{path}.*")
    return problems
