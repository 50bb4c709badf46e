"""copyrator's pure logic: desired-set computation, hashing, pattern matching, conflict decisions, the
CRD it generates and the settings of ``kubeloop run copyrator``."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

import pytest
from click.testing import CliRunner

from kubeloop import builtin
from kubeloop.cache import Cache
from kubeloop.operators.copyrator import CopyratorRule, build_operator, operator
from kubeloop.operators.copyrator.boundary import consents_to
from kubeloop.operators.copyrator.plan import (
    CONSENT_ANNOTATION,
    HASH_ANNOTATION,
    RULE_ANNOTATION,
    RULE_LABEL,
    TAKEOVER_ANNOTATION,
    Boundary,
    build_copy,
    content_hash,
    decide,
    label_value,
    matches_any,
    matches_selector,
    plan,
    released,
    target_namespaces,
)
from kubeloop.operators.copyrator.settings import CopyratorSettings
from kubeloop.operators.copyrator.world import World
from kubeloop.resources import crd_for
from kubeloop.testing.fakeclient import FakeClient


def rule(**fields: Any) -> CopyratorRule:
    body = {"apiVersion": "flant.com/v1", "kind": "CopyratorRule",
            "metadata": {"name": "main-rule", "namespace": "default", "generation": 1, "uid": "r-1"},
            "ruleType": "configmap", "selector": {"copyrator": "true"}, "namespace": "default"}
    return CopyratorRule.from_dict({**body, **fields})


def ns(name: str, labels: dict[str, str] | None = None, phase: str = "Active") -> dict[str, Any]:
    return {"kind": "Namespace", "metadata": {"name": name, "labels": labels or {}},
            "status": {"phase": phase}}


def cm(name: str, namespace: str = "default", data: dict[str, str] | None = None,
       labels: dict[str, str] | None = None, **extra: Any) -> dict[str, Any]:
    meta = {"name": name, "namespace": namespace, "uid": f"uid-{namespace}-{name}", "resourceVersion": "1",
            "labels": {"copyrator": "true"} if labels is None else labels}
    meta.update(extra.pop("metadata", {}))
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": data or {"k": "v"}, **extra}


def secret(name: str, consent: str | None = "true", **extra: Any) -> dict[str, Any]:
    obj = cm(name, **extra)
    obj["kind"], obj["type"] = "Secret", extra.get("type", "Opaque")
    if consent is not None:
        obj["metadata"]["annotations"] = {CONSENT_ANNOTATION: consent}
    return obj


# --- the article's rule and the CRD ---------------------------------------------------------------


def test_article_rule_parses_with_a_string_or_a_list_of_namespaces() -> None:
    assert rule().source_namespaces == ["default"] and rule().problems() == []
    assert rule(namespace=["b", "a", "b"]).source_namespaces == ["b", "a"]
    for bad in ([], [1], {"a": 1}, ""):
        assert rule(namespace=bad).problems(), bad
    assert rule().key == "default/main-rule" and rule(ruleType="secret").copy_kind == "Secret"


def test_crd_keeps_the_articles_names() -> None:
    crd = crd_for(CopyratorRule)
    spec = crd["spec"]
    assert crd["metadata"]["name"] == "copyrators.flant.com" and spec["scope"] == "Namespaced"
    assert spec["names"] == {"kind": "CopyratorRule", "listKind": "CopyratorRuleList", "plural": "copyrators",
                             "singular": "copyrator", "shortNames": ["copyr"]}
    version = spec["versions"][0]
    props = version["schema"]["openAPIV3Schema"]["properties"]
    assert version["name"] == "v1" and props["ruleType"]["enum"] == ["configmap", "secret"]
    assert props["namespace"]["x-kubernetes-preserve-unknown-fields"] is True and "type" not in props["namespace"]
    assert "allow-copy" in props["namespace"]["description"]
    assert "allow-takeover" in props["conflictPolicy"]["description"]
    assert props["conflictPolicy"]["default"] == "Skip" and props["copyLabels"]["default"] == ["*"]
    assert version["subresources"] == {"status": {}}
    assert "Ready" in {c["name"] for c in version["additionalPrinterColumns"]}


# --- matching -------------------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "patterns", "expected"), [
    ("kube-system", ["kube-*"], True), ("team-a", ["team-?"], True), ("team-ab", ["team-?"], False),
    ("prod", ["prod"], True), ("production", ["prod"], False), ("Prod", ["prod"], False), ("x", [], False),
])
def test_patterns(name: str, patterns: list[str], expected: bool) -> None:
    assert matches_any(name, patterns) is expected


def test_label_selector_terms() -> None:
    sel = rule(namespaceSelector={"matchLabels": {"env": "prod"}, "matchExpressions": [
        {"key": "tier", "operator": "In", "values": ["a", "b"]},
        {"key": "legacy", "operator": "DoesNotExist"}]}).namespaceSelector
    assert matches_selector({"env": "prod", "tier": "a"}, sel)
    assert not matches_selector({"env": "prod", "tier": "c"}, sel)
    assert not matches_selector({"env": "prod", "tier": "a", "legacy": ""}, sel)
    assert not matches_selector({"tier": "a"}, sel)
    assert matches_selector({}, None)


def test_target_namespaces_skip_terminating_excluded_and_unselected() -> None:
    r = rule(excludedNamespaces=["kube-*", "skip-me"], namespaceSelector={"matchExpressions": [
        {"key": "copy", "operator": "NotIn", "values": ["no"]}]})
    namespaces = [ns("a"), ns("b", phase="Terminating"), ns("kube-system"), ns("skip-me"),
                  ns("c", {"copy": "no"}), ns("d", {"copy": "yes"})]
    assert target_namespaces(r, namespaces) == ["a", "d"]


def test_long_names_become_valid_label_values() -> None:
    assert label_value("main-rule") == "main-rule"
    long = label_value("x" * 100)
    assert len(long) <= 63 and long == label_value("x" * 100) and long != label_value("y" * 100)
    assert label_value("-starts-with-dash") != "-starts-with-dash"


# --- copies and hashing ---------------------------------------------------------------------------


def test_copy_carries_content_allowed_metadata_and_marks_only() -> None:
    source = cm("app", data={"a": "1"}, labels={"copyrator": "true", "app.kubernetes.io/managed-by": "Helm",
                                                  "team": "x"},
                binaryData={"bin": "AAE="}, immutable=True,
                metadata={"annotations": {"kubectl.kubernetes.io/last-applied-configuration": "{}",
                                          "meta.helm.sh/release-name": "r", "note": "keep", "other": "drop",
                                          "reflector.v1.k8s.emberstack.com/reflection-auto-enabled": "true",
                                          "replicator.v1.mittwald.de/replicate-to": "kube-system"},
                          "ownerReferences": [{"kind": "X", "name": "x", "uid": "u", "controller": True}]})
    copy = build_copy(rule(copyAnnotations=["note", "kubectl.kubernetes.io/*", "meta.helm.sh/*", "re*"]), source,
                      "team-a", "app")
    meta = copy["metadata"]
    assert (copy["data"], copy["binaryData"], copy["immutable"]) == ({"a": "1"}, {"bin": "AAE="}, True)
    assert meta["namespace"] == "team-a" and "ownerReferences" not in meta
    assert {k: v for k, v in meta["labels"].items() if not k.startswith("copyrator.flant.com/")} == {
        "copyrator": "true", "team": "x"}
    assert meta["labels"][RULE_LABEL] == "main-rule"
    assert {k for k in meta["annotations"] if not k.startswith("copyrator.flant.com/")} == {"note"}
    assert meta["annotations"][RULE_ANNOTATION] == "default/main-rule"
    assert meta["annotations"][HASH_ANNOTATION] == content_hash(copy)
    assert "type" not in copy  # ConfigMaps have none


def test_hash_sees_data_and_metadata_but_not_itself() -> None:
    base = build_copy(rule(), cm("app"), "t", "app")
    assert content_hash(base) == base["metadata"]["annotations"][HASH_ANNOTATION]
    for change in ({"data": {"k": "other"}}, {"data": {"k": "v", "new": "1"}}, {"immutable": True}):
        assert content_hash({**base, **change}) != content_hash(base)
    relabelled = {**base, "metadata": {**base["metadata"], "labels": {}}}
    assert content_hash(relabelled) != content_hash(base)
    annotations = {**base["metadata"]["annotations"], HASH_ANNOTATION: "x"}
    rehashed = {**base, "metadata": {**base["metadata"], "annotations": annotations}}
    assert content_hash(rehashed) == content_hash(base)
    assert content_hash(build_copy(rule(), cm("app"), "t", "app")) == content_hash(base)  # stable


# --- the desired set ------------------------------------------------------------------------------


def test_plan_copies_every_source_into_every_other_namespace() -> None:
    r = rule(namespace=["default", "extra"])
    # extra/e is outside the rule's namespace: a source only with its owner's consent (allow-copy).
    shared = cm("e", namespace="extra", metadata={"annotations": {CONSENT_ANNOTATION: "true"}})
    sources = [cm("a"), cm("b"), cm("c", labels={"other": "x"}), cm("d", namespace="elsewhere"),
               cm("kube-root-ca.crt"), shared]
    p = plan(r, sources, [ns("default"), ns("extra"), ns("t1"), ns("t2")])
    assert sorted(p.copies) == [("default", "e"), ("extra", "a"), ("extra", "b"),
                                ("t1", "a"), ("t1", "b"), ("t1", "e"), ("t2", "a"), ("t2", "b"), ("t2", "e")]
    assert p.skipped == [("default/kube-root-ca.crt", "ProtectedConfigMap")]
    assert p.sources == [
        "default/a", "default/b", "default/kube-root-ca.crt", "extra/e"]


def test_plan_resolves_name_clashes_by_namespace_order() -> None:
    r = rule(namespace=["second", "first"])
    sources = [cm("x", namespace="first"), cm("x", namespace="second")]
    # Both namespaces are foreign to the rule (in "default"): read because the rule's namespace is trusted.
    p = plan(r, sources, [ns("first"), ns("second"), ns("t")], Boundary(trusted=("def*",)))
    assert p.copies[("t", "x")]["metadata"]["annotations"]["copyrator.flant.com/source"] == "second/x"
    assert ("t", "x", "first/x") in p.shadowed


def test_plan_never_copies_copies() -> None:
    copy = build_copy(rule(), cm("a"), "default", "a")  # someone else's copy landed in our source namespace
    copy["metadata"]["annotations"][RULE_ANNOTATION] = "other/rule"
    assert plan(rule(), [copy], [ns("t")]).copies == {}


def test_target_name_template() -> None:
    p = plan(rule(targetName="shared-{name}"), [cm("a")], [ns("t")])
    assert list(p.copies) == [("t", "shared-a")]
    bad = plan(rule(targetName="Not_Valid"), [cm("a")], [ns("t")])
    assert bad.copies == {} and bad.skipped == [("default/a", "InvalidTargetName")]


def test_secrets_need_consent_and_protected_ones_never_move() -> None:
    r = rule(ruleType="secret")
    sources = [secret("open"), secret("closed", consent=None), secret("no", consent="false"),
               secret("listed", consent="t1, team-*"),
               secret("token", type="kubernetes.io/service-account-token"),
               secret("release", type="helm.sh/release.v1")]
    p = plan(r, sources, [ns("t1"), ns("t2"), ns("team-x")])
    assert sorted(p.copies) == [("t1", "listed"), ("t1", "open"), ("t2", "open"),
                                ("team-x", "listed"), ("team-x", "open")]
    assert dict(p.skipped) == {
        "default/closed": "NoConsent", "default/no": "NoConsent",
        "default/token": "ProtectedSecretType", "default/release": "ProtectedSecretType"}
    assert p.copies[("t1", "open")]["type"] == "Opaque"
    assert consents_to(cm("any"), "anywhere")  # ConfigMaps need no consent


# --- decisions ------------------------------------------------------------------------------------


def test_decisions_for_our_own_copies() -> None:
    r = rule()
    desired = build_copy(r, cm("a"), "t", "a")
    assert decide(r, None, desired).action == "create"
    assert decide(r, desired, desired).action == "none"
    # The source changed: the copy (as copyrator wrote it, hash and content agreeing) is brought in line.
    older = build_copy(r, {**cm("a"), "data": {"k": "older"}}, "t", "a")
    assert decide(r, older, desired).action == "update"
    frozen = build_copy(r, {**cm("a"), "data": {"k": "older"}, "immutable": True}, "t", "a")
    assert decide(r, frozen, desired).action == "recreate"  # immutable: deleted and created anew
    # Changed in its namespace (content no longer matches the hash copyrator wrote): never reverted.
    for edited in ({**desired, "data": {"k": "hand-edited"}}, {**desired, "type": "Other"},
                   {**desired, "metadata": {**desired["metadata"], "labels": {"mine": "x"}}}):
        decision = decide(r, edited, desired)
        assert (decision.action, decision.reason) == ("conflict", "EditedInPlace")


@pytest.mark.parametrize(("policy", "same", "consent", "expected"), [
    ("Skip", True, "true", ("conflict", "AlreadyExists")), ("Skip", False, "true", ("conflict", "AlreadyExists")),
    ("Adopt", True, "default", ("adopt", "")), ("Adopt", False, "default", ("conflict", "ContentDiffers")),
    ("Overwrite", False, "default/main-rule", ("overwrite", "")), ("Overwrite", False, "d*", ("overwrite", "")),
    # Take-over needs the object's consent naming the rule (or its namespace).
    ("Adopt", True, None, ("conflict", "NoTakeoverConsent")),
    ("Overwrite", False, None, ("conflict", "NoTakeoverConsent")),
    ("Overwrite", False, "false", ("conflict", "NoTakeoverConsent")),
    ("Overwrite", False, "team-b, default/other-rule", ("conflict", "NoTakeoverConsent")),
])
def test_conflict_policies(policy: str, same: bool, consent: str | None, expected: tuple[str, str]) -> None:
    r = rule(conflictPolicy=policy)
    desired = build_copy(r, cm("a"), "t", "a")
    annotations = {TAKEOVER_ANNOTATION: consent} if consent is not None else {}
    theirs = cm("a", namespace="t", data=desired["data"] if same else {"k": "theirs"}, labels={"team": "x"},
                metadata={"annotations": annotations})
    decision = decide(r, theirs, desired)
    assert (decision.action, decision.reason) == expected
    if consent is None and policy != "Skip":  # a trusted rule namespace needs no consent
        assert decide(r, theirs, desired, Boundary(trusted=("default",))).reason != "NoTakeoverConsent"


def test_never_take_over_from_another_rule_or_controller() -> None:
    r = rule(conflictPolicy="Overwrite")
    desired = build_copy(r, cm("a"), "t", "a")
    other_rule = {**desired, "metadata": {**desired["metadata"],
                                          "annotations": {RULE_ANNOTATION: "elsewhere/rule"}}}
    assert decide(r, other_rule, desired).reason == "OwnedByAnotherRule"
    controlled = cm("a", namespace="t", metadata={"ownerReferences": [{"uid": "u", "controller": True}]})
    assert decide(r, controlled, desired).reason == "Protected"
    ca = build_copy(rule(targetName="kube-root-ca.crt", conflictPolicy="Overwrite"), cm("a"), "t",
                    "kube-root-ca.crt")
    assert decide(r, cm("kube-root-ca.crt", namespace="t", labels={}), ca).reason == "Protected"


def test_release_removes_only_our_marks() -> None:
    copy = build_copy(rule(), cm("a"), "t", "a")
    copy["metadata"]["resourceVersion"] = "7"
    patch = released(copy)["metadata"]
    assert patch["resourceVersion"] == "7"
    ours = {k for k in copy["metadata"]["labels"] if k.startswith("copyrator.flant.com/")}
    assert set(patch["labels"]) == ours
    released_from = patch["annotations"].pop("copyrator.flant.com/released-from")
    assert released_from == "default/main-rule"
    assert all(v is None for v in [*patch["labels"].values(), *patch["annotations"].values()])


# --- event mapping --------------------------------------------------------------------------------


async def test_events_map_to_the_rules_that_care() -> None:
    client = FakeClient()
    for raw in (rule().model_dump(mode="json", by_alias=True, exclude_none=True),
                rule(metadata={"name": "secrets", "namespace": "default", "uid": "r-2"},
                     ruleType="secret").model_dump(mode="json", by_alias=True, exclude_none=True),
                # invalid (its untyped namespace list beyond the bound): never walked by the mappers
                rule(metadata={"name": "huge", "namespace": "default", "uid": "r-3"},
                     namespace=["default"] * 65).model_dump(mode="json", by_alias=True, exclude_none=True)):
        client.add(raw, CopyratorRule)
    cache = Cache(client, freeze_gc=False)
    world = await World.bind(client, cache, None)
    cache.start()
    await cache.wait_synced(5)
    to_cm, to_secret = world.mapper("ConfigMap"), world.mapper("Secret")
    assert to_cm(cm("app")) == ["default/main-rule"]
    assert to_cm(cm("app", labels={})) == [] and to_secret(secret("app")) == ["default/secrets"]
    copy = build_copy(rule(), cm("app"), "t", "app")
    assert to_cm(copy) == ["default/main-rule"]  # a copy maps to its rule, wherever it is
    world.set_blocked("default/secrets", {("ConfigMap", "t", "blocker")})
    assert to_cm(cm("blocker", namespace="t", labels={})) == ["default/secrets"]
    world.set_blocked("default/secrets", set())
    assert to_cm(cm("blocker", namespace="t", labels={})) == [] and world.blocked == {}
    assert sorted(world.all_rules(ns("new"))) == ["default/main-rule", "default/secrets"]
    await cache.stop()


async def test_two_operators_share_no_world() -> None:
    """Each run builds its own dependencies (``Operator(deps=...)``): one operator's blocked copies never
    wake another's rules, and the mappers read their own operator's run."""
    a, b = build_operator(), build_operator()
    client = FakeClient()
    for op in (a, b):
        await op.build_deps(SimpleNamespace(client=client, cache=Cache(client, freeze_gc=False)))  # type: ignore[arg-type]
    assert a.deps.world is not b.deps.world
    a.deps.world.set_blocked("default/main-rule", {("ConfigMap", "t", "blocker")})
    blocker = cm("blocker", namespace="t", labels={})

    def configmap_mapper(op: Any) -> Any:
        spec = next(s for s in op.specs() if s.resource is CopyratorRule)
        return next(w.mapper for w in spec.watches if w.resource is builtin.CONFIG_MAP)
    assert configmap_mapper(a)(blocker) == ["default/main-rule"]  # a's blocked copy wakes a's rule
    assert configmap_mapper(b)(blocker) == [] and b.deps.world.blocked == {}


def test_the_dependencies_exist_only_once_built() -> None:
    with pytest.raises(RuntimeError, match="built when a manager runs it"):
        build_operator().deps  # noqa: B018


def test_each_operator_reads_its_own_settings() -> None:
    a, b = build_operator(), build_operator()
    b.settings = CopyratorSettings(rule_name="chosen")
    spec_a, spec_b = (next(s for s in op.specs() if s.resource is CopyratorRule) for op in (a, b))
    assert spec_a.field_selector is None and spec_b.field_selector == "metadata.name=chosen"
    assert operator.settings.rule is None  # nor the default instance's


# --- settings -------------------------------------------------------------------------------------


@pytest.mark.parametrize(("args", "env", "rule_name", "namespaces"), [
    (["--rule-name", "main-rule", "--namespace", "ops"], {}, "main-rule", ("ops",)),
    ([], {"RULE_NAME": "main-rule", "NAMESPACE": "ops"}, "main-rule", ("ops",)),  # the article's names
    ([], {"KUBELOOP_RULE_NAME": "r2", "KUBELOOP_NAMESPACE": "a"}, "r2", ("a",)),
    ([], {}, None, ()),
    # The article's Helm chart, as written: args ["--rule-type", "main-rule"] and NAMESPACE from the pod.
    (["--rule-type", "main-rule"], {"NAMESPACE": "ops"}, "main-rule", ("ops",)),
    (["--rule-type", "main-rule", "--rule-name", "main-rule"], {}, "main-rule", ()),
])
def test_flags_and_env_vars(monkeypatch: pytest.MonkeyPatch, args: list[str], env: dict[str, str],
                            rule_name: str | None, namespaces: tuple[str, ...]) -> None:
    import kubeloop.cli.runner as runner
    from kubeloop.cli.run import build_command

    seen: dict[str, Any] = {}

    async def fake_run(op: Any, options: Any, target: str | None = None) -> int:
        seen.update(settings=op.settings, options=options,
                    selector=[c.field_selector for c in op.specs() if c.resource is CopyratorRule])
        return 0

    for name in ("RULE_NAME", "NAMESPACE", "KUBELOOP_RULE_NAME", "KUBELOOP_NAMESPACE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(runner, "run_operator", fake_run)
    op = build_operator()  # its own: the settings parsed here stay out of the default instance
    result = CliRunner().invoke(build_command(op), args, env=env)
    assert result.exit_code == 0, result.output
    assert op.settings.rule == rule_name and seen["options"].namespace == namespaces
    assert seen["selector"] == [f"metadata.name={rule_name}" if rule_name else None]


def test_rule_type_and_rule_name_must_agree(monkeypatch: pytest.MonkeyPatch) -> None:
    import kubeloop.cli.runner as runner
    from kubeloop.cli.run import build_command

    async def fake_run(op: Any, options: Any, target: str | None = None) -> int:
        op.specs()  # as the real runner does, before anything reaches the cluster
        return 0

    monkeypatch.setattr(runner, "run_operator", fake_run)
    op = build_operator()  # its own: the settings parsed here stay out of the default instance
    result = CliRunner().invoke(build_command(op), ["--rule-type", "a", "--rule-name", "b"])
    assert result.exit_code == 2 and "--rule-name 'b' and --rule-type 'a' disagree" in result.output


def test_boundary_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    import kubeloop.cli.runner as runner
    from kubeloop.cli.run import build_command
    from kubeloop.operators.copyrator.boundary import Boundary
    from kubeloop.operators.copyrator.operator import own_namespace

    seen: dict[str, Any] = {}

    async def fake_run(op: Any, options: Any, target: str | None = None) -> int:
        seen["boundary"] = Boundary.from_settings(op.settings, own_namespace(op.settings))
        return 0

    monkeypatch.setattr(runner, "run_operator", fake_run)
    op = build_operator()  # its own: the settings parsed here stay out of the default instance
    monkeypatch.delenv("POD_NAMESPACE", raising=False)
    args = ["--trusted-namespace", "platform,ops-*", "--trusted-namespace", "admin", "--allow-system-namespaces"]
    result = CliRunner().invoke(build_command(op), args, env={"POD_NAMESPACE": "copyrator"})
    assert result.exit_code == 0, result.output
    assert seen["boundary"] == Boundary(trusted=("platform", "ops-*", "admin"), allow_system=True,
                                        operator_namespace="copyrator")
    result = CliRunner().invoke(build_command(op), [], env={"KUBELOOP_OPERATOR_NAMESPACE": "ops"})
    assert result.exit_code == 0, result.output
    assert seen["boundary"] == Boundary(trusted=("ops",), operator_namespace="ops")
    result = CliRunner().invoke(build_command(op), ["--trusted-namespace", ""], env={"POD_NAMESPACE": "ops"})
    assert result.exit_code == 0, result.output
    assert seen["boundary"] == Boundary(operator_namespace="ops")


def test_examples_are_valid_rules() -> None:
    from pathlib import Path

    import yaml

    folder = Path(__file__).parents[2] / "kubeloop" / "operators" / "copyrator" / "examples"
    docs = [d for f in sorted(folder.glob("*.yaml")) for d in yaml.safe_load_all(f.read_text()) if d]
    rules = [CopyratorRule.from_dict(d) for d in docs if d["kind"] == "CopyratorRule"]
    assert len(rules) == 3 and all(not r.problems() for r in rules)
    article = next(r for r in rules if r.metadata.name == "main-rule")
    assert (article.ruleType, article.selector, article.source_namespaces) == (
        "configmap", {"copyrator": "true"}, ["default"])


async def test_a_source_seen_as_before_wakes_no_rule() -> None:
    """A rule whose last plan saw a source as it is cached now is not woken by it (a source the rule may
    not read or skips, rewritten); one that makes copies always wakes it, and so does any change to what
    the rule sees: losing its labels, gaining consent, a new name."""
    from kubeloop import to_completion
    from kubeloop.operators.copyrator.plan import planning

    client = FakeClient()
    r = rule(namespace=["default", "team-b"])
    client.add(r.model_dump(mode="json", by_alias=True, exclude_none=True), CopyratorRule)
    for obj in (cm("mine"), cm("theirs", namespace="team-b"), cm("kube-root-ca.crt")):
        del obj["metadata"]["resourceVersion"]  # the client's own, as the API server's
        client.add(obj, builtin.CONFIG_MAP)
    cache = Cache(client, freeze_gc=False)
    world = await World.bind(client, cache, None)
    cache.start()
    await cache.wait_synced(5)
    to_cm = world.mapper("ConfigMap")
    cached = {name: world.get("ConfigMap", ns_, name) for ns_, name in
              (("default", "mine"), ("team-b", "theirs"), ("default", "kube-root-ca.crt"))}
    assert all(to_cm(o) == [r.key] for o in cached.values())  # never planned: every source wakes it
    rule_now = world.rules()[0]
    to_completion(planning(rule_now, world.candidates(rule_now), [ns("default"), ns("team-b"), ns("t")],
                           world.boundary, world.reception(), world.plans))
    assert to_cm(cached["mine"]) == [r.key]  # it makes copies
    assert to_cm(cached["theirs"]) == [] and to_cm(cached["kube-root-ca.crt"]) == []  # unread, skipped

    async def rewritten(name: str, namespace: str, patch: dict[str, Any]) -> dict[str, Any]:
        await client.patch(builtin.CONFIG_MAP, name, patch, namespace)
        for _ in range(100):
            await asyncio.sleep(0.01)
            now = world.get("ConfigMap", namespace, name)
            if now is not None and now["metadata"]["resourceVersion"] != cached[name]["metadata"]["resourceVersion"]:
                return now
        raise AssertionError("the cache did not see the change")

    theirs = await rewritten("theirs", "team-b", {"data": {"k": "other"}})
    assert to_cm(theirs) == [] and to_cm(cached["theirs"]) == []  # still unread: the same view, old or new
    relabelled = await rewritten("kube-root-ca.crt", "default", {"metadata": {"labels": {"copyrator": None}}})
    assert to_cm(cached["kube-root-ca.crt"]) == [r.key] and to_cm(relabelled) == []  # the old one still matched
    consenting = await rewritten("theirs", "team-b", {"metadata": {"annotations": {CONSENT_ANNOTATION: "t"}}})
    assert to_cm(consenting) == [r.key]
    await cache.stop()
