"""Content hashes: one per referenced object (over its data and binaryData, nothing else) and one
combined per workload, plus the informer transform that keeps Secret contents out of memory."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import orjson

from kubeloop import Obj

DIGESTS = "reloaderDigests"  # what a transformed ConfigMap/Secret carries instead of its data
ABSENT = "absent"  # the hash of an optional object that does not exist
PREFIX = 16  # hex digits of a per-object hash recorded on the workload (64 bits: enough to see a change)
_FIELDS = ("data", "binaryData")


def value_digests(obj: Obj) -> dict[str, dict[str, str]]:
    """``{"data": {key: sha256(value)}, "binaryData": {...}}``; a transformed object has them already."""
    if DIGESTS in obj:
        digests: dict[str, dict[str, str]] = obj[DIGESTS]
        return digests
    return {f: {k: _sha(str(v)) for k, v in (obj.get(f) or {}).items()} for f in _FIELDS}


def without_data(obj: Obj) -> Obj:
    """Informer transform for ConfigMaps and Secrets: metadata and per-key digests, never the values —
    so no Secret content is ever cached, logged or printed. (The cache drops managedFields first.)"""
    out = {k: v for k, v in obj.items() if k not in (*_FIELDS, "stringData")}
    out[DIGESTS] = value_digests(obj)
    return out


def object_hash(kind: str, name: str, obj: Obj | None, keys: Iterable[str] | None = None) -> str:
    """sha256 over a canonical encoding (sorted JSON) of the object's data and binaryData, limited to
    ``keys`` if given. Labels, annotations and resourceVersion are not part of it: only data rolls."""
    if obj is None:
        return ABSENT
    digests = value_digests(obj)
    if keys is not None:
        wanted = set(keys)
        digests = {f: {k: v for k, v in d.items() if k in wanted} for f, d in digests.items()}
    return _sha(orjson.dumps({"kind": kind, "name": name, **digests}, option=orjson.OPT_SORT_KEYS).decode())


@dataclass(frozen=True)
class Fingerprint:
    """The hashes of every tracked object of one workload, by ``Kind/name``."""

    sources: Mapping[str, str]

    @property
    def hash(self) -> str:
        return _sha("\n".join(f"{k}={v}" for k, v in sorted(self.sources.items())))

    def encode(self) -> str:
        """The value of the ``sources`` annotation: ``ConfigMap/a=<prefix>,Secret/b=<prefix>``."""
        return ",".join(f"{k}={v[:PREFIX]}" for k, v in sorted(self.sources.items()))

    def changed_since(self, recorded: Mapping[str, str] | None) -> list[str]:
        """Objects tracked then and now whose contents differ. Objects that only joined or left the set
        (a template edit, an annotation) are not changes: the workload's own rollout covers those.
        Without a record of the objects, everything counts as changed."""
        if recorded is None:
            return sorted(self.sources)
        return sorted(k for k, v in self.sources.items() if k in recorded and v[:PREFIX] != recorded[k])


def decode_sources(value: str | None) -> dict[str, str] | None:
    if value is None:
        return None
    pairs = (item.rpartition("=") for item in value.split(",") if "=" in item)
    return {k: v for k, _, v in pairs}


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()
