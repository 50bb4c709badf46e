"""managedFields: who owns which field, for Update writes and server-side apply (SSA).

Simple but faithful for what kubeloop's operators do:
- Field paths are tuples of ``f:<key>`` (map members), ``v:<json>`` (``metadata.finalizers``, a set) and
  ``k:<json>`` (``metadata.ownerReferences`` keyed by uid); every other list is atomic (one leaf).
- An Update takes over the fields it added or changed (from every other manager, without conflicts) and
  lists the map nodes it created (``"."`` in fieldsV1), as the real server does.
- An Apply owns the leaves of its configuration; another manager's field with a different value is a
  conflict (409, the real message) unless ``force``; a field it owned and now omits is removed when no
  other manager owns it.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from kubeloop.testing.apiserver.errors import StatusError

Path = tuple[str, ...]
STRIPPED = {("f:apiVersion",), ("f:kind",), ("f:metadata",)} | {
    ("f:metadata", f"f:{k}") for k in ("name", "namespace", "uid", "resourceVersion", "generation",
                                       "creationTimestamp", "managedFields", "deletionTimestamp",
                                       "deletionGracePeriodSeconds", "selfLink")}


def _elem(parent: Path, item: Any) -> tuple[str, bool]:
    """The path element of a list item and whether the list is set/keyed (not atomic)."""
    if parent == ("f:metadata", "f:finalizers"):
        return "v:" + json.dumps(item, separators=(",", ":")), True
    if parent == ("f:metadata", "f:ownerReferences") and isinstance(item, dict) and "uid" in item:
        return "k:" + json.dumps({"uid": item["uid"]}, separators=(",", ":")), True
    return "", False


def walk(obj: Any, prefix: Path = ()) -> dict[Path, Any]:
    """Every node's path → its value (maps, leaves, set/keyed list elements)."""
    out: dict[Path, Any] = {}
    if isinstance(obj, dict):
        for key, value in obj.items():
            path = (*prefix, f"f:{key}")
            out[path] = value
            if isinstance(value, dict) or (isinstance(value, list) and value and _elem(path, value[0])[1]):
                out.update(walk(value, path))
    elif isinstance(obj, list):
        for item in obj:
            name, _ = _elem(prefix, item)
            out[(*prefix, name)] = item
            if isinstance(item, dict):
                out.update(walk(item, (*prefix, name)))
    return {p: v for p, v in out.items() if p not in STRIPPED}


def _is_leaf(value: Any, path: Path) -> bool:
    if isinstance(value, dict):
        return not value
    if isinstance(value, list):
        return not value or not _elem(path[:-1] if path[-1][:2] in ("v:", "k:") else path, value[0])[1]
    return True


def applied_set(config: dict[str, Any]) -> set[Path]:
    """What an Apply owns: the leaves of its configuration and list elements."""
    nodes = walk(config)
    return {p for p, v in nodes.items() if _is_leaf(v, p) or p[-1][:2] in ("v:", "k:")}


def update_changes(old: dict[str, Any] | None, new: dict[str, Any]) -> tuple[set[Path], set[Path]]:
    """(added or changed paths, removed paths) between two states of an object."""
    before, after = walk(old or {}), walk(new)
    changed = {p for p, v in after.items() if p not in before or (_is_leaf(v, p) and before[p] != v)}
    removed = set(before) - set(after)
    return changed, removed


def to_fields_v1(paths: set[Path]) -> dict[str, Any]:
    tree: dict[str, Any] = {}
    for path in sorted(paths):
        node = tree
        for part in path:
            node = node.setdefault(part, {})
    for path in paths:  # a node that is itself owned and has owned children gets "."
        node = tree
        for part in path:
            node = node[part]
        if node and "." not in node:
            node["."] = {}
    return _sorted(tree)


def _sorted(tree: dict[str, Any]) -> dict[str, Any]:
    return {k: _sorted(tree[k]) for k in sorted(tree)}


def from_fields_v1(tree: dict[str, Any], prefix: Path = ()) -> set[Path]:
    out: set[Path] = set()
    for key, sub in tree.items():
        if key == ".":
            out.add(prefix)
            continue
        path = (*prefix, key)
        if not sub:
            out.add(path)
        else:
            out |= from_fields_v1(sub, path)
    return out


def dotted(path: Path) -> str:
    """``.data.a`` / ``.metadata.finalizers[="x"]``: how conflict messages name a field."""
    out = ""
    for part in path:
        kind, _, rest = part.partition(":")
        out += f".{rest}" if kind == "f" else f"[={rest}]" if kind == "v" else f"[{rest}]"
    return out


class Managers:
    """The managedFields entries of one object, as (manager, operation, apiVersion, subresource) → paths."""

    def __init__(self, entries: list[dict[str, Any]] | None) -> None:
        self.sets: dict[tuple[str, str, str, str], set[Path]] = {}
        self.times: dict[tuple[str, str, str, str], str] = {}
        for e in entries or []:
            key = (e.get("manager", ""), e.get("operation", ""), e.get("apiVersion", ""), e.get("subresource", ""))
            self.sets[key] = from_fields_v1(e.get("fieldsV1") or {})
            self.times[key] = e.get("time", "")

    def update(self, manager: str, api_version: str, sub: str, old: dict | None, new: dict, now: str) -> None:
        changed, removed = update_changes(old, new)
        alive = set(walk(new))
        for key in self.sets:
            self.sets[key] = (self.sets[key] - changed) & alive
        key = (manager, "Update", api_version, sub)
        self.sets[key] = ((self.sets.get(key, set()) | changed) - removed) & alive
        if changed or removed:
            self.times[key] = now
        self._prune()

    def apply(self, manager: str, api_version: str, sub: str, live: dict, config: dict, force: bool,
              now: str) -> dict:
        """Merges ``config`` into ``live`` as ``manager``; returns the new object or raises the conflict."""
        mine = applied_set(config)
        key = (manager, "Apply", api_version, sub)
        cfg_nodes, live_nodes = walk(config), walk(live)
        conflicts: list[tuple[Path, str]] = []
        for other, owned in self.sets.items():
            if other == key:
                continue
            for path in sorted(mine & owned):
                if path in live_nodes and live_nodes[path] != cfg_nodes.get(path):
                    conflicts.append((path, other[0]))
        if conflicts and not force:
            raise _conflict_error(conflicts)
        for other in self.sets:
            if other != key:
                lost = {p for p, m in conflicts if m == other[0]}
                self.sets[other] -= lost
        result = _apply_merge(live, config)
        others = set().union(*(s for k, s in self.sets.items() if k != key)) if len(self.sets) > 1 or (
            self.sets and key not in self.sets) else set()
        for path in sorted(self.sets.get(key, set()) - mine, key=len, reverse=True):
            if path not in others and not any(o[:len(path)] == path for o in others):
                _delete_path(result, path)
        self.sets[key] = mine
        self.times[key] = now
        alive = set(walk(result))
        for k in self.sets:
            self.sets[k] &= alive
        self._prune()
        return result

    def _prune(self) -> None:
        for key in [k for k, s in self.sets.items() if not s]:
            del self.sets[key]
            self.times.pop(key, None)

    def entries(self) -> list[dict[str, Any]]:
        def order(k: tuple[str, str, str, str]) -> tuple[int, str, str]:
            return (0 if k[1] == "Apply" else 1, self.times.get(k, ""), k[0])
        out = []
        for key in sorted(self.sets, key=order):
            entry: dict[str, Any] = {"manager": key[0], "operation": key[1], "apiVersion": key[2],
                                     "time": self.times.get(key, ""), "fieldsType": "FieldsV1",
                                     "fieldsV1": to_fields_v1(self.sets[key])}
            if key[3]:
                entry["subresource"] = key[3]
            out.append(entry)
        return out


def _conflict_error(conflicts: list[tuple[Path, str]]) -> StatusError:
    causes = [{"reason": "FieldManagerConflict", "message": f'conflict with "{m}"', "field": dotted(p)}
              for p, m in conflicts]
    managers = sorted({m for _, m in conflicts})
    if len(conflicts) == 1:
        path, manager = conflicts[0]
        text = f'Apply failed with 1 conflict: conflict with "{manager}": {dotted(path)}'
    else:
        parts = []
        for manager in managers:
            fields = "\n".join(f"- {dotted(p)}" for p, m in conflicts if m == manager)
            parts.append(f'conflicts with "{manager}":\n{fields}')
        text = f"Apply failed with {len(conflicts)} conflicts: " + "\n".join(parts)
    return StatusError(409, "Conflict", text, {"causes": causes})


def _apply_merge(live: Any, config: Any, path: Path = ()) -> Any:
    if isinstance(config, dict) and isinstance(live, dict):
        out = dict(live)
        for k, v in config.items():
            out[k] = _apply_merge(live.get(k), v, (*path, f"f:{k}"))
        return out
    if isinstance(config, list) and isinstance(live, list) and config and _elem(path, config[0])[1]:
        out = [copy.deepcopy(x) for x in live]
        for item in config:
            if item not in out:
                out.append(copy.deepcopy(item))
        return out
    return copy.deepcopy(config)


def _delete_path(obj: Any, path: Path) -> None:
    cur = obj
    for part in path[:-1]:
        kind, _, rest = part.partition(":")
        if kind != "f" or not isinstance(cur, dict) or rest not in cur:
            return
        cur = cur[rest]
    kind, _, rest = path[-1].partition(":")
    if kind == "f" and isinstance(cur, dict):
        cur.pop(rest, None)
    elif kind in ("v", "k") and isinstance(cur, list):
        target = json.loads(rest)
        for i, item in enumerate(cur):
            if item == target or (isinstance(item, dict) and isinstance(target, dict)
                                  and all(item.get(a) == b for a, b in target.items())):
                del cur[i]
                break
