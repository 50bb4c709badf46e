"""Kopf's options on the handler decorators of ``Operator`` (the level-based ``@op.reconcile``,
``finalize`` and ``on_deleted``, and the cause handlers ``on_create``, ``on_update``, ``on_field``,
``on_delete``, ``timer``, ``daemon``), refused when the decorator is called with what kubeloop does
instead. A filter dropped silently would run a handler on objects it was written to skip, and Python's
own "unexpected keyword argument" says nothing of where the option went. (The webhook decorators do
the same for theirs: ``kubeloop.webhooks.habits``.)

``FOREIGN_OPTIONS`` says it for the cause handlers; ``LEVEL_BASED`` words it again where the answer
differs on a level-based decorator (``@op.reconcile`` itself takes ``label_selector=`` and
``predicates=``, so it is not sent to write one).
"""

from __future__ import annotations

from typing import Any

_FILTER = ("kubeloop's cause handlers take no filters: return early in the handler (e.g. "
           "`if obj.metadata.labels.get('k') != 'v': return`), or write an @op.reconcile with "
           "label_selector='k=v' (server-side: only those objects are cached) or "
           "predicates=[predicates.has_label('k', 'v')]")
_ERRORS = ("a cause handler that raises is retried with its controller's backoff; raise kubeloop.PermanentError "
           "to stop (a Warning Event and a Stalled condition, until the object changes), or write an "
           "@op.reconcile with error_policy=fn(error, request, failures) returning a delay or GIVE_UP")
_THE_KIND = ("the first argument names the kind: a CustomResource model, a kubeloop.resources.builtin constant, "
             "or Resource(group, version, plural, kind) for a CRD kubeloop does not generate")

# option → what to do instead
FOREIGN_OPTIONS: dict[str, str] = {
    "labels": f"is Kopf's filter; {_FILTER}",
    "annotations": f"is Kopf's filter; {_FILTER}",
    "when": ("is Kopf's filter (a callback of Kopf's keyword arguments); test the condition at the top of the "
             "handler, or give an @op.reconcile predicates=[fn] (fn(event) -> bool, asked for every event)"),
    "field": ("is Kopf's filter here; only on_update and on_field take field= (a dotted path such as 'spec.x'); "
              "elsewhere read the field in the handler"),
    "value": "is Kopf's filter; compare the field's value in the handler and return early",
    "old": "is Kopf's filter; on_update and on_field pass changes, a list of Change(op, path, old, new): compare there",
    "new": "is Kopf's filter; on_update and on_field pass changes, a list of Change(op, path, old, new): compare there",
    "id": "is Kopf's; the function is the handler (its name is logged), there is no separate id",
    "param": "is Kopf's; use a closure or functools.partial",
    "errors": f"is Kopf's; {_ERRORS}",
    "retries": f"is Kopf's; {_ERRORS}",
    "backoff": f"is Kopf's; {_ERRORS}",
    "timeout": "is Kopf's; bound the handler's work with asyncio.timeout(seconds) inside it",
    "optional": "is Kopf's on.delete option; @op.on_deleted(Kind) is the handler without a finalizer",
    "requires_finalizer": ("is Kopf's; on_delete always holds the deletion with a finalizer, "
                           "@op.on_deleted never does"),
    "deleted": "is Kopf's; a deletion is on_delete (with a finalizer) or @op.on_deleted (after the fact)",
    "idle": ("is Kopf's timer option; kubeloop's timers have no idle: the handler runs every interval, "
             "so skip the run in it while the object changed recently (see docs/howto/kopf.md)"),
    "initial_delay": ("is Kopf's timer/daemon option; kubeloop's timer first runs when the object is first "
                      "reconciled: await asyncio.sleep(...) at the top of a daemon instead"),
    "sharp": "is Kopf's timer option; kubeloop's timers count from each run (Kopf's default)",
    "cancellation_backoff": ("is Kopf's daemon option; a daemon is cancelled (asyncio.CancelledError) when its "
                             "object is deleted or the operator stops: catch it to clean up"),
    "cancellation_timeout": ("is Kopf's daemon option; a daemon is cancelled (asyncio.CancelledError) when its "
                             "object is deleted or the operator stops: catch it to clean up"),
    "cancellation_polling": "is Kopf's daemon option; kubeloop's daemons are async tasks, cancelled, never polled",
    "subresource": "is Kopf's; handlers cover the kind itself, not its subresources",
    "registry": "is Kopf's; the Operator is the registry: @op.on_create(...) registers on op",
    **dict.fromkeys(("group", "version", "kind", "plural", "singular", "shortcut", "category"),
                    f"is Kopf's; {_THE_KIND}"),
}


_RECONCILE_FILTER = ("is Kopf's filter; @op.reconcile spells it label_selector='k=v' (server-side: only those "
                     "objects are cached and reconciled) or predicates=[predicates.has_label('k', 'v')] "
                     "(kubeloop.controller.predicates; fn(event) -> bool for any other test)")
_CLEANUP_FILTER = ("is Kopf's filter; the cleanup runs for the objects the kind's @op.reconcile handles (the "
                   "finalizer goes on before their first reconcile): narrow those with its label_selector='k=v', "
                   "or return early in the cleanup")
_DELETED_FILTER = ("is Kopf's filter; on_deleted is called for the deletions that pass the kind's @op.reconcile "
                   "label_selector= and predicates= (a predicate sees the deleted event with the last known "
                   "object: predicates.has_label('k', 'v'), or fn(event) -> bool)")
_RECONCILE_ERRORS = ("is Kopf's; a reconcile that raises is retried with backoff: give @op.reconcile "
                     "error_policy=fn(error, request, failures) returning a delay in seconds or GIVE_UP "
                     "(failures: the consecutive failed reconciles, 1 the first time), or raise "
                     "kubeloop.PermanentError to stop until the object changes")
_CLEANUP_ERRORS = ("is Kopf's; a cleanup that raises is retried as a failed reconcile, with the kind's "
                   "@op.reconcile error_policy= (fn(error, request, failures) returning a delay or GIVE_UP), "
                   "while the finalizer holds the deletion; kubeloop.PermanentError stops the retries until "
                   "the object changes (the deletion waits)")
_DELETED_ERRORS = ("is Kopf's; an on_deleted that raises is retried as a failed reconcile of its key, with the "
                   "kind's @op.reconcile error_policy= (fn(error, request, failures) returning a delay or GIVE_UP)")
_TIMEOUT = "is Kopf's; bound the work with asyncio.timeout(seconds) inside the function"
_ID = "is Kopf's; the function is the handler (its name is logged), there is no separate id"

# decorator → option → what to do instead, where it differs from FOREIGN_OPTIONS.
LEVEL_BASED: dict[str, dict[str, str]] = {
    "reconcile": {
        **dict.fromkeys(("labels", "annotations"), _RECONCILE_FILTER),
        "when": "is Kopf's filter; @op.reconcile spells it predicates=[fn] (fn(event) -> bool, asked for every event)",
        **dict.fromkeys(("field", "value", "old", "new"), (
            "is Kopf's filter; give @op.reconcile predicates=[fn] comparing event.old and event.object at the "
            "path (kubeloop.controller.predicates.generation_changed skips status-only writes), or "
            "field_selector='metadata.name=x' for the fields the API server selects on")),
        **dict.fromkeys(("errors", "retries", "backoff"), _RECONCILE_ERRORS),
        "timeout": _TIMEOUT,
        "id": "is Kopf's; the function is the reconciler, and name= names its controller (logs, metrics)",
        "deleted": "is Kopf's; @op.finalize(Kind) cleans up with a finalizer, @op.on_deleted(Kind) after the fact",
    },
    "finalize": {
        **dict.fromkeys(("labels", "annotations", "when", "field", "value"), _CLEANUP_FILTER),
        **dict.fromkeys(("errors", "retries", "backoff"), _CLEANUP_ERRORS),
        "timeout": _TIMEOUT,
        "id": _ID,
        "optional": ("is Kopf's on.delete option; @op.finalize always holds the deletion with a finalizer: "
                     "for Kopf's optional=True write @op.on_deleted(Kind) instead"),
        "requires_finalizer": ("is Kopf's; @op.finalize always holds the deletion with a finalizer "
                               "(name it with finalizer=)"),
    },
    "on_deleted": {
        **dict.fromkeys(("labels", "annotations", "when", "field", "value"), _DELETED_FILTER),
        **dict.fromkeys(("errors", "retries", "backoff"), _DELETED_ERRORS),
        "timeout": _TIMEOUT,
        "id": _ID,
        "optional": ("is Kopf's on.delete option; @op.on_deleted already is Kopf's optional=True (no finalizer): "
                     "drop it"),
        "requires_finalizer": ("is Kopf's; @op.on_deleted never holds the deletion: @op.finalize(Kind) (or "
                               "@op.on_delete) does, with a finalizer"),
    },
}


def refuse_foreign_options(decorator: str, ours: str, options: dict[str, Any]) -> None:
    """Refuses every keyword argument ``@op.<decorator>`` does not take, naming kubeloop's spelling;
    ``ours``: the arguments it takes."""
    if not options:
        return
    instead = LEVEL_BASED.get(decorator, {})
    lines = [f"{key}={value!r} "
             f"{instead.get(key) or FOREIGN_OPTIONS.get(key) or f'is not an option of @op.{decorator}'}"
             for key, value in options.items()]
    raise TypeError(f"@op.{decorator} takes {ours} only:\n  " + "\n  ".join(lines))


# Kopf's decorators without a kubeloop method of the same shape → what to write instead.
KOPF_DECORATORS: dict[str, str] = {
    "on_resume": ("every object is reconciled when the operator starts, so there is no resume cause: "
                  "@op.reconcile does it (level-based), and @op.on_create runs for each object this process "
                  "sees first, after a restart too"),
    "on_event": ("events only queue keys here: give @op.reconcile predicates=[fn] (fn(event) -> bool sees "
                 "added, modified and deleted events), or a Watch for another kind"),
    "on_login": ("credentials come from the kubeconfig or the in-cluster ServiceAccount (kubeloop run "
                 "--kubeconfig, --context)"),
    "on_probe": "kubeloop serves /healthz and /readyz (caches synced) itself; custom probe results are not supported",
    "on_cleanup": ("the manager stops the controllers itself (--graceful-shutdown-timeout); when embedding, put "
                   "process cleanup after `await manager.run()`"),
    "on_validate": "it is @op.validate(Kind)",
    "on_mutate": "it is @op.mutate(Kind)",
    "index": ("the shared cache is the index: ctx.cache.list(...), ctx.owned(...), or an informer with "
              "indexes= (see docs/howto/kopf.md)"),
    "subhandler": "call plain async functions from the handler",
}
