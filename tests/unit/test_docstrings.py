"""Every name kubeloop exports at the top level, and every public method of the exported classes,
has a docstring: the API reference (docs/reference/) is generated from them."""

from __future__ import annotations

import inspect

import pytest

import kubeloop


def _public_members(cls: type) -> list[str]:
    # Methods and properties defined by the class itself (not inherited from object or pydantic).
    return [name for name, value in vars(cls).items() if not name.startswith("_")
            and (inspect.isfunction(value) or isinstance(value, (property, classmethod, staticmethod)))]


@pytest.mark.parametrize("name", kubeloop.__all__)
def test_exported_names_have_docstrings(name: str) -> None:
    obj = getattr(kubeloop, name)
    assert inspect.getdoc(obj), f"kubeloop.{name} has no docstring"
    if not inspect.isclass(obj):
        return
    missing = [m for m in _public_members(obj) if not inspect.getdoc(getattr(obj, m))
               or inspect.getdoc(getattr(obj, m)) == inspect.getdoc(property)]
    assert not missing, f"kubeloop.{name}: no docstring on {', '.join(missing)}"
