"""RFC 6902 JSON patch from two JSON documents, for mutating webhooks.

- ``diff(old, new)`` returns operations that turn ``old`` into ``new`` exactly: applying them to
  ``old`` gives a document equal to ``new`` *with the same types* (``1`` vs ``1.0`` vs ``true`` differ).
- Objects are compared key by key (``add``/``remove``/``replace``); lists of the same length index by
  index; lists whose length changed are replaced whole (always correct, rarely large for Kubernetes
  objects, and it avoids index shifting that a minimal list diff gets wrong).
- Keys are escaped as JSON pointers (``~`` → ``~0``, ``/`` → ``~1``), so annotation keys such as
  ``example.com/x`` are safe.
- Inputs are never modified; the values in the patch are the ``new`` document's own values.
"""

from __future__ import annotations

import copy
from typing import Any

Op = dict[str, Any]


def pointer(path: tuple[str | int, ...]) -> str:
    """The JSON pointer of a path of keys and indexes."""
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in path)


def diff(old: Any, new: Any) -> list[Op]:
    """The operations that turn ``old`` into ``new``."""
    ops: list[Op] = []
    _diff(old, new, (), ops)
    return ops


def _same_scalar(a: Any, b: Any) -> bool:
    # Python says True == 1 == 1.0; JSON (and the API server) does not.
    return type(a) is type(b) and a == b


def _diff(old: Any, new: Any, path: tuple[str | int, ...], ops: list[Op]) -> None:
    if isinstance(old, dict) and isinstance(new, dict):
        _diff_objects(old, new, path, ops)
    elif isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        for i, (a, b) in enumerate(zip(old, new, strict=True)):
            _diff(a, b, (*path, i), ops)
    elif isinstance(old, dict | list) or isinstance(new, dict | list) or not _same_scalar(old, new):
        ops.append({"op": "replace", "path": pointer(path), "value": new})


def _diff_objects(old: dict[str, Any], new: dict[str, Any], path: tuple[str | int, ...], ops: list[Op]) -> None:
    for key in old:
        if key not in new:
            ops.append({"op": "remove", "path": pointer((*path, key))})
    for key, value in new.items():
        if key not in old:
            ops.append({"op": "add", "path": pointer((*path, key)), "value": value})
        else:
            _diff(old[key], value, (*path, key), ops)



def _unescape(token: str) -> str:
    return token.replace("~1", "/").replace("~0", "~")


def apply(doc: Any, ops: list[Op]) -> Any:
    """A copy of ``doc`` with ``diff``'s operations applied. Missing parent objects are created (the
    operations may come from a fuller reading of the document, e.g. a model with defaults), and removing
    what is not there is a no-op: the result is what the operations mean, not an error."""
    out = copy.deepcopy(doc)
    for op in ops:
        tokens = [_unescape(t) for t in op["path"].split("/")[1:]]
        if not tokens:
            out = copy.deepcopy(op["value"]) if op["op"] != "remove" else None
            continue
        parent = out
        for token in tokens[:-1]:
            key: Any = int(token) if isinstance(parent, list) else token
            if isinstance(parent, dict) and not isinstance(parent.get(key), dict | list):
                parent[key] = {}
            parent = parent[key]
        last: Any = int(tokens[-1]) if isinstance(parent, list) else tokens[-1]
        if op["op"] == "remove":
            if isinstance(parent, dict):
                parent.pop(last, None)
            elif 0 <= last < len(parent):
                del parent[last]
        else:
            parent[last] = copy.deepcopy(op["value"])
    return out
