"""CEL rules (``x-kubernetes-validations``) of CRD schemas, evaluated with cel-python (``celpy``).

- A rule is evaluated where it is declared, ``self`` bound to the value there (rules of absent fields
  do not run); a rule naming ``oldSelf`` is a transition rule and runs on updates only, when the old
  object has the field (unless ``optionalOldSelf``: then always, oldSelf an optional, see ``Optional``).
- A failure is a cause like the real server's: ``<field>: Invalid value: <scalar>: <message>``, with
  ``fieldPath`` appended to the field, ``reason`` as given, ``messageExpression`` evaluated, and
  ``failed rule: <rule>`` when there is no message.
- Without cel-python installed, a custom resource whose schema has rules is answered 501 rather than
  accepted unchecked (a fake that skipped them would pass tests the real server fails).
"""

from __future__ import annotations

from typing import Any

from kubeloop.testing.apiserver import errors
from kubeloop.testing.apiserver.kinds import Kind
from kubeloop.testing.apiserver.schema import _go

RULES = "x-kubernetes-validations"
_PREFIX = {"FieldValueForbidden": "Forbidden", "FieldValueRequired": "Required value",
           "FieldValueDuplicate": "Duplicate value"}


def has_rules(node: Any) -> bool:
    if isinstance(node, dict):
        return RULES in node or any(has_rules(v) for v in node.values())
    if isinstance(node, list):
        return any(has_rules(v) for v in node)
    return False


def causes(kind: Kind, schema: dict[str, Any], obj: dict[str, Any], old: dict[str, Any] | None
           ) -> list[tuple[str, str, str]]:
    """Every failed rule (501 when rules exist but cel-python is missing)."""
    if not has_rules(schema):
        return []
    try:
        import celpy  # noqa: F401
    except ImportError:
        raise errors.not_served(f"CEL validation rules (x-kubernetes-validations) of {kind.plural}.{kind.group} "
                                "without cel-python installed (pip install cel-python)") from None
    found: list[tuple[str, str, str]] = []
    _walk(schema, _root_view(obj), _root_view(old) if old is not None else None, "", found)
    return found


def check(kind: Kind, schema: dict[str, Any], obj: dict[str, Any], old: dict[str, Any] | None) -> None:
    """Raises 422 with every failed rule (501 when rules exist but cel-python is missing)."""
    found = causes(kind, schema, obj, old)
    if found:
        raise errors.invalid(kind.kind, kind.group, obj["metadata"].get("name", ""), found)


def _root_view(obj: dict[str, Any]) -> dict[str, Any]:
    """What a root rule sees of metadata: name and generateName only, as on the real server."""
    meta = {k: v for k, v in (obj.get("metadata") or {}).items() if k in ("name", "generateName")}
    return {**obj, "metadata": meta}


def _walk(schema: dict[str, Any], value: Any, old: Any, path: str, causes: list[tuple[str, str, str]],
          unchanged: bool = False) -> None:
    """``unchanged``: a node above holds what the old object held (its rules without oldSelf ratchet)."""
    unchanged = unchanged or (old is not None and old == value)
    for rule in schema.get(RULES) or []:
        if "oldSelf" not in rule["rule"] and unchanged:
            continue  # ratcheted: a rule without oldSelf is not checked again on a value the update left as it was
        try:
            failure = _evaluate(rule, value, old)
        except _EvaluationError as exc:  # (on the rule's own field, with the schema's type as the value)
            shown = _go(schema.get("type") or "")
            causes.append(("FieldValueInvalid", path or "<nil>", f"Invalid value: {shown}: {exc}"))
            continue
        if failure:
            field = (path or "<nil>") if not rule.get("fieldPath") else (path + rule["fieldPath"]).lstrip(".")
            reason = rule.get("reason") or "FieldValueInvalid"
            causes.append((reason, field, f"{_PREFIX.get(reason, _invalid(value))}: {failure}"))
    if isinstance(value, dict):
        props = schema.get("properties") or {}
        extra = schema.get("additionalProperties") if isinstance(schema.get("additionalProperties"), dict) else None
        for key in sorted(value):
            sub = props.get(key, extra)
            if isinstance(sub, dict) and not (not path and key == "metadata"):
                child_old = old.get(key) if isinstance(old, dict) else None
                _walk(sub, value[key], child_old, f"{path}.{key}" if path else key, causes, unchanged)
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        for i, item in enumerate(value):
            _walk(schema["items"], item, _correlated(schema, item, old), f"{path}[{i}]", causes, unchanged)


def _correlated(schema: dict[str, Any], item: Any, old: Any) -> Any:
    """The old item a map list's item is matched to by its keys (None elsewhere: other lists' items do
    not correlate, so their transition rules do not run)."""
    keys = schema.get("x-kubernetes-list-map-keys") or []
    if schema.get("x-kubernetes-list-type") != "map" or not isinstance(item, dict) or not isinstance(old, list):
        return None
    return next((o for o in old if isinstance(o, dict) and all(o.get(k) == item.get(k) for k in keys)), None)


def _invalid(value: Any) -> str:
    """``Invalid value: 2`` for a scalar; objects and lists are not printed (as on the real server)."""
    return "Invalid value" if isinstance(value, (dict, list)) else f"Invalid value: {_go(value)}"


def _evaluate(rule: dict[str, Any], value: Any, old: Any) -> str | None:
    """None if the rule holds (or does not apply), else the failure message."""
    import celpy
    from celpy.adapter import json_to_cel

    text = rule["rule"]
    transition = "oldSelf" in text
    optional = bool(rule.get("optionalOldSelf"))
    if transition and old is None and not optional:
        return None
    env = celpy.Environment()
    activation: dict[str, Any] = {"self": json_to_cel(value)}
    if transition:  # with optionalOldSelf, an optional: none on a create or where the old object lacks it
        activation["oldSelf"] = Optional(json_to_cel(old), old is not None) if optional else json_to_cel(old)
    try:
        result = env.program(env.compile(text), functions=OPTIONAL_FUNCTIONS).evaluate(activation)
    except Exception as exc:  # noqa: BLE001 - a rule that cannot be evaluated fails, as on the real server
        why = (rule.get("message") or "").strip() or text.strip()
        raise _EvaluationError(f"{_cel_go_error(exc)} evaluating rule: {why}") from None
    if not isinstance(result, Exception) and bool(result) is True:
        return None
    if rule.get("messageExpression"):
        try:
            return str(env.program(env.compile(rule["messageExpression"]),
                                   functions=OPTIONAL_FUNCTIONS).evaluate(activation))
        except Exception:  # noqa: BLE001 - the real server falls back to the static message
            pass
    return rule.get("message") or f"failed rule: {text}"


class _EvaluationError(Exception):
    """A rule whose evaluation failed (a missing key, a division by zero...): reported as such."""


def _cel_go_error(exc: Exception) -> str:
    """cel-python's evaluation error as cel-go words it (where known: a missing key; else cel-python's)."""
    args: tuple[Any, ...] = tuple(getattr(exc, "args", ()))
    first = str(args[0]) if args else str(exc)
    if first.startswith("no such member in mapping: "):
        return "no such key: " + first.split(": ", 1)[1].strip("'")
    if first == "no such key" and len(args) > 2 and args[2]:
        return f"no such key: {args[2][0]}"
    if "divide by zero" in first:
        return "division by zero"
    return first


class Optional:
    """A CEL optional (``oldSelf`` under optionalOldSelf): ``hasValue()``, ``value()``, ``orValue(x)``."""

    def __init__(self, value: Any, present: bool) -> None:
        self.value, self.present = value, present


def _has_value(opt: Optional) -> Any:
    from celpy import celtypes

    return celtypes.BoolType(opt.present)


def _value(opt: Optional) -> Any:
    if not opt.present:
        raise ValueError("optional.none() dereference")
    return opt.value


def _or_value(opt: Optional, default: Any) -> Any:
    return opt.value if opt.present else default


OPTIONAL_FUNCTIONS: Any = {"hasValue": _has_value, "value": _value, "orValue": _or_value}  # (celpy's own types)
