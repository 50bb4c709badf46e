"""Reflector's and kubernetes-replicator's annotations: copyrator does not act on them, and says so.

Users migrating from Reflector (``reflector.v1.k8s.emberstack.com/…``) or kubernetes-replicator
(``replicator.v1.mittwald.de/…``) bring objects annotated for those tools. copyrator's model differs
(a namespaced CopyratorRule pushes; consent is copyrator's own annotation, with globs rather than
regular expressions), and reading another tool's consent would let a copyrator rule reach objects whose
owners consented to a different tool, possibly still running beside it. So these annotations are never
honoured, and never ignored silently either: the object gets a Warning Event naming copyrator's
spelling, and a rule that meets such an object lists it among its skipped sources with the same advice.

The spellings are those of the tools' READMEs (Reflector: "Usage" and the automatic-mirror
annotations; kubernetes-replicator: "Push-based" and "Pull-based" replication).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubeloop.operators.copyrator.boundary import CONSENT_ANNOTATION, TAKEOVER_ANNOTATION

REFLECTOR = "reflector.v1.k8s.emberstack.com"
REPLICATOR = "replicator.v1.mittwald.de"
_CONSENT = f"{CONSENT_ANNOTATION}: \"true\""
_CONSENT_LIST = f"{CONSENT_ANNOTATION}: <namespace names or globs, comma-separated (globs, not regular expressions)>"
_PUSH = ("a CopyratorRule in this object's namespace whose selector matches its labels (namespaceSelector and "
         "excludedNamespaces say where), with " + _CONSENT_LIST + " on this object")
_PULL = ("copyrator pushes and never pulls: a CopyratorRule in the source's namespace, the source annotated "
         f"{CONSENT_ANNOTATION}, and this object annotated {TAKEOVER_ANNOTATION}: <rule namespace> with the rule's "
         "conflictPolicy Adopt or Overwrite (or delete this object and let the copy be made)")

# Each annotation → what copyrator reads instead.
ADVICE: dict[str, str] = {
    f"{REFLECTOR}/reflection-allowed": _CONSENT,
    f"{REFLECTOR}/reflection-allowed-namespaces": _CONSENT_LIST,
    f"{REFLECTOR}/reflection-auto-enabled": _PUSH,
    f"{REFLECTOR}/reflection-auto-namespaces": _PUSH,
    f"{REFLECTOR}/reflects": _PULL,
    f"{REPLICATOR}/replication-allowed": _CONSENT,
    f"{REPLICATOR}/replication-allowed-namespaces": _CONSENT_LIST,
    f"{REPLICATOR}/replicate-to": _PUSH,
    f"{REPLICATOR}/replicate-to-matching": _PUSH,
    f"{REPLICATOR}/replicate-from": _PULL,
}
EVENT_REASON = "ForeignAnnotations"
SKIP_REASON = "ForeignConsent"


def foreign_annotations(obj: Mapping[str, Any]) -> dict[str, str]:
    """The annotations of Reflector and replicator the object carries, with their values."""
    annotations = (obj.get("metadata") or {}).get("annotations") or {}
    return {k: str(v) for k, v in annotations.items() if k in ADVICE}


def describe(found: Mapping[str, str]) -> str:
    """One message naming each annotation found and copyrator's spelling (bounded: events and status)."""
    tools = sorted({"Reflector" if k.startswith(REFLECTOR) else "kubernetes-replicator" for k in found})
    advice = dict.fromkeys(ADVICE[k] for k in sorted(found))
    return (f"{', '.join(sorted(found))} ({' and '.join(tools)}) are not read by copyrator; its spelling: "
            + "; ".join(advice))[:1000]


def consented_elsewhere(obj: Mapping[str, Any]) -> bool:
    """The owner allowed copies the other tools' way (and not copyrator's): worth naming in a rule's status."""
    found = foreign_annotations(obj)
    return any(found.get(f"{tool}/{key}", "").strip().lower() == "true"
               for tool, key in ((REFLECTOR, "reflection-allowed"), (REPLICATOR, "replication-allowed"),
                                 (REFLECTOR, "reflection-auto-enabled"))) or f"{REPLICATOR}/replicate-to" in found
