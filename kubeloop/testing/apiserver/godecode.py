"""Go's ``encoding/json`` decoding a built-in kind's request body into its typed struct (kube-apiserver
1.35.4's decoder), from the captured OpenAPI schemas: the error the real server answers 400 with.

- A value of the wrong JSON type: ``json: cannot unmarshal <string|number|bool|array|object> into Go struct
  field <Struct>.<path> of type <Go type>``. The path joins the JSON names of the fields from the top (no
  list indices, no map keys) and the names of embedded structs (a Volume's ``VolumeSource``, a Probe's
  ``ProbeHandler``); the struct is the one holding the field; an integer field given a fraction or a
  number out of its range names the number. Such an error is remembered and decoding goes on: the first
  one is answered.
- Base64 that does not decode (``[]byte``): remembered likewise, in its own words.
- A timestamp that does not parse (``gotime``) or a quantity that is neither a string nor a number: their
  types' own unmarshalers fail, which ends decoding at once, whatever was remembered before.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any

from kubeloop.testing.apiserver import gotime

QUANTITY_FORMAT = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
_CORE = "io.k8s.api.core.v1."
_REFERENCE = ("LocalObjectReference", frozenset({"name"}))
# Structs embedded in others (``json:",inline"``, k8s.io/api core/v1 types.go): (Go name, its JSON fields;
# None: all the holder's fields but those in _OWN).
_EMBEDDED: dict[str, tuple[str, frozenset[str] | None]] = {
    _CORE + "Volume": ("VolumeSource", None), _CORE + "EphemeralContainer": ("EphemeralContainerCommon", None),
    _CORE + "Probe": ("ProbeHandler", frozenset({"exec", "httpGet", "tcpSocket", "grpc"})),
    **{_CORE + name: _REFERENCE for name in ("SecretProjection", "ConfigMapVolumeSource", "ConfigMapProjection",
                                              "ConfigMapKeySelector", "SecretKeySelector", "ConfigMapEnvSource",
                                              "SecretEnvSource")},
}
_OWN = {_CORE + "Volume": frozenset({"name"}), _CORE + "EphemeralContainer": frozenset({"targetContainerName"})}
_INT_RANGE = {"int32": (-(2 ** 31), 2 ** 31 - 1), "int64": (-(2 ** 63), 2 ** 63 - 1)}


class _Abort(Exception):
    """An unmarshaler's own error: decoding stops there."""


def error(body: dict[str, Any], schema: dict[str, Any]) -> str | None:
    """The decoder's error for ``body`` (its top-level fields but apiVersion and kind), None if it decodes."""
    walk = _Walk()
    try:
        walk.value(body, schema, _short(schema), "")
    except _Abort as abort:
        return str(abort)
    return walk.first


def go_type(node: dict[str, Any]) -> str:
    """The Go type a schema node decodes into, as ``reflect.Type.String()`` names it."""
    ref = node.get("x-ref") or ""
    if node.get("type") == "quantity":
        return "resource.Quantity"
    if ref:
        return ".".join(ref.split(".")[-2:])
    if node.get("x-kubernetes-int-or-string") or node.get("format") == "int-or-string":
        return "intstr.IntOrString"
    kind, fmt = node.get("type"), node.get("format")
    if kind == "string":
        return "[]uint8" if fmt == "byte" else "string"
    if kind == "integer":
        return "int32" if fmt == "int32" else "int64"
    if kind == "number":
        return "float32" if fmt == "float" else "float64"
    if kind == "boolean":
        return "bool"
    if kind == "array":
        return "[]" + go_type(node.get("items") or {})
    if isinstance(node.get("additionalProperties"), dict):
        return "map[string]" + go_type(node["additionalProperties"])
    return "map[string]interface {}"


def _short(node: dict[str, Any]) -> str:
    return (node.get("x-ref") or "").rsplit(".", 1)[-1]


def _word(value: Any) -> str:
    return {bool: "bool", int: "number", float: "number", str: "string", list: "array", dict: "object"}.get(
        type(value), "value")


class _Walk:
    def __init__(self) -> None:
        self.first: str | None = None

    def value(self, value: Any, node: dict[str, Any], struct: str, path: str) -> None:
        if value is None:
            return
        wrong = _wrong(value, node)
        if wrong is not None:
            self.first = self.first or (wrong if wrong.startswith("illegal base64") else
                                        f"json: cannot unmarshal {wrong} into Go struct field {struct}.{path} of "
                                        f"type {_scalar_type(node)}")
            return
        if isinstance(value, dict):
            extra = node.get("additionalProperties")
            if isinstance(extra, dict) and not node.get("properties"):  # a map: its values, same field
                for item in value.values():
                    self.value(item, extra, struct, path)
                return
            self._struct(value, node, struct, path)
        elif isinstance(value, list) and isinstance(node.get("items"), dict):
            for item in value:
                self.value(item, node["items"], struct, path)

    def _struct(self, value: dict[str, Any], node: dict[str, Any], struct: str, path: str) -> None:
        own = _short(node) or struct
        props = node.get("properties") or {}
        ref = node.get("x-ref") or ""
        embedded, fields = _EMBEDDED.get(ref, ("", None))
        for key, sub in value.items():
            child = props.get(key)
            if child is None:
                continue  # (unknown: dropped, not decoded)
            inline = bool(embedded) and (key in fields if fields is not None else key not in _OWN.get(ref, ()))
            where = ".".join(p for p in (path, embedded if inline else "", key) if p)
            self.value(sub, child, own, where)


def _scalar_type(node: dict[str, Any]) -> str:
    """The type named when a value does not fit: an int-or-string's integer, a timestamp's string."""
    ref = node.get("x-ref") or ""
    if ref.endswith((".meta.v1.Time", ".meta.v1.MicroTime")):
        return "string"
    if node.get("x-kubernetes-int-or-string") or node.get("format") == "int-or-string":
        return "int32"
    return go_type(node)


def _wrong(value: Any, node: dict[str, Any]) -> str | None:
    """What of ``value`` does not fit ``node`` (the word the error begins with), None if it fits; raises
    _Abort for an unmarshaler's own error."""
    ref, kind = node.get("x-ref") or "", node.get("type")
    if kind == "quantity":
        if isinstance(value, (bool, dict, list)):
            raise _Abort(QUANTITY_FORMAT)
        return None  # (a string's form is checked when it is made canonical)
    if ref.endswith((".meta.v1.Time", ".meta.v1.MicroTime")):
        if not isinstance(value, str):
            return _word(value)
        parsed = gotime.parse(value, gotime.RFC3339 if ref.endswith(".Time") else gotime.RFC3339_MICRO)
        if isinstance(parsed, str):
            raise _Abort(parsed)
        return None
    if node.get("x-kubernetes-int-or-string") or node.get("format") == "int-or-string":
        return None if isinstance(value, str) else _integer(value, "int32")
    if kind == "string":
        if not isinstance(value, str):
            return _word(value)
        return _base64(value) if node.get("format") == "byte" else None
    if kind == "integer":
        return _integer(value, "int32" if node.get("format") == "int32" else "int64")
    if kind == "number":
        return None if isinstance(value, (int, float)) and not isinstance(value, bool) else _word(value)
    if kind == "boolean":
        return None if isinstance(value, bool) else _word(value)
    if kind == "array":
        return None if isinstance(value, list) else _word(value)
    if kind == "object" or "properties" in node or "additionalProperties" in node or ref:
        return None if isinstance(value, dict) else _word(value)
    return None


def _integer(value: Any, go: str) -> str | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return _word(value)
    low, high = _INT_RANGE[go]
    if isinstance(value, float) or not low <= value <= high:
        return f"number {value!r}"
    return None


def _base64(value: str) -> str | None:
    if not value:
        return None
    try:
        base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return f"illegal base64 data at input byte {bad_base64_byte(value)}"
    return None


def bad_base64_byte(value: str) -> int:
    """Where Go's standard base64 decoder gives up on ``value``: its first character outside the
    alphabet, else the quantum the padding breaks."""
    alphabet = set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
    for i, char in enumerate(value):
        if char not in alphabet and char != "=":
            return i
    padding = value.find("=")
    return padding if 0 <= padding and padding % 4 < 2 else len(value) - len(value) % 4
