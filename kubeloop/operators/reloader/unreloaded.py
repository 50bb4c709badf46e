"""Workloads annotated for Reloader that this reloader leaves alone with its settings, where Reloader
(chart defaults) would act: CronJobs without ``--reload-cronjobs`` (Reloader runs a Job from the job
template). Each such CronJob gets a Warning Event saying so and naming the flag, once per process and set
of annotations, rather than nothing happening silently when its ConfigMap changes.
``--ignored-workload-types cronjobs`` says the user wants them left alone: then no Event either. (Jobs
are recreated, as by Reloader; the few that are not get the same Warning from the reconcile, saying why:
``jobs.why_not_recreated``.)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kubeloop import Context, Obj, State
from kubeloop.operators.reloader.jobs import REASON
from kubeloop.operators.reloader.reconciler import workload_policy
from kubeloop.operators.reloader.settings import ReloaderSettings
from kubeloop.operators.reloader.workloads import CRONJOBS, WorkloadKind

NOTES = {
    "cronjobs": ("this CronJob is annotated for Reloader, but CronJobs are reloaded only with --reload-cronjobs: "
                 "add it, with --cronjob-action create-job to run a Job from the job template when a ConfigMap or "
                 "Secret changes, as Reloader does (the default, update-template, changes the template for the "
                 "next scheduled Jobs). Until then its changes are not acted on; --ignored-workload-types "
                 "cronjobs silences this"),
}


@dataclass
class _Warned:
    about: Any = None  # the annotations the last Event was about


_warned = State(_Warned)


def warned_kind(kind_type: str, settings: ReloaderSettings) -> bool:
    """Whether workloads of this type get the Warning instead of a reload with these settings."""
    if kind_type in settings.ignored_workload_types:
        return False
    return kind_type == "cronjobs" and not settings.reload_cronjobs


async def warn_if_annotated(kind: WorkloadKind, workload: Obj, ctx: Context, settings: ReloaderSettings) -> None:
    """One Warning Event on ``workload`` if its annotations ask Reloader to reload it."""
    meta = workload.get("metadata") or {}
    policy = workload_policy(kind, workload, names=settings.names)  # annotated, not opt-out mode's every one
    if not policy.tracks_anything:
        return
    about = (meta.get("annotations"), (kind.template(workload).get("metadata") or {}).get("annotations"))
    warned = _warned.of(ctx)
    if warned.about == about:
        return
    warned.about = about
    await ctx.event("Warning", REASON, NOTES[kind.type])


def reconciler(kind: WorkloadKind, settings: Any) -> Any:
    """The reconcile of a kind that only gets the Warning; ``settings()`` are the operator's."""
    async def reconcile(workload: Obj, ctx: Context) -> None:
        await warn_if_annotated(kind, workload, ctx, settings())
    reconcile.__name__ = f"warn_{kind.type}"
    return reconcile


__all__ = ["CRONJOBS", "REASON", "reconciler", "warn_if_annotated", "warned_kind"]
