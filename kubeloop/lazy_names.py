"""Names of a package loaded on first use (PEP 562), so that importing the package does not import
every module behind its public names: an operator on plain dicts needs neither pydantic nor the CRD
generator, and those were a fifth of a run's start-up CPU.

``__getattr__, __dir__ = lazy_names(__name__, {"Name": "package.module", ...})`` in the package: a
name resolves to the attribute of that module, or to the module itself when the module is named after
it (``"builtin": "kubeloop.resources.builtin"``), once; an unknown name is an ``AttributeError``.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any


def lazy_names(package: str, names: Mapping[str, str]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of ``package`` for ``names`` (name → module)."""
    def __getattr__(name: str) -> Any:
        if name not in names:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module = importlib.import_module(names[name])
        value = module if module.__name__.endswith(f".{name}") else getattr(module, name)
        setattr(sys.modules[package], name, value)  # later look-ups are plain module attributes
        return value

    def __dir__() -> list[str]:
        return sorted({*vars(sys.modules[package]), *names})

    return __getattr__, __dir__
