"""The reconcile, as the article would write it: for one workload, hash every ConfigMap and Secret it
uses, compare with the hash it was last rolled (or first seen) with, and roll it when they differ.

Level-based: nothing depends on having seen the change happen. A change made while the operator was
down is found on the first reconcile after it starts; a workload seen for the first time has its hash
recorded and is not rolled."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from kubeloop import (
    AlreadyExists,
    ApiError,
    Conflict,
    Context,
    Event,
    Informer,
    Manager,
    NotFound,
    Obj,
    Operator,
    Request,
    Result,
    State,
    Steps,
    builtin,
    clock,
    cooperatively,
    selectors,
    to_completion,
)
from kubeloop.operators.reloader.budget import MAX_PER_NAMESPACE, PatternBudget
from kubeloop.operators.reloader.compat import SettingError
from kubeloop.operators.reloader.fingerprint import (
    ABSENT,
    PREFIX,
    Fingerprint,
    decode_sources,
    object_hash,
    value_digests,
    without_data,
)
from kubeloop.operators.reloader.jobs import (
    PROPAGATION,
    REASON,
    job_from,
    owned_by_cronjob,
    probe,
    recreated,
    why_not_recreated,
)
from kubeloop.operators.reloader.metrics import reload_executed, reload_skipped
from kubeloop.operators.reloader.pacing import Pacing, TokenBucket, loop_suspected, rolled, settle, settled
from kubeloop.operators.reloader.policy import (
    CONFIG_MAP,
    DEFAULT_NAMES,
    HASH,
    HASHED_KEYS,
    MAX_NAMES,
    MAX_PATTERNS,
    PREFIXES,
    SECRET,
    SOURCES,
    Names,
    Policy,
    duration,
    is_pattern,
    name_matcher,
    pattern_problem,
    policy_of,
    source_ignored,
    source_matches,
)
from kubeloop.operators.reloader.references import Ref, merge, pod_template_refs
from kubeloop.operators.reloader.settings import STRATEGIES, ReloaderSettings
from kubeloop.operators.reloader.workloads import (
    CRONJOBS,
    DEPLOYMENTS,
    JOBS,
    KINDS,
    ROLLOUT,
    ROLLOUTS,
    WorkloadKind,
    already_applied,
    expand_lists,
    restart_at,
    template_change,
)

log = logging.getLogger("kubeloop.reloader")
INDEX = "reloader-sources"  # workload informer index: "Kind/namespace/name" (or ".../*") → workload keys
SOURCE_RESOURCES = {CONFIG_MAP: builtin.CONFIG_MAP, SECRET: builtin.SECRET}


@dataclass
class Runtime:
    """What one run of the operator shares between its controllers (built when the manager starts)."""

    settings: ReloaderSettings
    limiter: TokenBucket
    sources: dict[str, Informer]  # "ConfigMap"/"Secret" → informer (data replaced by digests)
    workloads: dict[str, Informer]  # workload type → informer with the INDEX
    namespaces: Informer | None  # only with --namespace-selector
    namespace_selector: tuple[selectors.Requirement, ...] = ()
    resource_selector: tuple[selectors.Requirement, ...] = ()
    budget: PatternBudget = field(default_factory=PatternBudget)  # expressions per namespace
    writer: Any = None  # the manager's (fenced) client and event recorder: for a Job's copy once the Job is
    events: Any = None  # gone from the cache, when no reconcile context is left (Reloader.job_gone)
    # "namespace/name" → the copy of a Job deleted to be recreated, until it is created.
    pending_jobs: dict[str, PendingJob] = field(default_factory=dict)

    def in_scope(self, namespace: str | None) -> bool:
        if namespace in self.settings.ignored_namespaces:
            return False
        if self.namespaces is None:
            return True
        ns = self.namespaces.store.get_by(namespace or "")
        return ns is not None and selectors.matches(self.namespace_selector, _meta(ns).get("labels"))

    def source(self, kind: str, namespace: str | None, name: str) -> Obj | None:
        informer = self.sources.get(kind)
        return informer.store.get_by(name, namespace) if informer else None

    def workloads_in(self, kind: WorkloadKind, namespace: Obj) -> list[str]:
        """Watch mapper: a namespace's labels changed, so --namespace-selector may see it differently."""
        informer = self.workloads.get(kind.type)
        return informer.store.index_keys("namespace", _meta(namespace).get("name", "")) if informer else []

    def sources_named(self, kind: str, namespace: str | None, patterns: tuple[str, ...]) -> list[str]:
        """The names in the namespace that match any of ``patterns``: one compiled matcher, one pass."""
        return to_completion(self.naming(kind, namespace, patterns))

    def naming(self, kind: str, namespace: str | None, patterns: tuple[str, ...]) -> Steps[list[str]]:
        """``sources_named`` in steps, one per object of the namespace (``kubeloop.cooperatively``): a
        namespace may hold any number of them."""
        if not patterns:
            return []
        informer = self.sources.get(kind)
        objs = informer.store.by_index("namespace", namespace or "") if informer else []
        matcher = name_matcher(patterns)
        found = []
        for o in objs:
            if matcher(name := _meta(o)["name"]):
                found.append(name)
            yield
        return sorted(found)

    def within_budget(self, kind: WorkloadKind, workload: Obj, policy: Policy) -> Policy:
        """The policy with only the expressions its namespace's budget grants (the rest are dropped)."""
        ns = _meta(workload).get("namespace") or ""
        given = frozenset(n for names in (*policy.named.values(), *policy.excluded.values())
                          for n in names if is_pattern(n) and pattern_problem(n) is None)
        key = f"{kind.type}/{ns}/{_meta(workload).get('name')}"

        def exists(other: str) -> bool:
            typ, _, rest = other.partition("/")
            other_ns, _, name = rest.partition("/")
            inf = self.workloads.get(typ)
            return inf is not None and inf.store.get_by(name, other_ns) is not None

        over = given - self.budget.admit(ns, key, given, exists)
        if not over:
            return policy
        keep = {k: tuple(n for n in v if n not in over) for k, v in policy.named.items()}
        drop = {k: tuple(n for n in v if n not in over) for k, v in policy.excluded.items()}
        return replace(policy, named=keep, excluded=drop, over_budget=tuple(sorted(over)))


@dataclass
class PendingJob:
    """A Job deleted to be recreated (``old``, as it was) and its copy, not created yet."""

    old: Obj
    job: Obj
    what: str  # describe(): which objects changed
    how: str  # the strategy and hash, for the Event

    @property
    def old_uid(self) -> str | None:
        return _meta(self.old).get("uid")


Emit = Callable[[Obj, str, str, str], Awaitable[None]]  # (regarding, type, reason, note)


@dataclass
class Remembered:
    """What the reloader keeps per workload between reconciles (in memory; the recorded hash itself is
    on the workload): its pacing, and what it already said, so that a resync does not say it again."""

    pacing: Pacing = field(default_factory=Pacing)
    missing: tuple[str, ...] | None = None  # sources reported missing
    unknown: tuple[str, ...] = ()  # sources named in a reload annotation, reported unknown
    skipped: tuple[str, str] | None = None  # (reason, hash) of the rollout last reported skipped
    dry_run: tuple[str, dict[str, str], str] | None = None  # the hash a dry run "rolled", as _recorded
    invalid: dict[str, str] = field(default_factory=dict)  # annotation -> the bad value reported
    left_alone: str | None = None  # why an annotated Job is not recreated, as last reported


# A declaration, not state: each controller keeps its own Remembered per workload (``State.of(ctx)``),
# so operator instances share nothing through it.
remembered = State(Remembered)


async def build_runtime(manager: Manager, settings: ReloaderSettings) -> Runtime:
    """The operator's dependencies (``Operator(deps=...)``): the informers its controllers declared (with
    the data-stripping transform and the reference index), looked up on the manager's cache."""
    cache = manager.cache
    sources = {kind: await cache.informer(res, transform=without_data)
               for kind, res in SOURCE_RESOURCES.items() if settings.tracks(kind)}
    workloads = {k.type: await cache.informer(k.resource) for k in KINDS if settings.reloads(k.type)}
    namespaces = (await cache.informer(builtin.NAMESPACE, metadata_only=True)
                  if settings.namespace_selector else None)
    log.info("reloader: strategy %s, %s mode, debounce %.1fs%s", settings.reload_strategy,
             "opt-out" if settings.auto_reload_all else "opt-in", settings.debounce_seconds,
             " (dry run)" if settings.dry_run else "")
    if settings.sync_after_restart is False:
        log.warning("--sync-after-restart=false: changes made while the reloader was down still roll the "
                    "workloads they concern (the hashes are compared at start-up); this cannot be turned off")
    return Runtime(settings, TokenBucket(settings.max_reloads_per_second, settings.reload_burst),
                   sources, workloads, namespaces, settings.namespace_requirements, settings.resource_requirements,
                   writer=manager.writer, events=manager.events)


class Reloader:
    """The operator's logic; one instance per Operator, its Runtime (``ctx.deps``) built on every run."""

    def __init__(self, operator: Operator[ReloaderSettings, Runtime]) -> None:
        self.operator = operator
        self.remembered = remembered

    # --- wiring ----------------------------------------------------------------------------------------

    async def check(self, manager: Manager) -> None:
        """on_startup hook: --argo-rollouts needs the Rollout kind served (before its informer is made)."""
        if self.operator.settings.reloads("rollouts"):
            await _require_rollouts(manager)

    def mapper(self, kind: WorkloadKind, source_kind: str) -> Callable[[Obj], list[str]]:
        """Maps a changed ConfigMap/Secret to the workloads of ``kind`` that name it (by the index)."""
        def workloads_using(obj: Obj) -> list[str]:
            informer = self.operator.deps.workloads.get(kind.type)
            if informer is None:
                return []
            meta = _meta(obj)
            prefix = f"{source_kind}/{meta.get('namespace')}/"
            return [*informer.store.index_keys(INDEX, prefix + str(meta.get("name"))),
                    *informer.store.index_keys(INDEX, prefix + "*")]
        return workloads_using

    def reconciler(self, kind: WorkloadKind) -> Callable[[Obj, Context[Runtime]], Any]:
        async def reconcile(obj: Obj, ctx: Context[Runtime]) -> Result | None:
            return await self.reconcile(kind, obj, ctx)
        reconcile.__name__ = f"reconcile_{kind.type}"
        return reconcile

    # --- the reconcile ---------------------------------------------------------------------------------

    async def reconcile(self, kind: WorkloadKind, workload: Obj, ctx: Context[Runtime]) -> Result | None:
        rt = ctx.deps
        if kind is JOBS and await self._copy_pending(rt, ctx, workload):
            return None
        # A Job runs once: only one annotated for it is recreated, never --auto-reload-all's every Job.
        auto_all = rt.settings.auto_reload_all and kind is not JOBS
        policy = workload_policy(kind, workload, auto_all=auto_all, names=rt.settings.names)
        if not policy.tracks_anything or not rt.in_scope(ctx.namespace):
            return None
        if kind is JOBS and await self._job_left_alone(ctx, workload):
            return None
        mem = self.remembered.of(ctx)
        policy = rt.within_budget(kind, workload, policy)
        await _refused_patterns(ctx, mem, policy)
        # In slices: its expressions are matched against every name of the namespace, which no bound limits.
        hashes, missing, unknown = await cooperatively(self.tracking(rt, kind, workload, policy))
        await self._unknown(ctx, kind, unknown)
        if missing and not rt.settings.reload_on_delete:
            settled(mem.pacing)  # a burst resumes from scratch once the object is back
            await self._missing(ctx, kind, missing)
            return None
        mem.missing = None
        fingerprint = Fingerprint({ref.id: h for ref, h in hashes.items()})
        recorded_hash, recorded_sources, recorded_mode = self._recorded(rt, workload, ctx)
        if recorded_hash == fingerprint.hash:
            settled(mem.pacing)  # nothing to do (or the contents went back within the window)
            return None
        comparable = recorded_hash and recorded_mode == hashed_keys(rt.settings)
        changed = fingerprint.changed_since(recorded_sources) if comparable else []
        if not changed:
            # First sight, only the set of objects changed, or hashes made by another --hash-used-keys-only
            # setting (not a data change): remember the hash, roll nothing.
            if fingerprint.sources or recorded_hash:
                await self._record(rt, ctx, kind, fingerprint)
            return None
        if kind.paused(workload):
            settled(mem.pacing)
            await self._skip(ctx, kind, "paused", fingerprint, "paused; it rolls when resumed")
            return None
        period = await self._pause_period(ctx, kind, policy)
        if wait := settle(mem.pacing, fingerprint.hash, rt.settings.debounce_seconds, clock.monotonic(), period):
            if period is not None:
                await self._skip(ctx, kind, "pause_period", fingerprint, f"held by pause-period "
                                 f"{policy.pause_period}: changes until then roll out together")
            return Result(requeue_after=wait)  # more changes may follow: one rollout for the burst
        first_at = mem.pacing.first_at if mem.pacing.first_at is not None else clock.monotonic()
        if loop_suspected(mem.pacing, first_at, rt.settings.loop_rollouts, rt.settings.loop_window_seconds):
            await self._loop(rt, ctx, kind, fingerprint, changed)
            settled(mem.pacing)
            return None
        if wait := rt.limiter.take():
            await self._skip(ctx, kind, "rate_limited", fingerprint)
            return Result(requeue_after=wait)
        triggers = {ref: h for ref, h in hashes.items() if ref.id in changed}
        await self._roll(rt, ctx, kind, workload, policy, fingerprint, triggers, recorded_sources or {})
        rolled(mem.pacing, clock.monotonic(), rt.settings.loop_rollouts)
        settled(mem.pacing)
        return None

    def tracked(self, rt: Runtime, kind: WorkloadKind, workload: Obj,
                policy: Policy) -> tuple[dict[Ref, str], list[Ref], list[Ref]]:
        """The objects this workload is rolled for, with their hashes; the missing ones its pod template
        needs (they hold the rollout back); and the missing ones only its annotations name (they do not:
        the others still roll the workload, as with Reloader)."""
        return to_completion(self.tracking(rt, kind, workload, policy))  # type: ignore[no-any-return]

    def tracking(self, rt: Runtime, kind: WorkloadKind, workload: Obj, policy: Policy) -> Steps[Any]:
        """``tracked`` in steps: one per object of the namespace its expressions are matched against, and
        one per object tracked."""
        ns = _meta(workload).get("namespace")
        template_refs = pod_template_refs(kind.template(workload))
        from_template = [r for r in template_refs if r.kind in policy.auto or r.kind in policy.search]
        named: list[Ref] = []
        for k, names in policy.named.items():
            named += [Ref(k, n) for n in names if not is_pattern(n)]
            matched = yield from rt.naming(k, ns, tuple(n for n in names if is_pattern(n)))
            named += [Ref(k, n) for n in matched]
        # ``search`` picks the referenced objects that say ``match``; auto or named ones need not.
        needs_match = {r.id for r in from_template if r.kind not in policy.auto} - {r.id for r in named}
        named_only = {r.id for r in named} - {r.id for r in template_refs}  # the pods do not need them
        hashes: dict[Ref, str] = {}
        missing: list[Ref] = []
        unknown: list[Ref] = []
        for ref in merge([*from_template, *named]):
            yield
            if not rt.settings.tracks(ref.kind) or policy.is_excluded(ref.kind, ref.name):
                continue
            source = rt.source(ref.kind, ns, ref.name)
            if source is None:
                if ref.id in named_only:
                    unknown.append(ref)
                    if rt.settings.reload_on_create or rt.settings.reload_on_delete:
                        hashes[ref] = ABSENT  # so that its creation (or deletion) is a change
                elif ref.id not in needs_match:  # a missing object cannot say ``match``
                    hashes[ref] = ABSENT
                    missing += [] if ref.optional else [ref]
                continue
            meta = _meta(source)
            annotations = meta.get("annotations")
            if source_ignored(annotations, rt.settings.names):
                continue
            if not selectors.matches(rt.resource_selector, meta.get("labels")):
                # Reloader's informer does not see it (the selector is a watch filter there), so gaining the
                # labels is its creation and losing them its deletion: a change with those flags.
                if rt.settings.reload_on_create or rt.settings.reload_on_delete:
                    hashes[ref] = ABSENT
                continue
            if ref.id in needs_match and not source_matches(annotations, rt.settings.names):
                continue
            keys = ref.keys if rt.settings.hash_used_keys_only else None
            hashes[ref] = object_hash(ref.kind, ref.name, source, keys)
        return hashes, missing, unknown

    # --- acting ----------------------------------------------------------------------------------------

    async def _roll(self, rt: Runtime, ctx: Context, kind: WorkloadKind, workload: Obj, policy: Policy,
                    fingerprint: Fingerprint, triggers: Mapping[Ref, str],
                    recorded: Mapping[str, str]) -> None:
        strategy = policy.strategy if policy.strategy in STRATEGIES else rt.settings.reload_strategy
        template = kind.template(workload)
        change = template_change(strategy, fingerprint.hash, triggers, template)
        job = None
        if kind is CRONJOBS and rt.settings.cronjob_action == "create-job":
            job, body = job_from(workload, change, fingerprint.hash), {}
            strategy = f"{strategy}, Job {job['metadata']['name']}"
        elif kind is ROLLOUTS and policy.rollout_strategy == "restart":
            body, strategy = restart_at(), "restartAt"
        elif kind is ROLLOUTS and policy.rollout_strategy != "rollout" and not already_applied(template, change):
            await _invalid(ctx, self.remembered.of(ctx), "rollout-strategy", policy.rollout_strategy,
                           "neither rollout nor restart; changing the pod template (rollout)")
            body = kind.nest(expand_lists(template, change))
        elif already_applied(template, change):
            await self._record(rt, ctx, kind, fingerprint)  # this hash's rollout is already under way
            return
        elif kind is JOBS:
            await self._recreate(rt, ctx, workload, change, fingerprint, describe(triggers, recorded),
                                 f"strategy {strategy}, hash {fingerprint.hash[:12]}")
            return
        else:
            body = kind.nest(change if kind.patch_type == "strategic" else expand_lists(template, change))
        # One patch rolls and records: the hash can never be recorded without its rollout, or the other
        # way round. resourceVersion makes it fail (409, retried) if our view of the workload is stale.
        # (A Job is created first, under a name fixed by the hash: a retry finds it and only records.)
        patch = {"metadata": {"resourceVersion": _meta(workload)["resourceVersion"],
                              "annotations": record_annotations(fingerprint, rt.settings)}, **body}
        what = describe(triggers, recorded)
        labels = (ctx.namespace or "", kind.resource.kind)
        if rt.settings.dry_run:
            if job:
                await ctx.client.create(job, ctx.namespace, dry_run=True)
            await ctx.client.patch(kind.resource, ctx.name, patch, ctx.namespace, type=kind.patch_type,
                                   dry_run=True)
            self.remembered.of(ctx).dry_run = (fingerprint.hash, _prefixes(fingerprint), hashed_keys(rt.settings))
            await self._skip(ctx, kind, "dry_run", fingerprint, f"would roll: {what}")
            return
        try:
            if job:
                await _create_once(ctx, job)
            await ctx.client.patch(kind.resource, ctx.name, patch, ctx.namespace, type=kind.patch_type)
        except Conflict:
            rt.limiter.give_back()
            raise  # a stale view: the framework retries with the current object
        except ApiError as exc:
            reload_executed.labels("false", *labels).inc()
            await ctx.event("Warning", "ReloadFailed", f"{what}; rollout failed: {exc.status} {exc.reason}")
            raise
        reload_executed.labels("true", *labels).inc()
        log.info("rolled %s %s/%s: %s (strategy %s, hash %s)", kind.resource.kind, ctx.namespace, ctx.name,
                 what, strategy, fingerprint.hash[:12])
        await ctx.event("Normal", "Reloaded", f"{what}; rolling out (strategy {strategy}, "
                                              f"hash {fingerprint.hash[:12]})")

    # --- Jobs: deleted and created again, as Reloader does -------------------------------------------------

    async def _recreate(self, rt: Runtime, ctx: Context, job: Obj, change: Obj, fingerprint: Fingerprint,
                        what: str, how: str) -> None:
        """Reloader's ``ReCreateJobFromjob``: the Job deleted (propagation Background: its pods too) and
        created again from its own spec (``jobs.recreated``), with the strategy's change and the new
        hash. Its copy is created first as a dry run under a generated name, so a copy the API server
        would refuse leaves the Job in place; the delete carries the Job's uid and resourceVersion, so
        only the Job the decision was made on goes. Between the delete and the create the copy is kept
        (``Runtime.pending_jobs``) and created by the next reconcile of the key, or ``job_gone``, if the
        create failed."""
        meta, key = _meta(job), f"{ctx.namespace}/{ctx.name}"
        replacement = recreated(job, change, record_annotations(fingerprint, rt.settings))
        preconditions: dict[str, Any] = {"propagation_policy": PROPAGATION, "uid": meta.get("uid"),
                                         "resource_version": meta.get("resourceVersion")}
        if rt.settings.dry_run:
            await ctx.client.create(probe(replacement), ctx.namespace, dry_run=True)
            await ctx.client.delete(JOBS.resource, ctx.name, ctx.namespace, dry_run=True, **preconditions)
            self.remembered.of(ctx).dry_run = (fingerprint.hash, _prefixes(fingerprint), hashed_keys(rt.settings))
            await self._skip(ctx, JOBS, "dry_run", fingerprint, f"would delete and recreate the Job: {what}")
            return
        try:
            await ctx.client.create(probe(replacement), ctx.namespace, dry_run=True)
        except ApiError as exc:
            reload_executed.labels("false", ctx.namespace or "", JOBS.resource.kind).inc()
            await ctx.event("Warning", "ReloadFailed", f"{what}; not recreated: the API server refuses its copy "
                                                       f"(dry run: {exc.status} {exc.reason}), so the Job is left "
                                                       "as it is")
            raise
        rt.pending_jobs[key] = PendingJob(job, replacement, what, how)
        try:
            await ctx.client.delete(JOBS.resource, ctx.name, ctx.namespace, **preconditions)
        except Conflict:
            del rt.pending_jobs[key]
            rt.limiter.give_back()
            raise  # changed since: decided again on the current Job
        except NotFound:
            del rt.pending_jobs[key]
            return  # deleted by someone else meanwhile: not brought back
        await self._create_copy(rt, key, ctx.client, _emitter(ctx))

    async def _create_copy(self, rt: Runtime, key: str, client: Any, emit: Emit) -> bool:
        """Creates the pending copy of a deleted Job (False: a Job of that name exists, which stands).
        On a failure the copy stays pending and the error is raised, so that the key is retried with
        backoff."""
        pending = rt.pending_jobs[key]
        ns = _meta(pending.job).get("namespace") or ""
        try:
            created = await client.create(pending.job, ns)
        except AlreadyExists:
            del rt.pending_jobs[key]  # a Job of that name exists again: it stands
            log.warning("Job %s: a Job of that name exists; its pending copy is dropped", key)
            return False
        except ApiError as exc:
            reload_executed.labels("false", ns, JOBS.resource.kind).inc()
            await emit(pending.old, "Warning", "ReloadFailed", f"{pending.what}; the Job was deleted to be "
                                                               f"recreated and its copy not created yet "
                                                               f"({exc.status} {exc.reason}): retried")
            raise
        del rt.pending_jobs[key]
        reload_executed.labels("true", ns, JOBS.resource.kind).inc()
        log.info("recreated Job %s: %s (%s)", key, pending.what, pending.how)
        await emit(created, "Normal", "Reloaded", f"{pending.what}; Job deleted and recreated ({pending.how})")
        return True

    async def _copy_pending(self, rt: Runtime, ctx: Context, job: Obj) -> bool:
        """Whether this reconcile of a Job key was the creation of a pending copy (the cache still shows
        the deleted Job). A Job of another uid under that name ends the pending copy: it stands."""
        key = f"{ctx.namespace}/{ctx.name}"
        pending = rt.pending_jobs.get(key)
        if pending is None:
            return False
        if _meta(job).get("uid") != pending.old_uid:
            del rt.pending_jobs[key]
            return False
        # The cache still shows the deleted Job: its copy now. A Job of that name found there after all (the
        # delete's reply was lost before it was done, or the cache is behind a copy created meanwhile) is
        # decided again like any Job: the delete's uid precondition tells the two apart.
        return await self._create_copy(rt, key, ctx.client, _emitter(ctx))

    async def job_gone(self, request: Request, ctx: Any = None) -> None:
        """``on_deleted`` of Jobs: a deleted Job whose copy is still pending gets it now."""
        rt = self.operator.deps
        if request.key not in rt.pending_jobs:
            return

        async def emit(regarding: Obj, type: str, reason: str, note: str) -> None:
            await rt.events.emit(regarding, type, reason, note)
        await self._create_copy(rt, request.key, rt.writer, emit)

    async def _job_left_alone(self, ctx: Context, job: Obj) -> bool:
        """A Job annotated for Reloader that is not recreated here: one of a CronJob's (the CronJob is
        the workload), one being deleted, and those ``why_not_recreated`` names (a Warning, once)."""
        if owned_by_cronjob(job) or _meta(job).get("deletionTimestamp"):
            return True
        why = why_not_recreated(job)
        if why is None:
            return False
        mem = self.remembered.of(ctx)
        if mem.left_alone != why:
            mem.left_alone = why
            await ctx.event("Warning", REASON, why)
        return True

    async def _record(self, rt: Runtime, ctx: Context, kind: WorkloadKind, fingerprint: Fingerprint) -> None:
        """Remembers the hash on the workload's metadata: never touches the pod template."""
        if rt.settings.dry_run:
            self.remembered.of(ctx).dry_run = (fingerprint.hash, _prefixes(fingerprint), hashed_keys(rt.settings))
            return
        await ctx.client.patch(kind.resource, ctx.name, {"metadata": {"annotations": record_annotations(
            fingerprint, rt.settings)}}, ctx.namespace)
        log.info("recorded hash %s of %d object(s) for %s %s/%s (nothing rolled)", fingerprint.hash[:12],
                 len(fingerprint.sources), kind.resource.kind, ctx.namespace, ctx.name)

    async def _loop(self, rt: Runtime, ctx: Context, kind: WorkloadKind, fingerprint: Fingerprint,
                    changed: list[str]) -> None:
        """Breaks a rollout loop: records the change without rolling, and says so once."""
        settings = rt.settings
        await self._record(rt, ctx, kind, fingerprint)
        self.remembered.of(ctx).pacing.rolled_at = []  # the next change after this one rolls as usual
        reload_skipped.labels("loop", ctx.namespace or "", kind.resource.kind).inc()
        what = ", ".join(sorted(changed))
        message = (f"{what} changed within {settings.loop_window_seconds:g}s after each of the last "
                   f"{settings.loop_rollouts} rollouts: a rollout that changes its own configuration? This "
                   f"change is recorded but NOT rolled out (roll by hand if it must be: kubectl rollout restart); "
                   f"the next change rolls as usual (see --loop-rollouts)")
        log.warning("%s %s/%s: %s", kind.resource.kind, ctx.namespace, ctx.name, message)
        await ctx.event("Warning", "ReloadLoop", message)

    async def _missing(self, ctx: Context, kind: WorkloadKind, missing: list[Ref]) -> None:
        ids, mem = tuple(sorted(r.id for r in missing)), self.remembered.of(ctx)
        if mem.missing == ids:
            return  # said once; resyncs do not repeat it
        mem.missing = ids
        reload_skipped.labels("missing_source", ctx.namespace or "", kind.resource.kind).inc()
        await ctx.event("Warning", "ReloadSourceMissing", f"{', '.join(ids)} not found; no rollout until "
                                                          "it exists (see --reload-on-delete)")

    async def _pause_period(self, ctx: Context, kind: WorkloadKind, policy: Policy) -> float | None:
        """Reloader's ``deployment.reloader.stakater.com/pause-period`` in seconds; a value that is not a
        duration is reported once (and the usual debounce applies)."""
        if kind is not DEPLOYMENTS or not policy.pause_period:
            return None
        try:
            return duration(policy.pause_period)
        except ValueError as exc:
            await _invalid(ctx, self.remembered.of(ctx), "pause-period", policy.pause_period,
                           f"{exc}; using --debounce-seconds instead")
            return None

    async def _unknown(self, ctx: Context, kind: WorkloadKind, unknown: list[Ref]) -> None:
        """Warns (once per set) about objects a ``reload`` annotation names that do not exist: a typo, or
        an object not created yet. They do not hold back rollouts for the objects that exist."""
        ids, mem = tuple(sorted(r.id for r in unknown)), self.remembered.of(ctx)
        if mem.unknown == ids:
            return
        mem.unknown = ids
        if ids:
            await ctx.event("Warning", "ReloadSourceMissing", f"{', '.join(ids)} named in a reload annotation "
                                                              "not found; the others still trigger rollouts")

    async def _skip(self, ctx: Context, kind: WorkloadKind, reason: str, fingerprint: Fingerprint,
                    note: str | None = None) -> None:
        """Counts (and, with a note, reports) a due rollout not made — once per reason and hash."""
        mem = self.remembered.of(ctx)
        if mem.skipped == (reason, fingerprint.hash):
            return
        mem.skipped = (reason, fingerprint.hash)
        reload_skipped.labels(reason, ctx.namespace or "", kind.resource.kind).inc()
        if note:
            log.info("%s %s/%s: %s", kind.resource.kind, ctx.namespace, ctx.name, note)
            await ctx.event("Normal", "ReloadSkipped", f"{note} (hash {fingerprint.hash[:12]})")

    def _recorded(self, rt: Runtime, workload: Obj,
                  ctx: Context) -> tuple[str | None, dict[str, str] | None, str]:
        """The hash last acted on, its per-object prefixes and hashing mode (in a dry run: as remembered)."""
        recorded = self.remembered.of(ctx).dry_run
        if rt.settings.dry_run and recorded is not None:
            return recorded
        annotations = _meta(workload).get("annotations") or {}
        return (annotations.get(HASH), decode_sources(annotations.get(SOURCES)),
                annotations.get(HASHED_KEYS, "all"))


# --- pure helpers ------------------------------------------------------------------------------------------

async def _require_rollouts(manager: Manager) -> None:
    """--argo-rollouts on a cluster without Argo Rollouts is a setting error, not a cache that never syncs."""
    try:
        await manager.client.registry.resolve(f"{ROLLOUT.api_version}/{ROLLOUT.kind}")
    except NotFound:
        raise SettingError(f"--argo-rollouts: the API server serves no {ROLLOUT.api_version} {ROLLOUT.kind}; "
                           "install Argo Rollouts (its CRD) or leave the flag off") from None


async def _invalid(ctx: Context, mem: Remembered, annotation: str, value: str, message: str) -> None:
    """Says once (per value) that an annotation's value cannot be used, and what is done instead."""
    if mem.invalid.get(annotation) != value:
        mem.invalid[annotation] = value
        await ctx.event("Warning", "ReloadConfigInvalid", f"{annotation} {value!r}: {message}")


async def _refused_patterns(ctx: Context, mem: Remembered, policy: Policy) -> None:
    """Says (once per set) which regular expressions of the reload/exclude annotations are not used."""
    given = {n for names in (*policy.named.values(), *policy.excluded.values()) for n in names if is_pattern(n)}
    refused = sorted(f"{p[:80]} ({problem})" for p in given if (problem := pattern_problem(p)))
    if policy.dropped:
        refused.append(f"{len(policy.dropped)} more beyond the first {MAX_PATTERNS} expressions and "
                       f"{MAX_NAMES} names (not used)")
    if policy.over_budget:
        refused.append(f"{len(policy.over_budget)} beyond the namespace's {MAX_PER_NAMESPACE} distinct "
                       f"expressions (not used): {', '.join(p[:40] for p in policy.over_budget[:3])}")
    if refused:
        await _invalid(ctx, mem, "reload annotation", "; ".join(refused),
                       "these match nothing: expressions are RE2's (Go's) syntax, at most "
                       f"{MAX_PATTERNS} per workload and {MAX_PER_NAMESPACE} distinct ones per namespace")


def _emitter(ctx: Context) -> Emit:
    async def emit(regarding: Obj, type: str, reason: str, note: str) -> None:
        await ctx.event(type, reason, note, regarding=regarding)
    return emit


async def _create_once(ctx: Context, job: Obj) -> None:
    try:
        await ctx.client.create(job, ctx.namespace)
    except AlreadyExists:
        pass  # created by an attempt whose record then hit a conflict: this hash has its Job


def source_index(kind: WorkloadKind, names: Names = DEFAULT_NAMES) -> Callable[[Obj], tuple[str, ...]]:
    """Index of a workload informer: every object its template references or its annotations name
    (regular expressions as ``Kind/namespace/*``)."""
    def index(obj: Obj) -> tuple[str, ...]:
        meta = _meta(obj)
        ns = meta.get("namespace")
        keys = {f"{r.kind}/{ns}/{r.name}" for r in pod_template_refs(kind.template(obj))}
        for source_kind, named in workload_policy(kind, obj, names=names).named.items():
            keys |= {f"{source_kind}/{ns}/{'*' if is_pattern(n) else n}" for n in named}
        return tuple(sorted(keys))
    return index


def workload_policy(kind: WorkloadKind, workload: Obj, *, auto_all: bool = False,
                    names: Names = DEFAULT_NAMES) -> Policy:
    """The workload's policy, from its annotations or (Reloader's fallback) its pod template's."""
    template_meta = kind.template(workload).get("metadata") or {}
    return policy_of(_meta(workload).get("annotations"), auto_all=auto_all,
                     template_annotations=template_meta.get("annotations"), names=names)


def source_changed(event: Event) -> bool:
    """Watch predicate: a ConfigMap/Secret update matters if its data or reloader annotations changed."""
    if event.type != "modified" or event.old is None:
        return True
    return (value_digests(event.old) != value_digests(event.object)
            or _reloader_annotations(event.old) != _reloader_annotations(event.object))


def source_or_metadata_changed(event: Event) -> bool:
    """``source_changed``, or any label or annotation changed: with --resource-label-selector labels
    decide whether the object counts at all, and renamed annotations (--ignore-annotation, ...) need
    not carry Reloader's prefix."""
    if source_changed(event) or event.old is None:
        return True
    old, new = _meta(event.old), _meta(event.object)
    return (old.get("labels"), old.get("annotations")) != (new.get("labels"), new.get("annotations"))


def record_annotations(fingerprint: Fingerprint, settings: ReloaderSettings) -> dict[str, str]:
    return {HASH: fingerprint.hash, SOURCES: fingerprint.encode(), HASHED_KEYS: hashed_keys(settings)}


def hashed_keys(settings: ReloaderSettings) -> str:
    return "used" if settings.hash_used_keys_only else "all"


def describe(triggers: Mapping[Ref, str], recorded: Mapping[str, str]) -> str:
    """``ConfigMap nginx-conf changed (3f2a1b0c → 9d8e7f6a)``: names and hash prefixes only."""
    parts = [f"{ref.kind} {ref.name} {'deleted' if h == ABSENT else 'changed'} "
             f"({recorded.get(ref.id, '?')[:8]} → {h[:8]})" for ref, h in sorted(triggers.items(),
                                                                                key=lambda kv: kv[0].id)]
    return ", ".join(parts)


def _prefixes(fingerprint: Fingerprint) -> dict[str, str]:
    return {k: v[:PREFIX] for k, v in fingerprint.sources.items()}


def _reloader_annotations(obj: Obj) -> dict[str, str]:
    return {k: v for k, v in (_meta(obj).get("annotations") or {}).items() if k.partition("/")[0] in PREFIXES}


def _meta(obj: Obj) -> dict[str, Any]:
    return obj.get("metadata") or {}
