"""blackadder's pure logic: seeded choices, time windows, lorem ipsum, capping, marks and selectors."""

from __future__ import annotations

import asyncio
import random
from datetime import UTC, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfoNotFoundError

import pytest

from kubeloop import builtin
from kubeloop.client import transport
from kubeloop.client.errors import error_from_status
from kubeloop.helpers.selectors import to_query as selector_string
from kubeloop.operators.blackadder import (
    build_operator,
    cancer,
    ipsum,
    lorem,
    marks,
    report,
    safety,
    schedule,
    tantrum,
)
from kubeloop.operators.blackadder.agent import Clock, seed_of, undo_unwanted, wake_up, why_idle
from kubeloop.operators.blackadder.chaos import Action, Round
from kubeloop.operators.blackadder.models import ChaosAgentSpec, ChaosAgentStatus
from kubeloop.operators.blackadder.safety import Settings, is_own, opted_out, rewritable_configmap
from kubeloop.operators.blackadder.targets import Scope, object_key
from kubeloop.resources import crds_for
from kubeloop.resources.types import LabelSelector
from kubeloop.testing.fakeclient import FakeClient

NOW = datetime(2024, 1, 6, 12, 0, tzinfo=UTC)  # a Saturday


def pod(name: str, owner: str | None = "rs-1", phase: str = "Running", age: float = 3600,
        deleting: bool = False, namespace: str = "ns") -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": namespace, "uid": f"uid-{name}",
                            "creationTimestamp": schedule.rfc3339(NOW - timedelta(seconds=age))}
    if owner:
        meta["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": owner,
                                    "uid": f"uid-{owner}", "controller": True}]
    if deleting:
        meta["deletionTimestamp"] = schedule.rfc3339(NOW)
    return {"metadata": meta, "status": {"phase": phase}}


def spec(**kw: Any) -> ChaosAgentSpec:
    return ChaosAgentSpec(**kw)


# --- seeded selection ------------------------------------------------------------------------------------


def test_same_seed_and_state_same_victims_in_any_listing_order() -> None:
    pods = [pod(f"p{i}", owner=f"rs-{i % 3}") for i in range(12)]
    picks = []
    for _ in range(5):
        listed = random.sample(pods, len(pods))  # the server may list in any order: we sort
        ordered = sorted(listed, key=object_key)
        picks.append([p["metadata"]["name"] for p in
                      tantrum.choose_victims(schedule.dice(42, 3, "tantrum"), ordered, 50)])
    assert all(p == picks[0] for p in picks) and picks[0]
    other_rounds = {tuple(p["metadata"]["name"] for p in tantrum.choose_victims(
        schedule.dice(42, n, "tantrum"), sorted(pods, key=object_key), 50)) for n in range(1, 10)}
    assert len(other_rounds) > 1  # the round number changes the dice


def test_victims_are_distinct_and_one_per_owner() -> None:
    pods = [pod(f"p{i}", owner=f"rs-{i % 3}") for i in range(12)]
    victims = tantrum.choose_victims(random.Random(1), pods, 100)
    assert len(victims) == 3 and len({tantrum.owner_of(v) for v in victims}) == 3
    everyone = tantrum.choose_victims(random.Random(1), pods, 100, one_per_owner=False)
    assert sorted(p["metadata"]["name"] for p in everyone) == sorted(p["metadata"]["name"] for p in pods)


def test_eagerness_is_a_percentage() -> None:
    rng = random.Random(7)
    hits = sum(schedule.chance(rng, 20) for _ in range(20000))
    assert 0.18 < hits / 20000 < 0.22
    assert all(schedule.chance(rng, 100) for _ in range(1000))


def test_modes_have_independent_dice() -> None:
    assert schedule.dice(1, 1, "tantrum").random() == schedule.dice(1, 1, "tantrum").random()
    assert schedule.dice(1, 1, "tantrum").random() != schedule.dice(1, 1, "ipsum").random()
    assert schedule.dice(1, 1, "x").random() != schedule.dice(1, 2, "x").random()


def test_candidate_pods_running_old_owned_not_terminating() -> None:
    pods = [pod("ok"), pod("young", age=10), pod("pending", phase="Pending"), pod("dying", deleting=True),
            pod("orphan", owner=None)]
    names = lambda ps: [p["metadata"]["name"] for p in ps]  # noqa: E731
    assert names(tantrum.candidate_pods(pods, spec(minPodAgeSeconds=60), NOW)) == ["ok"]
    assert names(tantrum.candidate_pods(pods, spec(minPodAgeSeconds=0, killOrphans=True), NOW)) == [
        "ok", "young", "orphan"]


# --- time windows ----------------------------------------------------------------------------------------


def test_time_ranges_wrap_past_midnight() -> None:
    start, end = schedule.parse_time_range("22:00-06:00")
    assert schedule.in_time_range(time(23, 30), start, end)
    assert schedule.in_time_range(time(5, 59), start, end)
    assert not schedule.in_time_range(time(6, 0), start, end)
    assert not schedule.in_time_range(time(12, 0), start, end)
    assert schedule.in_time_range(time(9, 0), *schedule.parse_time_range("09:00-17:00"))
    assert not schedule.in_time_range(time(17, 0), *schedule.parse_time_range("09:00-17:00"))
    assert schedule.in_time_range(time(3, 0), *schedule.parse_time_range("12:00-12:00"))  # all day


def test_excluded_window_in_a_timezone() -> None:
    late_saturday = datetime(2024, 1, 6, 23, 30, tzinfo=UTC)  # Sunday 00:30 in Berlin
    assert schedule.excluded_window(late_saturday, ["Sun"], [], "UTC") is None
    assert "Sun" in schedule.excluded_window(late_saturday, ["Sun"], [], "Europe/Berlin")
    assert "00:00-01:00" in schedule.excluded_window(late_saturday, [], ["00:00-01:00"], "Europe/Berlin")
    assert schedule.excluded_window(late_saturday, [], ["00:00-01:00"], "UTC") is None
    with pytest.raises(ZoneInfoNotFoundError):
        schedule.excluded_window(late_saturday, [], [], "Mars/Olympus_Mons")


def test_why_idle_holds_in_every_mode_including_dry_run() -> None:
    assert why_idle(spec(suspend=True), NOW) == ("Suspended", "spec.suspend is true")
    assert why_idle(spec(dryRun=True, excludedWeekdays=["Sat"]), NOW)[0] == "ExcludedTime"
    assert why_idle(spec(timezone="Nowhere/Special"), NOW)[0] == "InvalidTimezone"
    assert why_idle(spec(excludedWeekdays=["Mon"], excludedTimesOfDay=["13:00-14:00"]), NOW) is None


def test_time_ranges_are_validated_by_the_schema() -> None:
    with pytest.raises(ValueError):
        spec(excludedTimesOfDay=["25:00-06:00"])
    with pytest.raises(ValueError):
        spec(excludedWeekdays=["Someday"])


def test_rounds_are_pause_apart_and_the_first_is_due_at_once() -> None:
    assert schedule.next_round_at(None, 30, NOW) == NOW
    assert schedule.next_round_at(NOW, 30, NOW + timedelta(seconds=1)) == NOW + timedelta(seconds=30)
    assert schedule.parse_rfc3339(schedule.rfc3339(NOW)) == NOW


def test_clock_is_what_status_records() -> None:
    status = ChaosAgentStatus.model_validate({"round": 3, "seed": 9, "lastRoundTime": "2024-01-06T12:00:00Z"})
    assert Clock.load(status).round == 3 and Clock.load(status).seed == 9
    assert Clock.load(None).round == 0


# --- lorem ipsum -----------------------------------------------------------------------------------------


def test_lorem_ipsum_is_seeded_garbage() -> None:
    a, b = lorem.paragraph(random.Random(3)), lorem.paragraph(random.Random(3))
    assert a == b and a.startswith("Lorem ipsum dolor sit amet") and a.endswith(".")
    words = {w.strip(".,").lower() for w in a.split()}
    assert words <= set(lorem.WORDS)
    assert lorem.paragraph(random.Random(4)) != a


# --- cancer ----------------------------------------------------------------------------------------------


def deployment(name: str, replicas: int | None, **meta: Any) -> dict[str, Any]:
    spec_: dict[str, Any] = {} if replicas is None else {"replicas": replicas}
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name, "namespace": "ns", "resourceVersion": "1", **meta}, "spec": spec_}


def test_doubling_is_capped_at_128() -> None:
    assert [cancer.doubled(n) for n in (1, 3, 64, 65, 100, 128)] == [2, 6, 128, 128, 128, 128]
    assert cancer.replicas_of(deployment("d", None)) == 1


def test_the_replica_budget_is_shared_in_order_and_bounded_overall() -> None:
    deps = [deployment("a", 3), deployment("b", 10), deployment("c", 1)]
    assert [(d["metadata"]["name"], n) for d, n in cancer.allot(deps, 8)] == [("a", 3), ("b", 5)]
    assert [n for _, n in cancer.allot(deps, 100)] == [3, 10, 1]
    assert cancer.allot(deps, 0) == []
    assert cancer.round_budget(per_round=4, overall=16, held=14) == 2
    assert cancer.round_budget(per_round=4, overall=16, held=20) == 0  # lowered below what is held
    held = deployment("d", 8, annotations={marks.ORIGINAL_REPLICAS: "3", marks.CHAOS_REPLICAS: "8"})
    forged = deployment("d", 8, annotations={marks.ORIGINAL_REPLICAS: "lots", marks.CHAOS_REPLICAS: "8"})
    assert cancer.extra_replicas(held) == 5 and cancer.extra_replicas(forged) == 0
    client = FakeClient(deployment("d", 10))
    action = asyncio.run(cancer.scale_up(a_round(client), deployment("d", 10), set(), limit=3))
    assert action is not None and action.detail == "10 -> 13"


def test_forged_marks_are_not_trusted() -> None:
    settings = Settings(operator_namespace="ops")
    cm = {"metadata": {"name": "bait", "namespace": "team-a", "uid": "u1",
                       "annotations": {marks.BACKUP: "victims/secrets"}}}
    assert ipsum.trusted_backup(settings, cm) is None
    cm["metadata"]["annotations"][marks.BACKUP] = "ops/blackadder-backup-other-uid"
    assert ipsum.trusted_backup(settings, cm) is None
    cm["metadata"]["annotations"][marks.BACKUP] = "ops/blackadder-backup-u1"
    assert ipsum.trusted_backup(settings, cm) == "ops/blackadder-backup-u1"
    assert ipsum.trusted_backup(Settings(operator_namespace=None), cm) is None
    for junk in ("lots", "-1", "1e3", "²", "9999999999", ""):
        assert cancer._count(junk) is None, junk


def test_scalable_skips_zero_capped_autoscaled_and_others_held() -> None:
    target = {"kind": "Deployment", "name": "auto"}
    hpas = [{"metadata": {"namespace": "ns"}, "spec": {"scaleTargetRef": target}}]
    auto = cancer.hpa_targets(hpas)
    assert cancer.scalable(deployment("d", 3), "me", auto)
    assert not cancer.scalable(deployment("d", 0), "me", auto)
    assert not cancer.scalable(deployment("d", 128), "me", auto)
    assert not cancer.scalable(deployment("auto", 3), "me", auto)
    assert not cancer.scalable(deployment("d", 3, labels={marks.AGENT: "other"}), "me", auto)
    assert cancer.scalable(deployment("d", 3, labels={marks.AGENT: "me"}), "me", auto)


def patches(client: FakeClient) -> list[Any]:
    """The bodies of the patches ``client`` was sent."""
    return [c.body for c in client.calls if c.verb == "patch"]


def a_round(client: Any, dry_run: bool = False) -> Round:
    return Round(client, Settings(), "agent", "agent", 1, 1, NOW, dry_run)


def test_scaling_retries_on_conflict_and_records_the_original() -> None:
    client = FakeClient(deployment("d", 5))
    stale = client.stored(builtin.DEPLOYMENT, "d", "ns")
    assert stale is not None
    # Scaled by someone else since our read: the guarded patch conflicts, and the retry decides again on
    # what the API server has now.
    asyncio.run(client.patch(builtin.DEPLOYMENT, "d", {"spec": {"replicas": 6}}, "ns"))
    action = asyncio.run(cancer.scale_up(a_round(client), stale, set()))
    assert action is not None and action.detail == "6 -> 12"
    sent = patches(client)[1:]
    assert [p["metadata"]["resourceVersion"] for p in sent] == ["1", "2"]
    last = sent[-1]
    assert last["metadata"]["annotations"][marks.ORIGINAL_REPLICAS] == "6"
    assert last["metadata"]["labels"] == {marks.AGENT: "agent"}
    now = client.stored(builtin.DEPLOYMENT, "d", "ns")
    assert now is not None and now["spec"]["replicas"] == 12


def test_dry_run_scaling_changes_nothing() -> None:
    client = FakeClient(deployment("d", 5))
    action = asyncio.run(cancer.scale_up(a_round(client, dry_run=True), deployment("d", 5), set()))
    assert action is not None and action.dry_run and patches(client) == []


def test_restore_leaves_a_deployment_someone_else_scaled() -> None:
    annotations = {marks.ORIGINAL_REPLICAS: "2", marks.CHAOS_REPLICAS: "8"}
    ours = deployment("d", 8, labels={marks.AGENT: "a"}, annotations=annotations)
    client = FakeClient(ours)
    assert asyncio.run(cancer.restore_deployment(client, ours)).action == "restored"
    assert patches(client)[-1]["spec"] == {"replicas": 2}
    edited = deployment("d", 5, labels={marks.AGENT: "a"}, annotations=annotations)
    client = FakeClient(edited)
    assert asyncio.run(cancer.restore_deployment(client, edited)).action == "released"
    assert "spec" not in patches(client)[-1]
    assert patches(client)[-1]["metadata"]["labels"] == {marks.AGENT: None}


# --- ipsum -----------------------------------------------------------------------------------------------


def cm(name: str = "c", data: dict[str, str] | None = None, **extra: Any) -> dict[str, Any]:
    meta = {"name": name, "namespace": "ns", "uid": "u1", "resourceVersion": "1", **extra.pop("metadata", {})}
    return {"metadata": meta, "data": {"k": "v"} if data is None else data, **extra}


def test_only_plain_configmaps_are_rewritten() -> None:
    assert rewritable_configmap(cm())
    assert not rewritable_configmap(cm("kube-root-ca.crt"))
    assert not rewritable_configmap(cm(immutable=True))
    assert not rewritable_configmap(cm(data={}))
    assert not rewritable_configmap(cm(metadata={"ownerReferences": [{"kind": "X", "name": "x", "uid": "1",
                                                                      "controller": True}]}))


def test_lorem_data_keeps_keys_and_is_seeded_per_object() -> None:
    rnd = a_round(None)
    data = ipsum.lorem_data(rnd, cm(data={"a": "1", "b": "2"}))
    assert set(data) == {"a", "b"} and all(v.startswith("Lorem ipsum") for v in data.values())
    assert ipsum.lorem_data(rnd, cm(data={"a": "1", "b": "2"})) == data
    assert ipsum.lorem_data(rnd, cm("other", data={"a": "1", "b": "2"})) != data


def test_marks_keep_the_first_original() -> None:
    first = marks.mark(cm(), "a", "t1", {marks.ORIGINAL_DATA: '{"k":"v"}', marks.CHAOS_DIGEST: "d1"})
    assert first["annotations"] == {marks.ORIGINAL_DATA: '{"k":"v"}', marks.CHAOS_DIGEST: "d1",
                                    marks.CHANGED_AT: "t1"}
    held = cm(metadata={"labels": {marks.AGENT: "a"}})
    again = marks.mark(held, "a", "t2", {marks.ORIGINAL_DATA: '{"k":"lorem"}', marks.CHAOS_DIGEST: "d2"})
    assert again["annotations"] == {marks.CHAOS_DIGEST: "d2"}
    assert set(marks.unmark(held)["annotations"]) == set(marks.ANNOTATIONS)
    assert marks.digest({"a": "1", "b": "2"}) == marks.digest({"b": "2", "a": "1"})


def test_long_agent_names_become_valid_label_values() -> None:
    assert marks.agent_label("princeedmund") == "princeedmund"
    long = marks.agent_label("a" * 200)
    assert len(long) <= 63 and long.startswith("h-")
    assert marks.agent_label("x.example.com-") != "x.example.com-"


# --- scope and safety ------------------------------------------------------------------------------------


def test_label_selectors_become_query_strings() -> None:
    assert selector_string(None) is None
    sel = LabelSelector.model_validate({"matchLabels": {"b": "2", "a": "1"}, "matchExpressions": [
        {"key": "tier", "operator": "In", "values": ["web", "api"]},
        {"key": "x", "operator": "NotIn", "values": ["y"]},
        {"key": "e", "operator": "Exists"}, {"key": "gone", "operator": "DoesNotExist"}]})
    assert selector_string(sel) == "a=1,b=2,tier in (web,api),x notin (y),e,!gone"


def test_excluded_namespaces_go_to_the_server_as_field_selectors() -> None:
    scope = Scope(("kube-system", "team-a"))
    assert scope.field_selector("status.phase=Running") == (
        "status.phase=Running,metadata.namespace!=kube-system,metadata.namespace!=team-a")
    assert Scope(("kube-system",), ("web",)).field_selector() is None  # listed per chosen namespace


def test_system_and_own_namespaces_are_always_excluded() -> None:
    settings = Settings(operator_namespace="chaos-operator", protected_namespaces=("prod",))
    assert set(settings.excluded_namespaces) == {"kube-system", "kube-public", "kube-node-lease",
                                                 "chaos-operator", "prod"}


def test_the_operators_namespace_is_given_or_the_pods_never_the_kubeconfigs(
        tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(safety, "POD_NAMESPACE_FILE", tmp_path / "absent")
    assert safety.operator_namespace(None) is None  # outside a cluster, nothing given
    assert "default" not in Settings(operator_namespace=None).excluded_namespaces
    pod_file = tmp_path / "namespace"
    pod_file.write_text("chaos-operator\n")
    monkeypatch.setattr(safety, "POD_NAMESPACE_FILE", pod_file)
    assert safety.operator_namespace(None) == "chaos-operator"
    assert safety.operator_namespace("given") == "given"


def test_opt_out_and_own_pods() -> None:
    assert opted_out({"metadata": {"annotations": {"blackadder.io/exclude": "true"}}})
    assert not opted_out({"metadata": {}})
    settings = Settings(own_pod=("ops", "blackadder-abc"))
    assert is_own({"metadata": {"namespace": "ops", "name": "blackadder-abc"}}, settings)
    assert is_own({"metadata": {"namespace": "x", "name": "y", "labels": {
        "app.kubernetes.io/name": "blackadder", "app.kubernetes.io/managed-by": "kubeloop"}}}, settings)


# --- reporting and packaging -----------------------------------------------------------------------------


def test_counters_and_bounded_recent_actions() -> None:
    obj = {"kind": "Pod", "metadata": {"name": "p", "namespace": "ns"}}
    actions = [Action("tantrum", "killed", obj), Action("tantrum", "spared", obj, changed=False),
               Action("ipsum", "rewrote", obj, dry_run=True), Action("restore", "restored", obj)]
    assert report.counters({"tantrum": 2}, actions) == {"tantrum": 3, "cancer": 0, "ipsum": 1, "restored": 1}
    recent = report.recent([{"round": 0}] * 5, actions, 1, "t", 6)
    assert len(recent) == 6 and recent[-1]["mode"] == "restore" and recent[-2]["dryRun"] is True
    assert report.reason(actions[2]) == "DryRunConfigMapRewritten"


def test_one_crd_with_three_versions_and_the_article_columns() -> None:
    op = build_operator()
    (crd,) = crds_for(op.custom_resources())
    assert crd["metadata"]["name"] == "chaosagents.blackadder.io" and crd["spec"]["scope"] == "Cluster"
    assert crd["spec"]["names"]["shortNames"] == ["ca"]
    versions = {v["name"]: v for v in crd["spec"]["versions"]}
    assert [v for v in versions if versions[v]["storage"]] == ["v1beta1"]
    assert set(versions) == {"v1alpha1", "v1beta1", "v1beta2"}
    for version in versions.values():
        assert [c["name"] for c in version["additionalPrinterColumns"]] == [
            "Tantrum", "Tolerance", "Cancer", "Ipsum", "Eagerness", "Pause", "Excluded"]
    pause = {v: c["jsonPath"] for v in versions for c in versions[v]["additionalPrinterColumns"]
             if c["name"] == "Pause"}
    assert pause == {"v1alpha1": ".spec.pauseDuration", "v1beta1": ".spec.pauseDuration",
                     "v1beta2": ".spec.pauseSeconds"}
    schema = versions["v1beta1"]["schema"]["openAPIV3Schema"]
    eagerness = schema["properties"]["spec"]["properties"]["eagerness"]
    assert (eagerness["minimum"], eagerness["maximum"]) == (1, 100)
    granted = {(p.resource, p.subresource): set(p.verbs) for p in op.permissions()}
    assert "secrets" not in {r for r, _ in granted}
    assert granted[("pods", "eviction")] == {"create"}
    # Cluster-wide ConfigMaps are read and patched; backups are created and deleted at home only.
    assert granted[("configmaps", None)] == {"get", "list", "patch"}
    local = {(p.resource, p.subresource): set(p.verbs) for p in op.namespaced_permissions()}
    # The conversion webhook's CA Secret, by name, is the only Secret it may read (see the README).
    assert local == {("configmaps", None): {"create", "patch", "delete"}, ("secrets", None): {"get", "patch"}}
    assert [p.names for p in op.namespaced_permissions() if p.resource == "secrets"] == [("blackadder-webhook-ca",)]
    assert op.finalizers() == [(op.finalizers()[0][0], "blackadder.io/restore")]


# --- restoring on time, waking up on time ----------------------------------------------------------------


def test_restore_after_seconds_restores_expired_and_reports_the_next_expiry() -> None:
    held = deployment("d", 4, labels={marks.AGENT: "a"}, annotations={
        marks.ORIGINAL_REPLICAS: "2", marks.CHAOS_REPLICAS: "4", marks.CHANGED_AT: schedule.rfc3339(NOW)})
    on = spec(cancerMode=True, restoreAfterSeconds=60)
    client = FakeClient(held)
    undone, expiry = asyncio.run(undo_unwanted(client, Settings(), on, "a", NOW + timedelta(seconds=10)))
    assert undone == [] and expiry == NOW + timedelta(seconds=60) and patches(client) == []
    undone, expiry = asyncio.run(undo_unwanted(client, Settings(), on, "a", NOW + timedelta(seconds=61)))
    assert [a.action for a in undone] == ["restored"] and expiry is None
    assert patches(client)[-1]["spec"] == {"replicas": 2}
    # Switching the mode off restores at once, whatever the clock says.
    client = FakeClient(held)
    undone, _ = asyncio.run(undo_unwanted(client, Settings(), spec(cancerMode=False), "a", NOW))
    assert [a.action for a in undone] == ["restored"]


def test_wake_up_for_the_soonest_moment() -> None:
    assert wake_up(NOW, NOW + timedelta(seconds=30), None).requeue_after == 30
    assert wake_up(NOW, NOW + timedelta(seconds=30), NOW + timedelta(seconds=5)).requeue_after == 5
    assert wake_up(NOW, NOW - timedelta(seconds=5)).requeue_after == 0.05


def test_seed_from_spec_else_status_else_new() -> None:
    assert seed_of(spec(seed=5), Clock(seed=9)) == 5
    assert seed_of(spec(), Clock(seed=9)) == 9
    assert isinstance(seed_of(spec(), Clock()), int)


def test_an_eviction_refused_by_a_budget_is_not_retried() -> None:
    body = {"kind": "Status", "code": 429, "reason": "TooManyRequests",
            "message": "Cannot evict pod as it would violate the pod's disruption budget.",
            "details": {"causes": [{"reason": "DisruptionBudget", "message": "needs 2 healthy pods"}]}}
    assert transport._policy_refusal(error_from_status(429, body))
    throttled = {"kind": "Status", "code": 429, "reason": "TooManyRequests", "message": "Too many requests"}
    assert not transport._policy_refusal(error_from_status(429, throttled))


