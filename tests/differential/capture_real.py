"""Captures, from the real control plane, the data the fake derives rules from::

    python tests/differential/capture_real.py <kubeconfig>

- kubeloop/testing/apiserver/real_resources.json: every resource the real server serves (its discovery
  documents), so that the fake refuses by name (501, "run with --real-cluster") a built-in kind it does
  not model instead of answering 404 as if the kind did not exist. Custom resources are left out.
- kubeloop/testing/apiserver/builtin_schemas.json: the OpenAPI v3 schemas (/openapi/v3) of the built-in
  kinds the fake serves, reduced to what decoding needs (types, formats, properties, items, maps, enums),
  so the fake refuses a value of the wrong JSON type (400), prunes unknown fields and, with
  ``fieldValidation=Strict``, names them, as the real server's decoder does.
"""

from __future__ import annotations

import asyncio
import json
import re
import sys
from pathlib import Path
from typing import Any

from kubeloop.client import Client

HERE = Path(__file__).resolve().parents[2] / "kubeloop" / "testing" / "apiserver"
OUT = HERE / "real_resources.json"
SCHEMAS = HERE / "builtin_schemas.json"
_KEEP = ("type", "format", "enum", "required", "x-kubernetes-int-or-string", "x-kubernetes-preserve-unknown-fields",
         "x-kubernetes-embedded-resource")
QUANTITY = "io.k8s.apimachinery.pkg.api.resource.Quantity"


def _compact(schema: dict[str, Any]) -> dict[str, Any]:
    """What decoding needs of one schema; ``$ref`` stays a reference (``allOf: [{$ref}]`` becomes one)."""
    if "allOf" in schema and len(schema["allOf"]) == 1:
        schema = {**schema, **schema["allOf"][0]}
    if "$ref" in schema:
        return {"$ref": schema["$ref"].rsplit("/", 1)[-1]}
    out: dict[str, Any] = {k: schema[k] for k in _KEEP if k in schema}
    if "properties" in schema:
        out["properties"] = {k: _compact(v) for k, v in schema["properties"].items()}
    if isinstance(schema.get("items"), dict):
        out["items"] = _compact(schema["items"])
    if isinstance(schema.get("additionalProperties"), dict):
        out["additionalProperties"] = _compact(schema["additionalProperties"])
    return out


def _reachable(name: str, defs: dict[str, Any], seen: set[str]) -> None:
    if name in seen or name not in defs:
        return
    seen.add(name)
    text = json.dumps(defs[name])
    for ref in set(re.findall(r'"\$ref": "([^"]+)"', text)):
        _reachable(ref, defs, seen)


async def schemas(client: Client) -> dict[str, Any]:
    """The compact schemas of the kinds the fake serves, and the definitions they reach."""
    from kubeloop.testing.apiserver.kinds import BUILTINS

    wanted = {(k.group, v, k.kind) for k in BUILTINS for v in k.versions if k.group != "apiextensions.k8s.io"}
    defs: dict[str, Any] = {}
    kinds: dict[str, str] = {}
    for group, version in sorted({(g, v) for g, v, _ in wanted}):
        path = f"/openapi/v3/api/{version}" if not group else f"/openapi/v3/apis/{group}/{version}"
        doc = await client.transport.request("GET", path)
        for name, schema in doc["components"]["schemas"].items():
            defs[name] = {"type": "quantity"} if name == QUANTITY else _compact(schema)
            for gvk in schema.get("x-kubernetes-group-version-kind") or []:
                if (gvk["group"], gvk["version"], gvk["kind"]) in wanted:
                    kinds[f"{group}/{version}/{gvk['kind']}" if group else f"{version}/{gvk['kind']}"] = name
    seen: set[str] = set()
    for name in kinds.values():
        _reachable(name, defs, seen)
    return {"kinds": kinds, "definitions": {k: defs[k] for k in sorted(seen)}}


async def main(kubeconfig: str) -> None:
    async with await Client.from_kubeconfig(kubeconfig) as client:
        crds = await client.transport.request("GET", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions")
        custom = {c["spec"]["group"] for c in crds["items"]}
        version = await client.transport.request("GET", "/version")
        served: dict[str, list[str]] = {}
        paths = ["/api/v1"]
        for group in (await client.transport.request("GET", "/apis"))["groups"]:
            if group["name"] not in custom:
                paths += [f"/apis/{v['groupVersion']}" for v in group["versions"]]
        for path in paths:
            doc = await client.transport.request("GET", path)
            served[doc["groupVersion"]] = sorted(r["name"] for r in doc["resources"])
        found = await schemas(client)
    OUT.write_text(json.dumps({"source": f"discovery of kube-apiserver {version['gitVersion']}",
                               "resources": served}, indent=1, sort_keys=True) + "\n")
    print(f"wrote {OUT} ({sum(len(v) for v in served.values())} resources)")
    SCHEMAS.write_text(json.dumps({"source": f"/openapi/v3 of kube-apiserver {version['gitVersion']}", **found},
                                  separators=(",", ":"), sort_keys=True) + "\n")
    print(f"wrote {SCHEMAS} ({len(found['kinds'])} kinds, {len(found['definitions'])} definitions)")


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
