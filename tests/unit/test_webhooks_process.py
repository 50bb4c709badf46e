"""Webhooks served from a process of their own (kubeloop/webhooks/process.py): the server's contract
(tests/unit/test_webhooks_server.py, run again against a child process through this module's ``server``
fixture), handlers running in the child, a child that dies started again on its port, no child outliving
its parent, hooks that cannot go there refused naming them, and ``isolation="auto"`` choosing. Latencies
while the parent holds its GIL are printed (``-s``), never asserted."""

from __future__ import annotations

import asyncio
import os
import signal
import ssl
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator
from typing import Any

import orjson
import pytest
import pytest_asyncio

from kubeloop import metrics
from kubeloop.webhooks import Denied, WebhookCerts, WebhookServer
from kubeloop.webhooks.admission import AdmissionRequest
from kubeloop.webhooks.hooks import AdmissionHook, Hooks
from kubeloop.webhooks.process import ProcessWebhookServer
from kubeloop.webhooks.runtime import WebhookOptions, WebhookRuntime, WebhookSetupError

from .test_loop_responsive import _report, heavy
from .test_webhooks_admission import review
from .test_webhooks_server import broken, defaults, post, slow, strict
from .test_webhooks_server import test_denial_names_the_field_and_warnings_pass as test_denial  # noqa: F401
from .test_webhooks_server import test_handler_exception_is_answered_per_policy as test_exception  # noqa: F401
from .test_webhooks_server import test_malformed_input_is_400_with_a_reason as test_malformed  # noqa: F401
from .test_webhooks_server import test_mutation_patch_survives_in_place_edits as test_mutation  # noqa: F401
from .test_webhooks_server import test_rotation_serves_a_new_certificate_on_new_connections as test_rotation  # noqa: F401
from .test_webhooks_server import test_slow_handler_is_answered_before_the_timeout as test_slow  # noqa: F401
from .test_webhooks_server import test_wrong_return_type_is_a_failure as test_wrong_type  # noqa: F401
from .test_webhooks_threaded import _post

COMPUTE = 3.0  # seconds the parent holds its GIL


async def whose(req: AdmissionRequest) -> None:
    """Says which process answered (module level: the child imports it by name)."""
    raise Denied(f"pid {os.getpid()}")


@pytest_asyncio.fixture
async def server() -> AsyncIterator[ProcessWebhookServer]:
    certs = WebhookCerts()
    srv = ProcessWebhookServer(certs)
    for path, handler, extra in [("/strict", strict, {}), ("/slow-fail", slow, {"timeout_seconds": 1}),
                                 ("/slow-ignore", slow, {"timeout_seconds": 1, "failure_policy": "Ignore"}),
                                 ("/broken-fail", broken, {}), ("/broken-ignore", broken, {"failure_policy": "Ignore"}),
                                 ("/returns", defaults, {}), ("/whose", whose, {})]:
        srv.validating(path, handler, loop_free=True, **extra)  # type: ignore[arg-type]
    srv.mutating("/defaults", defaults, loop_free=True)
    assert not srv.ready
    await srv.start()
    yield srv
    await srv.stop()
    certs.close()


async def _until(condition: Any, seconds: float = 10.0) -> None:
    give_up = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < give_up, "not within the time given"
        await asyncio.sleep(0.02)


def _pid_in(answer: dict[str, Any]) -> int:
    return int(answer["response"]["status"]["message"].removeprefix("pid "))


async def test_metrics_are_the_parents_and_readiness(server: ProcessWebhookServer) -> None:
    # The child reports each answer before it is sent; the parent's reader thread records it, so the
    # figure can trail the client's answer by a moment: waited for, not assumed.
    before = metrics.webhook_requests.labels("/strict", "200").get()
    await post(server, "/strict", review())
    await _until(lambda: metrics.webhook_requests.labels("/strict", "200").get() == before + 1)
    assert metrics.webhook_in_flight.labels("/strict").get() == 0
    assert server.answered["/strict"] >= 1
    await post(server, "/strict", None, raw=b"x")
    await _until(lambda: metrics.webhook_requests.labels("/strict", "400").get() >= 1)
    assert server.ready


async def test_handlers_run_in_the_child_while_the_parent_holds_its_gil(server: ProcessWebhookServer) -> None:
    tls = ssl.create_default_context(cadata=server.certs.ca_bundle.decode())
    body = orjson.dumps(review())
    status, answer = await asyncio.to_thread(_post, server.port, tls, "/whose", body)
    assert status == 200 and _pid_in(answer) == server.pid != os.getpid()
    # A client in a process of its own polls while this one computes in pure Python on its loop.
    client = subprocess.Popen([sys.executable, "-c", CLIENT, str(server.port), str(COMPUTE)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert client.stdin is not None and client.stdout is not None
    client.stdin.write(server.certs.ca_bundle)
    client.stdin.close()
    heavy(COMPUTE + 0.5)
    out = await asyncio.to_thread(client.stdout.read)
    assert await asyncio.to_thread(client.wait) == 0
    answers = [(seconds, pid == server.pid) for seconds, pid in orjson.loads(out)]
    print("\n" + _report(f"webhook process during a {COMPUTE:g} s computation in its parent", answers))
    assert len(answers) > 5 and all(ok for _, ok in answers)


CLIENT = """
import http.client, ssl, sys, time, orjson
port, seconds = int(sys.argv[1]), float(sys.argv[2])
tls = ssl.create_default_context(cadata=sys.stdin.read())
body = orjson.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {
    "uid": "u", "kind": {"group": "", "version": "v1", "kind": "ConfigMap"},
    "resource": {"group": "", "version": "v1", "resource": "configmaps"}, "namespace": "ns", "name": "c",
    "operation": "CREATE", "userInfo": {"username": "u"}, "object": {"metadata": {"name": "c"}}}})
out, end = [], time.monotonic() + seconds
while time.monotonic() < end:
    started = time.monotonic()
    conn = http.client.HTTPSConnection("127.0.0.1", port, context=tls, timeout=10)
    conn.request("POST", "/whose", body, {"Content-Type": "application/json"})
    answer = orjson.loads(conn.getresponse().read())
    conn.close()
    out.append((time.monotonic() - started, int(answer["response"]["status"]["message"][4:])))
    time.sleep(0.05)
sys.stdout.write(orjson.dumps(out).decode())
"""


async def test_a_child_that_dies_is_started_again_on_its_port(server: ProcessWebhookServer) -> None:
    port, first = server.port, server.pid
    assert first is not None
    os.kill(first, signal.SIGKILL)
    await _until(lambda: not server.ready)
    await _until(lambda: server.ready and server.pid not in (None, first))
    tls = ssl.create_default_context(cadata=server.certs.ca_bundle.decode())
    status, answer = await asyncio.to_thread(_post, port, tls, "/whose", orjson.dumps(review()))
    assert status == 200 and server.port == port and _pid_in(answer) == server.pid


async def test_a_port_in_use_fails_the_start(server: ProcessWebhookServer) -> None:
    certs = WebhookCerts()
    other = ProcessWebhookServer(certs, port=server.port)
    other.validating("/whose", whose, loop_free=True)
    try:
        with pytest.raises(OSError, match="cannot listen"):
            await other.start()
        assert other.pid is None
    finally:
        await other.stop()
        certs.close()


PARENT = """
import asyncio, sys
from kubeloop.webhooks import WebhookCerts
from kubeloop.webhooks.process import ProcessWebhookServer
from tests.unit.test_webhooks_process import whose

async def main():
    srv = ProcessWebhookServer(WebhookCerts())
    srv.validating("/whose", whose, loop_free=True)
    await srv.start()
    print(srv.pid, flush=True)
    await asyncio.sleep(3600)

asyncio.run(main())
"""


async def test_no_child_outlives_its_parent() -> None:
    parent = subprocess.Popen([sys.executable, "-c", PARENT], stdout=subprocess.PIPE)
    assert parent.stdout is not None
    try:
        child = int(await asyncio.wait_for(asyncio.to_thread(parent.stdout.readline), 60))
    finally:
        parent.kill()  # SIGKILL: no stop() runs; the child sees its standard input close
        parent.wait()
    await _until(lambda: not _alive(child))


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as stat:  # a zombie waiting for init to reap it has ended
        return stat.read().rsplit(")", 1)[1].split()[0] != "Z"


async def test_hooks_that_cannot_go_are_refused_naming_them() -> None:
    certs = WebhookCerts()
    try:
        on_loop = ProcessWebhookServer(certs)
        on_loop.validating("/on-loop", whose)
        with pytest.raises(ValueError, match="/on-loop is not loop-free"):
            await on_loop.start()

        async def local(req: AdmissionRequest) -> None:  # a closure: pickle cannot name it
            threading.get_ident()

        unnamed = ProcessWebhookServer(certs)
        unnamed.validating("/local", local, loop_free=True)
        with pytest.raises(ValueError, match="/local cannot be handed to a process of its own.*module level"):
            await unnamed.start()
    finally:
        certs.close()


async def loop_free_check(obj: Any, req: AdmissionRequest) -> None:
    """A typed hook's handler at module level."""


def _hooks(loop_free: bool) -> Hooks:
    from kubeloop.resources.builtin import CONFIG_MAP

    hooks = Hooks()
    hooks.add(AdmissionHook("validating", CONFIG_MAP, loop_free_check, loop_free=loop_free))
    return hooks


@pytest.mark.parametrize(("isolation", "loop_free", "served_by"), [
    ("auto", True, ProcessWebhookServer), ("auto", False, WebhookServer), ("thread", True, WebhookServer),
    ("loop", True, WebhookServer), ("process", True, ProcessWebhookServer)])
def test_isolation_chooses_the_server(isolation: Any, loop_free: bool, served_by: type) -> None:
    runtime = WebhookRuntime("op", _hooks(loop_free), WebhookOptions(port=0, isolation=isolation))
    server = runtime._serve(None)  # noqa: SLF001 - the choice, without a cluster
    try:
        assert type(server) is served_by
        assert server.threaded is (isolation in ("auto", "thread") and served_by is WebhookServer)
    finally:
        assert runtime.certs is not None
        runtime.certs.close()


def test_process_isolation_refuses_a_hook_that_is_not_loop_free() -> None:
    runtime = WebhookRuntime("op", _hooks(False), WebhookOptions(port=0, isolation="process"))
    with pytest.raises(WebhookSetupError, match="not loop-free.*--webhook-isolation thread"):
        runtime._serve(None)  # noqa: SLF001
    assert runtime.certs is not None
    runtime.certs.close()
