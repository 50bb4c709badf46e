"""The webhook server in-process over real TLS: bad input, handler failures, deadlines, metrics, readiness,
certificate rotation. (The API server calling it is in tests/integration/test_webhooks.py.)"""

from __future__ import annotations

import asyncio
import base64
import logging
import ssl
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import orjson
import pytest
import pytest_asyncio

from kubeloop import metrics
from kubeloop.webhooks import Denied, WebhookCerts, WebhookServer
from kubeloop.webhooks.admission import AdmissionRequest

from .test_webhooks_admission import review


async def slow(req: AdmissionRequest) -> None:
    await asyncio.sleep(5)


async def broken(req: AdmissionRequest) -> None:
    raise KeyError("boom")


async def strict(req: AdmissionRequest) -> None:
    req.warn("look out")
    if (req.object or {}).get("data", {}).get("a") != "1":
        raise Denied("must be '1'", field="data.a")


async def defaults(req: AdmissionRequest) -> dict[str, Any]:
    obj = req.object or {}
    obj.setdefault("data", {})["b"] = "default"  # edits in place: the patch must still show it
    return obj


@pytest_asyncio.fixture
async def server() -> AsyncIterator[WebhookServer]:
    certs = WebhookCerts()
    srv = WebhookServer(certs)
    srv.validating("/strict", strict)
    srv.validating("/slow-fail", slow, timeout_seconds=1)
    srv.validating("/slow-ignore", slow, timeout_seconds=1, failure_policy="Ignore")
    srv.validating("/broken-fail", broken)
    srv.validating("/broken-ignore", broken, failure_policy="Ignore")
    srv.validating("/returns", defaults)  # a validating handler returning an object is a bug
    srv.mutating("/defaults", defaults)
    assert not srv.ready
    await srv.start()
    yield srv
    await srv.stop()
    certs.close()


async def post(srv: WebhookServer, path: str, body: Any, raw: bytes | None = None) -> tuple[int, Any]:
    ctx = ssl.create_default_context(cadata=srv.certs.ca_bundle.decode())
    async with aiohttp.ClientSession() as s, s.post(srv.url(path), json=None if raw else body, data=raw,
                                                      ssl=ctx) as r:
        return r.status, (await r.json() if r.content_type == "application/json" else await r.text())


async def test_malformed_input_is_400_with_a_reason(server: WebhookServer) -> None:
    status, text = await post(server, "/strict", None, raw=b"{not json")
    assert status == 400 and text.startswith("malformed review:")
    status, text = await post(server, "/strict", {"kind": "AdmissionReview", "apiVersion": "admission.k8s.io/v1"})
    assert status == 400 and "request must be a dict" in text


async def test_denial_names_the_field_and_warnings_pass(server: WebhookServer) -> None:
    status, out = await post(server, "/strict", review())
    assert status == 200 and out["response"]["allowed"] is False
    assert out["response"]["status"]["message"] == "data.a: must be '1'"
    assert out["response"]["warnings"] == ["look out"]


async def test_mutation_patch_survives_in_place_edits(server: WebhookServer) -> None:
    _, out = await post(server, "/defaults", review())
    assert out["response"]["allowed"] and out["response"]["patchType"] == "JSONPatch"
    patch = orjson.loads(base64.b64decode(out["response"]["patch"]))
    assert patch == [{"op": "add", "path": "/data/b", "value": "default"}]


@pytest.mark.parametrize(("path", "allowed"), [("/broken-fail", False), ("/broken-ignore", True)])
async def test_handler_exception_is_answered_per_policy(server: WebhookServer, path: str, allowed: bool,
                                                        caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.ERROR, "kubeloop.webhooks.server"):
        status, out = await post(server, path, review())
    assert status == 200 and out["response"]["allowed"] is allowed
    text = out["response"]["status"]["message"] if not allowed else out["response"]["warnings"][0]
    assert "raised KeyError" in text and ("Fail" if not allowed else "Ignore") in text
    assert any("ns/cm" in r.getMessage() for r in caplog.records), "the log names the object"
    assert (await post(server, "/strict", review(object={"data": {"a": "1"}})))[1]["response"]["allowed"]


@pytest.mark.parametrize(("path", "allowed"), [("/slow-fail", False), ("/slow-ignore", True)])
async def test_slow_handler_is_answered_before_the_timeout(server: WebhookServer, path: str, allowed: bool) -> None:
    loop = asyncio.get_running_loop()
    started = loop.time()
    status, out = await post(server, path, review())
    took = loop.time() - started
    assert status == 200 and out["response"]["allowed"] is allowed
    assert 0.7 <= took < 1.0, f"answered after {took:.2f}s; the API server gives up at 1s"


async def test_wrong_return_type_is_a_failure(server: WebhookServer) -> None:
    _, out = await post(server, "/returns", review())
    assert out["response"]["allowed"] is False and "returned dict, not None" in out["response"]["status"]["message"]


async def test_metrics_and_readiness(server: WebhookServer) -> None:
    before = metrics.webhook_requests.labels("/strict", "200").get()
    await post(server, "/strict", review())
    assert metrics.webhook_requests.labels("/strict", "200").get() == before + 1
    assert metrics.webhook_in_flight.labels("/strict").get() == 0
    await post(server, "/strict", None, raw=b"x")
    assert metrics.webhook_requests.labels("/strict", "400").get() >= 1
    assert server.ready and (await post_get(server, "/readyz")) == 200


async def post_get(srv: WebhookServer, path: str) -> int:
    ctx = ssl.create_default_context(cadata=srv.certs.ca_bundle.decode())
    async with aiohttp.ClientSession() as s, s.get(srv.url(path), ssl=ctx) as r:
        return r.status


async def test_rotation_serves_a_new_certificate_on_new_connections(server: WebhookServer) -> None:
    ctx = ssl.create_default_context(cadata=server.certs.ca_bundle.decode())

    async def serial() -> int:
        _, writer = await asyncio.open_connection("127.0.0.1", server.port, ssl=ctx)
        peer = writer.get_extra_info("ssl_object").getpeercert()
        writer.close()
        return int(peer["serialNumber"], 16)

    first = await serial()
    server.certs.rotate()
    assert await serial() != first


def test_bad_registrations_are_refused() -> None:
    srv = WebhookServer(WebhookCerts())
    srv.validating("/a", strict)
    for kwargs, message in [({"path": "a"}, "must start with '/'"), ({"path": "/a"}, "already used"),
                            ({"path": "/b", "timeout_seconds": 31}, "between 1 and 30"),
                            ({"path": "/c", "failure_policy": "fail"}, "'Fail' or 'Ignore'")]:
        with pytest.raises(ValueError, match=message):
            srv.validating(handler=strict, **kwargs)
