"""The sixth blind differential suite (sequences_blind6.py): 67 sequences, 783 steps, played on the fake and on
the real control plane. A sequence's test prints its differences and never fails on them; the last test holds the
fake to its floor.

Written on 2026-12-03 by a session blind to the fake: built-in kinds as controller-runtime/client-go operators and
kubectl users touch them day to day (ConfigMaps, Secrets, Namespaces, Pods, Services, the workloads, Leases, both
Event APIs, ServiceAccounts, ResourceQuotas and LimitRanges), modelled on Kubernetes' e2e and integration tests.
It read only the harness (harness.py, blind.py, compare.py, conftest.py, play_real.py) and the Echo CRD, never the
fake's code, the sequences it was tuned on, its documentation or the project's history, and never contacted the
fake; it checked every step against kube-apiserver 1.35.4 alone, the whole module with no unstable step in two
consecutive full runs whose outcomes were identical. First contact, 2026-12-03 at 17:58 UTC, on the fake of commit
cf762cc (tuned on the first five blind suites and the written ones): 637 of 783 steps agree (81.4 %), 30 of 67
sequences entirely, well short of issue 31's 95 %: 39 of the 146 differing steps are the fake's 501 for what it
does not model (ResourceQuota, LimitRange, ReplicaSet, ephemeral containers, a Deployment's rollout by its
controller, scale of a ReplicaSet...); most of the rest are the controllers it does not run (StatefulSet and
DaemonSet pods, Job completion, the token controller, NodePorts) and pod validation it lacks (affinity, topology
spread, PodSecurity admission)."""

from __future__ import annotations

import pytest

from tests.differential.blind import BlindSuite
from tests.differential.harness import Backend
from tests.differential.sequences_blind6 import SEQUENCES

# The floor: 81.4 % at first contact (2026-12-03); 95.1 % (745/783) after the fixes of 2026-12-04 made
# knowing its differences (no longer blind), so it now guards them, with room for a loaded CI's timing. No
# goal test: a suite tuned on does not judge the goal.
SUITE = BlindSuite("blind6", SEQUENCES, floor=91.0)


@pytest.mark.parametrize("name", list(SEQUENCES))
async def test_blind6_sequence(name: str, fake: Backend, real: Backend) -> None:
    await SUITE.play(name, fake, real)


def test_blind6_report_and_floor() -> None:
    SUITE.report_and_floor()
