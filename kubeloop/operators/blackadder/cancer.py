"""cancerMode: randomly double Deployments' replicas, capped at 128 — reversibly, and within a budget.

The first change records the original replica count on the Deployment; restoring puts it back
exactly, unless someone has scaled the Deployment since (then their value stays and only the marks
go). Deployments an HPA scales and Deployments scaled to zero are left alone. The article doubles
every Deployment up to 128 with no bound on the sum; here an agent adds at most
``maxExtraReplicasPerRound`` replicas per round and holds at most ``maxExtraReplicas`` extra replicas
in all (counted from the marks on the Deployments it holds).
"""

from __future__ import annotations

from collections.abc import Callable

from kubeloop import Client, Conflict, NotFound, Obj, builtin
from kubeloop.operators.blackadder import marks
from kubeloop.operators.blackadder.chaos import Action, Round, fresh, restore_held, retry_on_conflict
from kubeloop.operators.blackadder.schedule import chance

MAX_REPLICAS = 128


def doubled(replicas: int) -> int:
    return min(replicas * 2, MAX_REPLICAS)


def replicas_of(dep: Obj) -> int:
    value = dep.get("spec", {}).get("replicas")
    return 1 if value is None else int(value)  # the API's default


def hpa_targets(hpas: list[Obj]) -> set[tuple[str, str]]:
    """(namespace, name) of every Deployment an HorizontalPodAutoscaler scales: it would fight us."""
    out = set()
    for hpa in hpas:
        ref = hpa.get("spec", {}).get("scaleTargetRef") or {}
        if ref.get("kind") == "Deployment":
            out.add((hpa["metadata"]["namespace"], ref.get("name", "")))
    return out


def scalable(dep: Obj, label: str, autoscaled: set[tuple[str, str]]) -> bool:
    meta = dep["metadata"]
    replicas = replicas_of(dep)
    return (0 < replicas < MAX_REPLICAS and (meta["namespace"], meta["name"]) not in autoscaled
            and not marks.held_by_other(dep, label))


def extra_replicas(dep: Obj) -> int:
    """Replicas chaos added to a held Deployment, from its marks (0 when they are unreadable)."""
    original, ours = (_count(marks.annotation(dep, key)) for key in (marks.ORIGINAL_REPLICAS,
                                                                       marks.CHAOS_REPLICAS))
    return max(0, ours - original) if original is not None and ours is not None else 0


async def held_extra_replicas(client: Client, label: str) -> int:
    """Extra replicas the agent ``label`` holds right now, over every Deployment it has scaled."""
    held = (await client.list(builtin.DEPLOYMENT, label_selector=f"{marks.AGENT}={label}"))["items"]
    return sum(extra_replicas(d) for d in held)


def allot(chosen: list[Obj], budget: int) -> list[tuple[Obj, int]]:
    """Shares ``budget`` extra replicas among the chosen Deployments in their (stable) order: each gets
    what doubling would add, as long as the budget lasts; the ones left without any are skipped."""
    out = []
    for dep in chosen:
        grant = min(doubled(replicas_of(dep)) - replicas_of(dep), budget)
        if grant <= 0:
            break
        out.append((dep, grant))
        budget -= grant
    return out


async def randomly_scale_deployments(rnd: Round, deployments: list[Obj], hpas: list[Obj], eagerness: int,
                                     budget: int = MAX_REPLICAS) -> list[Action]:
    """``budget``: extra replicas this round may add in all (see ``round_budget``)."""
    autoscaled = hpa_targets(hpas)
    candidates = [d for d in deployments if scalable(d, rnd.label, autoscaled)]
    rng = rnd.dice("cancer")
    chosen = [d for d in candidates if chance(rng, eagerness)]

    async def grow(item: tuple[Obj, int]) -> Action | None:
        return await scale_up(rnd, item[0], autoscaled, limit=item[1])
    return await rnd.each(allot(chosen, budget), grow)


def round_budget(per_round: int, overall: int, held: int) -> int:
    """What one round may add: its own limit, and no more than the overall limit leaves."""
    return max(0, min(per_round, overall - held))


async def scale_up(rnd: Round, dep: Obj, autoscaled: set[tuple[str, str]],
                   limit: int | None = None) -> Action | None:
    """Doubles the replicas (adding at most ``limit``) with a resourceVersion-guarded patch; on a
    conflict re-read and decide again."""
    def target(before: int) -> int:
        return doubled(before) if limit is None else min(doubled(before), before + limit)
    if rnd.dry_run:
        return Action("cancer", "scaled", dep, f"{replicas_of(dep)} -> {target(replicas_of(dep))}",
                      dry_run=True)
    current: Obj | None = dep
    meta = dep["metadata"]

    async def attempt() -> Action | None:
        nonlocal current
        if current is None or not scalable(current, rnd.label, autoscaled):
            return None
        before = replicas_of(current)
        after = target(before)
        patch = {"metadata": marks.mark(current, rnd.label, rnd.timestamp, {
            marks.ORIGINAL_REPLICAS: str(before), marks.CHAOS_REPLICAS: str(after)}),
            "spec": {"replicas": after}}
        try:
            updated = await rnd.client.patch(builtin.DEPLOYMENT, meta["name"], patch, meta["namespace"])
        except Conflict:  # re-read, then retry_on_conflict tries again
            current = await fresh(rnd.client, builtin.DEPLOYMENT, meta["namespace"], meta["name"])
            raise
        return Action("cancer", "scaled", updated | {"apiVersion": "apps/v1", "kind": "Deployment"},
                      f"{before} -> {after}")
    try:
        return await retry_on_conflict(attempt)
    except NotFound:
        return None


async def restore_deployments(client: Client, label: str, wanted: Callable[[Obj], bool]) -> list[Action]:
    """Every Deployment this agent holds and ``wanted`` picks gets its original replicas back."""
    return await restore_held(client, builtin.DEPLOYMENT, label, wanted, restore_deployment)


async def restore_deployment(client: Client, dep: Obj) -> Action | None:
    meta = dep["metadata"]
    current: Obj | None = dep

    async def attempt() -> Action | None:
        nonlocal current
        if current is None:
            return None
        original = _count(marks.annotation(current, marks.ORIGINAL_REPLICAS))
        ours = marks.annotation(current, marks.CHAOS_REPLICAS)
        untouched_since = ours is not None and str(replicas_of(current)) == ours
        patch: Obj = {"metadata": marks.unmark(current)}
        if original is not None and untouched_since:
            patch["spec"] = {"replicas": original}
        try:
            updated = await client.patch(builtin.DEPLOYMENT, meta["name"], patch, meta["namespace"])
        except Conflict:  # re-read, then retry_on_conflict tries again
            current = await fresh(client, builtin.DEPLOYMENT, meta["namespace"], meta["name"])
            raise
        obj = updated | {"apiVersion": "apps/v1", "kind": "Deployment"}
        if "spec" in patch:
            return Action("restore", "restored", obj, f"replicas {ours} -> {original}")
        if original is None:  # anyone who may edit the Deployment may edit its marks: never trust junk
            return Action("restore", "released", obj, "no readable original replica count; left as it is")
        return Action("restore", "released", obj, f"replicas were changed by someone else to "
                                                  f"{replicas_of(current)}; left as they are")
    try:
        return await retry_on_conflict(attempt)
    except NotFound:
        return None


def _count(text: str | None) -> int | None:
    """A replica count read from a mark, or None unless it is a plain non-negative integer."""
    if text is None or not (text.isascii() and text.isdigit()) or len(text) > 9:
        return None  # over 9 digits could leave int32, which the API server refuses
    return int(text)
