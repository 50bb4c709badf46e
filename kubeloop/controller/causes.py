"""Kopf-style handlers by cause (create, update with diffs, delete, timers, daemons), compiled onto
the level-based engine: one reconcile function per resource decides which cause applies by comparing
the object with the last state this process handled (kept in memory, never in the object).

After a restart every object counts as new, so create handlers run again: like every handler here,
they must be idempotent (which level-based code is anyway). Daemons are listed here but run by the
controller (``ControllerSpec.daemons``, kubeloop.controller.daemons), which owns their tasks.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from kubeloop import clock
from kubeloop.controller.diff import Change, diff, essence, under
from kubeloop.reconcile.context import Context
from kubeloop.reconcile.result import Result
from kubeloop.reconcile.state import State

Handler = Callable[..., Awaitable[Any]]


@dataclass
class _Handled:
    """Per object: the state the last reconcile handled (None: never seen) and when each timer is due."""

    last: Any = None
    timers_due: dict[int, float] = field(default_factory=dict)


_handled = State(_Handled)


@dataclass
class CauseHandlers:
    create: list[Handler] = field(default_factory=list)
    update: list[tuple[Handler, str | None]] = field(default_factory=list)
    fields: list[tuple[Handler, str]] = field(default_factory=list)  # on_field: creation included
    delete: list[Handler] = field(default_factory=list)
    timers: list[tuple[Handler, float]] = field(default_factory=list)
    daemons: list[Handler] = field(default_factory=list)  # the definition only: each run starts its own

    @property
    def needs_finalizer(self) -> bool:
        return bool(self.delete)

    async def reconcile(self, obj: Any, ctx: Context) -> Result | None:
        current = essence(ctx.raw)
        handled = _handled.of(ctx)
        last = handled.last
        if last is None:
            for handler in self.create:
                await handler(obj, ctx)
            for handler, field_path in self.fields:
                created = _created(current, field_path)
                if created:
                    await handler(obj, ctx, created)
        else:
            changes = diff(last, current)
            for handler, path in [*self.update, *self.fields]:
                selected = under(changes, path)
                if selected:
                    await handler(obj, ctx, selected)
        handled.last = current
        return await self._timers(obj, ctx)

    async def cleanup(self, obj: Any, ctx: Context) -> Result | None:
        for handler in self.delete:  # the controller stopped the object's daemons before
            await handler(obj, ctx)
        return None

    async def _timers(self, obj: Any, ctx: Context) -> Result | None:
        if not self.timers:
            return None
        now = clock.monotonic()
        due_at = _handled.of(ctx).timers_due
        next_in = min(interval for _, interval in self.timers)
        for i, (handler, interval) in enumerate(self.timers):
            due = due_at.get(i, now)
            if due <= now:
                await handler(obj, ctx)
                due = now + interval
                due_at[i] = due
            next_in = min(next_in, max(0.0, due - now))
        return Result(requeue_after=max(next_in, 0.01))


def _created(current: dict[str, Any], path: str) -> list[Change]:
    """A new object's field as a change from nothing (Kopf calls ``on.field`` with ``old=None``), or none
    when the field is not set."""
    value: Any = current
    for part in path.split("."):
        if not isinstance(value, dict) or part not in value:
            return []
        value = value[part]
    return [Change("add", tuple(path.split(".")), None, value)]


__all__ = ["CauseHandlers", "Change"]
