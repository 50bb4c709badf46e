"""Runs one sequence on both backends and tallies the agreement."""

from __future__ import annotations

from tests.differential.conftest import TALLY
from tests.differential.harness import Backend, Step, differences, new_namespace, normalise, run


async def compare(name: str, steps: list[Step], fake: Backend, real: Backend) -> list[str]:
    """The differences between the fake's and the real server's normalised outcomes (empty: agreement)."""
    ns_fake, ns_real = new_namespace(), new_namespace()
    got_fake = normalise(ns_fake, await run(fake, steps, ns_fake))
    got_real = normalise(ns_real, await run(real, steps, ns_real))
    # Deleted at the end of the session (the real fixture's teardown): a storm of namespace deletions
    # would keep the real namespace controller busy while later tests run on the same cluster.
    TALLY["namespaces"].append(ns_real)
    diffs = differences(got_fake, got_real, steps)
    TALLY["sequences"] += 1
    TALLY["agreeing_sequences"] += not diffs
    TALLY["steps"] += len(steps)
    TALLY["agreeing_steps"] += len(steps) - len(diffs)
    TALLY["differences"] += [f"{name}: {d}" for d in diffs]
    return diffs
