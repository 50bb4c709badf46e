"""The user-facing API: an ``Operator`` collects reconcilers and handlers with decorators, and
turns them into controllers on one manager.

    op = Operator("immortal")

    @op.reconcile(ImmortalContainer, owns=[PODS])
    async def reconcile(obj: ImmortalContainer, ctx: Context) -> Result | None: ...
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from typing_extensions import TypeVar as DefaultedTypeVar

from kubeloop.client.api import ResourceRef
from kubeloop.controller.causes import CauseHandlers
from kubeloop.controller.controller import (
    DEFAULT_CONCURRENCY,
    CleanupFn,
    Controller,
    DeletedFn,
    ErrorPolicy,
    ReconcileFn,
    Watch,
    default_error_policy,
)
from kubeloop.controller.predicates import Predicate
from kubeloop.settings import Settings, defaults

F = TypeVar("F", bound=Callable[..., Any])
S = DefaultedTypeVar("S", bound=Settings, default=Any)  # the settings model; a bare Operator takes any


@dataclass
class _Spec:
    resource: ResourceRef
    reconcile: ReconcileFn | None = None
    owns: list[ResourceRef] = field(default_factory=list)
    watches: list[Watch] = field(default_factory=list)
    predicates: tuple[Predicate, ...] = ()
    label_selector: str | None = None
    field_selector: str | None = None
    resync: float | None = 600.0
    concurrency: int | None = None
    cleanup: CleanupFn | None = None
    finalizer: str | None = None
    on_deleted: DeletedFn | None = None
    error_policy: ErrorPolicy = default_error_policy
    causes: CauseHandlers = field(default_factory=CauseHandlers)
    name: str | None = None


class Operator(Generic[S]):
    """Collects an operator's reconcilers, finalizers, cause handlers, settings and permissions.

    ``name`` names the operator everywhere: its ServiceAccount and RBAC, its field manager, its
    Deployment, its Lease, and the default finalizer ``<finalizer_domain>/<name>``. Turn it into
    controllers with ``Manager.add_operator`` (what ``kubeloop run`` does), or run it in a test with
    ``kubeloop.testing.operator.run_operator``.

    ``settings``: the operator's settings model (a ``kubeloop.Settings`` subclass), from which
    ``kubeloop run`` derives its flags and environment variables (see ``kubeloop.settings``). Its
    instance is ``operator.settings``: the defaults until ``kubeloop run`` parses the command line.
    """

    def __init__(self, name: str, *, finalizer_domain: str = "kubeloop.dev",
                 settings: type[S] | None = None) -> None:
        self.name = name
        self.finalizer_domain = finalizer_domain
        self.settings_model: type[S] = settings or Settings  # type: ignore[assignment]
        self.settings: S = defaults(self.settings_model)  # replaced by ``kubeloop run`` with the flags'
        self.startup: list[Callable[..., Any]] = []
        self._specs: dict[Any, _Spec] = {}
        self._extra_permissions: list[tuple[ResourceRef, tuple[str, ...], str | None]] = []
        self._own_namespace_permissions: list[tuple[ResourceRef, tuple[str, ...], str | None]] = []
        self._served: list[type] = []  # extra CRD versions, see serve()

    def _spec(self, resource: ResourceRef) -> _Spec:
        key = resource if not isinstance(resource, type) else resource
        if key not in self._specs:
            self._specs[key] = _Spec(resource)
        return self._specs[key]

    # --- level-based ---------------------------------------------------------------------------------

    def reconcile(self, resource: ResourceRef, *, owns: Sequence[ResourceRef] = (),
                  watches: Iterable[Watch] = (), predicates: Sequence[Predicate] = (),
                  label_selector: str | None = None, field_selector: str | None = None,
                  resync: float | None = 600.0, concurrency: int | None = None,
                  error_policy: ErrorPolicy | None = None, name: str | None = None) -> Callable[[F], F]:
        """Registers ``async def fn(obj, ctx) -> Result | None`` as the reconciler of ``resource``."""
        def register(fn: F) -> F:
            spec = self._spec(resource)
            if spec.reconcile is not None:
                raise ValueError(f"{resource} already has a reconciler ({spec.reconcile.__name__})")
            spec.reconcile = fn
            spec.owns += list(owns)
            spec.watches += list(watches)
            spec.predicates = tuple(predicates)
            spec.label_selector, spec.field_selector = label_selector, field_selector
            spec.resync, spec.concurrency, spec.name = resync, concurrency, name
            if error_policy:
                spec.error_policy = error_policy
            return fn
        return register

    def finalize(self, resource: ResourceRef, *, finalizer: str | None = None) -> Callable[[F], F]:
        """Registers ``async def fn(obj, ctx)`` to clean up before ``resource`` objects are deleted.
        A finalizer is added before the first reconcile and removed once ``fn`` succeeds."""
        def register(fn: F) -> F:
            spec = self._spec(resource)
            spec.cleanup = fn
            spec.finalizer = finalizer
            return fn
        return register

    def on_deleted(self, resource: ResourceRef) -> Callable[[F], F]:
        """``async def fn(request, ctx=None)`` once an object is gone from the cache (no finalizer)."""
        def register(fn: F) -> F:
            self._spec(resource).on_deleted = fn
            return fn
        return register

    # --- by cause (compiled onto the same engine) ----------------------------------------------------

    def on_create(self, resource: ResourceRef) -> Callable[[F], F]:
        """``async def fn(obj, ctx)`` the first time this process sees an object, Kopf-style, compiled onto
        the level-based engine. The last handled state is kept in memory, not in the object: after a
        restart every object counts as new, so the handler must be idempotent."""
        return self._cause(resource, lambda c, fn: c.create.append(fn))

    def on_update(self, resource: ResourceRef, field: str | None = None) -> Callable[[F], F]:
        """``async def fn(obj, ctx, changes)``; ``field`` (dotted) limits it to changes there."""
        return self._cause(resource, lambda c, fn: c.update.append((fn, field)))

    def on_delete(self, resource: ResourceRef) -> Callable[[F], F]:
        """``async def fn(obj, ctx)`` when an object is being deleted; the operator's finalizer holds the
        deletion until it succeeds.
        """
        return self._cause(resource, lambda c, fn: c.delete.append(fn))

    def timer(self, resource: ResourceRef, interval: float) -> Callable[[F], F]:
        """``async def fn(obj, ctx)`` every ``interval`` seconds for each existing object."""
        return self._cause(resource, lambda c, fn: c.timers.append((fn, interval)))

    def daemon(self, resource: ResourceRef) -> Callable[[F], F]:
        """``async def fn(obj, ctx)`` runs as a task per object, cancelled when it is deleted."""
        return self._cause(resource, lambda c, fn: c.daemons.append(fn))

    def _cause(self, resource: ResourceRef, add: Callable[[CauseHandlers, Any], None]) -> Callable[[F], F]:
        def register(fn: F) -> F:
            add(self._spec(resource).causes, fn)
            return fn
        return register

    # --- settings and hooks --------------------------------------------------------------------------

    def on_startup(self, fn: F) -> F:
        """``async def fn(manager)`` runs before the controllers are set up."""
        self.startup.append(fn)
        return fn

    def permission(self, resource: ResourceRef, verbs: Sequence[str], subresource: str | None = None, *,
                   own_namespace: bool = False) -> None:
        """Declares a request the operator's own code makes beyond what the framework derives (which is:
        list/watch of every watched kind, apply/delete of owned kinds, finalizer patches, status, events,
        leases). The generated RBAC grants exactly the union. ``own_namespace``: only needed in the
        namespace the operator runs in, so it goes to a Role there instead of the ClusterRole."""
        target = self._own_namespace_permissions if own_namespace else self._extra_permissions
        target.append((resource, tuple(verbs), subresource))

    def serve(self, *models: type) -> None:
        """Ships more custom resource models in the operator's CRDs without reconciling them, e.g. an
        older ``v1alpha1`` served next to the ``v1beta1`` the reconciler reads."""
        self._served += [m for m in models if m not in self._served]

    # --- introspection (for manifests, RBAC and tests) -------------------------------------------------

    def permissions(self) -> list[Any]:
        """The RBAC ``Permission``s this operator needs (cluster-wide; leases and events are added by
        ``render_rbac``). Strings are resolved against the built-in kinds, so no cluster is needed."""
        wanted: list[tuple[Any, tuple[str, ...], str | None]] = []
        for spec in self._specs.values():
            wanted.append((spec.resource, ("list", "watch"), None))
            if spec.cleanup or spec.causes.needs_finalizer:
                wanted.append((spec.resource, ("patch",), None))
            if isinstance(spec.resource, type) and "status" in getattr(spec.resource, "model_fields", {}):
                wanted.append((spec.resource, ("patch",), "status"))
            for owned in spec.owns:
                wanted.append((owned, ("list", "watch", "create", "patch", "delete"), None))
            for watch in spec.watches:
                wanted.append((watch.resource, ("list", "watch"), None))
        wanted += self._extra_permissions
        return _as_permissions(wanted)

    def namespaced_permissions(self) -> list[Any]:
        """The ``Permission``s needed only in the operator's own namespace (a Role there)."""
        return _as_permissions(self._own_namespace_permissions)

    def finalizers(self) -> list[tuple[ResourceRef, str]]:
        """(resource, finalizer name) for every kind this operator puts a finalizer on: what only it may
        remove, e.g. for ``kubeloop undeploy``."""
        return [(spec.resource, spec.finalizer or f"{self.finalizer_domain}/{self.name}")
                for spec in self._specs.values() if spec.cleanup or spec.causes.needs_finalizer]

    def custom_resources(self) -> list[type]:
        """The typed custom resources this operator reconciles or watches (their CRDs ship with it)."""
        refs: list[Any] = []
        for spec in self._specs.values():
            refs += [spec.resource, *spec.owns, *(w.resource for w in spec.watches)]
        refs += self._served
        out: list[type] = []
        for ref in refs:
            if isinstance(ref, type) and hasattr(ref, "crd_info") and ref not in out:
                out.append(ref)
        return out

    # --- building ------------------------------------------------------------------------------------

    def controllers(self, concurrency: int = DEFAULT_CONCURRENCY) -> list[Controller]:
        """One ``Controller`` per registered resource, each with ``concurrency`` workers unless the
        resource set its own; what ``Manager.add_operator`` adds.
        """
        out = []
        for spec in self._specs.values():
            out.append(self._build(spec, concurrency))
        return out

    def _build(self, spec: _Spec, concurrency: int) -> Controller:
        causes = spec.causes
        has_causes = bool(causes.create or causes.update or causes.delete or causes.timers or causes.daemons)
        if spec.reconcile and has_causes:
            raise ValueError(f"{spec.resource}: use either @reconcile or cause handlers, not both")
        reconcile = spec.reconcile or causes.reconcile
        cleanup = spec.cleanup or (causes.cleanup if causes.needs_finalizer else None)
        model = spec.resource if isinstance(spec.resource, type) else None
        name = spec.name or f"{self.name}-{_short(spec.resource)}"
        return Controller(
            name=name, resource=spec.resource, reconcile=reconcile, model=model, owns=list(spec.owns),
            watches=list(spec.watches), predicates=spec.predicates, label_selector=spec.label_selector,
            field_selector=spec.field_selector, resync=spec.resync,
            concurrency=spec.concurrency or concurrency,
            finalizer=(spec.finalizer or f"{self.finalizer_domain}/{self.name}") if cleanup else None,
            cleanup=cleanup, on_deleted=spec.on_deleted or (causes.deleted if causes.daemons else None),
            error_policy=spec.error_policy, field_manager=self.name)


def _as_permissions(wanted: list[tuple[ResourceRef, tuple[str, ...], str | None]]) -> list[Any]:
    from kubeloop.resources.rbac import Permission

    out = []
    for ref, verbs, sub in wanted:
        res = resolve_offline(ref)
        out.append(Permission(res.group, res.plural, verbs, sub, res.namespaced))
    return out


def _short(resource: ResourceRef) -> str:
    if isinstance(resource, str):
        return resource.split("/")[-1].split(".")[0].lower()
    if isinstance(resource, type):
        return resource.__name__.lower()
    return resource.kind.lower()


def resolve_offline(ref: ResourceRef) -> Any:
    """A Resource for ``ref`` without asking a server: Resource objects and models as they are, strings
    looked up among the built-in kinds."""
    from kubeloop.client.resource import Resource
    from kubeloop.resources import builtin

    if isinstance(ref, Resource):
        return ref
    if isinstance(ref, type):
        return ref.resource()  # type: ignore[attr-defined]
    low = ref.lower()
    for res in builtin.ALL:
        if low in (res.plural, res.kind.lower(), res.group_resource, f"{res.api_version}/{res.kind}".lower()):
            if res is builtin.CORE_EVENT:
                continue
            return res
    raise ValueError(f"cannot tell which resource {ref!r} is without a cluster: pass a Resource constant "
                     "(kubeloop.resources.builtin) or a CustomResource model")
