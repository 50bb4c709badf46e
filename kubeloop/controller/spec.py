"""What a controller is, as one immutable value: ``ControllerSpec``.

The spec says what to reconcile, with what triggers and in what manner; a ``Controller`` is built from a
spec plus what only exists at run time (client, cache, event recorder). ``Operator`` decorators produce
specs, operators adapt them to their settings with ``dataclasses.replace`` (see ``Operator.configure``),
the manager builds the controllers when it starts.

- Frozen: a spec is never patched after the fact; a changed controller is a new spec.
- Complete: every field a controller reads comes from here, so the spec is the one copy of them.
- Checked at construction: a spec that exists can be built (a finalizer comes with its cleanup).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kubeloop.client.api import Obj, ResourceRef
from kubeloop.controller.predicates import Predicate
from kubeloop.reconcile.result import Request, Result

if TYPE_CHECKING:
    from kubeloop.reconcile.context import Context

ReconcileFn = Callable[[Any, "Context"], Awaitable[Result | None]]
CleanupFn = Callable[[Any, "Context"], Awaitable[Result | None]]
DeletedFn = Callable[[Request, "Context | None"], Awaitable[None]]
DaemonFn = Callable[[Any, "Context"], Awaitable[Any]]
ErrorPolicy = Callable[[Exception, Request, int], float | None]
Mapper = Callable[[Obj], Iterable[str | Request | Obj]]
Transform = Callable[[Obj], Obj]  # rewrites an object before the cache stores it (the informer's, shared)
IndexFunc = Callable[[Obj], Iterable[str]]  # an informer index: the values an object is found under

# Workers per controller. They are coroutines that spend their time waiting on the API server, so
# 16 cost next to nothing; with 4, a burst of events queued behind the round-trips (stream p99 twice
# the framework-free loop's in bench/). One key is still never reconciled twice at once.
DEFAULT_CONCURRENCY = 16


def default_error_policy(error: Exception, request: Request, failures: int) -> float | None:
    """An error policy is called with each failure and ``failures``, the key's consecutive failed
    reconciles including this one (1 the first time; back to 0 after a success), and returns the delay
    before the retry in seconds, ``0`` to drop the key without a word (an error to ignore), or
    ``GIVE_UP`` to stop: the object gets a Warning Event and a ``Stalled`` condition and is left until
    it changes (see ``kubeloop.controller.giveup``). Kopf's ``retries=3, backoff=1.0`` is
    ``lambda error, request, failures: GIVE_UP if failures >= 3 else 1.0``.

    This default returns None = requeue with the queue's per-key backoff: the short transient schedule for errors about
    the environment (``kubeloop.client.is_transient``), the exponential one (up to 5 minutes) for the rest."""
    return None


@dataclass(frozen=True)
class Watch:
    """A secondary trigger: events of ``resource`` map to primary keys. ``mapper=None`` means "owned":
    the child's controller ownerReference names the primary.

    ``transform`` and ``indexes`` are the watched informer's, declared here where it is asked for: the
    transform rewrites every object before it is cached (one per informer, the same function wherever
    the informer is watched, else the manager refuses to start), the indexes are looked up with
    ``informer.store.by_index(name, value)`` (e.g. from the mapper)."""

    resource: ResourceRef
    mapper: Mapper | None = None
    predicates: tuple[Predicate, ...] = ()
    label_selector: str | None = None
    field_selector: str | None = None
    metadata_only: bool = False
    all_namespaces: bool = False  # watch every namespace even when the manager is limited to some
    transform: Transform | None = None
    indexes: Mapping[str, IndexFunc] = field(default_factory=dict, hash=False)


@dataclass(frozen=True)
class ControllerSpec:
    """One controller, described: reconcile ``resource`` with ``reconcile`` (given the ``model`` built
    from the cached dict, or the dict when ``model`` is None), woken by its own events that pass
    ``predicates``, by ``owns`` (children, by controller ownerReference) and ``watches``; a ``resync``
    re-checks every object; ``concurrency`` workers, never two at once on one key.

    ``finalizer`` + ``cleanup``: the finalizer goes on before the first reconcile and comes off once
    ``cleanup`` succeeds. ``on_deleted(request, None)`` runs once the object is gone from the cache.
    A failed reconcile goes through ``error_policy``, by default to the per-key backoff (``backoff_*``).
    ``daemons``: async functions run as a task per object (kubeloop.controller.daemons), from its first
    successful reconcile until it is deleted, its key moves to another replica or the controller stops.
    ``skip_own_writes``: the echo of this controller's own writes to the object does not wake it (see
    ``kubeloop.controller.echo``). ``field_manager`` names its writes (default: ``name``).
    ``transform`` and ``indexes``: the primary informer's, as ``Watch``'s.
    """

    name: str
    resource: ResourceRef
    reconcile: ReconcileFn
    model: Any = None
    owns: tuple[ResourceRef, ...] = ()
    watches: tuple[Watch, ...] = ()
    predicates: tuple[Predicate, ...] = ()
    label_selector: str | None = None
    field_selector: str | None = None
    resync: float | None = 600.0
    concurrency: int = DEFAULT_CONCURRENCY
    finalizer: str | None = None
    cleanup: CleanupFn | None = None
    on_deleted: DeletedFn | None = None
    daemons: tuple[DaemonFn, ...] = ()
    error_policy: ErrorPolicy = default_error_policy
    backoff_base: float = 0.005  # per-key failure backoff: base * 2**failures seconds, up to the cap
    backoff_cap: float = 300.0
    field_manager: str = ""
    skip_own_writes: bool = True
    transform: Transform | None = None
    indexes: Mapping[str, IndexFunc] = field(default_factory=dict, hash=False)

    def __post_init__(self) -> None:
        # Sequences become tuples so that a spec is immutable all the way down (lists passed by users
        # would otherwise stay shared and changeable).
        for name in ("owns", "watches", "predicates", "daemons"):
            object.__setattr__(self, name, tuple(getattr(self, name)))
        if not self.name:
            raise ValueError(f"ControllerSpec for {self.resource}: name must not be empty")
        if not callable(self.reconcile):
            raise ValueError(f"ControllerSpec {self.name}: reconcile must be an async function, "
                             f"got {self.reconcile!r}")
        if (self.finalizer is None) != (self.cleanup is None):
            raise ValueError(f"ControllerSpec {self.name}: finalizer and cleanup go together "
                             f"(finalizer={self.finalizer!r}, cleanup={self.cleanup!r})")
        if self.concurrency < 1:
            raise ValueError(f"ControllerSpec {self.name}: concurrency must be at least 1, "
                             f"got {self.concurrency}")
        if not self.field_manager:
            object.__setattr__(self, "field_manager", self.name)
