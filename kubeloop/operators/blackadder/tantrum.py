"""tantrumMode: randomly kill pods.

The article's version, done right: only Running, non-terminating pods older than minPodAgeSeconds
count towards minRunningPods (the article's podTolerance) and can be victims; victims are drawn
without replacement from a seeded shuffle, at most one per owner per round, ownerless pods (never
recreated) are spared unless asked, and with respectPodDisruptionBudgets the Eviction API decides
(429 = spared).
"""

from __future__ import annotations

import random
from datetime import datetime, timedelta

from kubeloop import Conflict, NotFound, Obj, TooManyRequests, builtin, ownership
from kubeloop.operators.blackadder.chaos import Action, Round
from kubeloop.operators.blackadder.models import ChaosAgentSpec
from kubeloop.operators.blackadder.schedule import chance, parse_rfc3339


def candidate_pods(pods: list[Obj], spec: ChaosAgentSpec, now: datetime) -> list[Obj]:
    """Pods that count and may die (the LIST already asked the server for status.phase=Running)."""
    oldest_allowed = now - timedelta(seconds=spec.minPodAgeSeconds)
    out = []
    for pod in pods:
        meta = pod["metadata"]
        if meta.get("deletionTimestamp") or pod.get("status", {}).get("phase") != "Running":
            continue
        born = parse_rfc3339(meta.get("creationTimestamp"))
        if born is None or born > oldest_allowed:
            continue
        if ownership.controller_of(pod) is None and not spec.killOrphans:
            continue
        out.append(pod)
    return out


def owner_of(pod: Obj) -> str:
    """The controller's UID, or the pod's own for an orphan (its own owner)."""
    ref = ownership.controller_of(pod)
    uid: str = ref["uid"] if ref else pod["metadata"]["uid"]
    return uid


def choose_victims(rng: random.Random, pods: list[Obj], eagerness: int,
                   one_per_owner: bool = True) -> list[Obj]:
    """Walk a seeded permutation of the (sorted) candidates; each is hit with probability eagerness%,
    skipping owners already hit. Every candidate draws its roll, so a skip does not shift the rest."""
    order = rng.sample(pods, len(pods))
    owners: set[str] = set()
    victims = []
    for pod in order:
        hit = chance(rng, eagerness)
        owner = owner_of(pod)
        if hit and not (one_per_owner and owner in owners):
            owners.add(owner)
            victims.append(pod)
    return victims


async def randomly_kill_pods(rnd: Round, pods: list[Obj], spec: ChaosAgentSpec) -> list[Action]:
    candidates = candidate_pods(pods, spec, rnd.now)
    if len(candidates) < spec.minRunningPods:
        return []
    victims = choose_victims(rnd.dice("tantrum"), candidates, spec.eagerness, spec.onePerOwner)

    async def kill(pod: Obj) -> Action | None:
        return await kill_pod(rnd, pod, spec)
    return await rnd.each(victims, kill)


async def kill_pod(rnd: Round, pod: Obj, spec: ChaosAgentSpec) -> Action | None:
    meta = pod["metadata"]
    owner = ownership.controller_of(pod)
    detail = f"owned by {owner['kind']} {owner['name']}" if owner else "no owner: it will not come back"
    if rnd.dry_run:
        return Action("tantrum", "killed", pod, detail, dry_run=True)
    try:
        if spec.respectPodDisruptionBudgets:
            await rnd.client.create(_eviction(pod, spec.gracePeriodSeconds), meta["namespace"], resource=builtin.POD,
                                    subresource="eviction", name=meta["name"])
            return Action("tantrum", "evicted", pod, detail)
        await rnd.client.delete(builtin.POD, meta["name"], meta["namespace"], uid=meta["uid"],
                                grace_period_seconds=spec.gracePeriodSeconds)
        return Action("tantrum", "killed", pod, detail)
    except TooManyRequests as exc:  # a PodDisruptionBudget would be violated: spare it
        return Action("tantrum", "spared", pod, f"eviction refused: {exc.message}", changed=False)
    except (NotFound, Conflict):  # gone or replaced meanwhile: nothing to kill
        return None


def _eviction(pod: Obj, grace: int | None) -> Obj:
    meta = pod["metadata"]
    options: Obj = {"preconditions": {"uid": meta["uid"]}}
    if grace is not None:
        options["gracePeriodSeconds"] = grace
    return {"apiVersion": "policy/v1", "kind": "Eviction",
            "metadata": {"name": meta["name"], "namespace": meta["namespace"]}, "deleteOptions": options}
