"""An in-memory store of plain-dict objects with secondary indexes."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

from kubeloop.client.api import Obj

IndexFunc = Callable[[Obj], Iterable[str]]


def object_key(obj: Obj) -> str:
    """``namespace/name`` for namespaced objects, ``name`` otherwise (client-go's key format)."""
    meta = obj.get("metadata") or {}
    ns = meta.get("namespace")
    return f"{ns}/{meta.get('name')}" if ns else str(meta.get("name"))


def split_key(key: str) -> tuple[str | None, str]:
    ns, _, name = key.rpartition("/")
    return (ns or None), name


def by_namespace(obj: Obj) -> Iterable[str]:
    ns = (obj.get("metadata") or {}).get("namespace")
    return (ns,) if ns else ()


def by_uid(obj: Obj) -> Iterable[str]:
    uid = (obj.get("metadata") or {}).get("uid")
    return (uid,) if uid else ()


def by_controller_uid(obj: Obj) -> Iterable[str]:
    """The UID of the object's controller (the ownerReference with ``controller: true``)."""
    for ref in (obj.get("metadata") or {}).get("ownerReferences") or ():
        if ref.get("controller"):
            return (ref["uid"],)
    return ()


def by_owner_uid(obj: Obj) -> Iterable[str]:
    return tuple(ref["uid"] for ref in (obj.get("metadata") or {}).get("ownerReferences") or ())


DEFAULT_INDEXES: dict[str, IndexFunc] = {
    "namespace": by_namespace, "uid": by_uid, "controller": by_controller_uid, "owner": by_owner_uid,
}


class Store:
    """Objects by key, plus named indexes (value → keys). Not thread-safe; asyncio needs none."""

    def __init__(self, indexes: dict[str, IndexFunc] | None = None) -> None:
        self._items: dict[str, Obj] = {}
        self._index_funcs: dict[str, IndexFunc] = dict(DEFAULT_INDEXES)
        self._index_funcs.update(indexes or {})
        # Indexes are built on first use and kept up to date from then on: an upsert pays only for
        # the indexes someone reads (a controller that never asks for owned objects pays for none).
        self._indexes: dict[str, dict[str, set[str]]] = {}

    def __len__(self) -> int:
        return len(self._items)

    def __iter__(self) -> Iterator[Obj]:
        return iter(list(self._items.values()))

    def __contains__(self, key: str) -> bool:
        return key in self._items

    def keys(self) -> list[str]:
        return list(self._items)

    def get(self, key: str) -> Obj | None:
        return self._items.get(key)

    def get_by(self, name: str, namespace: str | None = None) -> Obj | None:
        return self._items.get(f"{namespace}/{name}" if namespace else name)

    def add_index(self, name: str, func: IndexFunc) -> None:
        """Adds an index (built when first read, from everything stored by then)."""
        if name in self._index_funcs:
            if self._index_funcs[name] is not func:
                raise ValueError(f"index {name!r} already exists with another function")
            return
        self._index_funcs[name] = func

    def by_index(self, name: str, value: str) -> list[Obj]:
        keys = self._index(name).get(value, ())
        return [self._items[k] for k in keys if k in self._items]

    def index_keys(self, name: str, value: str) -> list[str]:
        return list(self._index(name).get(value, ()))

    def _index(self, name: str) -> dict[str, set[str]]:
        index = self._indexes.get(name)
        if index is None:
            if name not in self._index_funcs:
                raise KeyError(f"no index {name!r}; known: {', '.join(sorted(self._index_funcs))} "
                               "(add one with add_index or informer(..., indexes={name: func}))")
            index = self._indexes[name] = {}
            for key, obj in self._items.items():
                self._index_one(name, key, obj)
        return index

    def upsert(self, obj: Obj) -> Obj | None:
        """Stores an object; returns the one it replaced."""
        key = object_key(obj)
        old = self._items.get(key)
        if old is not None:
            self._unindex(key, old)
        self._items[key] = obj
        for name in self._indexes:
            self._index_one(name, key, obj)
        return old

    def remove(self, key: str) -> Obj | None:
        old = self._items.pop(key, None)
        if old is not None:
            self._unindex(key, old)
        return old

    def _index_one(self, name: str, key: str, obj: Obj) -> None:
        for value in self._index_funcs[name](obj):
            self._indexes[name].setdefault(value, set()).add(key)

    def _unindex(self, key: str, obj: Obj) -> None:
        for name, index in self._indexes.items():
            for value in self._index_funcs[name](obj):
                keys = index.get(value)
                if keys is not None:
                    keys.discard(key)
                    if not keys:
                        del index[value]
