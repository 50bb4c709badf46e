"""The third blind differential suite (sequences_blind3.py): 43 sequences, 500 steps, played on the fake and
on the real control plane. A sequence's test prints its differences and never fails on them; the last two
tests judge the fake on total step agreement.

Written on 2026-12-03 by a session blind to the fake: it read only the harness (harness.py, blind.py,
compare.py, conftest.py, play_real.py) and the Echo CRD, not the fake's code, the sequences the fake was
tuned on, its documentation or the project's history, and it never contacted the fake. It checked every
step against the real kube-apiserver 1.35.4 alone (``python -m tests.differential.play_real``): each
sequence twice in fresh namespaces, a step kept only when the answer was the one meant and the same in
both, the whole module with no unstable step in two consecutive full runs. First contact, 2026-12-03 at
14:08 UTC, on the fake of commit 017aa2a (tuned on the first two blind suites and the written ones): 452 of
500 steps agree (90.4 %), 21 of 43 sequences entirely, short of issue 31's goal; the goal's test is a strict
expected failure and the floor sits below that figure. The same afternoon, after fixes made knowing its
differences (so no longer blind for those): 486 of 500 (97.2 %); the goal's test now holds it there."""

from __future__ import annotations

import pytest

from tests.differential.blind import BlindSuite
from tests.differential.harness import Backend
from tests.differential.sequences_blind3 import SEQUENCES

# The floor: 90.4 % at first contact, 97.2 % after the fixes (2026-12-03), with room for a loaded CI's timing
SUITE = BlindSuite("blind3", SEQUENCES, floor=92.0)


@pytest.mark.parametrize("name", list(SEQUENCES))
async def test_blind3_sequence(name: str, fake: Backend, real: Backend) -> None:
    await SUITE.play(name, fake, real)


def test_blind3_report_and_floor() -> None:
    SUITE.report_and_floor()


def test_blind3_agreement_at_least_95_percent() -> None:
    SUITE.goal()
