"""Reloader's two ways with the batch kinds.

A CronJob (``--cronjob-action create-job``): run a Job from its job template now, as ``kubectl create
job --from=cronjob/NAME`` does, with the rollout's change in the Job's pod template. The CronJob itself
only gets the recorded hash.

A Job: its pod template cannot change, so Reloader deletes it (propagation Background, so that its pods
go too) and creates it again from its own spec, without what the API server generated for the old one
(``ReCreateJobFromjob`` in stakater/Reloader's ``internal/pkg/callbacks/rolling_upgrade.go``). Here the
copy also carries the strategy's change and the recorded hash, and its creation is tried as a server-side
dry run before anything is deleted (``probe``), so a copy the API server would refuse (admission, quota,
a 403) leaves the Job as it was instead of deleting it.
"""

from __future__ import annotations

import copy
from typing import Any

from kubeloop import Obj
from kubeloop.operators.reloader.workloads import merged

REASON = "NotReloaded"  # the Warning on a workload annotated for Reloader that is left alone here
MANUAL = {"cronjob.kubernetes.io/instantiate": "manual"}  # what kubectl and Reloader mark such Jobs with
NAME_LIMIT = 52  # a CronJob's own limit, so that the Job controller's pod names fit


def job_name(cronjob: str, hash_: str) -> str:
    """One name per CronJob and hash: creating it again (a retry after a conflict) finds it exists
    instead of starting a second Job."""
    suffix = f"-reload-{hash_[:10]}"
    return cronjob[:NAME_LIMIT - len(suffix)].rstrip("-.") + suffix


def job_from(cronjob: Obj, template_change: Obj, hash_: str) -> Obj:
    meta = cronjob["metadata"]
    job_template = (cronjob.get("spec") or {}).get("jobTemplate") or {}
    job_meta = job_template.get("metadata") or {}
    spec = dict(job_template.get("spec") or {})
    spec["template"] = merged(spec.get("template") or {}, template_change)
    return {
        "apiVersion": "batch/v1", "kind": "Job",
        "metadata": {
            "name": job_name(meta["name"], hash_), "namespace": meta["namespace"],
            "annotations": {**MANUAL, **(job_meta.get("annotations") or {})},
            "labels": dict(job_meta.get("labels") or {}),
            # Owned by the CronJob, as its own Jobs are: deleting the CronJob deletes it.
            "ownerReferences": [{"apiVersion": "batch/v1", "kind": "CronJob", "name": meta["name"],
                                 "uid": meta["uid"], "controller": True}],
        },
        "spec": spec,
    }


# --- recreating a Job ------------------------------------------------------------------------------------

# The labels the Job strategy generates from the Job's uid and name (Kubernetes' batch/v1 ControllerUidLabel
# and JobNameLabel, and their legacy spellings): Reloader removes them from the pod template.
GENERATED_LABELS = ("batch.kubernetes.io/controller-uid", "controller-uid", "batch.kubernetes.io/job-name",
                    "job-name")
# Metadata the API server sets: a create must not carry it (a uid or resourceVersion is refused).
SERVER_METADATA = ("uid", "resourceVersion", "creationTimestamp", "generation", "managedFields", "selfLink",
                   "deletionTimestamp", "deletionGracePeriodSeconds")
PROPAGATION = "Background"  # Reloader's: the old Job's pods are deleted with it (batch/v1's default orphans them)
PROBE_PREFIX = 57  # a generated name adds 5 characters: the probe's name stays within a Job's 63


def recreated(job: Obj, template_change: Obj, record: dict[str, str]) -> Obj:
    """The Job to create in place of ``job``: its metadata and spec as its creator wrote them, the
    strategy's change merged into its pod template and ``record`` (the hash) in its annotations.

    As Reloader: no status, no server-set metadata, no generated selector, and the pod template
    without the generated labels. Unlike Reloader: those labels also leave the Job's own labels where
    they hold the old Job's uid or name (the API server defaulted them from the template; they would
    keep naming a Job that is gone), and a Job with ``manualSelector: true`` keeps its selector and
    template labels, which are its creator's (Reloader's copy, without a selector, is refused).
    """
    meta = job.get("metadata") or {}
    spec = copy.deepcopy(job.get("spec") or {})
    template = merged(copy.deepcopy(spec.get("template") or {}), template_change)
    if not spec.get("manualSelector"):
        spec.pop("selector", None)
        template_meta = dict(template.get("metadata") or {})
        labels = {k: v for k, v in (template_meta.get("labels") or {}).items() if k not in GENERATED_LABELS}
        template_meta["labels"] = labels
        if not labels:
            del template_meta["labels"]
        template["metadata"] = template_meta
    spec["template"] = template
    generated = {meta.get("uid"), meta.get("name")}
    new_meta: dict[str, Any] = {k: copy.deepcopy(v) for k, v in meta.items()
                                if k not in SERVER_METADATA and k not in ("labels", "annotations")}
    labels = {k: v for k, v in (meta.get("labels") or {}).items()
              if not (k in GENERATED_LABELS and v in generated)}
    if labels:
        new_meta["labels"] = labels
    new_meta["annotations"] = {**(meta.get("annotations") or {}), **record}
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": new_meta, "spec": spec}


def probe(replacement: Obj) -> Obj:
    """``replacement`` under a generated name, for a dry-run create while the old Job still holds the
    name: admission, validation, quota and RBAC answer as they would for the real create."""
    meta = {k: v for k, v in replacement["metadata"].items() if k != "name"}
    meta["generateName"] = replacement["metadata"]["name"][:PROBE_PREFIX - 1].rstrip("-.") + "-"
    return {**replacement, "metadata": meta}


def why_not_recreated(job: Obj) -> str | None:
    """Why this reloader leaves an annotated Job as it is (where Reloader would recreate it), or None."""
    meta = job.get("metadata") or {}
    owner = next((r for r in meta.get("ownerReferences") or () if r.get("controller")), None)
    if owner is not None:
        return (f"this Job is controlled by {owner.get('kind')} {owner.get('name')}, which makes its Jobs: it is "
                "not deleted and recreated underneath it (Reloader would); annotate its owner instead (a "
                "CronJob is reloaded with --reload-cronjobs)")
    if meta.get("finalizers"):
        return (f"this Job has finalizers ({', '.join(meta['finalizers'])}): its deletion would wait for them and "
                "the copy could not take its name, so it is not deleted and recreated (Reloader would delete it "
                "and fail to create the copy)")
    return None


def owned_by_cronjob(job: Obj) -> bool:
    """One of a CronJob's Jobs: the CronJob is the workload (reloaded, or told why not)."""
    refs = (job.get("metadata") or {}).get("ownerReferences") or ()
    return any(r.get("kind") == "CronJob" for r in refs)
