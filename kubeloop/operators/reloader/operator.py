"""The reloader operator: one controller per workload kind, woken by its workloads and by the
ConfigMaps and Secrets they use (mapped through a reference index on the workload informer)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from kubeloop import ControllerSpec, Obj, Operator, Watch, builtin, predicates
from kubeloop.operators.reloader.fingerprint import without_data
from kubeloop.operators.reloader.policy import CONFIG_MAP, SECRET
from kubeloop.operators.reloader.reconciler import (
    INDEX,
    SOURCE_RESOURCES,
    Reloader,
    Runtime,
    build_runtime,
    source_changed,
    source_index,
    source_or_metadata_changed,
)
from kubeloop.operators.reloader.settings import ReloaderSettings
from kubeloop.operators.reloader.unreloaded import reconciler as warning_reconciler
from kubeloop.operators.reloader.unreloaded import warned_kind
from kubeloop.operators.reloader.workloads import JOBS, KINDS, WorkloadKind


def follow_settings(reloader: Reloader) -> Callable[[ControllerSpec, ReloaderSettings], ControllerSpec | None]:
    """The controllers as the settings want them: ignored workload types get no controller, an ignored
    source kind (``--ignore-secrets``) is not even watched, and namespaces are watched only for
    ``--namespace-selector``. The generated RBAC follows (no list/watch of what is not watched)."""
    kinds = {f"{reloader.operator.name}-{k.type}": k for k in KINDS}

    def configure(spec: ControllerSpec, settings: ReloaderSettings) -> ControllerSpec | None:
        kind = kinds[spec.name]
        if not settings.reloads(kind.type):
            # Reloader would act on these (chart defaults): an annotated one hears why nothing happens.
            if not warned_kind(kind.type, settings):
                return None
            return replace(spec, reconcile=warning_reconciler(kind, lambda: settings), watches=())
        watches = [w for w in spec.watches if settings.tracks(getattr(w.resource, "kind", ""))]
        if settings.resource_label_selector or settings.names.renamed:
            # Labels (or renamed annotations) decide which objects count: a change to look at.
            watches = [replace(w, predicates=(source_or_metadata_changed,)) for w in watches]
        if settings.namespace_selector:
            watches.append(Watch(builtin.NAMESPACE, mapper=_namespace_mapper(reloader, kind),
                                 predicates=(predicates.labels_changed,), metadata_only=True))
        # The reference index of the workload informer, as these settings name the annotations.
        return replace(spec, watches=tuple(watches), indexes={INDEX: source_index(kind, settings.names)})
    return configure


def _namespace_mapper(reloader: Reloader, kind: WorkloadKind) -> Callable[[Obj], list[str]]:
    def workloads_in(namespace: Obj) -> list[str]:
        return reloader.operator.deps.workloads_in(kind, namespace)
    return workloads_in


def _reloads(kind_type: str) -> Callable[[ReloaderSettings], bool]:
    return lambda settings: settings.reloads(kind_type)


def _create_jobs(settings: ReloaderSettings) -> bool:
    return settings.reloads("cronjobs") and settings.cronjob_action == "create-job"


def build_operator(name: str = "reloader") -> Operator[ReloaderSettings, Runtime]:
    """A fresh operator (tests build their own, with their own settings)."""
    op = Operator(name, settings=ReloaderSettings, deps=build_runtime)
    reloader = Reloader(op)
    op.on_startup(reloader.check)
    op.configure(follow_settings(reloader))
    # Status updates of a rolling workload are not worth a reconcile; spec and annotation changes are.
    workload_changed = predicates.any_of(predicates.generation_changed, predicates.annotations_changed)
    for kind in KINDS:
        watches = [Watch(SOURCE_RESOURCES[source], mapper=reloader.mapper(kind, source),
                         predicates=(source_changed,), transform=without_data) for source in (CONFIG_MAP, SECRET)]
        op.reconcile(kind.resource, watches=watches, predicates=[workload_changed],
                     name=f"{name}-{kind.type}")(reloader.reconciler(kind))
        # Reading and rolling (the recorded hash too) every workload kind, as the README's RBAC says,
        # whether or not these settings reload it; Argo Rollouts only with --argo-rollouts, Jobs unless
        # --ignored-workload-types jobs.
        op.permission(kind.resource, ["list", "watch", "patch"],
                      when=_reloads(kind.type) if kind.type in ("rollouts", "jobs") else None)
    # A deleted Job whose copy could not be created at once gets it when the cache sees it gone.
    op.on_deleted(JOBS.resource)(reloader.job_gone)
    op.permission(builtin.NAMESPACE, ["list", "watch"])  # only used with --namespace-selector
    # A Job is recreated (deleted, and its copy created), as Reloader does, unless --ignored-workload-types jobs.
    op.permission(builtin.JOB, ["delete"], when=_reloads("jobs"))
    # A Job runs any pod its creator writes: only the copy of an annotated Job, or with --cronjob-action
    # create-job one of a CronJob's job template.
    op.permission(builtin.JOB, ["create"], when=lambda s: _create_jobs(s) or s.reloads("jobs"))
    return op


operator = build_operator()
