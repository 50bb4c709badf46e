"""Where an agent may act and what is there: the namespaces in scope, and pods, Deployments and
ConfigMaps listed with server-side selectors (``metadata.namespace!=…``), never filtered afterwards."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from kubeloop import Client, Obj, Resource, builtin, selectors
from kubeloop.operators.blackadder.models import ChaosAgentSpec
from kubeloop.operators.blackadder.safety import Settings, opted_out, untouchable


@dataclass(frozen=True)
class Scope:
    """``excluded``: namespaces never touched; ``namespaces``: the only ones to look in (a
    namespaceSelector was given), or None for every namespace but the excluded."""

    excluded: tuple[str, ...]
    namespaces: tuple[str, ...] | None = None

    def field_selector(self, *extra: str) -> str | None:
        terms = [*extra]
        if self.namespaces is None:
            terms += [f"metadata.namespace!={ns}" for ns in self.excluded]
        return ",".join(terms) or None


async def scope_of(client: Client, spec: ChaosAgentSpec, settings: Settings) -> Scope:
    """Excluded: the system namespaces, the operator's own, the spec's and any opted-out namespace.
    One LIST of namespaces (with the agent's namespaceSelector, if any) finds the opted-out ones."""
    listed = (await client.list(builtin.NAMESPACE, label_selector=selectors.to_query(spec.namespaceSelector)))["items"]
    excluded = {*settings.excluded_namespaces, *spec.excludedNamespaces,
                *(ns["metadata"]["name"] for ns in listed if opted_out(ns))}
    if spec.namespaceSelector is None:
        return Scope(tuple(sorted(excluded)))
    chosen = sorted(ns["metadata"]["name"] for ns in listed if ns["metadata"]["name"] not in excluded)
    return Scope(tuple(sorted(excluded)), tuple(chosen))


async def list_targets(client: Client, res: Resource, scope: Scope, settings: Settings, *,
                       label_selector: str | None = None, field_selector: tuple[str, ...] = ()) -> list[Obj]:
    """Every object of ``res`` in scope, sorted by namespace and name (a deterministic order is what
    makes a seed replayable). With a namespaceSelector each chosen namespace is listed on its own."""
    fields = scope.field_selector(*field_selector)
    if scope.namespaces is None:
        pages = [await client.list(res, None, label_selector=label_selector, field_selector=fields)]
    else:
        pages = await asyncio.gather(*(client.list(res, ns, label_selector=label_selector,
                                                   field_selector=fields) for ns in scope.namespaces))
    items = [obj for page in pages for obj in page.get("items") or ()]
    for obj in items:  # list items carry no apiVersion/kind, but events and patches want them
        obj.setdefault("apiVersion", res.api_version)
        obj.setdefault("kind", res.kind)
    return sorted((o for o in items if o["metadata"].get("namespace") not in scope.excluded
                   and not untouchable(o, settings)), key=object_key)


def object_key(obj: Obj) -> tuple[str, str]:
    meta = obj["metadata"]
    return meta.get("namespace") or "", meta["name"]
