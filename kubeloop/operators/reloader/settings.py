"""The operator's settings: each one a ``kubeloop run reloader`` flag and a ``KUBELOOP_<NAME>``
environment variable (names follow Reloader's flags where it has one)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

import click

from kubeloop.helpers import selectors
from kubeloop.operator import Operator
from kubeloop.operators.reloader.policy import CONFIG_MAP

STRATEGIES = ("annotations", "env-vars", "restarted-at")
WORKLOAD_TYPES = ("deployments", "statefulsets", "daemonsets", "cronjobs")


@dataclass(frozen=True)
class Settings:
    auto_reload_all: bool = False
    reload_strategy: str = "annotations"
    reload_on_delete: bool = False
    hash_used_keys_only: bool = False
    debounce_seconds: float = 2.0
    max_reloads_per_second: float = 2.0
    reload_burst: int = 10
    namespaces_to_ignore: str = ""
    namespace_selector: str = ""
    resource_label_selector: str = ""
    ignored_workload_types: str = ""
    reload_cronjobs: bool = False
    ignore_configmaps: bool = False
    ignore_secrets: bool = False
    dry_run: bool = False
    loop_rollouts: int = 5
    loop_window_seconds: float = 60.0

    @classmethod
    def from_values(cls, values: Mapping[str, Any]) -> Settings:
        """From ``operator.settings`` (unknown keys ignored); validates what a typo would silently break."""
        known = {f.name for f in fields(cls)}
        settings = cls(**{k: v for k, v in values.items() if k in known and v is not None})
        if settings.reload_strategy not in STRATEGIES:
            raise ValueError(f"reload-strategy must be one of {', '.join(STRATEGIES)}")
        unknown = set(_list(settings.ignored_workload_types)) - set(WORKLOAD_TYPES)
        if unknown:
            raise ValueError(f"ignored-workload-types: unknown {', '.join(sorted(unknown))} "
                             f"(choose from {', '.join(WORKLOAD_TYPES)})")
        selectors.parse(settings.namespace_selector)
        selectors.parse(settings.resource_label_selector)
        return settings

    def reloads(self, workload_type: str) -> bool:
        if workload_type == "cronjobs" and not self.reload_cronjobs:
            return False
        return workload_type not in _list(self.ignored_workload_types)

    def tracks(self, source_kind: str) -> bool:
        return not (self.ignore_configmaps if source_kind == CONFIG_MAP else self.ignore_secrets)

    @property
    def ignored_namespaces(self) -> frozenset[str]:
        return frozenset(_list(self.namespaces_to_ignore))


def declare(op: Operator) -> None:
    """Registers every setting on the operator."""
    op.option("auto-reload-all", False, "Opt-out mode: roll every workload for the ConfigMaps and Secrets "
              "it references unless annotated reloader.stakater.com/auto: \"false\" (default: opt-in).",
              type=bool)
    op.option("reload-strategy", "annotations", "How a rollout is triggered: a pod-template annotation "
              "holding the hash, Reloader's STAKATER_* env vars, or kubectl.kubernetes.io/restartedAt.",
              type=click.Choice(STRATEGIES))
    op.option("reload-on-delete", False, "Roll when a referenced object is deleted (default: a Warning event "
              "and no rollout until it is back).", type=bool)
    op.option("hash-used-keys-only", False, "Hash only the keys a pod template reads (env keys, volume "
              "items) instead of whole objects.", type=bool)
    op.option("debounce-seconds", 2.0, "Changes to one workload's objects within this window cause one "
              "rollout.", type=float)
    op.option("max-reloads-per-second", 2.0, "Global rollout rate limit, so that a shared ConfigMap cannot "
              "restart everything at once (0 = unlimited).", type=float)
    op.option("reload-burst", 10, "Rollouts allowed at once before the rate limit applies.", type=int)
    op.option("namespaces-to-ignore", "", "Comma-separated namespaces whose workloads are never rolled.")
    op.option("namespace-selector", "", "Only roll workloads in namespaces matching this label selector.")
    op.option("resource-label-selector", "", "Only ConfigMaps/Secrets matching this label selector trigger "
              "rollouts.")
    op.option("ignored-workload-types", "", "Comma-separated workload types not to roll: "
              + ", ".join(WORKLOAD_TYPES) + ".")
    op.option("reload-cronjobs", False, "Also update CronJobs' job templates, so future Jobs get the new "
              "configuration.", type=bool)
    op.option("ignore-configmaps", False, "Never roll for ConfigMaps (and do not watch them).", type=bool)
    op.option("ignore-secrets", False, "Never roll for Secrets (and do not watch them).", type=bool)
    op.option("dry-run", False, "Compute and report rollouts (server-side dry run) without changing "
              "workloads.", type=bool)
    op.option("loop-rollouts", 5, "A workload whose ConfigMaps/Secrets change again within --loop-window-seconds "
              "after each of this many rollouts is in a loop: the next change is recorded, not rolled, with a "
              "ReloadLoop Warning (0 = never).", type=int)
    op.option("loop-window-seconds", 60.0, "See --loop-rollouts.", type=float)


def _list(value: str | None) -> list[str]:
    return [v.strip() for v in (value or "").split(",") if v.strip()]

