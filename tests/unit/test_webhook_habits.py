"""Kopf's and controller-runtime's webhook spellings on ``@op.validate`` / ``@op.mutate``: each is either
accepted with the same meaning or refused at declaration with a message naming kubeloop's spelling."""

from __future__ import annotations

import ast
import functools
import importlib.util
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from kubeloop import Denied, Operator, builtin
from kubeloop.webhooks import WebhookCerts, WebhookServer
from tests.unit.test_webhooks_operator import review as typed_review
from tests.webhook_operator import Gadget

from .test_webhooks_admission import review
from .test_webhooks_server import post


async def ok(obj: Any, req: Any) -> None: ...


def declare(verb: str = "validate", kind: Any = Gadget, fn: Any = ok, **options: Any) -> Any:
    op = Operator("o")
    getattr(op, verb)(kind, **options)(fn)
    return op.hooks.admission[0]


# --- options -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("verb", ["validate", "mutate"])
@pytest.mark.parametrize(("options", "ours"), [
    ({"ignore_failures": True}, "failure_policy='Ignore'"),
    ({"operation": "CREATE"}, "operations=('CREATE',)"),
    ({"id": "check-size"}, "one validating and one mutating webhook per kind"),
    ({"param": 7}, "functools.partial"),
    ({"side_effects": True}, "sideEffects: None"),
    ({"persistent": True}, "stays when the process stops"),
    ({"labels": {"app": "x"}}, "filter in the handler"),
    ({"annotations": {"a": "b"}}, "filter in the handler"),
    ({"when": lambda **_: True}, "filter in the handler"),
    ({"field": "spec.size"}, "filter in the handler"),
    ({"value": 3}, "filter in the handler"),
    ({"subresource": "status"}, "not its subresources"),
    ({"registry": object()}, "the Operator is the registry"),
    ({"plural": "gadgets"}, "CustomResource model"),
    ({"failurePolicy": "fail"}, "failure_policy='Fail' or 'Ignore'"),
    ({"timeoutSeconds": 10}, "timeout=N"),
    ({"timeout_seconds": 10}, "timeout=N"),
    ({"verbs": ["create"]}, "operations=('CREATE', 'UPDATE')"),
    ({"sideEffects": "None"}, "sideEffects: None"),
    ({"matchPolicy": "Exact"}, "matchPolicy: Equivalent"),
    ({"admissionReviewVersions": ["v1"]}, "[v1] only"),
    ({"mutating": True}, "@op.mutate"),
    ({"path": "/validate-x"}, "/validate-<group>-<version>-<plural>"),
    ({"name": "vgadget.kb.io"}, "validate.<plural>.<group>"),
    ({"groups": ["example.com"]}, "CustomResource model"),
    ({"colour": "red"}, "is not an option of kubeloop webhooks"),
])
def test_foreign_options_are_refused_naming_ours(verb: str, options: dict[str, Any], ours: str) -> None:
    with pytest.raises(TypeError) as refused:
        declare(verb, **options)
    message = str(refused.value)
    (key,) = options
    assert f"{key}=" in message and ours in message, message
    assert "failure_policy=, timeout=, operations=" in message


def test_every_foreign_option_is_named_at_once() -> None:
    with pytest.raises(TypeError) as refused:
        declare(ignore_failures=True, labels={"a": "b"})
    assert "ignore_failures=True" in str(refused.value) and "labels={'a': 'b'}" in str(refused.value)


@pytest.mark.parametrize(("given", "stored"), [("Fail", "Fail"), ("fail", "Fail"), ("IGNORE", "Ignore"),
                                               ("ignore", "Ignore")])
def test_failure_policy_in_any_case_is_normalised(given: str, stored: str) -> None:
    hook = declare(failure_policy=given)
    assert hook.failure_policy == stored
    assert hook.spec().failure_policy == stored  # what the manifests get


@pytest.mark.parametrize(("given", "error", "message"), [
    (True, TypeError, "failure_policy='Fail' or 'Ignore'"),
    ("Failed", ValueError, "failure_policy 'Failed' must be 'Fail' or 'Ignore'"),
    (None, ValueError, "failure_policy None must be 'Fail' or 'Ignore'"),
])
def test_bad_failure_policy_is_refused(given: Any, error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=re.escape(message)):
        declare(failure_policy=given)


@pytest.mark.parametrize(("given", "stored"), [
    (["create", "update"], ("CREATE", "UPDATE")),  # a kubebuilder marker's verbs=create;update
    (("Delete",), ("DELETE",)),
    (["CREATE"], ("CREATE",)),  # Kopf's operations=[...] list
])
def test_operations_in_any_case_and_as_a_list_are_normalised(given: Any, stored: tuple[str, ...]) -> None:
    hook = declare(operations=given)
    assert hook.operations == stored
    assert hook.spec().rules[0].operations == stored


@pytest.mark.parametrize(("given", "error", "message"), [
    ("CREATE", TypeError, "operations='CREATE' is one string, which would be read letter by letter; "
                          "write operations=('CREATE',)"),
    ("create", TypeError, "write operations=('CREATE',)"),
    (("CONNECT",), ValueError, "CONNECT (and '*', which includes it) is only sent for subresources"),
    (["*"], ValueError, "operations=('CREATE', 'UPDATE', 'DELETE')"),
    ((), ValueError, "operations [] must be some of CREATE, UPDATE, DELETE"),
    (("CREATE", "PATCH"), ValueError, "operations ['CREATE', 'PATCH'] must be some of CREATE, UPDATE, DELETE"),
    (("CREATE", "create"), ValueError, "names an operation twice"),
    ((1,), TypeError, "must be a tuple of strings"),
    (None, TypeError, "must be a tuple of strings"),
])
def test_bad_operations_are_refused_not_mangled(given: Any, error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=re.escape(message)):
        declare(operations=given)


@pytest.mark.parametrize(("given", "error", "message"), [
    (0, ValueError, "timeout=0: timeout_seconds 0 must be between 1 and 30"),
    (31, ValueError, "timeout=31: timeout_seconds 31 must be between 1 and 30"),
    (2.5, TypeError, "timeout=2.5 must be a whole number of seconds"),
    ("5", TypeError, "timeout='5' must be a whole number of seconds"),
    (True, TypeError, "timeout=True must be a whole number of seconds"),
])
def test_timeout_outside_the_api_range_is_refused_naming_the_field(given: Any, error: type[Exception],
                                                                    message: str) -> None:
    with pytest.raises(error, match=re.escape(message)):
        declare(timeout=given)


def test_timeout_bounds_are_accepted() -> None:
    assert declare(timeout=1).timeout_seconds == 1 and declare(timeout=30).timeout_seconds == 30


@pytest.mark.parametrize(("kind", "hint"), [
    ("kopfexamples", ""),
    ("configmaps", " (here: builtin.CONFIG_MAP, from kubeloop.resources import builtin)"),
    ("cm", " (here: builtin.CONFIG_MAP, from kubeloop.resources import builtin)"),
])
def test_a_kopf_resource_string_is_refused_naming_the_object_to_pass(kind: str, hint: str) -> None:
    with pytest.raises(TypeError) as refused:
        declare(kind=kind)
    assert str(refused.value).endswith("a CustomResource model, or a kubeloop.resources.builtin constant such as "
                                       f"builtin.CONFIG_MAP{hint}")


def test_the_decorator_without_its_kind_is_refused() -> None:
    with pytest.raises(TypeError, match=re.escape("webhook kind 'ok' is a function: the decorator takes the kind "
                                                  "first, @op.validate(Kind) above async def fn(obj, req)")):
        Operator("o").validate(ok)  # type: ignore[arg-type] # i.e. a bare @op.validate above ok
    with pytest.raises(TypeError, match="webhooks take a CustomResource class"):
        Operator("o").mutate(42)  # type: ignore[arg-type] # refused before any handler is given


# --- handler signatures ------------------------------------------------------------------------------


async def kopf_validator(spec: Any, dryrun: bool, warnings: list[str], **_: Any) -> None: ...
async def kopf_kwargs_only(**kwargs: Any) -> None: ...
async def kopf_two_names(spec: Any, patch: Any, **_: Any) -> None: ...  # binds (obj, req): the names tell
async def kopf_body_patch(body: Any, patch: Any) -> None: ...
async def extra_kopf_keyword(obj: Any, req: Any, *, warnings: list[str] | None = None) -> None: ...
async def one_parameter(obj: Any) -> None: ...
async def keyword_only(*, obj: Any, req: Any) -> None: ...
def sync_kopf(spec: Any, **_: Any) -> None: ...


@pytest.mark.parametrize("verb", ["validate", "mutate"])
@pytest.mark.parametrize(("fn", "where"), [
    (kopf_validator, ["spec → obj.spec", "dryrun → req.dry_run", "warnings → req.warn(message)"]),
    (kopf_kwargs_only, []),
    (kopf_two_names, ["spec → obj.spec", "patch → return the changed obj"]),
    (kopf_body_patch, ["patch → return the changed obj"]),
    (extra_kopf_keyword, ["warnings → req.warn(message)"]),
    (one_parameter, []),
    (keyword_only, []),
])
def test_a_kopf_style_handler_is_refused_showing_our_signature(verb: str, fn: Any, where: list[str]) -> None:
    with pytest.raises(TypeError) as refused:
        declare(verb, fn=fn)
    message = str(refused.value)
    assert "kubeloop calls async def fn(obj, req)" in message and fn.__name__ in message, message
    assert all(w in message for w in where), message
    assert "body → obj" not in message  # body as the first parameter is the object: not blamed


def test_a_sync_kopf_handler_is_refused_as_sync_with_the_mapping() -> None:
    with pytest.raises(TypeError) as refused:
        declare(fn=sync_kopf)
    message = str(refused.value)
    assert "must be an async function: async def fn(obj, req)" in message and "asyncio.to_thread" in message
    assert "spec → obj.spec" in message


async def gadget_and_request(gadget: Any, request: Any) -> None: ...
async def body_first(body: Any, req: Any) -> None: ...
async def with_rest(obj: Any, req: Any, **_: Any) -> None: ...
async def wrapper(*args: Any, **kwargs: Any) -> None: ...  # a decorator that did not use functools.wraps
async def with_param(limit: int, obj: Any, req: Any) -> None: ...
async def later_default(obj: Any, req: Any, name: str = "gadgets") -> None: ...  # the user's own parameter


@pytest.mark.parametrize("fn", [ok, gadget_and_request, body_first, with_rest, wrapper, later_default,
                                functools.partial(with_param, 10)])
def test_legitimate_signatures_are_accepted(fn: Any) -> None:
    assert declare(fn=fn).handler is fn


def test_the_registered_function_is_returned_unchanged() -> None:
    op = Operator("o")
    assert op.mutate(builtin.CONFIG_MAP, failure_policy="ignore")(ok) is ok


# --- convert -----------------------------------------------------------------------------------------


def test_convert_with_one_function_per_spoke_is_refused_naming_the_pair() -> None:
    from tests.webhook_operator import GadgetV1alpha1, to_hub

    with pytest.raises(TypeError, match=re.escape("spokes[GadgetV1alpha1] must be (to_hub, from_hub), two "
                                                  "functions: controller-runtime's ConvertTo is to_hub")):
        Operator("o").convert(Gadget, spokes={GadgetV1alpha1: to_hub})  # type: ignore[dict-item]


# --- handlers raising Kopf's errors ------------------------------------------------------------------


class AdmissionError(Exception):
    """Shaped as kopf.AdmissionError (a message and an HTTP code), which kubeloop does not know."""

    def __init__(self, message: str = "", code: int | None = 500) -> None:
        super().__init__(message)
        self.code = code


async def kopf_refusal(obj: Any, req: Any) -> None:
    raise AdmissionError("too many replicas", code=400)


async def value_error(obj: Any, req: Any) -> None:
    raise ValueError("bad replicas")


async def denied_with_code(obj: Any, req: Any) -> None:
    raise Denied("too many replicas", code=400)  # kopf.AdmissionError("too many replicas", code=400), ported


@pytest_asyncio.fixture
async def server() -> AsyncIterator[WebhookServer]:
    certs = WebhookCerts()
    srv = WebhookServer(certs)
    for fn, policy in [(kopf_refusal, "Fail"), (kopf_refusal, "ignore"), (value_error, "fail"),
                       (denied_with_code, "Ignore")]:
        hook = declare(kind=builtin.CONFIG_MAP, fn=fn, failure_policy=policy)
        srv.validating(f"/{fn.__name__}-{hook.failure_policy}", hook.server_handler(),
                       failure_policy=hook.failure_policy)
    await srv.start()
    yield srv
    await srv.stop()
    certs.close()


@pytest.mark.parametrize(("path", "raised"), [("/kopf_refusal-Fail", "AdmissionError"),
                                              ("/value_error-Fail", "ValueError")])
async def test_a_foreign_exception_is_a_failure_not_a_denial(server: WebhookServer, path: str, raised: str) -> None:
    """Only Denied refuses with the handler's message and code; anything else (kopf.AdmissionError too)
    is a handler failure: with failure_policy Fail a 500 denial whose text is not the exception's."""
    status, out = await post(server, path, review())
    response = out["response"]
    assert status == 200 and response["allowed"] is False
    assert response["status"]["code"] == 500
    assert f"the handler raised {raised}" in response["status"]["message"]
    assert "too many replicas" not in response["status"]["message"] and "bad replicas" not in str(response)


async def test_a_kopf_admission_error_under_ignore_is_allowed_with_a_warning(server: WebhookServer) -> None:
    """The documented trap for Kopf users: Kopf denies on any exception whatever ignore_failures says;
    kubeloop's failure_policy='Ignore' applies to handler failures too, so the request goes through."""
    status, out = await post(server, "/kopf_refusal-Ignore", review())
    assert status == 200 and out["response"]["allowed"] is True
    assert "raised AdmissionError" in out["response"]["warnings"][0]


async def test_denied_with_a_code_is_kopfs_admission_error_ported(server: WebhookServer) -> None:
    """Denied(message, code=) carries the message and code to the client, whatever the failure policy."""
    status, out = await post(server, "/denied_with_code-Ignore", review())
    assert status == 200 and out["response"]["allowed"] is False
    assert out["response"]["status"] == {"code": 400, "reason": "BadRequest", "message": "too many replicas"}


# --- the Kopf page's ported example ------------------------------------------------------------------

HOWTO = Path(__file__).parents[2] / "docs" / "howto" / "kopf"


def test_the_kopf_original_is_valid_python() -> None:
    ast.parse((HOWTO / "admission_kopf.py").read_text())


async def test_the_ported_webhooks_do_what_the_kopf_ones_did() -> None:
    spec = importlib.util.spec_from_file_location("docs_howto_admission_kubeloop", HOWTO / "admission_kubeloop.py")
    assert spec and spec.loader
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    check, default = example.operator.hooks.admission
    assert (check.verb, check.operations, check.failure_policy) == ("validating", ("CREATE", "UPDATE"), "Fail")
    assert (default.verb, default.operations, default.failure_policy) == ("mutating", ("CREATE",), "Ignore")

    def announcement(**spec: Any) -> dict[str, Any]:
        return {"apiVersion": "kopf-migration.kubeloop.dev/v1", "kind": "Announcement",
                "metadata": {"name": "a"}, "spec": spec}

    validate = check.server_handler()
    with pytest.raises(Denied) as denied:
        await validate(typed_review(announcement(text="x" * 81)))
    assert (denied.value.field, denied.value.code) == ("spec.text", 422)
    with pytest.raises(Denied, match="cannot be changed"):
        await validate(typed_review(announcement(audience="b"), announcement(audience="a"), "UPDATE"))
    req = typed_review(announcement(text="hi", shout=True))
    await validate(req)
    assert req.warnings == ["spec.shout is deprecated"]
    mutated = await default.server_handler()(typed_review(announcement(text="hi")))
    assert mutated["spec"] == {"text": "hi", "audience": "everyone"}
