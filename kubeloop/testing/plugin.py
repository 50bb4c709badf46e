"""pytest plugin (entry point ``kubeloop``): a real control plane per test session.

- ``kube_cluster`` (session): builds (cached) and starts a dedicated LocalCluster, or uses the
  cluster in ``$KUBELOOP_TEST_KUBECONFIG``; stopped and wiped at session end unless
  ``$KUBELOOP_TEST_KEEP=1`` (then a fixed cluster named ``pytest`` is reused across sessions). The
  workers of one ``pytest -n N`` run (pytest-xdist) share one cluster, which the last worker out stops.
- ``kube_client`` (session, async): a ``kubeloop.client.Client`` with the admin kubeconfig.
- ``namespace`` (function, async): a fresh namespace, deleted afterwards (without waiting for it).
- ``fake_api`` / ``fake_client`` (function, async): an in-process fake API server
  (``kubeloop.testing.apiserver``, fresh per test, starts in about a millisecond) and a Client for it.
  Not the real control plane: docs/reference/fake-api-server.md lists what it serves and its differences.
- ``kube_target`` (function): the fake API server, or with ``--real-cluster`` the real control plane
  (``kubeloop.testing.target``).
- ``fake_clock`` (function, async): virtual time on the test's event loop (idle waits take no wall time).

Tests using ``kube_cluster`` are marked ``cluster`` automatically (``-m "not cluster"`` skips them).

Every test phase (setup, call, teardown) has a time limit, 300 s unless ``@pytest.mark.time_limit(s)``,
``--time-limit=S``, ``$KUBELOOP_TEST_TIME_LIMIT`` or the ini option ``kubeloop_time_limit`` says otherwise
(0: none). Past it the test fails with the stack of every asyncio task and thread, and the session goes
on (``kubeloop.testing.timelimit``).
The async fixtures live on the session event loop, so async tests using them must run there too
(``asyncio_default_test_loop_scope = "session"``, as in kubeloop's own pyproject).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import secrets
import sys
from collections.abc import AsyncIterator, Generator, Iterator
from pathlib import Path
from typing import Any

import pytest

from kubeloop.testing import timelimit
from kubeloop.testing.session import _alive, _start_time

ENV_KUBECONFIG = "KUBELOOP_TEST_KUBECONFIG"
ENV_KEEP = "KUBELOOP_TEST_KEEP"
ENV_TIME_LIMIT = "KUBELOOP_TEST_TIME_LIMIT"
DEFAULT_TIME_LIMIT = 300.0
BUILD_TIME_LIMIT = 3600.0  # building the control plane on first use: minutes on 2 cores, once


def pytest_configure(config: pytest.Config) -> None:
    """Declares the ``cluster`` and ``time_limit`` markers; checks the time limit's settings."""
    config.addinivalue_line("markers", "cluster: needs the local control plane")
    config.addinivalue_line("markers", "time_limit(seconds): this test's limit per phase (0: none), "
                                       "instead of kubeloop_time_limit")
    try:
        _default_time_limit(config)
    except ValueError as exc:
        raise pytest.UsageError(str(exc)) from None
    if not timelimit.available():
        _progress("no SIGALRM here (or not the main thread): tests run without a time limit")


def pytest_addoption(parser: pytest.Parser) -> None:
    """``--real-cluster``: ``kube_target`` is the real local control plane instead of the fake.
    ``--time-limit`` / ``kubeloop_time_limit``: the limit per test phase."""
    parser.addoption("--real-cluster", action="store_true", default=False,
                     help="kube_target: run on the real local control plane, not the in-process fake API "
                          "server (also: KUBELOOP_TEST_REAL_CLUSTER=1)")
    parser.addoption("--time-limit", type=float, default=None, metavar="SECONDS",
                     help="fail a test phase (setup, call, teardown) that runs longer, with the stack of every "
                          f"asyncio task and thread; 0: no limit (also: {ENV_TIME_LIMIT}; default: the ini "
                          f"option kubeloop_time_limit, else {DEFAULT_TIME_LIMIT:g})")
    parser.addini("kubeloop_time_limit", f"seconds per test phase before it fails (default {DEFAULT_TIME_LIMIT:g}; "
                                         "0: no limit)", default=str(DEFAULT_TIME_LIMIT))


def _default_time_limit(config: pytest.Config) -> float:
    """The session's limit: ``--time-limit``, else the environment, else the ini option."""
    given = config.getoption("--time-limit")
    if given is not None:
        where, value = "--time-limit", str(given)
    elif os.environ.get(ENV_TIME_LIMIT, "").strip():
        where, value = ENV_TIME_LIMIT, os.environ[ENV_TIME_LIMIT]
    else:
        where, value = "kubeloop_time_limit (ini)", str(config.getini("kubeloop_time_limit"))
    try:
        seconds = float(value)
    except ValueError:
        seconds = -1
    if seconds < 0:
        raise ValueError(f"{where}={value!r}: give the seconds a test phase may take, e.g. 300, or 0 for no limit")
    return seconds


def _time_limit(item: pytest.Item) -> float:
    marker = item.get_closest_marker("time_limit")
    if marker is None:
        return _default_time_limit(item.config)
    seconds = marker.args[0] if marker.args else marker.kwargs.get("seconds")
    if not isinstance(seconds, int | float) or seconds < 0:
        raise pytest.UsageError(f"{item.nodeid}: @pytest.mark.time_limit({seconds!r}): give seconds >= 0")
    return float(seconds)


_EXPIRED = pytest.StashKey[dict[str, timelimit.Watch]]()


def _limited(item: pytest.Item, phase: str) -> Iterator[None]:
    watch = None
    try:
        with timelimit.watching(f"{item.nodeid} ({phase})", _time_limit(item)) as watch:
            yield
    finally:
        if watch is not None and watch.expired is not None:
            item.stash.setdefault(_EXPIRED, {})[phase] = watch
            _reap(watch)


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> Iterator[None]:
    return (yield from _limited(item, "setup"))


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    return (yield from _limited(item, "call"))


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_teardown(item: pytest.Item) -> Iterator[None]:
    return (yield from _limited(item, "teardown"))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]
                              ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """A phase that ran out of time fails, its report led by the stacks taken when it did."""
    report = yield
    watch = item.stash.get(_EXPIRED, {}).get(call.when)
    if watch is not None and watch.expired is not None:
        exp = watch.expired
        own = str(report.longrepr) if report.longrepr else "(none)"
        report.outcome = "failed"
        report.longrepr = (f"{exp.phase} ran past its time limit of {exp.limit:g}s ({exp.how or 'stopped'}). "
                           f"Where every task and thread was at that moment:\n\n{exp.dump}\n\n"
                           f"--- the test's own error after it was stopped ---\n{own}")
    return report


def _reap(watch: timelimit.Watch) -> None:
    """A test interrupted outright may leave its task pending on the session's loop: cancel it and give it
    a moment to unwind, so that it does not run on during the next test."""
    task = watch.leftover_task()
    if task is None or task.get_loop().is_running() or task.get_loop().is_closed():
        return
    task.cancel()
    with contextlib.suppress(Exception, asyncio.CancelledError):
        task.get_loop().run_until_complete(asyncio.wait({task}, timeout=5))


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Marks tests that use ``kube_cluster`` with ``cluster``, so ``-m "not cluster"`` skips them."""
    for item in items:
        if "kube_cluster" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.cluster)


def _progress(msg: str) -> None:
    # Building Kubernetes takes minutes: bypass pytest's capture so the session doesn't look hung.
    print(f"kubeloop: {msg}", file=sys.__stderr__, flush=True)


@pytest.fixture(scope="session")
def kube_cluster(request: pytest.FixtureRequest) -> Iterator[Any]:
    """The cluster under test: ``.kubeconfig``, ``.kubectl(*args)``, ``.service_account_kubeconfig()``."""
    from kubeloop.envtest import BuildError, ClusterError, ExternalCluster, LocalCluster

    external = os.environ.get(ENV_KUBECONFIG)
    if external:
        yield ExternalCluster(external)
        return
    keep = os.environ.get(ENV_KEEP, "") not in ("", "0", "false")
    run = _xdist_run(request.config)
    name = "pytest" if keep else f"pytest-run-{run[:12]}" if run else f"pytest-{os.getpid()}"
    cluster = LocalCluster(name, log=_progress)
    workers = _Workers(cluster.data_dir.with_name(f"{name}.workers")) if run else None
    try:
        if workers:
            workers.join()
        with timelimit.extended(BUILD_TIME_LIMIT):
            cluster.up()  # one process starts it (up holds the cluster's lock); the others find it running
    except (BuildError, ClusterError) as exc:
        if not workers or workers.leave():
            cluster.down(wipe=not keep)
        pytest.fail(f"kubeloop could not start a local cluster: {exc}", pytrace=False)
    try:
        yield cluster
    finally:
        if not keep and (not workers or workers.leave()):
            cluster.down(wipe=True)


def _xdist_run(config: pytest.Config) -> str | None:
    """The run's id when this process is a pytest-xdist worker: every worker of one run has the same."""
    workerinput = getattr(config, "workerinput", None)
    return str(workerinput["testrunuid"]) if workerinput else None


class _Workers:
    """The processes sharing one cluster, in a file beside its data: the last one out stops it. A worker
    that died without leaving does not count (its pid is gone, or now belongs to a later process), so a
    crash cannot keep a cluster up."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.me = f"{os.getpid()}/{_start_time(os.getpid())}"

    def join(self) -> None:
        with self._locked() as workers:
            workers.add(self.me)

    def leave(self) -> bool:
        """True when no other live process still uses the cluster."""
        with self._locked() as workers:
            workers.discard(self.me)
            return not workers

    @contextlib.contextmanager
    def _locked(self) -> Iterator[set[str]]:
        import fcntl

        self.path.parent.mkdir(parents=True, exist_ok=True)
        # The folder is the lock: a lock file of its own could be removed under a waiting process.
        fd = os.open(self.path.parent, os.O_RDONLY)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            text = self.path.read_text() if self.path.exists() else ""
            workers = {w for w in text.split() if _alive(int(w.partition("/")[0]), w.partition("/")[2])}
            yield workers
            if workers:
                self.path.write_text(" ".join(sorted(workers)))
            else:
                self.path.unlink(missing_ok=True)
        finally:
            os.close(fd)  # releases the lock


def _namespace_name(test_name: str) -> str:
    short = re.sub(r"[^a-z0-9]+", "-", test_name.lower().removeprefix("test_")).strip("-")[:40].strip("-")
    return f"t-{short or 'x'}-{secrets.token_hex(3)}"


try:
    import pytest_asyncio
except ImportError:  # pragma: no cover - async fixtures need pytest-asyncio; the rest still works
    HAVE_PYTEST_ASYNCIO = False
else:
    HAVE_PYTEST_ASYNCIO = True

if HAVE_PYTEST_ASYNCIO:

    @pytest_asyncio.fixture(scope="session", loop_scope="session")
    async def kube_client(kube_cluster: Any) -> AsyncIterator[Any]:
        """An admin ``kubeloop.client.Client`` for the test cluster. At its start, what test sessions that
        died on this host left is removed; at its end, whatever this session still holds
        (``kubeloop.testing.session``)."""
        from kubeloop.client import Client
        from kubeloop.testing.session import current as current_session

        client = await Client.from_kubeconfig(str(kube_cluster.kubeconfig))
        session = current_session()
        swept = await session.sweep(client)
        if swept:
            _progress(f"removed what test sessions that died on this host left: {', '.join(swept)}")
        try:
            yield client
        finally:
            try:
                left = await session.finish(client)  # after failures and Ctrl-C too
                if left:
                    _progress(f"removed this session's leftovers: {', '.join(left)}")
            finally:
                await client.close()

    @pytest_asyncio.fixture(loop_scope="session")
    async def namespace(kube_client: Any, request: pytest.FixtureRequest) -> AsyncIterator[str]:
        """A unique namespace ``t-<test>-<rand>`` whose default ServiceAccount exists. On the hardened
        profile (the default) it enforces the ``restricted`` Pod Security Standard, as hardened clusters do
        for workloads: a test that needs less relabels it (``pod-security.kubernetes.io/enforce``)."""
        from kubeloop.client import NotFound
        from kubeloop.client.wait import wait_for
        from kubeloop.envtest.cluster import cluster_profile

        name = _namespace_name(request.node.name)
        labels = {"kubeloop.dev/test": "true"}
        profile = getattr(request.getfixturevalue("kube_cluster"), "profile", None) or cluster_profile()
        if profile == "hardened":
            labels["pod-security.kubernetes.io/enforce"] = "restricted"
        body = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": labels}}
        await kube_client.create(body)
        # Pods are rejected until the controller-manager has created the default ServiceAccount.
        await wait_for(kube_client, "serviceaccounts", "default", name, timeout=30,
                       description="the namespace's default ServiceAccount to exist")
        try:
            yield name
        finally:
            try:
                await kube_client.delete("namespaces", name)
            except NotFound:
                pass

    @pytest.fixture
    def kube_target(request: pytest.FixtureRequest) -> Any:
        """A ``kubeloop.testing.target.KubeTarget``: the fake API server (``fake_api``, namespace ``default``)
        unless ``--real-cluster`` or ``KUBELOOP_TEST_REAL_CLUSTER=1`` asks for the real control plane
        (``kube_cluster``, ``kube_client``, ``namespace``). Synchronous, so that it can ask for those
        fixtures only in the mode that needs them: the fake mode never builds or starts a cluster."""
        from kubeloop.testing.target import KubeTarget, wants_real_cluster

        try:
            real = wants_real_cluster(request.config.getoption("--real-cluster"))
        except ValueError as exc:
            pytest.fail(str(exc), pytrace=False)
        if real:
            return KubeTarget(request.getfixturevalue("kube_client"), request.getfixturevalue("namespace"),
                              cluster=request.getfixturevalue("kube_cluster"))
        return KubeTarget(request.getfixturevalue("fake_client"), "default", fake=request.getfixturevalue("fake_api"))

    @pytest_asyncio.fixture(loop_scope="session")
    async def fake_clock() -> AsyncIterator[Any]:
        """Virtual time for one test (``kubeloop.testing.virtualtime``): while the event loop is idle its
        clock jumps to the next timer, so requeues, backoff, resyncs, timers and leases take no wall
        time. For in-process servers only (``fake_api``), never with the real cluster. Request it before
        ``fake_api`` so their teardown runs in virtual time too."""
        from kubeloop.testing.virtualtime import VirtualTime

        with VirtualTime.of().running() as clock:
            yield clock

    @pytest_asyncio.fixture(loop_scope="session")
    async def fake_api() -> AsyncIterator[Any]:
        """A fresh ``FakeApiServer`` for one test (its ``.url``, ``.compact()``, ``.write_kubeconfig()``)."""
        from kubeloop.testing.apiserver import FakeApiServer

        async with FakeApiServer() as server:
            yield server

    @pytest_asyncio.fixture(loop_scope="session")
    async def fake_client(fake_api: Any) -> AsyncIterator[Any]:
        """A ``kubeloop.client.Client`` connected to ``fake_api``."""
        client = await fake_api.client()
        try:
            yield client
        finally:
            await client.close()
