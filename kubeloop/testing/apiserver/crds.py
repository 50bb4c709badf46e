"""What kube-apiserver's apiextensions validation refuses in a CustomResourceDefinition (422 Invalid),
for the mistakes a CRD written by hand or generated meets:

- ``metadata.name`` must be ``<spec.names.plural>.<spec.group>``; the group a domain with a dot;
- ``spec.names``: plural and singular RFC 1035 labels, kind and list kind required (list kind defaults
  from kind);
- ``spec.scope`` ``Cluster`` or ``Namespaced``;
- ``spec.versions``: unique RFC 1035 names, exactly one storage version (and ``status.storedVersions``
  must then hold it), a schema for each;
- on update: group and plural immutable, scope and kind too once Established; the storage version joins
  ``status.storedVersions`` and a stored version may not leave ``spec.versions``;
- the schema structural where kubeloop's users trip: an object at the root, a type for every property
  and array item (unless int-or-string or preserving unknown fields); no ``$ref``, ``id``,
  ``patternProperties``, ``dependencies``, ``additionalItems``, ``definitions``, ``$schema``,
  ``uniqueItems: true``,
  items as a list, ``properties`` with ``additionalProperties``, ``x-kubernetes-preserve-unknown-fields:
  false``; a ``set`` of scalars, a ``map`` with keys; under allOf/anyOf/oneOf/not no type, description,
  title, nullable, default, additionalProperties or CEL rules;
- an embedded resource (``x-kubernetes-embedded-resource``) an object with properties or preserving
  unknown fields, its apiVersion and kind strings, its metadata as the root's (see ``embedded.py``);
- a keyword the fake does not validate custom resources by (an extension under allOf/anyOf/oneOf/not)
  is refused with 501 (``KEYWORDS`` lists those it does); unknown keys are dropped, as the real server
  drops them;
- CEL rules (``x-kubernetes-validations``) must compile: a syntax error, or a field of ``self`` the
  schema does not declare, is refused as the real compiler refuses it (with cel-python installed).

Schemas identical across versions are reported under ``spec.validation`` (where the real server's
internal type keeps them), others under ``spec.versions[i].schema``. Other rules (printer columns,
conversion webhooks, defaults that fail their own schema...) are not checked.
"""

from __future__ import annotations

import copy
import json
import re
import urllib.parse
from typing import Any

from kubeloop.testing.apiserver import embedded, errors, names, schema

Cause = tuple[str, str, str]
RULES = "x-kubernetes-validations"


def causes(crd: dict[str, Any], *, creating: bool, old: dict[str, Any] | None = None) -> list[Cause]:
    given = crd.get("spec")
    spec: dict[str, Any] = given if isinstance(given, dict) else {}
    out = _names(crd, spec, creating) + _scope(spec)
    versions = [v for v in spec.get("versions") or [] if isinstance(v, dict)]
    out += _versions(versions, creating)
    out += _schemas(versions)
    out += _per_version(versions)
    if old is not None:
        out += _immutable(spec, old) + _stored_versions(crd, versions)
    out += _approval(crd, old)
    if spec.get("preserveUnknownFields") is True and not (old or {}).get("spec", {}).get("preserveUnknownFields"):
        out.append(_invalid("spec.preserveUnknownFields", True, "cannot set to true, set "
                            "x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema instead"))
    return out


def _invalid(field: str, value: Any, msg: str) -> Cause:
    # Go's %q for a string (escapes, unicode kept), JSON for the rest (encoding/json's, HTML-safe)
    shown = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    if not isinstance(value, str):
        shown = shown.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    return ("FieldValueInvalid", field, f"Invalid value: {shown}: {msg}")


def _names(crd: dict[str, Any], spec: dict[str, Any], creating: bool) -> list[Cause]:
    out: list[Cause] = []
    group = spec.get("group") or ""
    given = spec.get("names")
    crd_names: dict[str, Any] = given if isinstance(given, dict) else {}
    plural = crd_names.get("plural") or ""
    name = (crd.get("metadata") or {}).get("name") or ""
    # (on update the name is immutable, and group and plural are: see _immutable)
    if creating and name != f"{plural}.{group}":
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
                                + ",".join(names.dns1035_label(value.lower()))))
    for key in ("shortNames", "categories"):  # each an RFC 1035 label
        for i, value in enumerate(crd_names.get(key) or []):
            if isinstance(value, str) and names.dns1035_label(value):
                out.append(_invalid(f"spec.names.{key}[{i}]", value, ",".join(names.dns1035_label(value))))
    if crd_names.get("kind") and crd_names.get("kind") == crd_names.get("listKind"):
        out.append(_invalid("spec.names.listKind", crd_names["listKind"], "kind and listKind may not be the same"))
    return out


def _immutable(spec: dict[str, Any], old: dict[str, Any]) -> list[Cause]:
    """validateCustomResourceDefinitionSpecUpdate: group and plural name the resource, so never change;
    scope and kind shape what is stored, so are fixed once the CRD is Established."""
    old_spec = old.get("spec") or {}
    checked = [("spec.scope", ("scope",)), ("spec.names.kind", ("names", "kind"))] if established(old) else []
    checked += [("spec.group", ("group",)), ("spec.names.plural", ("names", "plural"))]
    out: list[Cause] = []
    for field, path in checked:
        new_value, old_value = _dig(spec, path), _dig(old_spec, path)
        if new_value != old_value:
            out.append(_invalid(field, new_value, "field is immutable"))
    return out


def _dig(node: Any, path: tuple[str, ...]) -> Any:
    for step in path:
        node = node.get(step) if isinstance(node, dict) else None
    return node if node is not None else ""


def established(crd: dict[str, Any]) -> bool:
    return any(c.get("type") == "Established" and c.get("status") == "True"
               for c in (crd.get("status") or {}).get("conditions") or [] if isinstance(c, dict))


def _stored_versions(crd: dict[str, Any], versions: list[dict[str, Any]]) -> list[Cause]:
    """ValidateCustomResourceDefinitionStoredVersions on update (the strategy has added the storage
    version already): a version once stored stays in spec.versions until a migration drops it from
    status.storedVersions, so no object is left in a version nobody can read."""
    stored = [v for v in (crd.get("status") or {}).get("storedVersions") or [] if isinstance(v, str)]
    if not stored:
        return [_invalid("status.storedVersions", None, "must have at least one stored version")]
    out: list[Cause] = []
    left = {v: i for i, v in enumerate(stored)}
    for version in versions:
        name = version.get("name")
        if version.get("storage") and name not in stored:
            out.append(_invalid("status.storedVersions", stored, f"must have the storage version {name}"))
        left.pop(str(name), None)
    for name, i in left.items():  # (Go ranges over a map: in any order; here in storedVersions' order)
        out.append(_invalid(f"status.storedVersions[{i}]", name, f"missing from spec.versions; {name} was "
                            f"previously a storage version, and must remain in spec.versions until a storage "
                            f"migration ensures no data remains persisted in {name} and removes {name} from "
                            "status.storedVersions"))
    return out


def add_stored_version(crd: dict[str, Any]) -> None:
    """The strategy's PrepareForUpdate: the storage version joins status.storedVersions (never leaves)."""
    status = crd.setdefault("status", {})
    stored = status.get("storedVersions") or []
    for version in (crd.get("spec") or {}).get("versions") or []:
        if isinstance(version, dict) and version.get("storage"):
            if version.get("name") not in stored:
                status["storedVersions"] = [*stored, version.get("name")]
            break


def _approval(crd: dict[str, Any], old: dict[str, Any] | None) -> list[Cause]:
    """validateAPIApproval: a group under k8s.io or kubernetes.io needs the approval annotation (a URL,
    or a reason starting with "unapproved"), unless an update leaves its state as it was."""
    group = (crd.get("spec") or {}).get("group") or ""
    if not any(group == d or group.endswith("." + d) for d in ("k8s.io", "kubernetes.io")):
        return []
    state, reason = _approval_state(crd)
    if old is not None and _approval_state(old)[0] == state:
        return []
    field = f"metadata.annotations[{APPROVAL}]"
    if state == "missing":
        return [("FieldValueRequired", field, f"Required value: {reason}")]
    if state == "invalid":
        return [_invalid(field, ((crd.get("metadata") or {}).get("annotations") or {}).get(APPROVAL, ""), reason)]
    return []


APPROVAL = "api-approved.kubernetes.io"


def _approval_state(crd: dict[str, Any]) -> tuple[str, str]:
    value = ((crd.get("metadata") or {}).get("annotations") or {}).get(APPROVAL) or ""
    where = "see https://github.com/kubernetes/enhancements/pull/1111"
    if not value:
        return "missing", f'protected groups must have approval annotation "{APPROVAL}", {where}'
    if value.startswith("unapproved"):
        return "bypassed", ""
    url = urllib.parse.urlparse(value)
    if url.scheme and url.netloc:
        return "approved", ""
    return "invalid", (f'protected groups must have approval annotation "{APPROVAL}" with either a URL or a '
                       f'reason starting with "unapproved", {where}')


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
    shown = _go_versions(versions)
    given = [v.get("name") for v in versions]
    if len(set(given)) != len(given):  # (one version's objects would be read as another's)
        out.append(_invalid("spec.versions", shown, "must contain unique version names"))
    if len(storage) != 1:
        out.append(_invalid("spec.versions", shown, "must have exactly one version marked as storage version"))
    if creating:  # on create the stored versions are the storage versions the spec names (the first one)
        stored = storage[:1] or None
        if not stored:
            out.append(_invalid("status.storedVersions", None, "must have at least one stored version"))
        elif len(storage) > 1:
            out.append(_invalid("status.storedVersions", stored, f"must have the storage version {storage[-1]}"))
    return out


def _go_versions(versions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """spec.versions as a message shows them: the internal Go type marshalled, whose per-version schema,
    subresources, columns and selectable fields are null when hoisted to spec (identical in every
    version) or absent. (Not hoisted, they are shown as sent: their Go field names are not modelled.)"""
    hoisted = {key: all(v.get(key) == versions[0].get(key) for v in versions)
               for key in ("schema", "subresources", "additionalPrinterColumns", "selectableFields")}
    return [{"Name": v.get("name", ""), "Served": bool(v.get("served")), "Storage": bool(v.get("storage")),
             "Deprecated": bool(v.get("deprecated")), "DeprecationWarning": v.get("deprecationWarning"),
             **{go: None if hoisted[key] else v.get(key) for key, go in (
                 ("schema", "Schema"), ("subresources", "Subresources"),
                 ("additionalPrinterColumns", "AdditionalPrinterColumns"), ("selectableFields", "SelectableFields"))}}
            for v in versions]


_COLUMN_TYPES = "boolean,date,integer,number,string"
_COLUMN_FORMATS = "byte,date,date-time,double,float,int32,int64,password"


def _per_version(versions: list[dict[str, Any]]) -> list[Cause]:
    """Deprecation warnings, the scale subresource's paths and printer columns; subresources and columns
    the same in every version are reported under ``spec`` (where the internal type keeps them)."""
    out: list[Cause] = []
    for i, version in enumerate(versions):
        warning = version.get("deprecationWarning")
        for msg in _warning_errors(bool(version.get("deprecated")), warning):
            out.append(_invalid(f"spec.versions[{i}].deprecationWarning", warning, msg))
    selectable = [v.get("selectableFields") for v in versions]
    if versions and all(g == selectable[0] for g in selectable):  # hoisted to spec, as the schema may be
        schemas = [_schema_of(v) for v in versions]
        if selectable[0] and any(t != schemas[0] for t in schemas):
            out.append(_invalid("spec.selectableFields", "", "may only be set when validations.schema is included"))
        elif selectable[0]:
            out += _selectable(selectable[0], schemas[0], "spec.selectableFields")
    else:
        out += [c for i, v in enumerate(versions)
                for c in _selectable(v.get("selectableFields"), _schema_of(v), f"spec.versions[{i}].selectableFields")]
    for key, check in (("subresources", _subresources), ("additionalPrinterColumns", _columns)):
        given = [v.get(key) for v in versions]
        if versions and all(g == given[0] for g in given):
            out += check(given[0], f"spec.{key}")
        else:
            out += [c for i, g in enumerate(given) for c in check(g, f"spec.versions[{i}].{key}")]
    return out


def _warning_errors(deprecated: bool, warning: Any) -> list[str]:
    if not deprecated and warning is not None:
        return ["can only be set for deprecated versions"]
    if not isinstance(warning, str):
        return []
    out = ["must be <= 256 characters long"] if len(warning.encode()) > 256 else []
    if not warning:
        out.append("must not be an empty string")
    at = next((i for i, ch in enumerate(warning) if not ch.isprintable()), None)
    if at is not None:
        out.append(f"must only contain printable UTF-8 characters; non-printable character found at index "
                   f"{len(warning[:at].encode())}")
    return out


def _selectable(fields: Any, root: Any, at: str) -> list[Cause]:
    """ValidateCustomResourceSelectableFields: dotted paths to a string, boolean or integer field outside
    metadata, each once, at most 8."""
    out: list[Cause] = []
    seen: set[str] = set()
    for i, entry in enumerate(fields if isinstance(fields, list) else []):
        where, path = f"{at}[{i}].jsonPath", (entry or {}).get("jsonPath") or "" if isinstance(entry, dict) else ""
        if not path:
            out.append(("FieldValueRequired", where, "Required value"))
            continue
        node = _field_schema(root, path)
        if node is None:
            out.append(_invalid(where, path, "is an invalid path: does not refer to a valid field"))
            continue
        if path.lstrip(".").split(".")[0] == "metadata":
            out.append(_invalid(where, path, "must not point to fields in metadata"))
        if node.get("type") not in ("string", "boolean", "integer"):
            out.append(_invalid(where, path, "must point to a field of type string, boolean or integer. Enum string "
                                "fields and strings with formats are allowed."))
        if path in seen:
            out.append(("FieldValueDuplicate", where, f'Duplicate value: "{path}"'))
        seen.add(path)
    if len(seen) > 8:
        out.append(("FieldValueTooMany", at, f"Too many: {len(seen)}: must have at most 8 items"))
    return out


def _field_schema(root: Any, path: str) -> dict[str, Any] | None:
    """The schema a dotted ``.a.b`` path names, or None when a step is not a declared property."""
    if not path.startswith(".") or not isinstance(root, dict):
        return None
    node: Any = root
    for step in path[1:].split("."):
        node = (node.get("properties") or {}).get(step) if isinstance(node, dict) else None
        if not isinstance(node, dict):
            return None
    found: dict[str, Any] = node
    return found


def selectable_fields(crd: dict[str, Any], version: str) -> tuple[str, ...]:
    """The field paths (``spec.color``) a version's field selectors may name besides metadata's."""
    for v in (crd.get("spec") or {}).get("versions") or []:
        if isinstance(v, dict) and v.get("name") == version:
            return tuple((f.get("jsonPath") or "").lstrip(".") for f in v.get("selectableFields") or []
                         if isinstance(f, dict))
    return ()


def _simple_path(value: str, field: str) -> list[Cause]:
    if not value:
        return [_invalid(field, value, "must not be empty")]
    if not value.startswith("."):
        return [_invalid(field, value, "must be a simple json path starting with .")]
    return []


def _subresources(sub: Any, field: str) -> list[Cause]:
    scale = sub.get("scale") if isinstance(sub, dict) else None
    if not isinstance(scale, dict):
        return []
    out: list[Cause] = []
    for key, under in (("specReplicasPath", ".spec"), ("statusReplicasPath", ".status")):
        value, at = scale.get(key) or "", f"{field}.scale.{key}"
        if not value:
            out.append(("FieldValueRequired", at, "Required value"))
        elif errs := _simple_path(value, at):
            out += errs
        elif not value.startswith(under + "."):
            out.append(_invalid(at, value, f"should be a json path under {under}"))
    selector, at = scale.get("labelSelectorPath") or "", f"{field}.scale.labelSelectorPath"
    if selector:
        if errs := _simple_path(selector, at):
            out += errs
        elif not selector.startswith((".spec.", ".status.")):
            out.append(_invalid(at, selector, "should be a json path under either .spec or .status"))
    return out


def _columns(columns: Any, field: str) -> list[Cause]:
    out: list[Cause] = []
    for i, col in enumerate(columns if isinstance(columns, list) else []):
        at = f"{field}[{i}]"
        col = col if isinstance(col, dict) else {}
        if not col.get("name"):
            out.append(("FieldValueRequired", f"{at}.name", "Required value"))
        kind = col.get("type") or ""
        if not kind:
            out.append(("FieldValueRequired", f"{at}.type", f"Required value: must be one of {_COLUMN_TYPES}"))
        elif kind not in _COLUMN_TYPES.split(","):
            out.append(_invalid(f"{at}.type", kind, f"must be one of {_COLUMN_TYPES}"))
        if col.get("format") and col["format"] not in _COLUMN_FORMATS.split(","):
            out.append(_invalid(f"{at}.format", col["format"], f"must be one of {_COLUMN_FORMATS}"))
        path = col.get("jsonPath") or ""
        if not path:
            out.append(("FieldValueRequired", f"{at}.JSONPath", "Required value"))
        else:
            out += _simple_path(path, f"{at}.JSONPath")
    return out


def _schema_of(version: dict[str, Any]) -> Any:
    return (version.get("schema") or {}).get("openAPIV3Schema") if isinstance(version.get("schema"), dict) else None


def _schemas(versions: list[dict[str, Any]]) -> list[Cause]:
    out: list[Cause] = []
    found = [_schema_of(v) for v in versions]
    for i, tree in enumerate(found):
        if tree is None:
            out.append(("FieldValueRequired", f"spec.versions[{i}].schema.openAPIV3Schema", "Required value"))
    if not found or any(s is None for s in found):
        return out
    status = [isinstance((v.get("subresources") or {}).get("status"), dict) for v in versions]
    if all(s == found[0] for s in found):  # hoisted to spec.validation in the internal type
        at = "spec.validation.openAPIV3Schema"
        return out + _status_root(found[0], at, any(status)) + _structural(found[0], at, root=True)
    for i, tree in enumerate(found):
        at = f"spec.versions[{i}].schema.openAPIV3Schema"
        out += _status_root(tree, at, status[i]) + _structural(tree, at, root=True)
    return out


# JSONSchemaProps of the internal type, in order, as encoding/json marshals it (no JSON tags: Go's names).
_GO_SCHEMA = (("ID", "id", ""), ("Schema", "$schema", ""), ("Ref", "$ref", None), ("Description", "description", ""),
              ("Type", "type", ""), ("Nullable", "nullable", False), ("Format", "format", ""), ("Title", "title", ""),
              ("Default", "default", None), ("Maximum", "maximum", None),
              ("ExclusiveMaximum", "exclusiveMaximum", False),
              ("Minimum", "minimum", None), ("ExclusiveMinimum", "exclusiveMinimum", False),
              ("MaxLength", "maxLength", None), ("MinLength", "minLength", None), ("Pattern", "pattern", ""),
              ("MaxItems", "maxItems", None), ("MinItems", "minItems", None), ("UniqueItems", "uniqueItems", False),
              ("MultipleOf", "multipleOf", None), ("Enum", "enum", None), ("MaxProperties", "maxProperties", None),
              ("MinProperties", "minProperties", None), ("Required", "required", None), ("Items", "items", None),
              ("AllOf", "allOf", None), ("OneOf", "oneOf", None), ("AnyOf", "anyOf", None), ("Not", "not", None),
              ("Properties", "properties", None), ("AdditionalProperties", "additionalProperties", None),
              ("PatternProperties", "patternProperties", None), ("Dependencies", "dependencies", None),
              ("AdditionalItems", "additionalItems", None), ("Definitions", "definitions", None),
              ("ExternalDocs", "externalDocs", None), ("Example", "example", None),
              ("XPreserveUnknownFields", "x-kubernetes-preserve-unknown-fields", None),
              ("XEmbeddedResource", "x-kubernetes-embedded-resource", False),
              ("XIntOrString", "x-kubernetes-int-or-string", False),
              ("XListMapKeys", "x-kubernetes-list-map-keys", None),
              ("XListType", "x-kubernetes-list-type", None), ("XMapType", "x-kubernetes-map-type", None),
              ("XValidations", RULES, None))


def go_schema(node: Any) -> Any:
    """A schema as a message shows it: the internal JSONSchemaProps marshalled, every field present."""
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for go, key, zero in _GO_SCHEMA:
        value = node.get(key, zero)
        if key in ("properties", "patternProperties", "definitions") and isinstance(value, dict):
            value = {k: go_schema(v) for k, v in value.items()}
        elif key in ("allOf", "oneOf", "anyOf") and isinstance(value, list):
            value = [go_schema(v) for v in value]
        elif key == "not" and value is not None:
            value = go_schema(value)
        elif key == "items" and value is not None:  # JSONSchemaPropsOrArray
            value = {"Schema": go_schema(value), "JSONSchemas": None} if isinstance(value, dict) else \
                {"Schema": None, "JSONSchemas": [go_schema(v) for v in value]}
        elif key in ("additionalProperties", "additionalItems") and value is not None:  # ...OrBool
            value = {"Allows": value is not False, "Schema": go_schema(value) if isinstance(value, dict) else None}
        elif key == "externalDocs" and isinstance(value, dict):
            value = {"Description": value.get("description", ""), "URL": value.get("url", "")}
        elif key == RULES and isinstance(value, list):
            value = [{"Rule": r.get("rule", ""), "Message": r.get("message", ""),
                      "MessageExpression": r.get("messageExpression", ""), "Reason": r.get("reason"),
                      "FieldPath": r.get("fieldPath", ""), "OptionalOldSelf": r.get("optionalOldSelf")}
                     for r in value if isinstance(r, dict)]
        out[go] = value
    return out


# What the root of a schema may hold when a status subresource takes properties[status] out of it.
_AT_STATUS_ROOT = frozenset({
    "description", "type", "format", "title", "maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum",
    "maxLength", "minLength", "pattern", "maxItems", "minItems", "uniqueItems", "multipleOf", "required", "items",
    "properties", "externalDocs", "example", "x-kubernetes-preserve-unknown-fields", RULES})


def _status_root(tree: Any, path: str, status: bool) -> list[Cause]:
    """With a status subresource, the root may only constrain what survives status being split off.
    (The real message shows the schema as the internal Go struct; here, as sent.)"""
    if not status or not isinstance(tree, dict):
        return []
    if tree.get("type") not in (None, "", "object"):
        return [_invalid(f"{path}.type", tree["type"], 'only "object" is allowed as the type at the root of the '
                         "schema if the status subresource is enabled")]
    if any(key not in _AT_STATUS_ROOT for key, value in tree.items() if value not in (None, False, "", [], {})):
        allowed = ("[Description Type Format Title Maximum ExclusiveMaximum Minimum ExclusiveMinimum MaxLength "
                   "MinLength Pattern MaxItems MinItems UniqueItems MultipleOf Required Items Properties ExternalDocs "
                   "Example XPreserveUnknownFields XValidations]")
        return [_invalid(path, go_schema(tree), f"only {allowed} fields are allowed at the root of the schema if the "
                         "status subresource is enabled")]
    return []


def _structural(node: Any, path: str, *, root: bool = False, what: str = "", uncorrelated: str = "") -> list[Cause]:
    """``uncorrelated``: the path of the first list (not a map list) above, where an old value cannot be
    matched to the new one, so no rule may use oldSelf."""
    if not isinstance(node, dict):
        return []
    out: list[Cause] = []
    kind = node.get("type")
    untyped_ok = node.get("x-kubernetes-int-or-string") or node.get("x-kubernetes-preserve-unknown-fields")
    if root and node.get("nullable") is True:
        out.append(("FieldValueForbidden", f"{path}.nullable", "Forbidden: nullable cannot be true at the root"))
    embedded = node.get("x-kubernetes-embedded-resource") is True
    for key in ("apiVersion", "kind", "metadata") if root else ():
        out += _defaults_forbidden((node.get("properties") or {}).get(key), f"{path}.properties[{key}]", key)
    if root and kind != "object":
        out.append(_invalid(f"{path}.type", kind, "must be object at the root") if kind else
                   ("FieldValueRequired", f"{path}.type", "Required value: must not be empty at the root"))
    elif embedded and kind != "object":
        must = "must be object if x-kubernetes-embedded-resource is true"
        out.append(_invalid(f"{path}.type", kind, must) if kind else ("FieldValueRequired", f"{path}.type",
                                                                      f"Required value: {must}"))
    elif what and not kind and not untyped_ok and "$ref" not in node:
        out.append(("FieldValueRequired", f"{path}.type", f"Required value: must not be empty for specified {what}"))
    out += _embedded_schema(node, path, root or embedded)
    out += _rule_fields(node, path)
    for i, rule in enumerate(node.get(RULES) or []):
        why = compile_error((rule or {}).get("rule", ""), node, root=root) if isinstance(rule, dict) else None
        if why:
            out.append(_invalid(f"{path}.{RULES}[{i}].rule", _go_rule(rule), f"compilation failed: {why}"))
        elif isinstance(rule, dict):
            out += _compiled_rule(rule, node, f"{path}.{RULES}[{i}]", uncorrelated)
    out += _keywords(node, path) + _default_type(node, path)
    for key, sub in sorted((node.get("properties") or {}).items()):  # (an atomic map's fields correlate)
        out += _structural(sub, f"{path}.properties[{key}]", what="object fields", uncorrelated=uncorrelated)
    if isinstance(node.get("items"), dict):
        keyed = node.get("x-kubernetes-list-type") == "map"
        out += _structural(node["items"], f"{path}.items", what="array items",
                           uncorrelated=uncorrelated or ("" if keyed else path))
    if isinstance(node.get("additionalProperties"), dict):
        out += _structural(node["additionalProperties"], f"{path}.additionalProperties", what="object fields",
                           uncorrelated=uncorrelated)
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
# (``_UNSUPPORTED``, ``$schema``) or drops as unknown fields (the fake drops them too, ``clean``).
KEYWORDS = frozenset({
    "type", "format", "enum", "nullable", "default", "description", "title", "example", "externalDocs",
    "maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum", "multipleOf", "maxLength", "minLength", "pattern",
    "maxItems", "minItems", "uniqueItems", "maxProperties", "minProperties", "required", "items", "properties",
    "additionalProperties", "allOf", "anyOf", "oneOf", "not", "x-kubernetes-preserve-unknown-fields",
    "x-kubernetes-int-or-string", "x-kubernetes-list-type", "x-kubernetes-list-map-keys", "x-kubernetes-map-type",
    "x-kubernetes-embedded-resource", RULES,
})
_UNSUPPORTED = ("id", "$ref", "patternProperties", "dependencies", "additionalItems", "definitions")
_NOT_MODELLED: tuple[str, ...] = ()
# JSONSchemaProps' fields: any other key of a schema is an unknown field, dropped when the CRD is decoded.
_FIELDS = KEYWORDS | set(_UNSUPPORTED) | set(_NOT_MODELLED) | {"$schema"}
_SCALARS = ("string", "integer", "number", "boolean")


def _embedded_schema(node: dict[str, Any], path: str, resource: bool) -> list[Cause]:
    """What a resource's schema (the root's, an embedded object's) may say of apiVersion, kind and
    metadata; an embedded object declares properties or preserves unknown fields, and has no
    additionalProperties."""
    out: list[Cause] = []
    embedded = node.get("x-kubernetes-embedded-resource") is True
    if embedded and isinstance(node.get("additionalProperties"), dict):
        out.append(("FieldValueForbidden", f"{path}.additionalProperties", "Forbidden: must not be used if "
                    "x-kubernetes-embedded-resource is set"))
    props = node.get("properties") or {}
    for key in ("kind", "apiVersion") if resource else ():
        if isinstance(props.get(key), dict) and props[key].get("type") != "string":
            out.append(_invalid(f"{path}.properties[{key}].type", props[key].get("type") or "", "must be string"))
    if resource and isinstance(props.get("metadata"), dict):
        at, meta = f"{path}.properties[metadata]", props["metadata"]
        if embedded:  # (below the root, only its type is checked)
            if meta.get("type") not in (None, "object"):
                out.append(_invalid(f"{at}.type", meta["type"], "must be object"))
        else:
            out += _metadata_schema(meta, at)
    if embedded and not node.get("x-kubernetes-preserve-unknown-fields") and not props:
        out.append(("FieldValueRequired", f"{path}.properties", "Required value: must not be empty if "
                    "x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields"))
    if embedded and node.get("x-kubernetes-int-or-string"):
        out.append(_invalid(f"{path}.x-kubernetes-embedded-resource", True, "must be false if "
                            "x-kubernetes-int-or-string is true"))
    return out


def _metadata_schema(node: dict[str, Any], path: str) -> list[Cause]:
    """At the root, metadata's schema may restrict only name and generateName (and say it is an object)."""
    out = [] if node.get("type") in (None, "object") else [_invalid(f"{path}.type", node["type"], "must be object")]
    rest = {k: v for k, v in node.items() if k not in ("type", "default")}
    if set(rest.get("properties") or {}) <= {"name", "generateName"}:
        rest.pop("properties", None)
    if rest:
        out.append(("FieldValueForbidden", path, "Forbidden: must not specify anything other than name and "
                    "generateName, but metadata is implicitly specified"))
    return out


def _defaults_forbidden(node: Any, path: str, top: str) -> list[Cause]:
    """No default anywhere in the schema of the top-level apiVersion, kind or metadata."""
    if not isinstance(node, dict):
        return []
    out: list[Cause] = []
    if "default" in node:
        out.append(("FieldValueForbidden", f"{path}.default", f"Forbidden: must not be set in top-level {top}"))
    for key, sub in sorted((node.get("properties") or {}).items()):
        out += _defaults_forbidden(sub, f"{path}.properties[{key}]", top)
    for key in ("items", "additionalProperties"):
        out += _defaults_forbidden(node.get(key), f"{path}.{key}", top)
    return out


_REASONS = ("FieldValueDuplicate", "FieldValueForbidden", "FieldValueInvalid", "FieldValueRequired")


def _rule_fields(node: dict[str, Any], path: str) -> list[Cause]:
    """A CEL rule's message, messageExpression, reason and fieldPath, checked before anything compiles."""
    out: list[Cause] = []
    for i, rule in enumerate(r for r in node.get(RULES) or [] if isinstance(r, dict)):
        at = f"{path}.{RULES}[{i}]"
        text, message = (rule.get("rule") or "").strip(), rule.get("message") or ""
        if not text:
            out.append(("FieldValueRequired", f"{at}.rule", "Required value: rule is not specified"))
        elif message and not message.strip():
            out.append(_invalid(f"{at}.message", message, "must be non-empty if specified"))
        elif "\n" in message.strip() or "\r" in message.strip():
            out.append(_invalid(f"{at}.message", message, "must not contain line breaks"))
        elif ("\n" in text or "\r" in text) and not message.strip():
            out.append(("FieldValueRequired", f"{at}.message", "Required value: message must be specified if rule "
                        "contains line breaks"))
        expression = rule.get("messageExpression")
        if expression is not None and expression != "" and not expression.strip():
            out.append(("FieldValueRequired", f"{at}.messageExpression", "Required value: messageExpression must be "
                        "non-empty if specified"))
        reason = rule.get("reason")
        if reason is not None and reason not in _REASONS:
            out.append(("FieldValueNotSupported", f"{at}.reason", f'Unsupported value: "{reason}": supported values: '
                        + ", ".join(f'"{r}"' for r in _REASONS)))
        where = rule.get("fieldPath") or ""
        if where and not where.strip():
            out.append(_invalid(f"{at}.fieldPath", where, "must be non-empty if specified"))
        elif "\n" in where or "\r" in where:
            out.append(_invalid(f"{at}.fieldPath", where, "must not contain line breaks"))
        elif where and not _path_declared(node, where):
            out.append(_invalid(f"{at}.fieldPath", where, "must be a valid path"))
    return out


def _path_declared(node: dict[str, Any], where: str) -> bool:
    """A dotted fieldPath (``.spec.a``) names declared properties all the way (other notations: trusted)."""
    if not where.startswith(".") or "[" in where:
        return True
    for step in where[1:].split("."):
        if node.get("x-kubernetes-preserve-unknown-fields") and step not in (node.get("properties") or {}):
            return True
        found = (node.get("properties") or {}).get(step)
        if not isinstance(found, dict):
            return False
        node = found
    return True


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
    if (listed == "set" and node.get("type") == "array" and items.get("type") not in _SCALARS
            and items.get("x-kubernetes-map-type") != "atomic"):
        out.append(_invalid(f"{path}.items.x-kubernetes-map-type", None, "must be atomic as item of a list with "
                            "x-kubernetes-list-type=set"))
    if listed == "map" and not node.get("x-kubernetes-list-map-keys"):
        out.append(("FieldValueRequired", f"{path}.x-kubernetes-list-map-keys", "Required value: must not be empty "
                    "if x-kubernetes-list-type is map"))
    return out + _types(node, path) + _list_and_map_types(node, path)


_TYPES = ("array", "boolean", "integer", "number", "object", "string")


def _types(node: dict[str, Any], path: str) -> list[Cause]:
    """The type itself: one of OpenAPI's (null is refused twice, as the real server does), an array's
    items, a pattern that compiles."""
    out: list[Cause] = []
    kind = node.get("type")
    if kind == "null":
        out.append(("FieldValueForbidden", f"{path}.type", "Forbidden: type cannot be set to null, use nullable as "
                    "an alternative"))
    if isinstance(kind, str) and kind and kind not in _TYPES:
        out.append(("FieldValueNotSupported", f"{path}.type", f'Unsupported value: "{kind}": supported values: '
                    + ", ".join(f'"{t}"' for t in _TYPES)))
    if kind == "array" and "items" not in node:
        out.append(("FieldValueRequired", f"{path}.items", "Required value: must be specified"))
    pattern = node.get("pattern")
    if isinstance(pattern, str) and pattern:
        try:
            re.compile(pattern)
        except re.error as exc:  # (Go's RE2 refuses more: backreferences, lookarounds)
            out.append(_invalid(f"{path}.pattern", pattern, f"must be a valid regular expression, but isn't: {exc}"))
    return out


def _list_and_map_types(node: dict[str, Any], path: str) -> list[Cause]:
    """x-kubernetes-list-type, -list-map-keys and -map-type: on the right type, with supported values and
    map keys that name scalar, non-nullable properties of the items."""
    out: list[Cause] = []
    kind, listed, mapped = node.get("type") or "", node.get("x-kubernetes-list-type"), node.get("x-kubernetes-map-type")
    keys = node.get("x-kubernetes-list-map-keys") or []
    if mapped is not None and kind != "object":
        why = "must be object if x-kubernetes-map-type is specified"
        out.append(_invalid(f"{path}.type", kind, why) if kind else ("FieldValueRequired", f"{path}.type", why))
    if mapped is not None and mapped not in ("atomic", "granular"):
        out.append(("FieldValueNotSupported", f"{path}.x-kubernetes-map-type", f'Unsupported value: "{mapped}": '
                    'supported values: "atomic", "granular"'))
    if listed is not None and kind != "array":
        why = "must be array if x-kubernetes-list-type is specified"
        out.append(_invalid(f"{path}.type", kind, why) if kind else ("FieldValueRequired", f"{path}.type", why))
    if listed is not None and listed not in ("atomic", "set", "map"):
        out.append(("FieldValueNotSupported", f"{path}.x-kubernetes-list-type", f'Unsupported value: "{listed}": '
                    'supported values: "atomic", "set", "map"'))
    if keys and listed is None:
        out.append(("FieldValueRequired", f"{path}.x-kubernetes-list-type", "Required value: must be map if "
                    "x-kubernetes-list-map-keys is non-empty"))
    elif keys and listed != "map":
        out.append(_invalid(f"{path}.x-kubernetes-list-type", listed, "must be map if x-kubernetes-list-map-keys is "
                            "non-empty"))
    items = node.get("items")
    if listed != "map" or not isinstance(items, dict):
        return out
    if items.get("type") != "object":
        return out + [_invalid(f"{path}.items.type", items.get("type") or "", "must be object if parent array's "
                               "x-kubernetes-list-type is map")]
    props, required = items.get("properties") or {}, set(items.get("required") or [])
    for key in keys:
        prop = props.get(key)
        if not isinstance(prop, dict):
            out.append(_invalid(f"{path}.x-kubernetes-list-map-keys", keys, "entries must all be names of item "
                                "properties"))
            continue
        if prop.get("type") in ("array", "object"):
            out.append(_invalid(f"{path}.items.properties[{key}].type", "object", "must be a scalar type if parent "
                                "array's x-kubernetes-list-type is map"))
        if key not in required and "default" not in prop:
            out.append(("FieldValueRequired", f"{path}.items.properties[{key}].default", "Required value: this "
                        "property is in x-kubernetes-list-map-keys, so it must have a default or be a required "
                        "property"))
        if prop.get("nullable"):
            out.append(("FieldValueForbidden", f"{path}.items.properties[{key}].nullable", "Forbidden: this property "
                        "is in x-kubernetes-list-map-keys, so it cannot be nullable"))
    return out


_JSON_TYPES = {bool: "boolean", int: "integer", float: "number", str: "string", list: "array", dict: "object"}


def _default_type(node: dict[str, Any], path: str) -> list[Cause]:
    """A scalar's default of another type (validated against its schema, from an empty field name)."""
    kind, value = node.get("type"), node.get("default")
    if "default" not in node or value is None or node.get("x-kubernetes-int-or-string"):
        return []
    if kind not in _SCALARS:
        return _default_valid(node, path)
    got = _JSON_TYPES.get(type(value), "")
    if got == kind or (kind == "number" and got == "integer") or (kind == "integer" and got == "number"
                                                                 and float(value).is_integer()):
        return _default_valid(node, path)
    return [("FieldValueTypeInvalid", f"{path}.default", f'Invalid value: "{got}":  in body must be of type '
             f'{kind}: "{got}"')]


def _default_valid(node: dict[str, Any], path: str) -> list[Cause]:
    """A default of the right type must also hold no unknown fields and pass its own schema (patterns,
    bounds, enums...): reported under ``<path>.default``, the message's path relative to the default."""
    value = node["default"]
    try:
        pruned = schema.prune(copy.deepcopy(value), node, top=False)
    except embedded.Malformed as exc:  # (an embedded object's default its decoder cannot take)
        return [_invalid(f"{path}.default", value, str(exc))]
    if pruned != value:
        return [_invalid(f"{path}.default", value, "must not have unknown fields")]
    out: list[Cause] = []
    for reason, where, message in schema.validate(value, node):
        inner = "" if where == "<root>" else where
        out.append((reason, f"{path}.default" + (f".{inner}" if inner else ""), message.replace("<root>", "")))
    return out


def _int_or_string_pattern(node: dict[str, Any], junctor: str) -> bool:
    """``anyOf: [{type: integer}, {type: string}]`` beside x-kubernetes-int-or-string: allowed as it is."""
    return junctor == "anyOf" and bool(node.get("x-kubernetes-int-or-string")) and \
        node.get("anyOf") == [{"type": "integer"}, {"type": "string"}]  # (exactly: a bound makes it another)


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


def _go_rule(rule: dict[str, Any]) -> dict[str, Any]:
    """A ValidationRule as a message shows it (the internal type marshalled: Go's field names)."""
    return {"Rule": rule.get("rule", ""), "Message": rule.get("message", ""),
            "MessageExpression": rule.get("messageExpression", ""), "Reason": rule.get("reason"),
            "FieldPath": rule.get("fieldPath", ""), "OptionalOldSelf": rule.get("optionalOldSelf")}


def _compiled_rule(rule: dict[str, Any], node: dict[str, Any], at: str, uncorrelated: str) -> list[Cause]:
    """What cel.Compile finds in a rule that parses: a result not a bool, a messageExpression not a string
    (when the fake can tell the types: ``celtype``), oldSelf where values do not correlate, and
    optionalOldSelf on a rule that does not use oldSelf."""
    try:
        import celpy
    except ImportError:
        return []
    from kubeloop.testing.apiserver import celtype

    out: list[Cause] = []
    env = celpy.Environment()
    tree = env.compile(rule.get("rule") or "")
    if celtype.result_type(tree, node) not in (None, "bool"):
        out.append(_invalid(f"{at}.rule", _go_rule(rule), "cel expression must evaluate to a bool"))
    expression = rule.get("messageExpression")
    if expression and expression.strip():
        try:
            typed = celtype.result_type(env.compile(expression), node)
        except Exception as exc:  # noqa: BLE001 - cel-python's parse errors have several types
            first = str(exc).splitlines()[0] if str(exc) else "invalid"
            out.append(_invalid(f"{at}.messageExpression", _go_rule(rule),
                                f"messageExpression compilation failed: ERROR: <input>: Syntax error: {first}"))
        else:
            if typed not in (None, "string"):
                out.append(_invalid(f"{at}.messageExpression", _go_rule(rule),
                                    "messageExpression must evaluate to a string"))
    if _uses_old_self(tree):
        if uncorrelated:
            out.append(_invalid(f"{at}.rule", rule.get("rule", ""), "oldSelf cannot be used on the uncorrelatable "
                                f"portion of the schema within {uncorrelated}"))
    elif rule.get("optionalOldSelf") is not None:
        out.append(_invalid(f"{at}.optionalOldSelf", rule["optionalOldSelf"], "may not be set if oldSelf is not "
                            "used in rule"))
    return out


def _uses_old_self(tree: Any) -> bool:
    from lark import Token

    return any(isinstance(t, Token) and t.type == "IDENT" and str(t) == "oldSelf"
               for t in tree.scan_values(lambda v: isinstance(v, Token)))


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
