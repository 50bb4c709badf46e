"""copyrator: copies labelled ConfigMaps and consenting Secrets from source namespaces into every
namespace in scope, level-based.

One controller, primary CopyratorRule. Anything that can change a rule's desired copies wakes it:
the rule itself, any namespace (created, relabelled, terminating), a source (changed, relabelled,
deleted), one of its copies (edited or deleted by hand), an object blocking one of its copies, and a
periodic resync. Each reconcile computes the full desired set and diffs it with the copies that exist.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from kubeloop import (
    AccessReviewer,
    AuthorGuard,
    Context,
    ControllerSpec,
    Event,
    Manager,
    Operator,
    Request,
    Watch,
    builtin,
    cooperatively,
)
from kubeloop.operators.copyrator import metrics
from kubeloop.operators.copyrator.authority import CONDITION, Screened, screen
from kubeloop.operators.copyrator.boundary import DOMAIN, UNTRUSTED, Boundary
from kubeloop.operators.copyrator.foreign import EVENT_REASON, describe, foreign_annotations
from kubeloop.operators.copyrator.models import MAX_LISTED, MAX_MESSAGE, MAX_NAMESPACES_LISTED, CopyratorRule
from kubeloop.operators.copyrator.plan import Plan, planning
from kubeloop.operators.copyrator.receiving import LIMITED
from kubeloop.operators.copyrator.settings import CopyratorSettings
from kubeloop.operators.copyrator.sync import Outcome, Sync, collect_leftovers
from kubeloop.operators.copyrator.world import INDEXES, World, namespace_changed

log = logging.getLogger("kubeloop.copyrator")
FINALIZER = f"{DOMAIN}/copies"
MAX_EVENTS = 10  # conflict events per reconcile


class CopyFailed(Exception):
    """Some copies could not be written; the rule is retried with backoff. The message is safe to log."""


def rule_field_selector(settings: CopyratorSettings) -> str | None:
    """``--rule-name`` (or the article chart's ``--rule-type``) as a field selector on the rules."""
    return f"metadata.name={settings.rule}" if settings.rule else None


def single_rule(spec: ControllerSpec, settings: CopyratorSettings) -> ControllerSpec:
    """The rule informer honours ``--rule-name`` (the article's single-rule mode): a field selector."""
    if spec.resource is CopyratorRule:
        return replace(spec, field_selector=rule_field_selector(settings))
    return spec


AUTHOR_ANNOTATION = f"{DOMAIN}/author"  # --check-author: the record op.record_author keeps (a renewed one counts)


def rule_changed(event: Event) -> bool:
    """Rule fields (generation), its author record, or deletion; not our own status writes."""
    if event.type != "modified" or event.old is None:
        return True
    old, new = event.old.get("metadata", {}), event.object.get("metadata", {})
    return (old.get("generation") != new.get("generation")
            or old.get("deletionTimestamp") != new.get("deletionTimestamp")
            or (old.get("annotations") or {}).get(AUTHOR_ANNOTATION)
            != (new.get("annotations") or {}).get(AUTHOR_ANNOTATION))


@dataclass
class Deps:
    """What one run of the operator shares (``ctx.deps``): the world on the manager's cache, and with
    --check-author the SubjectAccessReview client."""

    world: World
    reviewer: AccessReviewer | None


async def build_deps(manager: Manager, settings: CopyratorSettings) -> Deps:
    """``Operator(deps=...)``: the World on the controllers' informers, its boundary from the settings."""
    home = own_namespace(settings)
    boundary = Boundary.from_settings(settings, home)
    world = await World.bind(manager.client, manager.cache, rule_field_selector(settings), boundary=boundary,
                             max_copies=settings.max_copies_per_namespace)
    if home in UNTRUSTED and not boundary.trusts_namespace(home):
        log.warning("copyrator runs in namespace %s, which many may write to: rules there are not trusted "
                    "(give --trusted-namespace %s if only admins write there)", home, home)
    return Deps(world, AccessReviewer(manager.client) if settings.check_author else None)


def build_operator(name: str = "copyrator") -> Operator[CopyratorSettings, Deps]:
    """A fresh operator, each run with a world of its own (tests build their own, with their own settings)."""
    op = Operator(name, finalizer_domain=DOMAIN, settings=CopyratorSettings, deps=build_deps)
    # Copies are written with plain verbs (create, get, update, patch, delete) rather than owned/applied.
    for resource in (builtin.CONFIG_MAP, builtin.SECRET):
        op.permission(resource, ["get", "create", "update", "patch", "delete"])
    # --check-author: the rules' authors recorded by our own webhook, asked about with SubjectAccessReviews.
    copyrator = Copyrator(op, op.record_author(CopyratorRule, when=lambda settings: settings.check_author))
    op.configure(single_rule)
    op.reconcile(CopyratorRule, resync=300.0, predicates=[rule_changed], watches=[
        Watch(builtin.NAMESPACE, mapper=copyrator.all_rules, predicates=(namespace_changed,)),
        Watch(builtin.CONFIG_MAP, mapper=copyrator.mapper("ConfigMap"), all_namespaces=True, indexes=INDEXES),
        Watch(builtin.SECRET, mapper=copyrator.mapper("Secret"), all_namespaces=True, indexes=INDEXES),
    ])(copyrator.reconcile)
    op.finalize(CopyratorRule, finalizer=FINALIZER)(copyrator.cleanup)
    op.on_deleted(CopyratorRule)(copyrator.collect)
    # Reflector's and replicator's annotations are reported on the objects carrying them (``foreign``).
    for kind in (builtin.CONFIG_MAP, builtin.SECRET):
        op.reconcile(kind, predicates=[foreign_changed], resync=None,
                     name=f"{name}-foreign-{kind.plural}")(report_foreign)
    return op


def foreign_changed(event: Event) -> bool:
    """An object now carrying Reflector's or replicator's annotations, or carrying other ones."""
    if event.type == "deleted":
        return False
    found = foreign_annotations(event.object)
    return bool(found) and (event.old is None or foreign_annotations(event.old) != found)


async def report_foreign(obj: dict[str, Any], ctx: Context) -> None:
    """A Warning on the object: copyrator does not read these annotations; its own spelling."""
    found = foreign_annotations(obj)
    if found:
        await ctx.event("Warning", EVENT_REASON, describe(found))


class Copyrator:
    """The handlers of one operator instance. What they keep between calls is the run's ``Deps``: the
    World (its informers and which rules a blocked copy must wake)."""

    def __init__(self, operator: Operator[CopyratorSettings, Deps], guard: AuthorGuard) -> None:
        self.operator = operator
        self.guard = guard  # the author records, used with --check-author

    # --- event mappers: the current run's world ---------------------------------------------------

    def all_rules(self, obj: dict[str, Any]) -> list[str]:
        return self.operator.deps.world.all_rules(obj)

    def mapper(self, kind: str) -> Callable[[dict[str, Any]], list[str]]:
        return lambda obj: self.operator.deps.world.rules_for(kind, obj)

    # --- handlers ---------------------------------------------------------------------------------

    async def reconcile(self, rule: CopyratorRule, ctx: Context[Deps]) -> None:
        """The article's loop as a diff: desired copies of every source in every namespace, against the
        copies that exist. The plan is computed in slices (``cooperatively``): a rule may meet thousands
        of sources, and the loop serves other tenants' rules, watches and probes between slices."""
        world, reviewer = ctx.deps.world, ctx.deps.reviewer
        if rule.problems():
            return await reject(rule, rule.problems(), ctx)
        screened = None
        # --check-author, except for rules in trusted namespaces: only admins write there (that is what
        # trusting means), and the webhook never sees the operator's own namespace (its namespaceSelector).
        if reviewer is not None and not world.boundary.trusts_namespace(str(rule.metadata.namespace)):
            screened = await screen(self.guard, reviewer, rule, ctx.raw, world.candidates(rule),
                                    world.namespaces(), world.boundary, world.reception(), world.plans)
            if screened.desired is None:
                return await refuse(screened, ctx)
            desired = screened.desired
        else:
            desired = await cooperatively(planning(rule, world.candidates(rule), world.namespaces(), world.boundary,
                                                   world.reception(), world.plans))
        outcome = await Sync(ctx.client, rule, world.get, world.boundary, world.hashes).run(
            desired, world.copies_of(rule.key))
        world.set_blocked(rule.key, {place for place, *_ in outcome.conflicts})
        world.set_limited(rule, {ns for ns, reason, _ in desired.declined if reason == LIMITED})
        await report(rule, desired, outcome, ctx, screened)
        if outcome.errors:
            raise CopyFailed(f"{len(outcome.errors)} copies failed: " + "; ".join(outcome.errors[:3]))

    async def cleanup(self, rule: CopyratorRule, ctx: Context[Deps]) -> None:
        """The rule is being deleted: its copies go (or are released with ``orphanOnDelete``)."""
        world = ctx.deps.world
        outcome = await Sync(ctx.client, rule, world.get, world.boundary).run(Plan(), world.copies_of(rule.key))
        world.forget(rule.key)
        world.set_limited(rule, set())
        if outcome.errors:
            raise CopyFailed(f"{len(outcome.errors)} copies could not be removed: "
                             + "; ".join(outcome.errors[:3]))

    async def collect(self, request: Request, ctx: Context | None = None) -> None:
        """A rule vanished without its cleanup (finalizer removed by hand): its copies are garbage."""
        world = self.operator.deps.world
        world.forget(request.key)
        if not world.watches_rule(request.key, self.operator.settings.rule):
            return
        await collect_leftovers(world.client, world.copies_of(request.key))


def own_namespace(settings: CopyratorSettings) -> str | None:
    """``--operator-namespace``/``POD_NAMESPACE``, else the ServiceAccount's namespace in a pod."""
    if settings.operator_namespace:
        return str(settings.operator_namespace)
    path = Path("/var/run/secrets/kubernetes.io/serviceaccount/namespace")
    if not path.is_file():
        return None  # out of a cluster: no namespace of its own
    return path.read_text().strip() or None


# --- status and events ---------------------------------------------------------------------------


async def reject(rule: CopyratorRule, problems: list[str], ctx: Context) -> None:
    """A rule the schema could not fully check: say so, and leave its existing copies as they are
    (a typo must not delete copies across the cluster)."""
    message = "; ".join(problems)
    previous = (ctx.raw.get("status") or {}).get("observedGeneration")
    if previous != rule.metadata.generation:
        await ctx.event("Warning", "InvalidRule", message)
    await ctx.patch_status({
        "observedGeneration": rule.metadata.generation,
        "conditions": ctx.condition("Degraded", True, "InvalidRule", message,
                                    conditions_list=ctx.condition("Ready", False, "InvalidRule", message)),
    })


async def refuse(screened: Screened, ctx: Context) -> None:
    """--check-author and no valid author record: copy nothing new, keep what exists, say how to fix."""
    allowed, reason, message = screened.condition()
    await _author_event(screened, ctx)
    await ctx.patch_status({
        "observedGeneration": ctx.raw.get("metadata", {}).get("generation"),
        "conditions": ctx.condition(CONDITION, allowed, reason, message, conditions_list=ctx.condition(
            "Ready", False, reason, message)),
    })


async def _author_event(screened: Screened, ctx: Context) -> None:
    """A Warning when the author's standing changes (not on every resync)."""
    allowed, reason, message = screened.condition()
    before = [c for c in ((ctx.raw.get("status") or {}).get("conditions") or []) if c.get("type") == CONDITION]
    if not allowed and (not before or before[0].get("message") != message):
        await ctx.event("Warning", reason, message)


async def report(rule: CopyratorRule, desired: Plan, outcome: Outcome, ctx: Context,
                 screened: Screened | None = None) -> None:
    conflicts = _conflicts(desired, outcome)
    declined = [{"namespace": ns, "reason": reason, "message": message[:MAX_MESSAGE]}
                for ns, reason, message in sorted(desired.declined)]
    await _announce(rule, conflicts, outcome, ctx)
    await _announce_declined(rule, declined, ctx)
    ready, degraded = _conditions(conflicts, outcome, ctx, len(declined))
    conditions = ctx.condition("Degraded", *degraded, conditions_list=ctx.condition("Ready", *ready))
    if screened is not None:
        await _author_event(screened, ctx)
        conditions = ctx.condition(CONDITION, *screened.condition(), conditions_list=conditions)
    by_namespace: dict[str, list[str]] = defaultdict(list)
    for _, ns, name in sorted(outcome.in_place, key=lambda p: (p[1], p[2])):
        by_namespace[ns].append(name)
    await ctx.patch_status({
        "observedGeneration": rule.metadata.generation,
        "sourceCount": len(desired.sources),
        "sources": desired.sources[:MAX_LISTED],
        "copyCount": len(outcome.in_place),
        "copies": [{"namespace": ns, "names": names[:MAX_LISTED]}
                   for ns, names in list(by_namespace.items())[:MAX_NAMESPACES_LISTED]],
        "conflictCount": len(conflicts),
        "conflicts": conflicts[:MAX_LISTED],
        "declinedCount": len(declined),
        "declined": declined[:MAX_LISTED],
        "skippedSources": [{"source": s, "reason": r} for s, r in desired.skipped[:MAX_LISTED]],
        "foreignAnnotations": [{"source": k, "message": m[:MAX_MESSAGE]} for k, m in desired.foreign[:MAX_LISTED]],
        "conditions": conditions,
    })


def _conflicts(desired: Plan, outcome: Outcome) -> list[dict[str, Any]]:
    out = [{"namespace": ns, "name": name, "source": source, "reason": reason, "message": message[:MAX_MESSAGE]}
           for (_, ns, name), source, reason, message in outcome.conflicts]
    for ns, name, source in desired.shadowed:
        winner = desired.copies[(ns, name)]["metadata"]["annotations"][f"{DOMAIN}/source"]
        out.append({"namespace": ns, "name": name, "source": source, "reason": "ShadowedBySource",
                    "message": f"{winner} makes this copy (earlier in the rule's namespace list)"})
    for ns, name, source in desired.on_source:
        out.append({"namespace": ns, "name": name, "source": source, "reason": "SourceInPlace",
                    "message": f"{ns}/{name} is itself a source of this rule: sources are never written over"})
    return sorted(out, key=lambda c: (c["namespace"], c["name"], c["source"]))


async def _announce(rule: CopyratorRule, conflicts: list[dict[str, Any]], outcome: Outcome,
                    ctx: Context) -> None:
    """Events for what changed: new conflicts (once each, not on every resync) and a write summary."""
    before = {(c.get("namespace"), c.get("name"), c.get("reason"))
              for c in ((ctx.raw.get("status") or {}).get("conflicts") or [])}
    new = [c for c in conflicts if (c["namespace"], c["name"], c["reason"]) not in before]
    metrics.conflicts.labels(rule.copy_kind.lower()).inc(len(new))
    for c in new[:MAX_EVENTS]:
        await ctx.event("Warning", "Conflict", f"{rule.copy_kind} {c['namespace']}/{c['name']} "
                                               f"(from {c['source']}): {c['reason']}: {c['message']}")
    if outcome.errors:
        await ctx.event("Warning", "CopyFailed", f"{len(outcome.errors)} failed, retrying: "
                                                 + "; ".join(outcome.errors[:3]))
    if outcome.changed:
        await ctx.event("Normal", "Synced", f"{rule.copy_kind} copies: {outcome.created} created, "
                                            f"{outcome.updated} updated, {outcome.deleted} removed")


async def _announce_declined(rule: CopyratorRule, declined: list[dict[str, Any]], ctx: Context) -> None:
    """A Warning for each namespace newly declining the rule's copies (not on every resync)."""
    before = {(d.get("namespace"), d.get("reason")) for d in ((ctx.raw.get("status") or {}).get("declined") or [])}
    for d in [d for d in declined if (d["namespace"], d["reason"]) not in before][:MAX_EVENTS]:
        await ctx.event("Warning", d["reason"], f"no {rule.copy_kind} copies in namespace {d['namespace']}: "
                                                f"{d['message']}")


def _conditions(conflicts: list[dict[str, Any]], outcome: Outcome, ctx: Context,
                declined: int = 0) -> tuple[tuple[bool, str, str], tuple[bool, str, str]]:
    """Ready: the rule converged as far as its policy allows (False while writes fail and retry).
    Degraded: some wanted copy is not in place (conflicts or failures). Namespaces that decline the
    rule's copies are said, not counted as a fault: that is their owners' choice."""
    summary = f"{len(outcome.in_place)} copies in place" + (
        f"; {declined} namespaces decline copies (status.declined)" if declined else "")
    if outcome.errors:
        failed = f"{len(outcome.errors)} copies failed (retrying): " + "; ".join(outcome.errors[:2])
        return (False, "CopyFailed", failed), (True, "CopyFailed", failed)
    if conflicts:
        blocked = f"{summary}; {len(conflicts)} blocked by conflicts"
        return (True, "Synced", blocked), (True, "Conflicts", blocked)
    return (True, "Synced", summary), (False, "AsExpected", summary)


operator = build_operator()  # the default instance: what ``kubeloop run copyrator`` and the docs use
