"""What a rule wants, as pure functions over plain dicts: which sources, which namespaces, which
copies, and what to do about whatever is already in a copy's place. No I/O here.

The article's loop, made level-based:

    for source in objects matching rule.selector in rule.namespace:
        for namespace in active namespaces:
            copy source into namespace

becomes ``desired = plan(rule, sources, namespaces)`` diffed against the copies that exist.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from operator import attrgetter
from typing import Any, Literal

import orjson

from kubeloop import LabelSelector, Obj, Steps, selectors, to_completion
from kubeloop.operators.copyrator.boundary import CONSENT_ANNOTATION as CONSENT_ANNOTATION  # re-exported
from kubeloop.operators.copyrator.boundary import (
    DOMAIN,
    STRICT,
    TAKEOVER_ANNOTATION,
    Boundary,
    consent_covers,
    consent_of,
    consent_problem,
    refuses_copies,
)
from kubeloop.operators.copyrator.foreign import SKIP_REASON, consented_elsewhere, describe, foreign_annotations
from kubeloop.operators.copyrator.globs import compile_globs
from kubeloop.operators.copyrator.memo import PerRule
from kubeloop.operators.copyrator.models import CopyratorRule
from kubeloop.operators.copyrator.receiving import LIMITED, POLICY_NAME, REFUSED, Reception

# Ownership marks on every copy. The rule annotation ("namespace/name", exact) decides ownership;
# the labels are for people and label selectors (``kubectl get cm -A -l copyrator.flant.com/rule=x``).
RULE_ANNOTATION = f"{DOMAIN}/rule"
SOURCE_ANNOTATION = f"{DOMAIN}/source"
SOURCE_UID_ANNOTATION = f"{DOMAIN}/source-uid"
HASH_ANNOTATION = f"{DOMAIN}/content-hash"
RULE_LABEL = f"{DOMAIN}/rule"
RULE_NAMESPACE_LABEL = f"{DOMAIN}/rule-namespace"
SOURCE_NAMESPACE_LABEL = f"{DOMAIN}/source-namespace"
MARK_LABELS = (RULE_LABEL, RULE_NAMESPACE_LABEL, SOURCE_NAMESPACE_LABEL)
MARK_ANNOTATIONS = (RULE_ANNOTATION, SOURCE_ANNOTATION, SOURCE_UID_ANNOTATION, HASH_ANNOTATION)
# Left on a released copy (orphanOnDelete), naming the rule that made it. Such an object is never a
# source: without it, a tenant's rule could plant objects in other namespaces that, once released,
# look like their own and are copied onwards by their rules, with the consents given to those rules.
# The namespace's owner removes the annotation to make the object theirs.
RELEASED_ANNOTATION = f"{DOMAIN}/released-from"

# Keys never copied whatever the allow-list says: they are other tools' ownership or tracking marks
# (a copy carrying them would be claimed, pruned or overwritten by kubectl, Helm, Argo CD or Flux),
# or the instructions of other replicators, which users migrating from them still run: Reflector or
# kubernetes-replicator would fill a copy carrying "reflects"/"replicate-from" with other data (a
# fight), and push one carrying "reflection-auto-*"/"replicate-to" beyond the rule's scope.
DENIED_KEYS = (
    f"{DOMAIN}/*", "kubectl.kubernetes.io/*", "app.kubernetes.io/managed-by", "meta.helm.sh/*",
    "helm.sh/*", "argocd.argoproj.io/*", "*.toolkit.fluxcd.io/*", "kubernetes.io/service-account.*",
    "reflector.v1.k8s.emberstack.com/*", "replicator.v1.mittwald.de/*",
)
# Secrets that must never leave their namespace: credentials minted for it, or other tools' state.
PROTECTED_SECRET_TYPES = frozenset({
    "kubernetes.io/service-account-token", "bootstrap.kubernetes.io/token", "helm.sh/release.v1"})
# The CA bundle every namespace gets from kube-controller-manager.
PROTECTED_CONFIGMAPS = frozenset({"kube-root-ca.crt"})
# Names no copy may take: a copy there would speak for the namespace it lands in (``receiving``).
PROTECTED_TARGET_NAMES = frozenset({*PROTECTED_CONFIGMAPS, POLICY_NAME})

_DNS_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_LABEL_VALUE = re.compile(r"([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?")


# ------------------------------------------------------------------------------------------ matching


def meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return obj.get("metadata") or {}


def labels_of(obj: Mapping[str, Any]) -> Mapping[str, str]:
    return meta(obj).get("labels") or {}


def annotations_of(obj: Mapping[str, Any]) -> Mapping[str, str]:
    return meta(obj).get("annotations") or {}


def key_of(obj: Mapping[str, Any]) -> str:
    return f"{meta(obj).get('namespace')}/{meta(obj).get('name')}"


def matches_any(name: str, patterns: Iterable[str]) -> bool:
    """Exact names and shell-style globs (``team-*``, ``kube-?``), case-sensitive like Kubernetes names.
    The list is compiled once (``globs``): callers matching many names compile it themselves."""
    return compile_globs(patterns)(name)


def matches_labels(labels: Mapping[str, str], wanted: Mapping[str, str]) -> bool:
    """The article's selector: every wanted label present with its value."""
    return all(labels.get(k) == v for k, v in wanted.items())


def matches_selector(labels: Mapping[str, str], selector: LabelSelector | None) -> bool:
    """A Kubernetes LabelSelector (matchLabels and matchExpressions); None matches everything."""
    return selectors.matches(selectors.requirements(selector), labels)


# ----------------------------------------------------------------------------------------- ownership


def owner_of(obj: Mapping[str, Any]) -> str | None:
    """The rule (``namespace/name``) a copy belongs to, or None for anything that is not a copy."""
    return annotations_of(obj).get(RULE_ANNOTATION)


def controlled_by_other(obj: Mapping[str, Any]) -> bool:
    """Another controller owns this object: never take it over."""
    return any(ref.get("controller") for ref in meta(obj).get("ownerReferences") or ())


def label_value(text: str) -> str:
    """``text`` if it is a valid label value, else a stable hash of it (names can be 253 chars)."""
    if len(text) <= 63 and _LABEL_VALUE.fullmatch(text):
        return text
    return "h" + hashlib.sha256(text.encode()).hexdigest()[:40]


# ------------------------------------------------------------------------------------------- sources


def protected_reason(obj: Mapping[str, Any]) -> str | None:
    """Why this object may never be a source, whatever a rule says (None: it may be)."""
    if owner_of(obj) is not None:
        return "IsACopy"  # copies are never copied again: no chains, no loops
    if obj.get("kind") == "Secret" and obj.get("type") in PROTECTED_SECRET_TYPES:
        return "ProtectedSecretType"
    if obj.get("kind") == "ConfigMap" and meta(obj).get("name") in PROTECTED_CONFIGMAPS:
        return "ProtectedConfigMap"
    return None


def matches_source(rule: CopyratorRule, obj: Mapping[str, Any]) -> bool:
    """The object is in a source namespace, is not a copy and carries the rule's labels: whether or
    not the rule may read it, the rule never writes over it (and a change to it wakes the rule)."""
    return (obj.get("kind") == rule.copy_kind and meta(obj).get("namespace") in rule.source_namespace_set
            and owner_of(obj) is None and matches_labels(labels_of(obj), rule.selector))


def is_source(rule: CopyratorRule, obj: Mapping[str, Any], boundary: Boundary = STRICT) -> bool:
    """A source the rule may read (protected ones included: they are reported as skipped, not
    silently ignored). Objects of other namespaces count only with their owner's consent."""
    return matches_source(rule, obj) and boundary.may_read(rule, obj)


# ----------------------------------------------------------------------------------------- namespaces


def is_active(namespace: Mapping[str, Any]) -> bool:
    return (namespace.get("status") or {}).get("phase", "Active") == "Active" and not meta(
        namespace).get("deletionTimestamp")


def target_namespaces(rule: CopyratorRule, namespaces: Iterable[Mapping[str, Any]],
                      boundary: Boundary = STRICT) -> list[str]:
    """Active namespaces in the rule's scope, sorted (terminating ones are skipped: writes would fail;
    system namespaces are closed unless the operator was told otherwise)."""
    excluded = compile_globs(rule.excludedNamespaces)  # each list compiled once per plan (and cached)
    wanted = selectors.requirements(rule.namespaceSelector)
    out = [meta(ns)["name"] for ns in namespaces
           if is_active(ns) and not boundary.closed(meta(ns)["name"])
           and not excluded(meta(ns)["name"])
           and selectors.matches(wanted, labels_of(ns))]
    return sorted(out)


def target_name(rule: CopyratorRule, source_name: str) -> str:
    return rule.targetName.replace("{name}", source_name) if rule.targetName else source_name


# ------------------------------------------------------------------------------------------- copies


_DENIED = compile_globs(DENIED_KEYS)


def _allowed(items: Mapping[str, str], patterns: Iterable[str]) -> dict[str, str]:
    allow = compile_globs(patterns)
    return {k: v for k, v in items.items() if allow(k) and not _DENIED(k)}


def content_hash(obj: Mapping[str, Any]) -> str:
    """A digest of everything a copy is made of (data, type, allowed labels/annotations and marks,
    except the hash itself). Computed the same way on the desired and on the actual copy, so a hand
    edit of any of it shows as a mismatch."""
    annotations = {k: v for k, v in annotations_of(obj).items() if k != HASH_ANNOTATION}
    content = {"kind": obj.get("kind"), "type": obj.get("type"), "immutable": bool(obj.get("immutable")),
               "data": obj.get("data") or {}, "binaryData": obj.get("binaryData") or {},
               "labels": dict(labels_of(obj)), "annotations": annotations}
    return hashlib.sha256(orjson.dumps(content, option=orjson.OPT_SORT_KEYS)).hexdigest()


def build_copy(rule: CopyratorRule, source: Mapping[str, Any], namespace: str, name: str) -> Obj:
    """The complete copy of ``source`` for ``namespace``: content, allowed metadata, ownership marks."""
    src = meta(source)
    labels = _allowed(labels_of(source), rule.copyLabels)
    labels.update({RULE_LABEL: label_value(rule.metadata.name or ""),
                   RULE_NAMESPACE_LABEL: rule.metadata.namespace or "",
                   SOURCE_NAMESPACE_LABEL: src["namespace"]})
    annotations = _allowed(annotations_of(source), rule.copyAnnotations)
    annotations.update({RULE_ANNOTATION: rule.key, SOURCE_ANNOTATION: key_of(source),
                        SOURCE_UID_ANNOTATION: src.get("uid", "")})
    body: Obj = {"apiVersion": "v1", "kind": source["kind"],
                 "metadata": {"name": name, "namespace": namespace, "labels": labels,
                              "annotations": annotations}}
    for part in ("data", "binaryData"):
        if source.get(part):
            body[part] = dict(source[part])
    if source["kind"] == "Secret":
        body["type"] = source.get("type") or "Opaque"
    if source.get("immutable"):
        body["immutable"] = True
    annotations[HASH_ANNOTATION] = content_hash(body)
    return body


def same_content(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """Equal data, binaryData and type (what ``Adopt`` requires; metadata does not count)."""
    return all((a.get(k) or None) == (b.get(k) or None) for k in ("data", "binaryData", "type"))


def is_stale(actual: Mapping[str, Any], desired: Mapping[str, Any]) -> bool:
    """The copy's hash is not the desired one. Asked of copies not edited in place, whose content matches
    their hash: the hash alone tells."""
    return annotations_of(actual).get(HASH_ANNOTATION) != annotations_of(desired)[HASH_ANNOTATION]


def edited_in_place(copy: Mapping[str, Any], hash_of: Callable[[Mapping[str, Any]], str] = content_hash) -> bool:
    """Someone other than copyrator changed the copy: its content no longer matches the hash copyrator
    wrote with it (copyrator always writes both together). From then on the object is its namespace
    owner's as much as ours: never reverted, never deleted (released instead). ``hash_of``: content_hash,
    or a memo of it (``PerRule``)."""
    return hash_of(copy) != annotations_of(copy).get(HASH_ANNOTATION)


def needs_recreate(actual: Mapping[str, Any], desired: Mapping[str, Any]) -> bool:
    """Immutable objects and a Secret's type cannot be updated: delete and create instead."""
    return bool(actual.get("immutable")) or (actual.get("type") or None) != (desired.get("type") or None)


# -------------------------------------------------------------------------------------------- plan


@dataclass
class Plan:
    """The desired copies of one rule, keyed by (namespace, name), and why some sources yield none."""

    sources: list[str] = field(default_factory=list)  # the sources' keys, in the plan's order
    copies: dict[tuple[str, str], Obj] = field(default_factory=dict)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (source key, reason)
    shadowed: list[tuple[str, str, str]] = field(default_factory=list)  # (namespace, name, source key)
    # (namespace, name, source key): a copy's place holds one of the rule's own sources, which is
    # never written over (with namespace: [a, b] and x in both, each would take over the other).
    on_source: list[tuple[str, str, str]] = field(default_factory=list)
    # (namespace, reason, message): target namespaces that refuse the rule's copies or have no room left
    declined: list[tuple[str, str, str]] = field(default_factory=list)
    # (source key, message): objects the rule meets that carry Reflector's or replicator's annotations
    foreign: list[tuple[str, str]] = field(default_factory=list)
    room: dict[str, int | None] = field(default_factory=dict)  # namespace → copies still allowed there

    def without(self, namespaces: set[str]) -> Plan:
        """The plan had ``namespaces`` not been targets: each namespace's copies, conflicts and room are
        decided apart from the others', so leaving some out changes nothing in the rest."""
        return replace(
            self, copies={k: c for k, c in self.copies.items() if k[0] not in namespaces},
            shadowed=[s for s in self.shadowed if s[0] not in namespaces],
            on_source=[s for s in self.on_source if s[0] not in namespaces],
            declined=[d for d in self.declined if d[0] not in namespaces],
            room={ns: n for ns, n in self.room.items() if ns not in namespaces})


def plan(rule: CopyratorRule, candidates: Iterable[Mapping[str, Any]],
         namespaces: Iterable[Mapping[str, Any]], boundary: Boundary = STRICT,
         reception: Reception | None = None) -> Plan:
    """Every copy the rule wants now, computed at once (see :func:`planning`)."""
    return to_completion(planning(rule, candidates, namespaces, boundary, reception))


def planning(rule: CopyratorRule, candidates: Iterable[Mapping[str, Any]],
             namespaces: Iterable[Mapping[str, Any]], boundary: Boundary = STRICT,
             reception: Reception | None = None, memo: PlanMemo | None = None) -> Steps[Plan]:
    """Every copy the rule wants now, as steps that the reconcile drives with ``kubeloop.cooperatively``:
    a rule meets as many sources as its namespace holds, which no schema bounds, so the loop is handed back
    between them. Sources are taken in the order of the rule's namespace list, then by name, so when two
    sources would produce the same copy the first one wins (the other is reported as shadowed) — the result
    never depends on event order. ``reception``: what the target namespaces accept (their policy, their
    copy limit); None: everything. ``memo``: what the rule's last plan was made of (:class:`PlanMemo`);
    None: everything is looked at afresh."""
    see = _viewer(rule, boundary, memo)
    matching: list[Seen] = []  # in a source namespace, with the rule's labels, not a copy
    for s in candidates:
        seen = see(s)
        if seen.matching:
            matching.append(seen)
        yield
    out = Plan()
    targets = yield from _receiving(out, rule, target_namespaces(rule, namespaces, boundary), reception)
    # What a plan is made of, all of it: the same again (a source rewritten to no effect on the rule, say) is
    # the same plan, not worth computing again.
    made_of = (rule.key, rule.metadata.uid, rule.metadata.generation, boundary, tuple(matching), tuple(targets),
               tuple(out.declined), tuple(out.room.items()))
    if memo is not None and (last := memo.plans.get(rule.key)) is not None and last[0] == made_of:
        return last[1]
    readable = sorted((seen for seen in matching if seen.readable), key=attrgetter("rank"))
    out.sources = [seen.key for seen in readable]
    # Every place holding something the rule reads from (consenting or not): never a copy's place.
    source_places = {seen.place for seen in matching}
    for seen in readable:
        yield
        if seen.skip:
            out.skipped.append((seen.key, seen.skip))
            continue
        for ns in targets:
            _place(out, seen, ns, source_places)
    for seen in matching:  # Reflector's and replicator's annotations: said, never silently ignored
        if seen.foreign is not None:
            out.foreign.append((seen.key, seen.foreign))
            if not seen.readable:
                out.skipped.append((seen.key, SKIP_REASON))
    used = {seen.place[0] for seen in readable}
    out.skipped += [(f"{ns}/*", "NoConsent") for ns in _unshared(rule, used, boundary)]
    if memo is not None and rule.metadata.uid is not None and rule.metadata.generation is not None:
        memo.plans[rule.key] = (made_of, out)
    return out


@dataclass(frozen=True)
class Seen:
    """What one source is to one rule, decided by the two of them alone: whether it matches the rule's
    selector, whether the rule may read it, and if so its copy's name and content (the same in every
    namespace) and where its owner lets it go, or why it yields none. ``foreign``: Reflector's or
    replicator's annotations on it, to be said in status (on one the rule may not read, only if its owner
    consented the other tool's way: it is shared). Two equal views make the same copies."""

    matching: bool
    place: tuple[str, str] = ("", "")  # the source's (namespace, name)
    key: str = ""  # "namespace/name"
    rank: tuple[int, str] = (0, "")  # its place in the plan's order: the rule's namespace list, then name
    readable: bool = False
    name: str = ""
    skip: str | None = None
    template: Obj | None = None
    consent: str = ""  # its allow-copy value
    foreign: str | None = None


_UNRELATED = Seen(matching=False)


@dataclass
class PlanMemo:
    """What a rule's plans keep between reconciles: each source's view, per version of the source (``memo``),
    and the rule's last plan with what it was made of. Only the reconcile of a rule plans it, one at a
    time; ``forget`` when the rule is gone. The last plan's copies are shallow: their contents are the
    views' templates, shared."""

    views: PerRule[Seen] = field(default_factory=PerRule)
    plans: dict[str, tuple[tuple[Any, ...], Plan]] = field(default_factory=dict)

    def sees_as_before(self, rule: CopyratorRule, current: Mapping[str, Any] | None, boundary: Boundary) -> bool:
        """``rule``'s last plan saw ``current`` (an object as cached now) as the rule sees it now, so a change
        to it changes nothing the rule does, and need not wake it. Only said of objects that made no copy:
        telling it of one that does would build and hash its copy on the event's path."""
        if current is None or rule.metadata.uid is None or rule.metadata.generation is None:
            return False
        kept = self.views.kept(rule.key, (rule.metadata.uid, rule.metadata.generation, boundary), current)
        return kept is not None and kept.template is None and kept == view(rule, current, boundary)

    def forget(self, rule_key: str) -> None:
        self.views.forget(rule_key)
        self.plans.pop(rule_key, None)


def _viewer(rule: CopyratorRule, boundary: Boundary,
            memo: PlanMemo | None) -> Callable[[Mapping[str, Any]], Seen]:
    def fresh(source: Mapping[str, Any]) -> Seen:
        return view(rule, source, boundary)
    if memo is None or rule.metadata.uid is None or rule.metadata.generation is None:
        return fresh  # a rule made by hand: nothing tells its versions apart
    return memo.views.pass_for(rule.key, (rule.metadata.uid, rule.metadata.generation, boundary), fresh)


def view(rule: CopyratorRule, source: Mapping[str, Any], boundary: Boundary = STRICT) -> Seen:
    """``source`` as ``rule`` sees it: the costly part of a plan (globs over its labels and annotations,
    its copy built and hashed), done once per version of the two with a memo."""
    if not matches_source(rule, source):
        return _UNRELATED
    place = (meta(source)["namespace"], meta(source)["name"])
    where = (place, f"{place[0]}/{place[1]}", (rule.source_namespaces.index(place[0]), place[1]))
    readable = boundary.may_read(rule, source)
    found = foreign_annotations(source)
    foreign = describe(found) if found and (readable or consented_elsewhere(source)) else None
    if not readable:
        return Seen(True, *where, foreign=foreign)
    name = target_name(rule, place[1])
    skip = _skip_reason(source, name)
    template = None if skip else build_copy(rule, source, "", name)
    return Seen(True, *where, True, name, skip, template, consent_of(source), foreign)


def _receiving(out: Plan, rule: CopyratorRule, targets: list[str],
               reception: Reception | None) -> Steps[Any]:
    """The targets whose namespace accepts the rule's copies; the others go to ``out.declined``."""
    if reception is None:
        return targets
    accepted = []
    for ns in targets:
        yield
        if reason := reception.refusal(rule, ns):
            out.declined.append((ns, REFUSED, reason))
        else:
            accepted.append(ns)
            out.room[ns] = reception.room(rule, ns)
    return accepted


def _skip_reason(source: Mapping[str, Any], name: str) -> str | None:
    reason = protected_reason(source)
    if reason is None and RELEASED_ANNOTATION in annotations_of(source):
        reason = "ReleasedCopy"
    if reason is None and consent_problem(str(annotations_of(source).get(CONSENT_ANNOTATION) or "")):
        reason = "ConsentTooLong"
    if reason is None and refuses_copies(source):
        reason = SKIP_REASON if consented_elsewhere(source) else "NoConsent"
    if reason is None and (len(name) > 253 or not _DNS_SUBDOMAIN.fullmatch(name)):
        reason = "InvalidTargetName"
    # Never a copy named like the cluster's CA bundle: where it is missing (a new namespace, before
    # kube-controller-manager publishes it), a tenant's copy would be mounted by every pod as the API
    # server's CA, and the publisher, which keeps our marks when it corrects the data, would fight us.
    if reason is None and source.get("kind") == "ConfigMap" and name in PROTECTED_TARGET_NAMES:
        reason = "ProtectedTargetName"
    return reason


def _place(out: Plan, seen: Seen, ns: str, source_places: set[tuple[str, str]]) -> None:
    assert seen.template is not None
    if ns == seen.place[0] or not consent_covers(seen.consent, seen.template["kind"], ns):
        return  # never back into the source's own namespace; only where the source's owner allowed
    if (ns, seen.name) in source_places:
        out.on_source.append((ns, seen.name, seen.key))
    elif (ns, seen.name) in out.copies:
        out.shadowed.append((ns, seen.name, seen.key))
    elif _full(out, ns):
        return
    else:
        out.copies[(ns, seen.name)] = {**seen.template, "metadata": {**seen.template["metadata"], "namespace": ns}}


def _full(out: Plan, ns: str) -> bool:
    """No room for one more copy in ``ns`` (said once per namespace in ``out.declined``)."""
    room = out.room.get(ns)
    if room is None or room > 0:
        if room is not None:
            out.room[ns] = room - 1
        return False
    if room == 0:  # said once: -1 from then on
        out.room[ns] = -1
        out.declined.append((ns, LIMITED, "the namespace's copy limit for rules of this namespace is reached"))
    return True


def _unshared(rule: CopyratorRule, used: set[str], boundary: Boundary) -> list[str]:
    """Source namespaces of other owners that gave the rule nothing (``used``: those that gave some):
    said in status (without naming their objects, which the rule's author may not see)."""
    if boundary.trusts(rule):
        return []
    return [ns for ns in rule.source_namespaces if ns != rule.metadata.namespace and ns not in used]


# ------------------------------------------------------------------------------------- what to do

Action = Literal["create", "update", "recreate", "none", "adopt", "overwrite", "conflict"]


@dataclass(frozen=True)
class Decision:
    action: Action
    reason: str = ""  # for conflicts: a CamelCase reason
    message: str = ""


def decide(rule: CopyratorRule, existing: Mapping[str, Any] | None, desired: Mapping[str, Any],
           boundary: Boundary = STRICT, hash_of: Callable[[Mapping[str, Any]], str] = content_hash) -> Decision:
    """What to do at one copy's place, given what is there now."""
    kind, namespace = desired["kind"], meta(desired).get("namespace", "")
    if boundary.closed(namespace):  # the plan never asks this; a second lock on the same door
        return Decision("conflict", "ClosedNamespace", f"copies never go to namespace {namespace}")
    if existing is None:
        return Decision("create")
    owner = owner_of(existing)
    if owner == rule.key:
        if edited_in_place(existing, hash_of):
            return Decision("conflict", "EditedInPlace",
                            f"{kind} was changed in its namespace: copyrator no longer updates it (delete it for a "
                            f"fresh copy, or remove the {DOMAIN}/rule annotation to keep it as yours)")
        if not is_stale(existing, desired):
            return Decision("none")
        return Decision("recreate" if needs_recreate(existing, desired) else "update")
    if owner is not None:
        return Decision("conflict", "OwnedByAnotherRule", f"{kind} is a copy made by rule {owner}")
    if controlled_by_other(existing) or protected_reason(existing):  # e.g. kube-root-ca.crt, SA tokens
        return Decision("conflict", "Protected", f"{kind} is controlled by another object or protected")
    if matches_source(rule, existing):
        return Decision("conflict", "SourceInPlace", f"{kind} is a source of this rule: never written over")
    if rule.conflictPolicy == "Skip":
        return Decision("conflict", "AlreadyExists", f"{kind} exists and is not a copy (conflictPolicy Skip)")
    if not boundary.may_take_over(rule, existing, labels_of(desired).get(SOURCE_NAMESPACE_LABEL, "")):
        return Decision("conflict", "NoTakeoverConsent",
                        f"{kind} exists and does not consent to conflictPolicy {rule.conflictPolicy}: its "
                        f"owner can annotate it {TAKEOVER_ANNOTATION}: {rule.metadata.namespace}")
    if rule.conflictPolicy == "Overwrite":
        return Decision("overwrite")
    if same_content(existing, desired):
        return Decision("adopt")
    return Decision("conflict", "ContentDiffers",
                    f"{kind} exists with different content; conflictPolicy Adopt only takes over "
                    "identical objects")


def released(obj: Mapping[str, Any]) -> Obj:
    """A merge patch removing copyrator's marks (``orphanOnDelete``): the object stays, unmanaged, and
    says which rule released it (``RELEASED_ANNOTATION``: never a source until its owner removes it)."""
    patch: Obj = {"resourceVersion": meta(obj).get("resourceVersion")}  # fails if changed meanwhile
    labels = {k: None for k in MARK_LABELS if k in labels_of(obj)}
    annotations: dict[str, str | None] = {k: None for k in MARK_ANNOTATIONS if k in annotations_of(obj)}
    annotations[RELEASED_ANNOTATION] = owner_of(obj) or ""
    if labels:
        patch["labels"] = labels
    patch["annotations"] = annotations
    return {"metadata": patch}
