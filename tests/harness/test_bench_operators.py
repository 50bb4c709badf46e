"""The pure parts of the bundled-operator benchmark scenarios (harness/bench/operators.py): which requests
count as the operator's, events, layouts, and what done means for each operator."""

from __future__ import annotations

from collections import Counter

from harness.bench import operators
from harness.bench.operators import (
    SCENARIOS,
    attribute,
    chaos_report,
    copyrator_layout,
    each,
    event_reasons,
    event_requests,
    nodes_for,
    round_seconds,
    rounds_of,
)


def test_attribute_counts_the_crd_group_and_named_verbs_minus_the_harness() -> None:
    before = Counter({("DELETE", "", "pods", ""): 10, ("LIST", "", "pods", ""): 1})
    after = Counter({
        ("DELETE", "", "pods", ""): 60,  # 50 in the window, 5 of them the harness's
        ("POST", "", "pods", ""): 40,  # the ReplicaSet controller's: not named
        ("LIST", "", "pods", ""): 4,
        ("WATCH", "", "pods", ""): 3,  # never
        ("POST", "events.k8s.io", "events", ""): 9,  # counted from the events instead
        ("PATCH", "blackadder.io", "chaosagents", "status"): 3,  # the group: any verb
        ("WATCH", "blackadder.io", "chaosagents", ""): 1,
        ("PATCH", "", "configmaps", ""): 2,
    })
    harness = Counter({("DELETE", "", "pods", ""): 5})
    got = attribute(before, after, Counter(), harness, "blackadder.io",
                    frozenset({"DELETE pods", "LIST pods", "* configmaps"}))
    assert got == {"DELETE pods": 45, "LIST pods": 3, "PATCH chaosagents/status": 3, "PATCH configmaps": 2}


def test_attribute_without_a_crd_group_counts_only_named_requests() -> None:
    after = Counter({("PATCH", "apps", "deployments", ""): 7, ("PUT", "apps", "deployments", "status"): 7,
                     ("POST", "", "namespaces", ""): 1})
    assert attribute(Counter(), after, Counter(), Counter(), "", frozenset({"PATCH deployments"})) == {
        "PATCH deployments": 7}


def test_events_give_requests_and_reasons() -> None:
    events = [{"reason": "PodKilled"}, {"reason": "PodKilled", "series": {"count": 3}}, {"reason": "ChaosRound"}]
    assert event_requests(events) == {"POST events": 3, "PATCH events": 2}
    assert event_requests([]) == {}
    assert event_reasons(events) == {"ChaosRound": 1, "PodKilled": 4}
    derive = SCENARIOS["blackadder"].from_events
    assert derive is not None and derive(event_reasons(events)) == {"DELETE pods": 4}
    assert derive({"ChaosRound": 1}) == {}


def test_copyrator_layout() -> None:
    assert copyrator_layout(4000) == (200, 20)
    assert copyrator_layout(100) == (5, 20)
    assert copyrator_layout(5) == (1, 5)


def test_each_marks_an_object_once_done() -> None:
    marks = each(lambda o: o["status"]["ok"])
    assert marks({"metadata": {"name": "a", "namespace": "ns"}, "status": {"ok": True}}) == ["ns/a"]
    assert marks({"metadata": {"name": "a", "namespace": "ns"}, "status": {"ok": False}}) == []


def _agent(round_no: int, started: str, killed: int) -> dict:
    return {"metadata": {"name": "agent"},
            "status": {"round": round_no, "lastRoundTime": started, "counters": {"tantrum": killed}}}


def test_blackadder_rounds_and_their_lengths() -> None:
    assert rounds_of({"status": {}}) == []
    assert rounds_of(_agent(2, "", 0)) == ["round 1", "round 2"]
    assert rounds_of(_agent(operators.ROUNDS + 2, "", 0)) == [f"round {i}" for i in range(1, operators.ROUNDS + 1)]
    t0 = 1795255200.0  # 2026-11-21T10:00:00Z
    seen = {
        "round 1": (1.0, t0 + 2.5, _agent(1, "2026-11-21T10:00:00.000000Z", 10)),
        "round 2": (2.0, t0 + 13.0, _agent(2, "2026-11-21T10:00:10.000000Z", 19)),
    }
    assert round_seconds(seen) == [2.5, 3.0]
    assert chaos_report(seen) == {"rounds": 2, "status_tantrum": 19, "round_s": [2.5, 3.0]}


def test_every_bundled_operator_has_a_scenario() -> None:
    assert [s.name for s in operators.selected(["all"])] == ["immortal", "copyrator", "reloader", "blackadder"]
    assert {name: s.n for name, s in SCENARIOS.items()} == {
        "immortal": 1000, "copyrator": 4000, "reloader": 500, "blackadder": 5000}
    argv = SCENARIOS["reloader"].command("/kubeconfig", "ns-1")
    assert argv[argv.index("--namespace") + 1] == "ns-1"
    assert argv[-2:] == ["--max-reloads-per-second", "0"]


def test_blackadder_pods_fit_on_their_nodes() -> None:
    for n in (20, 100, 5000):
        assert n <= nodes_for(n) * 100
    rs = {"metadata": {"name": "victims", "uid": "u-1"}}
    pod = operators._pod(rs, 7, "kwok-node-3")
    assert pod["metadata"]["name"] == "victims-00007" and pod["spec"]["nodeName"] == "kwok-node-3"
    assert pod["metadata"]["ownerReferences"][0] == {
        "apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "victims", "uid": "u-1", "controller": True}
    assert pod["metadata"]["labels"] == operators._replicaset("victims", 1)["spec"]["selector"]["matchLabels"]
