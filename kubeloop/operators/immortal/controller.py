"""The immortal operator: for each ImmortalContainer, one pod ``<name>-immortalpod`` that runs
``spec.image`` and is recreated whenever it terminates or is deleted.

The reconcile follows the article's loop — fetch the ImmortalContainer, build the pod definition, look
for the pod, create it if missing, update the status — with what the built-in controllers add to it:
fixed-name semantics like a StatefulSet's (wait for a terminating pod, never touch someone else's pod),
adoption of orphans, expectations, exponential backoff and conditions.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from kubeloop import (
    AlreadyExists,
    ApiError,
    BadRequest,
    Conflict,
    Context,
    Forbidden,
    Invalid,
    NotFound,
    Obj,
    Operator,
    Result,
    State,
    Watch,
    builtin,
    clock,
    ownership,
)
from kubeloop.operators.immortal import pods, status
from kubeloop.operators.immortal.backoff import Backoff, BackoffPolicy, ImmortalSettings
from kubeloop.operators.immortal.expectations import Expectations
from kubeloop.operators.immortal.models import ImmortalContainer

log = logging.getLogger("kubeloop.immortal")

# A pod of someone else's that holds our pod's name is outside our (label-selected) pod cache: look
# again this often.
NAME_CONFLICT_RECHECK = 5.0


@dataclass
class Remembered:
    """What the operator keeps per ImmortalContainer between reconciles, in memory: the recreation
    backoff, the failed creates in a row, and why the last pod went (the next start's reason)."""

    backoff: Backoff = field(default_factory=Backoff)
    create_failures: int = 0
    gone_reason: str | None = None


# A declaration, not state: each controller keeps its own Remembered per object (``State.of(ctx)``), so
# operator instances share nothing through it.
remembered = State(Remembered)


def build_operator(name: str = "immortal") -> Operator[ImmortalSettings]:
    """A fresh operator with expectations of its own (tests build their own, with their own settings)."""
    op = Operator(name, settings=ImmortalSettings)
    # Its pods get a controller reference with blockOwnerDeletion by hand (pods.desired_pod): the
    # generated RBAC then grants "update" on immortalcontainers/finalizers, which the
    # OwnerReferencesPermissionEnforcement admission plugin checks (OpenShift and hardened clusters).
    op.owner_references_to(ImmortalContainer)
    # Pods are watched through a label-selected Watch (below), not ``owns``, whose informer would cache
    # every pod of the cluster; so the writes ``owns`` implies are declared here.
    op.permission(builtin.POD, ["get", "create", "patch", "delete"])  # get: see name_taken
    immortal = Immortal(op)
    op.on_startup(immortal.fresh_start)
    op.reconcile(ImmortalContainer, watches=[
        Watch(builtin.POD, mapper=immortal.pod_events, label_selector=pods.POD_SELECTOR),
        Watch(builtin.NAMESPACE, mapper=lambda namespace: (), metadata_only=True),  # read from the cache only
    ])(immortal.reconcile)
    return op


class Immortal:
    """The reconciler of one operator instance, with what it keeps across objects: its creation
    expectations (and its settings, through the operator)."""

    def __init__(self, operator: Operator[ImmortalSettings]) -> None:
        self.operator = operator
        self.expectations = Expectations()

    def pod_events(self, pod: Obj) -> list[str]:
        """Maps any pod to the ImmortalContainer its fixed name belongs to — so an object whose pod name
        is taken by someone else's pod wakes up when that pod goes — and tells the expectations what the
        cache has seen."""
        meta = pod["metadata"]
        owner = pods.owner_name(meta["name"])
        if owner is None:
            return []
        key = f"{meta.get('namespace')}/{owner}"
        self.expectations.observe(key, meta.get("uid", ""))
        return [key]

    async def fresh_start(self, manager: Any) -> None:
        self.expectations.clear()  # a new run trusts only its own cache

    async def reconcile(self, ic: ImmortalContainer, ctx: Context) -> Result | None:
        # The framework never runs this on a cache without our last status write (skip_own_writes): the
        # counters computed below start from the status this process last wrote.
        owner = ctx.raw
        if ic.metadata.deletionTimestamp:
            return None  # the garbage collector removes the pod
        # The pod definition, then the pod of that name as the cache sees it.
        desired = pods.desired_pod(ic, owner)
        pod = await ctx.cache.get(builtin.POD, desired["metadata"]["name"], ctx.namespace,
                                  label_selector=pods.POD_SELECTOR)

        if pod is not None and not pods.controlled_by(pod, owner):
            if pods.is_orphan_of(pod, owner) and not pods.is_terminating(pod):
                return await adopt(ctx, pod)
            if pods.is_from_previous_incarnation(pod, owner) or pods.is_orphan_of(pod, owner):
                return await write_status(ic, ctx, None, status.no_pod(
                    "WaitingForTermination", f"pod {pods.pod_name(ctx.name)} of a previous owner is going away"))
            return await name_conflict(ic, ctx, pod)

        if pod is not None:
            self.expectations.observe(ctx.request.key, pods.uid(pod))
            if pods.is_terminating(pod):  # fixed name: the new pod must wait for the old one to be gone
                return await write_status(ic, ctx, pod, status.going(
                    pod, "PodTerminating", "WaitingForTermination", "waiting for the old pod to be gone"))
            if pods.is_terminal(pod):
                return await delete_pod(ic, ctx, pod, pods.end_reason(pod))
            if not pods.is_current(pod, desired):
                return await delete_pod(ic, ctx, pod, "TemplateChanged")
            return await keep(ic, ctx, pod, self.policy)

        # No pod: create it — unless the cache has not caught up, the namespace is going away, or we back off.
        if (behind := self.expectations.waiting(ctx.request.key)) > 0:
            return Result(requeue_after=behind)
        if await namespace_terminating(ctx):
            return await write_status(ic, ctx, None, status.no_pod(
                "NamespaceTerminating", f"namespace {ctx.namespace} is being deleted"))
        policy, backoff = self.policy, backoff_of(ctx)
        if not user_asked(ctx) and (wait := backoff.wait(policy, clock.monotonic())) > 0:
            return await write_status(ic, ctx, None, status.no_pod("BackOff", (
                f"the pod was recreated {backoff.streak} times in a row; waiting "
                f"{policy.delay(backoff.streak):g}s after the last start")), then=Result(requeue_after=wait))
        return await self.create_pod(ic, ctx, desired)

    @property
    def policy(self) -> BackoffPolicy:
        """The recreation backoff of this instance's settings (read when used: ``kubeloop run`` sets them
        after the operator is built)."""
        return self.operator.settings.backoff

    async def create_pod(self, ic: ImmortalContainer, ctx: Context, desired: Obj) -> Result | None:
        name = desired["metadata"]["name"]
        try:
            pod = await ctx.client.create(desired, ctx.namespace, resource=builtin.POD)
        except AlreadyExists:
            return await name_taken(ic, ctx, name)
        except (BadRequest, Forbidden, Invalid, NotFound) as exc:  # quota, admission, a bad template, …
            return await create_failed(ic, ctx, name, exc, self.policy)
        self.expectations.expect(ctx.request.key, pods.uid(pod))
        remembered.of(ctx).create_failures = 0
        backoff_of(ctx).started(clock.monotonic(), counts=not user_asked(ctx))
        await ctx.event("Normal", "SuccessfulCreate", f"Created pod: {name}")
        return await write_status(ic, ctx, pod, status.running(pod))


# --- steps ---------------------------------------------------------------------------------------------


async def create_failed(ic: ImmortalContainer, ctx: Context, name: str, exc: ApiError,
                        policy: BackoffPolicy) -> Result | None:
    """The API refused the pod: say why, and try again after a backoff that grows with each refusal."""
    mem = remembered.of(ctx)
    mem.create_failures += 1
    await ctx.event("Warning", "FailedCreate", f"Error creating: {exc.message}")
    return await write_status(ic, ctx, None, status.no_pod(
        "FailedCreate", f"cannot create pod {name}", failure=("FailedCreate", exc.message)),
        then=Result(requeue_after=max(policy.initial, policy.delay(mem.create_failures))))


async def delete_pod(ic: ImmortalContainer, ctx: Context, pod: Obj, why: str) -> Result | None:
    """Deletes our pod — this very one (UID precondition) — so that it can be started again."""
    name = pod["metadata"]["name"]
    try:
        await ctx.client.delete(builtin.POD, name, ctx.namespace, uid=pods.uid(pod))
    except NotFound:
        pass
    except Conflict:
        return None  # another pod holds the name by now; its event brings us back
    else:
        await ctx.event("Normal", "SuccessfulDelete", f"Deleted pod: {name} ({why})")
    remembered.of(ctx).gone_reason = why
    progress = "ReplacingPod" if why == "TemplateChanged" else "RecreatingPod"
    return await write_status(ic, ctx, pod, status.going(pod, "PodGone", progress,
                                                         f"deleted pod {name}: {why}"))


async def keep(ic: ImmortalContainer, ctx: Context, pod: Obj, policy: BackoffPolicy) -> Result | None:
    """Our pod runs the current template: report it, and forgive past failures once it is healthy."""
    return await write_status(ic, ctx, pod, status.running(pod), then=forgive_when_healthy(ctx, pod, policy))


async def adopt(ctx: Context, pod: Obj) -> Result | None:
    """An orphan with our name label (e.g. left by an ``--cascade=orphan`` delete): make it ours."""
    try:
        await ctx.client.patch(builtin.POD, pod["metadata"]["name"], ownership.adoption_patch(pod, ctx.raw),
                               ctx.namespace, type="json")
    except (Conflict, Invalid, NotFound):
        return None  # it changed meanwhile (the patch is guarded); its event brings us back
    remembered.of(ctx).gone_reason = "Adopted"
    log.info("adopted pod %s", pod["metadata"]["name"])
    return None  # the pod's update event brings us back to count it


async def name_taken(ic: ImmortalContainer, ctx: Context, name: str) -> Result | None:
    """The create said the name is taken. Our own pod the cache has not seen yet: its event brings us
    back. A pod without our label (so outside the cache): a conflict, looked at again in a while, since
    no event of that pod reaches us."""
    try:
        pod = await ctx.client.get(builtin.POD, name, ctx.namespace)
    except NotFound:
        return Result(requeue_after=0.1)  # gone in between: try again
    if pods.controlled_by(pod, ctx.raw) or pods.is_orphan_of(pod, ctx.raw):
        return None
    return await name_conflict(ic, ctx, pod, then=Result(requeue_after=NAME_CONFLICT_RECHECK))


async def name_conflict(ic: ImmortalContainer, ctx: Context, pod: Obj,
                        then: Result | None = None) -> Result | None:
    """Someone else's pod has our name: never delete or overwrite it; say so, and wait for it to go."""
    message = (f"pod {pod['metadata']['name']} exists and is not controlled by this ImmortalContainer; "
               "it is left alone")
    if not _has_failure(ctx.raw, "NameConflict"):
        await ctx.event("Warning", "NameConflict", message)
    return await write_status(ic, ctx, None, status.no_pod("NameConflict", message,
                                                            failure=("NameConflict", message)), then=then)


# --- reading and writing -------------------------------------------------------------------------------


async def namespace_terminating(ctx: Context) -> bool:
    """Pods cannot be created in a namespace being deleted; do not try (read from the cache)."""
    namespace = await ctx.cache.get(builtin.NAMESPACE, ctx.namespace or "", metadata_only=True)
    return bool(namespace and namespace["metadata"].get("deletionTimestamp"))


def forgive_when_healthy(ctx: Context, pod: Obj, policy: BackoffPolicy) -> Result | None:
    """Resets the backoff once the pod has been Ready long enough, or looks again when it will have been."""
    backoff, since = backoff_of(ctx), pods.ready_since(pod)
    if backoff.streak == 0 or since is None:
        return None
    ready_for = (clock.now() - since).total_seconds()
    stable_after = policy.stable_after
    if ready_for >= stable_after:
        backoff.healthy()
        return None
    return Result(requeue_after=stable_after - ready_for)


def backoff_of(ctx: Context) -> Backoff:
    return remembered.of(ctx).backoff


def user_asked(ctx: Context) -> bool:
    """Is the next start what the user asked for (the first pod, a new template) rather than a recovery?
    Those are never delayed and do not count towards the backoff."""
    return start_reason(ctx) in ("Created", "TemplateChanged")


def start_reason(ctx: Context) -> str:
    """Why the pod about to be counted was started: the reason its predecessor went away."""
    current = ctx.raw.get("status") or {}
    return remembered.of(ctx).gone_reason or ("PodDeleted" if current.get("startTimes") else "Created")


async def write_status(ic: ImmortalContainer, ctx: Context, pod: Obj | None, report: status.Report,
                       then: Result | None = None) -> Result | None:
    """Writes the status this step leads to (if anything changed) and returns ``then``, what the
    reconcile returns."""
    current = ctx.raw.get("status") or {}
    wanted = status.compute(current, ic.metadata.generation, pod, report, start_reason(ctx))
    diff = status.changes(current, wanted)
    if not diff:
        return then
    # Guarded: computed from the version we read (startTimes + 1), so it must apply to that version only.
    await ctx.patch_status(diff, guarded=True)
    if "podUID" in diff:
        remembered.of(ctx).gone_reason = None
    return then


def _has_failure(obj: Obj, reason: str) -> bool:
    return any(c.get("type") == "ReplicaFailure" and c.get("reason") == reason and c.get("status") == "True"
               for c in (obj.get("status") or {}).get("conditions") or [])


operator = build_operator()  # the default instance: what ``kubeloop run immortal`` and the docs use
