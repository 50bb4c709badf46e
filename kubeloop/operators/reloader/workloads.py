"""The workload kinds that can be rolled, where their pod template lives, and the rollout strategies
(what to change in the template so the workload's own controller replaces its pods)."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from kubeloop import Obj, Resource, builtin, clock
from kubeloop.operators.reloader.policy import RESTARTED_AT, TEMPLATE_HASH
from kubeloop.operators.reloader.references import Ref


@dataclass(frozen=True)
class WorkloadKind:
    type: str  # as in --ignored-workload-types
    resource: Resource
    template_path: tuple[str, ...]
    # Custom resources take no strategic-merge patch: a JSON merge patch, whose lists replace whole lists
    # (see ``expand_lists``).
    patch_type: Literal["strategic", "merge"] = "strategic"

    def template(self, obj: Obj) -> Obj:
        node: Any = obj
        for part in self.template_path:
            node = (node or {}).get(part)
        return node or {}

    def nest(self, template_patch: Obj) -> Obj:
        """A template patch placed where this kind keeps its template."""
        out: Obj = template_patch
        for part in reversed(self.template_path):
            out = {part: out}
        return out

    @staticmethod
    def paused(obj: Obj) -> bool:
        """A paused Deployment must not be rolled (only Deployments can be paused)."""
        return bool((obj.get("spec") or {}).get("paused"))


SPEC_TEMPLATE = ("spec", "template")
DEPLOYMENTS = WorkloadKind("deployments", builtin.DEPLOYMENT, SPEC_TEMPLATE)
STATEFULSETS = WorkloadKind("statefulsets", builtin.STATEFUL_SET, SPEC_TEMPLATE)
DAEMONSETS = WorkloadKind("daemonsets", builtin.DAEMON_SET, SPEC_TEMPLATE)
# A CronJob has no pods to replace: its job template is updated so the next Jobs use the new data.
CRONJOBS = WorkloadKind("cronjobs", builtin.CRON_JOB, ("spec", "jobTemplate", "spec", "template"))
# Argo Rollouts (a CRD, only with --argo-rollouts): rolled by their template, like a Deployment, or by
# ``spec.restartAt`` when annotated ``reloader.stakater.com/rollout-strategy: restart`` (Reloader's two).
ROLLOUT = Resource("argoproj.io", "v1alpha1", "rollouts", "Rollout")
ROLLOUTS = WorkloadKind("rollouts", ROLLOUT, SPEC_TEMPLATE, patch_type="merge")
# A Job's pod template cannot change: it is deleted and created again (jobs.recreated), as Reloader does.
JOBS = WorkloadKind("jobs", builtin.JOB, SPEC_TEMPLATE)
KINDS = (DEPLOYMENTS, STATEFULSETS, DAEMONSETS, CRONJOBS, ROLLOUTS, JOBS)


# --- strategies ----------------------------------------------------------------------------------------

def template_change(strategy: str, combined: str, changed: Mapping[Ref, str], template: Obj,
                    now: dt.datetime | None = None) -> Obj:
    """The strategic-merge patch of the pod template that starts a rollout.

    - ``annotations``: the combined hash as a template annotation (pods show the config they run).
    - ``env-vars``: Reloader's ``STAKATER_<NAME>_<CONFIGMAP|SECRET>`` env var per changed object, in the
      containers that read it (the first container if none does), valued with the object's hash.
    - ``restarted-at``: what ``kubectl rollout restart`` does.
    """
    if strategy == "annotations":
        return {"metadata": {"annotations": {TEMPLATE_HASH: combined}}}
    if strategy == "restarted-at":
        stamp = (now or clock.now()).strftime("%Y-%m-%dT%H:%M:%SZ")
        return {"metadata": {"annotations": {RESTARTED_AT: stamp}}}
    if strategy == "env-vars":
        return {"spec": _env_patch(changed, template.get("spec") or {})}
    raise ValueError(f"unknown reload strategy {strategy!r}")


def env_var_name(ref: Ref) -> str:
    """Reloader's name: ``STAKATER_`` + the object's name upper-cased, non-alphanumerics as ``_``."""
    return f"STAKATER_{re.sub(r'[^A-Za-z0-9]', '_', ref.name).upper()}_{ref.kind.upper()}"


def _env_patch(changed: Mapping[Ref, str], pod_spec: Obj) -> Obj:
    lists: dict[str, dict[str, list[Obj]]] = {}
    first = ((pod_spec.get("containers") or [{}])[0]).get("name", "")
    init_names = {c.get("name") for c in pod_spec.get("initContainers") or ()}
    for ref, value in changed.items():
        for container in sorted(ref.containers) or [first]:
            field = "initContainers" if container in init_names else "containers"
            env = lists.setdefault(field, {}).setdefault(container, [])
            env.append({"name": env_var_name(ref), "value": value})
    return {field: [{"name": name, "env": env} for name, env in by_name.items()]
            for field, by_name in lists.items()}


def restart_at(now: dt.datetime | None = None) -> Obj:
    """The Rollout patch of Reloader's ``restart`` strategy: Argo replaces the pods, template unchanged."""
    return {"spec": {"restartAt": (now or clock.now()).strftime("%Y-%m-%dT%H:%M:%SZ")}}


def expand_lists(current: Any, change: Any) -> Any:
    """A template change as a JSON merge patch: maps stay partial, but every list in it becomes the whole
    list (the current items with the change's merged in by name), since a merge patch replaces lists."""
    if isinstance(change, dict):
        node = current if isinstance(current, dict) else {}
        return {k: expand_lists(node.get(k), v) for k, v in change.items()}
    if isinstance(change, list):
        return merged(current, change)
    return change


def merged(current: Any, change: Any) -> Any:
    """``change`` applied to ``current`` the way a strategic-merge patch would: maps merge, lists of
    named items merge by name, anything else is replaced."""
    if isinstance(change, dict) and isinstance(current, dict):
        return {**current, **{k: merged(current.get(k), v) for k, v in change.items()}}
    if isinstance(change, list) and isinstance(current, list):
        out = list(current)
        names = [item.get("name") if isinstance(item, dict) else None for item in out]
        for item in change:
            name = item.get("name") if isinstance(item, dict) else None
            if name is not None and name in names:
                i = names.index(name)
                out[i] = merged(out[i], item)
            else:
                out.append(item)
        return out
    return change


def already_applied(template: Obj, change: Obj) -> bool:
    """True if the template already holds the change: the rollout for this hash is under way (or done),
    so it is recorded, not started again. Lists of named items (containers, env) match by name."""
    if isinstance(change, dict):
        return isinstance(template, dict) and all(
            k in template and already_applied(template[k], v) for k, v in change.items())
    if isinstance(change, list):
        if not isinstance(template, list):
            return False
        by_name = {item.get("name"): item for item in template if isinstance(item, dict)}
        return all(isinstance(item, dict) and item.get("name") in by_name
                   and already_applied(by_name[item["name"]], item) for item in change)
    return bool(template == change)
