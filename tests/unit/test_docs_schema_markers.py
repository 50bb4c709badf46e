"""The schema markers example of docs/reference/resources.md, included from here so the page shows code
that runs: each marker lands in the generated CRD where the API server reads it."""

from __future__ import annotations

# --8<-- [start:markers]
from typing import Annotated, Any

from pydantic import BaseModel

from kubeloop.resources import (
    CustomResource,
    crd_for,
    embedded_resource,
    list_type,
    opaque,
    preserve_unknown_fields,
    validation,
)


class Port(BaseModel):
    name: str
    port: int

class BackupSpec(BaseModel):
    # A CEL rule on one field, checked by the API server (x-kubernetes-validations).
    schedule: Annotated[str, validation("self.split(' ').size() == 5", "five cron fields")]
    # A whole object (apiVersion, kind and metadata validated like a top-level object).
    template: Annotated[dict[str, Any], embedded_resource()]
    # Free-form: any JSON, stored as sent, never validated or pruned below this field.
    extra: Annotated[Any, opaque()] = None
    # An object whose declared fields are checked and whose undeclared ones are kept, not pruned.
    labels: Annotated[dict[str, str], preserve_unknown_fields()] = {}
    # How server-side apply merges the list: a map keyed by name.
    ports: Annotated[list[Port], list_type("map", "name")] = []

class Backup(CustomResource, group="demo.kubeloop.dev", version="v1", kind="Backup"):
    __validations__ = [validation("self.metadata.name.size() <= 40", "name at most 40 characters")]
    spec: BackupSpec
# --8<-- [end:markers]


def test_each_marker_reaches_the_generated_crd() -> None:
    schema = crd_for(Backup)["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    spec = schema["properties"]["spec"]["properties"]
    assert spec["schedule"]["x-kubernetes-validations"][0]["message"] == "five cron fields"
    assert spec["template"]["x-kubernetes-embedded-resource"] is True
    assert spec["extra"] == {"x-kubernetes-preserve-unknown-fields": True}
    assert spec["ports"]["x-kubernetes-list-map-keys"] == ["name"]
    assert schema["x-kubernetes-validations"][0]["rule"] == "self.metadata.name.size() <= 40"
