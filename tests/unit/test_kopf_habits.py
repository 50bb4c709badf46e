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


def test_options_of_ours_are_still_taken() -> None:
    op = Operator("kopf-ours")

    @op.timer(CONFIG_MAP, interval=2)
    @op.on_update(CONFIG_MAP, field="data.k")
    async def handler(obj: Any, ctx: Any, changes: Any = None) -> None: ...

    (spec,) = op.specs()
    assert spec.resource == CONFIG_MAP


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
