"""Kopf's own examples (github.com/nolar/kopf, examples/), ported to kubeloop one operator each, on Kopf's
demo resource. tests/integration/test_docs_kopf.py runs every one on a control plane and checks that it
does what Kopf documents for the original, or what the migration page says kubeloop does instead.

What each Kopf example writes to stdout, these record in ``seen[<example>]`` for the tests to read.
"""

from __future__ import annotations

import asyncio
from collections import defaultdict
from dataclasses import dataclass
from typing import Annotated, Any

from kubeloop import GIVE_UP, Context, Event, Operator, PermanentError, Request, Watch, predicates
from kubeloop.resources import Conditions, CustomResource, opaque
from kubeloop.resources.builtin import POD
from pydantic import BaseModel

seen: dict[str, list[Any]] = defaultdict(list)


class KopfExampleStatus(BaseModel):
    message: str | None = None
    children: list[str] | None = None
    pods: list[str] | None = None
    conditions: Conditions | None = None


class KopfExample(CustomResource, group="kopf.dev", version="v1", kind="KopfExample",
                  short_names=["kex"]):
    """Kopf's examples/crd.yaml: a free-form spec."""

    spec: Annotated[dict[str, Any], opaque()] = {}
    status: KopfExampleStatus | None = None


KEX = KopfExample

# --- 01-minimal: @kopf.on.create returning the new status -------------------------------------------------

minimal = Operator("kex-minimal", finalizer_domain="kopf.dev")


@minimal.reconcile(KEX)
async def say_hello(kex: KopfExample, ctx: Context) -> None:
    seen["minimal"].append(f"And here we are! Reconciling: {kex.spec}")
    await ctx.patch_status({"message": "hello world"})  # Kopf stores the return value; here it is explicit


# --- 02-children: kopf.adopt + a Pod created once ----------------------------------------------------------

children = Operator("kex-children", finalizer_domain="kopf.dev")


@children.reconcile(KEX, owns=[POD])
async def keep_the_pod(kex: KopfExample, ctx: Context) -> None:
    pod = {"apiVersion": "v1", "kind": "Pod",  # no generateName: a name the next reconcile finds again
           "metadata": {"name": f"{ctx.name}-pod", "labels": dict(kex.metadata.labels or {})},  # kopf.label
           "spec": {"containers": [{  # name the reconcile can find again (kopf.harmonize_naming)
               "name": "the-only-one", "image": "busybox", "command": ["sh", "-x", "-c"],  # (harmonize_naming)
               "args": [f'echo "FIELD=$FIELD"\nsleep {kex.spec.get("duration", 0)}'],
               "env": [{"name": "FIELD", "value": str(kex.spec.get("field", "default-value"))}]}]}}
    (applied,) = await ctx.apply_children([pod])  # kopf.adopt: namespace, owner reference, and the create
    await ctx.patch_status({"children": [applied["metadata"]["uid"]]})


# --- 03-exceptions: PermanentError, and retries=3, backoff=1.0 ---------------------------------------------

class MyError(Exception):
    pass


retries = Operator("kex-retries", finalizer_domain="kopf.dev")


def three_tries_a_second_apart(error: Exception, request: Request, failures: int) -> float:
    """Kopf's retries=3, backoff=1.0: ``failures`` counts this one, so the third failure is the last."""
    return GIVE_UP if failures >= 3 else 1.0


@retries.reconcile(KEX, error_policy=three_tries_a_second_apart)
async def eventual_failure(kex: KopfExample, ctx: Context) -> None:
    seen["retries"].append(kex.metadata.generation)
    raise MyError("An error that is supposed to be recoverable.")


permanent = Operator("kex-permanent", finalizer_domain="kopf.dev")


@permanent.reconcile(KEX)
async def instant_failure(kex: KopfExample, ctx: Context) -> None:
    seen["permanent"].append(kex.metadata.generation)
    raise PermanentError("Fail once and for all.")


temporary = Operator("kex-temporary", finalizer_domain="kopf.dev")


@dataclass
class Attempts:
    retry: int = 0  # Kopf's retry kwarg: kept per object (op.state), as kubeloop passes none


attempts = temporary.state(Attempts)


def a_second_later(error: Exception, request: Request, failures: int) -> float:
    return 1.0  # kopf.TemporaryError("...", delay=1.0)


@temporary.reconcile(KEX, error_policy=a_second_later)
async def eventual_success(kex: KopfExample, ctx: Context) -> None:
    tried = attempts.of(ctx)
    seen["temporary"].append(tried.retry)
    if tried.retry < 3:  # 0, 1, 2, 3
        tried.retry += 1
        raise MyError("Expected recoverable error.")
    await ctx.patch_status({"message": f"succeeded at retry {tried.retry}"})


# --- 04-events: kopf.event, kopf.info, kopf.warn, kopf.exception ----------------------------------------

events = Operator("kex-events", finalizer_domain="kopf.dev")


@events.reconcile(KEX)
async def post_events(kex: KopfExample, ctx: Context) -> None:
    try:
        await ctx.event("SomeType", "SomeReason", "Some message")  # kopf.event(type="SomeType"): refused
    except ValueError as exc:
        seen["events"].append(str(exc))
    await ctx.event("Normal", "SomeReason", "Some message")  # kopf.info
    await ctx.event("Warning", "SomeReason", "Some message")  # kopf.warn
    try:
        raise RuntimeError("Exception text.")
    except RuntimeError as exc:  # kopf.exception: a Warning with the exception's text
        await ctx.event("Warning", "SomeReason", f"Some exception: {exc}")


# --- 05-handlers: create, update, delete and field handlers ----------------------------------------------
# on.resume has no counterpart: every object is reconciled (and, for cause handlers, "created") when the
# operator starts; @handlers.on_resume is refused with that said.

handlers = Operator("kex-handlers", finalizer_domain="kopf.dev")


@handlers.on_create(KEX)
async def create_fn_1(kex: KopfExample, ctx: Context) -> None:
    seen["handlers"].append("CREATED 1st")


@handlers.on_create(KEX)
async def create_fn_2(kex: KopfExample, ctx: Context) -> None:
    seen["handlers"].append("CREATED 2nd")


@handlers.on_update(KEX)
async def update_fn(kex: KopfExample, ctx: Context, changes: list[Any]) -> None:
    seen["handlers"].append("UPDATED")


@handlers.on_delete(KEX)
async def delete_fn_1(kex: KopfExample, ctx: Context) -> None:
    seen["handlers"].append("DELETED 1st")


@handlers.on_delete(KEX)
async def delete_fn_2(kex: KopfExample, ctx: Context) -> None:
    seen["handlers"].append("DELETED 2nd")


@handlers.on_field(KEX, field="spec.field")
async def field_fn(kex: KopfExample, ctx: Context, changes: list[Any]) -> None:
    for change in changes:
        seen["handlers"].append(f"FIELD CHANGED: {change.old} -> {change.new}")


# --- 08-events: @kopf.on.event, one handler raising --------------------------------------------------------
# There is no per-event handler; predicates see every event (deletions too) and queue the key. One that
# raises is logged and counts as passing: it hides neither the event nor the other predicates.

watch_events = Operator("kex-watch-events", finalizer_domain="kopf.dev")


def event_fn_with_error(event: Event) -> bool:
    raise Exception("Oops!")


def normal_event_fn(event: Event) -> bool:
    seen["watch_events"].append((event.type, event.object["metadata"]["name"]))
    return True


@watch_events.reconcile(KEX, predicates=[event_fn_with_error, normal_event_fn])
async def reconcile_on_events(kex: KopfExample, ctx: Context) -> None:
    return None


# --- 11-filtering-handlers: labels=, annotations=, when= ------------------------------------------------
# Kopf's filter keywords are refused on kubeloop's decorators; the same filters, kubeloop's way:

filtering = Operator("kex-filtering", finalizer_domain="kopf.dev")


def field_is_value(event: Event) -> bool:  # when=lambda spec, **_: spec.get("field") == "value"
    return (event.object.get("spec") or {}).get("field") == "value"


@filtering.reconcile(KEX, label_selector="somelabel=somevalue",  # labels={'somelabel': 'somevalue'}
                     predicates=[predicates.has_label("somelabel"), field_is_value])
async def create_with_labels_matching(kex: KopfExample, ctx: Context) -> None:
    annotations = kex.metadata.annotations or {}
    if annotations.get("someannotation") != "somevalue":  # annotations={...}: in the handler
        return
    seen["filtering"].append(ctx.name)


# --- 13-hooks: on.startup (on.cleanup, on.login and on.probe have no counterpart: refused, saying why) -------

hooks = Operator("kex-hooks", finalizer_domain="kopf.dev")
LOCK: asyncio.Lock | None = None


@hooks.on_startup
async def startup_fn_simple(manager: Any) -> None:
    global LOCK
    LOCK = asyncio.Lock()  # in the operator's event loop, before any reconcile
    seen["hooks"].append("startup")


@hooks.reconcile(KEX)
async def under_the_lock(kex: KopfExample, ctx: Context) -> None:
    assert LOCK is not None, "on_startup runs before the controllers start"
    async with LOCK:
        ctx.log.info("reconciling under the lock")  # kopf's logger: this line carries the object
        seen["hooks"].append(f"reconciled {ctx.name}")


# --- 14-daemons: an async daemon per object, cancelled on deletion, reading the live object -------------

daemons = Operator("kex-daemons", finalizer_domain="kopf.dev")


@daemons.daemon(KEX)
async def background_async(kex: KopfExample, ctx: Context) -> None:
    try:
        while (now := ctx.current()) is not None:  # Kopf's live spec: the object as cached now, not kex
            seen["daemons"].append(f"=> Ping from an async daemon: field={now.spec.get('field')!r}")
            await asyncio.sleep(0.5)
    except asyncio.CancelledError:
        seen["daemons"].append("cancelled")
        raise


# --- 15-timers: @kopf.timer(interval=...) ----------------------------------------------------------------

timers = Operator("kex-timers", finalizer_domain="kopf.dev")


@timers.timer(KEX, interval=1)
async def every_second(kex: KopfExample, ctx: Context) -> None:
    seen["timers"].append(f"Ping from an async timer: field={kex.spec.get('field')!r}")


# --- 16-indexing: @kopf.index('pods') read by a timer ------------------------------------------------------
# The shared cache is the index: a watch on Pods keeps them cached (and wakes the owner of a labelled one).

indexing = Operator("kex-indexing", finalizer_domain="kopf.dev")


def kex_of_pod(pod: dict[str, Any]) -> list[str]:
    meta = pod["metadata"]
    kex = (meta.get("labels") or {}).get("kex")
    return [f"{meta['namespace']}/{kex}"] if kex else []


@indexing.reconcile(KEX, watches=[Watch(POD, mapper=kex_of_pod)])
async def list_pods(kex: KopfExample, ctx: Context) -> None:
    pods = await ctx.cache.list(POD, ctx.namespace)
    mine = sorted(p["metadata"]["name"] for p in pods if (p["metadata"].get("labels") or {}).get("kex") == ctx.name)
    await ctx.patch_status({"pods": mine})
