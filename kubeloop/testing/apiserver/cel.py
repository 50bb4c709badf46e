"""CEL rules (``x-kubernetes-validations``) of CRD schemas.

Not served yet: a custom resource whose schema carries CEL rules is answered 501 rather than accepted
unchecked (a fake that skipped them would pass tests the real server fails).
"""

from __future__ import annotations

from typing import Any

from kubeloop.testing.apiserver import errors
from kubeloop.testing.apiserver.kinds import Kind


def _has_rules(node: Any) -> bool:
    if isinstance(node, dict):
        return "x-kubernetes-validations" in node or any(_has_rules(v) for v in node.values())
    if isinstance(node, list):
        return any(_has_rules(v) for v in node)
    return False


def check(kind: Kind, schema: dict[str, Any], obj: dict[str, Any], old: dict[str, Any] | None) -> None:
    """Raises 501 when the schema has CEL rules (see the module docstring)."""
    if _has_rules(schema):
        raise errors.not_served(f"CEL validation rules (x-kubernetes-validations) of {kind.plural}.{kind.group}")
