"""An operator's webhooks as declared with ``@op.validate`` / ``@op.mutate`` / ``op.convert``.

- :class:`AdmissionHook` and :class:`ConversionHook` are what the builder records (frozen, no I/O);
  :class:`Hooks` holds an operator's list of them. Everything else about webhooks happens here and in
  :mod:`kubeloop.webhooks.runtime`, not in the builder.
- Handlers see *typed* objects: the pydantic model of a CustomResource (a dict for a built-in kind),
  ``fn(obj, req)``, with ``req.old`` the typed old object on UPDATE/DELETE. An object the model refuses
  is denied with the refused field's path, as the API server's own validation would.
- A mutating handler returns the changed object (typed or dict). Only what the handler changed goes into
  the patch: the result is compared with the model's reading of the object sent, and that difference is
  applied to the object as sent, so fields the model does not know (server-set metadata, ...) stay.
- Conversion functions take the typed object of one version and return the other (typed or dict).
"""

from __future__ import annotations

import copy
import inspect
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from kubeloop.client.resource import Resource
from kubeloop.webhooks.admission import OPERATIONS, AdmissionRequest, Denied
from kubeloop.webhooks.conversion import Converter
from kubeloop.webhooks.manifests import Rule, WebhookSpec
from kubeloop.webhooks.patch import apply, diff

Verb = Literal["validating", "mutating"]
TypedHandler = Callable[[Any, AdmissionRequest], Awaitable[Any]]
Target = Resource | type  # a built-in Resource or a CustomResource model


def resource_of(target: Target) -> Resource:
    """The REST resource a webhook target names (refusing anything else with the fix)."""
    if isinstance(target, Resource):
        return target
    if isinstance(target, type) and hasattr(target, "crd_info"):
        return target.resource()  # type: ignore[attr-defined,no-any-return]
    raise TypeError(f"webhooks take a CustomResource class or a kubeloop.resources.builtin Resource, "
                    f"not {target!r}")


@dataclass(frozen=True)
class AdmissionHook:
    """One ``@op.validate`` / ``@op.mutate`` registration."""

    verb: Verb
    target: Target
    handler: TypedHandler
    failure_policy: str = "Fail"
    timeout_seconds: int = 5
    operations: tuple[str, ...] = ("CREATE", "UPDATE")
    # The handler decides from the review alone (awaits nothing of the operator's loop: no client, cache or
    # ctx): served from the webhook server's own thread, it answers while a reconcile holds the loop.
    loop_free: bool = False

    def __post_init__(self) -> None:
        resource_of(self.target)
        if not inspect.iscoroutinefunction(self.handler):
            raise TypeError(f"{self.verb} handler {getattr(self.handler, '__name__', self.handler)!r} must be "
                            "an async function: async def fn(obj, req)")
        unknown = set(self.operations) - set(OPERATIONS)
        if unknown or not self.operations:
            raise ValueError(f"operations {list(self.operations)} must be some of {', '.join(OPERATIONS)}")
        # The same checks as the manifests', at declaration time rather than at generate time.
        WebhookSpec("x.example.com", "/x", (), self.failure_policy, self.timeout_seconds)

    @property
    def resource(self) -> Resource:
        return resource_of(self.target)

    @property
    def path(self) -> str:
        """``/validate-example-com-v1-websites``, controller-runtime's spelling (``core`` for ``""``)."""
        r = self.resource
        return f"/{self.verb[:-3]}e-{(r.group or 'core').replace('.', '-')}-{r.version}-{r.plural}"

    def spec(self, namespace_selector: dict[str, Any] | None = None) -> WebhookSpec:
        """The configuration entry; its name is ``validate.websites.example.com`` (``core`` for ``""``)."""
        r = self.resource
        rule = Rule((r.group,), (r.version,), (r.plural,), self.operations,
                    "Namespaced" if r.namespaced else "Cluster")
        return WebhookSpec(f"{self.verb[:-3]}e.{r.plural}.{r.group or 'core'}", self.path, (rule,),
                           self.failure_policy, self.timeout_seconds, namespace_selector)

    def server_handler(self) -> Callable[[AdmissionRequest], Awaitable[Any]]:
        """The handler the server calls: typed in, dict (the whole mutated object) out."""
        model = self.target if isinstance(self.target, type) else None
        return _Mutating(self.handler, model) if self.verb == "mutating" else _Validating(self.handler, model)


def _typed(model: type | None, obj: dict[str, Any] | None) -> Any:
    if obj is None or model is None:
        return obj
    from pydantic import ValidationError  # loaded already: ``model`` is a pydantic model

    try:
        return model.model_validate(obj)  # type: ignore[attr-defined]
    except ValidationError as exc:
        error = exc.errors()[0]
        raise Denied(error["msg"], field=".".join(str(p) for p in error["loc"]) or None) from None


def _prepare(model: type | None, req: AdmissionRequest) -> Any:
    req.old = _typed(model, req.old_object)
    return _typed(model, req.object) if req.object is not None else req.old


@dataclass(frozen=True)
class _Validating:
    """The server's handler of a validating hook: a value (picklable when ``fn`` and ``model`` are
    module-level), so that a webhook process of its own can be handed it (kubeloop/webhooks/process.py)."""

    fn: TypedHandler
    model: type | None

    async def __call__(self, req: AdmissionRequest) -> None:
        result = await self.fn(_prepare(self.model, req), req)
        if result is not None:
            raise TypeError(f"validating handler {self.fn.__name__} returned {type(result).__name__}: it must "
                            "return None and raise Denied to refuse")


def _plain(obj: Any) -> dict[str, Any]:
    if isinstance(obj, Mapping):
        return dict(obj)
    from pydantic import BaseModel  # only operators with typed models return one (a run's imports)

    if isinstance(obj, BaseModel):
        return obj.to_dict() if hasattr(obj, "to_dict") else obj.model_dump(mode="json", by_alias=True)
    raise TypeError(f"a mutating handler returns the changed object (model or dict) or None, "
                    f"not {type(obj).__name__}")


@dataclass(frozen=True)
class _Mutating:
    """The server's handler of a mutating hook (a value, as :class:`_Validating`)."""

    fn: TypedHandler
    model: type | None

    async def __call__(self, req: AdmissionRequest) -> dict[str, Any] | None:
        sent = copy.deepcopy(req.object)
        typed = _prepare(self.model, req)
        seen = _plain(typed) if self.model is not None and typed is not None else sent
        result = await self.fn(typed, req)
        if result is None or sent is None:
            return None
        patched: dict[str, Any] = apply(sent, diff(seen, _plain(result)))
        return patched


# --- conversion --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ConversionHook:
    """``op.convert(hub, spokes)``: the hub model and, per spoke model, ``(to_hub, from_hub)``."""

    hub: type
    spokes: tuple[tuple[type, Callable[[Any], Any], Callable[[Any], Any]], ...]

    def __post_init__(self) -> None:
        hub = resource_of(self.hub)
        if not self.spokes:
            raise ValueError(f"convert(hub={self.hub.__name__}): name at least one spoke, "
                             "spokes={OlderModel: (to_hub, from_hub)}")
        for spoke, to_hub, from_hub in self.spokes:
            r = resource_of(spoke)
            if (r.group, r.kind) != (hub.group, hub.kind) or r.version == hub.version:
                raise ValueError(f"spoke {spoke.__name__} must be another version of {hub.kind}.{hub.group}")
            if not (callable(to_hub) and callable(from_hub)):
                raise TypeError(f"spokes[{spoke.__name__}] must be (to_hub, from_hub), two functions")

    @property
    def crd_name(self) -> str:
        r = resource_of(self.hub)
        return f"{r.plural}.{r.group}"

    @property
    def path(self) -> str:
        return f"/convert-{self.crd_name.replace('.', '-')}"

    @property
    def models(self) -> list[type]:
        return [self.hub, *(s for s, _, _ in self.spokes)]

    def converter(self) -> Converter:
        """The dict-level :class:`Converter`, each function wrapped to see its typed input."""
        out = Converter(resource_of(self.hub).api_version)
        for spoke, to_hub, from_hub in self.spokes:
            out.spoke(resource_of(spoke).api_version, to_hub=_TypedConversion(spoke, to_hub),
                      from_hub=_TypedConversion(self.hub, from_hub))
        return out


@dataclass(frozen=True)
class _TypedConversion:
    """One conversion function seeing its typed input (a value, as :class:`_Validating`)."""

    model: type
    fn: Callable[[Any], Any]

    def __call__(self, obj: dict[str, Any]) -> dict[str, Any]:
        return _plain(self.fn(self.model.model_validate(obj)))  # type: ignore[attr-defined]


@dataclass
class Hooks:
    """An operator's webhook registrations, in declaration order."""

    admission: list[AdmissionHook] = field(default_factory=list)
    conversions: list[ConversionHook] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.admission or self.conversions)

    def add(self, hook: AdmissionHook) -> None:
        if any(h.path == hook.path for h in self.admission):
            raise ValueError(f"{hook.resource} already has a {hook.verb} webhook; put both checks in one handler")
        self.admission.append(hook)

    def convert(self, hook: ConversionHook) -> None:
        if any(c.crd_name == hook.crd_name for c in self.conversions):
            raise ValueError(f"{hook.crd_name} already has a conversion; declare all its spokes in one convert()")
        self.conversions.append(hook)
