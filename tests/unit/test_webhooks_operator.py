"""``@op.validate`` / ``@op.mutate`` / ``op.convert``: registration checks, typed handlers as the server
calls them, RBAC, and what ``kubeloop generate`` and the Helm chart emit (no cluster needed)."""

from __future__ import annotations

import base64
import copy
from pathlib import Path
from typing import Any

import orjson
import pytest
import yaml

from kubeloop import Operator, builtin
from kubeloop.cli.generate import manifests
from kubeloop.packaging.chart import write_chart
from kubeloop.resources import render_rbac
from kubeloop.webhooks import Denied
from kubeloop.webhooks.admission import allow, parse_admission
from kubeloop.webhooks.deploy import with_webhooks
from kubeloop.webhooks.patch import apply, diff
from kubeloop.webhooks.runtime import WebhookOptions, webhook_manifests
from tests import webhook_operator as gadgets
from tests.webhook_operator import GROUP, Gadget, op


def review(obj: dict[str, Any] | None, old: dict[str, Any] | None = None, operation: str = "CREATE") -> Any:
    return parse_admission({
        "apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
        "request": {"uid": "u1", "operation": operation, "kind": {"kind": "Gadget"}, "resource": {},
                    "name": "g", "namespace": "ns", "userInfo": {"username": "system:admin"},
                    "object": obj, "oldObject": old, "dryRun": False}})


def gadget(**spec: Any) -> dict[str, Any]:
    return {"apiVersion": f"{GROUP}/v1beta1", "kind": "Gadget",
            "metadata": {"name": "g", "namespace": "ns", "uid": "1234", "managedFields": [{"manager": "x"}]},
            "spec": spec}


def hook(verb: str) -> Any:
    return next(h for h in op.hooks.admission if h.verb == verb)


# --- registration -----------------------------------------------------------------------------------


def test_paths_and_names_follow_the_resource() -> None:
    assert hook("validating").path == f"/validate-{GROUP.replace('.', '-')}-v1beta1-gadgets"
    assert hook("mutating").spec().name == f"mutate.gadgets.{GROUP}"
    other = Operator("o")

    @other.validate(builtin.CONFIG_MAP)
    async def v(obj: dict[str, Any], req: Any) -> None: ...

    assert other.hooks.admission[0].path == "/validate-core-v1-configmaps"
    assert other.hooks.admission[0].spec().rules[0].api_groups == ("",)


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"failure_policy": "Sometimes"}, "failure_policy 'Sometimes'"),
    ({"timeout": 60}, "timeout_seconds 60"),
    ({"operations": ["CREATE", "PATCH"]}, "operations ['CREATE', 'PATCH']"),
])
def test_bad_options_are_refused_at_declaration(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("]", r"\]")):
        @Operator("o").validate(Gadget, **kwargs)
        async def v(obj: Any, req: Any) -> None: ...


def test_a_sync_handler_and_a_second_validator_are_refused() -> None:
    other = Operator("o")
    with pytest.raises(TypeError, match="must be an async function"):
        other.validate(Gadget)(lambda obj, req: None)

    @other.validate(Gadget)
    async def first(obj: Any, req: Any) -> None: ...

    with pytest.raises(ValueError, match="already has a validating webhook"):
        @other.validate(Gadget)
        async def second(obj: Any, req: Any) -> None: ...


def test_convert_needs_versions_of_the_same_kind() -> None:
    with pytest.raises(ValueError, match="another version of Gadget"):
        Operator("o").convert(Gadget, spokes={Gadget: (gadgets.from_hub, gadgets.to_hub)})
    with pytest.raises(ValueError, match="at least one spoke"):
        Operator("o").convert(Gadget, spokes={})


# --- typed handlers ---------------------------------------------------------------------------------


async def test_validate_gets_typed_objects_and_the_old_one() -> None:
    handler = hook("validating").server_handler()
    await handler(review(gadget(count=3, owner="a")))
    with pytest.raises(Denied) as denied:
        await handler(review(gadget(count=11)))
    assert denied.value.field == "spec.count"
    with pytest.raises(Denied) as denied:
        await handler(review(gadget(owner="b"), gadget(owner="a"), "UPDATE"))
    assert (denied.value.field, denied.value.message) == ("spec.owner", "cannot change (was 'a')")


async def test_an_object_the_model_refuses_is_denied_with_its_path() -> None:
    with pytest.raises(Denied) as denied:
        await hook("validating").server_handler()(review(gadget(count="many")))
    assert denied.value.field == "spec.count"
    assert denied.value.status()["code"] == 422


async def test_mutation_patches_only_what_the_handler_changed() -> None:
    req = review(gadget(count=2))
    sent = copy.deepcopy(req.object)
    mutated = await hook("mutating").server_handler()(req)
    answer = allow(req, mutated, sent)["response"]
    ops = orjson.loads(base64.b64decode(answer["patch"]))
    assert sorted(o["path"] for o in ops) == ["/metadata/labels", "/spec/color"]
    # Fields the model does not know (managedFields, uid) and defaults it would add are not touched.
    assert apply(sent, ops) == {**sent, "metadata": {**sent["metadata"],
                                                     "labels": {"gadgets/created-by": "system_admin"}},
                                "spec": {"count": 2, "color": "blue"}}


def test_apply_creates_missing_parents_and_round_trips_diff() -> None:
    old = {"a": {"b": [1, 2]}, "c": "x"}
    new = {"a": {"b": [1, 3], "d": {"e": True}}}
    assert apply(old, diff(old, new)) == new
    assert apply({}, [{"op": "add", "path": "/spec/color", "value": "blue"}]) == {"spec": {"color": "blue"}}
    assert old == {"a": {"b": [1, 2]}, "c": "x"}  # the input is not changed


def test_conversion_functions_see_typed_objects() -> None:
    converter = op.hooks.conversions[0].converter()
    old = {"apiVersion": f"{GROUP}/v1alpha1", "kind": "Gadget", "metadata": {"name": "g"},
           "spec": {"size": "4", "owner": "a"}}
    hub = converter.convert(old, f"{GROUP}/v1beta1")
    assert hub["spec"]["count"] == 4 and hub["apiVersion"] == f"{GROUP}/v1beta1"
    assert converter.convert(hub, f"{GROUP}/v1alpha1")["spec"]["size"] == "4"


# --- RBAC and manifests -----------------------------------------------------------------------------


def test_rbac_names_exactly_the_operators_own_configurations_and_crd() -> None:
    rules = [r for r in render_rbac("gadgets", "ns", op.permissions())[1]["rules"] if r.get("resourceNames")]
    assert rules == [
        {"apiGroups": ["admissionregistration.k8s.io"], "resources": ["mutatingwebhookconfigurations"],
         "verbs": ["get", "patch"], "resourceNames": ["gadgets-mutating"]},
        {"apiGroups": ["admissionregistration.k8s.io"], "resources": ["validatingwebhookconfigurations"],
         "verbs": ["get", "patch"], "resourceNames": ["gadgets-validating"]},
        {"apiGroups": ["apiextensions.k8s.io"], "resources": ["customresourcedefinitions"], "verbs": ["get", "patch"],
         "resourceNames": [f"gadgets.{GROUP}"]}]
    role = next(o for o in render_rbac("gadgets", "ns", [], op.namespaced_permissions()) if o["kind"] == "Role")
    assert {"apiGroups": [""], "resources": ["secrets"], "verbs": ["get", "patch"],
            "resourceNames": ["gadgets-webhook-ca"]} in role["rules"]
    assert Operator("plain").permissions() == [] and Operator("plain").namespaced_permissions() == []


def test_local_configurations_use_a_url_and_exclude_only_kube_system() -> None:
    objs = webhook_manifests("gadgets", op.hooks, WebhookOptions(port=9555), ca_bundle="Q0E=")
    validating = objs[0]["webhooks"][0]
    assert validating["clientConfig"] == {
        "url": f"https://127.0.0.1:9555/validate-{GROUP.replace('.', '-')}-v1beta1-gadgets", "caBundle": "Q0E="}
    assert validating["namespaceSelector"]["matchExpressions"][0]["values"] == ["kube-system"]
    assert objs[2]["spec"]["conversion"]["strategy"] == "Webhook"


def test_generate_adds_configurations_service_port_and_conversion() -> None:
    objs = manifests("tests/webhook_operator.py", op, "gadgets-system")
    kinds = [o["kind"] for o in objs]
    assert kinds[-4:] == ["Secret", "Service", "ValidatingWebhookConfiguration", "MutatingWebhookConfiguration"]
    assert objs[-4]["metadata"] == {"name": "gadgets-webhook-ca", "namespace": "gadgets-system",
                                    "labels": {"app.kubernetes.io/name": "gadgets",
                                               "app.kubernetes.io/managed-by": "kubeloop"}}
    assert "data" not in objs[-4]  # filled by the first replica, never shipped
    service = objs[-3]
    assert service["metadata"]["name"] == "gadgets-webhook"
    assert service["spec"]["ports"] == [{"name": "webhook", "port": 443, "targetPort": "webhook", "protocol": "TCP"}]
    container = next(o for o in objs if o["kind"] == "Deployment")["spec"]["template"]["spec"]["containers"][0]
    assert {"name": "webhook", "containerPort": 9443, "protocol": "TCP"} in container["ports"]
    assert "--webhook-service=gadgets-webhook" in container["args"]
    assert "--webhook-host=0.0.0.0" in container["args"]
    entry = objs[-2]["webhooks"][0]
    assert entry["clientConfig"] == {"service": {"name": "gadgets-webhook", "namespace": "gadgets-system",
                                                 "path": hook("validating").path, "port": 443}, "url": None}
    assert (entry["failurePolicy"], entry["sideEffects"], entry["matchPolicy"], entry["timeoutSeconds"]) == (
        "Fail", "None", "Equivalent", 5)
    assert entry["namespaceSelector"]["matchExpressions"][0]["values"] == ["gadgets-system", "kube-system"]
    crd = next(o for o in objs if o["kind"] == "CustomResourceDefinition")
    assert crd["spec"]["conversion"]["webhook"]["clientConfig"]["service"]["name"] == "gadgets-webhook"
    assert [v["name"] for v in crd["spec"]["versions"]] == ["v1beta1", "v1alpha1"]


def test_cert_manager_annotation_replaces_the_bundle() -> None:
    objs = manifests("tests/webhook_operator.py", op, "ns", cert_manager_certificate="ns/gadgets-cert")
    annotated = [o for o in objs if (o["metadata"].get("annotations") or {}).get("cert-manager.io/inject-ca-from")]
    assert {o["kind"] for o in annotated} == {"CustomResourceDefinition", "ValidatingWebhookConfiguration",
                                              "MutatingWebhookConfiguration"}


def test_without_webhooks_the_manifests_are_unchanged() -> None:
    from kubeloop.cli.run import load_operator
    from kubeloop.resources import operator_manifests

    reloader = load_operator("reloader")

    before = operator_manifests("reloader", "ns", "img", models=reloader.custom_resources(),
                                cluster_permissions=reloader.permissions(),
                                namespaced_permissions=reloader.namespaced_permissions(), args=["run"],
                                events="cluster")
    assert with_webhooks(before, "reloader", "ns", reloader.hooks) is before


def test_chart_templates_the_webhooks_for_the_release(tmp_path: Path) -> None:
    write_chart(tmp_path, "gadgets", manifests("tests/webhook_operator.py", op, "default"))
    webhooks = (tmp_path / "templates/webhooks.yaml").read_text()
    assert '{{ include "gadgets.fullname" . }}-webhook' in webhooks
    assert "namespace: {{ .Release.Namespace }}" in webhooks
    assert "- {{ .Release.Namespace }}" in webhooks  # the excluded namespace is the release's
    assert "name: gadgets-validating" in webhooks and "kind: CustomResourceDefinition" in webhooks
    assert not (tmp_path / "crds").exists() or not list((tmp_path / "crds").iterdir())
    deployment = (tmp_path / "templates/deployment.yaml").read_text()
    assert "containerPort: {{ .Values.webhook.port }}" in deployment
    assert "--webhook-service={{ include \"gadgets.fullname\" . }}-webhook" in deployment
    assert yaml.safe_load((tmp_path / "values.yaml").read_text())["webhook"] == {"port": 9443, "certSecret": ""}
    assert "targetPort: webhook" in (tmp_path / "templates/webhook-service.yaml").read_text()
    secret = (tmp_path / "templates/webhook-ca-secret.yaml").read_text()
    assert "name: gadgets-webhook-ca" in secret and "namespace: {{ .Release.Namespace }}" in secret


async def test_the_howto_example_works() -> None:
    import importlib.util

    path = Path(__file__).parents[2] / "docs/howto/webhooks_example.py"
    spec = importlib.util.spec_from_file_location("webhooks_example", path)
    assert spec and spec.loader
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    validate, mutate = (h.server_handler() for h in example.op.hooks.admission)

    def site(**spec: Any) -> dict[str, Any]:
        return {"apiVersion": "example.com/v1beta1", "kind": "Website", "metadata": {"name": "w"}, "spec": spec}

    with pytest.raises(Denied, match="at most 10"):
        await validate(review(site(replicas=11)))
    with pytest.raises(Denied, match="cannot be changed"):
        await validate(review(site(domain="b"), site(domain="a"), "UPDATE"))
    assert (await mutate(review(site(replicas=2))))["spec"] == {"replicas": 2, "tier": "standard"}
    converter = example.op.hooks.conversions[0].converter()
    old = converter.convert(site(replicas=3, domain="d"), "example.com/v1alpha1")
    assert old["spec"] == {"size": 3, "domain": "d"}
    assert converter.convert(old, "example.com/v1beta1")["spec"] == {"replicas": 3, "domain": "d"}
