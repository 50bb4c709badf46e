"""ControllerSpec (one immutable description of a controller), the Operator's ``configure`` hook and
``permission(when=...)`` that replaced subclassing, and typed per-object state."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field, replace
from types import SimpleNamespace
from typing import Any

import pytest

from kubeloop import ControllerSpec, Operator, Settings, State, Watch, setting
from kubeloop.resources.builtin import CONFIG_MAP, NAMESPACE, SECRET


async def noop(obj: Any, ctx: Any) -> None:
    return None


def test_a_spec_is_immutable_all_the_way_down() -> None:
    owns = [CONFIG_MAP]
    spec = ControllerSpec("c", "deployments", noop, owns=owns)  # type: ignore[arg-type]
    with pytest.raises(dataclasses.FrozenInstanceError):
        spec.resync = 1.0  # type: ignore[misc]
    owns.append(SECRET)  # the caller's list is not the spec's
    assert spec.owns == (CONFIG_MAP,) and isinstance(spec.watches, tuple)
    with pytest.raises(TypeError):
        spec.owns[0:0] = (SECRET,)  # type: ignore[index]
    changed = replace(spec, resync=5.0)
    assert changed.resync == 5.0 and spec.resync == 600.0 and changed.owns == spec.owns


def test_a_spec_fills_in_and_checks_what_it_can() -> None:
    assert ControllerSpec("c", "deployments", noop).field_manager == "c"
    assert ControllerSpec("c", "deployments", noop, field_manager="op").field_manager == "op"
    with pytest.raises(ValueError, match="name must not be empty"):
        ControllerSpec("", "deployments", noop)
    with pytest.raises(ValueError, match="finalizer and cleanup go together"):
        ControllerSpec("c", "deployments", noop, finalizer="x.dev/y")
    with pytest.raises(ValueError, match="concurrency must be at least 1"):
        ControllerSpec("c", "deployments", noop, concurrency=0)
    with pytest.raises(ValueError, match="reconcile must be an async function"):
        ControllerSpec("c", "deployments", None)  # type: ignore[arg-type]


def test_operator_decorators_produce_specs() -> None:
    op = Operator("demo")

    @op.reconcile(CONFIG_MAP, owns=[SECRET], resync=30.0, skip_own_writes=False)
    async def reconcile(obj: Any, ctx: Any) -> None: ...

    @op.finalize(CONFIG_MAP)
    async def cleanup(obj: Any, ctx: Any) -> None: ...

    @op.reconcile(SECRET, name="secrets-please", concurrency=2)
    async def other(obj: Any, ctx: Any) -> None: ...

    first, second = op.specs(concurrency=7)
    assert (first.name, first.reconcile, first.cleanup, first.finalizer) == (
        "demo-configmap", reconcile, cleanup, "kubeloop.dev/demo")
    assert (first.owns, first.resync, first.concurrency, first.skip_own_writes) == ((SECRET,), 30.0, 7, False)
    assert first.field_manager == "demo" and first.model is None
    assert (second.name, second.concurrency, second.finalizer, second.skip_own_writes) == (
        "secrets-please", 2, None, True)


def test_a_finalizer_without_a_reconciler_is_refused_with_the_fix() -> None:
    op = Operator("demo")
    op.finalize(CONFIG_MAP)(noop)
    with pytest.raises(ValueError, match="no @reconcile"):
        op.specs()


class DemoSettings(Settings):
    only: str | None = setting(None, "Only the object of this name.")
    skip_secrets: bool = setting(False, "Watch no Secrets.")


def test_configure_adapts_specs_to_settings_and_rbac_follows() -> None:
    """What reloader and copyrator did by subclassing: drop a controller, filter or add watches, set a
    field selector from a setting; the generated permissions follow the configured specs."""
    op = Operator("demo", settings=DemoSettings)
    op.reconcile(CONFIG_MAP, watches=[Watch(SECRET)])(noop)
    op.reconcile(NAMESPACE)(noop)
    op.permission(SECRET, ["create"], when=lambda settings: not settings.skip_secrets)

    @op.configure
    def by_settings(spec: ControllerSpec, settings: DemoSettings) -> ControllerSpec | None:
        if spec.resource is NAMESPACE:
            return None
        watches = [w for w in spec.watches if not (settings.skip_secrets and w.resource is SECRET)]
        selector = f"metadata.name={settings.only}" if settings.only else None
        return replace(spec, watches=tuple(watches), field_selector=selector)

    (spec,) = op.specs()
    assert spec.resource is CONFIG_MAP and spec.field_selector is None and len(spec.watches) == 1
    assert {(p.resource, frozenset(p.verbs)) for p in op.permissions()} == {
        ("configmaps", frozenset({"list", "watch"})), ("secrets", frozenset({"list", "watch"})),
        ("secrets", frozenset({"create"}))}
    op.settings = DemoSettings(only="one", skip_secrets=True)
    (spec,) = op.specs()
    assert spec.field_selector == "metadata.name=one" and spec.watches == ()
    assert {p.resource for p in op.permissions()} == {"configmaps"}


def test_configure_hooks_run_in_order_and_a_dropped_spec_stays_dropped() -> None:
    op = Operator("demo")
    op.reconcile(CONFIG_MAP)(noop)
    seen: list[str] = []
    op.configure(lambda spec, settings: seen.append("first") or None)  # type: ignore[func-returns-value]
    op.configure(lambda spec, settings: seen.append("second") or spec)  # type: ignore[func-returns-value]
    assert op.specs() == [] and seen == ["first"]


@dataclass
class Counted:
    reconciles: int = 0
    names: list[str] = field(default_factory=list)


def test_typed_state_is_per_object_and_made_on_first_use() -> None:
    counted = Operator("demo").state(Counted)
    a, b = SimpleNamespace(per_object={}), SimpleNamespace(per_object={})
    counted.of(a).reconciles += 1  # type: ignore[arg-type]
    counted.of(a).reconciles += 1  # type: ignore[arg-type]
    assert counted.of(a).reconciles == 2 and counted.of(b).reconciles == 0  # type: ignore[arg-type]
    other = State(Counted)
    assert other.of(a).reconciles == 0, "two declarations are two states"  # type: ignore[arg-type]
    counted.reset(a)  # type: ignore[arg-type]
    assert counted.of(a) == Counted()  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="State needs a class"):
        State(Counted())  # type: ignore[arg-type]
