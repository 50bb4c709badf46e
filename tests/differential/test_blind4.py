"""The fourth blind differential suite (sequences_blind4.py): 45 sequences, 490 steps, played on the fake and
on the real control plane. A sequence's test prints its differences and never fails on them; the last two
tests judge the fake on total step agreement.

Written on 2026-12-03 by a session blind to the fake, modelled on what operators send (cert-manager,
external-secrets, Reloader, Flux, Argo CD, the Prometheus operator, Kopf, controller-runtime) and on a new
user's mistakes: it read only the harness (harness.py, blind.py, compare.py, conftest.py, play_real.py) and
the Echo CRD, not the fake's code, the sequences the fake was tuned on, its documentation or the project's
history, and it never contacted the fake. It checked every step against the real kube-apiserver 1.35.4 alone
(``python -m tests.differential.play_real``): each sequence twice in fresh namespaces, a step kept only when
its answer was stable, the whole module with no unstable step in two consecutive full runs whose outcomes
were identical. First contact, 2026-12-03 at 14:31 UTC, on the fake of commit 20c6b95 (tuned on the first
three blind suites and the written ones): 451 of 490 steps agree (92.0 %), 29 of 45 sequences entirely,
short of issue 31's goal. The same afternoon, after fixes made knowing its differences (so no longer blind
for those): 483 of 490 (98.6 %); the goal's test now holds it there."""

from __future__ import annotations

import pytest

from tests.differential.blind import BlindSuite
from tests.differential.harness import Backend
from tests.differential.sequences_blind4 import SEQUENCES

# The floor: 92.0 % at first contact, 98.6 % after the fixes (2026-12-03), with room for a loaded CI's timing
SUITE = BlindSuite("blind4", SEQUENCES, floor=94.0)


@pytest.mark.parametrize("name", list(SEQUENCES))
async def test_blind4_sequence(name: str, fake: Backend, real: Backend) -> None:
    await SUITE.play(name, fake, real)


def test_blind4_report_and_floor() -> None:
    SUITE.report_and_floor()


def test_blind4_agreement_at_least_95_percent() -> None:
    SUITE.goal()
