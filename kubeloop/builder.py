"""Building an operator: ``Operator`` collects reconcilers and handlers with decorators, settings,
permissions and state declarations, and turns them into ``ControllerSpec``s for the manager to run.

    op = Operator("immortal")

    @op.reconcile(ImmortalContainer, owns=[PODS])
    async def reconcile(obj: ImmortalContainer, ctx: Context) -> Result | None: ...
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from typing_extensions import TypeVar as DefaultedTypeVar

from kubeloop.client.api import ResourceRef
from kubeloop.controller import habits as cause_habits
from kubeloop.controller.causes import CauseHandlers
from kubeloop.controller.predicates import Predicate
from kubeloop.controller.spec import (
    DEFAULT_CONCURRENCY,
    CleanupFn,
    ControllerSpec,
    DeletedFn,
    ErrorPolicy,
    IndexFunc,
    ReconcileFn,
    Transform,
    Watch,
    default_error_policy,
)
from kubeloop.reconcile.state import State
from kubeloop.webhooks.guard import AuthorGuard, guard_namespaced_permissions, guard_permissions
from kubeloop.webhooks.habits import Foreign
from kubeloop.webhooks.hooks import AdmissionHook, ConversionHook, Hooks, Target, resource_of

if TYPE_CHECKING:
    from kubeloop.manager import Manager
    from kubeloop.settings import Settings

F = TypeVar("F", bound=Callable[..., Any])
T = TypeVar("T")  # a typed per-object state, see state()
S = DefaultedTypeVar("S", bound="Settings", default=Any)  # the settings model; a bare Operator takes any
D = DefaultedTypeVar("D", default=Any)  # the operator's dependencies, built by its ``deps`` factory
# ``fn(spec, settings)``: the spec as these settings want it (``dataclasses.replace``), or None to run
# no controller for it. ``settings`` is ``Operator.settings``.
Configure = Callable[[ControllerSpec, Any], "ControllerSpec | None"]
Condition = Callable[[Any], bool]  # of the operator's settings
_RECONCILE_TAKES = ("the resource, owns=, watches=, predicates=, label_selector=, field_selector=, resync=, "
                    "concurrency=, error_policy=, name=, skip_own_writes=, transform=, indexes=")


@dataclass
class _Registered:
    """What the decorators registered for one resource. ``options`` are ``@reconcile``'s keyword
    arguments, passed on to ``ControllerSpec`` by name (the spec is the one list of the fields)."""

    resource: ResourceRef
    reconcile: ReconcileFn | None = None
    options: dict[str, Any] = field(default_factory=dict)
    cleanup: CleanupFn | None = None
    finalizer: str | None = None
    on_deleted: DeletedFn | None = None
    causes: CauseHandlers = field(default_factory=CauseHandlers)


class Operator(Generic[S, D]):
    """Collects an operator's reconcilers, finalizers, cause handlers, settings and permissions.

    ``name`` names the operator everywhere: its ServiceAccount and RBAC, its field manager, its
    Deployment, its Lease, and the default finalizer ``<finalizer_domain>/<name>``. ``specs()`` turns
    the registrations into ``ControllerSpec``s (adapted to the settings by ``configure`` hooks);
    ``Manager.add_operator`` runs them (what ``kubeloop run`` does), as does
    ``kubeloop.testing.operator.run_operator`` in a test.

    ``settings``: the operator's settings model (a ``kubeloop.Settings`` subclass), from which
    ``kubeloop run`` derives its flags and environment variables (see ``kubeloop.settings``). Its
    instance is ``operator.settings``: the defaults until ``kubeloop run`` parses the command line.

    ``deps``: ``async def factory(manager, settings) -> MyDeps``, the operator's dependencies (clients,
    informers, rate limiters, anything its handlers share), built once per run from the manager and the
    settings: after the startup hooks and once the controllers' informers exist (so it may look them up
    with ``manager.cache.informer(...)``), before the caches start and the first reconcile. Reconcilers
    and handlers get it as ``ctx.deps`` (typed with ``Context[MyDeps]``), mappers and other code as
    ``operator.deps``.
    """

    def __init__(self, name: str, *, finalizer_domain: str = "kubeloop.dev",
                 settings: type[S] | None = None,
                 deps: Callable[[Manager, S], Awaitable[D]] | None = None) -> None:
        self.name = name
        self.finalizer_domain = finalizer_domain
        # Without a settings model no pydantic is imported (a run's start-up CPU): the empty
        # ``Settings`` stands in, made on first use.
        self.declared_settings: type[S] | None = settings
        self._settings: S | None = None if settings is None else _defaults(settings)
        self.startup: list[Callable[..., Any]] = []
        self.deps_factory = deps
        self._deps: D | None = None
        self._registered: dict[Any, _Registered] = {}
        self._configure: list[Configure] = []
        self._extra_permissions: list[tuple[ResourceRef, tuple[str, ...], str | None, Condition | None]] = []
        self._own_namespace_permissions: list[tuple[ResourceRef, tuple[str, ...], str | None,
                                                    Condition | None]] = []
        self._served: list[type] = []  # extra CRD versions, see serve()
        self._hooks = Hooks()  # @validate/@mutate/convert registrations, run by kubeloop.webhooks
        self._guards: list[tuple[AuthorGuard, AdmissionHook, Condition | None]] = []  # see record_author()

    @property
    def settings_model(self) -> type[S]:
        """The settings model: the declared one, else the empty ``kubeloop.Settings``."""
        if self.declared_settings is not None:
            return self.declared_settings
        from kubeloop.settings import Settings
        return Settings  # type: ignore[return-value]

    @property
    def settings(self) -> S:
        """The settings: their defaults until ``kubeloop run`` (or a test) assigns the flags' values."""
        if self._settings is None:
            self._settings = _defaults(self.settings_model)
        return self._settings

    @settings.setter
    def settings(self, value: S) -> None:
        self._settings = value

    @property
    def deps(self) -> D:
        """The dependencies built for the current run (see ``deps`` above); for mappers and other code
        that gets no ``ctx``. Raises before the manager has built them."""
        if self._deps is None:
            raise RuntimeError(f"operator {self.name}: its dependencies are built when a manager runs it, "
                               "before its caches start; read them from ctx.deps in handlers, and from "
                               "operator.deps only in code that runs once the operator runs (e.g. mappers)"
                               if self.deps_factory else f"operator {self.name} has no deps factory: "
                               "Operator(..., deps=factory)")
        return self._deps

    async def build_deps(self, manager: Manager) -> D | None:
        """Builds this run's dependencies (the manager calls it, see ``deps`` above); None without a factory."""
        if self.deps_factory is None:
            return None
        self._deps = await self.deps_factory(manager, self.settings)
        return self._deps

    def _entry(self, resource: ResourceRef) -> _Registered:
        if resource not in self._registered:
            self._registered[resource] = _Registered(resource)
        return self._registered[resource]

    # --- level-based ---------------------------------------------------------------------------------

    def reconcile(self, resource: ResourceRef, *, owns: Sequence[ResourceRef] = (),
                  watches: Iterable[Watch] = (), predicates: Sequence[Predicate] = (),
                  label_selector: str | None = None, field_selector: str | None = None,
                  resync: float | None = 600.0, concurrency: int | None = None,
                  error_policy: ErrorPolicy | None = None, name: str | None = None,
                  skip_own_writes: bool = True, transform: Transform | None = None,
                  indexes: Mapping[str, IndexFunc] | None = None, **kopf: Any) -> Callable[[F], F]:
        """Registers ``async def fn(obj, ctx) -> Result | None`` as the reconciler of ``resource``; the
        arguments are those of ``ControllerSpec``. ``skip_own_writes=False`` reconciles on the echo of
        this controller's own writes too (``kubeloop.controller.echo`` says when that is needed).
        ``transform`` and ``indexes``: the primary informer's (see ``Watch``). Kopf's options
        (``labels=``, ``when=``, ``retries=``, ...) are refused naming these."""
        cause_habits.refuse_foreign_options("reconcile", _RECONCILE_TAKES, kopf)

        def register(fn: F) -> F:
            entry = self._entry(resource)
            if entry.reconcile is not None:
                raise ValueError(f"{resource} already has a reconciler ({entry.reconcile.__name__})")
            entry.reconcile = fn
            entry.options = {
                "owns": tuple(owns), "watches": tuple(watches), "predicates": tuple(predicates),
                "label_selector": label_selector, "field_selector": field_selector, "resync": resync,
                "concurrency": concurrency, "error_policy": error_policy or default_error_policy,
                "name": name, "skip_own_writes": skip_own_writes, "transform": transform,
                "indexes": dict(indexes or {})}
            return fn
        return register

    def finalize(self, resource: ResourceRef, *, finalizer: str | None = None, **kopf: Any) -> Callable[[F], F]:
        """Registers ``async def fn(obj, ctx)`` to clean up before ``resource`` objects are deleted.
        A finalizer is added before the first reconcile and removed once ``fn`` succeeds."""
        cause_habits.refuse_foreign_options("finalize", "the resource and finalizer=", kopf)

        def register(fn: F) -> F:
            entry = self._entry(resource)
            entry.cleanup, entry.finalizer = fn, finalizer
            return fn
        return register

    def on_deleted(self, resource: ResourceRef, **kopf: Any) -> Callable[[F], F]:
        """``async def fn(request, ctx=None)`` once an object is gone from the cache (no finalizer)."""
        cause_habits.refuse_foreign_options("on_deleted", "the resource", kopf)

        def register(fn: F) -> F:
            self._entry(resource).on_deleted = fn
            return fn
        return register

    # --- by cause (compiled onto the same engine) ----------------------------------------------------

    # Kopf's options (labels=, when=, retries=, ...) are refused naming what to do instead, here as on
    # the level-based decorators above: kubeloop.controller.habits.

    def on_create(self, resource: ResourceRef, **kopf: Any) -> Callable[[F], F]:
        """``async def fn(obj, ctx)`` the first time this process sees an object, Kopf-style, compiled onto
        the level-based engine. The last handled state is kept in memory, not in the object: after a
        restart every object counts as new, so the handler must be idempotent."""
        cause_habits.refuse_foreign_options("on_create", "the resource", kopf)
        return self._cause(resource, lambda c, fn: c.create.append(fn))

    def on_update(self, resource: ResourceRef, field: str | None = None, **kopf: Any) -> Callable[[F], F]:
        """``async def fn(obj, ctx, changes)`` when an object this process has handled changes; ``field``
        (dotted) limits it to changes there. Not called for a new object (Kopf's ``on.update(field=)``);
        ``on_field`` is."""
        cause_habits.refuse_foreign_options("on_update", "the resource and field=", kopf)
        return self._cause(resource, lambda c, fn: c.update.append((fn, field)))

    def on_field(self, resource: ResourceRef, field: str, **kopf: Any) -> Callable[[F], F]:
        """``async def fn(obj, ctx, changes)`` when ``field`` (dotted) changes, creation included: the first
        time this process sees an object with the field set, ``changes`` is ``[Change("add", path, None,
        value)]`` (Kopf's ``on.field``)."""
        cause_habits.refuse_foreign_options("on_field", "the resource and field=", kopf)
        return self._cause(resource, lambda c, fn: c.fields.append((fn, field)))

    def on_delete(self, resource: ResourceRef, **kopf: Any) -> Callable[[F], F]:
        """``async def fn(obj, ctx)`` when an object is being deleted; the operator's finalizer holds the
        deletion until it succeeds.
        """
        cause_habits.refuse_foreign_options("on_delete", "the resource", kopf)
        return self._cause(resource, lambda c, fn: c.delete.append(fn))

    def timer(self, resource: ResourceRef, interval: float, **kopf: Any) -> Callable[[F], F]:
        """``async def fn(obj, ctx)`` every ``interval`` seconds for each existing object."""
        cause_habits.refuse_foreign_options("timer", "the resource and interval=", kopf)
        return self._cause(resource, lambda c, fn: c.timers.append((fn, interval)))

    def daemon(self, resource: ResourceRef, **kopf: Any) -> Callable[[F], F]:
        """``async def fn(obj, ctx)`` runs as a task per object in each running manager, from the object's
        first successful reconcile until it is marked for deletion, its key moves to another replica or
        the manager stops (then cancelled: ``asyncio.CancelledError``). If it raises it is restarted
        after 1 s, doubling up to 5 min; if it returns it is done. ``obj`` is the object when it
        (re)started: ``ctx.current()`` is the cache's current version (None once it is gone)."""
        cause_habits.refuse_foreign_options("daemon", "the resource", kopf)
        return self._cause(resource, lambda c, fn: c.daemons.append(fn))

    def __getattr__(self, name: str) -> Any:
        """Kopf's decorators that have no method here: an AttributeError saying what to write instead."""
        instead = cause_habits.KOPF_DECORATORS.get(name)
        if instead is None:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        kopf = name.replace("on_", "on.", 1) if name.startswith("on_") else name
        raise AttributeError(f"Operator has no {name}: for Kopf's @kopf.{kopf}, {instead}")

    def _cause(self, resource: ResourceRef, add: Callable[[CauseHandlers, Any], None]) -> Callable[[F], F]:
        def register(fn: F) -> F:
            add(self._entry(resource).causes, fn)
            return fn
        return register

    # --- webhooks (recorded here; kubeloop.webhooks serves them) --------------------------------------

    def validate(self, kind: Target, *, failure_policy: str = "Fail", timeout: int = 5,
                 operations: Sequence[str] = ("CREATE", "UPDATE"), loop_free: bool = False,
                 **foreign: Foreign) -> Callable[[F], F]:
        """Registers ``async def fn(obj, req) -> None`` as the validating admission webhook of ``kind`` (a
        CustomResource class: ``obj`` is its model; a built-in Resource: a dict). ``req`` is the
        ``AdmissionRequest`` (``req.old`` typed on UPDATE, ``req.operation``, ``req.user``,
        ``req.dry_run``, ``req.warn()``); raise ``Denied(message, field="spec.x")`` to refuse.
        ``failure_policy="Fail"`` by default: a rule skipped while the webhook is down is a rule not
        enforced (the namespaceSelector, not ``Ignore``, keeps it from locking the cluster).
        ``timeout``: seconds the API server waits (1-30). ``loop_free=True``: ``fn`` decides from the review
        alone (it awaits no client, cache or other object of the operator's loop), so it is served from the
        webhook server's own thread and answers while a reconcile computes; otherwise it runs on the
        operator's loop. Kopf's and kubebuilder's spellings are refused naming these (see
        :mod:`kubeloop.webhooks.habits`)."""
        return self._admission("validating", kind, failure_policy, timeout, operations, foreign, loop_free)

    def mutate(self, kind: Target, *, failure_policy: str = "Fail", timeout: int = 5,
               operations: Sequence[str] = ("CREATE", "UPDATE"), loop_free: bool = False,
               **foreign: Foreign) -> Callable[[F], F]:
        """Registers ``async def fn(obj, req)`` returning the changed object (model or dict; None: no
        change) as the mutating webhook of ``kind``; the framework sends the JSON patch. Options as
        ``validate``."""
        return self._admission("mutating", kind, failure_policy, timeout, operations, foreign, loop_free)

    def _admission(self, verb: Any, kind: Target, failure_policy: str, timeout: int,
                   operations: Sequence[str], foreign: dict[str, Any], loop_free: bool = False) -> Callable[[F], F]:
        # Checked here, when the decorator is called, so a ported Kopf/kubebuilder spelling fails at
        # import naming kubeloop's, rather than being ignored or mangled (``tuple("CREATE")``).
        from kubeloop.webhooks import habits  # already loaded, with Foreign

        habits.refuse_foreign_options(verb, foreign)
        habits.kind(kind)
        resource_of(kind)  # here, not only once a handler is given: a wrong kind fails at its own line
        options = (habits.failure_policy(failure_policy), habits.timeout(timeout), habits.operations(operations))

        def register(fn: F) -> F:
            habits.handler(verb, fn)
            self._hooks.add(AdmissionHook(verb, kind, fn, *options, loop_free=loop_free))
            return fn
        return register

    def convert(self, hub: type, spokes: dict[type, tuple[Callable[[Any], Any], Callable[[Any], Any]]]) -> None:
        """Converts a CRD's versions through ``hub`` (a CustomResource model): ``spokes={OldModel:
        (to_hub, from_hub)}``, each function taking the typed object of one version and returning the
        other. The CRD is generated with ``conversion.strategy: Webhook`` and holds every version."""
        self._hooks.convert(ConversionHook(hub, tuple((m, *_spoke_pair(m, fns)) for m, fns in spokes.items())))

    def record_author(self, kind: Target, *, when: Condition | None = None) -> AuthorGuard:
        """Records who writes ``kind``'s objects, signed, so the operator can act only as far as that
        user may (``guard.author_of(obj)``, then ``kubeloop.access.AccessReviewer``). Adds a mutating
        webhook for ``kind`` (``failurePolicy: Fail``), the key Secret ``<name>-author-key`` in the
        operator's namespace and ``create subjectaccessreviews`` to the RBAC; ``when(settings)``: only with
        these settings. See :mod:`kubeloop.webhooks.guard` and docs/howto/webhooks.md."""
        guard = AuthorGuard(self.name, resource_of(kind), self.finalizer_domain)
        # Loop-free: the record is made from the review and the key alone, so the hook answers while a
        # reconcile holds the operator's loop (with failurePolicy Fail, a held loop would refuse every write).
        hook = AdmissionHook("mutating", guard.resource, guard.admit, loop_free=True)
        if any(h.path == hook.path for h in self._hooks.admission):
            raise ValueError(f"{guard.resource} already has a mutating webhook; record_author needs its own")
        self._guards.append((guard, hook, when))

        async def load_key(manager: Any) -> None:
            if when is None or when(self.settings):
                await guard.start(manager.client, manager.options.webhook.namespace)
        self.startup.append(load_key)
        return guard

    @property
    def hooks(self) -> Hooks:
        """The webhooks to serve with the current settings: those declared, and record_author's."""
        guards = [hook for _, hook, when in self._guards if when is None or when(self.settings)]
        if not guards:
            return self._hooks
        return Hooks([*self._hooks.admission, *guards], list(self._hooks.conversions))

    @property
    def may_serve_webhooks(self) -> bool:
        """Whether some settings make this operator serve webhooks (so ``kubeloop run`` offers the
        ``--webhook-*`` flags before the settings are parsed)."""
        return bool(self._hooks or self._guards)

    def _active_guards(self) -> list[AuthorGuard]:
        return [guard for guard, _, when in self._guards if when is None or when(self.settings)]

    # --- settings and hooks --------------------------------------------------------------------------

    def on_startup(self, fn: F) -> F:
        """``async def fn(manager)`` runs before the controllers are set up."""
        self.startup.append(fn)
        return fn

    def permission(self, resource: ResourceRef, verbs: Sequence[str], subresource: str | None = None, *,
                   own_namespace: bool = False, when: Condition | None = None) -> None:
        """Declares a request the operator's own code makes beyond what the framework derives (which is:
        list/watch of every watched kind, apply/delete of owned kinds and ``update`` on the owner's
        ``finalizers`` for their ownerReferences, finalizer patches, status, events, leases). Children
        given an ownerReference by hand (``kubeloop.helpers.ownership``) outside ``owns``: see
        ``owner_references_to``. The generated RBAC grants exactly the union. ``own_namespace``: only
        needed in the namespace the operator runs in, so it goes to a Role there instead of the
        ClusterRole.
        ``when(settings)``: only needed with these settings (least privilege for the others)."""
        target = self._own_namespace_permissions if own_namespace else self._extra_permissions
        target.append((resource, tuple(verbs), subresource, when))

    def owner_references_to(self, *owners: ResourceRef, when: Condition | None = None) -> None:
        """Declares that the operator's own code makes objects of ``owners`` the owners of children
        outside ``owns=``: ownerReferences with ``blockOwnerDeletion`` written with
        ``kubeloop.helpers.ownership`` (``set_controller``, ``controller_reference``,
        ``adoption_patch``) and sent through ``ctx.client``, e.g. children of a kind watched with a
        label-selected ``Watch`` rather than owned. Wherever the API server runs the admission plugin
        OwnerReferencesPermissionEnforcement (OpenShift, hardened clusters, ``kubeloop cluster up``),
        such a write needs ``update`` on the owner's ``finalizers``: the generated RBAC grants it, as
        it does for every kind reconciled with ``owns=``, and nothing else on the owner.
        ``when(settings)``: only with these settings. The writes themselves (create, patch, ... of the
        children) are declared with ``permission``."""
        for owner in owners:
            self.permission(owner, ["update"], subresource="finalizers", when=when)

    def serve(self, *models: type) -> None:
        """Ships more custom resource models in the operator's CRDs without reconciling them, e.g. an
        older ``v1alpha1`` served next to the ``v1beta1`` the reconciler reads."""
        self._served += [m for m in models if m not in self._served]

    def configure(self, fn: Configure) -> Configure:
        """Registers ``fn(spec, settings) -> ControllerSpec | None``, which adapts every controller to the
        operator's settings once they are known (``specs()`` calls it): return ``dataclasses.replace(spec,
        ...)`` to change it (a field selector from a flag, watches filtered or added), the spec itself to
        keep it, or None to run no controller for it. Hooks run in the order registered. The generated
        RBAC follows the result: a dropped watch needs no permission."""
        self._configure.append(fn)
        return fn

    def state(self, factory: Callable[[], T]) -> State[T]:
        """Declares typed per-object state: ``state = op.state(MyState)``, then ``state.of(ctx)`` in a
        reconcile is this object's ``MyState`` (see ``kubeloop.reconcile.state``)."""
        return State(factory)

    # --- introspection (for manifests, RBAC and tests) -------------------------------------------------

    def permissions(self) -> list[Any]:
        """The RBAC ``Permission``s this operator needs with its current settings (cluster-wide; leases
        and events are added by ``render_rbac``). Strings are resolved against the built-in kinds, so
        no cluster is needed."""
        wanted: list[tuple[Any, tuple[str, ...], str | None]] = []
        for spec in self.specs():
            wanted.append((spec.resource, ("list", "watch"), None))
            if spec.finalizer:
                wanted.append((spec.resource, ("patch",), None))
            if isinstance(spec.resource, type) and "status" in getattr(spec.resource, "model_fields", {}):
                wanted.append((spec.resource, ("patch",), "status"))
            for owned in spec.owns:
                wanted.append((owned, ("list", "watch", "create", "patch", "delete"), None))
            if spec.owns:
                # Children carry blockOwnerDeletion (ctx.apply, set_controller): the admission plugin
                # OwnerReferencesPermissionEnforcement (OpenShift, hardened clusters) then checks this.
                wanted.append((spec.resource, ("update",), "finalizers"))
            for watch in spec.watches:
                wanted.append((watch.resource, ("list", "watch"), None))
        wanted += self._wanted(self._extra_permissions)
        from kubeloop.webhooks.runtime import webhook_permissions
        return (_as_permissions(wanted) + webhook_permissions(self.name, self.hooks)
                + guard_permissions(self._active_guards()))

    def namespaced_permissions(self) -> list[Any]:
        """The ``Permission``s needed only in the operator's own namespace (a Role there)."""
        from kubeloop.webhooks.runtime import webhook_namespaced_permissions
        return (_as_permissions(self._wanted(self._own_namespace_permissions))
                + webhook_namespaced_permissions(self.name, self.hooks)
                + guard_namespaced_permissions(self.name, self._active_guards()))

    def _wanted(self, declared: list[tuple[ResourceRef, tuple[str, ...], str | None, Condition | None]]
                ) -> list[tuple[ResourceRef, tuple[str, ...], str | None]]:
        return [(ref, verbs, sub) for ref, verbs, sub, when in declared if when is None or when(self.settings)]

    def finalizers(self) -> list[tuple[ResourceRef, str]]:
        """(resource, finalizer name) for every kind this operator may put a finalizer on, whatever the
        settings: what only it may remove, e.g. for ``kubeloop undeploy``."""
        return [(entry.resource, entry.finalizer or self._default_finalizer)
                for entry in self._registered.values() if entry.cleanup or entry.causes.needs_finalizer]

    def custom_resources(self) -> list[type]:
        """The typed custom resources this operator reconciles or watches (their CRDs ship with it)."""
        refs: list[Any] = []
        for entry in self._registered.values():
            refs += [entry.resource, *entry.options.get("owns", ()),
                     *(w.resource for w in entry.options.get("watches", ()))]
        refs += self._served
        refs += [m for conversion in self.hooks.conversions for m in conversion.models]
        out: list[type] = []
        for ref in refs:
            if isinstance(ref, type) and hasattr(ref, "crd_info") and ref not in out:
                out.append(ref)
        return out

    # --- building ------------------------------------------------------------------------------------

    def specs(self, concurrency: int = DEFAULT_CONCURRENCY) -> list[ControllerSpec]:
        """One ``ControllerSpec`` per registered resource (``concurrency`` workers unless the resource
        set its own), as the ``configure`` hooks adapt it to the settings; what ``Manager.add_operator``
        runs."""
        out = []
        for entry in self._registered.values():
            spec: ControllerSpec | None = self._spec_of(entry, concurrency)
            for configure in self._configure:
                spec = configure(spec, self.settings) if spec is not None else None
            if spec is not None:
                out.append(spec)
        return out

    @property
    def _default_finalizer(self) -> str:
        return f"{self.finalizer_domain}/{self.name}"

    def _spec_of(self, entry: _Registered, concurrency: int) -> ControllerSpec:
        causes = entry.causes
        has_causes = bool(causes.create or causes.update or causes.fields or causes.delete or causes.timers
                          or causes.daemons)
        if entry.reconcile and has_causes:
            raise ValueError(f"{entry.resource}: @reconcile ({entry.reconcile.__name__}) and cause handlers on "
                             "one kind: use one or the other. The reconciler already runs for every object when "
                             "the operator starts (Kopf's on.resume) and on every change (on.create, on.update); "
                             "the cause handlers are for code not yet restructured into it")
        if entry.reconcile is None and not has_causes:
            raise ValueError(f"{entry.resource}: a finalizer or on_deleted handler but no @reconcile "
                             "(or cause handler) to go with it")
        cleanup = entry.cleanup or (causes.cleanup if causes.needs_finalizer else None)
        options = dict(entry.options)
        name = options.pop("name", None) or f"{self.name}-{_short(entry.resource)}"
        workers = options.pop("concurrency", None) or concurrency
        return ControllerSpec(
            **options, resource=entry.resource, reconcile=entry.reconcile or causes.reconcile,
            name=name, concurrency=workers,
            model=entry.resource if isinstance(entry.resource, type) else None,
            finalizer=(entry.finalizer or self._default_finalizer) if cleanup else None, cleanup=cleanup,
            on_deleted=entry.on_deleted, daemons=tuple(causes.daemons), field_manager=self.name)


def _as_permissions(wanted: list[tuple[ResourceRef, tuple[str, ...], str | None]]) -> list[Any]:
    from kubeloop.resources.rbac import Permission

    out = []
    for ref, verbs, sub in wanted:
        res = resolve_offline(ref)
        out.append(Permission(res.group, res.plural, verbs, sub, res.namespaced))
    return out


def _spoke_pair(model: type, fns: Any) -> tuple[Any, Any]:
    """``(to_hub, from_hub)``, refusing one function (controller-runtime's ConvertTo/ConvertFrom are two)."""
    if not isinstance(fns, tuple | list) or len(fns) != 2:
        name = getattr(model, "__name__", model)
        raise TypeError(f"spokes[{name}] must be (to_hub, from_hub), two functions: controller-runtime's "
                        f"ConvertTo is to_hub, ConvertFrom is from_hub; got {fns!r}")
    return fns[0], fns[1]


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
        return ref.resource()
    low = ref.lower()
    for res in builtin.ALL:
        if low in (res.plural, res.kind.lower(), res.group_resource, f"{res.api_version}/{res.kind}".lower()):
            if res is builtin.CORE_EVENT:
                continue
            return res
    raise ValueError(f"cannot tell which resource {ref!r} is without a cluster: pass a Resource constant "
                     "(kubeloop.resources.builtin), a CustomResource model, or, for a CRD installed another way, "
                     f"the Resource itself: Resource(group, version, {ref!r}, Kind), e.g. Resource('kopf.dev', 'v1', "
                     "'kopfexamples', 'KopfExample') (from kubeloop import Resource; namespaced=False for a "
                     "cluster-scoped kind)")


def _defaults(model: type[S]) -> S:
    from kubeloop.settings import defaults
    return defaults(model)
