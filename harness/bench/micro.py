"""Framework overhead per reconcile, without an API server: ``python -m harness.bench.micro``.

Drives the real work queue and ``Controller.process`` (metrics, logging context, ``Context``,
``patch_status``'s no-change check) with a reconciler that makes no request, over objects held in a
real ``Store``; and the watch-event path (``Informer._apply``: store upsert with its indexes, event
fan-out, predicates, queue add). CPU time (``time.process_time``), best of several rounds, so it is
usable on a busy machine where wall-clock figures are not. What it leaves out — HTTP, TLS, JSON of
real requests — is what the end-to-end scenarios measure.
"""

from __future__ import annotations

import argparse
import asyncio
import time
from types import SimpleNamespace
from typing import Any

from kubeloop.cache import Store
from kubeloop.cache.informer import Informer, InformerKey
from kubeloop.client import Resource
from kubeloop.client.merge import merge_patch
from kubeloop.controller import Controller, ControllerSpec
from kubeloop.controller.controller import Wiring
from kubeloop.controller.echo import OwnWrites
from kubeloop.watch.watcher import Changed

WIDGETS = Resource("bench.example.com", "v1", "widgets", "Widget", True)


def widget(i: int, observed: int | None = None) -> dict[str, Any]:
    return {"apiVersion": "bench.example.com/v1", "kind": "Widget",
            "metadata": {"name": f"w-{i:06d}", "namespace": "micro", "uid": f"uid-{i}",
                         "resourceVersion": str(1000 + i), "generation": 1,
                         "creationTimestamp": "2026-11-01T00:00:00Z"},
            "spec": {"value": i}, "status": {"observed": i if observed is None else observed}}


async def _reconcile(obj: dict[str, Any], ctx: Any) -> None:
    await ctx.patch_status({"observed": obj["spec"]["value"]})  # already equal: no request


def controller(n: int) -> Controller:
    store = Store()
    for i in range(n):
        store.upsert(widget(i))
    informer = SimpleNamespace(store=store, resource=WIDGETS, subscribe=lambda handler: None)
    spec = ControllerSpec(name="micro", resource=WIDGETS, reconcile=_reconcile)
    return Controller(spec, object(), object(), object(), Wiring(informer, {}, []))  # type: ignore[arg-type]


async def reconcile_round(n: int) -> float:
    """CPU µs per queued key: add → get → process (a reconcile that writes nothing) → done."""
    c = controller(n)
    keys = [f"micro/w-{i:06d}" for i in range(n)]
    started = time.process_time()
    for key in keys:
        c.queue.add(key)
        got = await c.queue.get()
        await c.process(str(got))
        c.queue.done(got)
    return 1e6 * (time.process_time() - started) / n


async def event_round(n: int) -> float:
    """CPU µs per watch event: informer apply (store upsert + indexes) → controller handler → queue add."""
    c = controller(0)
    informer = Informer(SimpleNamespace(), InformerKey(WIDGETS, None))  # type: ignore[arg-type]
    informer.subscribe(c._on_primary)  # noqa: SLF001
    events = [Changed("ADDED", widget(i)) for i in range(n)]
    started = time.process_time()
    for event in events:
        informer._apply(event)  # noqa: SLF001
    return 1e6 * (time.process_time() - started) / n


def _status_change(status: dict[str, Any]) -> Any:
    """What ``Context.patch_status`` records with a write: the merge patch applied to an object."""
    return lambda obj: merge_patch(obj, {"status": status})


async def own_write_round(n: int) -> float:
    """CPU µs per status write's bookkeeping (``OwnWrites``): begin, end (the write's answer, compared
    with the cached object) and its echo event (recognised by comparing the change applied to the old
    object): what skipping the echo reconcile costs per write."""
    olds = [widget(i) for i in range(n)]
    written = [{**o, "metadata": {**o["metadata"], "resourceVersion": str(10**6 + i)},
                "status": {"observed": -i - 1}} for i, o in enumerate(olds)]
    writes = OwnWrites()
    started = time.process_time()
    for i, old in enumerate(olds):
        key = f"micro/w-{i:06d}"
        writes.begin(key)
        writes.end(key, written[i], _status_change({"observed": -i - 1}), old)
        if writes.on_event(key, "modified", written[i], old) != "echo":
            raise AssertionError("the echo of our own write was not recognised")
    return 1e6 * (time.process_time() - started) / n


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    rec = min([await reconcile_round(args.n) for _ in range(args.rounds)])
    ev = min([await event_round(args.n) for _ in range(args.rounds)])
    print(f"reconcile (queue + process, no request): {rec:6.1f} µs CPU per key (best of {args.rounds})")
    print(f"watch event (store + handler + queue add): {ev:6.1f} µs CPU per event (best of {args.rounds})")
    own = min([await own_write_round(args.n) for _ in range(args.rounds)])
    print(f"own write (begin + end + its echo event):  {own:6.1f} µs CPU per write (best of {args.rounds})")


if __name__ == "__main__":
    asyncio.run(main())
