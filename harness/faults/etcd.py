"""etcd's v3 JSON gateway on the LocalCluster's client port (127.0.0.1): the current revision, and a
physical compaction — after which no read or watch can start from an older revision."""

from __future__ import annotations

import base64
import json
import urllib.request
from typing import Any


def _post(port: int, path: str, body: dict[str, Any], timeout: float = 30.0) -> dict[str, Any]:
    request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"}, method="POST")
    with urllib.request.urlopen(request, timeout=timeout) as resp:  # noqa: S310 (loopback only)
        return json.loads(resp.read() or b"{}")


def etcd_port(cluster: Any) -> int:
    """The client port of a LocalCluster's etcd."""
    return int(cluster._state()["ports"]["etcd"])


def revision(port: int) -> int:
    """etcd's current revision (the header of any range request)."""
    key = base64.b64encode(b"/registry/").decode()
    answer = _post(port, "/v3/kv/range", {"key": key, "limit": 1, "keys_only": True})
    return int(answer["header"]["revision"])


def compact(port: int, rev: int | None = None) -> int:
    """Compacts (physically) up to ``rev`` (default: the current revision); returns the revision."""
    rev = rev or revision(port)
    _post(port, "/v3/kv/compaction", {"revision": str(rev), "physical": True}, timeout=120)
    return rev
