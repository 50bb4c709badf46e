"""Which lists, strings and maps of a CRD's schema have no maximum the API server enforces: a walk of the
whole openAPIV3Schema, for the bundled operators' bounds tests."""

from __future__ import annotations

from typing import Any

# Written by the API server, which bounds them itself: no bound from the operator's schema. (The
# framework's ``status.conditions`` carry metav1.Condition's bounds and are walked like the rest.)
FRAMEWORK = frozenset({".metadata", ".apiVersion", ".kind"})
# Strings the API server parses by their format: bounded by its grammar.
BOUNDED_FORMATS = frozenset({"date-time", "date"})


def unbounded(node: dict[str, Any], path: str = "", skip: frozenset[str] = FRAMEWORK) -> list[str]:
    """The paths (``.spec.x[]``, ``.spec.m{}``) of every string without ``maxLength`` (or an enum or a
    bounded format), array without ``maxItems`` and map without ``maxProperties`` under ``node``; a
    free-form object (``x-kubernetes-preserve-unknown-fields``) counts as a map."""
    if path in skip:
        return []
    out = []
    kind = node.get("type")
    if kind == "string" and not ({"maxLength", "enum"} & node.keys() or node.get("format") in BOUNDED_FORMATS):
        out.append(path)
    if kind == "array":
        if "maxItems" not in node:
            out.append(path)
        out += unbounded(node["items"], path + "[]", skip)
    if kind == "object":
        if ("additionalProperties" in node or node.get("x-kubernetes-preserve-unknown-fields")) \
                and "maxProperties" not in node:
            out.append(path)
        if isinstance(node.get("additionalProperties"), dict):
            out += unbounded(node["additionalProperties"], path + "{}", skip)
        for name, child in (node.get("properties") or {}).items():
            out += unbounded(child, f"{path}.{name}", skip)
    return out


def schemas(crd: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Version name → its openAPIV3Schema."""
    return {v["name"]: v["schema"]["openAPIV3Schema"] for v in crd["spec"]["versions"]}
