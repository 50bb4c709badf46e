"""One test, two API servers: the in-process fake (default, milliseconds) or the real local control plane
(``pytest --real-cluster``, or ``KUBELOOP_TEST_REAL_CLUSTER=1``). The ``kube_target`` fixture gives a
``KubeTarget``; ``target.run_operator(operator)`` runs the operator on it the same way in both modes: CRDs
installed, RBAC generated, every permission the operator uses recorded for ``running.audit()``. Only the
real control plane *enforces* that RBAC (a missing permission is a 403 there); the fake serves what it
lists in docs/reference/fake-api-server.md and answers 501 for the rest.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from kubeloop.builder import Operator
from kubeloop.client import Client
from kubeloop.controller import DEFAULT_CONCURRENCY
from kubeloop.manager import ManagerOptions
from kubeloop.resources import render_rbac
from kubeloop.testing.operator import RunningOperator, install_crds, operator_running, run_operator
from kubeloop.webhooks.runtime import WebhookOptions

FLAG = "--real-cluster"
ENV_REAL = "KUBELOOP_TEST_REAL_CLUSTER"


def wants_real_cluster(flag: bool) -> bool:
    """The flag, or the environment variable (for CI jobs that cannot change the command line)."""
    value = os.environ.get(ENV_REAL, "").strip().lower()
    if value not in ("", "0", "1", "true", "false", "yes", "no"):
        raise ValueError(f"{ENV_REAL}={value!r}: use 1 (real control plane) or 0 (the fake API server)")
    return flag or value in ("1", "true", "yes")


@dataclass
class KubeTarget:
    """The API server a test runs on, its admin client and the namespace to use."""

    client: Client  # admin
    namespace: str
    cluster: Any | None = None  # the local control plane (real mode)
    fake: Any | None = None  # the FakeApiServer (fake mode)

    @property
    def real(self) -> bool:
        return self.cluster is not None

    @contextlib.asynccontextmanager
    async def run_operator(self, operator: Operator, concurrency: int = DEFAULT_CONCURRENCY
                           ) -> AsyncIterator[RunningOperator]:
        """Runs ``operator`` until the block ends: under its ServiceAccount on the real control plane
        (``kubeloop.testing.operator.run_operator``), or in-process on the fake."""
        if self.cluster is not None:
            async with run_operator(self.cluster, self.client, operator, self.namespace,
                                    concurrency=concurrency) as running:
                yield running
            return
        async with _on_fake(self.fake, self.client, operator, self.namespace, concurrency) as running:
            yield running


@contextlib.asynccontextmanager
async def _on_fake(fake: Any, admin: Client, operator: Operator, namespace: str, concurrency: int
                   ) -> AsyncIterator[RunningOperator]:
    await install_crds(admin, operator)
    opts = ManagerOptions(namespaces=[namespace], metrics_bind_address="127.0.0.1:0",
                          health_probe_bind_address="127.0.0.1:0", graceful_shutdown_timeout=5,
                          freeze_gc=False, leader_election_namespace=namespace,
                          webhook=WebhookOptions(port=0))  # any free port: never a fixed one in tests
    # The same RBAC as on the real control plane, for the audit (the fake does not enforce it).
    rbac = render_rbac(operator.name, namespace, operator.permissions(), operator.namespaced_permissions(),
                       events="cluster", leader_election=opts.leader_elect)
    client = await fake.client(field_manager=operator.name, record_permissions=True)
    try:
        async with operator_running(operator, client, options=opts, concurrency=concurrency) as manager:
            yield RunningOperator(manager, client, rbac)
    finally:
        await client.close()
