"""The CopyratorRule custom resource (``flant.com/v1``), as the article defines it plus what a rule
needs in a shared cluster: scope, conflict policy, deletion policy and a label/annotation allow-list.

The article puts the rule's fields at the top level of the object (there is no ``spec``), and its
example says ``namespace: default`` where its code expects a list: both spellings are accepted.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, Field

from kubeloop.resources import Conditions, CustomResource, opaque, printer_column, validation

RuleType = Literal["configmap", "secret"]
ConflictPolicy = Literal["Skip", "Adopt", "Overwrite"]

# A name or a list of names: not expressible as a structural type, so the field is stored as given
# and CEL checks its shape.
SourceNamespaces = Annotated[
    str | list[str], opaque(),
    validation("type(self) == string || (type(self) == list && size(self) > 0 && "
               "self.all(n, type(n) == string))",
               "namespace must be a namespace name or a non-empty list of names")]


class LabelSelectorRequirement(BaseModel):
    """One ``matchExpressions`` entry of a Kubernetes label selector."""

    key: str
    operator: Literal["In", "NotIn", "Exists", "DoesNotExist"]
    values: list[str] | None = None


class LabelSelector(BaseModel):
    """A Kubernetes label selector; all terms must match (an empty selector matches everything)."""

    matchLabels: dict[str, str] | None = None
    matchExpressions: list[LabelSelectorRequirement] | None = None


class CopySet(BaseModel):
    """The copies one target namespace holds."""

    namespace: str
    names: list[str]


class ConflictEntry(BaseModel):
    """A copy that could not be written because something else is in its place."""

    namespace: str
    name: str
    source: str
    reason: str
    message: str | None = None


class SkippedSource(BaseModel):
    """A matching source that is not copied (no consent, protected kind, unusable target name, ...)."""

    source: str
    reason: str


class CopyratorRuleStatus(BaseModel):
    """What the rule did at ``observedGeneration``. Lists are bounded; the counts are exact."""

    observedGeneration: int | None = None
    sourceCount: int | None = None
    sources: list[str] | None = None
    copyCount: int | None = None
    copies: list[CopySet] | None = None
    conflictCount: int | None = None
    conflicts: list[ConflictEntry] | None = None
    skippedSources: list[SkippedSource] | None = None
    conditions: Conditions | None = None


class CopyratorRule(
    CustomResource, group="flant.com", version="v1", kind="CopyratorRule", plural="copyrators",
    singular="copyrator", short_names=["copyr"],
    printer_columns=[
        printer_column("Type", ".ruleType"),
        printer_column("Sources", ".status.sourceCount", type="integer"),
        printer_column("Copies", ".status.copyCount", type="integer"),
        printer_column("Conflicts", ".status.conflictCount", type="integer"),
        printer_column("Ready", '.status.conditions[?(@.type=="Ready")].status'),
        printer_column("Age", ".metadata.creationTimestamp", type="date"),
    ],
):
    """Copies the ConfigMaps or Secrets that match ``selector`` in the ``namespace`` list into every
    other active namespace in scope, and keeps the copies in sync."""

    ruleType: RuleType = Field(description="What to copy: configmap or secret.")
    selector: dict[str, str] = Field(
        min_length=1, description="Labels a source must carry (all of them).")
    namespace: SourceNamespaces = Field(description="The namespace(s) holding the sources.")
    excludedNamespaces: list[str] = Field(
        default_factory=list, description="Target namespaces never written: names or glob patterns.")
    namespaceSelector: LabelSelector | None = Field(
        None, description="Only namespaces with these labels receive copies (default: all).")
    targetName: str | None = Field(
        None, description="Name of the copies; '{name}' stands for the source's name (default: the same).")
    conflictPolicy: ConflictPolicy = Field(
        "Skip", description="When a same-name object that is not a copy exists: Skip (report it), Adopt "
                            "(take it over if its content already equals the source's) or Overwrite.")
    orphanOnDelete: bool = Field(
        False, description="Copies no longer wanted are released (kept, unmanaged) instead of deleted.")
    copyLabels: list[str] = Field(
        default_factory=lambda: ["*"], description="Source label keys copied (glob patterns).")
    copyAnnotations: list[str] = Field(
        default_factory=list, description="Source annotation keys copied (glob patterns).")
    status: CopyratorRuleStatus | None = None

    @property
    def key(self) -> str:
        """``namespace/name``: how copies name their rule."""
        return f"{self.metadata.namespace}/{self.metadata.name}"

    @property
    def source_namespaces(self) -> list[str]:
        """The source namespaces in the order given (earlier ones win name clashes)."""
        names = [self.namespace] if isinstance(self.namespace, str) else list(self.namespace)
        return list(dict.fromkeys(n for n in names if n))

    @property
    def copy_kind(self) -> str:
        """The kind of the sources and copies (``kind`` is the rule's own)."""
        return "Secret" if self.ruleType == "secret" else "ConfigMap"
