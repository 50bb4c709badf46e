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

import pytest

from tests.differential.blind import BlindSuite
from tests.differential.harness import Backend
from tests.differential.sequences_blind import BLIND

# The floor: 96.3 % on 2026-12-03 (81.0 % at first contact); lower than that is a regression of the fake
SUITE = BlindSuite("blind", BLIND, floor=90.0)


@pytest.mark.parametrize("name", list(BLIND))
async def test_blind_sequence(name: str, fake: Backend, real: Backend) -> None:
    await SUITE.play(name, fake, real)


def test_blind_agreement_report_and_floor() -> None:
    SUITE.report_and_floor()


def test_blind_agreement_at_least_95_percent() -> None:
    SUITE.goal()
