"""CustomResourceDefinition (apiextensions.k8s.io/v1) objects from ``CustomResource`` classes."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from kubeloop.resources.model import CRDInfo, CustomResource
from kubeloop.resources.schema import crd_root_schema

__all__ = ["crd_for", "crds_for", "version_priority"]

# Names every version of one CRD must agree on (they live in spec.names / spec.scope, not per version).
_SHARED = ("group", "kind", "plural", "scope", "singular", "list_kind", "short_names", "categories")


def version_priority(version: str) -> tuple[int, int, int, str]:
    """Sort key for Kubernetes' version order: v2, v1, v1beta2, v1beta1, v1alpha1, then others by name."""
    m = re.fullmatch(r"v(\d+)(?:(alpha|beta)(\d+))?", version)
    if m is None:
        return (3, 0, 0, version)
    stability = {"alpha": 2, None: 0, "beta": 1}[m.group(2)]
    return (stability, -int(m.group(1)), -int(m.group(3) or 0), "")


def _label(cls: type[CustomResource]) -> str:
    return f"{cls.__name__} ({cls.crd_info().version})"


def _check(models: tuple[type[CustomResource], ...]) -> list[tuple[type[CustomResource], CRDInfo]]:
    if not models:
        raise ValueError("crd_for() needs at least one CustomResource class")
    pairs = []
    for cls in models:
        if not (isinstance(cls, type) and issubclass(cls, CustomResource)) or cls.__kubeloop_crd__ is None:
            raise ValueError(f"{cls!r} is not a declared CustomResource; subclass CustomResource with "
                             "group=, version= and kind= keywords")
        pairs.append((cls, cls.__kubeloop_crd__))
    first_cls, first = pairs[0]
    if "." not in first.group:
        raise ValueError(f"{first_cls.__name__}: group {first.group!r} must be a domain with at least one "
                         f"dot, e.g. '{first.group}.example.com'")
    seen: dict[str, type[CustomResource]] = {}
    for cls, info in pairs:
        for name in _SHARED:
            if getattr(info, name) != getattr(first, name):
                raise ValueError(
                    f"{cls.__name__} declares {name}={getattr(info, name)!r} but {first_cls.__name__} "
                    f"declares {getattr(first, name)!r}; all versions of {first.crd_name} must share it: "
                    f"set {name}={getattr(first, name)!r} on {cls.__name__} (or put it in another CRD)")
        if info.version in seen:
            raise ValueError(f"{seen[info.version].__name__} and {cls.__name__} both declare version "
                             f"{info.version!r} of {first.crd_name}; give each class its own version")
        seen[info.version] = cls
        if info.deprecation_warning and not info.deprecated:
            raise ValueError(f"{cls.__name__}: deprecation_warning needs deprecated=True")
    storage = [cls for cls, info in pairs if info.storage]
    if not storage:
        raise ValueError(f"none of {', '.join(_label(c) for c, _ in pairs)} is the storage version of "
                         f"{first.crd_name}; pass storage=True to exactly one")
    if len(storage) > 1:
        raise ValueError(f"{' and '.join(_label(c) for c in storage)} are all storage versions of "
                         f"{first.crd_name}; pass storage=False to all but one")
    return sorted(pairs, key=lambda p: version_priority(p[1].version))


def _version(cls: type[CustomResource], info: CRDInfo) -> dict[str, Any]:
    out: dict[str, Any] = {"name": info.version, "served": info.served, "storage": info.storage}
    if info.deprecated:
        out["deprecated"] = True
        if info.deprecation_warning:
            out["deprecationWarning"] = info.deprecation_warning
    out["schema"] = {"openAPIV3Schema": crd_root_schema(cls)}
    subresources: dict[str, Any] = {}
    if cls.has_status_subresource():
        subresources["status"] = {}
    if info.scale is not None:
        subresources["scale"] = info.scale.to_dict()
    if subresources:
        out["subresources"] = subresources
    if info.printer_columns:
        out["additionalPrinterColumns"] = [c.to_dict() for c in info.printer_columns]
    return out


def crd_for(*models: type[CustomResource]) -> dict[str, Any]:
    """One CRD holding every given version of a single group/kind.

    Versions are listed highest priority first. Versions with different schemas are converted by the
    server with the ``None`` strategy (only apiVersion changes); a conversion webhook is not generated.
    """
    pairs = _check(models)
    info = pairs[0][1]
    names: dict[str, Any] = {"kind": info.kind, "listKind": info.list_kind, "plural": info.plural,
                             "singular": info.singular}
    if info.short_names:
        names["shortNames"] = list(info.short_names)
    if info.categories:
        names["categories"] = list(info.categories)
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": info.crd_name},
        "spec": {
            "group": info.group,
            "names": names,
            "scope": info.scope,
            "versions": [_version(cls, i) for cls, i in pairs],
        },
    }


def crds_for(models: Iterable[type[CustomResource]]) -> list[dict[str, Any]]:
    """One CRD per group/kind among ``models`` (versions of a kind grouped together), sorted by name."""
    groups: dict[tuple[str, str], list[type[CustomResource]]] = {}
    for cls in models:
        info = cls.crd_info()
        bucket = groups.setdefault((info.group, info.kind), [])
        if cls not in bucket:
            bucket.append(cls)
    crds = [crd_for(*classes) for classes in groups.values()]
    return sorted(crds, key=lambda c: c["metadata"]["name"])
