"""Who may make copyrator write where: the security boundary, as pure functions.

A CopyratorRule is namespaced, so anyone allowed to create one in a single namespace can write a
rule; the operator that carries it out has cluster-wide write on ConfigMaps and Secrets. The
boundary keeps a rule's reach to what its author could do plus what other owners consented to:

- sources: a rule reads objects of its own namespace; an object elsewhere is a source only if it
  carries ``allow-copy`` (its owner publishes it), unless the rule's namespace is trusted;
- targets: ``kube-system``, ``kube-public``, ``kube-node-lease`` and the operator's own namespace
  never receive copies unless the operator runs with ``--allow-system-namespaces``;
- take-over (``Adopt``/``Overwrite``): only of objects carrying ``allow-takeover`` naming the rule
  (or its namespace), unless the rule's namespace and the source's are both trusted.

A rule in a trusted namespace is free of the first and last points: by default the operator's own
namespace (where the article's Deployment keeps its rules, and which only cluster admins can write
to), else the namespaces given with ``--trusted-namespace`` (``""``: none). Secrets always need
``allow-copy``, whoever wrote the rule.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from kubeloop.operators.copyrator.globs import MAX_GENERAL, Globs, compile_globs, is_general
from kubeloop.operators.copyrator.models import CopyratorRule
from kubeloop.operators.copyrator.settings import CopyratorSettings

DOMAIN = "copyrator.flant.com"
# On a source: "true" (any namespace) or a comma-separated list of target namespace names/globs.
CONSENT_ANNOTATION = f"{DOMAIN}/allow-copy"
# On an object in a copy's place: "true" (any rule) or a comma-separated list of rule namespaces or
# rule keys ("namespace/name"), globs allowed.
TAKEOVER_ANNOTATION = f"{DOMAIN}/allow-takeover"
SYSTEM_NAMESPACES = frozenset({"kube-system", "kube-public", "kube-node-lease"})
UNTRUSTED = frozenset({"default"})  # never trusted unless named by --trusted-namespace
_ANYONE = ("true", "*")
_NOBODY = ("", "false")
# The consent annotations are written by whoever owns the object, and read for every (source, namespace)
# pair of every rule that meets it: beyond these bounds a value grants nothing (and is reported).
MAX_CONSENT_LENGTH = 4096  # characters
MAX_CONSENT_ENTRIES = 64  # names or globs


def _annotation(obj: Mapping[str, Any], key: str) -> str:
    return str(((obj.get("metadata") or {}).get("annotations") or {}).get(key) or "").strip()


def _patterns(value: str) -> list[str]:
    return [p for p in re.split(r"[,\s]+", value) if p]


@functools.lru_cache(maxsize=4096)
def consent_problem(value: str) -> str | None:
    """Why a consent annotation's value is refused (None: it is within bounds)."""
    if len(value) > MAX_CONSENT_LENGTH:
        return f"longer than {MAX_CONSENT_LENGTH} characters"
    entries = _patterns(value)
    if len(entries) > MAX_CONSENT_ENTRIES:
        return f"more than {MAX_CONSENT_ENTRIES} entries"
    if sum(map(is_general, entries)) > MAX_GENERAL:
        return f"more than {MAX_GENERAL} globs other than 'prefix*' or '*suffix'"
    return None


@functools.lru_cache(maxsize=4096)
def _grantees(value: str) -> Globs | None:
    """The compiled list of an annotation value, once per distinct value; None: beyond the bounds."""
    return None if consent_problem(value) else compile_globs(_patterns(value))


def grants(value: str, *names: str) -> bool:
    """Whether an annotation value ("true", "false", or a list of names/globs) covers any of ``names``."""
    if value.lower() in _ANYONE:
        return True
    if value.lower() in _NOBODY:
        return False
    matcher = _grantees(value)
    return matcher is not None and matcher.any(names)


def has_consent(source: Mapping[str, Any]) -> bool:
    """The source's owner allowed copies somewhere (``allow-copy`` present, not "false", within bounds)."""
    value = _annotation(source, CONSENT_ANNOTATION)
    return value.lower() not in _NOBODY and consent_problem(value) is None


def refuses_copies(source: Mapping[str, Any]) -> bool:
    """No copy anywhere: ``allow-copy: "false"`` or beyond its bounds, or a Secret without ``allow-copy``."""
    value = _annotation(source, CONSENT_ANNOTATION)
    return (value.lower() == "false" or (not value and source.get("kind") == "Secret")
            or consent_problem(value) is not None)


def consents_to(source: Mapping[str, Any], namespace: str) -> bool:
    """Copies of ``source`` may go to ``namespace``. Secrets need ``allow-copy``; a ConfigMap without
    it goes anywhere (the article copies them freely), with it only where it says."""
    return consent_covers(consent_of(source), source.get("kind"), namespace)


def consent_of(source: Mapping[str, Any]) -> str:
    """The source's ``allow-copy`` value ("" without one)."""
    return _annotation(source, CONSENT_ANNOTATION)


def consent_covers(value: str, kind: Any, namespace: str) -> bool:
    """``consents_to`` from the annotation's value and the source's kind."""
    if not value and kind != "Secret":
        return True
    return grants(value, namespace)


def consents_to_takeover(obj: Mapping[str, Any], rule: CopyratorRule) -> bool:
    """The object's owner allowed this rule to take it over (``allow-takeover``)."""
    return grants(_annotation(obj, TAKEOVER_ANNOTATION), rule.metadata.namespace or "", rule.key)


def _names(values: Iterable[Any] | None) -> tuple[str, ...]:
    """Flag values as given (repeated and/or comma-separated), in order, without blanks."""
    return tuple(n.strip() for v in values or () for n in str(v).split(",") if n.strip())


@dataclass(frozen=True)
class Boundary:
    """The operator-wide settings of the boundary. The default is the strictest."""

    trusted: tuple[str, ...] = ()  # rule namespaces (names/globs) acting with the operator's full reach
    allow_system: bool = False
    operator_namespace: str | None = None
    closed_too: tuple[str, ...] = ()  # more namespaces (names/globs) that never receive copies

    @classmethod
    def from_settings(cls, settings: CopyratorSettings, operator_namespace: str | None) -> Boundary:
        given = settings.trusted_namespace  # () when not given; ("",) for "trust none"
        # The operator's namespace is trusted by default because only admins write there; not so
        # "default" (where the article's manifests land when applied without a namespace), which
        # many users may write to: trusting it takes --trusted-namespace default.
        default = (operator_namespace,) if operator_namespace and operator_namespace not in UNTRUSTED else ()
        return cls(trusted=_names(given) if given else default,
                   allow_system=settings.allow_system_namespaces,
                   operator_namespace=operator_namespace,
                   closed_too=_names(settings.closed_namespace))

    def trusts(self, rule: CopyratorRule) -> bool:
        return self.trusts_namespace(rule.metadata.namespace or "")

    def trusts_namespace(self, namespace: str) -> bool:
        return compile_globs(self.trusted)(namespace)

    def closed(self, namespace: str) -> bool:
        """Copies never go to this namespace."""
        if compile_globs(self.closed_too)(namespace):
            return True
        if self.allow_system:
            return False
        return namespace in SYSTEM_NAMESPACES or namespace == self.operator_namespace

    def may_read(self, rule: CopyratorRule, obj: Mapping[str, Any]) -> bool:
        """``obj`` (already matching the rule's selector) may be one of its sources: it is in the
        rule's own namespace, its owner published it (``allow-copy``), or the rule is trusted."""
        ns = (obj.get("metadata") or {}).get("namespace")
        return ns == rule.metadata.namespace or has_consent(obj) or self.trusts(rule)

    def may_take_over(self, rule: CopyratorRule, obj: Mapping[str, Any], source_namespace: str) -> bool:
        """``obj`` may be adopted or overwritten by a copy of a source in ``source_namespace``. Trust
        lends the operator's reach only to content written in trusted namespaces: a trusted rule that
        reads (say) ``team-a`` copies names and contents team-a's tenant chose, and without consent
        they would overwrite any same-named object in every namespace."""
        trusted = self.trusts(rule) and self.trusts_namespace(source_namespace)
        return trusted or consents_to_takeover(obj, rule)


STRICT = Boundary()
