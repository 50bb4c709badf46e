"""The fenced leader on the real API server: two replicas, each in its own thread with its own event loop
and client, elect a leader; the leader's loop is held by a pure-Python computation until the standby has
taken the expired Lease; the old leader's write as the computation ends must not reach the API server
(and, unfenced, it would). The scenario is tests/unit/test_leader_stall.py's, here against kube-apiserver."""

from __future__ import annotations

import asyncio
from typing import Any

from kubeloop.client import Client
from kubeloop.controller.gate import Fenced
from tests.unit.test_leader_stall import scenario


async def test_the_old_leader_writes_nothing_after_a_stall_in_which_the_standby_took_over(
        kube_cluster: Any, namespace: str) -> None:
    async def client() -> Client:
        return await Client.from_kubeconfig(str(kube_cluster.kubeconfig))

    raised, holder, reached = await asyncio.to_thread(scenario, client, True, namespace)
    assert isinstance(raised, Fenced), raised
    assert holder == "b" and not reached


async def test_unfenced_the_old_leaders_write_would_reach_the_api_server(kube_cluster: Any, namespace: str) -> None:
    async def client() -> Client:
        return await Client.from_kubeconfig(str(kube_cluster.kubeconfig))

    raised, holder, reached = await asyncio.to_thread(scenario, client, False, namespace)
    assert raised is None and holder == "b" and reached
