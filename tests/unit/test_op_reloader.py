"""The reloader's pure logic: reference discovery, hashing, annotation parsing, selectors, pacing,
strategies and settings."""

from __future__ import annotations

import base64

import pytest
from click.testing import CliRunner

from kubeloop.cache import Event
from kubeloop.helpers.selectors import matches, parse
from kubeloop.operators.reloader import build_operator
from kubeloop.operators.reloader.compat import RENAMES, UNSUPPORTED
from kubeloop.operators.reloader.fingerprint import (
    ABSENT,
    DIGESTS,
    Fingerprint,
    decode_sources,
    object_hash,
    without_data,
)
from kubeloop.operators.reloader.pacing import Pacing, TokenBucket, settle, settled
from kubeloop.operators.reloader.policy import policy_of, source_ignored, source_matches
from kubeloop.operators.reloader.reconciler import describe, source_changed, source_index
from kubeloop.operators.reloader.references import Ref, pod_template_refs
from kubeloop.operators.reloader.settings import ReloaderSettings
from kubeloop.operators.reloader.workloads import (
    CRONJOBS,
    DEPLOYMENTS,
    already_applied,
    env_var_name,
    template_change,
)

TEMPLATE = {"spec": {
    "initContainers": [{"name": "init", "env": [
        {"name": "TOKEN", "valueFrom": {"secretKeyRef": {"name": "init-secret", "key": "token"}}}]}],
    "containers": [{
        "name": "nginx",
        "env": [{"name": "MODE", "valueFrom": {"configMapKeyRef": {"name": "settings", "key": "mode"}}},
                {"name": "PLAIN", "value": "x"},
                {"name": "OPT", "valueFrom": {"configMapKeyRef": {
                    "name": "maybe", "key": "k", "optional": True}}}],
        "envFrom": [{"configMapRef": {"name": "env-all"}},
                    {"secretRef": {"name": "creds", "optional": True}}],
        "volumeMounts": [{"name": "conf", "mountPath": "/etc/nginx"}, {"name": "bundle", "mountPath": "/b"}],
    }, {"name": "sidecar", "volumeMounts": [{"name": "bundle", "mountPath": "/b"}]}],
    "volumes": [
        {"name": "conf", "configMap": {"name": "nginx-conf", "items": [{"key": "nginx.conf", "path": "n"}]}},
        {"name": "tls", "secret": {"secretName": "tls"}},
        {"name": "bundle", "projected": {"sources": [
            {"configMap": {"name": "settings"}},
            {"secret": {"name": "proj-secret", "items": [{"key": "a", "path": "a"}]}},
            {"serviceAccountToken": {"path": "token"}}]}},
        {"name": "scratch", "emptyDir": {}}],
}}


def refs() -> dict[str, Ref]:
    return {r.id: r for r in pod_template_refs(TEMPLATE)}


def test_references_cover_env_envfrom_volumes_projected_and_init_containers() -> None:
    found = refs()
    assert set(found) == {"Secret/init-secret", "ConfigMap/settings", "ConfigMap/maybe", "ConfigMap/env-all",
                          "Secret/creds", "ConfigMap/nginx-conf", "Secret/tls", "Secret/proj-secret"}
    assert found["Secret/init-secret"].keys == {"token"}
    assert found["Secret/init-secret"].containers == {"init"}
    # env key "mode" + the whole object through the projected volume: all keys
    assert found["ConfigMap/settings"].keys is None
    assert found["ConfigMap/settings"].containers == {"nginx", "sidecar"}
    assert found["ConfigMap/nginx-conf"].keys == {"nginx.conf"}
    assert found["Secret/proj-secret"].keys == {"a"}
    assert found["ConfigMap/maybe"].optional and found["Secret/creds"].optional
    assert not found["ConfigMap/settings"].optional and not found["Secret/tls"].optional
    assert found["Secret/tls"].containers == frozenset()  # mounted by nobody


def test_a_required_use_beats_an_optional_one() -> None:
    template = {"spec": {"containers": [{
        "name": "c", "envFrom": [{"configMapRef": {"name": "x", "optional": True}}],
        "env": [{"name": "A", "valueFrom": {"configMapKeyRef": {"name": "x", "key": "a"}}}]}]}}
    (ref,) = pod_template_refs(template)
    assert ref.keys is None and not ref.optional


def cm(data: dict[str, str] | None = None, binary: dict[str, str] | None = None, **meta: object) -> dict:
    obj: dict = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "n", **meta}}
    if data is not None:
        obj["data"] = data
    if binary is not None:
        obj["binaryData"] = binary
    return obj


def test_hash_covers_data_and_binary_data_only() -> None:
    base = object_hash("ConfigMap", "c", cm({"a": "1"}))
    assert base == object_hash("ConfigMap", "c", cm({"a": "1"}, labels={"x": "y"}, resourceVersion="9"))
    assert base != object_hash("ConfigMap", "c", cm({"a": "2"}))
    assert base != object_hash("ConfigMap", "c", cm({"a": "1"}, {"b": "AA=="}))
    assert base != object_hash("ConfigMap", "c", cm({"a": "1", "b": "2"}))
    # data vs binaryData under the same key are different contents
    as_data, as_binary = cm({"k": "AA=="}), cm(binary={"k": "AA=="})
    assert object_hash("ConfigMap", "c", as_data) != object_hash("ConfigMap", "c", as_binary)
    assert object_hash("ConfigMap", "c", None) == ABSENT != object_hash("ConfigMap", "c", cm({}))
    assert object_hash("ConfigMap", "c", cm({})) == object_hash("ConfigMap", "c", cm())


def test_hash_of_only_the_used_keys() -> None:
    one = object_hash("ConfigMap", "c", cm({"used": "1", "other": "1"}), ["used"])
    assert one == object_hash("ConfigMap", "c", cm({"used": "1", "other": "2"}), ["used"])
    assert one != object_hash("ConfigMap", "c", cm({"used": "2", "other": "1"}), ["used"])
    assert one != object_hash("ConfigMap", "c", cm({"other": "1"}), ["used"])  # the key went away


def test_transform_keeps_no_secret_value_and_hashes_the_same() -> None:
    secret = {"apiVersion": "v1", "kind": "Secret", "metadata": {
        "name": "s", "namespace": "n", "managedFields": [{"manager": "x"}]},
        "data": {"password": base64.b64encode(b"hunter2").decode()}}
    stripped = without_data(secret)
    assert "data" not in stripped
    assert "hunter2" not in repr(stripped) and secret["data"]["password"] not in repr(stripped)
    assert set(stripped[DIGESTS]["data"]) == {"password"}
    assert object_hash("Secret", "s", stripped) == object_hash("Secret", "s", secret)
    assert without_data(stripped)[DIGESTS] == stripped[DIGESTS]  # idempotent


def test_fingerprint_changes_and_membership() -> None:
    then = Fingerprint({"ConfigMap/a": "1" * 64, "Secret/b": "2" * 64})
    recorded = decode_sources(then.encode())
    assert recorded == {"ConfigMap/a": "1" * 16, "Secret/b": "2" * 16}
    assert Fingerprint(dict(then.sources)).hash == then.hash
    changed = Fingerprint({"ConfigMap/a": "3" * 64, "Secret/b": "2" * 64})
    assert changed.changed_since(recorded) == ["ConfigMap/a"]
    # an object joining or leaving the set is not a content change
    joined = Fingerprint({"ConfigMap/a": "1" * 64, "Secret/b": "2" * 64, "ConfigMap/c": "4" * 64})
    assert joined.hash != then.hash and joined.changed_since(recorded) == []
    assert Fingerprint({"ConfigMap/a": "1" * 64}).changed_since(recorded) == []
    assert Fingerprint({"ConfigMap/a": ABSENT}).changed_since(recorded) == ["ConfigMap/a"]
    assert then.changed_since(None) == ["ConfigMap/a", "Secret/b"]
    assert decode_sources(None) is None and decode_sources("") == {}


def test_policy_reads_reloader_annotations_unchanged() -> None:
    assert not policy_of({}).tracks_anything
    assert policy_of({"reloader.stakater.com/auto": "true"}).auto == {"ConfigMap", "Secret"}
    assert policy_of({"configmap.reloader.stakater.com/auto": "true"}).auto == {"ConfigMap"}
    assert policy_of({"secret.reloader.stakater.com/auto": "True"}).auto == {"Secret"}
    p = policy_of({"configmap.reloader.stakater.com/reload": "a, b,,",
                   "secret.reloader.stakater.com/reload": "s"})
    assert p.named == {"ConfigMap": ("a", "b"), "Secret": ("s",)} and p.tracks_anything and not p.auto
    p = policy_of({"reloader.stakater.com/auto": "true",
                   "configmaps.exclude.reloader.stakater.com/reload": "x,y-.*",
                   "secrets.exclude.reloader.stakater.com/reload": "z"})
    assert p.is_excluded("ConfigMap", "x") and p.is_excluded("ConfigMap", "y-1")
    assert not p.is_excluded("ConfigMap", "z")
    assert p.is_excluded("Secret", "z") and not p.is_excluded("Secret", "x")
    assert policy_of({"reloader.stakater.com/search": "true"}).search
    ignored = policy_of({"reloader.stakater.com/auto": "true", "reloader.stakater.com/ignore": "true"})
    assert ignored.tracks_anything is False
    assert source_ignored({"reloader.stakater.com/ignore": "true"}) and not source_ignored({})
    assert source_matches({"reloader.stakater.com/match": "true"}) and not source_matches({"x": "true"})


def test_policy_kubeloop_prefix_and_opt_out_mode() -> None:
    p = policy_of({"reloader.kubeloop.dev/auto": "true", "configmap.reloader.kubeloop.dev/reload": "k",
                   "reloader.kubeloop.dev/strategy": "env-vars"})
    assert p.auto == {"ConfigMap", "Secret"} and p.named["ConfigMap"] == ("k",) and p.strategy == "env-vars"
    assert source_ignored({"reloader.kubeloop.dev/ignore": "true"})
    assert policy_of({}, auto_all=True).auto == {"ConfigMap", "Secret"}
    assert policy_of({"reloader.stakater.com/auto": "false"}, auto_all=True).auto == frozenset()
    assert policy_of({"reloader.stakater.com/auto": "false", "configmap.reloader.stakater.com/auto": "true"},
                     auto_all=True).auto == {"ConfigMap"}


def test_index_names_referenced_and_annotated_objects() -> None:
    deployment = {"metadata": {"name": "d", "namespace": "n", "annotations": {
        "configmap.reloader.stakater.com/reload": "extra,app-.*"}}, "spec": {"template": TEMPLATE}}
    keys = source_index(DEPLOYMENTS)(deployment)
    assert {"ConfigMap/n/nginx-conf", "Secret/n/init-secret", "Secret/n/proj-secret"} <= set(keys)
    assert "ConfigMap/n/extra" in keys and "ConfigMap/n/*" in keys
    cron = {"metadata": {"name": "c", "namespace": "n"},
            "spec": {"jobTemplate": {"spec": {"template": TEMPLATE}}}}
    assert "ConfigMap/n/nginx-conf" in source_index(CRONJOBS)(cron)


def test_source_predicate_ignores_metadata_only_changes() -> None:
    old = cm({"a": "1"})
    assert not source_changed(Event("modified", cm({"a": "1"}, labels={"x": "y"}), old))
    assert source_changed(Event("modified", cm({"a": "2"}), old))
    matched = cm({"a": "1"}, annotations={"reloader.stakater.com/match": "true"})
    assert source_changed(Event("modified", matched, old))
    assert source_changed(Event("added", old)) and source_changed(Event("deleted", old, old))
    # transformed and raw objects compare by the same digests
    assert not source_changed(Event("modified", without_data(cm({"a": "1"})), old))


@pytest.mark.parametrize(("selector", "labels", "expected"), [
    ("", {}, True), ("a=b", {"a": "b"}, True), ("a==b", {"a": "c"}, False), ("a!=b", {}, True),
    ("a in (x, y),b", {"a": "y", "b": ""}, True), ("a notin (x)", {"a": "x"}, False),
    ("!a", {"a": "1"}, False),
    ("env=prod,tier in (web)", {"env": "prod", "tier": "db"}, False),
])
def test_label_selectors(selector: str, labels: dict[str, str], expected: bool) -> None:
    assert matches(parse(selector), labels) is expected


def test_bad_selector_is_rejected() -> None:
    with pytest.raises(ValueError):
        parse("a in (x")
    with pytest.raises(ValueError):
        ReloaderSettings(namespace_selector="!a=b")


def test_debounce_settles_a_burst_into_one() -> None:
    memory = Pacing()
    assert settle(memory, "h1", 2.0, 100.0) == 2.0
    assert settle(memory, "h1", 2.0, 101.0) == 1.0
    assert settle(memory, "h2", 2.0, 101.5) == 2.0  # another change restarts the window
    assert settle(memory, "h2", 2.0, 103.5) == 0.0
    settled(memory)
    assert settle(memory, "h3", 2.0, 200.0) == 2.0


def test_debounce_is_capped_for_objects_that_never_stop_changing() -> None:
    memory = Pacing()
    for i in range(25):
        wait = settle(memory, f"h{i}", 1.0, 100.0 + i)
    assert wait == 0.0  # 10 windows after the first change


def test_token_bucket() -> None:
    now = [0.0]
    bucket = TokenBucket(2.0, 3, clock=lambda: now[0])
    assert [bucket.take() for _ in range(3)] == [0.0, 0.0, 0.0]
    assert bucket.take() == pytest.approx(0.5)
    now[0] = 0.5
    assert bucket.take() == 0.0
    assert TokenBucket(0, 1).take() == 0.0
    bucket.give_back()  # a conflict: the token bought nothing
    assert bucket.take() == 0.0


def test_strategies() -> None:
    settings_ref = Ref("ConfigMap", "nginx.conf-v2", containers=frozenset({"nginx"}))
    init_ref = Ref("Secret", "init-secret", containers=frozenset({"init"}))
    assert env_var_name(settings_ref) == "STAKATER_NGINX_CONF_V2_CONFIGMAP"
    assert template_change("annotations", "h", {}, TEMPLATE) == {
        "metadata": {"annotations": {"reloader.kubeloop.dev/config-hash": "h"}}}
    stamp = template_change("restarted-at", "h", {}, TEMPLATE)["metadata"]["annotations"]
    assert stamp["kubectl.kubernetes.io/restartedAt"].endswith("Z")
    env = template_change("env-vars", "h", {settings_ref: "abc", init_ref: "def",
                                            Ref("Secret", "named"): "ghi"}, TEMPLATE)
    assert env == {"spec": {
        "containers": [{"name": "nginx", "env": [{"name": "STAKATER_NGINX_CONF_V2_CONFIGMAP", "value": "abc"},
                                                 {"name": "STAKATER_NAMED_SECRET", "value": "ghi"}]}],
        "initContainers": [{"name": "init", "env": [
            {"name": "STAKATER_INIT_SECRET_SECRET", "value": "def"}]}]}}
    with pytest.raises(ValueError):
        template_change("bogus", "h", {}, TEMPLATE)


def test_already_applied() -> None:
    change = template_change("annotations", "h", {}, TEMPLATE)
    assert not already_applied(TEMPLATE, change)
    assert already_applied({**TEMPLATE, "metadata": {"annotations": {
        "reloader.kubeloop.dev/config-hash": "h"}}}, change)
    env = {"spec": {"containers": [{"name": "nginx", "env": [
        {"name": "STAKATER_X_CONFIGMAP", "value": "1"}]}]}}
    template = {"spec": {"containers": [{"name": "nginx", "image": "i", "env": [
        {"name": "A", "value": "a"}, {"name": "STAKATER_X_CONFIGMAP", "value": "1"}]}]}}
    assert already_applied(template, env)
    assert not already_applied(template, {"spec": {"containers": [{"name": "nginx", "env": [
        {"name": "STAKATER_X_CONFIGMAP", "value": "2"}]}]}})


def test_nesting_the_patch_per_kind() -> None:
    assert DEPLOYMENTS.nest({"x": 1}) == {"spec": {"template": {"x": 1}}}
    assert CRONJOBS.nest({"x": 1}) == {"spec": {"jobTemplate": {"spec": {"template": {"x": 1}}}}}


def test_describe_names_objects_and_hash_prefixes_only() -> None:
    text = describe({Ref("Secret", "db"): "abcdef0123456789" * 4, Ref("ConfigMap", "gone"): ABSENT},
                    {"Secret/db": "1234567890abcdef", "ConfigMap/gone": "fedcba9876543210"})
    assert text == "ConfigMap gone deleted (fedcba98 → absent), Secret db changed (12345678 → abcdef01)"


def test_settings_validate_and_filter_controllers() -> None:
    with pytest.raises(ValueError):
        ReloaderSettings(reload_strategy="yolo")
    with pytest.raises(ValueError):
        ReloaderSettings(ignored_workload_types="deployments,pods")
    op = build_operator()
    # CronJobs (without --reload-cronjobs): only watched for the Warning of unreloaded.py; Jobs are
    # reloaded (recreated, as Reloader does), their copy created on_deleted if it could not be at once.
    assert [c.name for c in op.specs()] == ["reloader-deployments", "reloader-statefulsets",
                                            "reloader-daemonsets", "reloader-cronjobs", "reloader-jobs"]
    cronjobs, jobs = op.specs()[3:]
    assert (cronjobs.reconcile.__name__, jobs.reconcile.__name__) == ("warn_cronjobs", "reconcile_jobs")
    assert not cronjobs.watches and [w.resource.kind for w in jobs.watches] == ["ConfigMap", "Secret"]
    assert jobs.on_deleted is not None and cronjobs.on_deleted is None
    op.settings = ReloaderSettings(ignored_workload_types="cronjobs,jobs")
    assert [c.name for c in op.specs()] == ["reloader-deployments", "reloader-statefulsets",
                                            "reloader-daemonsets"]
    op.settings = ReloaderSettings(reload_cronjobs=True, ignored_workload_types="daemonsets,jobs",
                                   ignore_secrets=True)
    controllers = op.specs()
    assert [c.name for c in controllers] == ["reloader-deployments", "reloader-statefulsets",
                                             "reloader-cronjobs"]
    assert all([w.resource.kind for w in c.watches] == ["ConfigMap"] for c in controllers)
    op.settings = ReloaderSettings(reload_cronjobs=True, ignored_workload_types="daemonsets", ignore_secrets=True,
                                   namespace_selector="env=prod")
    watches = op.specs()[0].watches
    assert [(w.resource.kind, w.metadata_only) for w in watches] == [("ConfigMap", False),
                                                                     ("Namespace", True)]


def test_generated_rbac_is_least_privilege() -> None:
    rules = {(p.group, p.resource, p.subresource): set() for p in build_operator().permissions()}
    for p in build_operator().permissions():
        rules[(p.group, p.resource, p.subresource)] |= set(p.verbs)
    assert rules == {("apps", "deployments", None): {"list", "watch", "patch"},
                     ("apps", "statefulsets", None): {"list", "watch", "patch"},
                     ("apps", "daemonsets", None): {"list", "watch", "patch"},
                     ("batch", "cronjobs", None): {"list", "watch", "patch"},
                     ("batch", "jobs", None): {"list", "watch", "patch", "delete", "create"},
                     ("", "configmaps", None): {"list", "watch"}, ("", "secrets", None): {"list", "watch"},
                     ("", "namespaces", None): {"list", "watch"}}


def test_every_setting_is_a_flag_and_an_env_var(monkeypatch: pytest.MonkeyPatch) -> None:
    import kubeloop.cli.runner as runner
    from kubeloop.cli.run import build_command

    seen: dict = {}

    async def fake_run(op, options, target=None):  # noqa: ANN001, ANN202 - stands in for the real runner
        seen["settings"] = op.settings
        return 0

    monkeypatch.setattr(runner, "run_operator", fake_run)
    op = build_operator()
    result = CliRunner().invoke(build_command(op), ["--dry-run", "--reload-strategy", "env-vars",
                                                    "--debounce-seconds", "0.5"],
                                env={"KUBELOOP_RELOAD_CRONJOBS": "true",
                                     "KUBELOOP_NAMESPACES_TO_IGNORE": "a,b"})
    assert result.exit_code == 0, result.output
    settings = seen["settings"]
    assert settings.dry_run and settings.reload_cronjobs and settings.reload_strategy == "env-vars"
    assert settings.debounce_seconds == 0.5 and settings.ignored_namespaces == {"a", "b"}
    fields = set(ReloaderSettings.model_fields)
    assert {f.replace("-", "_") for f in [*UNSUPPORTED, *RENAMES]} <= fields  # Reloader's flags: each a field
    assert fields <= {p.name for p in build_command(op).params}  # and each field a flag


# --- regular expressions a tenant writes (reload/exclude annotations) ---------------------------------


@pytest.mark.parametrize("pattern", ["config-.*", ".*-secret", "app-.*-config", "(foo|bar)-.*", "(ab)*",
                                     "(a*)?b", "[a-z]+-v[0-9]?", "(one|two|three|four)-(a|b)-.*",
                                     # backtracking engines take seconds to hours on these; RE2 is linear
                                     "(a+)+b", "(a|aa)+b", "(.*a){8}", "[a-z]*[a-z]*[a-z]*[0-9]",
                                     ".*?.*?(?:a|aa)(?:a|aa)(?:a|aa)(?:a|aa)q0b"])
def test_name_patterns_are_used_when_re2_accepts_them(pattern: str) -> None:
    from kubeloop.operators.reloader.policy import pattern_problem
    assert pattern_problem(pattern) is None


@pytest.mark.parametrize(("pattern", "problem"), [
    (r"(a)\1", "RE2"), ("(?=a).*", "RE2"), ("foo(", "RE2"), ("a{1001}", "RE2"),
    ("x|" * 200, "longer than"),
])
def test_patterns_re2_refuses_match_nothing(pattern: str, problem: str) -> None:
    """Backreferences and lookarounds are not RE2's (nor Go's, which Reloader uses): refused, reported,
    they match nothing."""
    from kubeloop.operators.reloader.policy import matches_any, pattern_problem
    assert problem in (pattern_problem(pattern) or "")
    assert not matches_any("a" * 253, (pattern,))


def test_a_list_is_one_compiled_re2_matcher_cached_by_content() -> None:
    """The catastrophic expression of a backtracking engine against 150 names of 250 characters: one
    matcher per list (built once, RE2), whose matching is linear. Timing printed, not asserted."""
    import time

    import re2

    from kubeloop.operators.reloader.policy import MAX_PATTERNS, name_matcher
    evil = ".*?.*?(?:a|aa)(?:a|aa)(?:a|aa)(?:a|aa)q0b"
    patterns = tuple([evil] + [f"{evil[:-3]}q{i}b" for i in range(1, MAX_PATTERNS)])
    names = [f"{'a' * 246}{i:04d}" for i in range(150)]
    name_matcher.cache_clear()
    started = time.perf_counter()
    matched = [n for n in names if name_matcher(patterns)(n)]
    elapsed = time.perf_counter() - started
    info = name_matcher.cache_info()
    assert (info.misses, info.hits) == (1, len(names) - 1)  # compiled once for the whole list
    assert isinstance(name_matcher(patterns).regex, re2._Regexp)
    assert matched == [] and name_matcher(patterns)("a" * 20 + "q0b") and name_matcher(("x", evil))("x")
    print(f"\n{MAX_PATTERNS} expressions x {len(names)} names of 250 characters: {elapsed * 1000:.1f} ms")


def test_at_most_sixteen_regular_expressions_per_workload_are_used() -> None:
    """Each is matched against every object name of the namespace: their number bounds the work."""
    from kubeloop.operators.reloader.policy import MAX_PATTERNS, policy_of
    patterns = [f"p{i}-.*" for i in range(20)]
    policy = policy_of({"configmap.reloader.stakater.com/reload": ",".join(["plain", *patterns[:10]]),
                        "secrets.exclude.reloader.stakater.com/reload": ",".join(patterns[10:])})
    assert policy.named["ConfigMap"] == ("plain", *patterns[:10])  # plain names are not counted
    assert policy.excluded["Secret"] == tuple(patterns[10:MAX_PATTERNS])
    assert policy.dropped == tuple(patterns[MAX_PATTERNS:])
    assert not policy.is_excluded("Secret", "p19-x") and policy.is_excluded("Secret", "p15-x")


def test_the_namespace_budget_bounds_distinct_expressions_across_workloads() -> None:
    """Many workloads cannot multiply the matching work: distinct expressions are counted per namespace,
    a shared one once; a deleted workload gives its share back."""
    from kubeloop.operators.reloader.budget import PatternBudget
    budget = PatternBudget(limit=4)
    assert budget.admit("a", "w1", frozenset({"p1-.*", "p2-.*", "p3-.*"})) == {"p1-.*", "p2-.*", "p3-.*"}
    assert budget.admit("a", "w2", frozenset({"p1-.*", "p4-.*", "p5-.*"})) == {"p1-.*", "p4-.*"}
    assert budget.admit("b", "w3", frozenset({"p5-.*"})) == {"p5-.*"}  # another namespace: its own budget
    assert budget.admit("a", "w2", frozenset({"p1-.*", "p4-.*", "p5-.*"})) == {"p1-.*", "p4-.*"}  # stable
    gone = {"w1"}
    assert budget.admit("a", "w4", frozenset({"p6-.*"}), exists=lambda k: k not in gone) == {"p6-.*"}
    assert set(budget.granted["a"]) == {"w2", "w4"}
