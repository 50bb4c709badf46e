"""Round-trip tests of an operator's conversions for its own test suite (``kubeloop init`` writes one).

- :func:`round_trip_tests` turns every ``op.convert(hub, spokes)`` of an operator into one pytest test,
  a case per sample and spoke: hub → spoke → hub must give the sample back, field for field.
- Samples default to :func:`full_sample`: the hub model with *every* field filled in (optional ones
  too), so a conversion that forgets a field fails. Pass ``samples={Hub: [obj, ...]}`` for more, or
  where a field's constraints (a ``pattern``, a CEL rule) need a value the filler cannot guess.
- An operator without conversions gets a test with no cases, which pytest reports as skipped: the
  file can be there before the first conversion is.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from kubeloop.resources.schema import crd_root_schema
from kubeloop.webhooks.hooks import ConversionHook, resource_of

Obj = dict[str, Any]
_SERVER_OWNED = ("apiVersion", "kind", "metadata")


def _value(schema: dict[str, Any], name: str) -> Any:
    """A valid, non-default value for a schema node: every property of an object, one item of a list."""
    if "default" in schema and schema.get("type") in ("string", "integer", "number", "boolean"):
        return _other_than(schema, name)
    if "enum" in schema:
        return schema["enum"][-1]
    kind = schema.get("type")
    if kind == "object":
        props = schema.get("properties")
        if props:
            return {k: _value(v, k) for k, v in props.items()}
        extra = schema.get("additionalProperties")
        return {"key": _value(extra, "key") if isinstance(extra, dict) else "value"}
    if kind == "array":
        return [_value(schema.get("items", {}), name)]
    return _other_than(schema, name)


def _other_than(schema: dict[str, Any], name: str) -> Any:
    kind = schema.get("type")
    if kind == "boolean":
        return not schema.get("default", False)
    if kind in ("integer", "number"):
        low, high = schema.get("minimum", 1), schema.get("maximum", 10**6)
        value = low + 1 if low + 1 <= high and schema.get("default") != low + 1 else low
        return value if kind == "integer" else float(value)
    if kind == "string" and schema.get("format") == "date-time":
        return "2024-01-02T03:04:05Z"
    text = f"sample-{name}".lower()
    if "pattern" in schema:  # the first of a few usual shapes the pattern admits (a CamelCase reason, ...)
        pattern = re.compile(schema["pattern"])
        text = next((t for t in (text, f"Sample{name[:1].upper()}{name[1:]}", "sample", "Sample", "a", "A", "0")
                     if pattern.search(t)), text)
    return text[: schema.get("maxLength", len(text))].ljust(schema.get("minLength", 0), "x")


def full_sample(model: type, name: str = "sample") -> Obj:
    """An object of ``model`` (a CustomResource) with every field set, checked by the model itself."""
    r = resource_of(model)
    schema = crd_root_schema(model)
    obj: Obj = {"apiVersion": r.api_version, "kind": r.kind, "metadata": {"name": name}}
    for field, sub in schema.get("properties", {}).items():
        if field not in _SERVER_OWNED:
            obj[field] = _value(sub, field)
    try:
        model.model_validate(obj)  # type: ignore[attr-defined]
    except ValueError as exc:
        raise ValueError(f"cannot fill in a sample {r.kind} {r.api_version} by itself ({exc}); pass "
                         f"round_trip_tests(operator, samples={{{model.__name__}: [...]}})") from exc
    return obj


def _cases(hook: ConversionHook, samples: Mapping[type, Iterable[Obj]]) -> list[tuple[str, Obj, str]]:
    converter = hook.converter()
    objs = list(samples.get(hook.hub) or [full_sample(hook.hub)])
    return [(hook.crd_name, obj, spoke) for obj in objs for spoke in converter.spokes]


def round_trip_tests(operator: Any, samples: Mapping[type, Iterable[Obj]] | None = None) -> Callable[..., None]:
    """A pytest test (assign it to a ``test_*`` name) of hub → spoke → hub for every conversion."""
    import pytest  # only a test suite calls this

    hooks = {h.crd_name: h for h in operator.hooks.conversions}
    cases = [c for h in hooks.values() for c in _cases(h, samples or {})]
    params = [pytest.param(crd, obj, spoke, id=f"{crd}-{obj['metadata']['name']}-{spoke.rsplit('/', 1)[-1]}")
              for crd, obj, spoke in cases]

    @pytest.mark.parametrize(("crd", "sample", "spoke"), params)
    def test(crd: str, sample: Obj, spoke: str) -> None:
        converter = hooks[crd].converter()
        there = converter.convert(sample, spoke)
        back = converter.convert(there, converter.hub)
        assert back == sample, (f"{crd}: hub -> {spoke} -> hub changed the object\n"
                                f"  sent:     {sample}\n  via:      {there}\n  returned: {back}")

    return test
