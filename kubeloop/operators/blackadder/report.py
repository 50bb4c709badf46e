"""Telling people what the agent did: Events on every victim and on the agent, status counters and
recent actions, and Prometheus counters per mode and namespace."""

from __future__ import annotations

import asyncio
from typing import Any

from kubeloop import EventRecorder, metrics
from kubeloop.operators.blackadder.chaos import Action, log

# Module-level on purpose: the registry is process-wide, so every operator instance counts into these.
ACTIONS = metrics.Counter("blackadder_actions", "Objects hit by ChaosAgents, by agent, mode (tantrum, cancer, "
                          "ipsum, restore) and namespace; dry_run=\"true\" ones were left unchanged.",
                          ["agent", "mode", "namespace", "dry_run"], registry=metrics.REGISTRY)
ROUNDS = metrics.Counter("blackadder_rounds", "Rounds played by ChaosAgents.", ["agent"], registry=metrics.REGISTRY)

_REASONS = {"killed": "PodKilled", "evicted": "PodEvicted", "spared": "PodSpared",
            "scaled": "DeploymentScaled", "rewrote": "ConfigMapRewritten", "restored": "ChaosRestored",
            "released": "ChaosReleased", "skipped": "ChaosSkipped"}
_COUNTED = {"tantrum": "tantrum", "cancer": "cancer", "ipsum": "ipsum", "restore": "restored"}


def reason(action: Action) -> str:
    return ("DryRun" if action.dry_run else "") + _REASONS.get(action.action, "Chaos")


def counters(previous: dict[str, int] | None, actions: list[Action]) -> dict[str, int]:
    """Running totals per mode; a spared pod was not hit, so it does not count."""
    out = {"tantrum": 0, "cancer": 0, "ipsum": 0, "restored": 0, **(previous or {})}
    for action in actions:
        if action.changed or action.dry_run:
            out[_COUNTED[action.mode]] += 1
    return out


def recent(previous: list[dict[str, Any]] | None, actions: list[Action], round_no: int, when: str,
           limit: int) -> list[dict[str, Any]]:
    """The newest ``limit`` actions, oldest first (bounded: status must stay small)."""
    merged = [*(previous or []), *(a.record(round_no, when) for a in actions)]
    return merged[-limit:] if limit > 0 else []


def summary(actions: list[Action]) -> str:
    hit: dict[str, int] = {}
    for action in actions:
        hit[action.action] = hit.get(action.action, 0) + 1
    dry = " (dry run: nothing changed)" if actions and all(a.dry_run for a in actions) else ""
    return ", ".join(f"{action} {n}" for action, n in sorted(hit.items())) + dry


async def announce(events: EventRecorder, agent: dict[str, Any], actions: list[Action], headline: str,
                   limit: int = 8) -> None:
    """Logs every action, counts it, records an Event on its object, and one summary on the agent."""
    name = agent["metadata"]["name"]
    gate = asyncio.Semaphore(limit)

    async def tell(action: Action) -> None:
        log.info("agent %s: %s", name, action.describe())
        ACTIONS.labels(name, action.mode, action.namespace, str(action.dry_run).lower()).inc()
        async with gate:
            await events.emit(action.obj, "Normal" if action.mode == "restore" else "Warning", reason(action),
                              f"ChaosAgent {name}: {action.describe()}", related=agent)
    await asyncio.gather(*(tell(a) for a in actions))
    if actions:
        await events.emit(agent, "Normal", "ChaosRound" if headline.startswith("round") else "ChaosRestored",
                          f"{headline}: {summary(actions)}")
