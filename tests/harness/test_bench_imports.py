"""Smoke test of ``python -m harness.bench.imports`` (instruction counts of a run's imports)."""

from __future__ import annotations

import shutil

import pytest

from harness.bench import imports

pytestmark = pytest.mark.skipif(shutil.which("valgrind") is None, reason="needs valgrind")


def test_each_step_counts_more_instructions_than_the_last(capsys: pytest.CaptureFixture[str]) -> None:
    assert imports.main(["--steps", "2"]) == 0
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| ") and " M |" in line]
    assert len(rows) == 2
    counts = [int(row.split("|")[2].strip().removesuffix(" M").replace(",", "")) for row in rows]
    assert 10 < counts[0] < counts[1]  # the interpreter, then more with asyncio, ssl, aiohttp, orjson
