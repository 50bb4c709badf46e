"""How a reversible change is remembered on the changed object itself: a label naming the agent (so
one label-selected LIST finds everything an agent holds) and annotations with the original value.

An object is held by at most one agent at a time; other agents leave it alone until it is restored,
so restoring always puts back the value from before any chaos.
"""

from __future__ import annotations

import hashlib
import re
from datetime import datetime
from typing import Any

import orjson

from kubeloop import Obj
from kubeloop.operators.blackadder.schedule import parse_rfc3339

AGENT = "blackadder.io/agent"  # label: which agent holds the object
CHANGED_AT = "blackadder.io/changed-at"  # first change (the restoreAfterSeconds clock starts here)
ORIGINAL_REPLICAS = "blackadder.io/original-replicas"
CHAOS_REPLICAS = "blackadder.io/chaos-replicas"  # what we set last: anything else means someone edited it
ORIGINAL_DATA = "blackadder.io/original-data"  # JSON of the original data, when small enough
BACKUP = "blackadder.io/backup"  # else "<namespace>/<name>" of a backup ConfigMap
CHAOS_DIGEST = "blackadder.io/chaos-digest"  # digest of the data we wrote
BACKUP_FOR = "blackadder.io/backup-for"  # label on backup ConfigMaps: which agent made them
ANNOTATIONS = (CHANGED_AT, ORIGINAL_REPLICAS, CHAOS_REPLICAS, ORIGINAL_DATA, BACKUP, CHAOS_DIGEST)

_LABEL_VALUE = re.compile(r"^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$")


def agent_label(agent: str) -> str:
    """Agent names may be 253 characters, label values only 63: long names are hashed."""
    if _LABEL_VALUE.match(agent):
        return agent
    return "h-" + hashlib.sha256(agent.encode()).hexdigest()[:40]


def holder(obj: Obj) -> str | None:
    return (obj["metadata"].get("labels") or {}).get(AGENT)


def held_by_other(obj: Obj, label: str) -> bool:
    return holder(obj) not in (None, label)


def annotation(obj: Obj, key: str) -> str | None:
    return (obj["metadata"].get("annotations") or {}).get(key)


def changed_at(obj: Obj) -> datetime | None:
    return parse_rfc3339(annotation(obj, CHANGED_AT))


def mark(obj: Obj, label: str, now: str, annotations: dict[str, str | None]) -> dict[str, Any]:
    """The metadata part of a merge patch that marks ``obj`` as held; the first change's originals
    and time are kept, ``annotations`` given as None are left unset."""
    first = holder(obj) is None
    values = {k: v for k, v in annotations.items() if v is not None}
    if not first:  # originals were recorded by the first change: never overwrite them
        values = {k: v for k, v in values.items() if k not in (ORIGINAL_REPLICAS, ORIGINAL_DATA, BACKUP)}
    if first:
        values[CHANGED_AT] = now
    return {"resourceVersion": obj["metadata"]["resourceVersion"], "labels": {AGENT: label},
            "annotations": values}


def unmark(obj: Obj) -> dict[str, Any]:
    """The metadata part of a merge patch that drops every mark (null deletes a key)."""
    return {"resourceVersion": obj["metadata"]["resourceVersion"], "labels": {AGENT: None},
            "annotations": dict.fromkeys(ANNOTATIONS)}


def digest(data: dict[str, str] | None) -> str:
    return hashlib.sha256(orjson.dumps(data or {}, option=orjson.OPT_SORT_KEYS)).hexdigest()[:32]
