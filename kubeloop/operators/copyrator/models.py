"""The CopyratorRule custom resource (``flant.com/v1``), as the article defines it plus what a rule
needs in a shared cluster: scope, conflict policy, deletion policy and a label/annotation allow-list.

The article puts the rule's fields at the top level of the object (there is no ``spec``), and its
example says ``namespace: default`` where its code expects a list: both spellings are accepted.
"""

from __future__ import annotations

import functools
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field

from kubeloop import BoundedLabelSelector, Conditions, CustomResource, opaque, printer_column, validation
from kubeloop.operators.copyrator.globs import CEL_GENERAL_COUNT, MAX_GENERAL

RuleType = Literal["configmap", "secret"]
ConflictPolicy = Literal["Skip", "Adopt", "Overwrite"]

# Every list and string a tenant writes here has a maximum that the API server enforces, so that a rule's
# cost to the operator (README "Cost of one reconcile") is bounded by these numbers rather than by what
# fits in an object. Lengths follow Kubernetes' own: a namespace name or label value 63, an object name
# 253, a label or annotation key 317 (a 253-character prefix, "/", a 63-character name).
MAX_NAMESPACE = 63
MAX_NAME = 253
MAX_KEY = 317
MAX_LABEL_VALUE = 63
MAX_SOURCE_NAMESPACES = 64  # checked by the operator (``problems``): the field is untyped
MAX_EXCLUDED = 256
MAX_SELECTOR_LABELS = 32  # these three: kubeloop.BoundedLabelSelector's (namespaceSelector), for the tests
MAX_EXPRESSIONS = 16
MAX_EXPRESSION_VALUES = 64
MAX_KEY_PATTERNS = 64  # copyLabels, copyAnnotations
MAX_LISTED = 20  # entries per status list: status stays small whatever the cluster size
MAX_NAMESPACES_LISTED = 50
MAX_REASON = 64
MAX_MESSAGE = 1024

NamespaceName = Annotated[str, Field(max_length=MAX_NAMESPACE)]
ObjectName = Annotated[str, Field(max_length=MAX_NAME)]
Key = Annotated[str, Field(max_length=MAX_KEY)]
LabelValue = Annotated[str, Field(max_length=MAX_LABEL_VALUE)]
Reason = Annotated[str, Field(max_length=MAX_REASON)]
Message = Annotated[str, Field(max_length=MAX_MESSAGE)]
ObjectKey = Annotated[str, Field(max_length=MAX_NAMESPACE + 1 + MAX_NAME)]  # "namespace/name"
# A map's keys have no maxLength in a structural schema: CEL bounds them (cost: the map's maxProperties).
_KEYS_BOUNDED = validation(f"self.all(k, size(k) <= {MAX_KEY})", f"keys are at most {MAX_KEY} characters")
# Names, "prefix*" and "*suffix" cost a lookup each; other globs go into one automaton, kept small.
_FEW_GENERAL = validation(f"{CEL_GENERAL_COUNT} <= {MAX_GENERAL}",
                          f"at most {MAX_GENERAL} entries may be globs other than a name, 'prefix*' or '*suffix'")


# A name or a list of names: no structural type can say that, and CEL cannot see untyped fields, so
# the value is stored as given and checked by the operator (``problems``), which reports it in status.
SourceNamespaces = Annotated[Any, opaque()]


class CopySet(BaseModel):
    """The copies one target namespace holds."""

    namespace: NamespaceName
    names: Annotated[list[ObjectName], Field(max_length=MAX_LISTED)]


class ConflictEntry(BaseModel):
    """A copy that could not be written because something else is in its place."""

    namespace: NamespaceName
    name: ObjectName
    source: ObjectKey
    reason: Reason
    message: Message | None = None


class SkippedSource(BaseModel):
    """A matching source that is not copied (no consent, protected kind, unusable target name, ...)."""

    source: ObjectKey
    reason: Reason


class DeclinedNamespace(BaseModel):
    """A target namespace that takes no (more) copies of the rule: its policy refuses them, or its copy
    limit is reached."""

    namespace: NamespaceName
    reason: Reason
    message: Message | None = None


class ForeignAnnotations(BaseModel):
    """A source (or would-be source) carrying Reflector's or kubernetes-replicator's annotations, which
    copyrator does not read: the message names copyrator's spelling."""

    source: ObjectKey
    message: Message


class CopyratorRuleStatus(BaseModel):
    """What the rule did at ``observedGeneration``. Lists are bounded; the counts are exact."""

    observedGeneration: int | None = None
    sourceCount: int | None = None
    sources: Annotated[list[ObjectKey], Field(max_length=MAX_LISTED)] | None = None
    copyCount: int | None = None
    copies: Annotated[list[CopySet], Field(max_length=MAX_NAMESPACES_LISTED)] | None = None
    conflictCount: int | None = None
    conflicts: Annotated[list[ConflictEntry], Field(max_length=MAX_LISTED)] | None = None
    declinedCount: int | None = None
    declined: Annotated[list[DeclinedNamespace], Field(max_length=MAX_LISTED)] | None = None
    skippedSources: Annotated[list[SkippedSource], Field(max_length=MAX_LISTED)] | None = None
    foreignAnnotations: Annotated[list[ForeignAnnotations], Field(max_length=MAX_LISTED)] | None = None
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
    selector: Annotated[dict[str, LabelValue], _KEYS_BOUNDED] = Field(
        min_length=1, max_length=MAX_SELECTOR_LABELS,
        description=f"Labels a source must carry (all of them); at most {MAX_SELECTOR_LABELS}.")
    namespace: SourceNamespaces = Field(
        description="The namespace(s) holding the sources. Outside the rule's own namespace, only objects "
                    "annotated copyrator.flant.com/allow-copy are read (unless the rule's namespace is trusted). "
                    f"At most {MAX_SOURCE_NAMESPACES} names.")
    excludedNamespaces: Annotated[list[NamespaceName], _FEW_GENERAL] = Field(
        default=[], max_length=MAX_EXCLUDED,
        description=f"Target namespaces never written: names or glob patterns (at most {MAX_EXCLUDED}; at most "
                    f"{MAX_GENERAL} globs other than 'prefix*' or '*suffix').")
    namespaceSelector: BoundedLabelSelector | None = Field(
        None, description="Only namespaces with these labels receive copies (default: all).")
    targetName: ObjectName | None = Field(
        None, description="Name of the copies; '{name}' stands for the source's name (default: the same).")
    conflictPolicy: ConflictPolicy = Field(
        "Skip", description="When a same-name object that is not a copy exists: Skip (report it), Adopt "
                            "(take it over if its content already equals the source's) or Overwrite. Adopt "
                            "and Overwrite need the object's consent: copyrator.flant.com/allow-takeover.")
    orphanOnDelete: bool = Field(
        False, description="Copies no longer wanted are released (kept, unmanaged) instead of deleted.")
    copyLabels: Annotated[list[Key], _FEW_GENERAL] = Field(
        default=["*"], max_length=MAX_KEY_PATTERNS,
        description=f"Source label keys copied (glob patterns; at most {MAX_KEY_PATTERNS}, of which "
                    f"{MAX_GENERAL} other than 'prefix*' or '*suffix').")
    copyAnnotations: Annotated[list[Key], _FEW_GENERAL] = Field(
        default=[], max_length=MAX_KEY_PATTERNS,
        description=f"Source annotation keys copied (glob patterns; at most {MAX_KEY_PATTERNS}, of which "
                    f"{MAX_GENERAL} other than 'prefix*' or '*suffix').")
    status: CopyratorRuleStatus | None = None

    @property
    def key(self) -> str:
        """``namespace/name``: how copies name their rule."""
        return f"{self.metadata.namespace}/{self.metadata.name}"

    @functools.cached_property
    def source_namespaces(self) -> list[str]:
        """The source namespaces in the order given (earlier ones win name clashes). Computed once per
        model: it is asked for every ConfigMap and Secret a rule meets (a model is not changed in place)."""
        value = self.namespace
        names = [value] if isinstance(value, str) else value if isinstance(value, list) else []
        return list(dict.fromkeys(n for n in names if isinstance(n, str) and n))

    @functools.cached_property
    def source_namespace_set(self) -> frozenset[str]:
        """``source_namespaces`` as a set: a lookup per object met."""
        return frozenset(self.source_namespaces)

    def problems(self) -> list[str]:
        """What the API server could not validate; a rule with problems copies nothing new."""
        value = self.namespace
        names = [value] if isinstance(value, str) else value if isinstance(value, list) else None
        if not names or not all(isinstance(n, str) and n for n in names):
            return [f"namespace must be a namespace name or a non-empty list of names, not {value!r}"[:200]]
        if len(names) > MAX_SOURCE_NAMESPACES:
            return [f"namespace lists {len(names)} namespaces; at most {MAX_SOURCE_NAMESPACES} are allowed"]
        long = [n for n in names if len(n) > MAX_NAMESPACE]
        if long:
            return [f"namespace {long[0][:MAX_NAMESPACE]!r}... is longer than {MAX_NAMESPACE} characters, "
                    "the longest a namespace name can be"]
        return []

    @property
    def copy_kind(self) -> str:
        """The kind of the sources and copies (``kind`` is the rule's own)."""
        return "Secret" if self.ruleType == "secret" else "ConfigMap"
