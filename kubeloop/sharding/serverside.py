"""Server-side sharding (KEP-5866): each replica lists and watches only the hash ranges it is assigned.

- **Probed once at start**, per sharded resource: a one-item list with a whole-space ``shardSelector``.
  A built-in kind's list echoes it in ``metadata.shardInfo``; a custom resource's does not (1.36.3), so
  one of its objects is listed again by name under a selector that excludes it; an empty collection is
  judged by the Leases' echo. An older server, or one without the ``ShardedListAndWatch`` gate, ignores
  the parameter, and the resource stays client-side (every replica caches every object: correct,
  without the memory win). The log says which mode is in force.
- **Which informers**: a controller's primary informer, when nothing else subscribes to it. Children
  are keyed by their *owner's* uid, which the server cannot hash (it hashes an object's own uid or
  namespace), and an informer shared with another controller's owned/watched kinds must stay whole:
  those stay client-side-filtered.
- **Selector = the assignment**: the slots the ring gives this member among the live members
  (``Member.wanted``), a superset of what it holds or claims. It changes only with membership, so one
  relist per ring change; a newcomer's keys are cached before its claim is verified.
- **Order on a change**: the round releases and drains first, writes its Lease, then reselects. A key
  leaves the cache only after its reconciles finished; the gate (``owns``) still guards every reconcile
  and write, so a cache wider than the held slots is never acted on.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from kubeloop.client import ApiError, Client
from kubeloop.sharding.hashing import SPACE, Range, fnv1a64, hex_bound, merge, parse_shard_info, selector
from kubeloop.sharding.ring import owns, slot_bounds

if TYPE_CHECKING:
    from kubeloop.cache import Informer
    from kubeloop.controller import Controller

log = logging.getLogger("kubeloop.sharding")

FIELD = "object.metadata.uid"
# A selector any KEP-5866 server accepts and that keeps every object: the probe's.
WHOLE = f"shardRange({FIELD}, '{hex_bound(0)}', '{hex_bound(SPACE)}')"


# The API server parses at most this many characters of a CEL expression (1.36.3; a longer selector is
# refused with 500 "expression code point size exceeds limit"). 2048 slots need at most ~81,000.
SERVER_SELECTOR_LIMIT = 100_000


def ranges_of(slots: Iterable[int], total: int) -> list[Range]:
    """The merged hash ranges of ``slots`` out of ``total``."""
    return merge(slot_bounds(s, total) for s in slots)


def selector_for(slots: set[int], total: int) -> str | None:
    """The ``shardSelector`` of ``slots``; None for the whole space (no parameter at all)."""
    return selector(ranges_of(slots, total), FIELD) or None


def primary_only(informer: Informer, primaries: Sequence[Controller]) -> bool:
    """Whether every subscriber of ``informer`` is a controller's primary handler (safe to filter)."""
    return all(getattr(h, "__self__", None) in primaries and getattr(h, "__name__", "") == "_on_primary"
               for h in informer.handlers)


async def _first_page(client: Client, resource: Any, namespace: str | None, **kw: Any) -> dict[str, Any]:
    async for page in client.list_pages(resource, namespace, limit=1, **kw):
        return page  # the rest is not fetched (the generator is closed when collected)
    return {}


async def gate_on(client: Client, leases: Any, namespace: str) -> bool:
    """Whether the API server has ShardedListAndWatch on: a built-in list (the Leases the members list
    anyway) echoes the selector in ``metadata.shardInfo``."""
    return parse_shard_info(await _first_page(client, leases, namespace, shard_selector=WHOLE)) is not None


async def filters(client: Client, informer: Informer) -> bool | None:
    """Does the server filter ``informer``'s resource by shard? None: cannot tell (no object to test).

    Built-in resources echo ``shardInfo``. Custom resources are filtered *without* the echo (1.36.3), so
    one object is listed again by name under a selector that excludes its hash: filtered, it is gone.
    """
    ns = informer.watchers[0].options.namespace
    page = await _first_page(client, informer.resource, ns, shard_selector=WHOLE)
    if parse_shard_info(page) is not None:
        return True
    items = page.get("items") or []
    if not items or not items[0].get("metadata", {}).get("uid"):
        return None
    meta = items[0]["metadata"]
    h = fnv1a64(meta["uid"])
    others = selector([r for r in ((0, h), (h + 1, SPACE)) if r[0] < r[1]], FIELD)
    fields = ",".join(f"metadata.{k}={meta[k]}" for k in ("name", "namespace") if meta.get(k))
    again = await _first_page(client, informer.resource, meta.get("namespace"), field_selector=fields,
                              shard_selector=others)
    return not again.get("items")


async def served(client: Client, informers: Sequence[Informer], leases: Any, namespace: str) -> list[Informer]:
    """The informers whose resource the server filters; a server that refuses the probe (an error) or
    ignores it keeps them client-side. An empty collection is judged by the gate (``gate_on``)."""
    out: list[Informer] = []
    try:
        gate: bool | None = None
        for informer in informers:
            verdict = await filters(client, informer)
            if verdict is None:
                gate = await gate_on(client, leases, namespace) if gate is None else gate
                verdict = gate
            if verdict:
                out.append(informer)
    except (ApiError, OSError, TimeoutError) as exc:
        log.warning("sharding: the shardSelector probe failed (%s); filtering on the client", exc)
        return []
    return out


class ServerSide:
    """The informers this member filters on the server, and their current selector."""

    def __init__(self, informers: Sequence[Informer], slots: int) -> None:
        self.informers = list(informers)
        self.slots = slots
        self.current: frozenset[int] | None = None

    def follow(self, wanted: set[int]) -> bool:
        """Points the informers at ``wanted`` slots if they changed; True if they were re-listed.
        An empty assignment keeps the last one (a fenced or lone member has nothing better to cache)."""
        if not self.informers or not wanted or frozenset(wanted) == self.current:
            return False
        ranges = ranges_of(wanted, self.slots)
        text = selector_for(wanted, self.slots)
        if text is not None and len(text) > SERVER_SELECTOR_LIMIT:  # only with far more slots than 2048
            log.error("sharding: a selector of %d ranges is %d characters, over the API server's %d: "
                      "caching every object instead", len(ranges), len(text), SERVER_SELECTOR_LIMIT)
            text = None
            ranges = [(0, SPACE)]

        def keep(obj: dict[str, Any]) -> bool:
            uid = (obj.get("metadata") or {}).get("uid")
            return isinstance(uid, str) and owns(ranges, fnv1a64(uid))

        first = self.current is None
        self.current = frozenset(wanted)
        for informer in self.informers:
            if first:  # not started yet: just set the selector of its first list
                for watcher in informer.watchers:
                    watcher.options.shard_selector = text
            else:
                informer.reselect(text, keep)
        log.info("sharding: %s %d slots in %d ranges (selector %d bytes) for %s",
                 "listing" if first else "re-listing", len(wanted), len(ranges), len(text or ""),
                 ", ".join(str(i.resource) for i in self.informers))
        return True
