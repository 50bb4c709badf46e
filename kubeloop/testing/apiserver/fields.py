"""managedFields: who owns which field, for Update writes and server-side apply (SSA).

Simple but faithful for what kubeloop's operators do:
- Field paths are tuples of ``f:<key>`` (map members), ``v:<json>`` (set members: ``metadata.finalizers``,
  a custom resource's ``x-kubernetes-list-type: set``) and ``k:<json>`` (keyed list items:
  ``metadata.ownerReferences`` by uid, a built-in's conditions, containers, volumes, env, mounts and
  ports by their merge keys, a custom resource's ``x-kubernetes-list-type: map`` by its keys); every other
  list is atomic (one leaf), and so are built-in kinds' label selectors.
- An Update takes over the fields it added or changed (from every other manager, without conflicts) and
  lists the map nodes it created (``"."`` in fieldsV1), as the real server does.
- An update of an object without managedFields is not tracked; the first apply to it gives its fields to
  ``before-first-apply`` (the real server's ``skipNonAppliedManager``).
- An Apply owns the leaves of its configuration; another manager's field with a different value is a
  conflict (409, the real message) unless ``force``; a field it owned and now omits is removed when no
  other manager owns it.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

from kubeloop.testing.apiserver.errors import StatusError

Path = tuple[str, ...]
BEFORE_FIRST_APPLY = "before-first-apply"
STRIPPED = {("f:apiVersion",), ("f:kind",), ("f:metadata",)} | {
    ("f:metadata", f"f:{k}") for k in ("name", "namespace", "uid", "resourceVersion", "generation",
                                       "creationTimestamp", "managedFields", "deletionTimestamp",
                                       "deletionGracePeriodSeconds", "selfLink")}


# Built-in lists merged by key (their OpenAPI patch merge keys and list-map keys), by field name; a
# missing key field takes its schema default (a port's protocol).
_LIST_KEYS = {"f:containers": ("name",), "f:initContainers": ("name",), "f:ephemeralContainers": ("name",),
              "f:volumes": ("name",), "f:env": ("name",), "f:volumeMounts": ("mountPath",),
              "f:imagePullSecrets": ("name",), "f:hostAliases": ("ip",), "f:schedulingGates": ("name",)}
_KEY_DEFAULTS = {"protocol": "TCP"}


# How a kind's lists merge: True for a built-in (the tables here), False for no schema (every list atomic),
# or a custom resource's associative lists: path (list elements left out) → key fields, () for a set,
# ``ATOMIC`` for a map with x-kubernetes-map-type atomic.
Typing = bool | dict[Path, tuple[str, ...]]
ATOMIC = ("\0atomic",)


class Keys(tuple[str, ...]):
    """A map list's key fields, with the schema defaults of its items (a key left out takes its default)."""

    defaults: dict[str, Any]

    def __new__(cls, keys: Any, defaults: dict[str, Any]) -> Keys:
        made = super().__new__(cls, tuple(keys))
        made.defaults = defaults
        return made


def custom_lists(schemas: list[dict[str, Any]]) -> dict[Path, tuple[str, ...]]:
    """The ``x-kubernetes-list-type: map`` (with its ``x-kubernetes-list-map-keys``) and ``set`` lists of
    a custom resource's schemas."""
    out: dict[Path, tuple[str, ...]] = {}

    def visit(node: Any, path: Path) -> None:
        if not isinstance(node, dict):
            return
        kind = node.get("x-kubernetes-list-type")
        if kind == "map":
            props = (node.get("items") or {}).get("properties") or {}
            out[path] = Keys(node.get("x-kubernetes-list-map-keys") or (),
                             {k: v["default"] for k, v in props.items() if isinstance(v, dict) and "default" in v})
        elif kind == "set":
            out[path] = ()
        elif node.get("x-kubernetes-map-type") == "atomic" and path:
            out[path] = ATOMIC  # (a map, or a struct, owned whole)
        visit(node.get("items"), path)
        for key, sub in (node.get("properties") or {}).items():
            visit(sub, (*path, f"f:{key}"))

    for schema in schemas:
        visit(schema, ())
    return out


def _list_keys(parent: Path) -> tuple[str, ...] | None:
    if parent[-1:] == ("f:ports",):  # a container's (keyed with its protocol) or a Service's
        return ("containerPort", "protocol") if len(parent) > 2 else ("port", "protocol")
    return _LIST_KEYS.get(parent[-1]) if parent else None


def _key(item: dict[str, Any], keys: tuple[str, ...]) -> str:
    defaults = keys.defaults if isinstance(keys, Keys) else _KEY_DEFAULTS
    return "k:" + json.dumps({k: item.get(k, defaults.get(k)) for k in keys}, sort_keys=True,
                             separators=(",", ":"))


def _elem(parent: Path, item: Any, typed: Typing = False) -> tuple[str, bool]:
    """The path element of a list item and whether the list is set/keyed (not atomic). ``typed``: a
    built-in kind, whose ``status.conditions`` is a list keyed by ``type`` (a CR's is atomic), and whose
    containers, volumes, env, ports... are keyed as its OpenAPI says."""
    if parent == ("f:metadata", "f:finalizers"):
        return "v:" + json.dumps(item, separators=(",", ":")), True
    if parent == ("f:metadata", "f:ownerReferences") and isinstance(item, dict):  # (no uid: refused later)
        return "k:" + json.dumps({"uid": item["uid"]} if "uid" in item else {}, separators=(",", ":")), True
    if isinstance(typed, dict):
        keys = typed.get(tuple(p for p in parent if p.startswith("f:")))
        if keys == ():
            return "v:" + json.dumps(item, separators=(",", ":")), True
        if keys and isinstance(item, dict):
            return _key(item, keys), True
        return "", False
    if typed and parent == ("f:status", "f:conditions") and isinstance(item, dict) and "type" in item:
        return "k:" + json.dumps({"type": item["type"]}, separators=(",", ":")), True
    if typed and parent == ("f:secrets",) and isinstance(item, dict):  # a ServiceAccount's, keyed by name
        return _key(item, ("name",)), True
    keys = _list_keys(parent) if typed and parent[:1] == ("f:spec",) else None
    if keys and isinstance(item, dict):
        return _key(item, keys), True
    return "", False


# Built-in maps owned whole (``+structType=atomic`` LabelSelector and ObjectReference, ``+mapType=atomic``
# selector maps): a
# conflict on one names the map, not a member of it.
ATOMIC_MAPS = frozenset({"f:selector", "f:podSelector", "f:namespaceSelector", "f:labelSelector",
                         "f:involvedObject", "f:regarding", "f:related"})  # (+structType=atomic ObjectReference)


def _atomic(path: Path, typed: Typing) -> bool:
    if isinstance(typed, dict):  # a custom resource's x-kubernetes-map-type: atomic
        return typed.get(tuple(p for p in path if p.startswith("f:"))) == ATOMIC
    # (a ServiceAccount's secrets are ObjectReferences, atomic structs: each element is owned whole)
    return typed is True and bool(path) and (path[-1] in ATOMIC_MAPS or (len(path) == 2 and path[0] == "f:secrets"))


def walk(obj: Any, prefix: Path = (), typed: Typing = False) -> dict[Path, Any]:
    """Every node's path → its value (maps, leaves, set/keyed list elements)."""
    out: dict[Path, Any] = {}
    if isinstance(obj, dict):
        for key, value in obj.items():
            path = (*prefix, f"f:{key}")
            out[path] = value
            if (isinstance(value, dict) and not _atomic(path, typed)) or \
                    (isinstance(value, list) and value and _elem(path, value[0], typed)[1]):
                out.update(walk(value, path, typed))
    elif isinstance(obj, list):
        for item in obj:
            name, _ = _elem(prefix, item, typed)
            out[(*prefix, name)] = item
            # ownerReferences are owned whole: the real server lists no fields inside them
            if isinstance(item, dict) and prefix != ("f:metadata", "f:ownerReferences") and \
                    not _atomic((*prefix, name), typed):
                out.update(walk(item, (*prefix, name), typed))
    return {p: v for p, v in out.items() if p not in STRIPPED}


def _keyed_list(path: Path, items: list[Any], typed: Typing) -> bool:
    """Whether the list at ``path`` is a set or keyed (known from an item, or from the schema when empty)."""
    if items:
        return _elem(path, items[0], typed)[1]
    if isinstance(typed, dict):
        return tuple(p for p in path if p.startswith("f:")) in typed
    return typed is True and path[:1] == ("f:spec",) and bool(_list_keys(path))


def _is_leaf(value: Any, path: Path, typed: Typing) -> bool:
    if isinstance(value, dict):
        return not value or _atomic(path, typed)
    if isinstance(value, list):
        return not _keyed_list(path, value, typed)
    return True


def applied_set(config: dict[str, Any], typed: Typing = False) -> set[Path]:
    """What an Apply owns: the leaves of its configuration and list elements."""
    nodes = walk(config, typed=typed)
    return {p for p, v in nodes.items() if _is_leaf(v, p, typed) or p[-1][:2] in ("v:", "k:")}


def update_changes(old: dict[str, Any] | None, new: dict[str, Any], typed: Typing = False
                   ) -> tuple[set[Path], set[Path]]:
    """(added or changed paths, removed paths) between two states of an object."""
    before, after = walk(old or {}, typed=typed), walk(new, typed=typed)
    changed = {p for p, v in after.items() if p not in before or (_is_leaf(v, p, typed) and before[p] != v)}
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
    """``.data.a`` / ``.metadata.finalizers[="x"]`` / ``.spec.containers[name="web"].image``: how conflict
    messages name a field."""
    out = ""
    for part in path:
        kind, _, rest = part.partition(":")
        if kind == "k":
            out += "[" + ",".join(f"{k}={json.dumps(v)}" for k, v in json.loads(rest).items()) + "]"
        else:
            out += f".{rest}" if kind == "f" else f"[={rest}]"
    return out


Scope = Callable[[Path], bool]


def _everything(path: Path) -> bool:
    return True


class Managers:
    """The managedFields entries of one object, as (manager, operation, apiVersion, subresource) → paths.

    ``typed``: a built-in kind (its ``status.conditions`` is keyed). ``scope``: which paths a write through
    this endpoint may own — the real server resets status for the main resource of a kind with a status
    subresource and everything but status for ``/status``.
    """

    def __init__(self, entries: list[dict[str, Any]] | None, typed: Typing = False, scope: Scope = _everything
                 ) -> None:
        self.typed, self.scope = typed, scope
        self.sets: dict[tuple[str, str, str, str], set[Path]] = {}
        self.times: dict[tuple[str, str, str, str], str] = {}
        for e in entries or []:
            key = (e.get("manager", ""), e.get("operation", ""), e.get("apiVersion", ""), e.get("subresource", ""))
            self.sets[key] = from_fields_v1(e.get("fieldsV1") or {})
            if e.get("time"):
                self.times[key] = e["time"]

    def update(self, manager: str, api_version: str, sub: str, old: dict[str, Any] | None, new: dict[str, Any],
               now: str,
               *, creating: bool = False, track_untracked: bool = False) -> None:
        """Records an Update (``old``: the Go zero value of the kind when ``creating``). Like the real
        server, an update of an object that has no managedFields (created with none) is not tracked."""
        if not creating and old is not None and not self.sets and not track_untracked:
            return
        changed, removed = update_changes(old, new, self.typed)
        changed = {p for p in changed if self.scope(p)}
        for key in self.sets:  # what changed moves to this manager; what went is nobody's
            self.sets[key] -= changed | removed
        key = (manager, "Update", api_version, sub)
        self.sets[key] = (self.sets.get(key, set()) | changed) - removed
        if changed:
            self.times[key] = now
        self._prune()

    def apply(self, manager: str, api_version: str, sub: str, live: dict[str, Any], config: dict[str, Any],
              force: bool, now: str) -> dict[str, Any]:
        """Merges ``config`` into ``live`` as ``manager``; returns the new object or raises the conflict."""
        if live and not self.sets:  # an untracked object: its fields so far belong to "before-first-apply"
            self.update(BEFORE_FIRST_APPLY, api_version, sub, {}, live, now, track_untracked=True)
        mine = {p for p in applied_set(config, self.typed) if self.scope(p)}
        key = (manager, "Apply", api_version, sub)
        # A conflict is a field this apply would add or alter that another manager owns (even a map that
        # manager applied empty: it owns the map as a whole).
        merged = _apply_merge(live, config, typed=self.typed)
        changed, _ = update_changes(live, merged, self.typed)
        conflicts: list[tuple[Path, int, tuple[str, str, str, str]]] = []
        for index, other in enumerate(self._ordered()):
            if other == key:
                continue
            for path in self.sets[other] & changed:
                conflicts.append((path, index, other))
        conflicts.sort()
        if conflicts and not force:
            raise _conflict_error([(p, self._who(o)) for p, _, o in conflicts])
        for path, _, other in conflicts:
            self.sets[other].discard(path)
        result: dict[str, Any] = merged
        others = set().union(*(s for k, s in self.sets.items() if k != key))
        for path in sorted(self.sets.get(key, set()) - mine, key=len, reverse=True):
            # gone from this apply and nobody else's: removed (unless this apply now sets fields inside it)
            if not any(o[:len(path)] == path for o in others | mine):
                _delete_path(result, path)
                if isinstance(self.typed, dict):  # (a custom resource's map left empty, and nobody's, goes too)
                    _drop_empty_parents(result, path, others | mine)
        self.sets[key] = mine
        if result != live or key not in self.times and not live:
            self.times[key] = now
        gone = set(walk(live, typed=self.typed)) - set(walk(result, typed=self.typed))
        for k in self.sets:
            if k != key:
                self.sets[k] -= gone
        self._prune()
        return result

    def _who(self, key: tuple[str, str, str, str]) -> str:
        """How a conflict names a manager: with its subresource, and an Update manager with its version."""
        who = f'"{key[0]}"' + (f' with subresource "{key[3]}"' if key[3] else "")
        return f"{who} using {key[2]}" if key[1] == "Update" else who

    def _prune(self) -> None:
        for key in [k for k, s in self.sets.items() if not s]:
            del self.sets[key]
            self.times.pop(key, None)

    def _ordered(self) -> list[tuple[str, str, str, str]]:
        """The real server's order (sortEncodedManagedFields): Apply before Update, then oldest first (no
        time first), then manager, apiVersion and subresource."""
        return sorted(self.sets, key=lambda k: (k[1], self.times.get(k, ""), k[0], k[2], k[3]))

    def entries(self) -> list[dict[str, Any]]:
        out = []
        for key in self._ordered():
            entry: dict[str, Any] = {"manager": key[0], "operation": key[1], "apiVersion": key[2]}
            if key in self.times:
                entry["time"] = self.times[key]
            entry["fieldsType"] = "FieldsV1"
            entry["fieldsV1"] = to_fields_v1(self.sets[key])
            if key[3]:
                entry["subresource"] = key[3]
            out.append(entry)
        return out


def _conflict_error(conflicts: list[tuple[Path, str]]) -> StatusError:
    causes = [{"reason": "FieldManagerConflict", "message": f"conflict with {m}", "field": dotted(p)}
              for p, m in conflicts]
    if len(conflicts) == 1:
        path, manager = conflicts[0]
        text = f"Apply failed with 1 conflict: conflict with {manager}: {dotted(path)}"
    else:
        parts = []
        for manager in sorted({m for _, m in conflicts}):
            fields = "\n".join(f"- {dotted(p)}" for p, m in conflicts if m == manager)
            parts.append(f"conflicts with {manager}:\n{fields}")
        text = f"Apply failed with {len(conflicts)} conflicts: " + "\n".join(parts)
    return StatusError(409, "Conflict", text, {"causes": causes})


def _apply_merge(live: Any, config: Any, path: Path = (), typed: Typing = False) -> Any:
    if isinstance(config, dict) and isinstance(live, dict) and not _atomic(path, typed):  # (an atomic map: replaced)
        out = dict(live)
        for k, v in config.items():
            out[k] = _apply_merge(live.get(k), v, (*path, f"f:{k}"), typed)
        return out
    if isinstance(config, list) and isinstance(live, list) and _keyed_list(path, config or live, typed):
        # (an empty list applied to a keyed one: the items this apply owned go, by the removal in ``apply``)
        items = [copy.deepcopy(x) for x in live]
        at = {_elem(path, x, typed)[0]: i for i, x in enumerate(items) if isinstance(x, dict)}
        for item in config:
            name = _elem(path, item, typed)[0] if isinstance(item, dict) else ""
            if name.startswith("k:") and name in at and path != ("f:metadata", "f:ownerReferences"):
                items[at[name]] = _apply_merge(items[at[name]], item, (*path, name), typed)
            elif item not in items:
                items.append(copy.deepcopy(item))
        return items
    return copy.deepcopy(config)


def _drop_empty_parents(obj: Any, path: Path, owned: set[Path]) -> None:
    """After ``path`` was removed: each map above it that is now empty and that no manager owns goes."""
    for end in range(len(path) - 1, 0, -1):
        parent = path[:end]
        if parent[-1][:2] != "f:" or parent in owned:
            return
        node: Any = obj
        for part in parent:
            kind, _, rest = part.partition(":")
            node = node.get(rest) if kind == "f" and isinstance(node, dict) else None
        if node != {}:
            return
        _delete_path(obj, parent)


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
