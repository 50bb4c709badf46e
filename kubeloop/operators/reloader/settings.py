"""The operator's settings: each one a ``kubeloop run reloader`` flag and a ``KUBELOOP_<NAME>``
environment variable. Names follow Reloader's flags, and Reloader's values are read as Reloader reads
them (``--namespace-selector team:web``, ``--ignored-workload-types=jobs,cronjobs``, repeated flags), so
that a Deployment of Reloader keeps its arguments; the flags of Reloader that have no meaning here are
refused by name (see ``compat``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

import click

from kubeloop import Operator
from kubeloop.helpers import selectors
from kubeloop.operators.reloader import compat
from kubeloop.operators.reloader.compat import SettingError
from kubeloop.operators.reloader.policy import CONFIG_MAP, DEFAULT_NAMES, SECRET, Names

STRATEGIES = ("annotations", "env-vars", "restarted-at")
WORKLOAD_TYPES = ("deployments", "statefulsets", "daemonsets", "cronjobs", "rollouts")
# Reloader also restarts Jobs (by deleting and recreating them); kubeloop never touches a Job, so
# ignoring them is accepted and changes nothing.
IGNORABLE_TYPES = (*WORKLOAD_TYPES, "jobs")
SOURCE_TYPES = {"configmaps": CONFIG_MAP, "secrets": SECRET}
CRONJOB_ACTIONS = ("update-template", "create-job")
Items = str | tuple[str, ...]  # a comma-separated string, or the values of a repeated flag


@dataclass(frozen=True)
class Settings:
    auto_reload_all: bool = False
    reload_strategy: str = "annotations"
    reload_on_delete: bool = False
    reload_on_create: bool = False
    sync_after_restart: bool | None = None
    hash_used_keys_only: bool = False
    debounce_seconds: float = 2.0
    max_reloads_per_second: float = 2.0
    reload_burst: int = 10
    namespaces_to_ignore: Items = ""
    namespace_selector: Items = ""
    resource_label_selector: Items = ""
    ignored_workload_types: Items = ""
    resources_to_ignore: Items = ""
    reload_cronjobs: bool = False
    cronjob_action: str = "update-template"
    argo_rollouts: bool = False
    ignore_configmaps: bool = False
    ignore_secrets: bool = False
    dry_run: bool = False
    loop_rollouts: int = 5
    loop_window_seconds: float = 60.0
    names: Names = DEFAULT_NAMES  # from Reloader's rename flags (--auto-annotation, ...)

    @classmethod
    def from_values(cls, values: Mapping[str, Any]) -> Settings:
        """From ``operator.settings`` (unknown keys ignored). Validates what a typo would silently
        break, and normalizes Reloader's spellings (selectors become Kubernetes selectors)."""
        compat.refuse_unsupported(values)
        known = {f.name for f in fields(cls)} - {"names"}
        raw = cls(**{k: v for k, v in values.items() if k in known and v is not None})
        if raw.reload_strategy not in STRATEGIES:
            raise SettingError(f"--reload-strategy: {raw.reload_strategy!r} is not one of {', '.join(STRATEGIES)}")
        if raw.cronjob_action not in CRONJOB_ACTIONS:
            raise SettingError(f"--cronjob-action: {raw.cronjob_action!r} is not one of {', '.join(CRONJOB_ACTIONS)}")
        _workload_types(raw.ignored_workload_types)
        _ignored_sources(raw.resources_to_ignore)
        return _replace(raw, names=Names(compat.renamed(values)),
                        namespace_selector=compat.selector("--namespace-selector", raw.namespace_selector),
                        resource_label_selector=compat.selector("--resource-label-selector",
                                                                raw.resource_label_selector))

    def reloads(self, workload_type: str) -> bool:
        if workload_type == "cronjobs" and not self.reload_cronjobs:
            return False
        if workload_type == "rollouts" and not self.argo_rollouts:
            return False
        return workload_type not in _workload_types(self.ignored_workload_types)

    def tracks(self, source_kind: str) -> bool:
        if source_kind in _ignored_sources(self.resources_to_ignore):
            return False
        return not (self.ignore_configmaps if source_kind == CONFIG_MAP else self.ignore_secrets)

    @property
    def namespace_requirements(self) -> tuple[selectors.Requirement, ...]:
        return selectors.parse(compat.selector("--namespace-selector", self.namespace_selector))

    @property
    def resource_requirements(self) -> tuple[selectors.Requirement, ...]:
        return selectors.parse(compat.selector("--resource-label-selector", self.resource_label_selector))

    @property
    def ignored_namespaces(self) -> frozenset[str]:
        return frozenset(compat.items(self.namespaces_to_ignore))


def _workload_types(value: Items) -> list[str]:
    given = compat.items(value)
    unknown = set(given) - set(IGNORABLE_TYPES)
    if unknown:
        raise SettingError(f"--ignored-workload-types: unknown {', '.join(sorted(unknown))} "
                           f"(choose from {', '.join(IGNORABLE_TYPES)})")
    return given


def _ignored_sources(value: Items) -> set[str]:
    """``--resources-to-ignore``, as Reloader reads it: ``configmaps`` or ``secrets`` (any case), not both."""
    named = {v.lower() for v in compat.items(value)}
    if named - set(SOURCE_TYPES):
        raise SettingError(f"--resources-to-ignore: unknown {', '.join(sorted(named - set(SOURCE_TYPES)))} "
                         "(choose configmaps or secrets)")
    if len(named) > 1:
        raise SettingError("--resources-to-ignore: configmaps or secrets, not both (nothing would be left to "
                         "watch)")
    return {SOURCE_TYPES[n] for n in named}


def _replace(settings: Settings, **changes: Any) -> Settings:
    return Settings(**{**{f.name: getattr(settings, f.name) for f in fields(Settings)}, **changes})


def declare(op: Operator) -> None:
    """Registers every setting on the operator (and Reloader's flags that map onto the framework's)."""
    op.option("auto-reload-all", False, "Opt-out mode: roll every workload for the ConfigMaps and Secrets "
              "it references unless annotated reloader.stakater.com/auto: \"false\" (default: opt-in).",
              type=bool)
    op.option("reload-strategy", "annotations", "How a rollout is triggered: a pod-template annotation "
              "holding the hash, Reloader's STAKATER_* env vars, or kubectl.kubernetes.io/restartedAt.",
              type=click.Choice(STRATEGIES))
    op.option("reload-on-delete", False, "Roll when a referenced object is deleted (default: a Warning event "
              "and no rollout until it is back).", type=bool)
    op.option("reload-on-create", False, "Roll when an object that a reload annotation names, absent until "
              "now, is created (default: its creation is recorded, no rollout).", type=bool)
    op.option("sync-after-restart", None, "Reloader's; accepted for compatibility. Changes made while the "
              "operator was down are always found at start-up (by hash) and roll only what changed.",
              type=bool)
    op.option("hash-used-keys-only", False, "Hash only the keys a pod template reads (env keys, volume "
              "items) instead of whole objects.", type=bool)
    op.option("debounce-seconds", 2.0, "Changes to one workload's objects within this window cause one "
              "rollout.", type=float)
    op.option("max-reloads-per-second", 2.0, "Global rollout rate limit, so that a shared ConfigMap cannot "
              "restart everything at once (0 = unlimited).", type=float)
    op.option("reload-burst", 10, "Rollouts allowed at once before the rate limit applies.", type=int)
    op.option("namespaces-to-ignore", (), "Namespaces whose workloads are never rolled (comma-separated or "
              "repeated).", multiple=True, type=compat.ITEM)
    op.option("namespace-selector", (), "Only roll workloads in namespaces with these labels: a label "
              "selector, or Reloader's key:value / key:* / key=* (comma-separated or repeated; all must "
              "match).", multiple=True,
              type=compat.checked(lambda v: compat.selector("--namespace-selector", v)))
    op.option("resource-label-selector", (), "Only ConfigMaps/Secrets with these labels trigger rollouts "
              "(same syntax as --namespace-selector).", multiple=True,
              type=compat.checked(lambda v: compat.selector("--resource-label-selector", v)))
    op.option("ignored-workload-types", (), "Workload types not to roll (comma-separated or repeated): "
              + ", ".join(IGNORABLE_TYPES) + ".", multiple=True, type=compat.checked(_workload_types))
    op.option("resources-to-ignore", (), "Reloader's: configmaps or secrets, never both (the same as "
              "--ignore-configmaps / --ignore-secrets).", multiple=True, type=compat.checked(_ignored_sources))
    op.option("reload-cronjobs", False, "Also reload CronJobs (see --cronjob-action).", type=bool)
    op.option("cronjob-action", "update-template", "What reloading a CronJob does: update-template (its "
              "job template, so the next Jobs get the new configuration) or create-job (Reloader's: run a "
              "Job from its template now).", type=click.Choice(CRONJOB_ACTIONS))
    op.option("argo-rollouts", False, "Also roll Argo Rollouts (argoproj.io/v1alpha1); the Rollout CRD must "
              "be installed.", type=bool, aliases=("--is-Argo-Rollouts",))
    op.option("ignore-configmaps", False, "Never roll for ConfigMaps (and do not watch them).", type=bool)
    op.option("ignore-secrets", False, "Never roll for Secrets (and do not watch them).", type=bool)
    op.option("dry-run", False, "Compute and report rollouts (server-side dry run) without changing "
              "workloads.", type=bool)
    op.option("loop-rollouts", 5, "A workload whose ConfigMaps/Secrets change again within --loop-window-seconds "
              "after each of this many rollouts is in a loop: the next change is recorded, not rolled, with a "
              "ReloadLoop Warning (0 = never).", type=int)
    op.option("loop-window-seconds", 60.0, "See --loop-rollouts.", type=float)
    compat.declare(op)
