"""The seventh blind differential suite (sequences_blind7.py): 44 sequences, 709 steps, played on the fake and on
the real control plane. A sequence's test prints its differences and never fails on them; the last test holds the
fake to its floor.

Written on 2026-12-03 by a session blind to the fake: CustomResourceDefinitions and custom resources as
kubebuilder, Kopf and kube-rs users write them (CRD validation, pruning, defaulting, CEL, subresources, versions,
server-side apply) and the API machinery every client relies on, modelled on apiextensions-apiserver's integration
tests and the API machinery e2e tests. It read only the harness (harness.py, blind.py, compare.py, conftest.py,
play_real.py) and the Echo CRD, never the fake's code, the sequences it was tuned on, its documentation or the
project's history, and never contacted the fake; it checked every step against kube-apiserver 1.35.4 alone, the
whole module with no unstable step in two consecutive full runs whose outcomes were identical. First contact,
2026-12-03 at 18:25 UTC, on the fake of commit 42430da (tuned on the first five blind suites and the written
ones): 575 of 709 steps agree (81.1 %), 16 of 44 sequences entirely, well short of issue 31's 95 %: most
differences are CRDs the real server refuses and the fake accepts (names, shortNames and categories, protected
groups, scale paths, printer columns, structural rules, selectable fields), each followed by a create the fake
then refuses as AlreadyExists; then the fake's 501 for x-kubernetes-embedded-resource, selectable fields, names
conflicts between CRDs, the group's discovery document, validation ratcheting."""

from __future__ import annotations

import pytest

from tests.differential.blind import BlindSuite
from tests.differential.harness import Backend
from tests.differential.sequences_blind7 import SEQUENCES

# The floor: 81.1 % at first contact (2026-12-03); 99.7 % (707/709) after the fixes of 2026-12-04 made
# knowing its differences (no longer blind), so it now guards them, with room for a loaded CI's timing. No
# goal test: a suite tuned on does not judge the goal.
SUITE = BlindSuite("blind7", SEQUENCES, floor=95.0)


@pytest.mark.parametrize("name", list(SEQUENCES))
async def test_blind7_sequence(name: str, fake: Backend, real: Backend) -> None:
    await SUITE.play(name, fake, real)


def test_blind7_report_and_floor() -> None:
    SUITE.report_and_floor()
