"""Fixtures of the differential suite: the two backends (the real local control plane and the fake),
each with the Echo CRD installed, and the agreement tally printed at the end of the session (and written
to ``$KUBELOOP_DIFF_REPORT`` as JSON when set)."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest_asyncio

from kubeloop.client.config import Auth, Config, Credentials
from kubeloop.testing.apiserver import FakeApiServer
from tests.differential.harness import Backend, WaitFor, new_namespace, run
from tests.integration.conftest import ECHO_CRD

TALLY: dict[str, Any] = {"sequences": 0, "agreeing_sequences": 0, "steps": 0, "agreeing_steps": 0,
                         "differences": [], "namespaces": []}
# The fuzzer's tally: per kind [steps, agreeing steps]; per "kind op mutation" the steps that differed.
FUZZ: dict[str, Any] = {"sequences": 0, "agreeing_sequences": 0, "kinds": {}, "labels": {}, "differences": [],
                        "explained": {}, "namespaces": [], "crds": [], "watches": 0, "watch_events": 0}

_ECHO_READY = WaitFor("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/echoes.test.kubeloop.dev",
                      "status.acceptedNames.kind", "Echo")


async def _install_echo(backend: Backend) -> None:
    status, body = await backend.request("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
                                         ECHO_CRD)
    assert status in (201, 409), body
    # Established and discovered is not yet served: a fresh real server answers 429 "storage is
    # (re)initializing" until the CRD's watch cache is filled, so wait for a list to succeed too.
    await run(backend, [_ECHO_READY, WaitFor("/apis/test.kubeloop.dev/v1", "kind", "APIResourceList"),
                        WaitFor("/apis/test.kubeloop.dev/v1/echoes", "kind", "EchoList")], new_namespace())


@pytest_asyncio.fixture(scope="session", loop_scope="session")
async def http() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession() as session:
        yield session


# The nodes the sequences bind pods to, so that no scheduler or kubelet touches them. On the real cluster
# they must exist (as Node objects no kubelet runs, tainted against scheduling): the pod garbage collector
# deletes pods bound to a node that does not, tens of seconds into a session.
IDLE_NODES = ("fuzz-node", "diff-node")


async def _idle_nodes(backend: Backend) -> list[str]:
    """Creates the idle nodes missing; returns those this session created (only those go at its end: a
    session sharing the control plane with a long run must not delete the nodes that run's pods are on)."""
    made = []
    for name in IDLE_NODES:
        status, body = await backend.request("POST", "/api/v1/nodes", {
            "apiVersion": "v1", "kind": "Node", "metadata": {"name": name},
            "spec": {"taints": [{"key": "kubeloop.dev/idle", "effect": "NoSchedule"}]}})
        assert status in (201, 409), body
        made += [name] if status == 201 else []
    return made


@pytest_asyncio.fixture(scope="session", loop_scope="session")
async def real(kube_cluster: Any, http: aiohttp.ClientSession) -> AsyncIterator[Backend]:
    backend = Backend("real", Config.from_kubeconfig(str(kube_cluster.kubeconfig)), http)
    await _install_echo(backend)
    made = await _idle_nodes(backend)
    yield backend
    # the sequences' namespaces, now that the session's tests are done
    for ns in TALLY["namespaces"] + FUZZ["namespaces"]:
        await backend.request("DELETE", f"/api/v1/namespaces/{ns}")
    for name in FUZZ["crds"]:
        await backend.request("DELETE", f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{name}")
    for name in made:
        await backend.request("DELETE", f"/api/v1/nodes/{name}")


@pytest_asyncio.fixture(scope="session", loop_scope="session")
async def fake(http: aiohttp.ClientSession) -> AsyncIterator[Backend]:
    async with FakeApiServer() as server:
        backend = Backend("fake", Config(server=server.url, auth=Auth(Credentials(token="t"))), http)
        await _install_echo(backend)
        yield backend


@pytest_asyncio.fixture(scope="session", loop_scope="session", autouse=True)
async def _tally() -> AsyncIterator[None]:
    yield
    _fuzz_report()
    if not TALLY["sequences"]:
        return
    rate = 100.0 * TALLY["agreeing_steps"] / max(1, TALLY["steps"])
    print(f"\nkubeloop fake API server vs real: {TALLY['agreeing_sequences']}/{TALLY['sequences']} sequences and "
          f"{TALLY['agreeing_steps']}/{TALLY['steps']} steps agree ({rate:.1f} %)", file=sys.__stderr__)
    path = os.environ.get("KUBELOOP_DIFF_REPORT")
    if path:
        with open(path, "w") as out:
            json.dump({**{k: v for k, v in TALLY.items() if k != "namespaces"}, "rate": rate}, out, indent=1)


def _fuzz_report() -> None:
    if not FUZZ["sequences"]:
        return
    steps = sum(k[0] for k in FUZZ["kinds"].values())
    agree = sum(k[1] for k in FUZZ["kinds"].values())
    lines = [f"kubeloop fake vs real, fuzzed: {FUZZ['agreeing_sequences']}/{FUZZ['sequences']} sequences and "
             f"{agree}/{steps} steps agree ({100.0 * agree / max(1, steps):.1f} %)"]
    lines.append(f"  watches compared: {FUZZ['watches']} ({FUZZ['watch_events']} events on the real server)")
    for kind, (n, ok) in sorted(FUZZ["kinds"].items()):
        lines.append(f"  {kind:<11} {ok:>6}/{n:<6} {100.0 * ok / max(1, n):5.1f} %")
    for why, n in sorted(FUZZ["explained"].items()):
        lines.append(f"  explained ({n}): {why}")
    unexplained = sum(FUZZ["labels"].values())
    lines.append(f"  unexplained differences: {unexplained}")
    print("\n" + "\n".join(lines), file=sys.__stderr__)
    write_fuzz_report()


def write_fuzz_report() -> None:
    """The fuzzer's tally as JSON to ``$KUBELOOP_FUZZ_REPORT`` (rewritten after every sequence, so a
    long run stopped early still leaves its figures)."""
    path = os.environ.get("KUBELOOP_FUZZ_REPORT")
    if not path:
        return
    steps = sum(k[0] for k in FUZZ["kinds"].values())
    agree = sum(k[1] for k in FUZZ["kinds"].values())
    with open(path, "w") as out:
        shown = {k: v for k, v in FUZZ.items() if k not in ("namespaces", "crds")}
        json.dump(shown | {"steps": steps, "agreeing_steps": agree}, out, indent=1)
