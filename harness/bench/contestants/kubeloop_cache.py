"""The kubeloop cache holder: ``BENCH_KIND=pods|configmaps BENCH_EXPECT=N kubeloop run
harness/bench/contestants/kubeloop_cache.py --namespace NS``: a reconcile per Pod or ConfigMap that only
counts. It exists to measure what caching realistic objects costs (harness/bench/cached.py); it writes
nothing. The cache drops managedFields (its default transform).

stdout: "first" at the first reconcile, "reconciled K" when K reaches BENCH_EXPECT and once a second while
K changes (the same protocol as controller_runtime_cache/ and kube_rs_cache/).
"""

import asyncio
import os

from kubeloop import Context, Operator

if os.environ.get("BENCH_UVLOOP"):  # experiment: uvloop's event loop (set before ``kubeloop run`` makes its loop)
    import uvloop

    asyncio.set_event_loop_policy(uvloop.EventLoopPolicy())

op = Operator("bench-cache")
KIND = os.environ.get("BENCH_KIND", "pods")
EXPECT = int(os.environ.get("BENCH_EXPECT", "0"))
reconciled = 0
_reporter: set[asyncio.Task[None]] = set()


@op.on_startup
async def start_reporting(manager: object) -> None:
    _reporter.add(asyncio.get_running_loop().create_task(_report()))


async def _report() -> None:
    last = 0
    while True:
        await asyncio.sleep(1.0)
        if reconciled != last:
            last = reconciled
            print(f"reconciled {last}", flush=True)


@op.reconcile(KIND)
async def reconcile(obj: dict, ctx: Context) -> None:
    global reconciled
    reconciled += 1
    if reconciled == 1:
        print("first", flush=True)
    if reconciled == EXPECT:
        print(f"reconciled {reconciled}", flush=True)
