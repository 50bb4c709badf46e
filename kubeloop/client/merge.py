"""JSON merge patch (RFC 7386) applied locally, as the API server applies ``type="merge"`` patches: for
predicting what a write will leave (the controller's echo check) and for in-memory fakes."""

from __future__ import annotations

import copy
from typing import Any

# Values that need no copy: immutable, so the result may share them with ``patch``. (Exact types: a
# subclass may carry mutable state.) Copying them cost a ``deepcopy`` call per leaf of every patch.
_IMMUTABLE = frozenset({str, int, float, bool, type(None)})


def merge_patch(target: Any, patch: Any) -> Any:
    """``target`` with ``patch`` applied: objects merge recursively, ``None`` (JSON null) deletes a key,
    anything else (lists included) replaces. Neither argument is changed, and the result shares no
    mutable part with ``patch``."""
    if not isinstance(patch, dict):
        return patch if type(patch) in _IMMUTABLE else copy.deepcopy(patch)
    out = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = merge_patch(out.get(key), value)
    return out
