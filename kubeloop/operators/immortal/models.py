"""The ImmortalContainer custom resource (``immortalcontainer.flugel.it/v1alpha1``).

The article's shape is kept as is: ``spec.image`` (required, non-empty), ``status.currentPod`` and
``status.startTimes``. Everything else is optional and additive, so the article's manifests and
clients keep working.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field

from kubeloop import Conditions, CustomResource, Int64, printer_column, validation

GROUP = "immortalcontainer.flugel.it"
VERSION = "v1alpha1"

# Every list, string and map here has a maximum that the API server enforces (README, "Bounds and the
# cost of one reconcile"). Kubernetes' own limits where it has them: a name (a ServiceAccount's, a
# PriorityClass's, a pod's) 253 characters, a label key 317 (a 253-character prefix, "/", a 63-character
# name) and value 63, all of a pod's annotations together 256 KiB (so no one value can be longer).
# Where Kubernetes sets none, the bound is what the container could use at all, or a generous multiple of
# what real pods carry:
# An image reference is at most 520 characters by the distribution spec's grammar: a name of 255 (registry
# included), ":" and a tag of 128, "@" and a sha512 digest of 135; the rest is headroom.
MAX_IMAGE = 1024
MAX_NAME = 253
MAX_LABEL_KEY = 317
MAX_LABEL_VALUE = 63
MAX_ANNOTATION_VALUE = 256 * 1024
MAX_LABELS = 64  # labels, annotations, nodeSelector: entries each
MAX_ARGS = 1024  # command, args: entries each
MAX_ARG = 128 * 1024  # Linux's MAX_ARG_STRLEN: exec refuses a longer argument
MAX_PATH = 4096  # Linux's PATH_MAX (workingDir)
MAX_ENV = 1024
MAX_ITEMS = 256  # envFrom, ports, volumeMounts, volumes, tolerations
MAX_PULL_SECRETS = 64
MAX_FIELDS = 32  # top-level fields of a free-form object: more than any of these Kubernetes structs has
HISTORY_LIMIT = 10  # status.history: the most recent starts
MAX_UID = 64  # the API server's uids are 36-character UUIDs
MAX_WORD = 64  # phase, a start's reason: one word the operator writes

Name = Annotated[str, Field(max_length=MAX_NAME)]
Arg = Annotated[str, Field(max_length=MAX_ARG)]
# A map's keys have no maxLength in a structural schema: CEL bounds them (its cost: the map's maxProperties).
_KEYS = validation(f"self.all(k, size(k) <= {MAX_LABEL_KEY})", f"keys are at most {MAX_LABEL_KEY} characters")
Labels = Annotated[dict[str, Annotated[str, Field(max_length=MAX_LABEL_VALUE)]], Field(max_length=MAX_LABELS), _KEYS]
Annotations = Annotated[dict[str, Annotated[str, Field(max_length=MAX_ANNOTATION_VALUE)]],
                        Field(max_length=MAX_LABELS), _KEYS]

# Nested Kubernetes structures (resources, probes, tolerations, ...) are kept as sent and validated by
# the API server when the pod is created: re-declaring the whole PodSpec here would only drift from it.
# Free-form, so only their number of top-level fields is bounded here (and each list's length); what is
# inside them is bounded by the API server's limit on an object's size (etcd's 1.5 MiB) and checked when
# the pod is created.
KubeObject = Annotated[dict[str, Any], Field(max_length=MAX_FIELDS)]


def _many(limit: int) -> Any:
    return Field(max_length=limit)


class PodTemplate(BaseModel):
    """Optional pod settings beyond the image. Container fields apply to the one container, the others
    to the pod. The pod always restarts its container itself (restartPolicy Always)."""

    labels: Labels | None = Field(None, description="Extra labels for the pod.")
    annotations: Annotations | None = Field(None, description="Extra annotations for the pod.")
    # the container
    command: Annotated[list[Arg], _many(MAX_ARGS)] | None = Field(
        None, description="Entrypoint (replaces the image's ENTRYPOINT).")
    args: Annotated[list[Arg], _many(MAX_ARGS)] | None = Field(None, description="Arguments (replace the image's CMD).")
    workingDir: Annotated[str, Field(max_length=MAX_PATH)] | None = None
    env: Annotated[list[KubeObject], _many(MAX_ENV)] | None = Field(
        None, description="Environment variables, as in a container.")
    envFrom: Annotated[list[KubeObject], _many(MAX_ITEMS)] | None = None
    ports: Annotated[list[KubeObject], _many(MAX_ITEMS)] | None = None
    resources: KubeObject | None = Field(None, description="Requests and limits, as in a container.")
    imagePullPolicy: Literal["Always", "IfNotPresent", "Never"] | None = None
    livenessProbe: KubeObject | None = None
    readinessProbe: KubeObject | None = None
    startupProbe: KubeObject | None = None
    volumeMounts: Annotated[list[KubeObject], _many(MAX_ITEMS)] | None = None
    securityContext: KubeObject | None = Field(None, description="The container's security context.")
    # the pod
    volumes: Annotated[list[KubeObject], _many(MAX_ITEMS)] | None = None
    nodeSelector: Labels | None = None
    tolerations: Annotated[list[KubeObject], _many(MAX_ITEMS)] | None = None
    affinity: KubeObject | None = None
    serviceAccountName: Name | None = None
    priorityClassName: Name | None = None
    terminationGracePeriodSeconds: Int64 | None = Field(None, ge=0)
    imagePullSecrets: Annotated[list[KubeObject], _many(MAX_PULL_SECRETS)] | None = None


class ImmortalContainerSpec(BaseModel):
    image: str = Field(min_length=1, max_length=MAX_IMAGE, description="The container image to keep running.")
    template: PodTemplate | None = Field(None, description="Optional pod settings beyond the image.")


class StartRecord(BaseModel):
    """One start of the pod: which pod, when, and why it was (re)created."""

    pod: Name
    uid: Annotated[str, Field(max_length=MAX_UID)]
    time: datetime
    reason: str = Field(max_length=MAX_WORD, description="Created, PodDeleted, PodFailed, PodSucceeded, PodEvicted, "
                                    "TemplateChanged or Adopted.")


class ImmortalContainerStatus(BaseModel):
    observedGeneration: Int64 | None = None
    currentPod: Name | None = Field(None, description="The name of the pod running the container.")
    podUID: Annotated[str, Field(max_length=MAX_UID)] | None = Field(
        None, description="The UID of the last pod counted in startTimes.")
    phase: Annotated[str, Field(max_length=MAX_WORD)] | None = Field(
        None, description="The pod's phase; Terminating while it goes away.")
    startTimes: Int64 | None = Field(None, description="How many pods were started (created or adopted).")
    history: Annotated[list[StartRecord], _many(HISTORY_LIMIT)] | None = Field(
        None, description="The most recent starts, oldest first.")
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
