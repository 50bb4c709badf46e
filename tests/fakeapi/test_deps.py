"""An operator's dependencies (``Operator(deps=...)``: built once per run from the manager and the settings,
before the first reconcile, handed to handlers as ``ctx.deps`` and to mappers as ``operator.deps``), and
informer transforms declared where the watch is (one per informer: a second, different one refuses to
start instead of being dropped)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

import pytest

from kubeloop import Cache, Context, Manager, Operator, Settings, Watch, setting
from kubeloop.client import Client
from kubeloop.resources.builtin import CONFIG_MAP, SECRET
from kubeloop.testing import operator_running
from kubeloop.testing.apiserver import FakeApiServer
from kubeloop.testing.fakeclient import FakeClient

Obj = dict[str, Any]


class GreeterSettings(Settings):
    greeting: str = setting("hello", "What to say.")


@dataclass
class Deps:
    greeting: str
    secrets: Any  # the Secret informer the controller declared
    seen: list[str] = field(default_factory=list)


def cm(name: str, **data: str) -> Obj:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "default"},
            "data": data}


def without_data(obj: Obj) -> Obj:
    obj.pop("data", None)
    return obj


def other_transform(obj: Obj) -> Obj:
    return obj


async def wait_until(check: Any, timeout: float = 10) -> None:
    async with asyncio.timeout(timeout):
        while not check():
            await asyncio.sleep(0.02)


async def test_handlers_and_mappers_get_the_runs_dependencies(fake_api: FakeApiServer, fake_client: Client) -> None:
    built: list[Deps] = []

    async def build(manager: Manager, settings: GreeterSettings) -> Deps:
        # The controllers' informers exist (not yet synced): the factory may hold on to them.
        secrets = await manager.cache.informer(SECRET)
        assert not secrets.synced.is_set()
        built.append(Deps(settings.greeting, secrets))
        return built[-1]

    op = Operator("greeter", settings=GreeterSettings, deps=build)
    op.settings = GreeterSettings(greeting="hi")

    def by_secret(obj: Obj) -> list[str]:
        op.deps.seen.append(obj["metadata"]["name"])  # a mapper: the run's dependencies via the operator
        return [obj["metadata"]["name"]]

    greeted: list[tuple[str, str, bool]] = []

    @op.reconcile(CONFIG_MAP, resync=None, watches=[Watch(SECRET, mapper=by_secret)])
    async def greet(obj: Obj, ctx: Context[Deps]) -> None:
        greeted.append((obj["metadata"]["name"], ctx.deps.greeting, ctx.deps is op.deps))

    for run in (1, 2):
        async with await fake_api.client(field_manager=op.name) as client:
            async with operator_running(op, client, namespaces=["default"]):
                await fake_client.create(cm(f"a{run}"))
                await fake_client.create({"apiVersion": "v1", "kind": "Secret", "metadata": {
                    "name": f"s{run}", "namespace": "default"}})
                await wait_until(lambda run=run: any(name == f"a{run}" for name, *_ in greeted)
                                 and f"s{run}" in op.deps.seen)
    assert len(built) == 2 and built[0] is not built[1], "one dependency object per run"
    assert all(greeting == "hi" and same for _, greeting, same in greeted)
    assert "s2" in built[1].seen and "s2" not in built[0].seen


async def test_a_transform_declared_on_the_watch_applies_to_what_the_mapper_sees(
        fake_api: FakeApiServer, fake_client: Client) -> None:
    op, mapped = Operator("transformed"), []

    def mapper(obj: Obj) -> list[str]:
        mapped.append(obj)
        return []

    @op.reconcile(SECRET, resync=None, watches=[Watch(CONFIG_MAP, mapper=mapper, transform=without_data)])
    async def reconcile(obj: Obj, ctx: Context) -> None:
        pass

    @op.reconcile(CONFIG_MAP, resync=None, name="plain-configmaps")  # joins the informer, transform and all
    async def reconcile_cm(obj: Obj, ctx: Context) -> None:
        pass

    await fake_client.create(cm("conf", key="secret value"))
    async with await fake_api.client(field_manager=op.name) as client:
        async with operator_running(op, client, namespaces=["default"]):
            await wait_until(lambda: any(o["metadata"]["name"] == "conf" for o in mapped))
    assert all("data" not in o for o in mapped)


async def test_two_transforms_for_one_informer_refuse_to_start(fake_api: FakeApiServer) -> None:
    op = Operator("conflicting")

    @op.reconcile(SECRET, resync=None, watches=[Watch(CONFIG_MAP, mapper=lambda o: [], transform=without_data)])
    async def first(obj: Obj, ctx: Context) -> None:
        pass

    @op.reconcile("deployments.apps", resync=None,
                  watches=[Watch(CONFIG_MAP, mapper=lambda o: [], transform=other_transform)])
    async def second(obj: Obj, ctx: Context) -> None:
        pass

    async with await fake_api.client(field_manager=op.name) as client:
        with pytest.raises(ValueError, match=r"configmaps.*transform without_data.*other_transform cannot"):
            async with operator_running(op, client, namespaces=["default"]):
                pass


async def test_the_cache_refuses_a_transform_it_would_drop() -> None:
    cache = Cache(FakeClient(), freeze_gc=False)
    await cache.informer(CONFIG_MAP)
    with pytest.raises(ValueError, match="already exists without a transform"):
        await cache.informer(CONFIG_MAP, transform=without_data)
    first = await cache.informer(SECRET, transform=without_data)
    assert await cache.informer(SECRET, transform=without_data) is first  # the same one: joins
    assert await cache.informer(SECRET) is first  # none asked for: joins as it is
    with pytest.raises(ValueError, match="with the transform without_data"):
        await cache.informer(SECRET, transform=other_transform)
    assert await cache.informer(SECRET, label_selector="app=x", transform=other_transform) is not first



async def test_the_dependencies_exist_before_the_webhook_server_starts() -> None:
    """Webhook handlers get no ctx: they read ``operator.deps``, built before the server can call them.
    (blackadder: its conversion webhook is one the fake API server calls.)"""
    pytest.importorskip("celpy", reason="blackadder's CRD has CEL rules: pip install kubeloop[fake]")
    from kubeloop.operators.blackadder import build_operator
    from kubeloop.operators.blackadder.settings import BlackadderSettings
    from kubeloop.testing import install_crds

    server_at_build: list[object] = []

    async def build(manager: Manager, settings: Any) -> str:
        assert manager.webhooks is not None
        server_at_build.append(manager.webhooks.server)
        return "ready"

    op = build_operator()
    op.deps_factory = build
    async with FakeApiServer() as fake, await fake.client() as admin:
        await install_crds(admin, op)
        await admin.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "home"}})
        op.settings = BlackadderSettings(operator_namespace="home")
        async with await fake.client(field_manager=op.name) as client, operator_running(op, client) as manager:
            assert manager.webhooks is not None and manager.webhooks.server is not None  # started since
            assert op.deps == "ready"
    assert server_at_build == [None], "built before the webhook server was started"
