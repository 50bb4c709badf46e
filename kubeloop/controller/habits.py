"""Kopf's options on the cause-handler decorators (``@op.on_create``, ``on_update``, ``on_field``,
``on_delete``, ``timer``, ``daemon``), refused when the decorator is called with what kubeloop does
instead. A filter dropped silently would run a handler on objects it was written to skip, and Python's
own "unexpected keyword argument" says nothing of where the option went. (The webhook decorators do
the same for theirs: ``kubeloop.webhooks.habits``.)
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


def refuse_foreign_options(decorator: str, ours: str, options: dict[str, Any]) -> None:
    """Refuses every keyword argument ``@op.<decorator>`` does not take, naming kubeloop's spelling;
    ``ours``: the arguments it takes."""
    if not options:
        return
    lines = [f"{key}={value!r} {FOREIGN_OPTIONS.get(key, 'is not an option of kubeloop cause handlers')}"
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
