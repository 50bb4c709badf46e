"""Typed custom resources: one pydantic model per group/version/kind, declared with class keywords.

```python
class ChaosAgent(CustomResource, group="blackadder.io", version="v1alpha1", kind="ChaosAgent"):
    spec: ChaosAgentSpec
    status: ChaosAgentStatus | None = None
```
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from types import ModuleType
from typing import Annotated, Any, ClassVar, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, model_validator

from kubeloop.client.resource import Resource
from kubeloop.resources import condition_rules as rules
from kubeloop.resources.schema import list_type

__all__ = [
    "CRDInfo", "Condition", "Conditions", "CustomResource", "ObjectMeta", "OwnerReference", "PrinterColumn",
    "Scale",
    "custom_resources_in", "default_plural", "printer_column", "scale_subresource",
]

Scope = Literal["Namespaced", "Cluster"]
_COLUMN_TYPES = frozenset({"integer", "number", "string", "boolean", "date"})
_STANDARD_VERBS = frozenset(
    {"get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"})


def default_plural(kind: str) -> str:
    """English plural of the lowercased kind: Policy → policies, Ingress → ingresses, Gateway → gateways."""
    word = kind.lower()
    if re.search(r"[^aeiou]y$", word):
        return word[:-1] + "ies"
    if re.search(r"(s|x|z|ch|sh)$", word):
        return word + "es"
    return word + "s"


@dataclass(frozen=True, slots=True)
class PrinterColumn:
    """One ``additionalPrinterColumns`` entry (what ``kubectl get`` shows)."""

    name: str
    json_path: str
    type: str = "string"
    description: str | None = None
    format: str | None = None
    priority: int = 0

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "type": self.type, "jsonPath": self.json_path}
        if self.description:
            out["description"] = self.description
        if self.format:
            out["format"] = self.format
        if self.priority:
            out["priority"] = self.priority
        return out


def printer_column(name: str, json_path: str, *, type: str = "string", description: str | None = None,
                   format: str | None = None, priority: int = 0) -> PrinterColumn:
    """A ``kubectl get`` column; priority > 0 columns only show with ``-o wide``."""
    if type not in _COLUMN_TYPES:
        raise ValueError(f"printer column {name!r}: type must be one of {sorted(_COLUMN_TYPES)}, "
                         f"not {type!r}")
    if not json_path.startswith("."):
        raise ValueError(f"printer column {name!r}: json_path must start with '.', e.g. '.spec.replicas'")
    if priority < 0:
        raise ValueError(f"printer column {name!r}: priority must be >= 0")
    return PrinterColumn(name, json_path, type, description, format, priority)


@dataclass(frozen=True, slots=True)
class Scale:
    """The ``scale`` subresource: where replicas live, so ``kubectl scale`` and HPAs work."""

    spec_replicas_path: str = ".spec.replicas"
    status_replicas_path: str = ".status.replicas"
    label_selector_path: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out = {"specReplicasPath": self.spec_replicas_path, "statusReplicasPath": self.status_replicas_path}
        if self.label_selector_path:
            out["labelSelectorPath"] = self.label_selector_path
        return out


def scale_subresource(spec_replicas: str = ".spec.replicas", status_replicas: str = ".status.replicas",
                      label_selector: str | None = None) -> Scale:
    return Scale(spec_replicas, status_replicas, label_selector)


@dataclass(frozen=True, slots=True)
class CRDInfo:
    """What the class keywords declared: names (shared by all versions) and per-version flags."""

    group: str
    version: str
    kind: str
    plural: str
    singular: str
    list_kind: str
    scope: Scope = "Namespaced"
    short_names: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    printer_columns: tuple[PrinterColumn, ...] = ()
    served: bool = True
    storage: bool = True
    deprecated: bool = False
    deprecation_warning: str | None = None
    scale: Scale | None = None
    status_subresource: bool | None = None  # None: on when the model has a ``status`` field

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}"

    @property
    def crd_name(self) -> str:
        return f"{self.plural}.{self.group}"

    @property
    def namespaced(self) -> bool:
        return self.scope == "Namespaced"


# Flags that describe one version; a subclass declaring a new version starts them from the defaults.
_VERSION_FIELDS = ("served", "storage", "deprecated", "deprecation_warning")
# Names derived from the kind; a subclass declaring a new kind derives them again.
_KIND_FIELDS = ("plural", "singular", "list_kind")


class OwnerReference(BaseModel):
    model_config = ConfigDict(extra="allow")

    apiVersion: str
    kind: str
    name: str
    uid: str
    controller: bool | None = None
    blockOwnerDeletion: bool | None = None


class ObjectMeta(BaseModel):
    """The commonly used part of ``metadata``; anything else the server sends is kept (extra="allow")."""

    model_config = ConfigDict(extra="allow")

    name: str | None = None
    generateName: str | None = None
    namespace: str | None = None
    uid: str | None = None
    resourceVersion: str | None = None
    generation: int | None = None
    labels: dict[str, str] | None = None
    annotations: dict[str, str] | None = None
    ownerReferences: list[OwnerReference] | None = None
    finalizers: list[str] | None = None
    creationTimestamp: datetime | None = None
    deletionTimestamp: datetime | None = None
    deletionGracePeriodSeconds: int | None = None


# Same shape as the dicts kubeloop.helpers.conditions writes, with metav1.Condition's bounds. The
# docstring ends up in CRDs.
class Condition(BaseModel):
    """One aspect of the object's current state."""

    type: str = Field(max_length=rules.TYPE_MAX, pattern=rules.TYPE_PATTERN)
    status: Literal["True", "False", "Unknown"]
    reason: str | None = Field(None, min_length=1, max_length=rules.REASON_MAX, pattern=rules.REASON_PATTERN)
    message: str | None = Field(None, max_length=rules.MESSAGE_MAX)
    lastTransitionTime: datetime | None = None
    observedGeneration: int | None = Field(None, ge=0)


# Keyed by type, so server-side apply merges conditions instead of replacing the whole list.
Conditions = Annotated[list[Condition], list_type("map", "type"), Field(max_length=rules.CONDITIONS_MAX)]


class CustomResource(BaseModel):
    """Base of typed custom resources. Subclass with class keywords (see module docstring).

    A subclass without ``group``/``version``/``kind`` (and no declared parent) is an abstract base.
    """

    __kubeloop_crd__: ClassVar[CRDInfo | None] = None

    # Explicit aliases so a user's alias_generator (to_camel, ...) cannot rename the envelope.
    apiVersion: str = Field(default="", alias="apiVersion")
    kind: str = Field(default="", alias="kind")
    metadata: ObjectMeta = Field(default_factory=ObjectMeta, alias="metadata")

    def __init_subclass__(
        cls, *, group: str | None = None, version: str | None = None, kind: str | None = None,
        plural: str | None = None, singular: str | None = None, list_kind: str | None = None,
        scope: Scope | None = None, short_names: Sequence[str] | None = None,
        categories: Sequence[str] | None = None, printer_columns: Iterable[PrinterColumn] | None = None,
        served: bool | None = None, storage: bool | None = None, deprecated: bool | None = None,
        deprecation_warning: str | None = None, scale: Scale | None = None,
        status_subresource: bool | None = None, **kwargs: Any,
    ) -> None:
        super().__init_subclass__(**kwargs)
        given: dict[str, Any] = {
            "group": group, "version": version, "kind": kind, "plural": plural, "singular": singular,
            "list_kind": list_kind, "scope": scope, "served": served, "storage": storage,
            "deprecated": deprecated, "deprecation_warning": deprecation_warning, "scale": scale,
            "status_subresource": status_subresource,
            "short_names": None if short_names is None else tuple(short_names),
            "categories": None if categories is None else tuple(categories),
            "printer_columns": None if printer_columns is None else tuple(printer_columns),
        }
        given = {k: v for k, v in given.items() if v is not None}
        parent = cls.__kubeloop_crd__  # inherited from the nearest declared base, if any
        if parent is None and not given:
            return  # abstract base
        if parent is not None:
            base = {f: getattr(parent, f) for f in CRDInfo.__dataclass_fields__}
            if given.get("kind", parent.kind) != parent.kind:
                for f in _KIND_FIELDS:
                    base.pop(f)
            if given.get("version", parent.version) != parent.version:
                for f in _VERSION_FIELDS:
                    base.pop(f)
            given = {**base, **given}
        missing = [k for k in ("group", "version", "kind") if not given.get(k)]
        if missing:
            raise TypeError(f"{cls.__name__}: custom resources need group, version and kind "
                            f"(missing: {', '.join(missing)})")
        k = given["kind"]
        given.setdefault("plural", default_plural(k))
        given.setdefault("singular", k.lower())
        given.setdefault("list_kind", f"{k}List")
        if given.get("scope", "Namespaced") not in ("Namespaced", "Cluster"):
            raise TypeError(f"{cls.__name__}: scope must be 'Namespaced' or 'Cluster', "
                            f"not {given['scope']!r}")
        if not k[:1].isupper():
            raise TypeError(f"{cls.__name__}: kind must be CamelCase, like 'ChaosAgent', not {k!r}")
        if not re.fullmatch(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?", given["plural"]):
            raise TypeError(f"{cls.__name__}: plural must be a lowercase DNS label, not {given['plural']!r}")
        cls.__kubeloop_crd__ = CRDInfo(**given)

    @model_validator(mode="before")
    @classmethod
    def _default_type_meta(cls, data: Any) -> Any:
        info = cls.__kubeloop_crd__
        if info is None or not isinstance(data, Mapping):
            return data
        if not (data.get("apiVersion") and data.get("kind")):
            data = {**data, "apiVersion": data.get("apiVersion") or info.api_version,
                    "kind": data.get("kind") or info.kind}
        return data

    # -- class-level API

    @classmethod
    def crd_info(cls) -> CRDInfo:
        """The group, version, kind, scope and CRD options this model was declared with."""
        if cls.__kubeloop_crd__ is None:
            raise TypeError(f"{cls.__name__} is an abstract CustomResource (no group/version/kind declared)")
        return cls.__kubeloop_crd__

    @classmethod
    def has_status_subresource(cls) -> bool:
        """Whether the CRD serves ``/status``: as declared, else when the model has a ``status`` field."""
        flag = cls.crd_info().status_subresource
        return ("status" in cls.model_fields) if flag is None else flag

    @classmethod
    def resource(cls) -> Resource:
        """The ``Resource`` the client addresses this kind by, known without a discovery call."""
        info = cls.crd_info()
        subresources = {"status"} if cls.has_status_subresource() else set()
        if info.scale is not None:
            subresources.add("scale")
        return Resource(info.group, info.version, info.plural, info.kind, namespaced=info.namespaced,
                        verbs=_STANDARD_VERBS, subresources=frozenset(subresources),
                        short_names=info.short_names, singular=info.singular)

    # -- instances

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Self:
        """Parse an object as the server returns it; unknown fields are ignored (or kept where allowed)."""
        return cls.model_validate(data)

    def to_dict(self, *, exclude_unset: bool = False) -> dict[str, Any]:
        """JSON-ready dict by alias, without ``None`` values; ``exclude_unset`` suits server-side apply."""
        out = self.model_dump(mode="json", by_alias=True, exclude_none=True, exclude_unset=exclude_unset)
        out["apiVersion"], out["kind"] = self.apiVersion, self.kind
        return out

    def owner_reference(self, *, controller: bool = True,
                        block_owner_deletion: bool = True) -> OwnerReference:
        """A reference to this object for the ``ownerReferences`` of objects it owns."""
        if not self.metadata.name or not self.metadata.uid:
            raise ValueError("owner_reference() needs an object read from the server (name and uid set)")
        return OwnerReference(apiVersion=self.apiVersion, kind=self.kind, name=self.metadata.name,
                              uid=self.metadata.uid, controller=controller,
                              blockOwnerDeletion=block_owner_deletion)


def custom_resources_in(module: ModuleType) -> list[type[CustomResource]]:
    """The declared (non-abstract) custom resources defined in ``module``, in definition order."""
    return [value for value in vars(module).values()
            if isinstance(value, type) and issubclass(value, CustomResource)
            and value.__kubeloop_crd__ is not None and value.__module__ == module.__name__]
