"""The ChaosAgent reconciler. The article's ``while True: … time.sleep(pause)`` becomes level-based:
each reconcile undoes what is no longer wanted, plays a round if one is due, records the round in
status, and asks to be woken when the next one is due (``Result(requeue_after=…)``).

    pods, deployments, configmaps = list_objects(outside excluded namespaces)
    if tantrumMode: randomly_kill_pods(pods, minRunningPods, eagerness)
    if cancerMode:  randomly_scale_deployments(deployments, eagerness)
    if ipsumMode:   randomly_write_configmaps(configmaps, eagerness)
    requeue after pauseSeconds
"""

from __future__ import annotations

import asyncio
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfoNotFoundError

from kubeloop import Client, Context, Obj, Result, builtin, selectors
from kubeloop.operators.blackadder import cancer, ipsum, marks, report, schedule, tantrum
from kubeloop.operators.blackadder.chaos import Action, Round
from kubeloop.operators.blackadder.models import ChaosAgent, ChaosAgentSpec, ChaosAgentStatus
from kubeloop.operators.blackadder.safety import Settings
from kubeloop.operators.blackadder.targets import list_targets, scope_of


@dataclass
class Clock:
    """Where the agent's rounds stand, as recorded in status. A reconcile never reads a status older
    than this process's last write (the framework holds it until the cache has that write), so a quick
    second reconcile never replays a round."""

    round: int = 0
    last: datetime | None = None
    seed: int | None = None

    @classmethod
    def load(cls, status: ChaosAgentStatus | None) -> Clock:
        return cls(status.round or 0, status.lastRoundTime, status.seed) if status else cls()


async def reconcile_agent(agent: ChaosAgent, ctx: Context, settings: Settings) -> Result:
    spec, now = agent.spec, schedule.utcnow()
    label = marks.agent_label(ctx.name)
    pause = timedelta(seconds=spec.pauseSeconds)
    undone, expiry = await undo_unwanted(ctx.client, settings, spec, label, now)
    if undone:
        await report.announce(ctx.events, ctx.raw, undone, "restored")
    clock = Clock.load(agent.status)
    idle = why_idle(spec, now)
    if idle is not None:
        await write_status(ctx, agent, clock, None, undone, settings, ("False", *idle))
        return wake_up(now, now + pause, expiry)
    due = schedule.next_round_at(clock.last, spec.pauseSeconds, now)
    if due > now:
        await write_status(ctx, agent, clock, due, undone, settings, active(spec))
        return wake_up(now, due, expiry)
    rnd = Round(ctx.client, settings, ctx.name, label, clock.round + 1, seed_of(spec, clock), now,
                spec.dryRun, asyncio.Semaphore(settings.max_concurrent_actions))
    actions = await play_round(rnd, spec)
    report.ROUNDS.labels(ctx.name).inc()
    await report.announce(ctx.events, ctx.raw, actions, f"round {rnd.number}")
    clock = Clock(rnd.number, now, rnd.seed)
    await write_status(ctx, agent, clock, now + pause, undone + actions, settings, active(spec))
    changed = any(a.changed and not a.dry_run and a.mode in ("cancer", "ipsum") for a in actions)
    ttl = spec.restoreAfterSeconds
    return wake_up(now, now + pause, expiry, now + timedelta(seconds=ttl) if ttl and changed else None)


def seed_of(spec: ChaosAgentSpec, clock: Clock) -> int:
    """The spec's seed, else the one recorded in status, else a new one (recorded by this round), so
    every round stays replayable."""
    if spec.seed is not None:
        return spec.seed
    return clock.seed if clock.seed is not None else secrets.randbelow(2**31)


def wake_up(now: datetime, *moments: datetime | None) -> Result:
    """Requeue for the soonest of: the next round, the next restoreAfterSeconds expiry."""
    soonest = min(m for m in moments if m is not None)
    return Result(requeue_after=max((soonest - now).total_seconds(), 0.05))


async def play_round(rnd: Round, spec: ChaosAgentSpec) -> list[Action]:
    """The article's loop body: list what is outside the excluded namespaces, then let each mode loose."""
    client, settings = rnd.client, rnd.settings
    scope = await scope_of(client, spec, settings)
    nothing: list[Obj] = []

    async def listing(on: bool, res: Any, selector: Any = None, *fields: str) -> list[Obj]:
        if not on:
            return nothing
        return await list_targets(client, res, scope, settings, label_selector=selectors.to_query(selector),
                                  field_selector=fields)
    pods, deployments, hpas, configmaps = await asyncio.gather(
        listing(spec.tantrumMode, builtin.POD, spec.podSelector, "status.phase=Running"),
        listing(spec.cancerMode, builtin.DEPLOYMENT, spec.deploymentSelector),
        listing(spec.cancerMode, builtin.HORIZONTAL_POD_AUTOSCALER),
        listing(spec.ipsumMode, builtin.CONFIG_MAP, spec.configMapSelector))
    actions: list[Action] = []
    if spec.tantrumMode:
        actions += await tantrum.randomly_kill_pods(rnd, pods, spec)
    if spec.cancerMode:
        held = await cancer.held_extra_replicas(client, rnd.label)
        budget = cancer.round_budget(spec.maxExtraReplicasPerRound, spec.maxExtraReplicas, held)
        actions += await cancer.randomly_scale_deployments(rnd, deployments, hpas, spec.eagerness, budget)
    if spec.ipsumMode:
        actions += await ipsum.randomly_write_configmaps(rnd, configmaps, spec.eagerness)
    return actions


async def undo_unwanted(client: Client, settings: Settings, spec: ChaosAgentSpec, label: str,
                        now: datetime) -> tuple[list[Action], datetime | None]:
    """Restores what a switched-off mode changed, and whatever has outlived restoreAfterSeconds;
    also tells when the next held object expires."""
    ttl = spec.restoreAfterSeconds
    pending: list[datetime] = []

    def expired(obj: Obj) -> bool:
        if ttl is None:
            return False
        since = marks.changed_at(obj)
        if since is None or (now - since).total_seconds() >= ttl:
            return True
        pending.append(since + timedelta(seconds=ttl))
        return False

    out: list[Action] = []
    if not spec.cancerMode or ttl is not None:
        out += await cancer.restore_deployments(client, label, lambda d: not spec.cancerMode or expired(d))
    if not spec.ipsumMode or ttl is not None:
        out += await ipsum.restore_configmaps(client, settings, label,
                                              lambda c: not spec.ipsumMode or expired(c))
    return out, min(pending, default=None)


async def restore_everything(agent: ChaosAgent, ctx: Context, settings: Settings) -> None:
    """The finalizer: an agent that goes away leaves the cluster as it found it."""
    label = marks.agent_label(ctx.name)
    undone = await cancer.restore_deployments(ctx.client, label, lambda _: True)
    undone += await ipsum.restore_configmaps(ctx.client, settings, label, lambda _: True)
    await ipsum.delete_backups(ctx.client, settings, label)
    await report.announce(ctx.events, ctx.raw, undone, "agent deleted, restored")


def why_idle(spec: ChaosAgentSpec, now: datetime) -> tuple[str, str] | None:
    """(reason, message) when no round may run now: suspended, an excluded time, or a timezone we
    cannot read (never guess when chaos is allowed)."""
    if spec.suspend:
        return "Suspended", "spec.suspend is true"
    try:
        window = schedule.excluded_window(now, spec.excludedWeekdays, spec.excludedTimesOfDay, spec.timezone)
    except (ZoneInfoNotFoundError, ValueError) as exc:
        return "InvalidTimezone", f"cannot use timezone {spec.timezone!r}: {exc}"
    return ("ExcludedTime", window) if window else None


def active(spec: ChaosAgentSpec) -> tuple[str, str, str]:
    modes = [m for m, on in (("tantrum", spec.tantrumMode), ("cancer", spec.cancerMode),
                             ("ipsum", spec.ipsumMode)) if on]
    reason = "DryRun" if spec.dryRun else "Running"
    return "True", reason, f"modes: {', '.join(modes) or 'none'}" + (" (dry run)" if spec.dryRun else "")


async def write_status(ctx: Context, agent: ChaosAgent, clock: Clock, due: datetime | None,
                       actions: list[Action], settings: Settings, condition: tuple[str, str, str]) -> None:
    # Running totals build on the cached status, which always has this process's last write (the
    # framework holds a reconcile until it does): they never go backwards.
    status = agent.status or ChaosAgentStatus.model_validate({})
    counters = status.counters.model_dump() if status.counters else None
    previous = [a.model_dump(exclude_none=True) for a in status.recentActions or ()]
    when = schedule.rfc3339(schedule.utcnow())
    body: dict[str, Any] = {
        "observedGeneration": agent.metadata.generation,
        "round": clock.round,
        "counters": report.counters(counters, actions),
        "conditions": ctx.condition("Active", condition[0], condition[1], condition[2]),
    }
    if clock.seed is not None:
        body["seed"] = clock.seed
    if agent.spec.cancerMode or (status.extraReplicas or 0) > 0:
        body["extraReplicas"] = await cancer.held_extra_replicas(ctx.client, marks.agent_label(ctx.name))
    if clock.last is not None:
        body["lastRoundTime"] = schedule.rfc3339(clock.last)
    body["nextRoundTime"] = schedule.rfc3339(due) if due else None
    if actions:
        body["recentActions"] = report.recent(previous, actions, clock.round, when, settings.recent_actions)
    await ctx.patch_status(body)
