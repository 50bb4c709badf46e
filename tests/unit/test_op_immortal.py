"""The immortal operator's pure logic: pod definition and template hash, backoff, expectations, status."""

from __future__ import annotations

from typing import Any

import pytest

from kubeloop import builtin
from kubeloop.operators.immortal import ImmortalContainer, build_operator, operator, pods, status
from kubeloop.operators.immortal.backoff import Backoff, BackoffPolicy, ImmortalSettings
from kubeloop.operators.immortal.expectations import Expectations
from kubeloop.resources import crd_for

Obj = dict[str, Any]
OWNER: Obj = {"apiVersion": "immortalcontainer.flugel.it/v1alpha1", "kind": "ImmortalContainer",
              "metadata": {"name": "example", "namespace": "ns", "uid": "u-1", "generation": 1,
                           "resourceVersion": "7"},
              "spec": {"image": "nginx:latest"}}


def owner(**spec: Any) -> Obj:
    return {**OWNER, "spec": {**OWNER["spec"], **spec}}


def desired(obj: Obj) -> Obj:
    return pods.desired_pod(ImmortalContainer.from_dict(obj), obj)


def pod(uid: str = "p-1", phase: str = "Running", ready: bool = True, **meta: Any) -> Obj:
    conditions = [{"type": "Ready", "status": "True" if ready else "False",
                   "lastTransitionTime": "2030-01-01T00:00:00Z"}]
    return {"metadata": {"name": "example-immortalpod", "uid": uid,
                         "creationTimestamp": "2030-01-01T00:00:00Z", **meta},
            "status": {"phase": phase, "conditions": conditions}}


# --- the CRD keeps the article's contract ------------------------------------------------------------------


def test_crd_keeps_the_articles_names_and_fields() -> None:
    crd = crd_for(ImmortalContainer)
    assert crd["metadata"]["name"] == "immortalcontainers.immortalcontainer.flugel.it"
    assert crd["spec"]["names"] == {"kind": "ImmortalContainer", "listKind": "ImmortalContainerList",
                                    "plural": "immortalcontainers", "singular": "immortalcontainer"}
    version = crd["spec"]["versions"][0]
    assert (version["name"], crd["spec"]["scope"]) == ("v1alpha1", "Namespaced")
    props = version["schema"]["openAPIV3Schema"]["properties"]
    assert props["spec"]["required"] == ["image"] and props["spec"]["properties"]["image"]["minLength"] == 1
    assert props["status"]["properties"]["currentPod"]["type"] == "string"
    assert props["status"]["properties"]["startTimes"] == {
        "type": "integer", "format": "int64", "description": props["status"]["properties"]["startTimes"][
            "description"]}
    assert [c["name"] for c in version["additionalPrinterColumns"]] == [
        "Image", "Current Pod", "Starts", "Ready", "Age"]


def test_permissions_are_what_the_reconcile_uses() -> None:
    granted: dict[tuple[str, str | None], set[str]] = {}
    for p in operator.permissions():
        granted.setdefault((p.resource, p.subresource), set()).update(p.verbs)
    assert granted[("pods", None)] == {"get", "list", "watch", "create", "patch", "delete"}
    assert granted[("namespaces", None)] == {"list", "watch"}
    assert granted[("immortalcontainers", "status")] == {"patch"}
    assert granted[("immortalcontainers", "finalizers")] == {"update"}


# --- the pod definition ------------------------------------------------------------------------------------


def test_pod_definition_follows_the_article() -> None:
    p = desired(OWNER)
    assert p["metadata"]["name"] == "example-immortalpod" and p["metadata"]["namespace"] == "ns"
    assert p["spec"] == {"restartPolicy": "Always",
                         "containers": [{"name": "immortal", "image": "nginx:latest"}]}
    [ref] = p["metadata"]["ownerReferences"]
    assert ref == {"apiVersion": OWNER["apiVersion"], "kind": "ImmortalContainer", "name": "example",
                   "uid": "u-1", "controller": True, "blockOwnerDeletion": True}
    assert p["metadata"]["labels"][pods.NAME_LABEL] == "example"


def test_template_fields_go_to_the_container_or_the_pod() -> None:
    p = desired(owner(template={"command": ["sleep"], "args": ["1d"], "env": [{"name": "A", "value": "1"}],
                                "resources": {"limits": {"memory": "1Gi"}}, "nodeSelector": {"disk": "ssd"},
                                "tolerations": [{"operator": "Exists"}], "labels": {"app": "x"},
                                "annotations": {"note": "y"}, "terminationGracePeriodSeconds": 5}))
    container = p["spec"]["containers"][0]
    assert container == {"name": "immortal", "image": "nginx:latest", "command": ["sleep"], "args": ["1d"],
                         "env": [{"name": "A", "value": "1"}], "resources": {"limits": {"memory": "1Gi"}}}
    assert p["spec"]["nodeSelector"] == {"disk": "ssd"}
    assert p["spec"]["tolerations"] == [{"operator": "Exists"}]
    assert p["spec"]["terminationGracePeriodSeconds"] == 5 and p["spec"]["restartPolicy"] == "Always"
    assert p["metadata"]["labels"]["app"] == "x" and p["metadata"]["annotations"] == {"note": "y"}


def test_template_hash_tells_versions_apart_and_is_stable() -> None:
    same = [desired(OWNER)["metadata"]["labels"][pods.HASH_LABEL] for _ in range(2)]
    assert same[0] == same[1] and len(same[0]) == 10
    other_image = desired(owner(image="nginx:1.27"))["metadata"]["labels"][pods.HASH_LABEL]
    other_env = desired(owner(template={"env": [{"name": "A", "value": "1"}]}))["metadata"]["labels"][
        pods.HASH_LABEL]
    assert len({same[0], other_image, other_env}) == 3
    # The key order of the manifest does not matter.
    assert pods.template_hash({"a": 1, "b": [1, 2]}) == pods.template_hash({"b": [1, 2], "a": 1})


def test_is_current_by_hash_or_by_image_for_unlabelled_pods() -> None:
    want = desired(OWNER)
    assert pods.is_current(want, want)
    assert not pods.is_current(desired(owner(image="nginx:1.27")), want)
    legacy = {"metadata": {"labels": {}}, "spec": {"containers": [{"name": "x", "image": "nginx:latest"}]}}
    assert pods.is_current(legacy, want)
    legacy["spec"]["containers"][0]["image"] = "busybox"
    assert not pods.is_current(legacy, want)


def test_names_labels_and_pod_states() -> None:
    assert pods.owner_name(pods.pod_name("a-immortalpod")) == "a-immortalpod"
    assert pods.owner_name("unrelated") is None
    long = "x" * 200
    assert len(pods.label_value(long)) <= 63 and pods.label_value(long) != pods.label_value(long + "y")
    assert pods.is_terminal(pod(phase="Failed")) and pods.is_terminal(pod(phase="Succeeded"))
    assert not pods.is_terminal(pod(phase="Running"))
    evicted = pod(phase="Failed")
    evicted["status"]["reason"] = "Evicted"
    assert pods.end_reason(evicted) == "PodEvicted" and pods.end_reason(pod(phase="Failed")) == "PodFailed"
    assert pods.phase(pod(deletionTimestamp="2030-01-01T00:00:00Z")) == "Terminating"
    assert pods.is_ready(pod()) and not pods.is_ready(pod(ready=False))


def test_ownership_kinds() -> None:
    mine = pod(ownerReferences=desired(OWNER)["metadata"]["ownerReferences"])
    assert pods.controlled_by(mine, OWNER)
    orphan = pod(labels={pods.NAME_LABEL: "example"})
    assert pods.is_orphan_of(orphan, OWNER) and not pods.controlled_by(orphan, OWNER)
    assert not pods.is_orphan_of(pod(labels={pods.NAME_LABEL: "other"}), OWNER)
    previous = pod(ownerReferences=[{**mine["metadata"]["ownerReferences"][0], "uid": "u-0"}])
    assert pods.is_from_previous_incarnation(previous, OWNER) and not pods.controlled_by(previous, OWNER)
    foreign = pod(ownerReferences=[{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "example",
                                    "uid": "r", "controller": True}])
    assert not pods.is_from_previous_incarnation(foreign, OWNER) and not pods.is_orphan_of(foreign, OWNER)


# --- backoff -----------------------------------------------------------------------------------------------


def test_backoff_doubles_from_one_second_to_fifteen_minutes() -> None:
    policy = BackoffPolicy()
    assert [policy.delay(n) for n in range(6)] == [0, 1, 2, 4, 8, 16]
    assert policy.delay(11) == 900 and policy.delay(10_000) == 900


def test_backoff_waits_from_the_last_start_and_resets_when_healthy() -> None:
    policy, b = BackoffPolicy(), Backoff()
    assert b.wait(policy, 100.0) == 0  # never started
    b.started(100.0, counts=False)  # the first pod: not a failure
    assert b.wait(policy, 100.0) == 0  # a first recreation is immediate
    b.started(100.0, counts=True)
    assert b.wait(policy, 100.25) == pytest.approx(0.75)
    b.started(101.0, counts=True)
    assert b.wait(policy, 101.0) == 2 and b.wait(policy, 104.0) == 0
    b.healthy()
    assert b.wait(policy, 101.0) == 0


def test_backoff_settings_come_from_the_operator_options() -> None:
    policy = ImmortalSettings(backoff_initial=0.5, backoff_max=10, backoff_reset_after=30).backoff
    assert (policy.initial, policy.cap, policy.stable_after) == (0.5, 10, 30)
    assert policy.delay(20) == 10
    assert operator.settings.backoff == BackoffPolicy()
    for bad in ({"backoff_initial": 0}, {"backoff_max": -1}, {"backoff_reset_after": -1}):
        with pytest.raises(ValueError, match=next(iter(bad))):  # once silently the default: now refused
            ImmortalSettings(**bad)


# --- expectations ------------------------------------------------------------------------------------------


def test_expectations_wait_for_the_created_pod_only() -> None:
    now = [0.0]
    e = Expectations(ttl=30, clock=lambda: now[0])
    assert e.waiting("ns/a") == 0
    e.expect("ns/a", "p-2")
    assert e.waiting("ns/a") == 30
    e.observe("ns/a", "p-1")  # an older pod's event does not count
    now[0] = 10
    assert e.waiting("ns/a") == 20
    e.observe("ns/a", "p-2")
    assert e.waiting("ns/a") == 0
    e.expect("ns/b", "p-3")
    now[0] = 41  # never seen (lost to a relist): give up waiting
    assert e.waiting("ns/b") == 0
    e.expect("ns/gone", "p-4")  # its object was deleted before the pod was seen
    now[0] = 80
    e.expect("ns/c", "p-5")
    assert set(e._pending) == {"ns/c"}  # expired entries do not pile up


# --- one state per operator instance ------------------------------------------------------------------------


def handlers_of(op: Any) -> Any:
    """What an operator's reconcile is a bound method of: the state one instance keeps."""
    (spec,) = op.specs()
    return spec.reconcile.__self__


async def test_two_operators_share_no_expectations() -> None:
    a, b = build_operator(), build_operator()
    mine, theirs = handlers_of(a).expectations, handlers_of(b).expectations
    mine.expect("ns/example", "p-1")
    theirs.expect("ns/example", "p-1")
    pod_watch = next(w for w in b.specs()[0].watches if w.resource is builtin.POD)
    assert pod_watch.mapper(pod(uid="p-1", namespace="ns")) == ["ns/example"]  # b's cache saw the pod
    assert theirs.waiting("ns/example") == 0 and mine.waiting("ns/example") > 0
    for hook in b.startup:
        await hook(None)  # b (re)starts and forgets its own expectations only
    assert mine.waiting("ns/example") > 0


def test_each_operator_reads_its_own_settings() -> None:
    a, b = build_operator(), build_operator()
    b.settings = ImmortalSettings(backoff_initial=1.0, backoff_max=2.0)
    assert handlers_of(a).policy == BackoffPolicy() and handlers_of(b).policy.cap == 2.0
    assert operator.settings.backoff == BackoffPolicy()  # nor the default instance's


# --- status ------------------------------------------------------------------------------------------------


def test_a_new_pod_uid_counts_once() -> None:
    first = status.compute({}, 1, pod("p-1"), status.running(pod("p-1")), "Created")
    assert (first["currentPod"], first["podUID"], first["startTimes"]) == ("example-immortalpod", "p-1", 1)
    assert first["history"] == [{"pod": "example-immortalpod", "uid": "p-1", "reason": "Created",
                                 "time": "2030-01-01T00:00:00Z"}]
    again = status.compute(first, 1, pod("p-1"), status.running(pod("p-1")), "PodDeleted")
    assert status.changes(first, again) == {}  # same pod, same state: nothing to write
    second = status.compute(first, 1, pod("p-2"), status.running(pod("p-2")), "PodDeleted")
    assert second["startTimes"] == 2 and [h["reason"] for h in second["history"]] == ["Created", "PodDeleted"]


def test_history_is_bounded() -> None:
    current: Obj = {}
    for i in range(25):
        current = {**current, **status.compute(current, 1, pod(f"p-{i}"), status.running(pod(f"p-{i}")),
                                               "PodDeleted")}
    assert current["startTimes"] == 25
    assert [h["uid"] for h in current["history"]] == [f"p-{i}" for i in range(15, 25)]


def test_conditions_follow_the_pod_and_failures() -> None:
    def conditions(s: Obj) -> dict[str, tuple[str, str]]:
        return {c["type"]: (c["status"], c["reason"]) for c in s["conditions"]}

    ready = status.compute({}, 3, pod(), status.running(pod()))
    assert conditions(ready) == {"Available": ("True", "PodReady"), "Progressing": ("True", "PodAvailable")}
    assert all(c["observedGeneration"] == 3 for c in ready["conditions"]) and ready["phase"] == "Running"
    starting = status.compute({}, 1, pod(ready=False, phase="Pending"),
                              status.running(pod(ready=False, phase="Pending")))
    assert conditions(starting)["Available"] == ("False", "PodNotReady")
    conflict = status.compute(ready, 3, None,
                              status.no_pod("NameConflict", "taken", ("NameConflict", "taken")))
    assert conditions(conflict) == {"Available": ("False", "NoPod"), "Progressing": ("False", "NameConflict"),
                                    "ReplicaFailure": ("True", "NameConflict")}
    assert conflict["phase"] is None and "podUID" not in conflict  # the last counted pod is kept
    cleared = status.compute({**ready, **conflict}, 3, pod(), status.running(pod()))
    assert "ReplicaFailure" not in conditions(cleared)


def test_unchanged_conditions_keep_their_transition_time() -> None:
    before = status.compute({}, 1, pod(), status.running(pod()))
    stamp = before["conditions"][0]["lastTransitionTime"] = "2000-01-01T00:00:00Z"
    after = status.compute(before, 1, pod(), status.running(pod()))
    assert after["conditions"][0]["lastTransitionTime"] == stamp
    assert status.changes(before, after) == {}
