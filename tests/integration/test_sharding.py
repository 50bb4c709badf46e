"""Scale-out on the real API server (issue #20): replicas of ``kubeloop run --shards auto`` as real
processes share the work, and the exclusivity audit proves that no key is ever reconciled by two
replicas at overlapping times, across scale-up 1→3, ``kill -9`` of a replica under load, and
scale-down 3→1, while every object converges.

Each reconcile appends ``key replica start end`` (wall clock, one machine) to an audit file; it takes
50 ms so that an overlap, if the protocol allowed one, would show."""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import signal
import sys
import textwrap
from collections import defaultdict
from pathlib import Path

from kubeloop.client import Client

from .conftest import echo

OPERATOR = textwrap.dedent('''
    import asyncio, os, time
    from kubeloop import Context, Operator

    op = Operator("shardtest")
    AUDIT, ME = os.environ["AUDIT_FILE"], os.environ["REPLICA"]

    @op.reconcile("echoes.test.kubeloop.dev", resync=None)
    async def reconcile(obj: dict, ctx: Context) -> None:
        start = time.time()
        try:
            await asyncio.sleep(0.05)
            if (obj.get("status") or {}).get("seen") != obj["spec"]["message"]:
                await ctx.patch_status({"seen": obj["spec"]["message"]})
        finally:
            with open(AUDIT, "a") as f:
                f.write(f"{ctx.name} {ME} {start} {time.time()}\\n")
''')
OBJECTS = 40
LEASES = "leases.coordination.k8s.io"
HOLDS = "sharding.kubeloop.dev/holds"


class Replicas:
    """``kubeloop run --shards auto`` processes, by name."""

    def __init__(self, kubeconfig: Path, namespace: str, tmp: Path) -> None:
        self.kubeconfig, self.namespace, self.tmp = kubeconfig, namespace, tmp
        self.procs: dict[str, asyncio.subprocess.Process] = {}

    async def start(self, name: str) -> None:
        env = {**os.environ, "AUDIT_FILE": str(self.tmp / "audit"), "REPLICA": name, "POD_NAME": name}
        log = (self.tmp / f"{name}.log").open("w")
        self.procs[name] = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "kubeloop.cli.main", "run", str(self.tmp / "op.py"), "--shards", "auto",
            "--kubeconfig", str(self.kubeconfig), "--namespace", self.namespace,
            "--leader-election-namespace", self.namespace, "--metrics-bind-address", "0",
            "--health-probe-bind-address", "0", "--lease-duration", "4", "--renew-deadline", "3",
            "--retry-period", "0.5", "--graceful-shutdown-timeout", "5", env=env, stdout=log, stderr=log)

    async def stop(self, name: str, sig: int = signal.SIGTERM) -> None:
        proc = self.procs.pop(name)
        proc.send_signal(sig)
        assert await asyncio.wait_for(proc.wait(), 30) in (0, -signal.SIGKILL), self.log(name)

    def log(self, name: str) -> str:
        return (self.tmp / f"{name}.log").read_text()[-3000:]

    async def close(self) -> None:
        for proc in self.procs.values():
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            await proc.wait()


async def members(client: Client, namespace: str) -> dict[str, str]:
    """Replica (its POD_NAME, the identity's prefix) → its HOLDS annotation, for the live Leases (what
    ``kubectl get leases -l sharding.kubeloop.dev/operator=shardtest`` shows)."""
    leases = await client.list(LEASES, namespace, label_selector="sharding.kubeloop.dev/operator=shardtest")
    return {le["spec"]["holderIdentity"].rpartition("_")[0]: le["metadata"]["annotations"].get(HOLDS, "")
            for le in leases["items"] if le["spec"].get("holderIdentity")}


async def until(what: str, check, timeout: float = 40) -> None:  # type: ignore[no-untyped-def]
    deadline = asyncio.get_running_loop().time() + timeout
    while not await check():
        assert asyncio.get_running_loop().time() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.3)


def audit(path: Path) -> tuple[dict[str, set[str]], list[str]]:
    """(key → replicas that reconciled it, overlaps between two replicas on one key)."""
    spans: dict[str, list[tuple[float, float, str]]] = defaultdict(list)
    for line in path.read_text().splitlines():
        key, who, start, end = line.split()
        spans[key].append((float(start), float(end), who))
    overlaps = []
    for key, items in spans.items():
        items.sort()
        latest_end, latest_who = 0.0, ""
        for first, last, who in items:
            if first < latest_end and who != latest_who:
                overlaps.append(f"{key}: {latest_who} until {latest_end:.3f}, {who} from {first:.3f}")
            if last > latest_end:
                latest_end, latest_who = last, who
    return {k: {w for *_, w in v} for k, v in spans.items()}, overlaps


async def test_shards_exclusive_across_scale_up_kill_and_scale_down(kube_cluster, kube_client: Client,
                                                                    namespace: str, echo_crd: str,
                                                                    tmp_path: Path) -> None:
    (tmp_path / "op.py").write_text(OPERATOR)
    names = [f"e{i}" for i in range(OBJECTS)]
    for name in names:
        await kube_client.create(echo(name, namespace, "m0"))
    replicas = Replicas(kube_cluster.kubeconfig, namespace, tmp_path)
    rng = random.Random(os.environ.get("SHARD_SEED", "20"))
    version = 0

    async def load() -> None:  # a stream of changes, throughout
        nonlocal version
        while True:
            version += 1
            for name in rng.sample(names, 4):
                await kube_client.patch(echo_crd, name, {"spec": {"message": f"m{version}"}}, namespace)
            await asyncio.sleep(0.1)

    async def converged() -> bool:
        items = (await kube_client.list(echo_crd, namespace))["items"]
        return all((o.get("status") or {}).get("seen") == o["spec"]["message"] for o in items)

    async def ring(expected: set[str]) -> bool:
        live = await members(kube_client, namespace)
        return set(live) == expected and all(live.values())

    loader = None
    try:
        await replicas.start("r1")
        await until("r1 to hold the ring", lambda: ring({"r1"}))
        await until("convergence with one replica", converged)
        loader = asyncio.create_task(load())
        await replicas.start("r2")
        await replicas.start("r3")
        await until("three members holding slots", lambda: ring({"r1", "r2", "r3"}))
        await asyncio.sleep(2)
        await replicas.stop("r2", signal.SIGKILL)  # no clean leave: its Lease must expire
        await until("r2's slots taken over", lambda: ring({"r1", "r3"}), timeout=30)
        await replicas.start("r4")
        await until("three members again", lambda: ring({"r1", "r3", "r4"}))
        await asyncio.sleep(2)
        await replicas.stop("r3")
        await replicas.stop("r4")
        await until("r1 alone", lambda: ring({"r1"}))
        await asyncio.sleep(1)
        loader.cancel()
        await until("convergence after the handoffs", converged)
    finally:
        if loader is not None:
            loader.cancel()
        await replicas.close()
    by_key, overlaps = audit(tmp_path / "audit")
    assert not overlaps, "two replicas reconciled one key at once:\n" + "\n".join(overlaps[:20])
    assert set(by_key) == set(names), "every object was reconciled"
    workers = {w for ws in by_key.values() for w in ws}
    assert {"r1", "r2", "r3", "r4"} <= workers, f"every replica took a share: {workers}"
    assert any(len(ws) > 1 for ws in by_key.values()), "keys moved between replicas"
