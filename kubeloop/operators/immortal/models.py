"""The ImmortalContainer custom resource (``immortalcontainer.flugel.it/v1alpha1``).

The article's shape is kept as is: ``spec.image`` (required, non-empty), ``status.currentPod`` and
``status.startTimes``. Everything else is optional and additive, so the article's manifests and
clients keep working.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, Field

from kubeloop import Conditions, CustomResource, Int64, printer_column

GROUP = "immortalcontainer.flugel.it"
VERSION = "v1alpha1"

# Nested Kubernetes structures (resources, probes, tolerations, ...) are kept as sent and validated by
# the API server when the pod is created: re-declaring the whole PodSpec here would only drift from it.
KubeObject = dict[str, Any]


class PodTemplate(BaseModel):
    """Optional pod settings beyond the image. Container fields apply to the one container, the others
    to the pod. The pod always restarts its container itself (restartPolicy Always)."""

    labels: dict[str, str] | None = Field(None, description="Extra labels for the pod.")
    annotations: dict[str, str] | None = Field(None, description="Extra annotations for the pod.")
    # the container
    command: list[str] | None = Field(None, description="Entrypoint (replaces the image's ENTRYPOINT).")
    args: list[str] | None = Field(None, description="Arguments (replace the image's CMD).")
    workingDir: str | None = None
    env: list[KubeObject] | None = Field(None, description="Environment variables, as in a container.")
    envFrom: list[KubeObject] | None = None
    ports: list[KubeObject] | None = None
    resources: KubeObject | None = Field(None, description="Requests and limits, as in a container.")
    imagePullPolicy: Literal["Always", "IfNotPresent", "Never"] | None = None
    livenessProbe: KubeObject | None = None
    readinessProbe: KubeObject | None = None
    startupProbe: KubeObject | None = None
    volumeMounts: list[KubeObject] | None = None
    securityContext: KubeObject | None = Field(None, description="The container's security context.")
    # the pod
    volumes: list[KubeObject] | None = None
    nodeSelector: dict[str, str] | None = None
    tolerations: list[KubeObject] | None = None
    affinity: KubeObject | None = None
    serviceAccountName: str | None = None
    priorityClassName: str | None = None
    terminationGracePeriodSeconds: Int64 | None = Field(None, ge=0)
    imagePullSecrets: list[KubeObject] | None = None


class ImmortalContainerSpec(BaseModel):
    image: str = Field(min_length=1, description="The container image to keep running.")
    template: PodTemplate | None = Field(None, description="Optional pod settings beyond the image.")


class StartRecord(BaseModel):
    """One start of the pod: which pod, when, and why it was (re)created."""

    pod: str
    uid: str
    time: datetime
    reason: str = Field(description="Created, PodDeleted, PodFailed, PodSucceeded, PodEvicted, "
                                    "TemplateChanged or Adopted.")


class ImmortalContainerStatus(BaseModel):
    observedGeneration: Int64 | None = None
    currentPod: str | None = Field(None, description="The name of the pod running the container.")
    podUID: str | None = Field(None, description="The UID of the last pod counted in startTimes.")
    phase: str | None = Field(None, description="The pod's phase; Terminating while it goes away.")
    startTimes: Int64 | None = Field(None, description="How many pods were started (created or adopted).")
    history: list[StartRecord] | None = Field(None, description="The most recent starts, oldest first.")
    conditions: Conditions | None = None


class ImmortalContainer(
    CustomResource, group=GROUP, version=VERSION, kind="ImmortalContainer",
    plural="immortalcontainers", singular="immortalcontainer", list_kind="ImmortalContainerList",
    printer_columns=[
        printer_column("Image", ".spec.image"),
        printer_column("Current Pod", ".status.currentPod"),
        printer_column("Starts", ".status.startTimes", type="integer"),
        printer_column("Ready", '.status.conditions[?(@.type=="Available")].status'),
        printer_column("Age", ".metadata.creationTimestamp", type="date"),
    ],
):
    """A container that must run forever: its pod is recreated whenever it terminates or is deleted."""

    spec: ImmortalContainerSpec
    status: ImmortalContainerStatus | None = None
