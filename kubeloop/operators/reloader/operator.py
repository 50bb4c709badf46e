"""The reloader operator: one controller per workload kind, woken by its workloads and by the
ConfigMaps and Secrets they use (mapped through a reference index on the workload informer)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from kubeloop.cache.store import Obj
from kubeloop.controller import DEFAULT_CONCURRENCY, Controller, Watch, predicates
from kubeloop.operator import Operator
from kubeloop.operators.reloader.policy import CONFIG_MAP, SECRET
from kubeloop.operators.reloader.reconciler import (
    SOURCE_RESOURCES,
    Reloader,
    source_changed,
    source_or_metadata_changed,
)
from kubeloop.operators.reloader.settings import ReloaderSettings
from kubeloop.operators.reloader.workloads import KINDS, WorkloadKind
from kubeloop.resources import builtin


class ReloaderOperator(Operator[ReloaderSettings]):
    """An Operator whose controllers follow its settings: ignored workload types get no controller, an
    ignored source kind (``--ignore-secrets``) is not even watched, and namespaces are watched only for
    ``--namespace-selector``."""

    reloader: Reloader

    def controllers(self, concurrency: int = DEFAULT_CONCURRENCY) -> list[Controller]:
        settings = self.settings
        kinds = {f"{self.name}-{k.type}": k for k in KINDS}
        kept = []
        for controller in super().controllers(concurrency):
            kind = kinds[controller.name]
            if not settings.reloads(kind.type):
                continue
            controller.watches = [w for w in controller.watches
                                  if settings.tracks(getattr(w.resource, "kind", ""))]
            if settings.resource_label_selector or settings.names.renamed:
                # Labels (or renamed annotations) decide which objects count: a change to look at.
                controller.watches = [replace(w, predicates=(source_or_metadata_changed,))
                                      for w in controller.watches]
            if settings.namespace_selector:
                controller.watches.append(Watch(builtin.NAMESPACE, mapper=self._namespace_mapper(kind),
                                                predicates=(predicates.labels_changed,), metadata_only=True))
            kept.append(controller)
        return kept

    def permissions(self) -> list[Any]:
        """Least privilege for these settings: patching Rollouts only with --argo-rollouts, creating Jobs
        only with --cronjob-action create-job (a Job runs any pod its creator writes), reading Secrets
        (or ConfigMaps) only when they are watched."""
        settings = self.settings
        wanted = {("argoproj.io", "rollouts"): settings.reloads("rollouts"),
                  ("batch", "jobs"): settings.reloads("cronjobs") and settings.cronjob_action == "create-job",
                  ("", "secrets"): settings.tracks(SECRET), ("", "configmaps"): settings.tracks(CONFIG_MAP)}
        return [p for p in super().permissions() if wanted.get((p.group, p.resource), True)]

    def _namespace_mapper(self, kind: WorkloadKind) -> Callable[[Obj], list[str]]:
        def workloads_in(namespace: Obj) -> list[str]:
            runtime = self.reloader.runtime
            return runtime.workloads_in(kind, namespace) if runtime else []
        return workloads_in


def build_operator(name: str = "reloader") -> ReloaderOperator:
    """A fresh operator (tests build their own, with their own settings)."""
    op = ReloaderOperator(name, settings=ReloaderSettings)
    reloader = op.reloader = Reloader(op)
    op.on_startup(reloader.start)
    # Status updates of a rolling workload are not worth a reconcile; spec and annotation changes are.
    workload_changed = predicates.any_of(predicates.generation_changed, predicates.annotations_changed)
    for kind in KINDS:
        watches = [Watch(SOURCE_RESOURCES[source], mapper=reloader.mapper(kind, source),
                         predicates=(source_changed,)) for source in (CONFIG_MAP, SECRET)]
        op.reconcile(kind.resource, watches=watches, predicates=[workload_changed],
                     name=f"{name}-{kind.type}")(reloader.reconciler(kind))
        op.permission(kind.resource, ["patch"])  # the rollout (and the recorded hash)
    op.permission(builtin.NAMESPACE, ["list", "watch"])  # only used with --namespace-selector
    op.permission(builtin.JOB, ["create"])  # only used with --cronjob-action create-job
    return op


operator = build_operator()
