"""Which ConfigMaps and Secrets a pod template reads: env[].valueFrom, envFrom and volumes (plain and
projected), in containers and init containers alike."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from kubeloop import Obj
from kubeloop.operators.reloader.policy import CONFIG_MAP, SECRET


@dataclass(frozen=True)
class Ref:
    """One referenced object. ``keys`` None means every key (envFrom, a volume without ``items``);
    ``containers`` are the (init) containers that read it, for the env-var strategy."""

    kind: str
    name: str
    keys: frozenset[str] | None = None
    optional: bool = False
    containers: frozenset[str] = frozenset()

    @property
    def id(self) -> str:
        return f"{self.kind}/{self.name}"


def pod_template_refs(template: Obj | None) -> list[Ref]:
    """Every reference of a pod template, one Ref per object (references to the same object merged)."""
    spec = (template or {}).get("spec") or {}
    containers = [*(spec.get("initContainers") or ()), *(spec.get("containers") or ())]
    found: list[Ref] = []
    for container in containers:
        found += _container_refs(container)
    for volume in spec.get("volumes") or ():
        readers = frozenset(c.get("name", "") for c in containers
                            if any(m.get("name") == volume.get("name") for m in c.get("volumeMounts") or ()))
        found += [Ref(r.kind, r.name, r.keys, r.optional, readers) for r in _volume_refs(volume)]
    return merge(found)


def merge(refs: Iterable[Ref]) -> list[Ref]:
    """One Ref per object: keys united (None, "all keys", wins); optional only if every use is."""
    out: dict[str, Ref] = {}
    for ref in refs:
        if not ref.name:
            continue
        seen = out.get(ref.id)
        if seen is None:
            out[ref.id] = ref
            continue
        keys = None if seen.keys is None or ref.keys is None else seen.keys | ref.keys
        out[ref.id] = Ref(ref.kind, ref.name, keys, seen.optional and ref.optional,
                          seen.containers | ref.containers)
    return list(out.values())


def _container_refs(container: Obj) -> Iterator[Ref]:
    name = frozenset((container.get("name", ""),))
    for env in container.get("env") or ():
        source = env.get("valueFrom") or {}
        for field, kind in (("configMapKeyRef", CONFIG_MAP), ("secretKeyRef", SECRET)):
            if ref := source.get(field):
                yield Ref(kind, ref.get("name", ""), frozenset((ref.get("key", ""),)),
                          bool(ref.get("optional")), name)
    for env_from in container.get("envFrom") or ():
        for field, kind in (("configMapRef", CONFIG_MAP), ("secretRef", SECRET)):
            if ref := env_from.get(field):
                yield Ref(kind, ref.get("name", ""), None, bool(ref.get("optional")), name)


def _volume_refs(volume: Obj) -> Iterator[Ref]:
    if cm := volume.get("configMap"):
        yield Ref(CONFIG_MAP, cm.get("name", ""), _item_keys(cm), bool(cm.get("optional")))
    if secret := volume.get("secret"):
        yield Ref(SECRET, secret.get("secretName", ""), _item_keys(secret), bool(secret.get("optional")))
    for source in (volume.get("projected") or {}).get("sources") or ():
        for field, kind in (("configMap", CONFIG_MAP), ("secret", SECRET)):
            if ref := source.get(field):
                yield Ref(kind, ref.get("name", ""), _item_keys(ref), bool(ref.get("optional")))


def _item_keys(source: Obj) -> frozenset[str] | None:
    items = source.get("items")
    return frozenset(i.get("key", "") for i in items) if items else None
