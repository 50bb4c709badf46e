"""Generated CRDs, RBAC and manifests against the real API server: valid objects are accepted (and
defaulted), invalid ones are refused with the field paths the schema promises."""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Callable
from datetime import date, datetime
from enum import IntEnum
from typing import Annotated, Any, Literal

import pytest
from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from kubeloop.client import Client, Forbidden, Invalid, NotFound
from kubeloop.helpers.conditions import set_condition
from kubeloop.resources import (
    AccessRequest,
    Conditions,
    CustomResource,
    Int32,
    Int64,
    IntOrString,
    Permission,
    RbacAudit,
    crd_for,
    embedded_resource,
    list_type,
    manager_deployment,
    map_type,
    metrics_service,
    nullable,
    opaque,
    printer_column,
    render_rbac,
    scale_subresource,
    status_permissions,
    validation,
    watch_permissions,
)
from kubeloop.testing import wait_for
from tests.chaos_agent import ChaosAgentSpec, ChaosAgentStatus

pytestmark = pytest.mark.cluster

GROUP = "crdgen.test.kubeloop.dev"

# --- the Blackadder ChaosAgent --------------------------------------------------------------------


class ChaosAgent(CustomResource, group="blackadder.io", version="v1alpha1", kind="ChaosAgent",
                 scope="Cluster", short_names=("ca",), categories=("chaos",),
                 printer_columns=[printer_column("Tantrum", ".spec.tantrumMode", type="boolean"),
                                  printer_column("Eagerness", ".spec.eagerness", type="integer"),
                                  printer_column("Victims", ".status.victims", type="integer", priority=1)]):
    spec: ChaosAgentSpec
    status: ChaosAgentStatus | None = None


# --- a namespaced resource using most schema features ---------------------------------------------------


class Port(BaseModel):
    name: str
    port: Int32 = Field(ge=1, le=65535)


class GizmoSpec(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True)
    __validations__ = [validation("self.minReplicas <= self.maxReplicas", field_path=".minReplicas",
                                  message="minReplicas must not exceed maxReplicas")]

    mode: Literal["fast", "slow"] = "fast"
    replicas: int = 1
    min_replicas: int = Field(0, ge=0)
    max_replicas: int = 3
    size: Annotated[int, validation("self >= oldSelf", message="size may not shrink")] = 1
    name_prefix: str = Field("g", pattern="^[a-z]+$", max_length=10)
    target: IntOrString = 80
    ports: Annotated[list[Port], list_type("map", "name")] = Field(default_factory=list)
    extra: dict[str, Any] = Field(default_factory=dict)
    when: datetime | None = None


class GizmoStatus(BaseModel):
    replicas: int = 0
    selector: str = ""


class Gizmo(CustomResource, group=GROUP, version="v1", kind="Gizmo",
            scale=scale_subresource(label_selector=".status.selector")):
    spec: GizmoSpec = Field(default_factory=GizmoSpec)
    status: GizmoStatus | None = None


class WidgetSpecV1(BaseModel):
    size: int = 1


class WidgetSpecV2(BaseModel):
    size: int = 1
    color: str = "red"


class WidgetV1(CustomResource, group=GROUP, version="v1", kind="Widget"):
    spec: WidgetSpecV1


class WidgetV2(CustomResource, group=GROUP, version="v2", kind="Widget", storage=False):
    spec: WidgetSpecV2


class Level(IntEnum):
    LOW = 1
    HIGH = 2


class KitchenSpec(BaseModel):
    """Every schema feature at once, to prove the server accepts each of them."""

    level: Level = Level.LOW
    ratio: float = Field(0.5, gt=0, lt=1)
    big: Int64 = 0
    maybe: Annotated[int | None, nullable()] = None
    tags: set[str] = Field(default_factory=set)
    args: Annotated[list[str], list_type("atomic")] = Field(default_factory=list)
    selector: Annotated[dict[str, str], map_type("atomic")] = Field(default_factory=dict)
    template: Annotated[dict[str, Any], embedded_resource()] = Field(default_factory=dict)
    anything: Any = None
    blob: Annotated[list[Any], opaque()] = Field(default_factory=list)
    day: date | None = None


class KitchenStatus(BaseModel):
    conditions: Conditions = Field(default_factory=list)


class Kitchen(CustomResource, group=GROUP, version="v1", kind="Kitchen"):
    __validations__ = [validation("self.metadata.name.size() <= 20", message="name too long")]
    spec: KitchenSpec = Field(default_factory=KitchenSpec)
    status: KitchenStatus | None = None


# --- helpers -------------------------------------------------------------------------------------------


def _established(obj: dict[str, Any]) -> bool:
    return any(c["type"] == "Established" and c["status"] == "True"
               for c in (obj.get("status") or {}).get("conditions") or [])


async def install(client: Client, *models: type[CustomResource]) -> dict[str, Any]:
    """Apply the generated CRD (idempotent: server-side apply) and wait until it is served."""
    crd = crd_for(*models)
    await client.apply(crd, field_manager="kubeloop-test")
    name = crd["metadata"]["name"]
    await wait_for(client, "customresourcedefinitions", name, predicate=_established, timeout=30,
                   description=f"{name} Established")
    # the generated CRD is accepted exactly as written: the server stores our schema unchanged
    stored = await client.get("customresourcedefinitions", name)
    for ours, theirs in zip(crd["spec"]["versions"], stored["spec"]["versions"], strict=True):
        assert theirs["schema"] == ours["schema"]
    await client.registry.refresh()
    return crd


async def refused(call: Callable[[], Any]) -> Invalid:
    with pytest.raises(Invalid) as info:
        await call()
    return info.value


def fields(err: Invalid) -> set[str]:
    return {c.get("field", "") for c in err.causes}


def _name(prefix: str) -> str:
    return f"{prefix}-{secrets.token_hex(3)}"


# --- tests ---------------------------------------------------------------------------------------------


async def test_chaos_agent_eagerness_limit(kube_client: Client) -> None:
    await install(kube_client, ChaosAgent)
    good, bad = _name("baldrick"), _name("percy")
    try:
        created = await kube_client.create(ChaosAgent(metadata={"name": good},
                                                      spec=ChaosAgentSpec(eagerness=50)).to_dict())
        agent = ChaosAgent.from_dict(created)
        assert agent.spec.eagerness == 50 and agent.metadata.uid

        # Defaults are applied by the server for fields the client leaves out.
        bare = await kube_client.create({"apiVersion": "blackadder.io/v1alpha1", "kind": "ChaosAgent",
                                         "metadata": {"name": bad}, "spec": {}})
        assert bare["spec"] == {"tantrumMode": False, "eagerness": 20}
        await kube_client.delete(ChaosAgent, bad)

        err = await refused(lambda: kube_client.create(
            {"apiVersion": "blackadder.io/v1alpha1", "kind": "ChaosAgent", "metadata": {"name": bad},
             "spec": {"eagerness": 200}}))
        assert ("spec.eagerness: Invalid value: 200: spec.eagerness in body should be less than or equal "
                "to 100") in err.message
        assert fields(err) == {"spec.eagerness"}
    finally:
        for name in (good, bad):
            try:
                await kube_client.delete(ChaosAgent, name)
            except NotFound:
                pass


async def test_printer_columns_and_short_names(kube_cluster: Any, kube_client: Client) -> None:
    await install(kube_client, ChaosAgent)
    name = _name("edmund")
    agent = ChaosAgent(metadata={"name": name}, spec=ChaosAgentSpec(tantrumMode=True))
    await kube_client.create(agent.to_dict())
    try:
        out = kube_cluster.kubectl("get", "ca", name).stdout
        header, row = out.splitlines()[:2]
        assert header.split() == ["NAME", "TANTRUM", "EAGERNESS"]
        assert row.split() == [name, "true", "20"]
        wide = kube_cluster.kubectl("get", "chaos", "-o", "wide").stdout  # by category
        assert "VICTIMS" in wide.splitlines()[0] and name in wide
    finally:
        await kube_client.delete(ChaosAgent, name)


async def test_schema_features_are_enforced(kube_client: Client, namespace: str) -> None:
    await install(kube_client, Gizmo)

    def gizmo(name: str, **spec: Any) -> dict[str, Any]:
        return {"apiVersion": f"{GROUP}/v1", "kind": "Gizmo",
                "metadata": {"name": name, "namespace": namespace}, "spec": spec}

    # accepted, defaulted, unknown fields pruned except where preserved
    created = await kube_client.create(gizmo("ok", target="50%", bogus=1, extra={"any": {"thing": [1]}},
                                             ports=[{"name": "http", "port": 80}],
                                             when="2024-01-01T00:00:00Z"))
    spec = created["spec"]
    assert "bogus" not in spec
    assert spec["extra"] == {"any": {"thing": [1]}}
    assert spec["target"] == "50%"
    assert (spec["mode"], spec["minReplicas"], spec["maxReplicas"], spec["namePrefix"]) == ("fast", 0, 3, "g")
    assert Gizmo.from_dict(created).spec.min_replicas == 0
    await kube_client.create(gizmo("int-target", target=8080))

    cases: list[tuple[dict[str, Any], str, str]] = [
        ({"mode": "medium"}, "spec.mode", 'Unsupported value: "medium"'),
        ({"namePrefix": "ABC"}, "spec.namePrefix", "should match '^[a-z]+$'"),
        ({"namePrefix": "abcdefghijkl"}, "spec.namePrefix", ""),
        ({"minReplicas": -1}, "spec.minReplicas", "should be greater than or equal to 0"),
        ({"minReplicas": 5, "maxReplicas": 2}, "spec.minReplicas", "minReplicas must not exceed maxReplicas"),
        ({"ports": [{"name": "a", "port": 70000}]}, "spec.ports[0].port", "less than or equal to 65535"),
        ({"ports": [{"port": 1}]}, "spec.ports[0].name", "Required value"),
        ({"ports": [{"name": "a", "port": 1}, {"name": "a", "port": 2}]}, "spec.ports[1]", "Duplicate value"),
        ({"when": "yesterday"}, "spec.when", "date-time"),
        ({"target": 1.5}, "spec.target", "Invalid value"),
    ]
    for i, (spec, field, text) in enumerate(cases):
        err = await refused(lambda spec=spec, i=i: kube_client.create(gizmo(f"bad-{i}", **spec)))
        assert field in fields(err), (spec, err.causes)
        assert text in err.message, (spec, err.message)

    # a transition rule: growing is fine, shrinking is refused
    await kube_client.patch(Gizmo, "ok", {"spec": {"size": 3}}, namespace)
    err = await refused(lambda: kube_client.patch(Gizmo, "ok", {"spec": {"size": 2}}, namespace))
    assert fields(err) == {"spec.size"} and "size may not shrink" in err.message


async def test_scale_and_status_subresources(kube_cluster: Any, kube_client: Client, namespace: str) -> None:
    await install(kube_client, Gizmo)
    body = Gizmo(metadata={"name": "scaled", "namespace": namespace}).to_dict()
    created = await kube_client.create(body)
    await kube_client.patch_status(Gizmo, "scaled", {"replicas": 1, "selector": "app=gizmo"}, namespace)
    kube_cluster.kubectl("scale", f"gizmos.{GROUP}/scaled", "--replicas=4", "-n", namespace)
    after = await kube_client.get(Gizmo, "scaled", namespace)
    assert after["spec"]["replicas"] == 4
    scale = await kube_client.get(Gizmo, "scaled", namespace, subresource="scale")
    assert scale["status"] == {"replicas": 1, "selector": "app=gizmo"}
    assert after["metadata"]["generation"] == created["metadata"]["generation"] + 1  # status did not bump it


async def test_multi_version_crd(kube_client: Client, namespace: str) -> None:
    crd = await install(kube_client, WidgetV1, WidgetV2)
    assert [v["name"] for v in crd["spec"]["versions"]] == ["v2", "v1"]
    await kube_client.create(WidgetV1(metadata={"name": "w", "namespace": namespace},
                                      spec=WidgetSpecV1(size=2)).to_dict())
    as_v2 = await kube_client.get(WidgetV2, "w", namespace)
    assert as_v2["apiVersion"] == f"{GROUP}/v2"
    assert WidgetV2.from_dict(as_v2).spec.size == 2


async def test_generated_rbac_grants_exactly_what_is_audited(kube_cluster: Any, kube_client: Client,
                                                             namespace: str, tmp_path: Any) -> None:
    await install(kube_client, Gizmo)
    await install(kube_client, ChaosAgent)
    name = _name("op")
    objs = render_rbac(name, namespace, [watch_permissions(ChaosAgent)],
                       namespaced_permissions=[watch_permissions(Gizmo), status_permissions(Gizmo)])
    for obj in objs:
        await kube_client.create(obj, field_validation="Strict")
    await kube_client.create(Gizmo(metadata={"name": "g", "namespace": namespace}).to_dict())
    path = kube_cluster.service_account_kubeconfig(namespace, name, tmp_path / "op.kubeconfig")
    op = await Client.from_kubeconfig(str(path), record_permissions=True)
    try:
        async with asyncio.timeout(15):  # the authorizer learns new bindings through an informer
            while True:
                try:
                    await op.list(ChaosAgent)
                    await op.list(Gizmo, namespace)
                    break
                except Forbidden:
                    await asyncio.sleep(0.2)
        await op.patch_status(Gizmo, "g", {"replicas": 1}, namespace)
        with pytest.raises(Forbidden):  # deliberately not granted
            await op.patch(Gizmo, "g", {"spec": {"size": 2}}, namespace)

        assert op.used_permissions is not None
        report = RbacAudit.from_manifests(objs).check(op.used_permissions)
        assert report.missing == (AccessRequest("patch", GROUP, "gizmos", None, True, namespace),), report.message
        assert Permission("coordination.k8s.io", "leases", {"get", "create", "update"}) in report.unused
    finally:
        await op.close()
        for kind in ("clusterrolebindings", "clusterroles"):
            try:
                await kube_client.delete(f"rbac.authorization.k8s.io/v1/{kind}", name)
            except NotFound:
                pass


async def test_manager_deployment_is_accepted_and_runs(kube_client: Client, namespace: str) -> None:
    await kube_client.create({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "op"}},
                             namespace)
    await kube_client.create(metrics_service("op", namespace), field_validation="Strict")
    dep = manager_deployment("op", namespace, "example.org/op:1", ["run"])
    await kube_client.create(dep, field_validation="Strict")
    available = await wait_for(kube_client, "deployments.apps", "op", namespace,
                               lambda d: d.get("status", {}).get("availableReplicas") == 1, timeout=90,
                               description="the manager Deployment to be available")
    assert available["spec"]["template"]["spec"]["containers"][0]["securityContext"]["readOnlyRootFilesystem"]


async def test_kitchen_sink_schema_is_accepted(kube_client: Client, namespace: str) -> None:
    await install(kube_client, Kitchen)
    body = Kitchen(metadata={"name": "k", "namespace": namespace}, spec=KitchenSpec(
        level=Level.HIGH, tags={"a", "b"}, selector={"x": "y"}, anything={"free": ["form"]}, blob=[1, "two"],
        template={"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "inner"}},
        day=date(2024, 2, 29))).to_dict()
    body["spec"]["maybe"] = None  # nullable: kept as null rather than refused
    created = await kube_client.create(body)
    assert created["spec"]["maybe"] is None
    assert sorted(created["spec"]["tags"]) == ["a", "b"]
    assert created["spec"]["anything"] == {"free": ["form"]} and created["spec"]["blob"] == [1, "two"]
    kitchen = Kitchen.from_dict(created)
    assert kitchen.spec.level is Level.HIGH and kitchen.spec.day == date(2024, 2, 29)

    await kube_client.patch_status(Kitchen, "k", {"conditions": [
        {"type": "Ready", "status": "True", "reason": "Done", "message": "",
         "lastTransitionTime": "2024-01-01T00:00:00Z"}]}, namespace)
    for bad, field in [({"tags": ["a", "a"]}, "spec.tags[1]"), ({"level": 3}, "spec.level"),
                       ({"ratio": 1}, "spec.ratio"), ({"template": {"kind": "ConfigMap"}}, "spec.template")]:
        err = await refused(lambda bad=bad: kube_client.create(
            {"apiVersion": f"{GROUP}/v1", "kind": "Kitchen",
             "metadata": {"name": "bad", "namespace": namespace}, "spec": bad}))
        assert any(f.startswith(field) for f in fields(err)), (bad, err.causes)
    err = await refused(lambda: kube_client.create(
        {"apiVersion": f"{GROUP}/v1", "kind": "Kitchen",
         "metadata": {"name": "a-name-longer-than-twenty", "namespace": namespace}}))
    assert "name too long" in err.message


async def test_conditions_carry_metav1_conditions_bounds(kube_client: Client, namespace: str) -> None:
    # The real API server, not our walk of the schema, judges the bounds: what metav1.Condition refuses
    # on a built-in object is refused on a kubeloop CRD's conditions, and what set_condition writes passes.
    await install(kube_client, Kitchen)
    await kube_client.create(Kitchen(metadata={"name": "c", "namespace": namespace}, spec=KitchenSpec(
        template={"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "inner"}})).to_dict())
    written = set_condition(None, "Ready", False, "ReconcileError", "x" * 40_000)
    assert len(written[0]["message"]) == 32768
    await kube_client.patch_status(Kitchen, "c", {"conditions": written}, namespace)

    def one(**fields: Any) -> list[dict[str, Any]]:
        return [{"type": "Ready", "status": "True", "reason": "Done", "message": "",
                 "lastTransitionTime": "2024-01-01T00:00:00Z", **fields}]

    many = [{**one()[0], "type": f"T{i}"} for i in range(65)]
    cases = [(one(reason="not one word"), "status.conditions[0].reason"),
             (one(type="has spaces"), "status.conditions[0].type"),
             (one(message="x" * 32769), "status.conditions[0].message"),
             (many, "status.conditions")]
    for conditions, field in cases:
        err = await refused(lambda conditions=conditions: kube_client.patch_status(
            Kitchen, "c", {"conditions": conditions}, namespace))
        assert field in fields(err), (field, err.causes)
