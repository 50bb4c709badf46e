"""The JSON patch diff: applying ``diff(old, new)`` to ``old`` gives ``new``, types included.

The patches are applied by a small RFC 6902 applier written here (independent of the diff's code);
the integration tests have the real API server apply them too."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kubeloop.webhooks.patch import diff, pointer


def _tokens(path: str) -> list[str]:
    assert path == "" or path.startswith("/"), path
    return [t.replace("~1", "/").replace("~0", "~") for t in path.split("/")[1:]]


def apply(doc: Any, ops: list[dict[str, Any]]) -> Any:
    doc = copy.deepcopy(doc)
    for op in ops:
        tokens = _tokens(op["path"])
        if not tokens:
            assert op["op"] == "replace"
            doc = copy.deepcopy(op["value"])
            continue
        parent = doc
        for t in tokens[:-1]:
            parent = parent[int(t)] if isinstance(parent, list) else parent[t]
        last: Any = int(tokens[-1]) if isinstance(parent, list) else tokens[-1]
        if op["op"] == "remove":
            del parent[last]
        elif op["op"] == "add":
            assert isinstance(parent, dict) and last not in parent, "add of an existing member"
            parent[last] = copy.deepcopy(op["value"])
        elif op["op"] == "replace":
            if isinstance(parent, dict):
                assert last in parent, "replace of a missing member"
            parent[last] = copy.deepcopy(op["value"])
        else:
            raise AssertionError(f"unexpected op {op['op']}")
    return doc


def typed_equal(a: Any, b: Any) -> bool:
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(typed_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(typed_equal(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b


keys = st.text(alphabet=st.sampled_from("ab/~0c.-"), max_size=4)
scalars = st.none() | st.booleans() | st.integers(-3, 3) | st.floats(-2, 2, allow_nan=False) | st.text(max_size=3)
json_values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=4)
                           | st.dictionaries(keys, inner, max_size=4), max_leaves=20)
objects = st.dictionaries(keys, json_values, max_size=5)


@settings(max_examples=400, deadline=None)
@given(objects, objects)
def test_applying_the_diff_gives_the_new_object(old: dict[str, Any], new: dict[str, Any]) -> None:
    before = copy.deepcopy(old), copy.deepcopy(new)
    ops = diff(old, new)
    assert typed_equal(apply(old, ops), new)
    assert typed_equal((old, new), before), "diff modified its input"


@settings(max_examples=200, deadline=None)
@given(objects)
def test_no_change_no_operations(obj: dict[str, Any]) -> None:
    assert diff(obj, copy.deepcopy(obj)) == []


def test_types_count_as_changes() -> None:
    assert diff({"a": 1}, {"a": True}) == [{"op": "replace", "path": "/a", "value": True}]
    assert diff({"a": 1}, {"a": 1.0}) == [{"op": "replace", "path": "/a", "value": 1.0}]


def test_pointer_escapes_slash_and_tilde() -> None:
    assert pointer(("metadata", "annotations", "example.com/a~b")) == "/metadata/annotations/example.com~1a~0b"


def test_defaulting_a_field_is_one_add() -> None:
    old = {"spec": {"message": "hi"}}
    assert diff(old, {"spec": {"message": "hi", "copies": 1}}) == [
        {"op": "add", "path": "/spec/copies", "value": 1}]
