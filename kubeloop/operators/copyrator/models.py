"""The CopyratorRule custom resource (``flant.com/v1``), as the article defines it plus what a rule
needs in a shared cluster: scope, conflict policy, deletion policy and a label/annotation allow-list.

The article puts the rule's fields at the top level of the object (there is no ``spec``), and its
example says ``namespace: default`` where its code expects a list: both spellings are accepted.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field

from kubeloop import Conditions, CustomResource, LabelSelector, opaque, printer_column

RuleType = Literal["configmap", "secret"]
ConflictPolicy = Literal["Skip", "Adopt", "Overwrite"]

# A name or a list of names: no structural type can say that, and CEL cannot see untyped fields, so
# the value is stored as given and checked by the operator (``problems``), which reports it in status.
SourceNamespaces = Annotated[Any, opaque()]


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
    namespace: SourceNamespaces = Field(
        description="The namespace(s) holding the sources. Outside the rule's own namespace, only objects "
                    "annotated copyrator.flant.com/allow-copy are read (unless the rule's namespace is trusted).")
    excludedNamespaces: list[str] = Field(
        default=[], description="Target namespaces never written: names or glob patterns.")
    namespaceSelector: LabelSelector | None = Field(
        None, description="Only namespaces with these labels receive copies (default: all).")
    targetName: str | None = Field(
        None, description="Name of the copies; '{name}' stands for the source's name (default: the same).")
    conflictPolicy: ConflictPolicy = Field(
        "Skip", description="When a same-name object that is not a copy exists: Skip (report it), Adopt "
                            "(take it over if its content already equals the source's) or Overwrite. Adopt "
                            "and Overwrite need the object's consent: copyrator.flant.com/allow-takeover.")
    orphanOnDelete: bool = Field(
        False, description="Copies no longer wanted are released (kept, unmanaged) instead of deleted.")
    copyLabels: list[str] = Field(
        default=["*"], description="Source label keys copied (glob patterns).")
    copyAnnotations: list[str] = Field(
        default=[], description="Source annotation keys copied (glob patterns).")
    status: CopyratorRuleStatus | None = None

    @property
    def key(self) -> str:
        """``namespace/name``: how copies name their rule."""
        return f"{self.metadata.namespace}/{self.metadata.name}"

    @property
    def source_namespaces(self) -> list[str]:
        """The source namespaces in the order given (earlier ones win name clashes)."""
        value = self.namespace
        names = [value] if isinstance(value, str) else value if isinstance(value, list) else []
        return list(dict.fromkeys(n for n in names if isinstance(n, str) and n))

    def problems(self) -> list[str]:
        """What the API server could not validate; a rule with problems copies nothing new."""
        value = self.namespace
        names = [value] if isinstance(value, str) else value if isinstance(value, list) else None
        if not names or not all(isinstance(n, str) and n for n in names):
            return [f"namespace must be a namespace name or a non-empty list of names, not {value!r}"[:200]]
        return []

    @property
    def copy_kind(self) -> str:
        """The kind of the sources and copies (``kind`` is the rule's own)."""
        return "Secret" if self.ruleType == "secret" else "ConfigMap"
