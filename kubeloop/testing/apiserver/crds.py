"""What kube-apiserver's apiextensions validation refuses in a CustomResourceDefinition (422 Invalid),
for the mistakes a CRD written by hand or generated meets:

- ``metadata.name`` must be ``<spec.names.plural>.<spec.group>``; the group a domain with a dot;
- ``spec.names``: plural and singular RFC 1035 labels, kind and list kind required (list kind defaults
  from kind);
- ``spec.scope`` ``Cluster`` or ``Namespaced``;
- ``spec.versions``: RFC 1035 names, exactly one storage version (and ``status.storedVersions`` must
  then hold it), a schema for each;
- the schema structural where kubeloop's users trip: an object at the root, a type for every property
  and array item (unless int-or-string or preserving unknown fields); no ``$ref``, ``id``,
  ``patternProperties``, ``dependencies``, ``additionalItems``, ``definitions``, ``$schema``,
  ``uniqueItems: true``,
  items as a list, ``properties`` with ``additionalProperties``, ``x-kubernetes-preserve-unknown-fields:
  false``; a ``set`` of scalars, a ``map`` with keys; under allOf/anyOf/oneOf/not no type, description,
  title, nullable, default, additionalProperties or CEL rules;
- a keyword the fake does not validate custom resources by (``x-kubernetes-embedded-resource``, an
  extension under allOf/anyOf/oneOf/not) is refused with 501
  (``KEYWORDS`` lists those it does); unknown keys are dropped, as the real server drops them;
- CEL rules (``x-kubernetes-validations``) must compile: a syntax error, or a field of ``self`` the
  schema does not declare, is refused as the real compiler refuses it (with cel-python installed).

Schemas identical across versions are reported under ``spec.validation`` (where the real server's
internal type keeps them), others under ``spec.versions[i].schema``. Other rules (printer columns,
conversion webhooks, defaults that fail their own schema...) are not checked.
"""

from __future__ import annotations

import json
from typing import Any

from kubeloop.testing.apiserver import errors, names

Cause = tuple[str, str, str]
RULES = "x-kubernetes-validations"


def causes(crd: dict[str, Any], *, creating: bool) -> list[Cause]:
    given = crd.get("spec")
    spec: dict[str, Any] = given if isinstance(given, dict) else {}
    out = _names(crd, spec) + _scope(spec)
    versions = [v for v in spec.get("versions") or [] if isinstance(v, dict)]
    out += _versions(versions, creating)
    out += _schemas(versions)
    return out


def _invalid(field: str, value: Any, msg: str) -> Cause:
    shown = f'"{value}"' if isinstance(value, str) else json.dumps(value, separators=(",", ":"))
    return ("FieldValueInvalid", field, f"Invalid value: {shown}: {msg}")


def _names(crd: dict[str, Any], spec: dict[str, Any]) -> list[Cause]:
    out: list[Cause] = []
    group = spec.get("group") or ""
    given = spec.get("names")
    crd_names: dict[str, Any] = given if isinstance(given, dict) else {}
    plural = crd_names.get("plural") or ""
    name = (crd.get("metadata") or {}).get("name") or ""
    if name != f"{plural}.{group}":
        out.append(_invalid("metadata.name", name, 'must be spec.names.plural+"."+spec.group'))
    if not group:
        out.append(("FieldValueRequired", "spec.group", "Required value"))
    elif "." not in group:
        out.append(_invalid("spec.group", group, "should be a domain with at least one dot"))
    else:
        out += [_invalid("spec.group", group, e) for e in names.dns1123_subdomain(group)]
    for key in ("plural", "singular"):
        value = crd_names.get(key) or ""
        if key == "plural" and not value:
            out.append(("FieldValueRequired", "spec.names.plural", "Required value"))
        elif value:
            out += [_invalid(f"spec.names.{key}", value, e) for e in names.dns1035_label(value)]
    for key in ("kind", "listKind"):
        value = crd_names.get(key) or ""
        if not value:
            out.append(("FieldValueRequired", f"spec.names.{key}", "Required value"))
        elif names.dns1035_label(value.lower()):
            out.append(_invalid(f"spec.names.{key}", value, "may have mixed case, but should otherwise match: "
                                "[a-z]([-a-z0-9]*[a-z0-9])?"))
    if crd_names.get("kind") and crd_names.get("kind") == crd_names.get("listKind"):
        out.append(_invalid("spec.names.listKind", crd_names["listKind"], "kind and listKind may not be the same "
                            "or listKind may not be the same as kind"))
    return out


def _scope(spec: dict[str, Any]) -> list[Cause]:
    scope = spec.get("scope")
    if not scope:
        return [("FieldValueRequired", "spec.scope", "Required value")]
    if scope not in ("Cluster", "Namespaced"):
        return [("FieldValueNotSupported", "spec.scope", f'Unsupported value: "{scope}": supported values: '
                 '"Cluster", "Namespaced"')]
    return []


def _versions(versions: list[dict[str, Any]], creating: bool) -> list[Cause]:
    out: list[Cause] = []
    for i, version in enumerate(versions):
        name = version.get("name") or ""
        errs = names.dns1035_label(name) if name else []
        out += [_invalid(f"spec.versions[{i}].name", name, e) for e in errs]
        if i == 0:  # the internal type's own ``spec.version`` is the first version's name
            out += [_invalid("spec.version", name, e) for e in errs]
    storage = [v.get("name") for v in versions if v.get("storage")]
    if len(storage) != 1:
        shown = [{"Name": v.get("name", ""), "Served": bool(v.get("served")), "Storage": bool(v.get("storage"))}
                 for v in versions]
        out.append(_invalid("spec.versions", shown, "must have exactly one version marked as storage version"))
    if creating:  # on create the stored versions are the storage versions the spec names (the first one)
        stored = storage[:1] or None
        if not stored:
            out.append(_invalid("status.storedVersions", None, "must have at least one stored version"))
        elif len(storage) > 1:
            out.append(_invalid("status.storedVersions", stored, f"must have the storage version {storage[-1]}"))
    return out


def _schema_of(version: dict[str, Any]) -> Any:
    return (version.get("schema") or {}).get("openAPIV3Schema") if isinstance(version.get("schema"), dict) else None


def _schemas(versions: list[dict[str, Any]]) -> list[Cause]:
    out: list[Cause] = []
    found = [_schema_of(v) for v in versions]
    for i, schema in enumerate(found):
        if schema is None:
            out.append(("FieldValueRequired", f"spec.versions[{i}].schema.openAPIV3Schema", "Required value"))
    if not found or any(s is None for s in found):
        return out
    if all(s == found[0] for s in found):  # hoisted to spec.validation in the internal type
        return out + _structural(found[0], "spec.validation.openAPIV3Schema", root=True)
    for i, schema in enumerate(found):
        out += _structural(schema, f"spec.versions[{i}].schema.openAPIV3Schema", root=True)
    return out


def _structural(node: Any, path: str, *, root: bool = False, what: str = "") -> list[Cause]:
    if not isinstance(node, dict):
        return []
    out: list[Cause] = []
    kind = node.get("type")
    untyped_ok = node.get("x-kubernetes-int-or-string") or node.get("x-kubernetes-preserve-unknown-fields")
    if root and kind != "object":
        out.append(_invalid(f"{path}.type", kind, "must be object at the root") if kind else
                   ("FieldValueRequired", f"{path}.type", "Required value: must not be empty at the root"))
    elif what and not kind and not untyped_ok and "$ref" not in node:
        out.append(("FieldValueRequired", f"{path}.type", f"Required value: must not be empty for specified {what}"))
    for i, rule in enumerate(node.get(RULES) or []):
        why = compile_error((rule or {}).get("rule", ""), node, root=root) if isinstance(rule, dict) else None
        if why:
            shown = {"Rule": rule.get("rule", ""), "Message": rule.get("message", ""),
                     "MessageExpression": rule.get("messageExpression", ""), "Reason": rule.get("reason"),
                     "FieldPath": rule.get("fieldPath", ""), "OptionalOldSelf": rule.get("optionalOldSelf")}
            out.append(_invalid(f"{path}.{RULES}[{i}].rule", shown, f"compilation failed: {why}"))
    out += _keywords(node, path) + _default_type(node, path)
    for key, sub in sorted((node.get("properties") or {}).items()):
        out += _structural(sub, f"{path}.properties[{key}]", what="object fields")
    if isinstance(node.get("items"), dict):
        out += _structural(node["items"], f"{path}.items", what="array items")
    if isinstance(node.get("additionalProperties"), dict):
        out += _structural(node["additionalProperties"], f"{path}.additionalProperties", what="object fields")
    for junctor in ("allOf", "anyOf", "oneOf"):
        if _int_or_string_pattern(node, junctor):
            continue
        for i, sub in enumerate(node.get(junctor) or []):
            out += _value_validation(sub, f"{path}.{junctor}[{i}]")
    if isinstance(node.get("not"), dict):
        out += _value_validation(node["not"], f"{path}.not")
    return out


# The OpenAPI keywords a CRD schema may use and the fake validates custom resources by (schema.py,
# formats.py, cel.py), or that carry no rule (description, example...). Others the real server refuses
# (``_UNSUPPORTED``, ``$schema``) or drops as unknown fields (the fake drops them too, ``clean``);
# x-kubernetes-embedded-resource it accepts and the fake does not model: refused with 501.
KEYWORDS = frozenset({
    "type", "format", "enum", "nullable", "default", "description", "title", "example", "externalDocs",
    "maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum", "multipleOf", "maxLength", "minLength", "pattern",
    "maxItems", "minItems", "uniqueItems", "maxProperties", "minProperties", "required", "items", "properties",
    "additionalProperties", "allOf", "anyOf", "oneOf", "not", "x-kubernetes-preserve-unknown-fields",
    "x-kubernetes-int-or-string", "x-kubernetes-list-type", "x-kubernetes-list-map-keys", "x-kubernetes-map-type",
    RULES,
})
_UNSUPPORTED = ("id", "$ref", "patternProperties", "dependencies", "additionalItems", "definitions")
_NOT_MODELLED = ("x-kubernetes-embedded-resource",)
# JSONSchemaProps' fields: any other key of a schema is an unknown field, dropped when the CRD is decoded.
_FIELDS = KEYWORDS | set(_UNSUPPORTED) | set(_NOT_MODELLED) | {"$schema"}
_SCALARS = ("string", "integer", "number", "boolean")


def clean(crd: dict[str, Any]) -> None:
    """Drops the unknown keys of every version's schema (a typo such as ``minimun``) and the empty ones
    (``uniqueItems: false``), as decoding and encoding the CRD do on the real server."""
    for version in ((crd.get("spec") or {}).get("versions") or []) if isinstance(crd.get("spec"), dict) else []:
        found = _schema_of(version) if isinstance(version, dict) else None
        if isinstance(found, dict):
            _clean(found)


# JSONSchemaProps' fields Go omits when empty (omitempty): false booleans, empty strings and lists.
_OMITTED = {**dict.fromkeys(("uniqueItems", "nullable", "exclusiveMaximum", "exclusiveMinimum",
                             "x-kubernetes-int-or-string", "x-kubernetes-embedded-resource"), False),
            **dict.fromkeys(("description", "type", "format", "title", "pattern", "id", "$schema", "$ref"), ""),
            **{k: [] for k in ("enum", "required", "allOf", "oneOf", "anyOf", "x-kubernetes-list-map-keys", RULES)},
            **{k: {} for k in ("properties", "patternProperties", "dependencies", "definitions")}}


def _clean(node: Any) -> None:
    if not isinstance(node, dict):
        return
    for key in [k for k in node if k not in _FIELDS or (k in _OMITTED and node[k] == _OMITTED[k]
                                                          and type(node[k]) is type(_OMITTED[k]))]:
        del node[key]
    for key in ("properties", "definitions", "patternProperties"):
        for sub in (node.get(key) or {}).values() if isinstance(node.get(key), dict) else ():
            _clean(sub)
    for key in ("items", "additionalProperties", "not", "additionalItems"):
        _clean(node.get(key))
    for key in ("allOf", "anyOf", "oneOf"):
        for sub in node.get(key) or [] if isinstance(node.get(key), list) else []:
            _clean(sub)
    if isinstance(node.get("items"), list):
        for sub in node["items"]:
            _clean(sub)


def _keywords(node: dict[str, Any], path: str) -> list[Cause]:
    """What the real server refuses in any schema node, and the keywords the fake does not model."""
    for key in _NOT_MODELLED:
        if key in node:
            raise errors.not_served(f"the schema keyword {key} (at {path}) in a CustomResourceDefinition, which the "
                                    "fake does not validate custom resources by")
    out: list[Cause] = [("FieldValueForbidden", f"{path}.{key}", f"Forbidden: {key} is not supported")
                        for key in _UNSUPPORTED if key in node]
    if "$schema" in node:  # reported on the root schema, wherever it is
        root = path[:path.index("openAPIV3Schema") + len("openAPIV3Schema")] if "openAPIV3Schema" in path else path
        out.append(_invalid(root, "", "OpenAPIV3Schema 'schema' is not supported"))
    if node.get("uniqueItems") is True:
        out.append(("FieldValueForbidden", f"{path}.uniqueItems", "Forbidden: uniqueItems cannot be set to true "
                    "since the runtime complexity becomes quadratic"))
    if isinstance(node.get("items"), list):
        out.append(("FieldValueForbidden", f"{path}.items", "Forbidden: items must be a schema object and not an "
                    "array"))
    if node.get("properties") and isinstance(node.get("additionalProperties"), dict):
        out.append(("FieldValueForbidden", f"{path}.additionalProperties", "Forbidden: additionalProperties and "
                    "properties are mutual exclusive"))
    if node.get("x-kubernetes-preserve-unknown-fields") is False:
        out.append(_invalid(f"{path}.x-kubernetes-preserve-unknown-fields", False, "must be true or undefined"))
    listed = node.get("x-kubernetes-list-type")
    items: dict[str, Any] = node["items"] if isinstance(node.get("items"), dict) else {}
    if listed == "set" and items.get("type") not in _SCALARS and items.get("x-kubernetes-map-type") != "atomic":
        out.append(_invalid(f"{path}.items.x-kubernetes-map-type", None, "must be atomic as item of a list with "
                            "x-kubernetes-list-type=set"))
    if listed == "map" and not node.get("x-kubernetes-list-map-keys"):
        out.append(("FieldValueRequired", f"{path}.x-kubernetes-list-map-keys", "Required value: must not be empty "
                    "if x-kubernetes-list-type is map"))
    return out


_JSON_TYPES = {bool: "boolean", int: "integer", float: "number", str: "string", list: "array", dict: "object"}


def _default_type(node: dict[str, Any], path: str) -> list[Cause]:
    """A scalar's default of another type (validated against its schema, from an empty field name)."""
    kind, value = node.get("type"), node.get("default")
    if kind not in _SCALARS or "default" not in node or value is None or node.get("x-kubernetes-int-or-string"):
        return []
    got = _JSON_TYPES.get(type(value), "")
    if got == kind or (kind == "number" and got == "integer") or (kind == "integer" and got == "number"
                                                                 and float(value).is_integer()):
        return []
    return [("FieldValueTypeInvalid", f"{path}.default", f'Invalid value: "{got}":  in body must be of type '
             f'{kind}: "{got}"')]


def _int_or_string_pattern(node: dict[str, Any], junctor: str) -> bool:
    """``anyOf: [{type: integer}, {type: string}]`` beside x-kubernetes-int-or-string: allowed as it is."""
    return junctor == "anyOf" and bool(node.get("x-kubernetes-int-or-string")) and sorted(
        (b.get("type") for b in node.get("anyOf") or [] if isinstance(b, dict)), key=str) == ["integer", "string"]


_IN_VALUE_VALIDATION = {"type": "must be empty", "description": "must be empty", "title": "must be empty",
                        "nullable": "must be false", "default": "must be undefined",
                        "additionalProperties": "must be undefined", RULES: "must be empty"}


def _value_validation(node: Any, path: str) -> list[Cause]:
    """A schema under allOf, anyOf, oneOf or not: constraints only (no type, no default...), as the
    structural schema rules require."""
    if not isinstance(node, dict):
        return []
    out: list[Cause] = []
    for key, why in _IN_VALUE_VALIDATION.items():
        if key in node and not (key == "nullable" and node[key] is False):
            out.append(("FieldValueForbidden", f"{path}.{key}", f"Forbidden: {why} to be structural"))
    for key in node:
        if key.startswith("x-kubernetes-") and key != RULES:
            raise errors.not_served(f"the schema keyword {key} under allOf/anyOf/oneOf/not (at {path}) in a "
                                    "CustomResourceDefinition")
    out += [("FieldValueForbidden", f"{path}.{key}", f"Forbidden: {key} is not supported")
            for key in _UNSUPPORTED if key in node]
    for key, sub in sorted((node.get("properties") or {}).items()):
        out += _value_validation(sub, f"{path}.properties[{key}]")
    if isinstance(node.get("items"), dict):
        out += _value_validation(node["items"], f"{path}.items")
    for junctor in ("allOf", "anyOf", "oneOf"):
        for i, sub in enumerate(node.get(junctor) or []):
            out += _value_validation(sub, f"{path}.{junctor}[{i}]")
    if isinstance(node.get("not"), dict):
        out += _value_validation(node["not"], f"{path}.not")
    return out


def compile_error(rule: str, node: dict[str, Any], *, root: bool = False) -> str | None:
    """Why a CEL rule does not compile against the schema ``node`` it is declared on (None: it does, or
    cel-python is not installed and custom resources with rules are refused anyway). At the root,
    ``apiVersion``, ``kind`` and ``metadata`` are declared whatever the schema says."""
    try:
        import celpy
    except ImportError:
        return None
    try:
        tree = celpy.Environment().compile(rule)
    except Exception as exc:  # noqa: BLE001 - cel-python's parse errors have several types
        return f"ERROR: <input>: Syntax error: {str(exc).splitlines()[0] if str(exc) else 'invalid'}"
    declared = _declared(node)
    for field, column in _self_fields(tree):
        if field not in declared and not (root and field in ("apiVersion", "kind", "metadata")):
            return f"ERROR: <input>:1:{column}: undefined field '{field}'"
    return None


def _declared(node: dict[str, Any]) -> Any:
    """The fields a rule may name on ``self`` (everything, when the schema does not close the object)."""
    if node.get("type") != "object" or node.get("x-kubernetes-preserve-unknown-fields") or \
            node.get("additionalProperties") not in (None, False):
        return _Anything()
    return set(node.get("properties") or {})


class _Anything:
    def __contains__(self, item: object) -> bool:
        return True


def _self_fields(tree: Any) -> list[tuple[str, int]]:
    """``self.<field>`` (and ``oldSelf.<field>``) selections in a parsed rule, with their columns."""
    from lark import Token, Tree

    found: list[tuple[str, int]] = []
    for sub in tree.iter_subtrees():
        if sub.data != "member_dot" or len(sub.children) < 2 or not isinstance(sub.children[1], Token):
            continue
        base = sub.children[0]
        idents = [t for t in base.scan_values(lambda v: isinstance(v, Token))] if isinstance(base, Tree) else []
        if len(idents) == 1 and idents[0].type == "IDENT" and str(idents[0]) in ("self", "oldSelf"):
            found.append((str(sub.children[1]), (sub.children[1].column or 1) - 1))
    return found
