"""kubeloop.sharding.membership: live members from Leases, and handoff without overlap or loss.

The property test plays random join / leave / crash / network cut / heal / renew / clock sequences
against a model API server (a dict of Leases, each write instantly visible to the next list) and checks:

- **exclusive**: at every step, no slot is in the ``active`` set of two running members;
- **complete**: once membership settles and every member ticks each retry period, every slot is held
  by exactly its assigned member within ``lease_duration + 3 * retry_period`` (the dead member's last
  renewal is seen at most one period late, then it is judged expired, then one tick claims and the next
  verifies).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubeloop.sharding.membership import HOLDS, LABEL, LeaseObserver, Member, Timings, decode_slots, encode_slots
from kubeloop.sharding.ring import assign

SLOTS = 16
T = Timings()


@dataclass
class Replica:
    member: Member
    observer: LeaseObserver = field(default_factory=lambda: LeaseObserver("op"))
    running: bool = True  # False once crashed or left
    connected: bool = True
    inflight: tuple[dict[str, Any], float] | None = None  # its Lease write, sent but not yet applied


@dataclass
class World:
    """A model API server: a list sees every applied write; a replica's tick is a list then a write,
    and other replicas' lists and writes may come between the two (that is where claims race)."""

    now: float = 0.0
    leases: dict[str, dict[str, Any]] = field(default_factory=dict)
    replicas: list[Replica] = field(default_factory=list)
    writes: int = 0

    def join(self) -> None:
        self.replicas.append(Replica(Member(f"r{len(self.replicas)}", T, SLOTS)))

    def read(self, r: Replica) -> None:
        """List the Leases and decide; the write goes out, to be applied by :meth:`apply`."""
        if r.running and r.connected and r.inflight is None:
            holds = r.member.tick(r.observer.observe(self.leases.values(), self.now), self.now)
            self.writes += 1
            lease = {"metadata": {"name": r.member.identity, "labels": {LABEL: "op"},
                                  "annotations": {HOLDS: encode_slots(holds)}},
                     "spec": {"holderIdentity": r.member.identity, "renewTime": f"write-{self.writes}",
                              "leaseDurationSeconds": int(T.lease_duration)}}
            r.inflight = (lease, self.now)

    def apply(self, r: Replica, reply: bool = True) -> None:
        """The write lands; without ``reply`` the replica never learns it did (a lost response)."""
        if r.inflight is not None and r.running:
            lease, sent_at = r.inflight
            self.leases[r.member.identity] = lease
            if reply and r.connected:
                r.member.renewed(sent_at)
        r.inflight = None

    def tick(self, r: Replica) -> None:
        self.read(r)
        self.apply(r)

    def leave(self, r: Replica) -> None:
        r.member.leave()
        r.running, r.inflight = False, None
        self.leases.pop(r.member.identity, None)

    def check_exclusive(self) -> None:
        owners: dict[int, str] = {}
        for r in self.replicas:
            if r.running:
                for s in r.member.active(self.now):
                    assert s not in owners, f"slot {s} held by {owners[s]} and {r.member.identity} at {self.now}"
                    owners[s] = r.member.identity


ACTIONS = st.one_of(
    st.tuples(st.sampled_from(["read", "apply", "tick", "lost-reply", "fail"]), st.integers(0, 5)),
    st.tuples(st.just("wait"), st.sampled_from([0.5, 1.0, 2.0, 3.0, 7.0, 11.0, 16.0])),
    st.tuples(st.just("join"), st.just(0)),
    st.tuples(st.sampled_from(["leave", "crash", "cut", "heal"]), st.integers(0, 5)),
)


def _apply(world: World, action: tuple[str, Any]) -> None:
    kind, arg = action
    if kind == "wait":
        world.now += arg
    elif kind == "join":
        if len(world.replicas) < 6:
            world.join()
    elif arg < len(world.replicas):
        r = world.replicas[arg]
        if kind in ("read", "tick"):
            getattr(world, kind)(r)
        elif kind in ("apply", "lost-reply"):
            world.apply(r, reply=kind == "apply")
        elif kind == "fail":
            r.inflight = None  # the write never reached the server
        elif kind == "leave":
            world.leave(r)
        elif kind == "crash":
            r.running = False  # kill -9: reconciles stop with the process; the Lease stays until expiry
        else:
            r.connected = kind == "heal"


def _settle(world: World) -> None:
    """Every running, connected member ticks each retry period; check the bound on unowned time."""
    if not any(r.running and r.connected for r in world.replicas):
        world.join()
    start = world.now
    bound = start + T.lease_duration + 3 * T.retry_period
    while world.now <= bound + T.retry_period:
        for r in world.replicas:
            if r.connected:
                world.apply(r)  # a write still in flight from the random part
                world.tick(r)
            world.check_exclusive()
        if world.now >= bound:
            _assert_complete(world)
        world.now += T.retry_period


def _assert_complete(world: World) -> None:
    live = [r for r in world.replicas if r.running and r.connected]
    wanted = assign([r.member.identity for r in live], SLOTS)
    for r in live:
        assert r.member.active(world.now) == set(wanted.slots_of(r.member.identity)), (
            f"{r.member.identity} at {world.now}: holds {sorted(r.member.active(world.now))}")


@settings(max_examples=1000, deadline=None)
@given(st.lists(ACTIONS, max_size=120))
def test_no_overlap_and_nothing_lost(actions: list[tuple[str, Any]]) -> None:
    world = World()
    world.join()
    for action in actions:
        _apply(world, action)
        world.check_exclusive()
    _settle(world)


def test_a_crashed_member_is_replaced_after_its_lease_expires() -> None:
    world = World()
    world.join()
    world.join()
    a, b = world.replicas
    for _ in range(3):
        world.tick(a)
        world.tick(b)
        world.now += T.retry_period
    assert a.member.held and b.member.held
    a.running = False
    crashed_at = world.now
    while not b.member.active(world.now) == set(range(SLOTS)):
        world.tick(b)
        world.now += T.retry_period
    took = world.now - crashed_at
    assert T.lease_duration <= took <= T.lease_duration + 3 * T.retry_period


def test_a_cut_member_fences_itself_before_anyone_takes_over() -> None:
    m = Member("a", T, SLOTS)
    m.tick({}, 0.0)
    m.renewed(0.0)
    m.tick({"a": set(range(SLOTS))}, 2.0)
    m.renewed(2.0)
    assert m.active(2.0) == set(range(SLOTS))
    assert m.active(2.0 + T.renew_deadline - 0.01) and not m.active(2.0 + T.renew_deadline)


def test_conflicting_claims_both_withdraw() -> None:
    a, b = Member("a", T, 4), Member("b", T, 4)
    a.tick({"a": set()}, 0.0)  # alone: claims all four
    a.renewed(0.0)
    b.tick({"b": set()}, 0.0)  # alone too (had not seen a): claims all four
    b.renewed(0.0)
    both = {"a": a.claimed, "b": b.claimed}
    a.tick(both, 1.0)
    b.tick(both, 1.0)
    assert not a.held and not b.held


def test_observer_uses_its_own_clock_and_ignores_others() -> None:
    obs = LeaseObserver("op")
    lease = {"metadata": {"name": "x", "labels": {LABEL: "op"}, "annotations": {HOLDS: "0-2,5"}},
             "spec": {"holderIdentity": "x", "leaseDurationSeconds": 15, "renewTime": "1999-01-01T00:00:00Z"}}
    other = {"metadata": {"name": "y", "labels": {LABEL: "another"}}, "spec": {"holderIdentity": "y"}}
    released = {"metadata": {"name": "z", "labels": {LABEL: "op"}}, "spec": {"holderIdentity": None}}
    assert obs.observe([lease, other, released], 100.0) == {"x": {0, 1, 2, 5}}  # old renewTime: still live
    assert obs.observe([lease], 114.9) == {"x": {0, 1, 2, 5}}
    assert obs.observe([lease], 115.0) == {}


def test_slot_annotation_round_trip_and_errors() -> None:
    assert encode_slots({7, 0, 1, 2, 9, 10}) == "0-2,7,9-10"
    assert decode_slots("0-2,7,9-10") == {0, 1, 2, 7, 9, 10} and decode_slots("") == set()
    with pytest.raises(ValueError, match="holds: 'x' is not a slot"):
        decode_slots("1,x")


def test_timings_are_checked() -> None:
    with pytest.raises(ValueError, match="renew_deadline < lease_duration"):
        Timings(lease_duration=5, renew_deadline=10, retry_period=2)


def test_a_cut_member_is_replaced_only_after_it_stopped() -> None:
    """B lists every half second (faster than the retry period) while A, cut off, still reconciles."""
    world = World()
    world.join()
    world.join()
    a, b = world.replicas
    for _ in range(3):
        world.tick(a)
        world.tick(b)
        world.now += T.retry_period
    world.tick(a)
    a.connected = False
    cut_at = world.now
    while b.member.active(world.now) != set(range(SLOTS)):
        world.now += 0.5
        world.tick(b)
        world.check_exclusive()
    assert world.now - cut_at >= T.lease_duration


def test_claims_of_an_unconfirmed_write_are_never_started() -> None:
    """A write whose reply was lost may have landed without earlier claims: they must be re-claimed."""
    m = Member("a", T, 4)
    m.tick({"a": set()}, 0.0)  # alone: claims all four, confirmed
    m.renewed(0.0)
    m.tick({"a": set(), "b": set()}, 1.0)  # b appears: a wants half and drops the rest; no reply
    half = m.held | m._pending  # what it wanted (it started these: confirmed claims)
    m.tick({"a": set()}, 2.0)  # b gone again: a wants all four
    assert m.active(2.0) <= half  # the dropped half was not started on the strength of the old claim
