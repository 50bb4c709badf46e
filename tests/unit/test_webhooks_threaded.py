"""The webhook server with ``threaded=True``: the server's contract (tests/unit/test_webhooks_server.py, run
again here against a threaded server through this module's ``server`` fixture, whose handlers run on the
test's loop as an operator's would), reviews of a loop-free handler answered while a reconcile computes on
the operator's loop for seconds, and a handler that is not loop-free run on the operator's loop. Latencies
are printed (``-s``), never asserted."""

from __future__ import annotations

import asyncio
import ssl
import threading
import time
from collections.abc import AsyncIterator
from typing import Any

import orjson
import pytest_asyncio

from kubeloop.webhooks import Denied, WebhookCerts, WebhookServer
from kubeloop.webhooks.admission import AdmissionRequest

from .controller_kit import Kit, cm
from .test_loop_responsive import COMPUTE, _admit, _report, _timed, check, heavy
from .test_webhooks_admission import review
from .test_webhooks_server import broken, defaults, slow, strict
from .test_webhooks_server import test_denial_names_the_field_and_warnings_pass as test_denial  # noqa: F401
from .test_webhooks_server import test_handler_exception_is_answered_per_policy as test_exception  # noqa: F401
from .test_webhooks_server import test_malformed_input_is_400_with_a_reason as test_malformed  # noqa: F401
from .test_webhooks_server import test_metrics_and_readiness as test_metrics  # noqa: F401
from .test_webhooks_server import test_mutation_patch_survives_in_place_edits as test_mutation  # noqa: F401
from .test_webhooks_server import test_rotation_serves_a_new_certificate_on_new_connections as test_rotation  # noqa: F401
from .test_webhooks_server import test_slow_handler_is_answered_before_the_timeout as test_slow  # noqa: F401
from .test_webhooks_server import test_wrong_return_type_is_a_failure as test_wrong_type  # noqa: F401

OWNER: dict[str, asyncio.AbstractEventLoop] = {}
RELEASE: dict[str, asyncio.Event] = {}


async def on_the_loop(req: AdmissionRequest) -> None:
    """A handler awaiting an object of the operator's loop (as a client call would)."""
    OWNER["ran on"] = asyncio.get_running_loop()
    await RELEASE["event"].wait()
    raise Denied("answered from the operator's loop")


@pytest_asyncio.fixture
async def server() -> AsyncIterator[WebhookServer]:
    certs = WebhookCerts()
    srv = WebhookServer(certs, threaded=True)
    srv.validating("/strict", strict)
    srv.validating("/slow-fail", slow, timeout_seconds=1)
    srv.validating("/slow-ignore", slow, timeout_seconds=1, failure_policy="Ignore")
    srv.validating("/broken-fail", broken)
    srv.validating("/broken-ignore", broken, failure_policy="Ignore")
    srv.validating("/returns", defaults)
    srv.mutating("/defaults", defaults)
    srv.validating("/check", check, loop_free=True)
    srv.validating("/loop-bound", on_the_loop)
    await srv.start()
    yield srv
    await srv.stop()
    certs.close()


async def test_a_threaded_server_answers_while_a_reconcile_computes_on_the_loop(kit: Kit,
                                                                                server: WebhookServer) -> None:
    async def reconcile(obj: dict[str, Any], ctx: Any) -> None:
        heavy(COMPUTE)  # on the loop: nothing else of the operator runs meanwhile

    kit.client.add(cm("big", ns="tenant-a"))
    controller = await kit.controller(reconcile)
    tls = ssl.create_default_context(cadata=server.certs.ca_bundle.decode())
    body = orjson.dumps(review())
    answers: list[tuple[float, bool]] = []
    stop = threading.Event()
    computing = threading.Event()

    def poll() -> None:
        while not stop.is_set():
            if computing.is_set():
                answers.append(_timed(lambda: _admit(server.port, tls, body, 10)))
            time.sleep(0.02)

    poller = threading.Thread(target=poll)
    poller.start()
    try:
        computing.set()
        await controller.process("tenant-a/big")
    finally:
        stop.set()
        await asyncio.to_thread(poller.join)
    print("\n" + _report(f"threaded webhook during a {COMPUTE:g} s computation on the loop", answers))
    assert len(answers) > 5 and all(ok for _, ok in answers)


async def test_a_port_in_use_fails_the_start_of_a_threaded_server(server: WebhookServer) -> None:
    certs = WebhookCerts()
    other = WebhookServer(certs, port=server.port, threaded=True)
    try:
        try:
            await other.start()
        except OSError:
            return
        raise AssertionError("a second server bound the same port")
    finally:
        certs.close()


async def test_a_handler_that_is_not_loop_free_runs_on_the_operators_loop(server: WebhookServer) -> None:
    RELEASE["event"] = asyncio.Event()  # made on this (the operator's) loop: awaiting it elsewhere would fail
    tls = ssl.create_default_context(cadata=server.certs.ca_bundle.decode())
    body = orjson.dumps(review())
    asyncio.get_running_loop().call_later(0.2, RELEASE["event"].set)
    status, answer = await asyncio.to_thread(_post, server.port, tls, "/loop-bound", body)
    assert status == 200
    assert answer["response"]["allowed"] is False
    assert answer["response"]["status"]["message"] == "answered from the operator's loop"
    assert OWNER["ran on"] is asyncio.get_running_loop()


def _post(port: int, tls: ssl.SSLContext, path: str, body: bytes) -> tuple[int, Any]:
    import http.client

    conn = http.client.HTTPSConnection("127.0.0.1", port, context=tls, timeout=10)
    try:
        conn.request("POST", path, body, {"Content-Type": "application/json"})
        response = conn.getresponse()
        return response.status, orjson.loads(response.read())
    finally:
        conn.close()
