"""Server-side sharding's pure parts (kubeloop/sharding/serverside.py): which informers may be filtered,
the selector of a slot set, re-listing only on a change, and the server's selector size limit. (On a real
KEP-5866 API server: tests/integration/test_sharding_serverside.py.)"""

from __future__ import annotations

from typing import Any

from kubeloop.sharding.hashing import SPACE, fnv1a64, parse_selector
from kubeloop.sharding.ring import DEFAULT_SLOTS, assign, slot_of
from kubeloop.sharding.serverside import SERVER_SELECTOR_LIMIT, ServerSide, primary_only, ranges_of, selector_for


class FakeWatcher:
    def __init__(self) -> None:
        self.options = type("Options", (), {"shard_selector": None})()


class FakeInformer:
    def __init__(self, *handlers: Any) -> None:
        self.handlers = handlers
        self.watchers = [FakeWatcher()]
        self.resource = "test/v1/things"
        self.reselected: list[tuple[str | None, Any]] = []

    def reselect(self, text: str | None, keep: Any) -> None:
        self.reselected.append((text, keep))


class Ctl:
    def _on_primary(self, event: Any) -> None: ...

    def _on_owned(self, event: Any) -> None: ...


def test_only_informers_that_feed_primaries_alone_are_filtered() -> None:
    a, b = Ctl(), Ctl()
    assert primary_only(FakeInformer(a._on_primary, b._on_primary), [a, b])
    assert not primary_only(FakeInformer(a._on_primary, b._on_owned), [a, b]), "b's children"
    assert not primary_only(FakeInformer(a._on_primary, lambda e: None), [a, b]), "someone else's"


def test_follow_sets_the_first_selector_then_relists_only_on_a_change() -> None:
    informer = FakeInformer()
    side = ServerSide([informer], 8)  # type: ignore[list-item]
    assert side.follow({0, 1, 5})
    assert informer.reselected == [], "before the start: only the options are set"
    field, ranges = parse_selector(informer.watchers[0].options.shard_selector)
    assert ranges == [(0, SPACE // 4), (5 * SPACE // 8, 6 * SPACE // 8)]
    assert not side.follow({0, 1, 5}) and not side.follow(set()), "same or empty: no relist"
    assert side.follow({2})
    text, keep = informer.reselected[-1]
    assert parse_selector(text)[1] == [(2 * SPACE // 8, 3 * SPACE // 8)]
    uids = [f"uid-{i}" for i in range(200)]
    assert {u for u in uids if keep({"metadata": {"uid": u}})} == {u for u in uids if slot_of(fnv1a64(u), 8) == 2}
    assert side.follow(set(range(8))) and informer.reselected[-1][0] is None, "everything: no selector"


def test_every_member_selector_fits_the_server_limit() -> None:
    """The API server parses at most 100,000 characters of CEL (1.36.3). The worst case is every other
    slot (1024 ranges); real assignments of 2 and 3 members are far below it."""
    worst = selector_for(set(range(0, DEFAULT_SLOTS, 2)), DEFAULT_SLOTS)
    assert worst is not None and len(worst) < SERVER_SELECTOR_LIMIT
    for members in (["a", "b"], ["a", "b", "c"]):
        ring = assign(members)
        for m in members:
            text = selector_for(set(ring.slots_of(m)), DEFAULT_SLOTS)
            assert text is not None and len(text) < SERVER_SELECTOR_LIMIT / 2
    assert ranges_of({0, 1, 2}, 8) == [(0, 3 * SPACE // 8)]


async def test_a_server_that_ignores_the_selector_keeps_client_side_mode() -> None:
    """The FakeClient ignores shardSelector like a server without the gate: with an object the content
    check says no, without one the Leases' missing echo does."""
    from kubeloop.cache import Informer
    from kubeloop.cache.informer import InformerKey
    from kubeloop.resources.builtin import CONFIG_MAP
    from kubeloop.sharding.runtime import LEASES
    from kubeloop.sharding.serverside import filters, served
    from kubeloop.testing.fakeclient import FakeClient

    client = FakeClient({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "namespace": "ns"}})
    full, empty = (Informer(client, InformerKey(CONFIG_MAP, (ns,))) for ns in ("ns", "other"))
    assert await filters(client, full) is False
    assert await filters(client, empty) is None
    assert await served(client, [full, empty], LEASES, "ns") == []
