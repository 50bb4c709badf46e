"""The reloader's decisions without a cluster: which objects a workload tracks, and what one reconcile
does (record, wait, roll, skip) given the cached world."""

from __future__ import annotations

from typing import Any

import pytest

from kubeloop.cache import Informer
from kubeloop.cache.informer import InformerKey
from kubeloop.client import Forbidden, Resource
from kubeloop.operators.reloader import build_operator
from kubeloop.operators.reloader.fingerprint import ABSENT, object_hash, without_data
from kubeloop.operators.reloader.pacing import TokenBucket
from kubeloop.operators.reloader.policy import HASH, HASHED_KEYS, SOURCES, TEMPLATE_HASH, policy_of
from kubeloop.operators.reloader.reconciler import Reloader, Runtime, remembered
from kubeloop.operators.reloader.settings import ReloaderSettings
from kubeloop.operators.reloader.workloads import DEPLOYMENTS, ROLLOUTS, WorkloadKind
from kubeloop.reconcile import Result
from kubeloop.resources.builtin import CONFIG_MAP, NAMESPACE, SECRET
from kubeloop.testing.fakeclient import FakeClient

Obj = dict[str, Any]
NS = "n"


def cm(name: str, data: dict[str, str], kind: str = "ConfigMap", **meta: Any) -> Obj:
    return {"apiVersion": "v1", "kind": kind, "metadata": {"name": name, "namespace": NS, **meta},
            "data": data}


def informer(resource: Resource, objs: list[Obj]) -> Informer:
    """An informer (never started) whose store holds ``objs``, as the operator's would after its list."""
    out = Informer(FakeClient(), InformerKey(resource, None))
    for obj in objs:
        out.store.upsert(obj)
    return out


def runtime(objs: list[Obj], namespaces: list[Obj] | None = None, **settings: Any) -> Runtime:
    sources = {"ConfigMap": informer(CONFIG_MAP, []), "Secret": informer(SECRET, [])}
    for obj in objs:
        sources[obj["kind"]].store.upsert(without_data(obj))
    ns_informer = informer(NAMESPACE, namespaces) if namespaces is not None else None
    s = ReloaderSettings(**settings)
    return Runtime(s, TokenBucket(s.max_reloads_per_second, s.reload_burst),
                   {k: v for k, v in sources.items() if s.tracks(k)},
                   {}, ns_informer, s.namespace_requirements, s.resource_requirements)


def deployment(annotations: dict[str, str], volumes: list[str] = (), env: list[tuple[str, str, str]] = (),
               **spec: Any) -> Obj:
    """A Deployment mounting ConfigMap volumes and reading (kind, name, key) env references."""
    env_vars = [{"name": f"E{i}", "valueFrom": {f"{kind}KeyRef": {"name": n, "key": k}}}
                for i, (kind, n, k) in enumerate(env)]
    container = {"name": "app", "env": env_vars,
                 "volumeMounts": [{"name": v, "mountPath": f"/{v}"} for v in volumes]}
    pod = {"containers": [container], "volumes": [{"name": v, "configMap": {"name": v}} for v in volumes]}
    meta = {"name": "d", "namespace": NS, "resourceVersion": "7", "annotations": dict(annotations)}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta,
            "spec": {"template": {"metadata": {}, "spec": pod}, **spec}}


def tracked(rt: Runtime, workload: Obj) -> dict[str, str]:
    policy = policy_of(workload["metadata"]["annotations"], auto_all=rt.settings.auto_reload_all)
    hashes, missing, unknown = Reloader(build_operator()).tracked(rt, DEPLOYMENTS, workload, policy)
    return {**{r.id: h for r, h in hashes.items()}, **{r.id: "MISSING" for r in missing},
            **{r.id: "UNKNOWN" for r in unknown}}


AUTO = {"reloader.stakater.com/auto": "true"}


def test_auto_tracks_every_reference_with_its_hash() -> None:
    objs = [cm("a", {"k": "1"}), cm("s", {"k": "MQ=="}, "Secret")]
    found = tracked(runtime(objs), deployment(AUTO, ["a"], [("secret", "s", "k")]))
    assert found == {"ConfigMap/a": object_hash("ConfigMap", "a", objs[0]),
                     "Secret/s": object_hash("Secret", "s", objs[1])}
    only_cms = tracked(runtime(objs), deployment({"configmap.reloader.stakater.com/auto": "true"}, ["a"],
                                                 [("secret", "s", "k")]))
    assert set(only_cms) == {"ConfigMap/a"}
    without_secrets = runtime(objs, ignore_secrets=True)
    assert set(tracked(without_secrets, deployment(AUTO, ["a"], [("secret", "s", "k")]))) == {"ConfigMap/a"}


def test_used_keys_only() -> None:
    objs = [cm("a", {"k": "1", "other": "x"})]
    whole = tracked(runtime(objs), deployment(AUTO, env=[("configMap", "a", "k")]))
    used = tracked(runtime(objs, hash_used_keys_only=True), deployment(AUTO, env=[("configMap", "a", "k")]))
    assert used["ConfigMap/a"] == object_hash("ConfigMap", "a", objs[0], ["k"]) != whole["ConfigMap/a"]


def test_named_objects_literal_and_regex() -> None:
    objs = [cm("extra", {}), cm("app-1", {}), cm("app-2", {}), cm("other", {}), cm("s", {}, "Secret")]
    found = tracked(runtime(objs), deployment({"configmap.reloader.stakater.com/reload": "extra,app-.*",
                                               "secret.reloader.stakater.com/reload": "s"}, ["other"]))
    assert set(found) == {"ConfigMap/extra", "ConfigMap/app-1", "ConfigMap/app-2", "Secret/s"}


def test_search_tracks_only_matching_objects() -> None:
    match = {"reloader.stakater.com/match": "true"}
    objs = [cm("m", {}, annotations=match), cm("u", {}), cm("named", {})]
    search = {"reloader.stakater.com/search": "true"}
    assert set(tracked(runtime(objs), deployment(search, ["m", "u", "gone"]))) == {"ConfigMap/m"}
    named = {**search, "configmap.reloader.stakater.com/reload": "u"}
    assert set(tracked(runtime(objs), deployment(named, ["m", "u"]))) == {"ConfigMap/m", "ConfigMap/u"}


def test_excluded_ignored_and_label_filtered_objects_do_not_count() -> None:
    objs = [cm("x", {}), cm("i", {}, annotations={"reloader.stakater.com/ignore": "true"}),
            cm("k", {}, annotations={"reloader.kubeloop.dev/ignore": "true"}),
            cm("ok", {}, labels={"r": "y"})]
    annotations = {**AUTO, "configmaps.exclude.reloader.stakater.com/reload": "x"}
    assert set(tracked(runtime(objs), deployment(annotations, ["x", "i", "k", "ok"]))) == {"ConfigMap/ok"}
    assert tracked(runtime(objs, resource_label_selector="r=n"), deployment(AUTO, ["ok"])) == {}


@pytest.mark.parametrize("flag", ["reload_on_create", "reload_on_delete"])
def test_an_object_outside_the_label_selector_is_absent_with_create_or_delete(flag: str) -> None:
    """Reloader's watch is filtered by --resource-label-selector: an object gaining the labels is created
    for it, one losing them deleted. With those flags that is a change (ABSENT <-> its hash)."""
    objs = [cm("ok", {}, labels={"r": "y"})]
    assert tracked(runtime(objs, resource_label_selector="r=n", **{flag: True}),
                   deployment(AUTO, ["ok"])) == {"ConfigMap/ok": ABSENT}


def test_missing_required_and_optional_objects() -> None:
    workload = deployment(AUTO, ["gone"])
    workload["spec"]["template"]["spec"]["containers"][0]["envFrom"] = [
        {"configMapRef": {"name": "maybe", "optional": True}}]
    assert tracked(runtime([]), workload) == {"ConfigMap/gone": "MISSING", "ConfigMap/maybe": ABSENT}


def test_namespace_filters() -> None:
    namespaces = [{"metadata": {"name": NS, "labels": {"env": "prod"}}}, {"metadata": {"name": "dev"}}]
    assert not runtime([], namespaces_to_ignore="x, n").in_scope(NS)
    rt = runtime([], namespaces, namespace_selector="env=prod")
    assert rt.in_scope(NS) and not rt.in_scope("dev") and not rt.in_scope("unknown")


# --- one reconcile ----------------------------------------------------------------------------------------

class Ctx:
    """What a reconcile uses of its Context: a FakeClient holding the workload, per-object state, events."""

    def __init__(self) -> None:
        self.namespace, self.name = NS, "d"
        self.deps: Runtime | None = None  # the operator's Runtime, set by each test
        self.per_object: dict[Any, Any] = {}
        self.events: list[tuple[str, str, str]] = []
        self.client = FakeClient()

    def holding(self, kind: WorkloadKind, workload: Obj) -> Ctx:
        """The workload as the API server has it (stored once per Ctx, with its resourceVersion)."""
        if self.client.stored(kind.resource, workload["metadata"]["name"], NS) is None:
            self.client.add(workload, kind.resource)
        return self

    @property
    def patches(self) -> list[tuple[Obj, dict[str, Any]]]:
        """(body, the patch type and dry_run if set) of every patch the client was sent."""
        return [(c.body, {"type": c.options["type"], **({"dry_run": True} if c.options["dry_run"] else {})})
                for c in self.client.calls if c.verb == "patch"]

    async def event(self, type: str, reason: str, note: str) -> None:
        self.events.append((type, reason, note))


async def reconcile(rt: Runtime, workload: Obj, ctx: Ctx) -> Result | None:
    reloader = Reloader(build_operator())
    ctx.deps = rt
    return await reloader.reconcile(DEPLOYMENTS, workload, ctx.holding(DEPLOYMENTS, workload))  # type: ignore[arg-type]


def apply(workload: Obj, patch: Obj) -> Obj:
    """Merges a patch's annotations into the workload (enough for these tests)."""
    out = {**workload, "metadata": {**workload["metadata"], "annotations": {
        **workload["metadata"]["annotations"], **patch["metadata"].get("annotations", {})}}}
    return out


async def first_sight(objs: list[Obj], workload: Obj, **settings: Any) -> tuple[Runtime, Obj]:
    rt, ctx = runtime(objs, **settings), Ctx()
    assert await reconcile(rt, workload, ctx) is None
    ((patch, kw),) = ctx.patches
    assert set(patch["metadata"]["annotations"]) == {HASH, SOURCES, HASHED_KEYS} and "spec" not in patch
    return rt, apply(workload, patch)


async def test_first_sight_records_then_nothing_to_do() -> None:
    rt, recorded = await first_sight([cm("a", {"k": "1"})], deployment(AUTO, ["a"]))
    ctx = Ctx()
    assert await reconcile(rt, recorded, ctx) is None and ctx.patches == []


async def test_untracked_workload_is_not_touched() -> None:
    ctx = Ctx()
    assert await reconcile(runtime([cm("a", {})]), deployment({}, ["a"]), ctx) is None and ctx.patches == []
    ctx = Ctx()
    assert await reconcile(runtime([], auto_reload_all=True), deployment({}, []), ctx) is None
    assert ctx.patches == [], "nothing referenced, nothing recorded"


async def test_change_waits_for_the_window_then_rolls_once_with_one_patch() -> None:
    rt, workload = await first_sight([cm("a", {"k": "1"})], deployment(AUTO, ["a"]), debounce_seconds=5)
    rt.sources["ConfigMap"].store.upsert(without_data(cm("a", {"k": "2"})))
    ctx = Ctx()
    result = await reconcile(rt, workload, ctx)
    assert result is not None and 4 < (result.requeue_after or 0) <= 5 and ctx.patches == []
    remembered.of(ctx).pacing.changed_at -= 5  # the window has passed  # type: ignore[arg-type]
    assert await reconcile(rt, workload, ctx) is None
    ((patch, kw),) = ctx.patches
    assert kw == {"type": "strategic"} and patch["metadata"]["resourceVersion"] == "7"
    new_hash = patch["metadata"]["annotations"][HASH]
    assert patch["spec"]["template"]["metadata"]["annotations"] == {TEMPLATE_HASH: new_hash}
    rolled = ctx.client.stored(DEPLOYMENTS.resource, "d", NS)
    assert rolled is not None and rolled["spec"]["template"]["metadata"]["annotations"] == {TEMPLATE_HASH: new_hash}
    assert rolled["metadata"]["annotations"][HASH] == new_hash and rolled["metadata"]["resourceVersion"] == "8"
    ((kind, reason, note),) = ctx.events
    assert (kind, reason) == ("Normal", "Reloaded") and note.startswith("ConfigMap a changed (")
    assert new_hash[:12] in note


async def test_rollout_already_under_way_is_only_recorded() -> None:
    rt, workload = await first_sight([cm("a", {"k": "1"})], deployment(AUTO, ["a"]), debounce_seconds=0)
    rt.sources["ConfigMap"].store.upsert(without_data(cm("a", {"k": "2"})))
    ctx = Ctx()
    await reconcile(rt, workload, ctx)
    rolled_hash = ctx.patches[0][0]["metadata"]["annotations"][HASH]
    # The pod template carries the hash already but the record was lost: record, do not restart.
    workload["spec"]["template"]["metadata"]["annotations"] = {TEMPLATE_HASH: rolled_hash}
    ctx = Ctx()
    await reconcile(rt, workload, ctx)
    ((patch, _),) = ctx.patches
    assert "spec" not in patch and ctx.events == []


async def test_membership_change_and_mode_change_record_without_rolling() -> None:
    rt, workload = await first_sight([cm("a", {"k": "1"}), cm("b", {})], deployment(AUTO, ["a"]),
                                     debounce_seconds=0)
    widened = deployment(AUTO, ["a", "b"])
    widened["metadata"]["annotations"] = workload["metadata"]["annotations"]
    ctx = Ctx()
    await reconcile(rt, widened, ctx)
    assert len(ctx.patches) == 1 and "spec" not in ctx.patches[0][0]
    # Switching --hash-used-keys-only changes every hash of a partly used object; that is no data change.
    objs = [cm("a", {"k": "1", "other": "x"})]
    workload = deployment(AUTO, env=[("configMap", "a", "k")])
    rt, workload = await first_sight(objs, workload, debounce_seconds=0)
    ctx = Ctx()
    await reconcile(runtime(objs, hash_used_keys_only=True, debounce_seconds=0), workload, ctx)
    assert len(ctx.patches) == 1 and "spec" not in ctx.patches[0][0]
    assert ctx.patches[0][0]["metadata"]["annotations"][HASHED_KEYS] == "used"


async def test_paused_missing_rate_limited_and_dry_run() -> None:
    rt, workload = await first_sight([cm("a", {"k": "1"})], deployment(AUTO, ["a"]), debounce_seconds=0,
                                     max_reloads_per_second=0.001, reload_burst=1)
    rt.sources["ConfigMap"].store.upsert(without_data(cm("a", {"k": "2"})))
    paused = {**workload, "spec": {**workload["spec"], "paused": True}}
    ctx = Ctx()
    assert await reconcile(rt, paused, ctx) is None and ctx.patches == []
    assert [e[1] for e in ctx.events] == ["ReloadSkipped"]
    ctx = Ctx()
    await reconcile(rt, workload, ctx)  # takes the only token
    ctx = Ctx()
    result = await reconcile(rt, workload, ctx)
    assert result is not None and (result.requeue_after or 0) > 100 and ctx.patches == []
    # missing: a Warning once, no rollout, nothing recorded
    rt.sources["ConfigMap"].store.remove(f"{NS}/a")
    ctx = Ctx()
    for _ in range(2):
        assert await reconcile(rt, workload, ctx) is None
    assert ctx.patches == [] and ctx.events == [("Warning", "ReloadSourceMissing", ctx.events[0][2])]


async def test_dry_run_patches_with_server_dry_run_and_remembers() -> None:
    rt = runtime([cm("a", {"k": "1"})], debounce_seconds=0, dry_run=True)
    workload, ctx = deployment(AUTO, ["a"]), Ctx()
    await reconcile(rt, workload, ctx)
    assert ctx.patches == [], "a dry run records in memory only"
    rt.sources["ConfigMap"].store.upsert(without_data(cm("a", {"k": "2"})))
    await reconcile(rt, workload, ctx)
    ((_, kw),) = ctx.patches
    assert kw["dry_run"] is True and ctx.events[0][1] == "ReloadSkipped" and "would roll" in ctx.events[0][2]
    await reconcile(rt, workload, ctx)
    assert len(ctx.patches) == 1, "acted on once per hash"


async def test_failed_rollout_is_reported_and_raised() -> None:
    rt, workload = await first_sight([cm("a", {"k": "1"})], deployment(AUTO, ["a"]), debounce_seconds=0)
    rt.sources["ConfigMap"].store.upsert(without_data(cm("a", {"k": "2"})))
    ctx = Ctx()
    ctx.client.fail("patch", Forbidden(403, "Forbidden", "no"))
    with pytest.raises(Forbidden):
        await reconcile(rt, workload, ctx)
    assert ctx.events[0][:2] == ("Warning", "ReloadFailed")


def test_a_missing_named_object_holds_nothing_back() -> None:
    """only the template's required objects block; a named-only one is reported."""
    objs = [cm("here", {"k": "1"})]
    workload = deployment({"configmap.reloader.stakater.com/reload": "here,typo"})
    assert tracked(runtime(objs), workload) == {"ConfigMap/here": object_hash("ConfigMap", "here", objs[0]),
                                                "ConfigMap/typo": "UNKNOWN"}
    # With --reload-on-create its absence is part of the hash, so that its creation is a change.
    found = tracked(runtime(objs, reload_on_create=True), workload)
    assert found["ConfigMap/typo"] == "UNKNOWN"
    hashes, _, _ = Reloader(build_operator()).tracked(runtime(objs, reload_on_create=True), DEPLOYMENTS,
                                                      workload, policy_of(workload["metadata"]["annotations"]))
    assert {r.id: h for r, h in hashes.items()}["ConfigMap/typo"] == ABSENT
    # Named and read by the template: required, as before.
    assert tracked(runtime(objs), deployment({"configmap.reloader.stakater.com/reload": "gone"}, ["gone"])) == {
        "ConfigMap/gone": "MISSING"}


async def test_rollout_with_an_unknown_rollout_strategy_says_so_and_rolls_the_template() -> None:
    annotations = {**AUTO, "reloader.stakater.com/rollout-strategy": "restrat"}
    rollout = {**deployment(annotations, ["a"]), "apiVersion": "argoproj.io/v1alpha1", "kind": "Rollout"}
    rt = runtime([cm("a", {"k": "1"})], argo_rollouts=True, debounce_seconds=0)
    reloader = Reloader(build_operator())
    ctx = Ctx()
    ctx.deps = rt
    await reloader.reconcile(ROLLOUTS, rollout, ctx.holding(ROLLOUTS, rollout))  # type: ignore[arg-type]
    ((patch, _),) = ctx.patches
    rollout = apply(rollout, patch)
    rt.sources["ConfigMap"].store.upsert(without_data(cm("a", {"k": "2"})))
    ctx = Ctx()
    ctx.deps = rt
    await reloader.reconcile(ROLLOUTS, rollout, ctx.holding(ROLLOUTS, rollout))  # type: ignore[arg-type]
    ((patch, kw),) = ctx.patches
    assert kw == {"type": "merge"} and TEMPLATE_HASH in patch["spec"]["template"]["metadata"]["annotations"]
    assert [(k, r) for k, r, _ in ctx.events] == [("Warning", "ReloadConfigInvalid"), ("Normal", "Reloaded")]
    assert "rollout-strategy 'restrat'" in ctx.events[0][2]
