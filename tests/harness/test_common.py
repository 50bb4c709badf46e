"""harness.common, the parts both commands share: percentiles, the Prometheus text format, bounded
concurrency, the recorded command line, saving results, and an operator as a child process."""

from __future__ import annotations

import asyncio
import json
import signal
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest

from harness.bench import apimetrics
from harness.common import prometheus
from harness.common.concurrency import bounded
from harness.common.listwatch import ListWatch
from harness.common.processes import ChildProcess, kubeloop_run
from harness.common.provenance import invocation, save_json
from harness.common.stats import percentile

METRICS = """# HELP rest_client_requests_total Number of HTTP requests
# TYPE rest_client_requests_total counter
rest_client_requests_total{code="200",method="GET",host="127.0.0.1:6443"} 12.0
rest_client_requests_total{code="409",method="PATCH",host="127.0.0.1:6443"} 3.0
rest_client_requests_total{code="409",method="PUT",host="127.0.0.1:6443"} 2.0
rest_client_requests_total_created{code="200",method="GET",host="127.0.0.1:6443"} 1.7e9
workqueue_depth{name="w",controller="w"} 0.0
apiserver_request_total{code="201",component="apiserver",group="bench.example.com",resource="widgets",\
scope="resource",subresource="",verb="POST",version="v1"} 20
apiserver_request_total{code="200",component="apiserver",group="bench.example.com",resource="widgets",\
scope="resource",subresource="status",verb="PATCH",version="v1"} 19
apiserver_request_total{code="409",component="apiserver",group="bench.example.com",resource="widgets",\
scope="resource",subresource="status",verb="PATCH",version="v1"} 1
apiserver_request_total{code="200",component="apiserver",group="",resource="",scope="",subresource="",\
verb="GET",version=""} 7
"""


def test_percentile_nearest_rank() -> None:
    assert percentile([], 99) is None
    assert percentile([5.0], 99) == 5.0
    values = [float(i) for i in range(1, 101)]
    assert percentile(values, 99) == 99.0 and percentile(values, 50) == 50.0 and percentile(values, 100) == 100.0
    assert percentile(reversed(values), 95) == 95.0  # sorts what it is given
    # rank ceil(q·n/100): at n=20, p95 is the 19th value (not the 20th), p99 the 20th
    twenty = [float(i) for i in range(1, 21)]
    assert percentile(twenty, 95) == 19.0 and percentile(twenty, 99) == 20.0
    # 7 / 100 * 100 is 7.000000000000001 in floating point: the rank is still the 7th
    assert percentile([float(i) for i in range(1, 101)], 7) == 7.0


def test_prometheus_samples_by_name_and_labels() -> None:
    samples = prometheus.parse(METRICS)
    assert ("workqueue_depth", {"name": "w", "controller": "w"}, 0.0) in samples
    assert prometheus.total(METRICS, "rest_client_requests_total", code="409") == 5.0
    # by exact name: rest_client_requests_total_created is another metric
    assert prometheus.total(METRICS, "rest_client_requests_total") == 17.0
    assert [s.value for s in prometheus.parse(METRICS, "workqueue_depth")] == [0.0]


def test_api_server_counters_keyed_by_verb_and_resource() -> None:
    counts = apimetrics.parse(METRICS)
    assert counts == {("POST", "bench.example.com", "widgets", ""): 20,
                      ("PATCH", "bench.example.com", "widgets", "status"): 20}  # the non-resource GETs left out


async def test_bounded_keeps_order_and_limit() -> None:
    running, peak = 0, 0

    async def double(x: int) -> int:
        nonlocal running, peak
        running += 1
        peak = max(peak, running)
        await asyncio.sleep(0.001 * (x % 3))
        running -= 1
        return 2 * x

    assert await bounded(range(20), double, 4) == [2 * x for x in range(20)]
    assert peak == 4


async def test_bounded_raises_the_first_error() -> None:
    async def fail_on_three(x: int) -> int:
        if x == 3:
            raise ValueError("three")
        return x

    with pytest.raises(ValueError, match="three"):
        await bounded(range(10), fail_on_three, 2)


def test_the_recorded_command_leaves_out_output_paths_and_home(tmp_path: Path) -> None:
    argv = ["--n", "20", "--log-dir", str(tmp_path / "x"), f"--results={tmp_path / 'r.json'}", "--kubeconfig",
            str(Path.home() / "k")]
    flags = {"--log-dir": True, "--results": True}
    assert invocation("python -m harness.bench", argv, flags) == "python -m harness.bench --n 20 --kubeconfig ~/k"


def test_save_json_replaces_the_file_whole(tmp_path: Path) -> None:
    path = tmp_path / "out" / "results.json"
    save_json({"a": 1}, path)
    save_json({"a": 2, "when": Path("/p")}, path)  # what JSON cannot say is written as text
    assert json.loads(path.read_text()) == {"a": 2, "when": "/p"}
    assert [p.name for p in path.parent.iterdir()] == ["results.json"]  # no temporary file left


def test_kubeloop_run_on_free_loopback_ports() -> None:
    argv = kubeloop_run("immortal", "/k", "--namespace", "n", metrics_port=1234)
    assert argv[:5] == [sys.executable, "-m", "kubeloop.cli.main", "run", "immortal"]
    assert argv[argv.index("--metrics-bind-address") + 1] == "127.0.0.1:1234"
    probe = argv[argv.index("--health-probe-bind-address") + 1]
    assert probe.startswith("127.0.0.1:") and int(probe.split(":")[1]) > 0
    assert argv[-2:] == ["--namespace", "n"]


async def test_child_process_logs_and_stops(tmp_path: Path) -> None:
    log = tmp_path / "child.log"
    child = ChildProcess(log)
    # Ignores SIGTERM: terminate must fall back to SIGKILL after the grace period.
    code = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); print('up', flush=True); time.sleep(60)"
    await child.spawn([sys.executable, "-c", code], {}, header="$ child\n")
    assert child.running and child.pid
    for _ in range(100):
        if "up" in child.log_text():
            break
        await asyncio.sleep(0.05)
    await child.terminate(grace=0.5)
    assert not child.running and child.proc is not None and child.proc.returncode == -signal.SIGKILL
    assert child.tail(2) == "$ child\nup"
    child.send(signal.SIGTERM)  # no error once it has exited


class ScriptedClient:
    """Lists and watch streams in the order given; a stream that runs out stays open (as a quiet watch
    does). Only what ListWatch calls."""

    def __init__(self, lists: list[list[dict]], watches: list[list[dict]]) -> None:
        self.lists, self.watches = lists, watches
        self.watched_from: list[str] = []

    async def resource(self, ref: str) -> str:
        return ref

    async def list_pages(self, res: str, namespace: str | None, **kw: object) -> AsyncIterator[dict]:
        items = self.lists.pop(0)
        yield {"metadata": {"resourceVersion": str(max([int(o["metadata"]["resourceVersion"]) for o in items],
                                                       default=1))}, "items": items}

    async def watch(self, res: str, namespace: str | None, *, resource_version: str,
                    **kw: object) -> AsyncIterator[dict]:
        self.watched_from.append(resource_version)
        if not self.watches:
            await asyncio.Event().wait()
        for event in self.watches.pop(0):
            yield event


def obj(name: str, version: int) -> dict:
    return {"metadata": {"name": name, "namespace": "ns", "resourceVersion": str(version)}}


async def test_list_watch_relists_and_reports_what_changed_meanwhile() -> None:
    seen: list[tuple[str, str]] = []
    counted: list[str] = []
    client = ScriptedClient(
        lists=[[obj("a", 1), obj("b", 2)], [obj("a", 5), obj("c", 6)]],
        watches=[[{"type": "MODIFIED", "object": obj("a", 3)},
                  {"type": "ERROR", "object": {"code": 410, "reason": "Expired"}}]])
    view = ListWatch(client, "widgets", lambda t, o, _: seen.append((t, o["metadata"]["name"])), relist=True,
                     count=counted.append)
    view.start()
    await view.wait_synced(5)
    for _ in range(100):
        if len(seen) >= 6:
            break
        await asyncio.sleep(0.01)
    await view.stop()
    # first list, the watch, then after the 410 a relist: b went, a changed again, c came
    assert seen == [("ADDED", "a"), ("ADDED", "b"), ("MODIFIED", "a"), ("DELETED", "b"), ("MODIFIED", "a"),
                    ("ADDED", "c")]
    assert sorted(view.objects) == ["ns/a", "ns/c"] and view.relists == 2
    assert client.watched_from == ["2", "6"] and counted == ["LIST", "WATCH", "LIST", "WATCH"]


async def test_list_watch_without_relist_ends_on_an_error_and_says_so() -> None:
    client = ScriptedClient(lists=[[obj("a", 1)]],
                            watches=[[{"type": "ERROR", "object": {"code": 500, "reason": "InternalError"}}]])
    view = ListWatch(client, "widgets", lambda *a: None)
    view.start()
    await view.wait_synced(5)
    for _ in range(100):
        try:
            view.check()
        except RuntimeError as exc:
            assert "InternalError" in str(exc)
            break
        await asyncio.sleep(0.01)
    else:
        raise AssertionError("a failed watch must end the view and be raised by check()")
    assert view.objects == {}  # a view that never relists keeps no copies
    await view.stop()


async def test_list_watch_without_relist_lists_again_on_410_and_repeats_nothing() -> None:
    """A real API server answers 410 whenever its watch cache has moved past the version asked for,
    even right after a list (seen in CI: a fresh CRD's list at 1898, its watch cache starting at 1900).
    The benchmark's view must survive that without reporting any object twice."""
    seen: list[tuple[str, str, str]] = []
    client = ScriptedClient(
        lists=[[obj("a", 1), obj("b", 2)], [obj("a", 1), obj("b", 4), obj("c", 5)]],
        watches=[[{"type": "MODIFIED", "object": obj("a", 3)},
                  {"type": "ERROR", "object": {"code": 410, "reason": "Expired"}}]])
    view = ListWatch(client, "widgets",
                     lambda t, o, _: seen.append((t, o["metadata"]["name"], o["metadata"]["resourceVersion"])))
    view.start()
    await view.wait_synced(5)
    for _ in range(100):
        if len(seen) >= 5:
            break
        await asyncio.sleep(0.01)
    view.check()  # still running
    await view.stop()
    # after the 410 the relist hands on b and c (newer than 3, the last version seen), not a again
    assert seen == [("ADDED", "a", "1"), ("ADDED", "b", "2"), ("MODIFIED", "a", "3"), ("ADDED", "b", "4"),
                    ("ADDED", "c", "5")]
    assert client.watched_from == ["2", "5"] and view.objects == {}  # the second watch from the relist


class BreakingClient(ScriptedClient):
    """Its first watch stream breaks after the events given, as a connection the client dropped does."""

    async def watch(self, res: str, namespace: str | None, *, resource_version: str,
                    **kw: object) -> AsyncIterator[dict]:
        first = not self.watched_from
        async for event in super().watch(res, namespace, resource_version=resource_version, **kw):
            yield event
        if first:
            raise aiohttp.ServerDisconnectedError("closed with its pool")


async def test_list_watch_without_relist_resumes_a_broken_watch_from_the_last_version() -> None:
    """Under load the client may drop a pool it judges dead, cutting the watch on it: the benchmark's
    view goes on from the last version seen (nothing missed, nothing twice) instead of going blind."""
    seen: list[tuple[str, str]] = []
    client = BreakingClient(lists=[[obj("a", 1)]],
                            watches=[[{"type": "MODIFIED", "object": obj("a", 3)}],
                                     [{"type": "ADDED", "object": obj("b", 4)}]])
    view = ListWatch(client, "widgets", lambda t, o, _: seen.append((t, o["metadata"]["name"])))
    view.start()
    await view.wait_synced(5)
    for _ in range(100):
        if len(seen) >= 3:
            break
        await asyncio.sleep(0.02)
    view.check()  # still running
    await view.stop()
    assert seen == [("ADDED", "a"), ("MODIFIED", "a"), ("ADDED", "b")]
    # from the list, after the break, after the second stream ended
    assert client.watched_from == ["1", "3", "4"] and view.resumes == 1 and view.relists == 1
