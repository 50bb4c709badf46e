"""Custom-resource validation as kube-apiserver 1.35 does it: formats, min/maxProperties, multipleOf,
list-type sets and maps, allOf/anyOf/oneOf/not, CEL rules blocked by schema errors, and the CRD schema
keywords the fake refuses (tests/differential/sequences.py ``custom_resource_formats_and_keywords``
checks each against the real server; these run without it)."""

from __future__ import annotations

import importlib.util
from typing import Any

import pytest

from kubeloop.client import Client
from kubeloop.client.errors import ApiError
from kubeloop.testing.apiserver import FakeApiServer, formats

PATH = "/apis/x.dev/v1/namespaces/default/probes"
UNCHECKED = ("Invalid value: null: some validation rules were not checked because the object was invalid; correct "
             "the existing errors to complete validation")


def crd(**properties: Any) -> dict[str, Any]:
    spec = {"type": "object", "properties": properties}
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "probes.x.dev"},
            "spec": {"group": "x.dev", "scope": "Namespaced", "names": {"kind": "Probe", "plural": "probes"},
                     "versions": [{"name": "v1", "served": True, "storage": True,
                                   "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": spec}}}}]}}


async def install(fake_api: FakeApiServer, client: Client, **properties: Any) -> None:
    await client.create(crd(**properties))
    await fake_api.settle()


async def causes(client: Client, **spec: Any) -> list[tuple[str, str, str]]:
    """The causes of the create's 422 (empty if it was created)."""
    body = {"apiVersion": "x.dev/v1", "kind": "Probe", "metadata": {"name": "p"}, "spec": spec}
    try:
        await client.transport.request("POST", PATH, body=body)
    except ApiError as err:
        assert err.status == 422, err.message
        return sorted((c["reason"], c["field"], c["message"]) for c in err.causes or [])
    await client.transport.request("DELETE", f"{PATH}/p")
    return []


@pytest.mark.parametrize(("fmt", "good", "bad"), [
    ("date-time", ["2026-01-01T00:00:00Z", "2026-01-01t00:00:00z", "2026-01-01T00:00:00.123+02:00"],
     ["nope", "2026-01-01", "2026-01-01T00:00:00", "2026-01-01 00:00:00Z", "2026-01-01T25:00:00Z"]),
    ("date", ["2026-01-01"], ["2026-13-01", "2026-1-1"]),
    ("duration", ["1h30m", "-1h", "5 days", "10 minutes", "P1D"], ["10", ""]),
    ("byte", ["aGk="], ["aGk", "aGk_", "", "not base64!"]),
    ("uuid", ["0d6a1bc0-1111-4222-8333-444455556666", "0D6A1BC0111142228333444455556666"], ["nope"]),
    ("uuid3", [], ["0d6a1bc0-1111-4222-8333-444455556666"]),
    ("ipv4", ["1.2.3.4", "01.2.3.4", "::ffff:1.2.3.4"], ["1.2.3", "::1"]),
    ("ipv6", ["::1"], ["1.2.3.4"]),
    ("cidr", ["10.0.0.0/8", "10.0.0.1/8"], ["10.0.0.0"]),
    ("mac", ["00:11:22:33:44:55", "00-11-22-33-44-55", "0011.2233.4455"], ["00:11:22"]),
    ("hostname", ["a", "ab.cd", "a-b.com", "foo.bar.example.com"], ["a.b", "a.b1", "1a.b", "-a", "a_b", "my-host"]),
    ("email", ["a@b.c", "a@b", "A <a@b.c>"], ["nope"]),
    ("uri", ["http://x/y", "/rel/path", "/a b", "mailto:x"], ["nope", "http://x y"]),
    ("hexcolor", ["#fff"], ["#12"]),
])
def test_formats(fmt: str, good: list[str], bad: list[str]) -> None:
    check = formats.checker(fmt)
    assert check is not None
    assert [v for v in good if not check(v)] == []
    assert [v for v in bad if check(v)] == []


def test_formats_the_real_server_ignores() -> None:
    for fmt in ("int32", "int64", "float", "double", "nosuchformat"):
        assert formats.checker(fmt) is None


async def test_format_error_blocks_cel(fake_api: FakeApiServer, fake_client: Client) -> None:
    await install(fake_api, fake_client, when={"type": "string", "format": "date-time"},
                  n={"type": "integer", "maximum": 10, "x-kubernetes-validations": [{"rule": "self != 7",
                                                                                    "message": "not seven"}]})
    assert await causes(fake_client, when="nope") == [
        ("FieldValueInvalid", "<nil>", UNCHECKED),
        ("FieldValueTypeInvalid", "spec.when", 'Invalid value: "nope": spec.when in body must be of type date-time: '
                                               '"nope"')]
    if importlib.util.find_spec("celpy") is None:
        return
    # A value error (maximum) does not block CEL rules: both are reported.
    assert await causes(fake_client, n=7) == [("FieldValueInvalid", "spec.n", "Invalid value: 7: not seven")]
    assert await causes(fake_client, n=11) == [
        ("FieldValueInvalid", "spec.n", "Invalid value: 11: spec.n in body should be less than or equal to 10")]


async def test_properties_multiples_and_list_types(fake_api: FakeApiServer, fake_client: Client) -> None:
    await install(fake_api, fake_client,
                  obj={"type": "object", "maxProperties": 2, "minProperties": 1,
                       "additionalProperties": {"type": "string"}},
                  mult={"type": "integer", "multipleOf": 3}, half={"type": "number", "multipleOf": 0.5},
                  f25={"type": "number", "multipleOf": 2.5},
                  set={"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
                  map={"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
                       "items": {"type": "object", "required": ["name"], "properties": {
                           "name": {"type": "string"}, "v": {"type": "integer"}}}})
    assert await causes(fake_client, obj={"a": "1", "b": "2", "c": "3"}) == [
        ("FieldValueTooMany", "spec.obj", "Too many: 3: must have at most 2 items")]
    assert await causes(fake_client, obj={}) == [
        ("FieldValueInvalid", "spec.obj", "Invalid value: 0: spec.obj in body should have at least 1 properties")]
    assert await causes(fake_client, mult=4) == [
        ("FieldValueInvalid", "spec.mult", "Invalid value: 4: spec.mult in body should be a multiple of 3")]
    assert await causes(fake_client, half=1.5, f25=7.5, mult=6) == []
    assert await causes(fake_client, half=1.2) == [
        ("FieldValueInvalid", "spec.half", "Invalid value: 1.2: spec.half in body should be a multiple of 0.5")]
    assert await causes(fake_client, f25=7) == [  # an integer value: the factor truncated, as go-openapi does
        ("FieldValueInvalid", "spec.f25", "Invalid value: 7: spec.f25 in body should be a multiple of 2")]
    assert await causes(fake_client, set=["a", "b", "a", "a"]) == [
        ("FieldValueDuplicate", "spec.set[2]", 'Duplicate value: "a"')]
    assert await causes(fake_client, map=[{"name": "a", "v": 1}, {"name": "a", "v": 2}]) == [
        ("FieldValueDuplicate", "spec.map[1]", 'Duplicate value: {"name":"a"}')]


async def test_junctors(fake_api: FakeApiServer, fake_client: Client) -> None:
    await install(fake_api, fake_client,
                  any={"type": "integer", "anyOf": [{"minimum": 5}, {"maximum": 1}]},
                  one={"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
                       "oneOf": [{"required": ["a"]}, {"required": ["b"]}]},
                  all={"type": "integer", "allOf": [{"minimum": 5}, {"maximum": 6}]},
                  never={"type": "integer", "not": {"minimum": 5}},
                  ios={"x-kubernetes-int-or-string": True, "anyOf": [{"type": "integer"}, {"type": "string"}]})
    assert await causes(fake_client, any=7, one={"a": "x"}, all=5, never=1, ios="x") == []
    assert await causes(fake_client, any=3) == [
        ("FieldValueInvalid", "<nil>", 'Invalid value: "": "spec.any" must validate at least one schema (anyOf)'),
        ("FieldValueInvalid", "spec.any", "Invalid value: 3: spec.any in body should be greater than or equal to 5")]
    assert await causes(fake_client, one={"a": "x", "b": "y"}) == [
        ("FieldValueInvalid", "<nil>", 'Invalid value: "": "spec.one" must validate one and only one schema (oneOf). '
                                       "Found 2 valid alternatives")]
    assert await causes(fake_client, all=7) == [
        ("FieldValueInvalid", "<nil>", 'Invalid value: "": "spec.all" must validate all the schemas (allOf)'),
        ("FieldValueInvalid", "spec.all", "Invalid value: 7: spec.all in body should be less than or equal to 6")]
    assert await causes(fake_client, never=6) == [
        ("FieldValueInvalid", "<nil>", 'Invalid value: "": "spec.never" must not validate the schema (not)')]


async def refused(call: Any) -> ApiError:
    with pytest.raises(ApiError) as caught:
        await call
    return caught.value


@pytest.mark.parametrize(("prop", "field", "message"), [
    ({"type": "array", "uniqueItems": True, "items": {"type": "string"}}, "uniqueItems",
     "Forbidden: uniqueItems cannot be set to true since the runtime complexity becomes quadratic"),
    ({"$ref": "#/definitions/x"}, "$ref", "Forbidden: $ref is not supported"),
    ({"type": "object", "patternProperties": {"^a": {"type": "string"}}}, "patternProperties",
     "Forbidden: patternProperties is not supported"),
    ({"type": "integer", "anyOf": [{"type": "integer"}]}, "anyOf[0].type", "Forbidden: must be empty to be structural"),
    ({"type": "integer", "not": {"default": 1}}, "not.default", "Forbidden: must be undefined to be structural"),
    ({"type": "object", "x-kubernetes-preserve-unknown-fields": False}, "x-kubernetes-preserve-unknown-fields",
     "Invalid value: false: must be true or undefined"),
    ({"type": "array"}, "items", "Required value: must be specified"),
    ({"type": "string", "pattern": "(["}, "pattern",
     'Invalid value: "([": must be a valid regular expression, but isn\'t: unterminated character set at position 1'),
    ({"type": "string", "x-kubernetes-list-type": "set"}, "type",
     'Invalid value: "string": must be array if x-kubernetes-list-type is specified'),
    ({"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "bag"}, "x-kubernetes-list-type",
     'Unsupported value: "bag": supported values: "atomic", "set", "map"'),
    ({"type": "object", "x-kubernetes-map-type": "granular-ish"}, "x-kubernetes-map-type",
     'Unsupported value: "granular-ish": supported values: "atomic", "granular"'),
    ({"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["k"],
      "items": {"type": "object", "properties": {"k": {"type": "string"}}}}, "items.properties[k].default",
     "Required value: this property is in x-kubernetes-list-map-keys, so it must have a default or be a required "
     "property"),
    ({"type": "string", "pattern": "^x+$", "default": "y"}, "default",
     'Invalid value: "y":  in body should match \'^x+$\''),
    ({"type": "object", "properties": {"b": {"type": "string"}}, "default": {"unknown": 1}}, "default",
     'Invalid value: {"unknown":1}: must not have unknown fields'),
    ({"type": "integer", "x-kubernetes-validations": [{"rule": "self > 0", "reason": "Nope"}]},
     "x-kubernetes-validations[0].reason", 'Unsupported value: "Nope": supported values: "FieldValueDuplicate", '
     '"FieldValueForbidden", "FieldValueInvalid", "FieldValueRequired"'),
    ({"type": "integer", "x-kubernetes-validations": [{"rule": "self > 0", "message": "two\nlines"}]},
     "x-kubernetes-validations[0].message", 'Invalid value: "two\\nlines": must not contain line breaks'),
])
async def test_crd_schema_keywords_the_real_server_refuses(fake_client: Client, prop: dict[str, Any], field: str,
                                                           message: str) -> None:
    err = await refused(fake_client.create(crd(x=prop)))
    assert err.status == 422
    assert [(c["field"], c["message"]) for c in err.causes or []] == [
        (f"spec.validation.openAPIV3Schema.properties[spec].properties[x].{field}", message)]


@pytest.mark.parametrize("prop", [
    {"type": "array", "items": {"type": "string"}, "anyOf": [{"x-kubernetes-list-type": "set"}]},
])
async def test_crd_schema_keywords_not_modelled_are_refused_loudly(fake_client: Client, prop: dict[str, Any]) -> None:
    err = await refused(fake_client.create(crd(x=prop)))
    assert err.status == 501 and "x-kubernetes-" in err.message and "--real-cluster" in err.message


async def test_unknown_and_empty_schema_keys_are_dropped(fake_client: Client) -> None:
    made = await fake_client.create(crd(x={"type": "integer", "minimun": 3, "uniqueItems": False, "description": ""}))
    schema = made["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["x"]
    assert schema == {"type": "integer"}


def named(**names: Any) -> dict[str, Any]:
    body = crd(x={"type": "string"})
    body["spec"]["names"].update(names)
    return body


@pytest.mark.parametrize(("body", "field", "message"), [
    (named(shortNames=["ok", "Bad_Short"]), "spec.names.shortNames[1]", 'Invalid value: "Bad_Short": a DNS-1035'),
    (named(categories=["not ok"]), "spec.names.categories[0]", 'Invalid value: "not ok": a DNS-1035'),
    (named(listKind="Probe"), "spec.names.listKind", 'Invalid value: "Probe": kind and listKind may not be the same'),
])
async def test_crd_names_as_the_real_server_checks_them(fake_client: Client, body: dict[str, Any], field: str,
                                                       message: str) -> None:
    err = await refused(fake_client.create(body))
    assert [(c["field"], c["message"][:len(message)]) for c in err.causes or []] == [(field, message)]


def versioned(**version: Any) -> dict[str, Any]:
    body = crd(x={"type": "string"}, replicas={"type": "integer"})
    body["spec"]["versions"][0].update(version)
    return body


@pytest.mark.parametrize(("body", "causes"), [
    (versioned(deprecationWarning="soon"), [("spec.versions[0].deprecationWarning",
                                             'Invalid value: "soon": can only be set for deprecated versions')]),
    (versioned(subresources={"scale": {"specReplicasPath": "spec.replicas", "statusReplicasPath": ".spec.r"}}),
     [("spec.subresources.scale.specReplicasPath",
       'Invalid value: "spec.replicas": must be a simple json path starting with .'),
      ("spec.subresources.scale.statusReplicasPath", 'Invalid value: ".spec.r": should be a json path under .status')]),
    (versioned(additionalPrinterColumns=[{"name": "", "type": "float", "jsonPath": ".spec.x", "format": "weird"}]),
     [("spec.additionalPrinterColumns[0].name", "Required value"),
      ("spec.additionalPrinterColumns[0].type", 'Invalid value: "float": must be one of boolean,date,integer,number,'
                                                "string"),
      ("spec.additionalPrinterColumns[0].format", 'Invalid value: "weird": must be one of byte,date,date-time,double,'
                                                  "float,int32,int64,password")]),
    (versioned(selectableFields=[{"jsonPath": ".spec.missing"}, {"jsonPath": ".spec.x"}, {"jsonPath": ".spec.x"}]),
     [("spec.selectableFields[0].jsonPath",  # (the same in every version: hoisted to spec)
       'Invalid value: ".spec.missing": is an invalid path: does not refer to a valid field'),
      ("spec.selectableFields[2].jsonPath", 'Duplicate value: ".spec.x"')]),
])
async def test_crd_version_rules(fake_client: Client, body: dict[str, Any], causes: list[tuple[str, str]]) -> None:
    err = await refused(fake_client.create(body))
    assert [(c["field"], c["message"]) for c in err.causes or []] == causes


async def test_a_protected_group_needs_the_approval_annotation(fake_client: Client) -> None:
    body = crd(x={"type": "string"})
    body["metadata"]["name"], body["spec"]["group"] = "probes.x.k8s.io", "x.k8s.io"
    err = await refused(fake_client.create(body))
    assert [c["field"] for c in err.causes or []] == ["metadata.annotations[api-approved.kubernetes.io]"]
    body["metadata"]["annotations"] = {"api-approved.kubernetes.io": "unapproved, testing only"}
    assert (await fake_client.create(body))["metadata"]["name"] == "probes.x.k8s.io"


async def test_selectable_fields_select(fake_api: FakeApiServer, fake_client: Client) -> None:
    body = versioned(selectableFields=[{"jsonPath": ".spec.x"}, {"jsonPath": ".spec.replicas"}])
    await fake_client.create(body)
    await fake_api.settle()
    for name, spec in (("a", {"x": "red", "replicas": 2}), ("b", {"x": "blue"}), ("c", {"replicas": 2})):
        await fake_client.transport.request("POST", PATH, body={"apiVersion": "x.dev/v1", "kind": "Probe",
                                                                "metadata": {"name": name}, "spec": spec})

    async def names(selector: str) -> list[str]:
        got = await fake_client.transport.request("GET", PATH, params={"fieldSelector": selector})
        return [o["metadata"]["name"] for o in got["items"]]

    assert await names("spec.x=red") == ["a"]
    assert await names("spec.replicas=2,spec.x!=red") == ["c"]
    assert await names("spec.x=") == ["c"]
    err = await refused(fake_client.transport.request("GET", PATH, params={"fieldSelector": "spec.other=1"}))
    assert err.status == 400 and "field label not supported: spec.other" in err.message


async def test_a_group_has_its_discovery_document(fake_api: FakeApiServer, fake_client: Client) -> None:
    body = crd(x={"type": "string"})
    v1 = body["spec"]["versions"][0]
    body["spec"]["versions"] = [{**v1, "name": "v1beta1", "storage": False}, v1]
    await fake_client.create(body)
    await fake_api.settle()
    group = await fake_client.transport.request("GET", "/apis/x.dev")
    assert [v["version"] for v in group["versions"]] == ["v1", "v1beta1"]
    assert group["preferredVersion"] == {"groupVersion": "x.dev/v1", "version": "v1"}


async def test_a_crd_whose_names_are_taken_is_neither_accepted_nor_served(fake_api: FakeApiServer,
                                                                           fake_client: Client) -> None:
    await install(fake_api, fake_client, x={"type": "string"})
    rival = crd(x={"type": "string"})
    rival["metadata"]["name"] = "rivals.x.dev"
    rival["spec"]["names"]["plural"] = "rivals"  # (kind Probe, as probes.x.dev has accepted already)
    await fake_client.create(rival)
    await fake_api.settle()
    status = (await fake_client.transport.request(
        "GET", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/rivals.x.dev"))["status"]
    assert [(c["type"], c["status"], c["reason"]) for c in status["conditions"]] == [
        ("NamesAccepted", "False", "ListKindConflict"), ("Established", "False", "NotAccepted")]
    assert status["acceptedNames"] == {"plural": "rivals", "kind": ""}
    with pytest.raises(ApiError) as err:
        await fake_client.transport.request("GET", "/apis/x.dev/v1/namespaces/default/rivals")
    assert err.value.status == 404


async def test_a_crd_update_keeps_its_group_plural_and_stored_versions(fake_api: FakeApiServer,
                                                                       fake_client: Client) -> None:
    await install(fake_api, fake_client, x={"type": "string"})
    path = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/probes.x.dev"
    for patch, field in (({"spec": {"group": "y.dev"}}, "spec.group"), ({"spec": {"scope": "Cluster"}}, "spec.scope"),
                         ({"spec": {"names": {"plural": "probez"}}}, "spec.names.plural")):
        err = await refused(fake_client.transport.request("PATCH", path, body=patch,
                                                          content_type="application/merge-patch+json"))
        assert [c["field"] for c in err.causes or []] == [field]
    live = await fake_client.transport.request("GET", path)
    assert "finalizers" not in live["metadata"] and live["status"]["storedVersions"] == ["v1"]


async def test_an_embedded_resource_keeps_its_type_and_a_coerced_metadata(fake_api: FakeApiServer,
                                                                          fake_client: Client) -> None:
    await install(fake_api, fake_client, t={"type": "object", "x-kubernetes-embedded-resource": True,
                                            "properties": {"data": {"type": "object"}}})
    made = await fake_client.transport.request("POST", PATH, body={
        "apiVersion": "x.dev/v1", "kind": "Probe", "metadata": {"name": "p"}, "spec": {"t": {
            "apiVersion": "v1", "kind": "ConfigMap", "junk": 1, "metadata": {"name": "n", "bogus": 1, "labels": {}}}}})
    assert made["spec"]["t"] == {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "n"}}
    assert await causes(fake_client, t={"metadata": {"name": ".."}}) == [
        ("FieldValueInvalid", "spec.t.metadata.name", "Invalid value: \"..\": may not be '..'"),
        ("FieldValueRequired", "spec.t.apiVersion", "Required value"),
        ("FieldValueRequired", "spec.t.kind", "Required value")]
