"""Typed state a reconciler keeps per object between its reconciles, in memory.

    pacing = op.state(Pacing)              # declared once, next to the reconciler: a dataclass
    ...
    pace = pacing.of(ctx)                  # this object's Pacing, created with Pacing() on first use

- Per object: each key of each controller has its own instance; two objects never share one.
- Same lifetime as the cache entry: dropped once the object is deleted (its next reconcile finds it
  gone), so a re-created object of the same name starts afresh.
- In memory only: lost on restart, and not shared between replicas. Whatever must survive belongs in
  the object's status; this is for what happens between reconciles (timers, debouncing, what was
  already reported).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Generic, TypeVar

if TYPE_CHECKING:
    from kubeloop.reconcile.context import Context

T = TypeVar("T")


class State(Generic[T]):
    """A kind of per-object state: ``factory()`` makes the first instance for each object (a dataclass
    with defaults, usually); ``of(ctx)`` is the instance of the object ``ctx`` reconciles."""

    def __init__(self, factory: Callable[[], T], name: str = "") -> None:
        if not callable(factory):
            raise TypeError(f"State needs a class or function making the initial state, got {factory!r}")
        self.factory = factory
        self.name = name or getattr(factory, "__name__", repr(factory))

    def of(self, ctx: Context) -> T:
        """This object's state (created on first use, kept until the object is deleted)."""
        slot = ctx.per_object
        if self not in slot:
            slot[self] = self.factory()
        value: T = slot[self]
        return value

    def reset(self, ctx: Context) -> None:
        """Forgets this object's state: the next ``of`` starts from ``factory()`` again."""
        ctx.per_object.pop(self, None)

    def __repr__(self) -> str:
        return f"State({self.name})"
