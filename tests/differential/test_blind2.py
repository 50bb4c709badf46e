"""The second blind differential suite (sequences_blind2.py). It plays sequences the fake API server was
never tuned on, against the fake and against the real control plane. A sequence's test prints its
differences and never fails on them. The last two tests judge the fake on total step agreement.

Written on 2026-12-02 by a session blind to the fake. That session did not read the fake's code, the
sequences the fake was fixed against or the fake's documentation, and it did not run these sequences on
the fake. It checked every sequence against the real kube-apiserver 1.35.4 only. It played each one there
and kept a step only when the real answer was the one it meant to provoke and that answer was stable from
run to run. First measured on 2026-12-02 at 08:56, on the fake with the fixes made that morning against
the first blind suite: 374 of 503 steps agree (74.4 %), 10 of 41 sequences entirely, short of issue 31's
goal; the goal's test is therefore a strict expected failure and a floor below that figure catches a
fake that gets worse. At 18:43, after fixes made knowing some of these differences (no longer blind for
those): 388 of 503 (77.1 %). On 2026-12-03, after fixes made knowing more of them (patch and metadata
rules, written sequence ``blind2_found_patch_and_metadata_rules``): 409 of 503 (81.3 %); then, with the
rest of that day's fixes (written sequences ``blind2_found_*``): 464 of 503 (92.2 %); that afternoon, with
fixes made against the third and fourth blind suites: 483 of 503 (96.0 %)."""

from __future__ import annotations

import pytest

from tests.differential.blind import BlindSuite
from tests.differential.harness import Backend
from tests.differential.sequences_blind2 import SEQUENCES

# The floor: 96.0 % on 2026-12-03 (first figure 74.4 %), with room for a loaded CI's timing. No goal test:
# tuned on these sequences, the suite no longer judges issue 31's goal (the third and fourth blind suites do).
SUITE = BlindSuite("blind2", SEQUENCES, floor=93.0)


@pytest.mark.parametrize("name", list(SEQUENCES))
async def test_blind2_sequence(name: str, fake: Backend, real: Backend) -> None:
    await SUITE.play(name, fake, real)


def test_blind2_report_and_floor() -> None:
    SUITE.report_and_floor()
