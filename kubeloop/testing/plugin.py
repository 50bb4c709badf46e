"""pytest plugin (entry point ``kubeloop``): a real control plane per test session.

- ``kube_cluster`` (session): builds (cached) and starts a dedicated LocalCluster, or uses the
  cluster in ``$KUBELOOP_TEST_KUBECONFIG``; stopped and wiped at session end unless
  ``$KUBELOOP_TEST_KEEP=1`` (then a fixed cluster named ``pytest`` is reused across sessions).
- ``kube_client`` (session, async): a ``kubeloop.client.Client`` with the admin kubeconfig.
- ``namespace`` (function, async): a fresh namespace, deleted afterwards (without waiting for it).
- ``fake_api`` / ``fake_client`` (function, async): an in-process fake API server
  (``kubeloop.testing.apiserver``, fresh per test, starts in about a millisecond) and a Client for it.
  Not the real control plane: docs/reference/fake-api-server.md lists what it serves and its differences.
- ``kube_target`` (function): the fake API server, or with ``--real-cluster`` the real control plane
  (``kubeloop.testing.target``).
- ``fake_clock`` (function, async): virtual time on the test's event loop (idle waits take no wall time).

Tests using ``kube_cluster`` are marked ``cluster`` automatically (``-m "not cluster"`` skips them).
The async fixtures live on the session event loop, so async tests using them must run there too
(``asyncio_default_test_loop_scope = "session"``, as in kubeloop's own pyproject).
"""

from __future__ import annotations

import os
import re
import secrets
import sys
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

ENV_KUBECONFIG = "KUBELOOP_TEST_KUBECONFIG"
ENV_KEEP = "KUBELOOP_TEST_KEEP"


def pytest_configure(config: pytest.Config) -> None:
    """Declares the ``cluster`` marker."""
    config.addinivalue_line("markers", "cluster: needs the local control plane")


def pytest_addoption(parser: pytest.Parser) -> None:
    """``--real-cluster``: ``kube_target`` is the real local control plane instead of the fake."""
    parser.addoption("--real-cluster", action="store_true", default=False,
                     help="kube_target: run on the real local control plane, not the in-process fake API "
                          "server (also: KUBELOOP_TEST_REAL_CLUSTER=1)")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Marks tests that use ``kube_cluster`` with ``cluster``, so ``-m "not cluster"`` skips them."""
    for item in items:
        if "kube_cluster" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.cluster)


def _progress(msg: str) -> None:
    # Building Kubernetes takes minutes: bypass pytest's capture so the session doesn't look hung.
    print(f"kubeloop: {msg}", file=sys.__stderr__, flush=True)


@pytest.fixture(scope="session")
def kube_cluster() -> Iterator[Any]:
    """The cluster under test: ``.kubeconfig``, ``.kubectl(*args)``, ``.service_account_kubeconfig()``."""
    from kubeloop.envtest import BuildError, ClusterError, ExternalCluster, LocalCluster

    external = os.environ.get(ENV_KUBECONFIG)
    if external:
        yield ExternalCluster(external)
        return
    keep = os.environ.get(ENV_KEEP, "") not in ("", "0", "false")
    cluster = LocalCluster("pytest" if keep else f"pytest-{os.getpid()}", log=_progress)
    try:
        cluster.up()
    except (BuildError, ClusterError) as exc:
        cluster.down(wipe=not keep)
        pytest.fail(f"kubeloop could not start a local cluster: {exc}", pytrace=False)
    try:
        yield cluster
    finally:
        if not keep:
            cluster.down(wipe=True)


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
        """An admin ``kubeloop.client.Client`` for the test cluster."""
        from kubeloop.client import Client

        client = await Client.from_kubeconfig(str(kube_cluster.kubeconfig))
        try:
            yield client
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
