"""On the real API server: the echo of a controller's own writes is not reconciled (unless switched
off), a reconcile never runs on a cache without its controller's last write, and typed per-object
state lives as long as the object."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from kubeloop import Context, Manager, Operator, Result
from kubeloop.client import Client
from kubeloop.testing import wait_for, wait_for_deletion

from .conftest import echo, options, running

ECHO = "echoes.test.kubeloop.dev"


def status_writer(skip_own_writes: bool, calls: list[str]) -> Operator:
    """Writes status.seen once per object, and puts a finalizer on it: two writes, two echoes."""
    op = Operator("echo-writer")

    @op.reconcile(ECHO, resync=None, skip_own_writes=skip_own_writes)
    async def reconcile(obj: dict, ctx: Context) -> None:
        calls.append(obj["metadata"]["resourceVersion"])
        await ctx.patch_status({"seen": obj["spec"]["message"]})

    @op.finalize(ECHO)
    async def cleanup(obj: dict, ctx: Context) -> None:
        return None

    return op


async def reconciles_after_one_change(client: Client, namespace: str, echo_crd: str,
                                      skip_own_writes: bool) -> list[str]:
    calls: list[str] = []
    manager = Manager(client, options(namespace))
    manager.add_operator(status_writer(skip_own_writes, calls))
    async with running(manager):
        await client.create(echo("e1", namespace, "one"))
        await wait_for(client, echo_crd, "e1", namespace, timeout=20,
                       predicate=lambda o: (o.get("status") or {}).get("seen") == "one")
        await asyncio.sleep(1.5)  # time for any echo to be reconciled
        await client.delete(echo_crd, "e1", namespace)
        await wait_for_deletion(client, echo_crd, "e1", namespace, timeout=20)
    return calls


async def test_own_writes_do_not_wake_the_controller(kube_client: Client, namespace: str, echo_crd: str) -> None:
    """Create: one reconcile (finalizer added, status written); their two echoes wake nothing (the
    deletion then runs cleanup, not reconcile). Switched off, the echoes are reconciled as before."""
    skipped = await reconciles_after_one_change(kube_client, namespace, echo_crd, skip_own_writes=True)
    assert len(skipped) == 1, f"the creation only, no echo: {skipped}"


async def test_echoes_are_reconciled_when_switched_off(kube_client: Client, namespace: str,
                                                       echo_crd: str) -> None:
    reconciled = await reconciles_after_one_change(kube_client, namespace, echo_crd, skip_own_writes=False)
    assert len(reconciled) >= 2, f"the echoes should have been reconciled too: {reconciled}"


async def test_a_reconcile_never_reads_a_cache_without_its_last_write(kube_client: Client, namespace: str,
                                                                      echo_crd: str) -> None:
    """Each reconcile bumps a counter in status computed from the cached status, and asks to run again
    at once: it must see every value it wrote, never one twice (a stale cache would repeat one). The
    last value may be seen more than once: the echo of the last write can beat the write's own response
    (then it wakes the key as any event) and the requeue comes too."""
    op = Operator("echo-counter")
    seen: list[int] = []

    @op.reconcile(ECHO, resync=None)
    async def reconcile(obj: dict, ctx: Context) -> Result | None:
        count = (obj.get("status") or {}).get("observedGeneration") or 0
        seen.append(count)
        if count >= 8:
            return None
        await ctx.patch_status({"observedGeneration": count + 1})
        return Result(requeue_after=0.001)  # sooner than the echo comes back

    manager = Manager(kube_client, options(namespace))
    manager.add_operator(op)
    async with running(manager):
        await kube_client.create(echo("counted", namespace))
        await wait_for(kube_client, echo_crd, "counted", namespace, timeout=20,
                       predicate=lambda o: (o.get("status") or {}).get("observedGeneration") == 8)
        await asyncio.sleep(1.0)
    assert seen[:9] == list(range(9)) and set(seen[9:]) <= {8}, seen


@dataclass
class Seen:
    reconciles: int = 0


async def test_typed_state_is_dropped_when_the_object_is_deleted(kube_client: Client, namespace: str,
                                                                 echo_crd: str) -> None:
    op = Operator("echo-state")
    seen = op.state(Seen)
    counts: list[tuple[str, int]] = []

    @op.reconcile(ECHO, resync=None)
    async def reconcile(obj: dict, ctx: Context) -> None:
        state = seen.of(ctx)
        state.reconciles += 1
        counts.append((obj["spec"]["message"], state.reconciles))

    manager = Manager(kube_client, options(namespace))
    manager.add_operator(op)

    async def settled(message: str, n: int) -> None:
        for _ in range(200):
            if (message, n) in counts:
                return
            await asyncio.sleep(0.05)
        raise AssertionError(f"no reconcile #{n} of {message}: {counts}")

    async with running(manager):
        await kube_client.create(echo("kept", namespace, "first"))
        await settled("first", 1)
        await kube_client.patch(echo_crd, "kept", {"spec": {"message": "second"}}, namespace)
        await settled("second", 2)  # the same object: its state carried over
        await kube_client.delete(echo_crd, "kept", namespace)
        await wait_for_deletion(kube_client, echo_crd, "kept", namespace, timeout=20)
        await asyncio.sleep(0.5)  # the deletion is reconciled (the state dropped)
        await kube_client.create(echo("kept", namespace, "reborn"))
        await settled("reborn", 1)  # a new object of the same name starts afresh
    assert counts[-1] == ("reborn", 1), counts
