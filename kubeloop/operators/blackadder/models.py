"""The ChaosAgent custom resource (``chaosagents.blackadder.io``): one CRD serving three versions.

- ``v1alpha1`` (the article's first draft, deprecated) and ``v1beta1`` (the article's second, stored)
  keep the article's field names, so its manifests apply verbatim and objects stored before
  ``v1beta2`` existed read as they always did.
- ``v1beta2`` (the hub, what the reconciler reads) names the two fields whose article names mislead:
  ``podTolerance`` → ``minRunningPods`` (a floor, not a tolerance) and ``pauseDuration`` →
  ``pauseSeconds`` (the unit in the name, as Kubernetes' API conventions ask and as
  ``restoreAfterSeconds`` already does). ``versions.py`` converts between them.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field

from kubeloop import BoundedLabelSelector, Conditions, CustomResource, printer_column

# Every list and string here has a maximum that the API server enforces (README, "Bounds and the cost of
# one reconcile"), the same in every version, so that a conversion can never make an object invalid.
# Kubernetes' own limits where it has them: a namespace name 63 characters, an object name 253; the
# selectors are kubeloop.BoundedLabelSelector (Kubernetes' label limits; 32 labels, 16 expressions).
MAX_NAMESPACE = 63
MAX_NAME = 253
# Each excluded namespace is a field-selector term (metadata.namespace!=name) of every LIST a round makes:
# 128 of them are a query of about 11 KB, well inside what the API server reads.
MAX_EXCLUDED = 128
MAX_TIME_RANGES = 24  # excludedTimesOfDay: "HH:MM-HH:MM", 11 characters each
MAX_TIMEZONE = 64  # the longest IANA zone name is 32 characters ("America/Argentina/ComodRivadavia")
MAX_RECENT_ACTIONS = 100  # status.recentActions (--recent-actions is at most this)
MAX_WORD = 64  # an action's time (RFC 3339) and verb, written by the operator
MAX_DETAIL = 1024  # an action's detail (cut to this length when written)

Weekday = Literal["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
WEEKDAYS: tuple[Weekday, ...] = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
# "22:00-06:00" wraps past midnight; equal ends mean the whole day.
TimeRange = Annotated[str, Field(pattern=r"^([01][0-9]|2[0-3]):[0-5][0-9]-([01][0-9]|2[0-3]):[0-5][0-9]$",
                                 max_length=11)]
Mode = Literal["tantrum", "cancer", "ipsum", "restore"]
Namespace = Annotated[str, Field(max_length=MAX_NAMESPACE)]


class _Spec(BaseModel):
    """What every version shares: all but the two fields v1beta2 renames."""

    # --- the article's switches ---
    tantrumMode: bool = Field(False, description="Kill pods at random.")
    cancerMode: bool = Field(False, description="Double Deployments' replicas at random (capped at 128).")
    ipsumMode: bool = Field(False, description="Overwrite ConfigMaps' data with lorem ipsum at random.")
    eagerness: int = Field(10, ge=1, le=100, description="Chance, in percent, that a candidate is hit "
                           "per round.")
    excludedNamespaces: list[Namespace] = Field([], max_length=MAX_EXCLUDED, description=(
        "Namespaces never touched (kube-system, kube-public, kube-node-lease and the operator's own always "
        f"are); at most {MAX_EXCLUDED}."))
    # --- safety ---
    dryRun: bool = Field(False, description="Choose victims, log and record events, but change nothing.")
    suspend: bool = Field(False, description="Do no rounds until unset.")
    # --- reproducibility ---
    seed: int | None = Field(None, ge=0, description="Random seed; each round derives its choices from the "
                             "seed and the round number. Unset: one is picked and recorded in status.")
    # --- tantrumMode done right ---
    minPodAgeSeconds: int = Field(60, ge=0, description="Pods younger than this are neither counted "
                                  "nor killed.")
    gracePeriodSeconds: int | None = Field(None, ge=0, description="Grace period of killed pods "
                                           "(default: the pod's own).")
    onePerOwner: bool = Field(True, description="At most one victim per owner (ReplicaSet, ...) per round.")
    killOrphans: bool = Field(False, description="Also kill pods that no controller owns (never recreated).")
    respectPodDisruptionBudgets: bool = Field(False, description="Evict through the Eviction API, so that "
                                              "PodDisruptionBudgets can refuse; refused victims are spared.")
    # --- cancerMode's budget ---
    maxExtraReplicasPerRound: int = Field(4, ge=0, description="cancerMode adds at most this many replicas "
                                          "per round, over all Deployments (0: none).")
    maxExtraReplicas: int = Field(16, ge=0, description="cancerMode holds at most this many extra replicas "
                                  "at once, over all Deployments it has scaled and not yet restored.")
    # --- reversibility ---
    restoreAfterSeconds: int | None = Field(None, ge=1, description="Undo scaled Deployments and rewritten "
                                            "ConfigMaps this long after the first change.")
    # --- selection ---
    namespaceSelector: BoundedLabelSelector | None = Field(None, description="Only namespaces with these labels.")
    podSelector: BoundedLabelSelector | None = Field(None, description="Only pods with these labels.")
    deploymentSelector: BoundedLabelSelector | None = Field(None, description="Only Deployments with these labels.")
    configMapSelector: BoundedLabelSelector | None = Field(None, description="Only ConfigMaps with these labels.")
    # --- time windows (like chaoskube's) ---
    excludedWeekdays: list[Weekday] = Field([], max_length=7, description="No rounds on these days (Mon..Sun).")
    excludedTimesOfDay: list[TimeRange] = Field([], max_length=MAX_TIME_RANGES, description=(
        f'No rounds in these local times, e.g. "22:00-06:00"; at most {MAX_TIME_RANGES}.'))
    timezone: str = Field("UTC", max_length=MAX_TIMEZONE,
                          description="IANA zone the time windows are in, e.g. Europe/Berlin.")


class ChaosAgentSpec(_Spec):
    """What havoc the agent makes, where, and how often."""  # v1beta2, the hub

    minRunningPods: int = Field(0, ge=0, description="Kill only while at least this many candidate pods "
                                "run (v1alpha1/v1beta1: podTolerance).")
    pauseSeconds: int = Field(30, ge=1, description="Seconds between rounds (v1alpha1/v1beta1: "
                              "pauseDuration).")


class ArticleSpec(_Spec):
    """What havoc the agent makes, where, and how often."""  # v1alpha1 and v1beta1: the article's names

    podTolerance: int = Field(0, ge=0, description="Kill only while at least this many candidate pods run.")
    pauseDuration: int = Field(30, ge=1, description="Seconds between rounds.")


class Counters(BaseModel):
    """Victims per mode since the agent was created (dry-run choices included)."""

    tantrum: int = 0
    cancer: int = 0
    ipsum: int = 0
    restored: int = 0


class Action(BaseModel):
    """One thing the agent did (or, in dry run, would have done)."""

    time: Annotated[str, Field(max_length=MAX_WORD)]
    round: int
    mode: Mode
    action: Annotated[str, Field(max_length=MAX_WORD)]
    namespace: Namespace
    name: Annotated[str, Field(max_length=MAX_NAME)]
    detail: Annotated[str, Field(max_length=MAX_DETAIL)] | None = None
    dryRun: bool | None = None


class ChaosAgentStatus(BaseModel):
    observedGeneration: int | None = None
    round: int | None = Field(None, description="Rounds done so far.")
    seed: int | None = Field(None, description="The seed the rounds derive their choices from.")
    lastRoundTime: datetime | None = None
    nextRoundTime: datetime | None = None
    counters: Counters | None = None
    extraReplicas: int | None = Field(None, description="Replicas cancerMode has added and not yet "
                                      "restored, over all Deployments the agent holds.")
    recentActions: Annotated[list[Action], Field(max_length=MAX_RECENT_ACTIONS)] | None = Field(
        None, description="The latest actions, newest last.")
    conditions: Conditions | None = None


def _columns(tolerance: str, pause: str) -> list[Any]:
    """The article's columns, with a version's names for the two renamed fields."""
    return [
        printer_column("Tantrum", ".spec.tantrumMode", type="boolean", description="Kills Pods randomly"),
        printer_column("Tolerance", f".spec.{tolerance}", type="integer",
                       description="Total number of Pod to tolerate before randomly killing Pods"),
        printer_column("Cancer", ".spec.cancerMode", type="boolean", description="Scales Deployments randomly"),
        printer_column("Ipsum", ".spec.ipsumMode", type="boolean", description="Writes lorem ipsum"),
        printer_column("Eagerness", ".spec.eagerness", type="integer", description="Percent chance per object"),
        printer_column("Pause", f".spec.{pause}", type="integer", description="Seconds between rounds"),
        printer_column("Excluded", ".spec.excludedNamespaces", description="Namespaces left alone"),
    ]


_NAMES = dict(group="blackadder.io", kind="ChaosAgent", scope="Cluster", short_names=["ca"])
_ARTICLE = dict(_NAMES, printer_columns=_columns("podTolerance", "pauseDuration"))


class ChaosAgent(CustomResource, version="v1beta2", storage=False, **_NAMES,
                 printer_columns=_columns("minRunningPods", "pauseSeconds")):
    # The hub: what the reconciler reads. Not the storage version (see the README's "Versions").
    spec: ChaosAgentSpec
    status: ChaosAgentStatus | None = None


class ChaosAgentV1Beta1(CustomResource, version="v1beta1", storage=True, **_ARTICLE):
    spec: ArticleSpec
    status: ChaosAgentStatus | None = None


class ChaosAgentV1Alpha1(CustomResource, version="v1alpha1", storage=False, deprecated=True,
                         deprecation_warning="blackadder.io/v1alpha1 ChaosAgent is deprecated; use v1beta2",
                         **_ARTICLE):
    spec: ArticleSpec
    status: ChaosAgentStatus | None = None
