"""Kopf's spellings on the cause-handler decorators and the helpers, as a port brings them: field handlers
get the creation call (Kopf's ``on.field``), Kopf's options and decorators without a kubeloop method are
refused when written, naming kubeloop's way, and custom event types are refused at the call."""

from __future__ import annotations

from typing import Any

import pytest

from kubeloop import Operator
from kubeloop.controller.diff import Change
from kubeloop.helpers.events import EventRecorder
from kubeloop.resources.builtin import CONFIG_MAP
from kubeloop.testing.fakeclient import FakeClient

from .controller_kit import Kit, cm


async def test_on_field_is_called_at_creation_and_on_update_field_is_not(kit: Kit) -> None:
    op = Operator("kopf-field")
    log: list[Any] = []

    @op.on_field(CONFIG_MAP, field="data.k")
    async def k_field(obj: dict[str, Any], ctx: Any, changes: list[Change]) -> None:
        log.append(("field", [(c.op, c.path, c.old, c.new) for c in changes]))

    @op.on_update(CONFIG_MAP, field="data.k")
    async def k_update(obj: dict[str, Any], ctx: Any, changes: list[Change]) -> None:
        log.append(("update", [(c.op, c.path, c.old, c.new) for c in changes]))

    kit.client.add(cm("a", k="1"))
    kit.client.add(cm("b", other="1"))
    controller = await kit.operator_controller(op)
    await controller.process("ns/a")
    await controller.process("ns/b")  # created without the field: no call (Kopf: absent == absent)
    assert log == [("field", [("add", ("data", "k"), None, "1")])]
    await kit.client.patch(CONFIG_MAP, "a", {"data": {"k": "2"}}, "ns")
    await kit.settled(controller)
    await controller.process("ns/a")
    assert log[1:] == [("update", [("change", ("data", "k"), "1", "2")]),
                       ("field", [("change", ("data", "k"), "1", "2")])]


@pytest.mark.parametrize(("decorator", "kwargs", "says"), [
    ("on_create", {"labels": {"somelabel": "somevalue"}}, "label_selector='k=v'"),
    ("on_create", {"annotations": {"someannotation": "somevalue"}}, "predicates.has_label"),
    ("on_create", {"when": lambda body, **_: True}, "predicates=[fn]"),
    ("on_create", {"field": "spec.field", "value": "value"}, "only on_update and on_field take field="),
    ("on_update", {"field": "spec.field", "old": "value", "new": "changed"}, "Change(op, path, old, new)"),
    ("on_create", {"retries": 3, "backoff": 1.0}, "GIVE_UP"),
    ("on_create", {"errors": "PERMANENT"}, "kubeloop.PermanentError"),
    ("timer", {"interval": 2, "idle": 5}, "no idle"),
    ("daemon", {"labels": {"a": "b"}}, "take no filters"),
    ("on_delete", {"optional": True}, "@op.on_deleted"),
    ("on_create", {"id": "x"}, "the function is the handler"),
    ("on_create", {"param": 1}, "functools.partial"),
    ("on_update", {"timeout": 60}, "asyncio.timeout(seconds)"),
    ("daemon", {"cancellation_timeout": 1.0}, "asyncio.CancelledError"),
    ("on_create", {"plural": "kopfexamples"}, "Resource(group, version, plural, kind)"),
])
def test_kopf_options_are_refused_naming_ours(decorator: str, kwargs: dict[str, Any], says: str) -> None:
    op = Operator("kopf-options")
    with pytest.raises(TypeError) as err:
        getattr(op, decorator)(CONFIG_MAP, **kwargs)
    message = str(err.value)
    assert f"@op.{decorator} takes" in message and "is Kopf's" in message and says in message
    assert "unexpected keyword" not in message


# Kopf's filters and the handler options ports bring most, on each of Operator's decorators: refused by
# one mechanism (kubeloop.controller.habits), each naming what that decorator's kubeloop spelling is.
_DECORATORS: dict[str, dict[str, Any]] = {  # decorator → the arguments it needs besides the resource
    "reconcile": {}, "finalize": {}, "on_deleted": {}, "on_create": {}, "on_update": {}, "on_field": {"field": "x"},
    "on_delete": {}, "timer": {"interval": 1}, "daemon": {}, "validate": {}, "mutate": {}}
_KOPF_FILTERS: dict[str, Any] = {"labels": {"k": "v"}, "annotations": {"k": "v"}, "when": lambda **_: True,
                                 "field": "spec.x", "value": "v"}
_KOPF_HANDLER_OPTIONS: dict[str, Any] = {"retries": 3, "backoff": 1.0, "timeout": 60, "id": "x", "param": 1,
                                         "registry": object(), "errors": "PERMANENT"}


def _refusal(decorator: str, **kopf: Any) -> str:
    op = Operator("kopf-everywhere")
    with pytest.raises(TypeError) as err:
        getattr(op, decorator)(CONFIG_MAP, **_DECORATORS[decorator], **kopf)
    message = str(err.value)
    assert f"@op.{decorator} takes" in message and "unexpected keyword" not in message
    return message


@pytest.mark.parametrize("decorator", sorted(_DECORATORS))
@pytest.mark.parametrize("option", sorted(_KOPF_FILTERS))
def test_kopf_filters_are_refused_on_every_decorator(decorator: str, option: str) -> None:
    if (decorator, option) in {("on_update", "field"), ("on_field", "field")}:
        return  # ours: a dotted path, taken
    message = _refusal(decorator, **{option: _KOPF_FILTERS[option]})
    assert f"{option}=" in message and "is Kopf's filter" in message


@pytest.mark.parametrize("decorator", ["reconcile", "finalize", "on_deleted"])
@pytest.mark.parametrize("option", sorted(_KOPF_HANDLER_OPTIONS))
def test_kopf_handler_options_are_refused_on_the_level_based_decorators(decorator: str, option: str) -> None:
    message = _refusal(decorator, **{option: _KOPF_HANDLER_OPTIONS[option]})
    assert f"{option}=" in message and "is Kopf's" in message


@pytest.mark.parametrize(("decorator", "kwargs", "says"), [
    ("reconcile", {"labels": {"k": "v"}}, "label_selector='k=v'"),
    ("reconcile", {"annotations": {"k": "v"}}, "predicates=[predicates.has_label"),
    ("reconcile", {"when": lambda **_: True}, "predicates=[fn]"),
    ("reconcile", {"field": "spec.x", "value": "v"}, "event.old and event.object"),
    ("reconcile", {"retries": 3, "backoff": 1.0}, "error_policy=fn(error, request, failures)"),
    ("reconcile", {"errors": "PERMANENT"}, "kubeloop.PermanentError"),
    ("reconcile", {"id": "x"}, "name= names its controller"),
    ("reconcile", {"timeout": 60}, "asyncio.timeout(seconds)"),
    ("finalize", {"labels": {"k": "v"}}, "the kind's @op.reconcile handles"),
    ("finalize", {"retries": 3}, "while the finalizer holds the deletion"),
    ("finalize", {"optional": True}, "@op.on_deleted(Kind) instead"),
    ("on_deleted", {"when": lambda **_: True}, "the deleted event with the last known object"),
    ("on_deleted", {"optional": True}, "already is Kopf's optional=True"),
    ("on_deleted", {"errors": "PERMANENT"}, "retried as a failed reconcile of its key"),
    ("on_deleted", {"param": 1}, "functools.partial"),
    ("reconcile", {"registry": object()}, "the Operator is the registry"),
])
def test_the_level_based_decorators_name_their_own_spelling(decorator: str, kwargs: dict[str, Any],
                                                            says: str) -> None:
    assert says in _refusal(decorator, **kwargs)


def test_a_misspelled_option_is_refused_naming_what_the_decorator_takes() -> None:
    message = _refusal("reconcile", owned=[CONFIG_MAP])
    assert "owned=[" in message and "is not an option of @op.reconcile" in message


def test_the_refusal_lists_every_option_reconcile_takes() -> None:
    import inspect

    from kubeloop.builder import _RECONCILE_TAKES
    params = inspect.signature(Operator.reconcile).parameters.values()
    taken = [p.name for p in params if p.kind is inspect.Parameter.KEYWORD_ONLY]
    assert _RECONCILE_TAKES == "the resource, " + ", ".join(f"{name}=" for name in taken)


def test_options_of_ours_are_still_taken() -> None:
    op = Operator("kopf-ours")

    @op.reconcile("secrets", label_selector="k=v", name="secrets")
    async def secrets(obj: Any, ctx: Any) -> None: ...

    @op.finalize("secrets", finalizer="example.com/x")
    async def cleanup(obj: Any, ctx: Any) -> None: ...

    @op.on_deleted("secrets")
    async def gone(request: Any, ctx: Any = None) -> None: ...

    @op.timer(CONFIG_MAP, interval=2)
    @op.on_update(CONFIG_MAP, field="data.k")
    async def handler(obj: Any, ctx: Any, changes: Any = None) -> None: ...

    secret, cms = op.specs()
    assert cms.resource == CONFIG_MAP and secret.label_selector == "k=v" and secret.finalizer == "example.com/x"


@pytest.mark.parametrize(("name", "says"), [
    ("on_resume", "every object is reconciled when the operator starts"),
    ("on_event", "predicates=[fn]"),
    ("on_login", "--kubeconfig"),
    ("on_probe", "/healthz"),
    ("on_cleanup", "--graceful-shutdown-timeout"),
    ("index", "the shared cache is the index"),
    ("subhandler", "call plain async functions"),
])
def test_kopf_decorators_without_a_method_say_what_to_write(name: str, says: str) -> None:
    with pytest.raises(AttributeError) as err:
        getattr(Operator("kopf-decorators"), name)
    assert says in str(err.value) and f"@kopf.{name.replace('on_', 'on.', 1)}" in str(err.value)


def test_other_missing_attributes_are_plain() -> None:
    with pytest.raises(AttributeError, match="has no attribute 'nothing'"):
        Operator("x").nothing  # noqa: B018


async def test_a_custom_event_type_is_refused_at_the_call() -> None:
    client = FakeClient(cm("a"))
    recorder = EventRecorder(client, "test")
    with pytest.raises(ValueError, match="'SomeType'.*'Normal' or 'Warning' only.*core/v1"):
        await recorder.emit(cm("a"), "SomeType", "SomeReason", "Some message")
    await recorder.emit(cm("a"), "Normal", "SomeReason", "Some message")  # the conventional ones go through


def test_kubeloop_run_of_reconcile_beside_cause_handlers_is_one_line(tmp_path: Any) -> None:
    from click.testing import CliRunner

    from kubeloop.cli.run import command

    port = tmp_path / "resumed.py"
    port.write_text("from kubeloop import Operator\nfrom kubeloop.resources.builtin import CONFIG_MAP\n"
                    "op = Operator('resumed')\n\n@op.reconcile(CONFIG_MAP)\nasync def reconcile(obj, ctx): ...\n\n"
                    "@op.on_create(CONFIG_MAP)\nasync def created(obj, ctx): ...\n")
    result = CliRunner().invoke(command, [str(port)])
    assert result.exit_code == 1 and result.exception is not None and isinstance(result.exception, SystemExit)
    assert "@reconcile (reconcile) and cause handlers on one kind" in result.output
    assert "Kopf's on.resume" in result.output and "Traceback" not in result.output


def test_a_kopf_plural_string_says_how_to_name_the_crd() -> None:
    op = Operator("plural")

    @op.on_create("kopfexamples")
    async def created(obj: Any, ctx: Any) -> None: ...

    with pytest.raises(ValueError, match=r"Resource\(group, version, 'kopfexamples', Kind\)"):
        op.permissions()
