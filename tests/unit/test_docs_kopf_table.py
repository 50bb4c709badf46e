"""The Kopf migration page names, for each row, the test that checks it: every test it names exists
(tests/integration/test_docs_kopf.py for the ports, tests/unit/ for refusals), and every port's
operator in docs/howto/kopf/examples_kubeloop.py is run by one of them."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PAGE = (ROOT / "docs" / "howto" / "kopf.md").read_text()
PORTS = ROOT / "tests" / "integration" / "test_docs_kopf.py"


def _functions(path: Path) -> set[str]:
    nodes = ast.walk(ast.parse(path.read_text()))
    return {n.name for n in nodes if isinstance(n, ast.AsyncFunctionDef | ast.FunctionDef)}


def test_every_test_the_page_names_exists() -> None:
    ports = _functions(PORTS)
    named = set(re.findall(r"`(test_\d\d_[a-z0-9_]*)…?`", PAGE))
    assert named, "the page names its tests"
    missing = {n for n in named if not any(f.startswith(n) for f in ports)}
    assert not missing, f"the page names tests that do not exist: {sorted(missing)}"
    for path in set(re.findall(r"`(tests/unit/[a-z0-9_]+\.py)`", PAGE)):
        assert (ROOT / path).is_file(), path


def test_every_port_is_run() -> None:
    source = (ROOT / "docs" / "howto" / "kopf" / "examples_kubeloop.py").read_text()
    operators = set(re.findall(r"^(\w+) = Operator\(", source, re.MULTILINE))
    tests = PORTS.read_text()
    assert operators and all(f"kex.{op}," in tests or f"kex.{op}." in tests for op in operators), operators
