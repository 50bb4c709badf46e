"""``fieldValidation=Strict`` (kubectl's default): unknown fields are a 400, as on the real server.

Custom resources are checked against their schema (everything pruning would drop); built-in kinds
against the OpenAPI v3 schema captured from a real server (builtin.py), or, for a kind without one, at
the top level and in ``metadata`` only.
"""

from __future__ import annotations

from typing import Any

from kubeloop.testing.apiserver import errors, schema
from kubeloop.testing.apiserver.kinds import Kind

_META = {"name", "generateName", "namespace", "selfLink", "uid", "resourceVersion", "generation",
         "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "labels", "annotations",
         "ownerReferences", "finalizers", "managedFields"}
_TOP: dict[tuple[str, str], set[str]] = {
    ("", "configmaps"): {"data", "binaryData", "immutable"},
    ("", "secrets"): {"data", "stringData", "type", "immutable"},
    ("", "serviceaccounts"): {"secrets", "imagePullSecrets", "automountServiceAccountToken"},
}
_ANY = {("", "events"), ("events.k8s.io", "events")}  # many top-level fields: not checked


def check(kind: Kind, version: str, body: dict[str, Any]) -> None:
    """Raises the real server's 400 for the unknown fields found."""
    unknown = unknown_message(kind, version, body)
    if unknown:
        raise errors.bad_request(f'{kind.kind} in version "{version}" cannot be handled as a {kind.kind}: strict '
                                 f"decoding error: {unknown}")


def unknown_message(kind: Kind, version: str, body: dict[str, Any]) -> str | None:
    """``unknown field "a"``: a custom resource's are all reported, in order (the pruner's paths, sorted);
    a built-in's, the first its decoder meets."""
    if kind.crd is not None and not any(key not in _META for key in body.get("metadata") or {}):
        from kubeloop.testing.apiserver.objects import decoded

        found = sorted(all_pruned(body, decoded(kind, version, body, kind.schema(version))))
        return ", ".join(f'unknown field "{f}"' for f in found) or None
    unknown = unknown_field(kind, version, body)
    return f'unknown field "{unknown}"' if unknown else None


def unknown_field(kind: Kind, version: str, body: dict[str, Any]) -> str | None:
    """The first field of ``body`` its kind does not declare (None: all known)."""
    for key in body.get("metadata") or {}:
        if key not in _META:
            return f"metadata.{key}"
    if kind.crd is not None:
        return first_pruned(body, schema.prune(body, kind.schema(version)))
    from kubeloop.testing.apiserver import builtin

    if builtin.schema_of(kind, version) is not None:
        return builtin.first_unknown(kind, version, body)
    if kind.key in _ANY:
        return None
    allowed = {"apiVersion", "kind", "metadata"} | _TOP.get(kind.key, {"spec", "status"})
    return next((key for key in body if key not in allowed), None)


def first_pruned(before: Any, after: Any, path: str = "") -> str | None:
    if isinstance(before, dict) and isinstance(after, dict):
        for key, value in before.items():
            here = f"{path}.{key}" if path else key
            if key not in after:
                return here
            found = first_pruned(value, after[key], here)
            if found:
                return found
    if isinstance(before, list) and isinstance(after, list):
        for i, (b, a) in enumerate(zip(before, after, strict=False)):
            found = first_pruned(b, a, f"{path}[{i}]")
            if found:
                return found
    return None


def all_pruned(before: Any, after: Any, path: str = "") -> list[str]:
    """Every path of ``before`` that pruning took out of ``after``."""
    out: list[str] = []
    if isinstance(before, dict) and isinstance(after, dict):
        for key, value in before.items():
            here = f"{path}.{key}" if path else key
            out += [here] if key not in after else all_pruned(value, after[key], here)
    if isinstance(before, list) and isinstance(after, list):
        for i, (b, a) in enumerate(zip(before, after, strict=False)):
            out += all_pruned(b, a, f"{path}[{i}]")
    return out
