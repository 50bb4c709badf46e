"""Blind differential sequences, suite 7: CustomResourceDefinitions and custom resources as operator authors
(kubebuilder, Kopf, kube-rs users) write them, and the API machinery every client relies on.

What the author read: only tests/differential/harness.py, blind.py, compare.py, conftest.py, play_real.py,
tests/integration/conftest.py (for its Echo CRD) and kubeloop/client/; never the fake API server, its tests,
its documentation, the other sequence modules or the project's history. The oracle was kube-apiserver 1.35.4
and its Go sources (apiextensions-apiserver's validation, structural schema, pruning, defaulting and CEL; the
API machinery e2e tests): every step here was played against a real 1.35.4 control plane only, with
``tests.differential.play_real``, and its normalised outcome was identical over two runs.

What the suite models: CRD creation with valid and invalid definitions (names, group and plural rules,
versions and storage flags, structural schema rules, list types and map keys, defaults, CEL rules and their
messages, scale paths, printer columns, selectable fields), a CRD's conditions and stored versions, serving
of custom resources once the CRD is Established (every sequence waits for the condition and for the list to
be served before it uses one), pruning and defaulting, validation causes and their field paths, types,
formats, enums, bounds, int-or-string, nullable, embedded resources, list types and map types on writes,
CEL rules (transition rules, messageExpression, reason and fieldPath), validation ratcheting after a schema is
tightened, the status and scale subresources, generation, multiple versions
with conversion None, fieldValidation Strict/Warn/Ignore, server-side apply (managers, conflicts, force,
ownership transfer, list-map merge), finalizers, ownerReferences and garbage collection between custom
resources and ConfigMaps, label and field selectors, paging, watches from marks, resourceVersion semantics,
dryRun, preconditions and deletecollection. Each CRD's group embeds the sequence's namespace (``{ns}``, which
the harness substitutes and normalises to ``NS``), so runs never share a CRD, and each sequence deletes the
CRDs it made and waits for them to go.
"""

from __future__ import annotations

from typing import Any

from tests.differential.harness import APPLY, JSON, MERGE, STRATEGIC, Mark, Req, Step, WaitFor, WaitGone, Watch

CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
G = "{ns}.blind7.dev"
NSP = "/api/v1/namespaces/{ns}"
CM = NSP + "/configmaps"

# What a CRD's create answer is compared on (the rest is the same defaulting every sequence would repeat).
CRD_PICK = ("metadata.name", "metadata.generation", "spec.group", "spec.names", "spec.scope",
            "spec.conversion", "status.storedVersions")


def obj(props: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "object", **extra}
    if props is not None:
        out["properties"] = props
    return out


def root(spec: dict[str, Any] | None = None, status: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    props: dict[str, Any] = {}
    if spec is not None:
        props["spec"] = spec
    if status is not None:
        props["status"] = status
    return obj(props, **extra)


def ver(name: str = "v1", schema: dict[str, Any] | None = None, served: bool = True, storage: bool = True,
        **extra: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"name": name, "served": served, "storage": storage}
    out["schema"] = {"openAPIV3Schema": schema if schema is not None else obj(
        {"spec": obj(x_preserve=True)})}
    out["schema"] = _fix(out["schema"])
    out.update(extra)
    return out


def _fix(value: Any) -> Any:
    """``x_preserve=True`` etc. as Python keywords: the schema extensions' real spelling."""
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            if k.startswith("x_"):
                k = "x-kubernetes-" + {"preserve": "preserve-unknown-fields", "ios": "int-or-string",
                                       "embedded": "embedded-resource", "lt": "list-type", "lmk": "list-map-keys",
                                       "mt": "map-type", "v": "validations"}[k[2:]]
            out[k] = _fix(v)
        return out
    if isinstance(value, list):
        return [_fix(v) for v in value]
    return value


def crd(plural: str, kind: str, versions: list[dict[str, Any]], scope: str = "Namespaced", group: str = G,
        **names: Any) -> dict[str, Any]:
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": f"{plural}.{group}"},
            "spec": {"group": group, "scope": scope, "versions": versions,
                     "names": {"plural": plural, "singular": kind.lower(), "kind": kind, "listKind": kind + "List",
                               **names}}}


def crs(plural: str, name: str = "", version: str = "v1", cluster: bool = False) -> str:
    base = f"/apis/{G}/{version}" + ("" if cluster else "/namespaces/{ns}") + f"/{plural}"
    return f"{base}/{name}" if name else base


def up(plural: str, kind: str, versions: list[dict[str, Any]], scope: str = "Namespaced", pick: bool = True,
       **names: Any) -> list[Step]:
    """Creates a CRD and waits until it is Established and its custom resources are served."""
    served = next(v["name"] for v in versions if v["served"])
    return [
        Req("POST", CRDS, crd(plural, kind, versions, scope, **names), pick=CRD_PICK if pick else ()),
        WaitFor(f"{CRDS}/{plural}.{G}", "status.conditions.1.status", "True"),
        WaitFor(crs(plural, version=served, cluster=scope == "Cluster"), "kind", kind + "List"),
    ]


def down(plural: str) -> list[Step]:
    return [Req("DELETE", f"{CRDS}/{plural}.{G}", pick=("metadata.name", "metadata.finalizers")),
            WaitGone(f"{CRDS}/{plural}.{G}", timeout=90)]


def cr(kind: str, name: str, spec: Any = None, version: str = "v1", cluster: bool = False, **meta: Any) -> dict:
    out: dict[str, Any] = {"apiVersion": f"{G}/{version}", "kind": kind,
                           "metadata": {"name": name, **({} if cluster else {"namespace": "{ns}"}), **meta}}
    if spec is not None:
        out["spec"] = spec
    return out


def bad_crd(plural: str, kind: str, versions: list[dict[str, Any]], brief: bool = False, **kw: Any) -> Req:
    return Req("POST", CRDS, crd(plural, kind, versions, **kw), brief=brief)


def bad_schema(plural: str, schema: dict[str, Any], brief: bool = False, **vkw: Any) -> Req:
    return Req("POST", CRDS, crd(plural, "Bad", [ver("v1", _fix(schema), **vkw)]), brief=brief)


SEQUENCES: dict[str, list[Step]] = {}

# --- invalid definitions: names, group, scope -------------------------------------------------------

_PLAIN = [ver()]

SEQUENCES["crd_names_rules"] = [
    Req("POST", CRDS, {**crd("gadgets", "Gadget", _PLAIN), "metadata": {"name": "wrong.{ns}.blind7.dev"}}),
    Req("POST", CRDS, crd("gadgets", "Gadget", _PLAIN, group="{ns}")),
    Req("POST", CRDS, crd("Gadgets", "Gadget", _PLAIN)),
    Req("POST", CRDS, crd("gad.gets", "Gadget", _PLAIN)),
    Req("POST", CRDS, crd("gadgets", "Gad_get", _PLAIN)),
    Req("POST", CRDS, crd("gadgets", "Gadget", _PLAIN, listKind="Gadget")),
    Req("POST", CRDS, crd("gadgets", "Gadget", _PLAIN, singular="Gadget")),
    Req("POST", CRDS, crd("gadgets", "Gadget", _PLAIN, shortNames=["gd", "Bad_Short"])),
    Req("POST", CRDS, crd("gadgets", "Gadget", _PLAIN, categories=["all", "not ok"])),
    Req("POST", CRDS, crd("gadgets", "Gadget", _PLAIN, scope="Global")),
    Req("POST", CRDS, crd("gadgets", "Gadget", _PLAIN, group="{ns}.k8s.io")),
    Req("GET", f"{CRDS}/gadgets.{G}"),
    # singular and listKind default from the kind
    Req("POST", CRDS, {**crd("gizmos", "Gizmo", _PLAIN), "spec": {
        "group": G, "scope": "Namespaced", "versions": _PLAIN, "names": {"plural": "gizmos", "kind": "Gizmo"}}},
        pick=("spec.names", "status.acceptedNames")),
    *down("gizmos"),
]

SEQUENCES["crd_versions_rules"] = [
    bad_crd("gadgets", "Gadget", []),
    bad_crd("gadgets", "Gadget", [ver("v1"), ver("v2")], brief=True),
    bad_crd("gadgets", "Gadget", [ver("v1", storage=False), ver("v2", storage=False)], brief=True),
    bad_crd("gadgets", "Gadget", [ver("v1"), ver("v1", storage=False)], brief=True),
    bad_crd("gadgets", "Gadget", [ver("V1")]),
    bad_crd("gadgets", "Gadget", [ver("v1.0")]),
    bad_crd("gadgets", "Gadget", [{"name": "v1", "served": True, "storage": True}]),
    bad_crd("gadgets", "Gadget", [ver("v1", deprecationWarning="x" * 300)]),
    bad_crd("gadgets", "Gadget", [ver("v1", subresources={"scale": {"specReplicasPath": "spec.replicas",
                                                                     "statusReplicasPath": ".status.replicas"}})]),
    bad_crd("gadgets", "Gadget", [ver("v1", subresources={"scale": {"specReplicasPath": ".status.replicas",
                                                                     "statusReplicasPath": ".spec.replicas"}})]),
    bad_crd("gadgets", "Gadget", [ver("v1", additionalPrinterColumns=[
        {"name": "Size", "type": "float", "jsonPath": ".spec.size"}])]),
    bad_crd("gadgets", "Gadget", [ver("v1", additionalPrinterColumns=[
        {"name": "Size", "type": "integer", "jsonPath": ".spec.size", "format": "weird"}])]),
    # a version that is not served may still be the storage version; an unserved one is not listed
    *up("gadgets", "Gadget", [ver("v1", served=False, storage=False), ver("v2")]),
    Req("GET", crs("gadgets", version="v1")),
    Req("GET", f"/apis/{G}", pick=("versions", "preferredVersion")),
    *down("gadgets"),
]

# --- invalid definitions: structural schemas -----------------------------------------------------------

SEQUENCES["crd_structural_rules"] = [
    bad_schema("bads", {"properties": {"spec": {"type": "object"}}}, brief=True),
    bad_schema("bads", obj({"spec": {"properties": {"a": {"type": "string"}}}}), brief=True),
    bad_schema("bads", obj({"spec": obj({"a": {"type": "string"}},
                                        additionalProperties={"type": "string"})}), brief=True),
    bad_schema("bads", obj({"spec": obj({"list": {"type": "array"}})}), brief=True),
    bad_schema("bads", obj({"spec": obj({"a": {"$ref": "#/definitions/x"}})}), brief=True),
    bad_schema("bads", obj({"spec": obj({"a": {"type": "string", "uniqueItems": True}})}), brief=True),
    bad_schema("bads", obj({"spec": obj({"a": {"type": "null"}})}), brief=True),
    bad_schema("bads", obj({"spec": obj({"a": {"type": "string", "x_preserve": False}})}), brief=True),
    bad_schema("bads", obj({"metadata": obj({"labels": obj()})}), brief=True),
    bad_schema("bads", obj({"spec": obj()}, minProperties=1), brief=True, subresources={"status": {}}),
    bad_schema("bads", obj({"spec": obj({"a": {"type": "array", "items": [{"type": "string"}]}})}), brief=True),
    bad_schema("bads", {"type": "object", "nullable": True}, brief=True),
    bad_schema("bads", obj({"spec": obj({"a": {"type": "string", "patternProperties": {"x": {}}}})}), brief=True),
    bad_schema("bads", obj({"spec": obj({"a": {"type": "string", "pattern": "(["}})}), brief=True),
    bad_schema("bads", obj({"spec": obj({"a": {"x_ios": True, "anyOf": [{"type": "integer", "minimum": 0},
                                                                   {"type": "string"}]}})}), brief=True),
    bad_schema("bads", obj({"spec": obj({"a": {"type": "string", "x_embedded": True}})}), brief=True),
    bad_schema("bads", obj({"spec": obj({"a": {"type": "object", "x_embedded": True}})}), brief=True),
]

SEQUENCES["crd_list_type_rules"] = [
    bad_schema("bads", obj({"spec": obj({"a": {"type": "string", "x_lt": "set"}})}), brief=True),
    bad_schema("bads", obj({"spec": obj({"a": {"type": "array", "x_lt": "map",
                                               "items": obj({"k": {"type": "string"}})}})}), brief=True),
    bad_schema("bads", obj({"spec": obj({"a": {"type": "array", "x_lt": "map", "x_lmk": ["k"],
                                               "items": obj({"k": {"type": "string"}})}})}), brief=True),
    bad_schema("bads", obj({"spec": obj({"a": {"type": "array", "x_lt": "map", "x_lmk": ["k"],
                                               "items": {"type": "string"}}})}), brief=True),
    bad_schema("bads", obj({"spec": obj({"a": {"type": "array", "x_lt": "map", "x_lmk": ["z"],
                                               "items": obj({"k": {"type": "string"}}, required=["k"])}})}),
               brief=True),
    bad_schema("bads", obj({"spec": obj({"a": {"type": "array", "x_lt": "set",
                                               "items": obj({"k": {"type": "string"}})}})}), brief=True),
    bad_schema("bads", obj({"spec": obj({"a": {"type": "array", "x_lt": "bag",
                                               "items": {"type": "string"}}})}), brief=True),
    bad_schema("bads", obj({"spec": obj({"a": {"type": "array", "x_lmk": ["k"],
                                               "items": obj({"k": {"type": "string"}}, required=["k"])}})}),
               brief=True),
    bad_schema("bads", obj({"spec": obj({"m": {"type": "string", "x_mt": "atomic"}})}), brief=True),
    bad_schema("bads", obj({"spec": obj({"m": {"type": "object", "x_mt": "granular-ish"}})}), brief=True),
    bad_schema("bads", obj({"spec": obj({"a": {"type": "array", "x_lt": "map", "x_lmk": ["k"],
                                               "items": obj({"k": {"type": "string", "nullable": True}},
                                                            required=["k"])}})}), brief=True),
]

SEQUENCES["crd_default_rules"] = [
    bad_schema("bads", obj({"spec": obj({"a": {"type": "integer", "default": "three"}})}), brief=True),
    bad_schema("bads", obj({"spec": obj({"a": {"type": "string", "pattern": "^x+$", "default": "y"}})}),
               brief=True),
    bad_schema("bads", obj({"spec": obj({"a": {"type": "integer", "maximum": 5, "default": 9}})}), brief=True),
    bad_schema("bads", obj({"metadata": obj({"name": {"type": "string", "default": "n"}})}), brief=True),
    bad_schema("bads", obj({"spec": obj({"a": {"type": "object", "default": {"unknown": 1},
                                               "properties": {"b": {"type": "string"}}}})}), brief=True),
    bad_schema("bads", obj({"spec": obj({"a": {"type": "string", "enum": ["p", "q"], "default": "r"}})}),
               brief=True),
    # a default that is valid is accepted
    Req("POST", CRDS, crd("goods", "Good", [ver("v1", obj({"spec": obj({
        "a": {"type": "integer", "default": 3, "minimum": 1}})}))]), pick=("metadata.name", "spec.versions")),
    *down("goods"),
]

SEQUENCES["crd_cel_rules_invalid"] = [
    bad_schema("bads", obj({"spec": obj({"a": {"type": "integer"}}, x_v=[{"rule": "self.a >"}])}), brief=True),
    bad_schema("bads", obj({"spec": obj({"a": {"type": "integer"}}, x_v=[{"rule": "self.a"}])}), brief=True),
    bad_schema("bads", obj({"spec": obj({"a": {"type": "integer"}}, x_v=[{"rule": "self.b == 1"}])}),
               brief=True),
    bad_schema("bads", obj({"spec": obj({"a": {"type": "integer"}}, x_v=[
        {"rule": "self.a > 0", "messageExpression": "1 + 1"}])}), brief=True),
    bad_schema("bads", obj({"spec": obj({"a": {"type": "integer"}}, x_v=[
        {"rule": "self.a > 0", "reason": "FieldValueSomething"}])}), brief=True),
    bad_schema("bads", obj({"spec": obj({"a": {"type": "integer"}}, x_v=[
        {"rule": "self.a > 0", "fieldPath": ".nope"}])}), brief=True),
    bad_schema("bads", obj({"spec": obj({"a": {"type": "integer"}}, x_v=[
        {"rule": "self.a > 0", "message": "two\nlines"}])}), brief=True),
    bad_schema("bads", obj({"spec": obj({"l": {"type": "array", "items": obj(
        {"v": {"type": "string"}}, x_v=[{"rule": "self == oldSelf"}])}})}), brief=True),
    bad_schema("bads", obj({"spec": obj({"a": {"type": "integer"}}, x_v=[
        {"rule": "self.a > 0", "optionalOldSelf": True}])}), brief=True),
    bad_schema("bads", obj({"spec": obj({"l": {"type": "array", "items": {"type": "string"}}}, x_v=[
        {"rule": "self.l.all(x, self.l.all(y, self.l.all(z, x + y + z != '')))"}])}), brief=True),
]

# --- serving custom resources ----------------------------------------------------------------------------

_WIDGET = root(obj({"size": {"type": "integer"}, "color": {"type": "string"},
                    "tags": {"type": "array", "items": {"type": "string"}}}),
               obj({"phase": {"type": "string"}}))
W = "widgets"

SEQUENCES["cr_crud"] = [
    *up(W, "Widget", [ver("v1", _WIDGET)], pick=False),
    Req("POST", crs(W), cr("Widget", "w1", {"size": 1, "color": "red"}), save={"rv1": "metadata.resourceVersion"}),
    Req("GET", crs(W, "w1")),
    Req("GET", crs(W)),
    Req("POST", crs(W), cr("Widget", "w1", {"size": 2})),
    Req("PUT", crs(W, "w1"), cr("Widget", "w1", {"size": 3})),
    Req("PUT", crs(W, "w1"), cr("Widget", "w1", {"size": 3}, resourceVersion="{m:rv1}"),
        save={"rv2": "metadata.resourceVersion"}),
    Req("PUT", crs(W, "w1"), cr("Widget", "w1", {"size": 4}, resourceVersion="{m:rv1}")),
    Req("PUT", crs(W, "w1"), cr("Widget", "w2", {"size": 4}, resourceVersion="{m:rv2}")),
    Req("PATCH", crs(W, "w1"), {"spec": {"color": "blue", "tags": ["a"]}}, MERGE),
    Req("PATCH", crs(W, "w1"), [{"op": "add", "path": "/spec/tags/-", "value": "b"}], JSON),
    Req("PATCH", crs(W, "w1"), [{"op": "test", "path": "/spec/size", "value": 99}], JSON),
    Req("PATCH", crs(W, "w1"), [{"op": "remove", "path": "/spec/missing"}], JSON),
    Req("PATCH", crs(W, "w1"), {"spec": {"size": 5}}, STRATEGIC),
    Req("PATCH", crs(W, "nope"), {"spec": {"size": 5}}, MERGE),
    Req("GET", crs(W, "w1")),
    Req("DELETE", crs(W, "w1")),
    Req("GET", crs(W, "w1")),
    Req("DELETE", crs(W, "w1")),
    *down(W),
]

_PRUNE = root(obj({"known": {"type": "string"}, "free": obj(x_preserve=True),
                   "nested": obj({"a": {"type": "string"}}),
                   "template": obj(x_embedded=True, x_preserve=True)}),
              obj({"phase": {"type": "string"}}))

SEQUENCES["cr_pruning"] = [
    *up("prunes", "Prune", [ver("v1", _PRUNE)]),
    Req("POST", crs("prunes"), {**cr("Prune", "p1", {"known": "k", "unknown": 1, "free": {"any": {"deep": [1, 2]}},
                                                     "nested": {"a": "x", "b": "y"}}), "extra": True}),
    Req("POST", crs("prunes"), {**cr("Prune", "p2", {"known": "k", "unknown": 1}), "extra": True},
        params={"fieldValidation": "Strict"}),
    Req("POST", crs("prunes"), cr("Prune", "p3", {"nested": {"a": "x", "b": "y"}}),
        params={"fieldValidation": "Strict"}),
    Req("POST", crs("prunes"), cr("Prune", "p4", {"known": "k", "unknown": 1}), params={"fieldValidation": "Warn"}),
    Req("POST", crs("prunes"), cr("Prune", "p5", {"known": "k", "unknown": 1}),
        params={"fieldValidation": "Ignore"}),
    Req("POST", crs("prunes"), cr("Prune", "p6", {"known": "k"}), params={"fieldValidation": "Loose"}),
    Req("POST", crs("prunes"), cr("Prune", "p7", {"template": {"apiVersion": "v1", "kind": "ConfigMap",
                                                               "metadata": {"name": "inner", "bogus": 1},
                                                               "data": {"a": "b"}}})),
    Req("POST", crs("prunes"), cr("Prune", "p8", {"template": {"metadata": {"name": "inner"}}})),
    Req("POST", crs("prunes"), cr("Prune", "p9", {"template": {"apiVersion": "v1", "kind": "ConfigMap",
                                                               "metadata": {"name": "Not_Valid"}}})),
    Req("PATCH", crs("prunes", "p1"), {"spec": {"unknown": 2, "free": {"more": True}}}, MERGE),
    Req("PATCH", crs("prunes", "p1"), {"spec": {"unknown": 2}}, MERGE, params={"fieldValidation": "Strict"},
        brief=True),
    Req("GET", crs("prunes"), pick=("items.*.metadata.name", "items.*.spec")),
    *down("prunes"),
]

_DEFAULTS = root(obj({
    "replicas": {"type": "integer", "default": 1},
    "mode": {"type": "string", "default": "auto"},
    "opts": obj({"depth": {"type": "integer", "default": 2}}),
    "opts2": obj({"x": {"type": "integer", "default": 5}}, default={}),
    "ports": {"type": "array", "items": obj({"name": {"type": "string"},
                                             "weight": {"type": "integer", "default": 10}})},
    "labels": {"type": "object", "additionalProperties": {"type": "string"}, "default": {"team": "core"}},
}), obj({"phase": {"type": "string", "default": "Pending"}}))

SEQUENCES["cr_defaulting"] = [
    *up("defs", "Def", [ver("v1", _DEFAULTS)]),
    Req("POST", crs("defs"), cr("Def", "d1", {}), pick=("spec", "status")),
    Req("POST", crs("defs"), cr("Def", "d2"), pick=("spec", "status")),
    Req("POST", crs("defs"), cr("Def", "d3", {"opts": {}, "replicas": 4}), pick=("spec",)),
    Req("POST", crs("defs"), cr("Def", "d4", {"ports": [{"name": "a"}, {"name": "b", "weight": 3}]}),
        pick=("spec.ports",)),
    Req("POST", crs("defs"), cr("Def", "d5", {"replicas": None, "mode": None}), pick=("spec",)),
    Req("POST", crs("defs"), cr("Def", "d6", {"labels": {}}), pick=("spec.labels",)),
    Req("PATCH", crs("defs", "d1"), {"spec": {"mode": None, "replicas": 7}}, MERGE, pick=("spec",)),
    Req("POST", crs("defs"), {**cr("Def", "d7", {}), "status": {}}, pick=("status",)),
    Req("POST", crs("defs"), cr("Def", "d8", {"replicas": "many"}), brief=True),
    Req("GET", crs("defs"), pick=("items.*.metadata.name", "items.*.spec.mode", "items.*.spec.opts2")),
    *down("defs"),
]

_TYPES = root(obj({
    "count": {"type": "integer"}, "ratio": {"type": "number"}, "name": {"type": "string"},
    "flag": {"type": "boolean"}, "list": {"type": "array", "items": {"type": "integer"}},
    "sub": obj({"a": {"type": "string"}}), "when": {"type": "string", "format": "date-time"},
    "id": {"type": "string", "format": "uuid"}, "small": {"type": "integer", "format": "int32"},
    "level": {"type": "string", "enum": ["low", "high"]},
    "maybe": {"type": "string", "nullable": True}, "never": {"type": "string"},
    "map": {"type": "object", "additionalProperties": {"type": "integer"}},
}, required=["name"]))

SEQUENCES["cr_validation_types"] = [
    *up("types", "Typed", [ver("v1", _TYPES)]),
    Req("POST", crs("types"), cr("Typed", "t1", {"name": "n", "count": 3, "ratio": 2, "flag": True, "list": [1, 2],
                                                 "sub": {"a": "x"}, "when": "2024-01-02T03:04:05Z",
                                                 "id": "123e4567-e89b-12d3-a456-426614174000", "small": 7,
                                                 "level": "low", "maybe": None, "map": {"a": 1}}),
        pick=("spec",)),
    Req("POST", crs("types"), cr("Typed", "t2", {"name": "n", "count": "five"})),
    Req("POST", crs("types"), cr("Typed", "t3", {"name": "n", "count": 1.5})),
    Req("POST", crs("types"), cr("Typed", "t4", {"name": "n", "ratio": "x", "flag": "yes"})),
    Req("POST", crs("types"), cr("Typed", "t5", {"name": "n", "list": [1, "a"], "sub": "str"})),
    Req("POST", crs("types"), cr("Typed", "t6", {"count": 1})),
    Req("POST", crs("types"), cr("Typed", "t7")),
    Req("POST", crs("types"), cr("Typed", "t8", {"name": "n", "when": "yesterday"})),
    Req("POST", crs("types"), cr("Typed", "t9", {"name": "n", "id": "not-a-uuid"})),
    Req("POST", crs("types"), cr("Typed", "t10", {"name": "n", "small": 4294967296})),
    Req("POST", crs("types"), cr("Typed", "t11", {"name": "n", "level": "medium"})),
    Req("POST", crs("types"), cr("Typed", "t12", {"name": "n", "never": None}), pick=("spec",)),
    Req("POST", crs("types"), cr("Typed", "t13", {"name": 5, "map": {"a": "b"}})),
    Req("POST", crs("types"), cr("Typed", "t14", "not-an-object")),
    Req("PATCH", crs("types", "t1"), {"spec": {"count": "x", "level": "none"}}, MERGE),
    Req("PATCH", crs("types", "t1"), {"spec": {"name": None}}, MERGE),
    Req("GET", crs("types"), pick=("items.*.metadata.name",)),
    *down("types"),
]

_BOUNDS = root(obj({
    "n": {"type": "integer", "minimum": 1, "maximum": 10},
    "x": {"type": "integer", "minimum": 0, "exclusiveMinimum": True, "maximum": 5, "exclusiveMaximum": True},
    "m": {"type": "integer", "multipleOf": 3},
    "f": {"type": "number", "multipleOf": 0.5},
    "s": {"type": "string", "minLength": 2, "maxLength": 4},
    "p": {"type": "string", "pattern": "^[a-z]+-[0-9]+$"},
    "l": {"type": "array", "minItems": 1, "maxItems": 2, "items": {"type": "string"}},
    "o": {"type": "object", "minProperties": 1, "maxProperties": 2, "additionalProperties": {"type": "string"}},
}))

SEQUENCES["cr_validation_bounds"] = [
    *up("bounds", "Bound", [ver("v1", _BOUNDS)]),
    Req("POST", crs("bounds"), cr("Bound", "b1", {"n": 10, "x": 4, "m": 9, "f": 1.5, "s": "abcd", "p": "ab-12",
                                                  "l": ["a"], "o": {"a": "b"}}), pick=("spec",)),
    Req("POST", crs("bounds"), cr("Bound", "b2", {"n": 0})),
    Req("POST", crs("bounds"), cr("Bound", "b3", {"n": 11})),
    Req("POST", crs("bounds"), cr("Bound", "b4", {"x": 0})),
    Req("POST", crs("bounds"), cr("Bound", "b5", {"x": 5})),
    Req("POST", crs("bounds"), cr("Bound", "b6", {"m": 10, "f": 1.25})),
    Req("POST", crs("bounds"), cr("Bound", "b7", {"s": "a"})),
    Req("POST", crs("bounds"), cr("Bound", "b8", {"s": "abcde"})),
    Req("POST", crs("bounds"), cr("Bound", "b9", {"s": "ééé"}), pick=("spec",)),
    Req("POST", crs("bounds"), cr("Bound", "b10", {"p": "AB-12"})),
    Req("POST", crs("bounds"), cr("Bound", "b11", {"l": []})),
    Req("POST", crs("bounds"), cr("Bound", "b12", {"l": ["a", "b", "c"]})),
    Req("POST", crs("bounds"), cr("Bound", "b13", {"o": {}})),
    Req("POST", crs("bounds"), cr("Bound", "b14", {"o": {"a": "1", "b": "2", "c": "3"}})),
    Req("POST", crs("bounds"), cr("Bound", "b15", {"n": 0, "s": "a", "p": "x", "l": []})),
    Req("PATCH", crs("bounds", "b1"), {"spec": {"n": 20}}, MERGE),
    *down("bounds"),
]

_IOS = root(obj({
    "port": {"x_ios": True, "anyOf": [{"type": "integer"}, {"type": "string"}]},
    "pct": {"x_ios": True, "anyOf": [{"type": "integer"}, {"type": "string"}], "maxLength": 3},
    "bare": {"x_ios": True},
}))

SEQUENCES["cr_int_or_string"] = [
    *up("ports", "Port", [ver("v1", _IOS)]),
    Req("POST", crs("ports"), cr("Port", "p1", {"port": 80, "pct": 10, "bare": "x"}), pick=("spec",)),
    Req("POST", crs("ports"), cr("Port", "p2", {"port": "http", "pct": "25%", "bare": 3}), pick=("spec",)),
    Req("POST", crs("ports"), cr("Port", "p3", {"port": True})),
    Req("POST", crs("ports"), cr("Port", "p4", {"port": {"a": 1}})),
    Req("POST", crs("ports"), cr("Port", "p5", {"port": 1.5})),
    Req("POST", crs("ports"), cr("Port", "p6", {"pct": "lots"})),
    Req("POST", crs("ports"), cr("Port", "p7", {"pct": 123456}), pick=("spec",)),
    Req("POST", crs("ports"), cr("Port", "p8", {"bare": [1]})),
    Req("PATCH", crs("ports", "p1"), {"spec": {"port": "https"}}, MERGE, pick=("spec",)),
    *down("ports"),
]

_CEL = root(obj({
    "min": {"type": "integer"}, "max": {"type": "integer"},
    "name": {"type": "string", "maxLength": 32,
             "x_v": [{"rule": "self.startsWith('app-')", "message": "must start with app-"}]},
    "items": {"type": "array", "items": {"type": "string", "maxLength": 32}, "maxItems": 5,
              "x_v": [{"rule": "self.all(i, i.size() < 5)", "messageExpression": "'item too long: ' + self[0]"}]},
    "mode": {"type": "string", "maxLength": 8},
    "host": {"type": "string", "maxLength": 32},
}, x_v=[
    {"rule": "!has(self.min) || !has(self.max) || self.min <= self.max",
     "messageExpression": "'min must not exceed max' + (self.min > 100 ? ' (min is large)' : '')"},
    {"rule": "!has(self.mode) || self.mode != 'tls' || has(self.host)", "message": "tls needs a host",
     "fieldPath": ".host", "reason": "FieldValueRequired"},
    {"rule": "!has(self.mode) || self.mode != 'off'", "reason": "FieldValueForbidden", "message": "off is forbidden"},
]))

SEQUENCES["cr_cel_rules"] = [
    *up("rules", "Rule", [ver("v1", _CEL)]),
    Req("POST", crs("rules"), cr("Rule", "r1", {"min": 1, "max": 2, "name": "app-x", "items": ["a"]}),
        pick=("spec",)),
    Req("POST", crs("rules"), cr("Rule", "r2", {"min": 5, "max": 2})),
    Req("POST", crs("rules"), cr("Rule", "r3", {"name": "web"})),
    Req("POST", crs("rules"), cr("Rule", "r4", {"items": ["longer", "b"]})),
    Req("POST", crs("rules"), cr("Rule", "r5", {"mode": "tls"})),
    Req("POST", crs("rules"), cr("Rule", "r6", {"mode": "off"})),
    Req("POST", crs("rules"), cr("Rule", "r7", {"mode": "tls", "host": "h", "min": 9, "max": 1, "name": "x"})),
    Req("POST", crs("rules"), cr("Rule", "r8", {"mode": "tls", "host": "h"}), pick=("spec",)),
    Req("PATCH", crs("rules", "r1"), {"spec": {"max": 0}}, MERGE),
    Req("PATCH", crs("rules", "r1"), {"spec": {"max": 3}}, MERGE, pick=("spec",)),
    Req("GET", crs("rules"), pick=("items.*.metadata.name",)),
    *down("rules"),
]

_TRANSITION = root(obj({
    "id": {"type": "string", "maxLength": 16, "x_v": [{"rule": "self == oldSelf", "message": "id is immutable"}]},
    "level": {"type": "integer", "x_v": [{"rule": "self >= oldSelf", "messageExpression":
                                          "'level may not go ' + (self < 0 ? 'negative' : 'down')"}]},
    "stage": {"type": "string", "maxLength": 16, "x_v": [{"rule": "!oldSelf.hasValue() || oldSelf.value() != 'done'",
                                         "optionalOldSelf": True, "message": "done is final"}]},
    "free": {"type": "string", "maxLength": 16},
}, x_v=[{"rule": "has(self.id) == has(oldSelf.id)", "message": "id may not be added or removed"}]))

SEQUENCES["cr_cel_transition"] = [
    *up("trans", "Trans", [ver("v1", _TRANSITION)]),
    Req("POST", crs("trans"), cr("Trans", "t1", {"id": "a", "level": 1, "stage": "new"}), pick=("spec",)),
    Req("PATCH", crs("trans", "t1"), {"spec": {"id": "b"}}, MERGE),
    Req("PATCH", crs("trans", "t1"), {"spec": {"level": 0}}, MERGE),
    Req("PATCH", crs("trans", "t1"), {"spec": {"level": 3, "free": "x"}}, MERGE, pick=("spec",)),
    Req("PATCH", crs("trans", "t1"), {"spec": {"stage": "done"}}, MERGE, pick=("spec",)),
    Req("PATCH", crs("trans", "t1"), {"spec": {"stage": "again"}}, MERGE),
    Req("PATCH", crs("trans", "t1"), {"spec": {"id": None}}, MERGE),
    Req("POST", crs("trans"), cr("Trans", "t2", {"level": 5}), pick=("spec",)),
    Req("PATCH", crs("trans", "t2"), {"spec": {"id": "late"}}, MERGE),
    Req("PATCH", crs("trans", "t2"), {"spec": {"level": 4, "id": "z"}}, MERGE),
    *down("trans"),
]

# --- subresources and generation ----------------------------------------------------------------------

_SCALED = root(obj({"replicas": {"type": "integer"}, "selector": {"type": "string"}, "image": {"type": "string"}}),
               obj({"replicas": {"type": "integer"}, "selector": {"type": "string"},
                    "observedGeneration": {"type": "integer"}, "phase": {"type": "string"}}))
_SUBS = {"status": {}, "scale": {"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas",
                                 "labelSelectorPath": ".status.selector"}}
P = "pools"

SEQUENCES["cr_status_subresource"] = [
    *up(P, "Pool", [ver("v1", _SCALED, subresources=_SUBS)]),
    Req("POST", crs(P), {**cr("Pool", "p1", {"replicas": 1, "image": "a"}), "status": {"phase": "Ready"}},
        pick=("metadata.generation", "spec", "status")),
    Req("PUT", crs(P, "p1") + "/status", {**cr("Pool", "p1", {"replicas": 9}), "status": {"phase": "Running"}}),
    Req("PATCH", crs(P, "p1") + "/status", {"spec": {"replicas": 9}, "status": {"phase": "Running",
                                                                               "observedGeneration": 1}},
        MERGE, pick=("metadata.generation", "spec", "status")),
    Req("PATCH", crs(P, "p1"), {"spec": {"image": "b"}, "status": {"phase": "Lost"}}, MERGE,
        pick=("metadata.generation", "spec", "status")),
    Req("PATCH", crs(P, "p1"), {"metadata": {"labels": {"a": "b"}}}, MERGE, pick=("metadata.generation",)),
    Req("PATCH", crs(P, "p1") + "/status", {"metadata": {"labels": {"c": "d"}}, "status": {"phase": "Done"}},
        MERGE, pick=("metadata.generation", "metadata.labels", "status")),
    Req("PATCH", crs(P, "p1") + "/status", {"status": {"phase": 5}}, MERGE),
    Req("GET", crs(P, "p1") + "/status", pick=("kind", "metadata.generation", "status")),
    Req("GET", crs(P, "nope") + "/status"),
    Req("POST", crs(P, "p1") + "/status", {"status": {}}),
    Req("GET", crs(P, "p1") + "/bogus"),
    *down(P),
]

SEQUENCES["cr_scale_subresource"] = [
    *up(P, "Pool", [ver("v1", _SCALED, subresources=_SUBS)]),
    Req("POST", crs(P), cr("Pool", "p1", {"replicas": 2}), pick=("spec",)),
    Req("GET", crs(P, "p1") + "/scale", pick=("apiVersion", "kind", "metadata.name", "spec", "status")),
    Req("PATCH", crs(P, "p1") + "/status", {"status": {"replicas": 2, "selector": "app=x"}}, MERGE,
        pick=("status",)),
    Req("GET", crs(P, "p1") + "/scale", pick=("spec", "status")),
    Req("PATCH", crs(P, "p1") + "/scale", {"spec": {"replicas": 5}}, MERGE, pick=("spec", "status")),
    Req("GET", crs(P, "p1"), pick=("metadata.generation", "spec")),
    Req("PUT", crs(P, "p1") + "/scale", {"apiVersion": "autoscaling/v1", "kind": "Scale",
                                         "metadata": {"name": "p1", "namespace": "{ns}"}, "spec": {"replicas": 3}},
        pick=("spec",)),
    Req("PATCH", crs(P, "p1") + "/scale", {"spec": {"replicas": -1}}, MERGE, brief=True),
    Req("PATCH", crs(P, "p1") + "/scale", [{"op": "replace", "path": "/spec/replicas", "value": 4}], JSON,
        pick=("spec",)),
    Req("GET", crs(P, "p1"), pick=("metadata.generation", "spec")),
    Req("GET", crs(P, "ghost") + "/scale"),
    *down(P),
]

_LOOSE = root(obj(x_preserve=True), obj(x_preserve=True))

SEQUENCES["cr_generation_without_status"] = [
    *up("plains", "Plain", [ver("v1", _LOOSE)]),
    Req("POST", crs("plains"), {**cr("Plain", "p1", {"a": 1}), "status": {"s": 1}},
        pick=("metadata.generation", "spec", "status")),
    Req("PATCH", crs("plains", "p1"), {"status": {"s": 2}}, MERGE, pick=("metadata.generation", "status")),
    Req("PATCH", crs("plains", "p1"), {"spec": {"a": 2}}, MERGE, pick=("metadata.generation", "spec")),
    Req("PATCH", crs("plains", "p1"), {"metadata": {"annotations": {"x": "y"}}}, MERGE,
        pick=("metadata.generation",)),
    Req("PATCH", crs("plains", "p1"), {"spec": {"a": 2}}, MERGE, pick=("metadata.generation",)),
    Req("PATCH", crs("plains", "p1"), {"metadata": {"generation": 40}}, MERGE, pick=("metadata.generation",)),
    Req("GET", crs("plains", "p1") + "/status"),
    Req("PATCH", crs("plains", "p1"), {"top": "level"}, MERGE, pick=("metadata.generation", "top")),
    *down("plains"),
]

# --- several versions, conversion None ---------------------------------------------------------------------

_V = root(obj({"size": {"type": "integer"}, "note": {"type": "string"}}))
_V2 = root(obj({"size": {"type": "integer"}, "label": {"type": "string"}}))

SEQUENCES["cr_multi_version"] = [
    *up("multis", "Multi", [ver("v1", _V), ver("v2", _V2, storage=False), ver("v3", _V, served=False,
                                                                               storage=False)]),
    Req("POST", crs("multis"), cr("Multi", "m1", {"size": 1, "note": "n", "label": "l"}), pick=("apiVersion", "spec")),
    Req("GET", crs("multis", "m1", "v2"), pick=("apiVersion", "kind", "spec")),
    Req("POST", crs("multis", version="v2"), cr("Multi", "m2", {"size": 2, "note": "n", "label": "l"}, "v2"),
        pick=("apiVersion", "spec")),
    Req("GET", crs("multis", "m2", "v1"), pick=("apiVersion", "spec")),
    Req("GET", crs("multis", version="v2"), pick=("apiVersion", "kind", "items.*.apiVersion", "items.*.spec")),
    Req("GET", crs("multis", "m1", "v3")),
    Req("POST", crs("multis"), cr("Multi", "m3", {"size": 3}, "v2")),
    Req("GET", f"/apis/{G}", pick=("versions", "preferredVersion")),
    # the storage version moves to v2: both stay in storedVersions
    Req("PATCH", f"{CRDS}/multis.{G}", [{"op": "replace", "path": "/spec/versions/0/storage", "value": False},
                                       {"op": "replace", "path": "/spec/versions/1/storage", "value": True}], JSON,
        pick=("status.storedVersions",)),
    WaitFor(f"{CRDS}/multis.{G}", "status.storedVersions.1", "v2"),
    Req("GET", f"{CRDS}/multis.{G}", pick=("status.storedVersions", "metadata.generation")),
    Req("PATCH", f"{CRDS}/multis.{G}", [{"op": "remove", "path": "/spec/versions/0"}], JSON, brief=True),
    Req("PATCH", f"{CRDS}/multis.{G}/status", [{"op": "replace", "path": "/status/storedVersions",
                                               "value": ["v3"]}], JSON, brief=True, pick=("status.storedVersions",)),
    Req("PATCH", f"{CRDS}/multis.{G}", [{"op": "replace", "path": "/spec/versions/1/storage", "value": False}],
        JSON, brief=True),
    *down("multis"),
]

SEQUENCES["crd_update_rules"] = [
    *up("rigs", "Rig", [ver("v1", _V)]),
    Req("PATCH", f"{CRDS}/rigs.{G}", {"spec": {"scope": "Cluster"}}, MERGE, brief=True),
    Req("PATCH", f"{CRDS}/rigs.{G}", {"spec": {"group": "other.blind7.dev"}}, MERGE, brief=True),
    Req("PATCH", f"{CRDS}/rigs.{G}", {"spec": {"names": {"plural": "rigz"}}}, MERGE, brief=True),
    Req("PATCH", f"{CRDS}/rigs.{G}", {"spec": {"names": {"shortNames": ["rg"], "categories": ["b7"]}}}, MERGE,
        pick=("metadata.generation", "spec.names")),
    WaitFor(f"{CRDS}/rigs.{G}", "status.acceptedNames.shortNames.0", "rg"),
    Req("GET", f"{CRDS}/rigs.{G}", pick=("status.acceptedNames", "status.conditions.*.type",
                                         "status.conditions.*.status", "status.conditions.*.reason")),
    Req("PATCH", f"{CRDS}/rigs.{G}", {"metadata": {"labels": {"team": "x"}}}, MERGE, pick=("metadata.generation",)),
    Req("PATCH", f"{CRDS}/rigs.{G}", {"spec": {"names": {"kind": "Rigging", "listKind": "RiggingList"}}}, MERGE,
        pick=("metadata.generation", "spec.names.kind")),
    Req("GET", f"/apis/{G}/v1"),
    Req("POST", crs("rigs"), cr("Rigging", "r1", {"size": 1}), pick=("kind", "spec")),
    Req("POST", crs("rigs"), cr("Rig", "r2", {"size": 1})),
    Req("PUT", f"{CRDS}/rigs.{G}", crd("rigs", "Rig", [ver("v1", _V)]), brief=True),
    *down("rigs"),
]

# --- server-side apply on custom resources ------------------------------------------------------------------

_APPLIED = root(obj({
    "replicas": {"type": "integer"}, "image": {"type": "string"}, "owner": {"type": "string"},
    "ports": {"type": "array", "x_lt": "map", "x_lmk": ["name"],
              "items": obj({"name": {"type": "string"}, "port": {"type": "integer"},
                            "proto": {"type": "string", "default": "TCP"}}, required=["name"])},
    "tags": {"type": "array", "x_lt": "set", "items": {"type": "string"}},
    "args": {"type": "array", "items": {"type": "string"}},
    "env": {"type": "object", "additionalProperties": {"type": "string"}},
    "sel": {"type": "object", "x_mt": "atomic", "additionalProperties": {"type": "string"}},
}), obj({"phase": {"type": "string"}}))
AP = "apps"
SSA_PICK = ("metadata.managedFields.*.manager", "metadata.managedFields.*.operation",
            "metadata.managedFields.*.fieldsV1", "spec")


def apply(name: str, spec: dict[str, Any], manager: str, force: bool = False, pick: tuple[str, ...] = SSA_PICK,
          **kw: Any) -> Req:
    params = {"fieldManager": manager, **({"force": "true"} if force else {})}
    return Req("PATCH", crs(AP, name), cr("App", name, spec), APPLY, params=params, pick=pick, **kw)


SEQUENCES["cr_apply_managers"] = [
    *up(AP, "App", [ver("v1", _APPLIED, subresources={"status": {}})]),
    apply("a1", {"replicas": 1, "image": "i1"}, "alice"),
    apply("a1", {"replicas": 1, "image": "i1"}, "alice", pick=("metadata", "spec")),
    Req("GET", crs(AP, "a1"), pick=("metadata",)),
    apply("a1", {"replicas": 2}, "bob"),
    apply("a1", {"replicas": 3}, "bob", force=True),
    apply("a1", {"replicas": 3, "owner": "bob"}, "bob"),
    apply("a1", {"image": "i1"}, "alice"),
    Req("PATCH", crs(AP, "a1"), {"spec": {"image": "i2"}}, MERGE, params={"fieldManager": "carol"}, pick=SSA_PICK),
    apply("a1", {"image": "i3"}, "alice"),
    apply("a1", {}, "bob"),
    Req("PATCH", crs(AP, "a1"), cr("App", "a1", {"replicas": 1}), APPLY),
    Req("PATCH", crs(AP, "a1"), cr("App", "a1", {"replicas": 1}), APPLY, params={"fieldManager": "x" * 200}),
    Req("PATCH", crs(AP, "a1"), {**cr("App", "a1", {"replicas": 1}), "kind": "Other"}, APPLY,
        params={"fieldManager": "alice"}),
    Req("PATCH", crs(AP, "a1"), cr("App", "a1", {"replicas": 1, "bogus": 1}), APPLY,
        params={"fieldManager": "alice"}),
    Req("PATCH", crs(AP, "a1"), cr("App", "a1", {"replicas": 1, "bogus": 1}), APPLY,
        params={"fieldManager": "alice", "fieldValidation": "Ignore"}, pick=("spec",)),
    *down(AP),
]

SEQUENCES["cr_apply_list_map"] = [
    *up(AP, "App", [ver("v1", _APPLIED, subresources={"status": {}})]),
    apply("a1", {"ports": [{"name": "http", "port": 80}], "tags": ["a"], "args": ["x"]}, "alice"),
    apply("a1", {"ports": [{"name": "grpc", "port": 90}], "tags": ["b"], "args": ["y"]}, "bob"),
    apply("a1", {"ports": [{"name": "http", "port": 81}]}, "bob"),
    apply("a1", {"ports": [{"name": "http", "port": 81}], "tags": ["a", "c"], "args": ["x"]}, "alice"),
    apply("a1", {"tags": ["b"], "args": ["y"]}, "bob"),
    apply("a1", {"ports": [{"name": "http", "port": 80}, {"name": "http", "port": 8}]}, "alice", brief=True),
    apply("a1", {"ports": [{"port": 80}]}, "alice"),
    Req("PATCH", crs(AP, "a1"), {"spec": {"ports": [{"name": "admin", "port": 1}]}}, MERGE,
        params={"fieldManager": "merger"}, pick=("spec.ports",)),
    apply("a1", {"sel": {"a": "1", "b": "2"}}, "carol", pick=("spec.sel",)),
    apply("a1", {"sel": {"a": "1"}}, "dave"),
    apply("a1", {"env": {"A": "1"}}, "carol", pick=("spec.env",)),
    apply("a1", {"env": {"B": "2"}}, "dave", pick=("spec.env",)),
    Req("GET", crs(AP, "a1"), pick=SSA_PICK),
    *down(AP),
]

SEQUENCES["cr_apply_status_and_transfer"] = [
    *up(AP, "App", [ver("v1", _APPLIED, subresources={"status": {}})]),
    apply("a1", {"replicas": 1}, "ctl"),
    Req("PATCH", crs(AP, "a1") + "/status", {**cr("App", "a1"), "status": {"phase": "Up"}}, APPLY,
        params={"fieldManager": "ctl-status"}, pick=("metadata.managedFields.*.manager",
                                                      "metadata.managedFields.*.subresource", "status")),
    Req("PATCH", crs(AP, "a1") + "/status", {**cr("App", "a1", {"replicas": 7}), "status": {"phase": "Up2"}},
        APPLY, params={"fieldManager": "ctl-status"}, pick=("spec", "status")),
    apply("a1", {"replicas": 1, "image": "x"}, "kubectl-client-side-apply"),
    # ownership moves to a new manager that applies the same value with force, then the old one lets go
    apply("a1", {"replicas": 1}, "new-owner", force=True),
    apply("a1", {"image": "x"}, "ctl"),
    apply("a1", {}, "kubectl-client-side-apply"),
    Req("GET", crs(AP, "a1"), pick=SSA_PICK),
    Req("PATCH", crs(AP, "a1"), cr("App", "a2", {"replicas": 1}), APPLY, params={"fieldManager": "ctl"}),
    Req("PATCH", crs(AP, "a3"), cr("App", "a3", {"replicas": 1}), APPLY,
        params={"fieldManager": "ctl", "dryRun": "All"}, pick=("metadata.name", "spec")),
    Req("GET", crs(AP, "a3")),
    *down(AP),
]

# --- finalizers, owners and garbage collection ------------------------------------------------------------

_SIMPLE = root(obj({"n": {"type": "integer"}, "color": {"type": "string"}}), obj({"phase": {"type": "string"}}))
T = "things"
META = ("metadata.name", "metadata.finalizers", "metadata.deletionTimestamp", "metadata.deletionGracePeriodSeconds",
        "metadata.generation")

SEQUENCES["cr_finalizers"] = [
    *up(T, "Thing", [ver("v1", _SIMPLE, subresources={"status": {}})]),
    Req("POST", crs(T), cr("Thing", "t1", {"n": 1}, finalizers=["blind7.dev/hold"]), pick=META),
    Req("DELETE", crs(T, "t1"), pick=META),
    Req("GET", crs(T, "t1"), pick=META),
    Req("DELETE", crs(T, "t1"), pick=META),
    Req("PATCH", crs(T, "t1"), {"spec": {"n": 2}}, MERGE, pick=META + ("spec",)),
    Req("PATCH", crs(T, "t1"), {"metadata": {"finalizers": ["blind7.dev/hold", "blind7.dev/more"]}}, MERGE),
    Req("PATCH", crs(T, "t1") + "/status", {"status": {"phase": "Cleaning"}}, MERGE, pick=META + ("status",)),
    Req("PATCH", crs(T, "t1"), {"metadata": {"deletionTimestamp": None}}, MERGE, pick=META),
    Req("POST", crs(T), cr("Thing", "t1", {"n": 1})),
    Req("PATCH", crs(T, "t1"), {"metadata": {"finalizers": None}}, MERGE, pick=("metadata.name",)),
    WaitGone(crs(T, "t1")),
    Req("POST", crs(T), cr("Thing", "t2", {"n": 1}, finalizers=["Not A Finalizer"])),
    Req("POST", crs(T), cr("Thing", "t2", {"n": 1}, finalizers=["nodomain"]), pick=META),
    Req("DELETE", crs(T, "t2"), params={"gracePeriodSeconds": "0"}, pick=META),
    Req("PATCH", crs(T, "t2"), [{"op": "remove", "path": "/metadata/finalizers"}], JSON, pick=("metadata.name",)),
    WaitGone(crs(T, "t2")),
    *down(T),
]

SEQUENCES["cr_gc_background"] = [
    *up(T, "Thing", [ver("v1", _SIMPLE)]),
    Req("POST", crs(T), cr("Thing", "owner", {"n": 1}), save={"uid": "metadata.uid"}, pick=("metadata.name",)),
    Req("POST", CM, {"metadata": {"name": "dep", "ownerReferences": [
        {"apiVersion": f"{G}/v1", "kind": "Thing", "name": "owner", "uid": "{m:uid}"}]}, "data": {"a": "b"}},
        pick=("metadata.ownerReferences",)),
    Req("POST", crs(T), cr("Thing", "child", {"n": 2}, ownerReferences=[
        {"apiVersion": f"{G}/v1", "kind": "Thing", "name": "owner", "uid": "{m:uid}", "controller": True}]),
        pick=("metadata.ownerReferences",)),
    Req("POST", CM, {"metadata": {"name": "bad", "ownerReferences": [
        {"apiVersion": f"{G}/v1", "kind": "Thing", "name": "owner", "uid": ""}]}}),
    Req("POST", CM, {"metadata": {"name": "bad2", "ownerReferences": [
        {"apiVersion": f"{G}/v1", "kind": "Thing", "name": "owner", "uid": "{m:uid}", "controller": True},
        {"apiVersion": f"{G}/v1", "kind": "Thing", "name": "other", "uid": "{m:uid}", "controller": True}]}},
        brief=True),
    Req("DELETE", crs(T, "owner")),
    WaitGone(CM + "/dep", timeout=120),
    WaitGone(crs(T, "child"), timeout=120),
    Req("GET", CM + "/dep"),
    Req("GET", crs(T)),
    *down(T),
]

SEQUENCES["cr_gc_foreground_and_orphan"] = [
    *up(T, "Thing", [ver("v1", _SIMPLE)]),
    Req("POST", crs(T), cr("Thing", "fg", {"n": 1}), save={"fg": "metadata.uid"}, pick=("metadata.name",)),
    Req("POST", CM, {"metadata": {"name": "fg-dep", "finalizers": ["blind7.dev/slow"], "ownerReferences": [
        {"apiVersion": f"{G}/v1", "kind": "Thing", "name": "fg", "uid": "{m:fg}", "blockOwnerDeletion": True}]}},
        pick=("metadata.ownerReferences",)),
    Req("DELETE", crs(T, "fg"), params={"propagationPolicy": "Foreground"}, pick=META),
    WaitFor(CM + "/fg-dep", "metadata.deletionTimestamp", "<set>", timeout=120),
    Req("GET", crs(T, "fg"), pick=META),
    Req("PATCH", CM + "/fg-dep", {"metadata": {"finalizers": None}}, MERGE, pick=("metadata.name",)),
    WaitGone(crs(T, "fg"), timeout=120),
    Req("POST", crs(T), cr("Thing", "orph", {"n": 1}), save={"orph": "metadata.uid"}, pick=("metadata.name",)),
    Req("POST", CM, {"metadata": {"name": "orph-dep", "ownerReferences": [
        {"apiVersion": f"{G}/v1", "kind": "Thing", "name": "orph", "uid": "{m:orph}"}]}},
        pick=("metadata.ownerReferences",)),
    Req("DELETE", crs(T, "orph"), params={"propagationPolicy": "Orphan"}, pick=META),
    WaitGone(crs(T, "orph"), timeout=120),
    Req("GET", CM + "/orph-dep", pick=("metadata.name", "metadata.ownerReferences")),
    Req("DELETE", crs(T, "none"), params={"propagationPolicy": "Sideways"}),
    Req("DELETE", crs(T, "none"), body={"kind": "DeleteOptions", "apiVersion": "v1", "orphanDependents": True,
                                        "propagationPolicy": "Orphan"}),
    *down(T),
]

# --- selectors, paging, watches, resource versions ---------------------------------------------------------


def things(*specs: tuple[str, dict[str, str], int]) -> list[Step]:
    return [Req("POST", crs(T), cr("Thing", name, {"n": n, "color": labels.get("color", "none")}, labels=labels),
                pick=("metadata.name", "metadata.labels")) for name, labels, n in specs]


_FIVE = things(("a", {"color": "red", "tier": "web"}, 1), ("b", {"color": "blue", "tier": "web"}, 2),
               ("c", {"color": "red"}, 3), ("d", {"color": "green", "tier": "db"}, 4), ("e", {}, 5))
NAMES = ("items.*.metadata.name",)

SEQUENCES["cr_label_selectors"] = [
    *up(T, "Thing", [ver("v1", _SIMPLE)]),
    *_FIVE,
    Req("GET", crs(T), params={"labelSelector": "color=red"}, pick=NAMES),
    Req("GET", crs(T), params={"labelSelector": "color!=red"}, pick=NAMES),
    Req("GET", crs(T), params={"labelSelector": "color in (blue,green)"}, pick=NAMES),
    Req("GET", crs(T), params={"labelSelector": "tier notin (web)"}, pick=NAMES),
    Req("GET", crs(T), params={"labelSelector": "tier"}, pick=NAMES),
    Req("GET", crs(T), params={"labelSelector": "!tier"}, pick=NAMES),
    Req("GET", crs(T), params={"labelSelector": "color=red,tier=web"}, pick=NAMES),
    Req("GET", crs(T), params={"labelSelector": "color==blue"}, pick=NAMES),
    Req("GET", crs(T), params={"labelSelector": "color=(red"}),
    Req("GET", crs(T), params={"fieldSelector": "metadata.name=c"}, pick=NAMES),
    Req("GET", crs(T), params={"fieldSelector": "metadata.name!=c", "labelSelector": "color=red"}, pick=NAMES),
    Req("GET", crs(T), params={"fieldSelector": "metadata.namespace={ns}"}, pick=NAMES),
    Req("GET", crs(T), params={"fieldSelector": "spec.n=3"}),
    Req("GET", f"/apis/{G}/v1/{T}", params={"labelSelector": "tier=db"}, pick=NAMES),
    *down(T),
]

SEQUENCES["cr_paging"] = [
    *up(T, "Thing", [ver("v1", _SIMPLE)]),
    *_FIVE,
    Req("GET", crs(T), params={"limit": "2"}, save={"c1": "metadata.continue"},
        pick=NAMES + ("metadata.remainingItemCount",)),
    Req("GET", crs(T), params={"limit": "2", "continue": "{m:c1}"}, save={"c2": "metadata.continue"},
        pick=NAMES + ("metadata.remainingItemCount",)),
    Req("POST", crs(T), cr("Thing", "f", {"n": 6}), pick=("metadata.name",)),
    Req("GET", crs(T), params={"limit": "2", "continue": "{m:c2}"},
        pick=NAMES + ("metadata.remainingItemCount",)),
    Req("GET", crs(T), params={"limit": "2", "labelSelector": "color=red"},
        pick=NAMES + ("metadata.remainingItemCount",)),
    Req("GET", crs(T), params={"limit": "0"}, pick=NAMES),
    Req("GET", crs(T), params={"limit": "-1"}, pick=NAMES),
    Req("GET", crs(T), params={"continue": "not-a-token"}),
    Req("GET", crs(T), params={"limit": "2", "continue": "{m:c1}", "resourceVersion": "1"}),
    Req("GET", crs(T), params={"limit": "10"}, pick=NAMES + ("metadata.remainingItemCount",)),
    *down(T),
]

SEQUENCES["cr_watch_from_mark"] = [
    *up(T, "Thing", [ver("v1", _SIMPLE)]),
    Req("POST", crs(T), cr("Thing", "pre", {"n": 0}), pick=("metadata.name",)),
    Mark("m0", crs(T)),
    Req("POST", crs(T), cr("Thing", "w1", {"n": 1}, labels={"k": "v"}), pick=("metadata.name",)),
    Req("PATCH", crs(T, "w1"), {"spec": {"n": 2}}, MERGE, pick=("spec",)),
    Req("PATCH", crs(T, "w1"), {"metadata": {"labels": {"k": "gone"}}}, MERGE, pick=("metadata.labels",)),
    Req("DELETE", crs(T, "pre"), pick=("metadata.name",)),
    Watch(crs(T), since="m0", to_last_write=True),
    Watch(crs(T), since="m0", params={"labelSelector": "k=v"}),
    Watch(crs(T), since="m0", params={"fieldSelector": "metadata.name=pre"}),
    Watch(crs(T), params={"sendInitialEvents": "true"}),
    *down(T),
]

SEQUENCES["cr_resource_versions"] = [
    *up(T, "Thing", [ver("v1", _SIMPLE)]),
    Req("POST", crs(T), cr("Thing", "r1", {"n": 1}), save={"rv": "metadata.resourceVersion"},
        pick=("metadata.name",)),
    Req("PATCH", crs(T, "r1"), {"spec": {"n": 2}}, MERGE, pick=("spec",)),
    Req("GET", crs(T, "r1"), params={"resourceVersion": "0"}, pick=("spec",)),
    Req("GET", crs(T), params={"resourceVersion": "{m:rv}", "resourceVersionMatch": "NotOlderThan"},
        pick=NAMES + ("items.*.spec",)),
    Req("GET", crs(T), params={"resourceVersion": "{m:rv}", "resourceVersionMatch": "Exact"},
        pick=NAMES + ("items.*.spec",)),
    Req("GET", crs(T), params={"resourceVersionMatch": "Exact"}),
    Req("GET", crs(T), params={"resourceVersion": "{m:rv}", "resourceVersionMatch": "Sometimes"}),
    Req("GET", crs(T), params={"resourceVersion": "1", "resourceVersionMatch": "Exact"}),
    Req("GET", crs(T), params={"resourceVersion": "abc"}),
    Watch(crs(T), params={"resourceVersion": "1"}),
    Req("GET", crs(T), params={"resourceVersion": "0", "resourceVersionMatch": "NotOlderThan"}, pick=NAMES),
    *down(T),
]

# --- dryRun, deletecollection, preconditions ---------------------------------------------------------------

SEQUENCES["cr_dry_run"] = [
    *up(T, "Thing", [ver("v1", _SIMPLE)]),
    Req("POST", crs(T), cr("Thing", "d1", {"n": 1}), params={"dryRun": "All"},
        pick=("metadata.name", "metadata.generation", "spec")),
    Req("GET", crs(T, "d1")),
    Req("POST", crs(T), cr("Thing", "d1", {"n": 1}), params={"dryRun": "Some"}),
    Req("POST", crs(T), cr("Thing", "d1", {"n": "x"}), params={"dryRun": "All"}),
    Req("POST", crs(T), cr("Thing", "d1", {"n": 1}), pick=("metadata.name",), save={"rv": "metadata.resourceVersion"}),
    Req("PATCH", crs(T, "d1"), {"spec": {"n": 2}}, MERGE, params={"dryRun": "All"},
        pick=("metadata.generation", "spec")),
    Req("GET", crs(T, "d1"), pick=("metadata.generation", "spec")),
    Req("DELETE", crs(T, "d1"), params={"dryRun": "All"}, pick=("metadata.name", "spec")),
    Req("GET", crs(T, "d1"), pick=("metadata.name",)),
    Req("PUT", crs(T, "d1"), cr("Thing", "d1", {"n": 9}, resourceVersion="{m:rv}"), params={"dryRun": "All"},
        pick=("spec",)),
    Req("GET", crs(T, "d1"), pick=("spec",)),
    Req("POST", CRDS, crd("drys", "Dry", [ver()]), params={"dryRun": "All"}, pick=("metadata.name", "status")),
    Req("GET", f"{CRDS}/drys.{G}"),
    *down(T),
]

SEQUENCES["cr_delete_collection"] = [
    *up(T, "Thing", [ver("v1", _SIMPLE)]),
    *_FIVE,
    Req("DELETE", crs(T), params={"labelSelector": "color=red"}, pick=("kind",) + NAMES),
    Req("GET", crs(T), pick=NAMES),
    Req("DELETE", crs(T), params={"labelSelector": "tier", "dryRun": "All"}, pick=NAMES),
    Req("GET", crs(T), pick=NAMES),
    Req("DELETE", crs(T), params={"fieldSelector": "metadata.name=e"}, pick=NAMES),
    Req("DELETE", crs(T), params={"labelSelector": "color=purple"}, pick=("kind",) + NAMES),
    Req("DELETE", crs(T), params={"labelSelector": "color in (("}),
    Req("DELETE", crs(T), pick=NAMES),
    Req("GET", crs(T), pick=("kind",) + NAMES),
    *down(T),
]

SEQUENCES["cr_preconditions"] = [
    *up(T, "Thing", [ver("v1", _SIMPLE)]),
    Req("POST", crs(T), cr("Thing", "p1", {"n": 1}), save={"uid": "metadata.uid", "rv": "metadata.resourceVersion"},
        pick=("metadata.name",)),
    Req("PATCH", crs(T, "p1"), {"spec": {"n": 2}}, MERGE, pick=("spec",)),
    Req("DELETE", crs(T, "p1"), body={"preconditions": {"resourceVersion": "{m:rv}"}}),
    Req("DELETE", crs(T, "p1"), body={"preconditions": {"uid": "00000000-0000-0000-0000-000000000000"}}),
    Req("PATCH", crs(T, "p1"), {"metadata": {"resourceVersion": "{m:rv}"}, "spec": {"n": 3}}, MERGE),
    Req("PATCH", crs(T, "p1"), {"metadata": {"uid": "00000000-0000-0000-0000-000000000001"}}, MERGE),
    Req("PATCH", crs(T, "p1"), [{"op": "test", "path": "/metadata/uid", "value": "{m:uid}"},
                                {"op": "replace", "path": "/spec/n", "value": 4}], JSON, pick=("spec",)),
    Req("PATCH", crs(T, "p1"), {"metadata": {"name": "renamed"}}, MERGE),
    Req("PATCH", crs(T, "p1"), {"metadata": {"namespace": "elsewhere"}}, MERGE),
    Req("DELETE", crs(T, "p1"), body={"preconditions": {"uid": "{m:uid}"}}),
    Req("GET", crs(T, "p1")),
    *down(T),
]

SEQUENCES["cr_metadata_validation"] = [
    *up(T, "Thing", [ver("v1", _SIMPLE)]),
    Req("POST", crs(T), cr("Thing", "Bad_Name", {"n": 1})),
    Req("POST", crs(T), cr("Thing", "a" * 254, {"n": 1}), brief=True),
    Req("POST", crs(T), cr("Thing", "dots.are.ok", {"n": 1}), pick=("metadata.name",)),
    Req("POST", crs(T), {**cr("Thing", "", {"n": 1}), "metadata": {"generateName": "gen-", "labels": {"gen": "y"}}},
        pick=("metadata.generateName", "spec")),
    Req("POST", crs(T), {**cr("Thing", "", {"n": 1}), "metadata": {}}),
    Req("POST", crs(T), cr("Thing", "l1", {"n": 1}, labels={"bad key!": "v"})),
    Req("POST", crs(T), cr("Thing", "l2", {"n": 1}, labels={"k": "bad value!"})),
    Req("POST", crs(T), cr("Thing", "l3", {"n": 1}, annotations={"Not Valid": "x"})),
    Req("POST", crs(T), cr("Thing", "l4", {"n": 1}, labels={"blind7.dev/ok": "v_1.2-x"}),
        pick=("metadata.labels",)),
    Req("POST", crs(T), {**cr("Thing", "ns1", {"n": 1}), "metadata": {"name": "ns1", "namespace": "other"}}),
    Req("POST", crs(T), {"kind": "Thing", "metadata": {"name": "nov"}, "spec": {"n": 1}}),
    Req("POST", crs(T), {"apiVersion": f"{G}/v1", "metadata": {"name": "nok"}, "spec": {"n": 1}}),
    Req("POST", crs(T), {**cr("Thing", "w", {"n": 1}), "apiVersion": "other.dev/v1"}),
    Req("GET", crs(T), params={"labelSelector": "!gen"}, pick=NAMES),
    Req("GET", crs(T), params={"labelSelector": "gen=y"}, pick=("items.*.metadata.generateName",)),
    *down(T),
]

# --- scope, discovery, names, selectable fields --------------------------------------------------------------

SEQUENCES["cr_cluster_scoped"] = [
    *up("globals", "Global", [ver("v1", _SIMPLE)], scope="Cluster"),
    Req("POST", crs("globals", cluster=True), cr("Global", "g1", {"n": 1}, cluster=True),
        pick=("metadata.name", "metadata.namespace", "spec")),
    Req("POST", crs("globals", cluster=True), cr("Global", "g2", {"n": 1}, cluster=True, namespace="{ns}"),
        pick=("metadata.name", "metadata.namespace")),
    Req("GET", crs("globals")),
    Req("GET", crs("globals", "g1", cluster=True), pick=("metadata.name", "spec")),
    Req("GET", crs("globals", cluster=True), params={"fieldSelector": "metadata.name=g1"}, pick=NAMES),
    Req("DELETE", crs("globals", "g1", cluster=True), pick=("status",)),
    Req("GET", f"/apis/{G}/v1", pick=("resources.*.name", "resources.*.namespaced", "resources.*.kind")),
    *down("globals"),
]

SEQUENCES["crd_discovery"] = [
    *up("gears", "Gear", [ver("v1", _SCALED, subresources=_SUBS), ver("v1beta1", _SCALED, storage=False,
                                                                       deprecated=True)],
        shortNames=["gr"], categories=["blind7"]),
    WaitFor(f"/apis/{G}/v1beta1", "kind", "APIResourceList"),
    Req("GET", f"/apis/{G}/v1"),
    Req("GET", f"/apis/{G}/v1beta1"),
    Req("GET", f"/apis/{G}"),
    Req("GET", f"/apis/{G}/v2"),
    Req("GET", crs("gears", version="v1beta1"), pick=("apiVersion", "kind", "items")),
    Req("GET", f"{CRDS}/gears.{G}", pick=("spec.versions.*.name", "spec.versions.*.deprecated",
                                          "status.acceptedNames")),
    *down("gears"),
    Req("GET", f"/apis/{G}/v1"),
]

SEQUENCES["crd_name_conflicts"] = [
    *up("cogs", "Cog", [ver()], shortNames=["cg"]),
    Req("POST", CRDS, crd("sprockets", "Cog", [ver()]), pick=("metadata.name",)),
    WaitFor(f"{CRDS}/sprockets.{G}", "status.conditions.0.status", "False"),
    Req("GET", f"{CRDS}/sprockets.{G}", pick=("status.conditions.*.type", "status.conditions.*.status",
                                              "status.conditions.*.reason", "status.conditions.*.message",
                                              "status.acceptedNames")),
    Req("GET", f"/apis/{G}/v1/namespaces/{{ns}}/sprockets"),
    Req("POST", CRDS, crd("wheels", "Wheel", [ver()], shortNames=["cg"]), pick=("metadata.name",)),
    WaitFor(f"{CRDS}/wheels.{G}", "status.conditions.0.status", "False"),
    Req("GET", f"{CRDS}/wheels.{G}", pick=("status.conditions.*.reason", "status.conditions.*.message")),
    Req("POST", CRDS, crd("cogs", "Cog", [ver()])),
    *down("sprockets"),
    *down("wheels"),
    *down("cogs"),
]

_SELECTABLE = root(obj({"color": {"type": "string"}, "size": {"type": "integer"}, "on": {"type": "boolean"},
                        "shape": {"type": "string", "enum": ["round", "square"]}}))

SEQUENCES["cr_selectable_fields"] = [
    *up("paints", "Paint", [ver("v1", _SELECTABLE, selectableFields=[
        {"jsonPath": ".spec.color"}, {"jsonPath": ".spec.size"}, {"jsonPath": ".spec.on"}])]),
    Req("POST", crs("paints"), cr("Paint", "p1", {"color": "red", "size": 1, "on": True}), pick=("spec",)),
    Req("POST", crs("paints"), cr("Paint", "p2", {"color": "blue", "size": 2, "on": False}), pick=("spec",)),
    Req("POST", crs("paints"), cr("Paint", "p3", {"size": 2}), pick=("spec",)),
    Req("GET", crs("paints"), params={"fieldSelector": "spec.color=red"}, pick=NAMES),
    Req("GET", crs("paints"), params={"fieldSelector": "spec.size=2"}, pick=NAMES),
    Req("GET", crs("paints"), params={"fieldSelector": "spec.on=false"}, pick=NAMES),
    Req("GET", crs("paints"), params={"fieldSelector": "spec.color!=red,spec.size=2"}, pick=NAMES),
    Req("GET", crs("paints"), params={"fieldSelector": "spec.shape=round"}),
    Req("GET", crs("paints"), params={"fieldSelector": "spec.color="}, pick=NAMES),
    bad_crd("bads", "Bad", [ver("v1", _SELECTABLE, selectableFields=[{"jsonPath": ".metadata.name"}])]),
    bad_crd("bads", "Bad", [ver("v1", _SELECTABLE, selectableFields=[{"jsonPath": ".spec.missing"}])]),
    bad_crd("bads", "Bad", [ver("v1", _SELECTABLE, selectableFields=[{"jsonPath": ".spec.color"},
                                                                     {"jsonPath": ".spec.color"}])], brief=True),
    *down("paints"),
]

SEQUENCES["crd_printer_columns_and_root_preserve"] = [
    *up("tables", "Table", [ver("v1", root(obj({"size": {"type": "integer"}}), x_preserve=True),
                                additionalPrinterColumns=[
                                    {"name": "Size", "type": "integer", "jsonPath": ".spec.size"},
                                    {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"}])]),
    Req("GET", f"{CRDS}/tables.{G}", pick=("spec.versions.*.additionalPrinterColumns",)),
    Req("POST", crs("tables"), {**cr("Table", "t1", {"size": 1, "extra": True}), "top": {"kept": 1}},
        pick=("spec", "top")),
    Req("PATCH", crs("tables", "t1"), {"other": [1, 2]}, MERGE, pick=("spec", "top", "other")),
    Req("POST", crs("tables"), cr("Table", "t2", {"size": "big"}), brief=True),
    bad_crd("bads", "Bad", [ver("v1", additionalPrinterColumns=[{"name": "X", "type": "string",
                                                                  "jsonPath": "spec.x"}])]),
    bad_crd("bads", "Bad", [ver("v1", additionalPrinterColumns=[{"name": "", "type": "string",
                                                                  "jsonPath": ".spec.x"}])]),
    Req("POST", CRDS, {**crd("bads", "Bad", [ver()]), "spec": {**crd("bads", "Bad", [ver()])["spec"],
                                                                "preserveUnknownFields": True}}, brief=True),
    *down("tables"),
]

SEQUENCES["crd_delete_with_instances"] = [
    *up(T, "Thing", [ver("v1", _SIMPLE)]),
    *things(("x1", {"k": "v"}, 1), ("x2", {}, 2)),
    Req("POST", crs(T), cr("Thing", "held", {"n": 3}, finalizers=["blind7.dev/hold"]), pick=("metadata.name",)),
    Req("DELETE", f"{CRDS}/{T}.{G}", pick=("metadata.finalizers", "metadata.deletionTimestamp")),
    WaitFor(f"{CRDS}/{T}.{G}", "status.conditions.2.type", "Terminating"),
    Req("POST", crs(T), cr("Thing", "late", {"n": 4})),
    Req("PATCH", crs(T, "held"), {"metadata": {"finalizers": None}}, MERGE, pick=("metadata.name",)),
    WaitGone(f"{CRDS}/{T}.{G}", timeout=90),
    Req("GET", crs(T)),
    Req("GET", f"{CRDS}/{T}.{G}"),
]

# --- the plain kinds the machinery leans on ----------------------------------------------------------------

SEQUENCES["configmap_secret_machinery"] = [
    Req("POST", CM, {"metadata": {"name": "frozen"}, "data": {"a": "1"}, "immutable": True},
        pick=("data", "immutable")),
    Req("PATCH", CM + "/frozen", {"data": {"a": "2"}}, MERGE),
    Req("PATCH", CM + "/frozen", {"immutable": False}, MERGE),
    Req("PATCH", CM + "/frozen", {"metadata": {"labels": {"ok": "yes"}}}, MERGE, pick=("metadata.labels", "data")),
    Req("POST", CM, {"metadata": {"name": "badkey"}, "data": {"not valid!": "x"}}),
    Req("POST", CM, {"metadata": {"name": "dup"}, "data": {"a": "1"}, "binaryData": {"a": "AAE="}}),
    Req("POST", NSP + "/secrets", {"metadata": {"name": "s1"}, "stringData": {"user": "admin"},
                                   "data": {"pw": "c2VjcmV0"}}, pick=("data", "type", "stringData")),
    Req("POST", NSP + "/secrets", {"metadata": {"name": "s2"}, "data": {"pw": "%%%not-base64"}}),
    Req("POST", NSP + "/secrets", {"metadata": {"name": "s3"}, "type": "kubernetes.io/tls", "data": {}}),
    Req("PATCH", NSP + "/secrets/s1", {"type": "Other"}, MERGE),
    Req("PATCH", NSP + "/secrets/s1", {"stringData": {"user": "root"}}, MERGE, pick=("data",)),
    Req("DELETE", CM, params={"labelSelector": "ok=yes"}, pick=NAMES),
    Req("GET", CM, params={"fieldSelector": "metadata.name!=kube-root-ca.crt"}, pick=NAMES),
]

LEASES = "/apis/coordination.k8s.io/v1/namespaces/{ns}/leases"

SEQUENCES["lease_machinery"] = [
    Req("POST", LEASES, {"metadata": {"name": "leader"}, "spec": {"holderIdentity": "op-1",
                                                                 "leaseDurationSeconds": 15}}, pick=("spec",)),
    Req("POST", LEASES, {"metadata": {"name": "bad"}, "spec": {"leaseDurationSeconds": 0}}),
    Req("POST", LEASES, {"metadata": {"name": "bad2"}, "spec": {"leaseTransitions": -1}}),
    Req("PATCH", LEASES + "/leader", {"spec": {"holderIdentity": "op-2", "leaseTransitions": 1}}, MERGE,
        pick=("spec",)),
    Req("PATCH", LEASES + "/leader", {"spec": {"holderIdentity": "op-3"}}, APPLY, params={"fieldManager": "op-3"},
        pick=("spec", "metadata.managedFields.*.manager")),
    Req("PATCH", LEASES + "/leader", {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                                      "metadata": {"name": "leader"}, "spec": {"holderIdentity": "op-3"}}, APPLY,
        params={"fieldManager": "op-3"}),
    Req("PATCH", LEASES + "/leader", {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                                      "metadata": {"name": "leader"}, "spec": {"holderIdentity": "op-4"}}, APPLY,
        params={"fieldManager": "op-4", "force": "true"}, pick=("spec", "metadata.managedFields.*.manager")),
    Req("GET", LEASES, pick=NAMES + ("kind",)),
    Req("DELETE", LEASES + "/leader", pick=("status",)),
]

SEQUENCES["namespace_terminating"] = [
    Req("POST", "/api/v1/namespaces", {"metadata": {"name": "{ns}-x", "labels": {"blind7": "y"}}},
        pick=("metadata.name", "metadata.labels", "spec", "status")),
    WaitFor("/api/v1/namespaces/{ns}-x/serviceaccounts/default", "metadata.name", "default"),
    Req("POST", "/api/v1/namespaces/{ns}-x/configmaps", {"metadata": {"name": "held", "finalizers": ["blind7.dev/h"]}},
        pick=("metadata.finalizers",)),
    Req("DELETE", "/api/v1/namespaces/{ns}-x", pick=("metadata.name", "spec", "status")),
    Req("POST", "/api/v1/namespaces/{ns}-x/configmaps", {"metadata": {"name": "new"}}),
    WaitFor("/api/v1/namespaces/{ns}-x/configmaps/held", "metadata.deletionTimestamp", "<set>", timeout=60),
    Req("GET", "/api/v1/namespaces/{ns}-x", pick=("status.phase",)),
    Req("PATCH", "/api/v1/namespaces/{ns}-x/configmaps/held", {"metadata": {"finalizers": None}}, MERGE,
        pick=("metadata.name",)),
    WaitGone("/api/v1/namespaces/{ns}-x", timeout=90),
    Req("POST", "/api/v1/namespaces", {"metadata": {"name": "Bad_NS"}}),
    Req("GET", "/api/v1/namespaces", params={"labelSelector": "blind7=y,kubernetes.io/metadata.name={ns}-x"},
        pick=NAMES),
]

# --- list types on writes, validation ratcheting -------------------------------------------------------------

SEQUENCES["cr_list_types_on_write"] = [
    *up(AP, "App", [ver("v1", _APPLIED)]),
    Req("POST", crs(AP), cr("App", "a1", {"ports": [{"name": "a", "port": 1}, {"name": "a", "port": 2}]})),
    Req("POST", crs(AP), cr("App", "a2", {"tags": ["x", "x"]})),
    Req("POST", crs(AP), cr("App", "a3", {"ports": [{"port": 1}]})),
    Req("POST", crs(AP), cr("App", "a4", {"ports": [{"name": "a", "port": 1}], "tags": ["x", "y"],
                                          "args": ["z", "z"]}), pick=("spec",)),
    Req("PATCH", crs(AP, "a4"), {"spec": {"ports": [{"name": "b", "port": 2}]}}, MERGE, pick=("spec.ports",)),
    Req("PATCH", crs(AP, "a4"), [{"op": "add", "path": "/spec/ports/-", "value": {"name": "b", "port": 3}}], JSON),
    Req("PATCH", crs(AP, "a4"), [{"op": "add", "path": "/spec/ports/0", "value": {"name": "c", "port": 3}}], JSON,
        pick=("spec.ports",)),
    Req("PATCH", crs(AP, "a4"), [{"op": "add", "path": "/spec/tags/-", "value": "y"}], JSON),
    Req("PATCH", crs(AP, "a4"), {"spec": {"sel": {"k": "v"}, "env": {"E": "1"}}}, MERGE,
        pick=("spec.sel", "spec.env")),
    Req("PATCH", crs(AP, "a4"), {"spec": {"sel": {"k2": "v2"}, "env": {"E": None}}}, MERGE,
        pick=("spec.sel", "spec.env")),
    Req("GET", crs(AP), pick=NAMES),
    *down(AP),
]

_LAX = root(obj({"name": {"type": "string"}, "n": {"type": "integer"}}))
_STRICT = root(obj({"name": {"type": "string", "maxLength": 5}, "n": {"type": "integer"}}))

SEQUENCES["cr_validation_ratcheting"] = [
    *up("ratchets", "Ratchet", [ver("v1", _LAX)]),
    Req("POST", crs("ratchets"), cr("Ratchet", "r1", {"name": "much-too-long", "n": 1}), pick=("spec",)),
    # tighten v1 and serve a v2 at once: once v2 is served the new schema is in force for v1 too
    Req("PATCH", f"{CRDS}/ratchets.{G}", {"spec": {"versions": [ver("v1", _STRICT), ver("v2", _STRICT,
                                                                                         storage=False)]}},
        MERGE, pick=("metadata.generation",)),
    WaitFor(crs("ratchets", version="v2"), "kind", "RatchetList"),
    Req("PATCH", crs("ratchets", "r1"), {"spec": {"n": 2}}, MERGE, pick=("spec",)),
    Req("PATCH", crs("ratchets", "r1"), {"spec": {"name": "also-too-long"}}, MERGE),
    Req("POST", crs("ratchets"), cr("Ratchet", "r2", {"name": "much-too-long"})),
    Req("PATCH", crs("ratchets", "r1"), {"spec": {"name": "short"}}, MERGE, pick=("spec",)),
    Req("PATCH", crs("ratchets", "r1"), {"spec": {"name": "longer!"}}, MERGE),
    Req("GET", crs("ratchets", "r1", "v2"), pick=("apiVersion", "spec")),
    *down("ratchets"),
]
