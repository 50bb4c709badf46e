import pytest

from kubeloop.cache.store import Store, object_key
from kubeloop.controller.diff import diff, essence, under
from kubeloop.helpers.conditions import set_condition


def pod(name, ns="default", owner=None, rv="1"):
    meta = {"name": name, "namespace": ns, "uid": f"uid-{name}", "resourceVersion": rv}
    if owner:
        meta["ownerReferences"] = [{"uid": owner, "controller": True, "kind": "X", "name": "x"}]
    return {"metadata": meta}


def test_store_indexes_follow_updates_and_removals():
    s = Store()
    s.upsert(pod("a", owner="o1"))
    s.upsert(pod("b", ns="other", owner="o1"))
    assert {object_key(o) for o in s.by_index("controller", "o1")} == {"default/a", "other/b"}
    s.upsert(pod("a", owner="o2", rv="2"))  # re-parented
    assert [object_key(o) for o in s.by_index("controller", "o1")] == ["other/b"]
    assert [object_key(o) for o in s.by_index("controller", "o2")] == ["default/a"]
    s.remove("other/b")
    assert s.by_index("controller", "o1") == []
    assert [object_key(o) for o in s.by_index("namespace", "default")] == ["default/a"]


def test_custom_index_added_late_indexes_existing():
    s = Store()
    s.upsert({"metadata": {"name": "n", "labels": {"app": "web"}}})
    s.add_index("app", lambda o: [o["metadata"].get("labels", {}).get("app", "")])
    assert [o["metadata"]["name"] for o in s.by_index("app", "web")] == ["n"]


def test_index_is_built_on_first_read_then_kept_current():
    calls = []

    def by_app(o):
        calls.append(o["metadata"]["name"])
        return [o["metadata"].get("labels", {}).get("app", "")]

    s = Store({"app": by_app})
    s.upsert({"metadata": {"name": "a", "labels": {"app": "web"}}})
    s.upsert({"metadata": {"name": "a", "labels": {"app": "db"}}})  # changed before anyone asked
    s.upsert({"metadata": {"name": "b", "labels": {"app": "web"}}})
    assert calls == []  # nobody read the index: upserts did not compute it
    assert [o["metadata"]["name"] for o in s.by_index("app", "web")] == ["b"]
    s.upsert({"metadata": {"name": "a", "labels": {"app": "web"}}})  # from now on kept current
    s.remove("b")
    assert [o["metadata"]["name"] for o in s.by_index("app", "web")] == ["a"]
    assert s.by_index("app", "db") == []


def test_unknown_index_names_the_known_ones():
    with pytest.raises(KeyError, match="no index 'nope'; known: app, controller, namespace, owner, uid"):
        Store({"app": lambda o: ()}).by_index("nope", "x")


def test_diff_ignores_status_and_bookkeeping():
    old = {"spec": {"image": "a", "env": [1]}, "status": {"x": 1}, "metadata": {"resourceVersion": "1"}}
    new = {"spec": {"image": "b", "env": [1]}, "status": {"x": 2}, "metadata": {"resourceVersion": "2"}}
    changes = diff(essence(old), essence(new))
    assert [(c.op, c.path, c.old, c.new) for c in changes] == [("change", ("spec", "image"), "a", "b")]
    assert under(changes, "spec.image") == changes
    assert under(changes, "spec.env") == []


def test_condition_transition_time_changes_only_with_status(monkeypatch):
    times = iter(["t1", "t2", "t3"])
    monkeypatch.setattr("kubeloop.helpers.conditions.now_rfc3339", lambda: next(times))
    c = set_condition(None, "Ready", True, "Up", observed_generation=1)
    assert c[0]["lastTransitionTime"] == "t1"
    c = set_condition(c, "Ready", True, "StillUp", "msg", observed_generation=2)
    assert c[0]["lastTransitionTime"] == "t1" and c[0]["reason"] == "StillUp"
    assert c[0]["observedGeneration"] == 2
    c = set_condition(c, "Ready", False, "Down")
    assert c[0]["lastTransitionTime"] == "t2" and c[0]["status"] == "False"
