"""What ``@op.validate`` / ``@op.mutate`` make of the spellings users bring from Kopf and controller-runtime.

Checked when the decorator is applied, so a ported webhook fails at import, not at the first admission:

- Options with kubeloop's meaning in another spelling are refused, and the message names ours
  (``ignore_failures=True`` → ``failure_policy="Ignore"``); options kubeloop has no equivalent for
  (Kopf's filters, ``id=``, ``side_effects=``, ...) are refused with what to do instead. Nothing is
  ignored: a filter dropped silently would run a check on objects it was written to skip.
- Accepted because the meaning is identical: ``failure_policy`` and ``operations`` in any case
  (kubebuilder markers write ``failurePolicy=fail``, ``verbs=create;update``), and a list for
  ``operations``. A bare string for ``operations`` is refused: iterated, ``"CREATE"`` is six letters.
  So are ``CONNECT`` (only subresources get it) and a ``timeout`` that is not whole seconds in 1-30.
- A handler must be callable as ``await fn(obj, req)``: a Kopf-style signature (keyword parameters such
  as ``spec``, ``patch``, ``warnings``, ``**kwargs`` alone, a sync ``def``) is refused with the mapping of
  what it asked for to where ``obj`` and ``req`` carry it. Parameter names are free otherwise.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable
from typing import Any, Never, TypeAlias

from kubeloop.webhooks.admission import OPERATIONS

# The type of the decorators' ``**foreign``: no keyword beyond theirs type-checks, and at run time
# refuse_foreign_options says which spelling to use instead.
Foreign: TypeAlias = Never
OUR_OPTIONS = "failure_policy=, timeout=, operations="
SIGNATURE = "async def fn(obj, req)"
_ONE_PER_KIND = ("kubeloop names the webhook and its path after the kind (validate.<plural>.<group>, "
                 "/validate-<group>-<version>-<plural>), one validating and one mutating webhook per kind: "
                 "put every check of the kind in that one handler")
_FILTER = ("kubeloop's webhook is called for every object of the kind: filter in the handler and return early "
           "(e.g. `if obj.metadata.labels.get('x') != 'y': return`)")
_THE_KIND = ("the kind is the decorator's first argument: a CustomResource model, or a kubeloop.resources.builtin "
             "constant such as builtin.CONFIG_MAP")

# Option -> why it is refused and what kubeloop spells instead. Kopf's first, then kubebuilder markers'.
FOREIGN_OPTIONS: dict[str, str] = {
    "ignore_failures": "is Kopf's; kubeloop spells it failure_policy='Ignore' (failure_policy='Fail' is the default)",
    "operation": "is Kopf's singular; kubeloop spells it operations=('CREATE',), a tuple",
    "id": f"is Kopf's handler id; {_ONE_PER_KIND}",
    "param": "is Kopf's; pass data to the handler with a closure or functools.partial",
    "side_effects": ("is Kopf's; kubeloop's webhooks declare sideEffects: None (they are called for dry runs too, "
                     "req.dry_run says which): make changes in a reconciler, not in the webhook"),
    "persistent": ("is Kopf's; every kubeloop webhook configuration stays when the process stops (the next process "
                   "or another replica serves it), so there is nothing to choose"),
    "labels": f"is Kopf's filter; {_FILTER}",
    "annotations": f"is Kopf's filter; {_FILTER}",
    "when": f"is Kopf's filter; {_FILTER} (record_author's when= is something else: a condition on the settings)",
    "field": f"is Kopf's filter; {_FILTER}",
    "value": f"is Kopf's filter; {_FILTER}",
    "subresource": ("is Kopf's; kubeloop's webhooks cover the kind itself, not its subresources (status, scale): "
                    "status writes are the operator's own"),
    "registry": "is Kopf's; the Operator is the registry: @op.validate(...) registers on op",
    "errors": "is Kopf's; admission is never retried: raise Denied(message, field=...) to refuse",
    "retries": "is Kopf's; admission is never retried: raise Denied(message, field=...) to refuse",
    "backoff": "is Kopf's; admission is never retried: raise Denied(message, field=...) to refuse",
    **dict.fromkeys(("group", "version", "kind", "plural", "singular", "shortcut", "category"),
                    f"is Kopf's; {_THE_KIND}"),
    "failurePolicy": "is the kubebuilder marker's; kubeloop spells it failure_policy='Fail' or 'Ignore'",
    "timeoutSeconds": "is the kubebuilder marker's; kubeloop spells it timeout=N (seconds, 1-30)",
    "timeout_seconds": "is WebhookServer's; the decorator spells it timeout=N (seconds, 1-30)",
    "verbs": "is the kubebuilder marker's; kubeloop spells it operations=('CREATE', 'UPDATE') (any case)",
    "sideEffects": ("is the kubebuilder marker's; kubeloop's webhooks always declare sideEffects: None: make changes "
                    "in a reconciler, not in the webhook"),
    "matchPolicy": "is the kubebuilder marker's; kubeloop's webhooks always use matchPolicy: Equivalent",
    "admissionReviewVersions": "is the kubebuilder marker's; kubeloop serves admissionReviewVersions: [v1] only",
    "webhookVersions": "is the kubebuilder marker's; kubeloop writes admissionregistration.k8s.io/v1 configurations",
    "mutating": "is the kubebuilder marker's; use @op.mutate for a mutating webhook, @op.validate otherwise",
    "name": f"is the kubebuilder marker's; {_ONE_PER_KIND}",
    "path": f"is the kubebuilder marker's; {_ONE_PER_KIND}",
    **dict.fromkeys(("groups", "versions", "resources"), f"is the kubebuilder marker's; {_THE_KIND}"),
}

# A handler parameter named as one of Kopf's keyword arguments -> where kubeloop's (obj, req) carry it.
KOPF_KWARGS: dict[str, str] = {
    "body": "obj", "spec": "obj.spec", "meta": "obj.metadata", "status": "obj.status",
    "labels": "obj.metadata.labels", "annotations": "obj.metadata.annotations", "uid": "obj.metadata.uid",
    "name": "req.name", "namespace": "req.namespace", "new": "obj", "old": "req.old",
    "diff": "compare req.old with obj", "patch": "return the changed obj (the framework sends the JSON patch)",
    "warnings": "req.warn(message)", "dryrun": "req.dry_run", "userinfo": "req.user",
    "operation": "req.operation", "subresource": "req.sub_resource", "resource": "req.resource",
    "reason": "the decorator (@op.validate or @op.mutate)", "logger": "a module logger",
    "memo": "a closure", "param": "a closure or functools.partial", "headers": "nothing (not exposed)",
    "sslpeer": "nothing (not exposed)", "retry": "nothing (admission is never retried)",
    "started": "nothing (admission is never retried)", "runtime": "nothing (admission is never retried)",
}
_OBJ_NAMES = {"body", "new"}  # Kopf names whose meaning is what kubeloop passes first: the object


def refuse_foreign_options(verb: str, options: dict[str, Any]) -> None:
    """Refuses every keyword argument the decorator does not take, naming kubeloop's spelling."""
    if not options:
        return
    lines = [f"{key}={value!r} {FOREIGN_OPTIONS.get(key, 'is not an option of kubeloop webhooks')}"
             for key, value in options.items()]
    raise TypeError(f"@op.{verb[:-3]}e takes {OUR_OPTIONS} only:\n  " + "\n  ".join(lines))


def failure_policy(value: Any) -> str:
    """``"Fail"`` or ``"Ignore"``; any case is accepted (controller-tools reads its marker's so)."""
    if isinstance(value, bool):
        raise TypeError(f"failure_policy={value!r}: kubeloop spells it failure_policy='Fail' or 'Ignore' "
                        "(Kopf's ignore_failures=True is failure_policy='Ignore')")
    if isinstance(value, str) and value.lower() in ("fail", "ignore"):
        return value.capitalize()
    raise ValueError(f"failure_policy {value!r} must be 'Fail' or 'Ignore'")


def timeout(value: Any) -> int:
    """Whole seconds in the API server's range for ``timeoutSeconds``."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"timeout={value!r} must be a whole number of seconds, 1-30 (timeoutSeconds is an integer)")
    if not 1 <= value <= 30:
        raise ValueError(f"timeout={value}: timeout_seconds {value} must be between 1 and 30 "
                         "(the API server's range for timeoutSeconds)")
    return value


def operations(value: Any) -> tuple[str, ...]:
    """The operations upper-cased (kubebuilder writes ``verbs=create;update``), each once."""
    if isinstance(value, str):
        raise TypeError(f"operations={value!r} is one string, which would be read letter by letter; "
                        f"write operations=({value.upper()!r},)")
    value = list(value) if isinstance(value, Iterable) else value
    if not isinstance(value, list) or not all(isinstance(op, str) for op in value):
        raise TypeError(f"operations={value!r} must be a tuple of strings, e.g. operations=('CREATE', 'UPDATE')")
    out = tuple(op.upper() for op in value)
    if "*" in out or "CONNECT" in out:
        raise ValueError(f"operations {value}: CONNECT (and '*', which includes it) is only sent for subresources "
                         "such as pods/exec, which kubeloop's webhooks do not cover; name the others, e.g. "
                         "operations=('CREATE', 'UPDATE', 'DELETE')")
    wanted = [op for op in OPERATIONS if op != "CONNECT"]
    if not out or set(out) - set(wanted):
        raise ValueError(f"operations {value} must be some of {', '.join(wanted)}")
    if len(set(out)) != len(out):
        raise ValueError(f"operations {value} names an operation twice")
    return out


def kind(target: Any) -> None:
    """Refuses Kopf's resource strings with the kubeloop object to pass instead, and a handler given where
    the kind goes (``@op.validate`` without its parentheses would otherwise replace the handler)."""
    if inspect.isfunction(target) or inspect.ismethod(target):
        raise TypeError(f"webhook kind {target.__name__!r} is a function: the decorator takes the kind first, "
                        f"@op.validate(Kind) above {SIGNATURE}")
    if not isinstance(target, str):
        return
    from kubeloop.resources import builtin

    names = {res: name for name, res in vars(builtin).items() if name.isupper() and res in builtin.ALL}
    low = target.lower()
    match = next((f"builtin.{names[res]}" for res in builtin.ALL if res in names and low in (
        res.plural, res.kind.lower(), res.group_resource, *res.short_names)), None)
    raise TypeError(f"webhook kind {target!r}: Kopf names a resource by string; {_THE_KIND}"
                    + (f" (here: {match}, from kubeloop.resources import builtin)" if match else ""))


def handler(verb: str, fn: Callable[..., Any]) -> None:
    """Refuses a handler that ``await fn(obj, req)`` cannot call as meant, with kubeloop's signature."""
    name = getattr(fn, "__name__", repr(fn))
    if not callable(fn):
        raise TypeError(f"{verb} handler {fn!r} is not a function: decorate {SIGNATURE}")
    try:
        sig: inspect.Signature | None = inspect.signature(fn)
    except (TypeError, ValueError):
        sig = None  # no signature to read (some builtins): only the async check applies
    kopf = _kopf_parameters(sig) if sig else []
    if not inspect.iscoroutinefunction(fn):
        raise TypeError(f"{verb} handler {name!r} must be an async function: {SIGNATURE} (Kopf runs a sync def in "
                        "a thread; call blocking code from an async handler with asyncio.to_thread)" + _where(kopf))
    if sig is None:
        return
    try:
        sig.bind(None, None)
    except TypeError:
        kopf = _kopf_parameters(sig, every=True)  # a Kopf handler through and through: map all it asks for
        raise TypeError(_mismatch(verb, name, sig, kopf, "cannot be called with two positional arguments")) from None
    if kopf:
        raise TypeError(_mismatch(verb, name, sig, kopf, "asks for Kopf's keyword arguments"))


def _kopf_parameters(sig: inspect.Signature, every: bool = False) -> list[str]:
    """Parameters named as Kopf's keyword arguments where kubeloop would not give what Kopf gives: the
    two that receive ``(obj, req)`` (but ``body``/``new`` first: that is the object) and keyword-only
    ones (kubeloop never fills those); ``every``: all positional ones too. Otherwise a later positional
    parameter with a default is the user's own business."""
    out = []
    positional = [p for p in sig.parameters.values() if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    for i, param in enumerate(positional if every else positional[:2]):
        if param.name in KOPF_KWARGS and not (i == 0 and param.name in _OBJ_NAMES):
            out.append(param.name)
    out += [p.name for p in sig.parameters.values() if p.kind is p.KEYWORD_ONLY and p.name in KOPF_KWARGS]
    return out


def _where(kopf: list[str]) -> str:
    where = "; ".join(f"{p} → {KOPF_KWARGS[p]}" for p in kopf)
    return f". Kopf's arguments are there: {where}" if where else ""


def _mismatch(verb: str, name: str, sig: inspect.Signature, kopf: list[str], what: str) -> str:
    return (f"{verb} handler {name}{sig} {what}: kubeloop calls {SIGNATURE} with the object (typed) and the "
            f"AdmissionRequest, positionally{_where(kopf)}. Raise Denied(message, field=...) to refuse")
