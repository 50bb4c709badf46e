"""Reloader's way to reload a CronJob (``--cronjob-action create-job``): run a Job from its job template
now, as ``kubectl create job --from=cronjob/NAME`` does, with the rollout's change in the Job's pod
template. The CronJob itself only gets the recorded hash."""

from __future__ import annotations

from kubeloop import Obj
from kubeloop.operators.reloader.workloads import merged

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
