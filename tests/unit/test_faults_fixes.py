"""Framework fixes the fault scenarios led to (see docs/RELIABILITY.md):

- the watch inactivity timeout is configurable end to end (``--watch-inactivity-timeout`` →
  ManagerOptions → Cache → every informer's watchers), so a half-open connection can be caught sooner;
- a finalizer patch whose ``test`` op fails on a stale cache (a bare 422 from the API server) is a
  Conflict — logged as "conflict, will retry", not as a failed reconcile with a traceback;
- label-selector requirements in generated CRDs carry the API server's own rule as CEL.
"""

from __future__ import annotations

from typing import Any

import pytest

from harness.faults.widget import Widget
from harness.faults.widget import operator as widget_operator
from kubeloop.cache import Cache
from kubeloop.cli.run import build_command
from kubeloop.client import Conflict, Invalid
from kubeloop.helpers import finalizers
from kubeloop.manager import Manager, ManagerOptions
from kubeloop.resources.builtin import CONFIG_MAP
from kubeloop.resources.schema import X_VALIDATIONS
from kubeloop.resources.types import LabelSelector


class FakeClient:
    def __init__(self, error: Exception | None = None) -> None:
        self.error = error
        self.patches: list[Any] = []

    async def resource(self, ref: Any) -> Any:
        return ref

    async def patch(self, resource: Any, name: str, body: Any, namespace: str | None = None, **kw: Any) -> Any:
        self.patches.append(body)
        if self.error:
            raise self.error
        return {"metadata": {"name": name, "finalizers": ["x/y"]}}


async def test_watch_inactivity_timeout_reaches_every_watcher() -> None:
    client: Any = FakeClient()
    manager = Manager(client, ManagerOptions(namespaces=["a", "b"], watch_inactivity_timeout=7.5,
                                             metrics_bind_address="0", health_probe_bind_address="0"))
    assert manager.cache.inactivity_timeout == 7.5
    informer = await manager.cache.informer(CONFIG_MAP)
    assert [w.options.inactivity_timeout for w in informer.watchers] == [7.5, 7.5]
    default = await Cache(client).informer(Widget.resource())
    assert default.watchers[0].options.inactivity_timeout == 330.0  # client-go's 5.5 minutes


def test_watch_inactivity_timeout_is_a_flag_and_an_env_var() -> None:
    command = build_command(widget_operator)
    option = next(p for p in command.params if p.name == "watch_inactivity_timeout")
    assert option.default == 330.0 and option.envvar == "KUBELOOP_WATCH_INACTIVITY_TIMEOUT"
    ctx = command.make_context("run", ["--watch-inactivity-timeout", "4"])
    assert ctx.params["watch_inactivity_timeout"] == 4.0


@pytest.mark.parametrize("existing", [None, ["other/one"]])
async def test_failed_test_op_on_a_stale_finalizer_list_is_a_conflict(existing: list[str] | None) -> None:
    stale = {"metadata": {"name": "w", "namespace": "ns", "resourceVersion": "5", "finalizers": existing}}
    client: Any = FakeClient(Invalid(422, "Invalid", "the server rejected our request due to an error in our request"))
    with pytest.raises(Conflict, match="stale cache"):
        await finalizers.add_finalizer(client, Widget.resource(), stale, "faults.kubeloop.dev/widget")
    assert client.patches[0][0]["op"] == "test"
    deleting = {"metadata": {"name": "w", "namespace": "ns", "finalizers": ["faults.kubeloop.dev/widget"]}}
    with pytest.raises(Conflict):
        await finalizers.remove_finalizer(client, Widget.resource(), deleting, "faults.kubeloop.dev/widget")


async def test_finalizer_patches_still_pass_through_other_results() -> None:
    client: Any = FakeClient()
    fresh = {"metadata": {"name": "w", "namespace": "ns", "resourceVersion": "5"}}
    out = await finalizers.add_finalizer(client, Widget.resource(), fresh, "x/y")
    assert out["metadata"]["finalizers"] == ["x/y"]


def test_label_selector_requirements_carry_the_api_servers_rule() -> None:
    from kubeloop.operators.copyrator.models import CopyratorRule
    from kubeloop.resources import crds_for

    crd = crds_for([CopyratorRule])[0]
    props = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]
    item = props["namespaceSelector"]["properties"]["matchExpressions"]["items"]
    assert item[X_VALIDATIONS] == [{
        "rule": "self.operator in ['In', 'NotIn'] ? (has(self.values) && size(self.values) > 0)"
                " : (!has(self.values) || size(self.values) == 0)",
        "message": "values must be non-empty for In and NotIn, and empty for Exists and DoesNotExist"}]
    # The model itself still accepts what the API server accepts (the rule lives in the CRD).
    LabelSelector.model_validate({"matchExpressions": [{"key": "a", "operator": "Exists"}]})


def test_reloader_loop_detection() -> None:
    """A rollout loop: the workload's objects change again within the window after each of the last N
    rollouts. A human editing now and then is not one; 0 turns the check off."""
    from kubeloop.operators.reloader.pacing import Pacing, loop_suspected, rolled
    from kubeloop.operators.reloader.settings import ReloaderSettings

    memory = Pacing()
    for t in (0.0, 5.0, 10.0):
        assert not loop_suspected(memory, t, rollouts=3, window=30)
        rolled(memory, t, keep=3)
    assert loop_suspected(memory, 14.0, rollouts=3, window=30)  # changed again 4 s after the 3rd rollout
    assert not loop_suspected(memory, 100.0, rollouts=3, window=30)  # a change after a quiet spell
    assert not loop_suspected(memory, 14.0, rollouts=0, window=30)  # off
    spaced = Pacing()
    for t in (0.0, 100.0, 200.0):
        rolled(spaced, t, keep=3)
    assert not loop_suspected(spaced, 210.0, rollouts=3, window=30)  # rollouts far apart: no loop
    rolled(memory, 20.0, keep=3)
    assert memory.rolled_at == [5.0, 10.0, 20.0]
    assert ReloaderSettings(loop_rollouts=0, loop_window_seconds=5.0).loop_rollouts == 0


async def test_a_forbidden_reconcile_is_one_clear_line_not_a_traceback(caplog: pytest.LogCaptureFixture) -> None:
    """RBAC revoked at runtime: every retry logged a full traceback (thousands of lines in seconds)."""
    import logging

    from kubeloop.client import Forbidden
    from kubeloop.controller import Controller, ControllerSpec
    from kubeloop.controller.controller import Wiring

    async def reconcile(obj: Any, ctx: Any) -> None:
        raise Forbidden(403, "Forbidden", 'configmaps "x-w" is forbidden: User "system:serviceaccount:ns:op" '
                                          'cannot patch resource "configmaps" in API group "" in the namespace "ns"')

    class Store:
        def get(self, key: str) -> dict[str, Any]:
            return {"metadata": {"name": "x", "namespace": "ns", "uid": "u1", "resourceVersion": "1"}}

    class Informer:
        store = Store()
        resource = CONFIG_MAP

        def subscribe(self, handler: Any) -> None:
            pass

    spec = ControllerSpec(name="forbidden-test", resource=CONFIG_MAP, reconcile=reconcile)
    controller = Controller(spec, object(), object(), object(), Wiring(Informer(), {}, []))  # type: ignore[arg-type]
    with caplog.at_level(logging.INFO, logger="kubeloop.controller"):
        await controller.process("ns/x")
    records = [r for r in caplog.records if r.name == "kubeloop.controller"]
    assert len(records) == 1 and records[0].exc_info is None, records
    message = records[0].getMessage()
    assert 'cannot patch resource "configmaps"' in message and "grant it to the operator's role" in message
    controller.queue.shutdown()
