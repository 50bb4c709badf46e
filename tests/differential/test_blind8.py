"""The eighth blind differential suite (sequences_blind8.py): 47 sequences, 669 steps, played on the fake and on
the real control plane. A sequence's test prints its differences and never fails on them; the last test holds the
fake to its floor.

Written on 2026-12-04 by a session blind to the fake: the kinds operators use as controller-runtime's client,
kubectl, kube-rs, Kopf and client-go users touch them (every verb and patch type, preconditions, dry runs, field
validation, field managers, selectors, paging, watches, finalizers and garbage collection, invalid input). It read
only the harness (harness.py, blind.py, compare.py, conftest.py, play_real.py), the Echo CRD and kubeloop/client,
never the fake's code, its tests, the sequences it was tuned on, its documentation or the project's history, and
never contacted the fake; it checked every step against kube-apiserver 1.35.4 alone (all 47 sequences in one run,
twice, no unstable step). First contact, 2026-12-04 at 19:51 UTC, on the fake of commit bc4502c (after the day's
fixes against the sixth and seventh suites): 635 of 669 steps agree (94.9 %), 30 of 47 sequences entirely, just
short of issue 31's 95 %. The 34 differing steps: the work of controllers the fake does not run (a Deployment's
ReplicaSets, 5 steps) and a namespace's terminating phase (1); what it refuses as unmodelled (501: nodes, a
PATCH's resourceVersion parameter, a strategic patch of a scale subresource, a TokenRequest's bound object: 4);
resourceVersion ranks where the fake counts one write more or fewer than the real server (a no-op merge patch, a
patch of an unknown metadata field, a Lease's unknown strategy, a ServiceAccount's deletion: 9); validation the
fake lacks or words otherwise (a ConfigMap's name-level binaryData, label key and value messages, an
ownerReference list, the finalizer message's tail, a Service's clusterIP None on update, an apply of another kind,
an old apiVersion in the body, a strategic patch that is not JSON, a scale PUT naming another object, a POST
without namespace: 12); 404 bodies for unserved group versions (2); a watch on one object's path (1)."""

from __future__ import annotations

import pytest

from tests.differential.blind import BlindSuite
from tests.differential.harness import Backend
from tests.differential.sequences_blind8 import SEQUENCES

# The floor: 94.9 % at first contact (2026-12-04), with room for a loaded CI's timing; no goal test, since
# the fake does not meet the goal on this suite.
SUITE = BlindSuite("blind8", SEQUENCES, floor=91.0)


@pytest.mark.parametrize("name", list(SEQUENCES))
async def test_blind8_sequence(name: str, fake: Backend, real: Backend) -> None:
    await SUITE.play(name, fake, real)


def test_blind8_report_and_floor() -> None:
    SUITE.report_and_floor()
