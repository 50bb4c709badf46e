"""Server-side sharding (KEP-5866) on real API servers.

NEEDS KUBERNETES 1.36: the ``kep_cluster`` fixture starts a v1.36.3 control plane with the
``ShardedListAndWatch`` feature gate, built beforehand by ``kubeloop cluster build --kubernetes-version
1.36.3`` (about 8 min on 2 cores, once per machine; .ci/run does it): without that build its tests skip,
naming the command, rather than compile a second Kubernetes inside the test run. The client-side test runs
on the default (1.35) cluster.

- The facts: the ``shardSelector`` parameter, its grammar and limits, the hash the server applies to
  ``metadata.uid`` (ours must pick the same objects), ``shardInfo`` on lists, filtered watches, and a
  server without the gate ignoring the parameter.
- The operator: 3 replicas (real ``kubeloop run --shards auto`` processes) each cache ~1/3 of the
  objects on the 1.36 server, and all of them on 1.35; in both modes every object converges and no key
  is reconciled by two replicas at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import socket
import sys
import urllib.request
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from kubeloop.client import AlreadyExists, ApiError, Client
from kubeloop.envtest import BuildError, ClusterError, LocalCluster
from kubeloop.envtest.build import Builder
from kubeloop.sharding.hashing import SPACE, fnv1a64, parse_shard_info, selector
from kubeloop.testing import timelimit
from kubeloop.testing.plugin import _progress

from .conftest import ECHO_CRD, audited_operator, echo
from .test_sharding import exclusive

pytestmark = [pytest.mark.cluster,  # real control planes (-m "not cluster" skips them)
              pytest.mark.time_limit(900)]  # a second control plane and three replicas per test
KEP_VERSION = "1.36.3"
GATES = {"ShardedListAndWatch": True}
ECHOES = ECHO_CRD["metadata"]["name"]
MINE = {"test": "kep5866"}  # the ConfigMaps a fact test made (not kube-root-ca.crt)
ONLY = "test=kep5866"
OPERATOR = audited_operator()


@pytest.fixture(scope="module")
def kep_cluster() -> Iterator[LocalCluster]:
    """A v1.36.3 control plane with ShardedListAndWatch on (skips when that version is not built)."""
    if Builder(log=_progress).cached(KEP_VERSION) is None:
        pytest.skip(f"Kubernetes {KEP_VERSION} is not built: run `kubeloop cluster build --kubernetes-version "
                    f"{KEP_VERSION}` first (.ci/run does)")
    cluster = LocalCluster(f"kep5866-{os.getpid()}", kubernetes_version=KEP_VERSION, nodes=1,
                           feature_gates=GATES, log=_progress)
    try:
        with timelimit.extended(600):  # its own start-up limit is 300 s, on top of the test's
            cluster.up(build=False, timeout=300)
    except (BuildError, ClusterError) as exc:
        cluster.down(wipe=True)
        pytest.fail(f"could not build or start Kubernetes {KEP_VERSION} for KEP-5866: {exc}", pytrace=False)
    try:
        yield cluster
    finally:
        cluster.down(wipe=True)


@pytest_asyncio.fixture(scope="module")
async def kep_client(kep_cluster: LocalCluster) -> AsyncIterator[Client]:
    client = await Client.from_kubeconfig(str(kep_cluster.kubeconfig))
    try:
        yield client
    finally:
        await client.close()


async def fresh_namespace(client: Client, name: str) -> str:
    await client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    return name


async def create_many(client: Client, bodies: list[dict[str, Any]], namespace: str, parallel: int = 16) -> None:
    queue = list(reversed(bodies))

    async def worker() -> None:
        while queue:
            await client.create(queue.pop(), namespace)
    await asyncio.gather(*(worker() for _ in range(parallel)))


def configmap(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "labels": MINE}}


# --- the facts ----------------------------------------------------------------------------------------


async def test_server_filters_by_our_fnv1a64_of_the_uid_and_echoes_shard_info(kep_client: Client) -> None:
    ns = await fresh_namespace(kep_client, "kep-facts-hash")
    await create_many(kep_client, [configmap(f"cm{i}") for i in range(200)], ns)
    listed = (await kep_client.list("configmaps", ns, label_selector=ONLY))["items"]
    every = {o["metadata"]["uid"]: o["metadata"]["name"] for o in listed}
    assert len(every) == 200
    quarters = [(q * SPACE // 4, (q + 1) * SPACE // 4) for q in range(4)]
    seen: set[str] = set()
    for start, end in quarters:
        sel = selector([(start, end)])
        page = await kep_client.list("configmaps", ns, shard_selector=sel, label_selector=ONLY)
        assert parse_shard_info(page) == ("object.metadata.uid", [(start, end)]), page["metadata"]
        assert page["metadata"]["shardInfo"]["selector"] == sel, "echoed verbatim in our canonical form"
        names = {o["metadata"]["name"] for o in page["items"]}
        ours = {name for uid, name in every.items() if start <= fnv1a64(uid) < end}
        assert names == ours, f"quarter {start:#x}: the server's pick differs from our hash"
        assert 25 <= len(names) <= 75, "a quarter of 200 uids, give or take the sampling noise"
        seen |= names
    assert seen == set(every.values())


async def test_or_of_ranges_and_the_grammar_the_server_refuses(kep_client: Client,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    # The server refuses a bad selector with 500 InternalError (not 400), which reads retry: one try each.
    monkeypatch.setattr("kubeloop.client.transport.MAX_RETRIES", 1)
    ns = await fresh_namespace(kep_client, "kep-facts-grammar")
    await create_many(kep_client, [configmap(f"cm{i}") for i in range(40)], ns)
    every = (await kep_client.list("configmaps", ns, label_selector=ONLY))["items"]
    ranges = [(0, SPACE // 8), (SPACE // 2, SPACE // 2 + SPACE // 8)]
    page = await kep_client.list("configmaps", ns, shard_selector=selector(ranges), label_selector=ONLY)
    want = {o["metadata"]["name"] for o in every if any(s <= fnv1a64(o["metadata"]["uid"]) < e for s, e in ranges)}
    assert {o["metadata"]["name"] for o in page["items"]} == want
    assert page["metadata"]["shardInfo"]["selector"].count(" || ") == 1
    uid = "object.metadata.uid"
    refused = {
        "short bound": f"shardRange({uid}, '0x0', '0x8000000000000000')",
        "upper case": f"shardRange({uid}, '0x0000000000000000', '0x8000000000000ABC')",
        "other field": "shardRange(object.metadata.name, '0x0000000000000000', '0x8000000000000000')",
        "mixed fields": f"shardRange({uid}, '0x0000000000000000', '0x8000000000000000') || "
                        "shardRange(object.metadata.namespace, '0x8000000000000000', '0x10000000000000000')",
        "empty range": f"shardRange({uid}, '0x8000000000000000', '0x8000000000000000')",
        "and": f"shardRange({uid}, '0x0000000000000000', '0x8000000000000000') && "
               f"shardRange({uid}, '0x0000000000000000', '0x4000000000000000')",
    }
    for what, text in refused.items():
        with pytest.raises(ApiError) as err:
            await kep_client.list("configmaps", ns, shard_selector=text)
        assert err.value.status == 500 and "invalid shard selector" in err.value.message, (what, err.value)
    too_long = selector([(2 * i, 2 * i + 1) for i in range(1300)])  # ~103,000 characters
    with pytest.raises(ApiError, match="exceeds limit"):
        await kep_client.list("configmaps", ns, shard_selector=too_long)


async def test_custom_resources_are_filtered_without_the_echo(kep_client: Client) -> None:
    """1.36.3 filters custom resources by shard but sets no ``shardInfo`` on their (unstructured) lists,
    so the probe (kubeloop/sharding/serverside.py) tests a CR by content, not by the echo."""
    with contextlib.suppress(AlreadyExists):
        await kep_client.create(ECHO_CRD)
    ns = await fresh_namespace(kep_client, "kep-facts-crs")
    await asyncio.sleep(2)  # the CRD's endpoints come up
    await create_many(kep_client, [echo(f"e{i}", ns) for i in range(40)], ns)
    every = (await kep_client.list(ECHOES, ns))["items"]
    low = [o["metadata"]["name"] for o in every if fnv1a64(o["metadata"]["uid"]) < SPACE // 2]
    page = await kep_client.list(ECHOES, ns, shard_selector=selector([(0, SPACE // 2)]))
    assert sorted(o["metadata"]["name"] for o in page["items"]) == sorted(low) and 0 < len(low) < 40
    assert "shardInfo" not in page["metadata"]


@pytest.mark.parametrize("terms", [455, 1024])
async def test_long_selectors_are_served(kep_client: Client, terms: int) -> None:
    """455 ranges is a member's share of 2048 slots among 3 (~36 kB); 1024 is the most any member can
    have (every other slot, ~80 kB): under the server's 100,000-character limit of a CEL expression."""
    step = SPACE // (2 * terms)
    sel = selector([(2 * i * step, (2 * i + 1) * step) for i in range(terms)])
    page = await kep_client.list("configmaps", "default", shard_selector=sel, limit=1)
    assert parse_shard_info(page) is not None and len(sel) > terms * 70


async def test_watch_and_streaming_list_are_filtered(kep_client: Client) -> None:
    ns = await fresh_namespace(kep_client, "kep-facts-watch")
    await create_many(kep_client, [configmap(f"cm{i}") for i in range(40)], ns)
    low = selector([(0, SPACE // 2)])
    mine = {o["metadata"]["name"] for o in (await kep_client.list("configmaps", ns, label_selector=ONLY))["items"]
            if fnv1a64(o["metadata"]["uid"]) < SPACE // 2}
    initial: set[str] = set()
    later: list[str] = []
    end_bookmark: dict[str, Any] = {}

    async def follow() -> None:
        async for ev in kep_client.watch("configmaps", ns, send_initial_events=True, shard_selector=low,
                                         label_selector=ONLY,
                                         timeout_seconds=20):
            obj = ev["object"]
            if ev["type"] == "BOOKMARK" and not end_bookmark:
                end_bookmark.update(obj)
            elif end_bookmark and ev["type"] == "ADDED":
                later.append(obj["metadata"]["name"])
                if len(later) >= 1:
                    return
            elif not end_bookmark:
                initial.add(obj["metadata"]["name"])

    task = asyncio.create_task(follow())
    await asyncio.sleep(2)
    for i in range(40, 80):  # half of them land in the selected half, on average
        await kep_client.create(configmap(f"cm{i}"), ns)
    await asyncio.wait_for(task, 20)
    assert initial == mine, "the streaming list sends only the selected range"
    assert "shardInfo" not in end_bookmark.get("metadata", {}), "bookmarks carry no shardInfo"
    uid = (await kep_client.get("configmaps", later[0], ns))["metadata"]["uid"]
    assert fnv1a64(uid) < SPACE // 2, "watch events are filtered too"


async def test_server_without_the_gate_ignores_the_parameter(kube_client: Client, namespace: str) -> None:
    for i in range(10):
        await kube_client.create(configmap(f"cm{i}"), namespace)
    page = await kube_client.list("configmaps", namespace, shard_selector=selector([(0, 1)]), label_selector=ONLY)
    assert "shardInfo" not in page["metadata"] and len(page["items"]) == 10, "no filter, no echo"


# --- the operator -------------------------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Replicas:
    """``kubeloop run --shards auto`` processes, each with its /metrics on a port of its own."""

    def __init__(self, kubeconfig: Path, namespace: str, tmp: Path) -> None:
        self.kubeconfig, self.namespace, self.tmp = kubeconfig, namespace, tmp
        self.procs: dict[str, asyncio.subprocess.Process] = {}
        self.ports: dict[str, int] = {}

    async def start(self, name: str) -> None:
        env = {**os.environ, "AUDIT_FILE": str(self.tmp / "audit"), "REPLICA": name, "POD_NAME": name}
        self.ports[name] = _free_port()
        log = (self.tmp / f"{name}.log").open("w")
        self.procs[name] = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "kubeloop.cli.main", "run", str(self.tmp / "op.py"), "--shards", "auto",
            "--kubeconfig", str(self.kubeconfig), "--namespace", self.namespace,
            "--leader-election-namespace", self.namespace, "--metrics-bind-address",
            f"127.0.0.1:{self.ports[name]}", "--health-probe-bind-address", "0", "--lease-duration", "4",
            "--renew-deadline", "3", "--retry-period", "0.5", "--graceful-shutdown-timeout", "5",
            env=env, stdout=log, stderr=log)

    async def stop(self, name: str) -> None:
        proc = self.procs.pop(name)
        proc.terminate()
        assert await asyncio.wait_for(proc.wait(), 30) == 0, self.log(name)[-3000:]

    def metric(self, name: str, metric: str) -> float | None:
        text = urllib.request.urlopen(f"http://127.0.0.1:{self.ports[name]}/metrics", timeout=5).read().decode()
        found = re.search(rf"^{metric}(?:{{[^}}]*}})? (\S+)$", text, re.MULTILINE)
        return float(found.group(1)) if found else None

    def log(self, name: str) -> str:
        return (self.tmp / f"{name}.log").read_text()

    async def close(self) -> None:
        for proc in self.procs.values():
            with contextlib.suppress(ProcessLookupError):
                proc.terminate()
        for proc in self.procs.values():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(proc.wait(), 20)
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            await proc.wait()


async def until(what: str, check: Any, timeout: float) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not await check():
        assert asyncio.get_running_loop().time() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.5)


async def converged(client: Client, namespace: str) -> bool:
    items = (await client.list(ECHOES, namespace))["items"]
    return all((o.get("status") or {}).get("seen") == o["spec"]["message"] for o in items)


async def three_replicas_converge(client: Client, kubeconfig: Path, tmp: Path, objects: int,
                                  namespace: str) -> tuple[Replicas, dict[str, float]]:
    """Creates ``objects`` Echoes, runs 3 replicas until all converged and the caches settled; returns
    each replica's cached Echo count (read from its /metrics)."""
    (tmp / "op.py").write_text(OPERATOR)
    await create_many(client, [echo(f"e{i}", namespace, "m0") for i in range(objects)], namespace)
    replicas = Replicas(kubeconfig, namespace, tmp)
    names = ("r1", "r2", "r3")
    try:
        for name in names:
            await replicas.start(name)


        async def settled() -> bool:  # every replica holds slots and the caches add up (no overlap)
            try:
                slots = [replicas.metric(n, "kubeloop_shard_slots_owned") or 0 for n in names]
                cached = [replicas.metric(n, "kubeloop_shard_cached_objects") or 0 for n in names]
            except OSError:
                return False
            return all(slots) and sum(slots) == 2048 and (sum(cached) == objects or cached == [objects] * 3)

        await until("every object to converge", lambda: converged(client, namespace), 120)
        await until("the ring and the caches to settle", settled, 60)
        cached = {n: replicas.metric(n, "kubeloop_shard_cached_objects") or 0.0 for n in names}
        return replicas, cached
    except BaseException:
        await replicas.close()
        raise


async def test_three_replicas_each_cache_a_third_on_a_kep5866_server(kep_cluster: LocalCluster, kep_client: Client,
                                                                     tmp_path: Path) -> None:
    objects = 3000
    with contextlib.suppress(AlreadyExists):  # made by a fact test already
        await kep_client.create(ECHO_CRD)
        await asyncio.sleep(2)  # the CRD's endpoints come up
    ns = await fresh_namespace(kep_client, "kep-replicas")
    replicas, cached = await three_replicas_converge(kep_client, kep_cluster.kubeconfig, tmp_path, objects, ns)
    try:
        for name, count in cached.items():
            assert replicas.metric(name, "kubeloop_shard_server_side") == 1.0
            assert "server-side mode (KEP-5866)" in replicas.log(name)
            assert abs(count - objects / 3) <= 0.15 * objects / 3, f"{name} caches {count} of {objects}: {cached}"
        assert sum(cached.values()) == objects, f"the caches overlap or miss objects: {cached}"
        # The server dropped the other replicas' status updates from each watch (its own count).
        raw = kep_cluster.kubectl("get", "--raw", "/metrics").stdout
        dropped = re.search(r'^apiserver_watch_filtered_events_total{group="test.kubeloop.dev",resource="echoes"} '
                            r"(\S+)$", raw, re.MULTILINE)
        assert dropped and float(dropped.group(1)) >= objects, "each status update reached one watch of three"

        # A ring change: r3 leaves, r1 and r2 re-list with their wider ranges and take its objects over.
        await replicas.stop("r3")
        for i in range(0, objects, 10):
            await kep_client.patch(ECHOES, f"e{i}", {"spec": {"message": "m1"}}, ns)

        async def halves() -> bool:
            slots = [replicas.metric(n, "kubeloop_shard_slots_owned") or 0 for n in ("r1", "r2")]
            cached = [replicas.metric(n, "kubeloop_shard_cached_objects") or 0 for n in ("r1", "r2")]
            return sum(slots) == 2048 and sum(cached) == objects and await converged(kep_client, ns)

        await until("r1 and r2 to take r3's share over", halves, 60)
        for name in ("r1", "r2"):
            count = replicas.metric(name, "kubeloop_shard_cached_objects") or 0
            assert abs(count - objects / 2) <= 0.15 * objects / 2, f"{name} caches {count} of {objects}"
            assert "re-listing" in replicas.log(name), "re-listed with the wider ranges when r3 left"
    finally:
        await replicas.close()
    exclusive(tmp_path / "audit", {f"e{i}" for i in range(objects)})


async def test_three_replicas_converge_client_side_without_the_gate(kube_cluster: Any, kube_client: Client,
                                                                     namespace: str, echo_crd: str,
                                                                     tmp_path: Path) -> None:
    objects = 300
    replicas, cached = await three_replicas_converge(kube_client, kube_cluster.kubeconfig, tmp_path, objects,
                                                     namespace)
    try:
        for name, count in cached.items():
            assert "client-side mode" in replicas.log(name)
            assert replicas.metric(name, "kubeloop_shard_server_side") in (None, 0.0)
            assert count == objects, f"client-side: {name} caches every object ({cached})"
    finally:
        await replicas.close()
    exclusive(tmp_path / "audit", {f"e{i}" for i in range(objects)})
