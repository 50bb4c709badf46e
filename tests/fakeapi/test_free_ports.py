"""Operators with webhooks run in tests on ports the system picks: another program holding the default
webhook port (9443, controller-runtime's) does not stop them, on the fake API server as on the real one."""

from __future__ import annotations

import socket

import pytest

from kubeloop.operators.blackadder import build_operator
from kubeloop.operators.blackadder.settings import BlackadderSettings
from kubeloop.resources.crd import crds_for
from kubeloop.testing import install_crds, operator_running
from kubeloop.testing.apiserver import FakeApiServer
from kubeloop.webhooks.runtime import DEFAULT_PORT

op = build_operator()
if "x-kubernetes-validations" in str(crds_for(op.custom_resources())):
    pytest.importorskip("celpy", reason="blackadder's CRD has CEL rules: pip install kubeloop[fake]")


@pytest.fixture
def default_port_taken() -> socket.socket | None:
    """Holds 127.0.0.1:9443 for the test (or finds it held by another program already)."""
    sock = socket.socket()
    try:
        sock.bind(("127.0.0.1", DEFAULT_PORT))
        sock.listen()
    except OSError:
        sock.close()
        yield None  # taken already: the test is as meaningful
        return
    yield sock
    sock.close()


async def test_an_operator_with_webhooks_runs_while_the_default_port_is_taken(default_port_taken, kube_target) -> None:
    assert op.hooks.conversions, "blackadder serves a conversion webhook: the server this test is about"
    if kube_target.real:
        pytest.skip("the real control plane's run_operator has always used a free port")
    op.settings = BlackadderSettings(operator_namespace=kube_target.namespace)
    async with kube_target.run_operator(op) as running:
        webhooks = running.manager.webhooks
        assert webhooks is not None and webhooks.server is not None
        assert webhooks.server.port != DEFAULT_PORT


async def test_operator_running_picks_a_free_port_too(default_port_taken) -> None:
    async with FakeApiServer() as fake, await fake.client() as admin:
        await install_crds(admin, op)
        await admin.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "home"}})
        op.settings = BlackadderSettings(operator_namespace="home")
        async with await fake.client(field_manager=op.name) as client, operator_running(op, client) as manager:
            assert manager.webhooks is not None and manager.webhooks.server is not None
            assert manager.webhooks.server.port != DEFAULT_PORT
