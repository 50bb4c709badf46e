"""Live members from their Leases, and the handoff of slots between members, as pure state transitions.

Each replica renews its own Lease (labelled ``LABEL=<operator>``) with leader election's timings; the
annotation ``HOLDS`` lists the slots (:mod:`kubeloop.sharding.ring`) it reconciles or is about to.
One **tick** of a member = one fresh list of the Leases, then one write of its own Lease:

- **fence**: a member whose last successful renewal is ``renew_deadline`` old holds nothing (it stops
  reconciling, and :meth:`Member.active` is empty from that instant, so writes are checked against it);
- **release**: slots the assignment no longer gives it are stopped *before* the write that drops them
  from ``HOLDS``: a published ``HOLDS`` always covers what the member reconciles;
- **claim, then verify**: a wanted slot no live member claims is *claimed* (written to ``HOLDS``); on the
  next tick, whose list is read after that write, it *starts* only if still no other live member claims
  it, else the claim is withdrawn. Of two members claiming one slot at once, at least one sees the other
  (both wrote before reading), so at most one starts;
- **expiry** (as in ``kubeloop/manager/leader.py``): a Lease not seen to change for its duration *on the
  observer's clock* is dead, and its claims are void. The observer saw the last renewal no earlier than
  it happened, and renew_deadline < lease_duration, so the holder has fenced itself by then.

Bounds (tests/unit/test_sharding_membership.py): at no instant is a slot in the ``active`` set of two
running members; once membership settles and members tick each ``retry_period``, every slot is held by
its assigned member within ``lease_duration + 3 * retry_period`` (a dead member's last renewal is seen
up to a period late; one tick claims its slots, the next verifies).

Slot states, per member: ``free → claimed → held → free`` (release) and ``claimed → free`` (conflict,
or no longer wanted); any state ``→ free`` on fence, leave or crash.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from kubeloop.lease import LEASE_DURATION, RENEW_DEADLINE, RETRY_PERIOD
from kubeloop.sharding.ring import DEFAULT_SLOTS, assign

LABEL = "sharding.kubeloop.dev/operator"
HOLDS = "sharding.kubeloop.dev/holds"


@dataclass(frozen=True)
class Timings:
    """Leader election's durations (``LeaderElector``'s defaults), in seconds."""

    lease_duration: float = LEASE_DURATION
    renew_deadline: float = RENEW_DEADLINE
    retry_period: float = RETRY_PERIOD

    def __post_init__(self) -> None:
        if not 0 < self.retry_period < self.renew_deadline < self.lease_duration:
            raise ValueError("lease timings need 0 < retry_period < renew_deadline < lease_duration "
                             f"(got {self.retry_period}, {self.renew_deadline}, {self.lease_duration})")


def encode_slots(slots: Iterable[int]) -> str:
    """``{0,1,2,7}`` → ``"0-2,7"`` (runs keep the annotation short: a member's slots cluster)."""
    runs: list[list[int]] = []
    for s in sorted(set(slots)):
        if runs and s == runs[-1][1] + 1:
            runs[-1][1] = s
        else:
            runs.append([s, s])
    return ",".join(f"{a}-{b}" if a != b else str(a) for a, b in runs)


def decode_slots(text: str) -> set[int]:
    out: set[int] = set()
    for part in filter(None, text.split(",")):
        a, _, b = part.partition("-")
        try:
            lo, hi = int(a), int(b or a)
        except ValueError:
            raise ValueError(f"annotation {HOLDS}: {part!r} is not a slot or a slot range like 3-9") from None
        out.update(range(lo, hi + 1))
    return out


@dataclass
class LeaseObserver:
    """One member's view of the others: which are live, and what each claims.

    Expiry is judged on the observer's own clock, from when it first saw a Lease's current content,
    never from the ``renewTime`` written by another machine's clock.
    """

    operator: str
    default_duration: float = LEASE_DURATION
    _seen: dict[str, tuple[Any, float]] = field(default_factory=dict)  # lease name → (content, seen at)

    def observe(self, leases: Iterable[Mapping[str, Any]], now: float) -> dict[str, set[int]]:
        """Live identity → claimed slots, from a fresh list of Leases."""
        live: dict[str, set[int]] = {}
        current = {}
        for lease in leases:
            meta, spec = lease.get("metadata") or {}, lease.get("spec") or {}
            if (meta.get("labels") or {}).get(LABEL) != self.operator or not spec.get("holderIdentity"):
                continue  # another operator's, or released on a clean shutdown
            holds = (meta.get("annotations") or {}).get(HOLDS, "")
            content = (spec.get("renewTime"), spec.get("holderIdentity"), holds)
            name = meta.get("name", "")
            old = self._seen.get(name)
            seen_at = old[1] if old and old[0] == content else now
            current[name] = (content, seen_at)
            if now - seen_at < (spec.get("leaseDurationSeconds") or self.default_duration):
                live[spec["holderIdentity"]] = decode_slots(holds)
        self._seen = current
        return live


@dataclass
class Member:
    """One replica's side of the protocol; the caller does the I/O around :meth:`tick`."""

    identity: str
    timings: Timings = field(default_factory=Timings)
    slots: int = DEFAULT_SLOTS
    held: set[int] = field(default_factory=set)  # reconciling these now
    claimed: set[int] = field(default_factory=set)  # in the last write, confirmed; verified next tick
    _pending: set[int] = field(default_factory=set)  # claims of the write under way
    _assigned: tuple[frozenset[str], frozenset[int]] = (frozenset(), frozenset())  # members → our slots
    last_renew: float | None = None

    @property
    def wanted(self) -> set[int]:
        """The slots the ring gave this member at the last tick (what it holds once handoffs settle)."""
        return set(self._assigned[1])

    def predict(self, live: Iterable[str]) -> set[int]:
        """The slots it would be given among ``live`` and itself (before its first tick)."""
        return self._wanted(frozenset(live) | {self.identity})

    def active(self, now: float) -> set[int]:
        """The slots it may reconcile (and write for) at ``now``: nothing once its renewal is too old."""
        return self.held if self._renewed_within(now) else set()

    def tick(self, live: Mapping[str, set[int]], now: float) -> set[int]:
        """One round, given the live members' claims read *now*; returns the ``HOLDS`` to write."""
        if not self._renewed_within(now):
            self.held, self.claimed = set(), set()  # fenced: another member may already own them
        others = {s for who, claims in live.items() if who != self.identity for s in claims}
        wanted = self._wanted(frozenset(live) | {self.identity})
        self.held &= wanted  # release: stop first, the write below then drops them
        # Claims are checked only by the list that follows the write that published them: if that
        # write's reply was lost, a later write may have landed without them, so they are void.
        verified, self.claimed = self.claimed & wanted, set()
        self.held |= verified - others
        self._pending = {s for s in wanted - self.held - others if s not in verified}
        return self.held | self._pending

    def renewed(self, sent_at: float) -> None:
        """The write of the last :meth:`tick`'s result succeeded (a failed one: no call).

        ``sent_at`` is when the write was *sent*: the fence then runs from no later than the moment
        others first see the renewal, however slow the reply.
        """
        self.last_renew, self.claimed = sent_at, self._pending

    def leave(self) -> None:
        """Clean shutdown: stop everything (then the caller releases or deletes the Lease)."""
        self.held, self.claimed, self._pending = set(), set(), set()

    def _wanted(self, members: frozenset[str]) -> set[int]:
        """This member's slots among ``members``, recomputed only when they change (0.7 s at 200)."""
        if self._assigned[0] != members:
            self._assigned = (members, frozenset(assign(members, self.slots).slots_of(self.identity)))
        return set(self._assigned[1])

    def _renewed_within(self, now: float) -> bool:
        return self.last_renew is not None and now - self.last_renew < self.timings.renew_deadline
