"""The operator's settings: each one a ``kubeloop run reloader`` flag and a ``KUBELOOP_<NAME>``
environment variable. Names follow Reloader's flags, and Reloader's values are read as Reloader reads
them (``--namespace-selector team:web``, ``--ignored-workload-types=jobs,cronjobs``, repeated flags), so
that a Deployment of Reloader keeps its arguments; the flags of Reloader that have no meaning here are
refused by name (see ``compat``)."""

from __future__ import annotations

import typing
from functools import cached_property
from typing import Annotated, Any, ClassVar, Literal

from pydantic import BeforeValidator, ValidationInfo, field_validator

from kubeloop import Flag, Settings, selectors, setting
from kubeloop.operators.reloader import compat
from kubeloop.operators.reloader.compat import SettingError
from kubeloop.operators.reloader.policy import CONFIG_MAP, SECRET, Names

Strategy = Literal["annotations", "env-vars", "restarted-at"]
CronJobAction = Literal["update-template", "create-job"]
STRATEGIES: tuple[str, ...] = typing.get_args(Strategy)
CRONJOB_ACTIONS: tuple[str, ...] = typing.get_args(CronJobAction)
WORKLOAD_TYPES = ("deployments", "statefulsets", "daemonsets", "cronjobs", "rollouts", "jobs")
IGNORABLE_TYPES = WORKLOAD_TYPES
SOURCE_TYPES = {"configmaps": CONFIG_MAP, "secrets": SECRET}
# A list flag: comma-separated and/or repeated, the quotes of Reloader's chart dropped (compat.items).
Items = Annotated[tuple[str, ...], BeforeValidator(compat.items)]


def _items(default: tuple[str, ...], help: str) -> Any:
    # From an environment variable the whole value is one item: split at spaces, a selector such as
    # ``tier in (web, api)`` would break.
    return setting(default, help, env_separator="\n")


class ReloaderSettings(Settings):
    """Every flag of ``kubeloop run reloader``: its own, Reloader's annotation renames, and Reloader's
    flags that are refused here (see ``compat``). Selectors are stored as Kubernetes selector terms."""

    framework_flags: ClassVar = {
        "leader-elect": Flag(aliases=("--enable-ha",)),  # Reloader's chart passes it with more than one replica
        # Scoped mode (watch only these namespaces), and Reloader's single-namespace mode.
        "namespace": Flag(aliases=("--namespaces",), env=("KUBERNETES_NAMESPACE",)),
    }

    auto_reload_all: bool = setting(False, "Opt-out mode: roll every workload for the ConfigMaps and Secrets it "
                                    "references unless annotated reloader.stakater.com/auto: \"false\" (default: "
                                    "opt-in).")
    reload_strategy: Strategy = setting("annotations", "How a rollout is triggered: a pod-template annotation "
                                        "holding the hash, Reloader's STAKATER_* env vars, or "
                                        "kubectl.kubernetes.io/restartedAt.")
    reload_on_delete: bool = setting(False, "Roll when a referenced object is deleted (default: a Warning event "
                                     "and no rollout until it is back).")
    reload_on_create: bool = setting(False, "Roll when an object that a reload annotation names, absent until "
                                     "now, is created (default: its creation is recorded, no rollout).")
    sync_after_restart: bool | None = setting(None, "Reloader's; accepted for compatibility. Changes made while "
                                              "the operator was down are always found at start-up (by hash) and "
                                              "roll only what changed.")
    hash_used_keys_only: bool = setting(False, "Hash only the keys a pod template reads (env keys, volume items) "
                                        "instead of whole objects.")
    debounce_seconds: float = setting(2.0, "Changes to one workload's objects within this window cause one "
                                      "rollout.")
    max_reloads_per_second: float = setting(2.0, "Global rollout rate limit, so that a shared ConfigMap cannot "
                                            "restart everything at once (0 = unlimited).")
    reload_burst: int = setting(10, "Rollouts allowed at once before the rate limit applies.")
    namespaces_to_ignore: Items = _items((), "Namespaces whose workloads are never rolled (comma-separated or "
                                         "repeated).")
    namespace_selector: Items = _items((), "Only roll workloads in namespaces with these labels: a label "
                                       "selector, or Reloader's key:value / key:* / key=* (comma-separated or "
                                       "repeated; all must match).")
    resource_label_selector: Items = _items((), "Only ConfigMaps/Secrets with these labels trigger rollouts "
                                            "(same syntax as --namespace-selector).")
    ignored_workload_types: Items = _items((), "Workload types not to roll (comma-separated or repeated): "
                                           + ", ".join(IGNORABLE_TYPES) + ".")
    resources_to_ignore: Items = _items((), "Reloader's: configmaps or secrets, never both (the same as "
                                        "--ignore-configmaps / --ignore-secrets).")
    reload_cronjobs: bool = setting(False, "Also reload CronJobs (see --cronjob-action).")
    cronjob_action: CronJobAction = setting("update-template", "What reloading a CronJob does: update-template "
                                            "(its job template, so the next Jobs get the new configuration) or "
                                            "create-job (Reloader's: run a Job from its template now).")
    argo_rollouts: bool = setting(False, "Also roll Argo Rollouts (argoproj.io/v1alpha1); the Rollout CRD must "
                                  "be installed.", aliases=["--is-Argo-Rollouts"])
    ignore_configmaps: bool = setting(False, "Never roll for ConfigMaps (and do not watch them).")
    ignore_secrets: bool = setting(False, "Never roll for Secrets (and do not watch them).")
    dry_run: bool = setting(False, "Compute and report rollouts (server-side dry run) without changing "
                            "workloads.")
    loop_rollouts: int = setting(5, "A workload whose ConfigMaps/Secrets change again within "
                                 "--loop-window-seconds after each of this many rollouts is in a loop: the next "
                                 "change is recorded, not rolled, with a ReloadLoop Warning (0 = never).")
    loop_window_seconds: float = setting(60.0, "See --loop-rollouts.")

    # Reloader's flags that rename one of its annotations (compat.RENAMES); together they make ``names``.
    configmap_annotation: str | None = compat.rename("configmap-annotation")
    secret_annotation: str | None = compat.rename("secret-annotation")
    auto_annotation: str | None = compat.rename("auto-annotation")
    configmap_auto_annotation: str | None = compat.rename("configmap-auto-annotation")
    secret_auto_annotation: str | None = compat.rename("secret-auto-annotation")
    auto_search_annotation: str | None = compat.rename("auto-search-annotation")
    search_match_annotation: str | None = compat.rename("search-match-annotation")
    ignore_annotation: str | None = compat.rename("ignore-annotation")
    pause_deployment_annotation: str | None = compat.rename("pause-deployment-annotation")
    # Reloader's flags without an equivalent here (compat.UNSUPPORTED): refused when given (switches: when on).
    webhook_url: str | None = compat.refused("webhook-url")
    enable_pprof: bool = compat.refused("enable-pprof")
    pprof_addr: str | None = compat.refused("pprof-addr")
    enable_csi_integration: bool = compat.refused("enable-csi-integration")
    pause_deployment_time_annotation: str | None = compat.refused("pause-deployment-time-annotation")

    @field_validator("namespace_selector", "resource_label_selector")
    @classmethod
    def _selector(cls, given: tuple[str, ...], info: ValidationInfo) -> tuple[str, ...]:
        """Reloader's selector syntax as Kubernetes selector terms; refused if not a valid selector."""
        return compat.selector_terms(_flag(info), given)

    @field_validator("ignored_workload_types")
    @classmethod
    def _workload_types(cls, given: tuple[str, ...]) -> tuple[str, ...]:
        unknown = set(given) - set(IGNORABLE_TYPES)
        if unknown:
            raise SettingError(f"--ignored-workload-types: unknown {', '.join(sorted(unknown))} "
                               f"(choose from {', '.join(IGNORABLE_TYPES)})")
        return given

    @field_validator("resources_to_ignore")
    @classmethod
    def _ignored_sources(cls, given: tuple[str, ...]) -> tuple[str, ...]:
        """As Reloader reads it: ``configmaps`` or ``secrets`` (any case), not both."""
        named = tuple(dict.fromkeys(v.lower() for v in given))
        if set(named) - set(SOURCE_TYPES):
            raise SettingError(f"--resources-to-ignore: unknown {', '.join(sorted(set(named) - set(SOURCE_TYPES)))} "
                               "(choose configmaps or secrets)")
        if len(named) > 1:
            raise SettingError("--resources-to-ignore: configmaps or secrets, not both (nothing would be left to "
                               "watch)")
        return named

    @field_validator(*(f.replace("-", "_") for f in compat.RENAMES))
    @classmethod
    def _annotation_key(cls, given: str | None, info: ValidationInfo) -> str | None:
        return compat.annotation_key(_flag(info), given) if given else given

    @field_validator(*(f.replace("-", "_") for f in compat.UNSUPPORTED))
    @classmethod
    def _refuse(cls, given: Any, info: ValidationInfo) -> Any:
        if given is not None and given is not False:  # given at all; a switch only when on
            raise SettingError(f"{_flag(info)}: not supported by kubeloop's reloader: "
                               f"{compat.UNSUPPORTED[_flag(info)[2:]]}")
        return given

    @cached_property
    def names(self) -> Names:
        """The annotation keys to read, after Reloader's rename flags (--auto-annotation, ...)."""
        return Names(compat.renamed(self))

    def reloads(self, workload_type: str) -> bool:
        if workload_type == "cronjobs" and not self.reload_cronjobs:
            return False
        if workload_type == "rollouts" and not self.argo_rollouts:
            return False
        return workload_type not in self.ignored_workload_types

    def tracks(self, source_kind: str) -> bool:
        if source_kind in {SOURCE_TYPES[n] for n in self.resources_to_ignore}:
            return False
        return not (self.ignore_configmaps if source_kind == CONFIG_MAP else self.ignore_secrets)

    @property
    def namespace_requirements(self) -> tuple[selectors.Requirement, ...]:
        return selectors.parse(",".join(self.namespace_selector))

    @property
    def resource_requirements(self) -> tuple[selectors.Requirement, ...]:
        return selectors.parse(",".join(self.resource_label_selector))

    @property
    def ignored_namespaces(self) -> frozenset[str]:
        return frozenset(self.namespaces_to_ignore)


def _flag(info: ValidationInfo) -> str:
    return "--" + (info.field_name or "").replace("_", "-")
