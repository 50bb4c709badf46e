"""The blind differential suite (sequences_blind.py): sequences the fake API server was not tuned on, run on
the fake and on the real control plane. A single sequence never fails on differences (each is printed);
the judges are the last two tests, on the total step agreement.

Written on 2026-12-02 by a session that had not read the fake's code nor the sequences it was fixed
against; at first contact the fake agreed on 391 of 483 steps (81.0 %), short of issue 31's goal of 95 %
(the differences, by cause, in docs/reference/fake-api-server.md). Fixing the fake against these sequences
made them no longer blind: a fix is judged by a new blind suite, not by this one's figure alone. On
2026-12-03 the fake reached 465 of 483 (96.3 %), after fixes made against the second blind suite; the
goal's test, an expected failure until then, now holds it there (its 18 differing steps are rules, not
timing), and the floor stays below it."""

from __future__ import annotations

import sys

import pytest

from tests.differential.compare import compare
from tests.differential.harness import Backend
from tests.differential.sequences_blind import BLIND

THRESHOLD = 95.0  # issue 31's goal
FLOOR = 90.0  # 96.3 % on 2026-12-03 (81.0 % at first contact): lower than that is a regression of the fake
RESULTS: dict[str, tuple[int, list[str]]] = {}  # sequence → (steps, differences)


def _out(text: str) -> None:
    print(text, file=sys.__stderr__, flush=True)


@pytest.mark.parametrize("name", list(BLIND))
async def test_blind_sequence(name: str, fake: Backend, real: Backend) -> None:
    steps = BLIND[name]
    diffs = await compare(name, steps, fake, real)
    RESULTS[name] = (len(steps), diffs)
    _out(f"\n[blind] {name}: {len(steps) - len(diffs)}/{len(steps)} steps agree")
    for diff in diffs:  # the first lines of each (the whole of them: pytest -s with compare's output)
        _out(f"[blind] {name}: {diff[:400]}")


def _agreement() -> float:
    missing = [name for name in BLIND if name not in RESULTS]
    assert not missing, f"{len(missing)} blind sequence(s) did not run (or errored): {', '.join(missing)}"
    total = sum(n for n, _ in RESULTS.values())
    agreeing = sum(n - len(d) for n, d in RESULTS.values())
    assert total > 0, "no steps ran"
    return 100.0 * agreeing / total


def test_blind_agreement_report_and_floor() -> None:
    rate = _agreement()
    lines = ["", "blind differential suite: agreement per sequence"]
    for name, (n, diffs) in RESULTS.items():
        lines.append(f"  {name:<48} {n - len(diffs):>3}/{n:<3} {100.0 * (n - len(diffs)) / n:5.1f} %")
    agreeing, total = sum(n - len(d) for n, d in RESULTS.values()), sum(n for n, _ in RESULTS.values())
    whole = sum(not d for _, d in RESULTS.values())
    lines.append(f"  total: {whole}/{len(RESULTS)} sequences and {agreeing}/{total} steps agree ({rate:.1f} %)")
    _out("\n".join(lines))
    assert rate >= FLOOR, f"blind step agreement {rate:.1f} % fell below its floor of {FLOOR} %"


def test_blind_agreement_at_least_95_percent() -> None:
    rate = _agreement()
    assert rate >= THRESHOLD, f"blind step agreement {rate:.1f} % < {THRESHOLD} %"
