"""The cluster as copyrator sees it: cached rules, namespaces, ConfigMaps and Secrets (every
namespace, even when the operator only takes rules from some), and the event mappers that turn a
change to any of them into the rules that must look again."""

from __future__ import annotations

from collections.abc import Callable

from kubeloop import Cache, Client, Event, Informer, Obj, Resource, builtin
from kubeloop.operators.copyrator.boundary import STRICT, Boundary
from kubeloop.operators.copyrator.memo import PerRule
from kubeloop.operators.copyrator.models import CopyratorRule
from kubeloop.operators.copyrator.plan import PlanMemo, matches_source, meta, owner_of
from kubeloop.operators.copyrator.receiving import (
    DEFAULT_MAX_COPIES,
    POLICY_NAME,
    NamespacePolicy,
    Reception,
    read_policy,
)

RESOURCES: dict[str, Resource] = {"ConfigMap": builtin.CONFIG_MAP, "Secret": builtin.SECRET}
OWNER_INDEX = "copyrator.flant.com/rule"
PLACEMENT_INDEX = "copyrator.flant.com/placement"  # "<copy's namespace>|<its rule's namespace>"


def by_owner(obj: Obj) -> tuple[str, ...]:
    """Index copies by the rule that made them."""
    owner = owner_of(obj)
    return (owner,) if owner else ()


def by_placement(obj: Obj) -> tuple[str, ...]:
    """Index copies by where they are and which namespace's rules made them (the copy limit's unit)."""
    owner = owner_of(obj)
    return (f"{meta(obj).get('namespace')}|{owner.partition('/')[0]}",) if owner else ()


INDEXES = {OWNER_INDEX: by_owner, PLACEMENT_INDEX: by_placement}  # of the ConfigMap and Secret informers


class World:
    """One run's view, made by ``bind`` on the manager's cache: its informers are the very ones the
    controllers share."""

    def __init__(self, client: Client, cache: Cache, rules: Informer, namespaces: Informer,
                 objects: dict[str, Informer], boundary: Boundary = STRICT,
                 max_copies: int = DEFAULT_MAX_COPIES) -> None:
        self.client, self.cache = client, cache
        self.boundary = boundary
        self.max_copies = max_copies  # per namespace and rule namespace
        self._rules, self._namespaces, self._objects = rules, namespaces, objects
        # uid → (resourceVersion, the rule parsed at it; None: unusable): one entry per rule, replaced when
        # the rule changes. (Keyed by resourceVersion, every status write of a large rule would keep one
        # more parsed copy, thousands of objects each, for the garbage collector to walk.)
        self._parsed: dict[str, tuple[str, CopyratorRule | None]] = {}
        # (kind, namespace, name) → rules whose copy is blocked there: when that object changes or
        # goes away, those rules look again.
        self.blocked: dict[tuple[str, str, str], set[str]] = {}
        # (kind, namespace, rule namespace) → rules that found no room there: when a copy there changes
        # or goes away, they look again.
        self.limited: dict[tuple[str, str, str], set[str]] = {}
        # Per rule, its last plan and what that was made of, and its copies' content hashes (``memo``).
        self.plans = PlanMemo()
        self.hashes: PerRule[str] = PerRule()

    @classmethod
    async def bind(cls, client: Client, cache: Cache, rule_field_selector: str | None, *,
                   boundary: Boundary = STRICT, max_copies: int = DEFAULT_MAX_COPIES) -> World:
        """The world on ``cache``'s informers (those the controllers declared, or new ones in a test)."""
        rules = await cache.informer(CopyratorRule, field_selector=rule_field_selector)
        namespaces = await cache.informer(builtin.NAMESPACE)
        objects = {kind: await cache.informer(res, all_namespaces=True, indexes=INDEXES)
                   for kind, res in RESOURCES.items()}
        return cls(client, cache, rules, namespaces, objects, boundary, max_copies)

    # --- reads ---------------------------------------------------------------------------------

    def objects(self, kind: str) -> Informer:
        return self._objects[kind]

    def namespaces(self) -> list[Obj]:
        return list(self._namespaces.store)

    def candidates(self, rule: CopyratorRule) -> list[Obj]:
        """Everything in the rule's source namespaces; ``plan`` picks the sources among them."""
        store = self.objects(rule.copy_kind).store
        return [o for ns in rule.source_namespaces for o in store.by_index("namespace", ns)]

    def copies_of(self, rule_key: str) -> list[Obj]:
        """Every copy the rule made, of either kind (the rule's type may have changed)."""
        return [o for inf in self._objects.values() for o in inf.store.by_index(OWNER_INDEX, rule_key)]

    def get(self, kind: str, namespace: str, name: str) -> Obj | None:
        return self.objects(kind).store.get_by(name, namespace)

    # --- what receiving namespaces say (``receiving``) ---------------------------------------------

    def policy(self, namespace: str) -> NamespacePolicy:
        """The namespace's own policy ConfigMap (a copy never counts as one)."""
        found = self.get("ConfigMap", namespace, POLICY_NAME)
        return read_policy(found if found is not None and owner_of(found) is None else None)

    def reception(self) -> Reception:
        return Reception(refusal=self._refusal, room=self._room)

    def _refusal(self, rule: CopyratorRule, namespace: str) -> str | None:
        return self.policy(namespace).refusal(rule.metadata.namespace or "", rule.key)

    def _room(self, rule: CopyratorRule, namespace: str) -> int:
        """The copies ``rule`` may have in ``namespace``: the limit, less what earlier-named rules of
        its namespace hold there."""
        limit = self.max_copies
        own = self.policy(namespace).max_copies
        if own is not None:
            limit = min(limit, own)
        store = self.objects(rule.copy_kind).store
        placed = store.by_index(PLACEMENT_INDEX, f"{namespace}|{rule.metadata.namespace}")
        earlier = sum(1 for c in placed if (owner_of(c) or "") < rule.key)
        return max(limit - earlier, 0)

    def forget(self, rule_key: str) -> None:
        """The rule is gone: nothing of it is kept."""
        self.set_blocked(rule_key, set())
        self.plans.forget(rule_key)
        self.hashes.forget(rule_key)

    def set_limited(self, rule: CopyratorRule, namespaces: set[str]) -> None:
        kind, home = rule.copy_kind, rule.metadata.namespace or ""
        for key in [k for k, rules in self.limited.items() if rule.key in rules and k[1] not in namespaces]:
            self.limited[key].discard(rule.key)
            if not self.limited[key]:
                del self.limited[key]
        for ns in namespaces:
            self.limited.setdefault((kind, ns, home), set()).add(rule.key)

    def rules(self) -> list[CopyratorRule]:
        """The cached rules, parsed once per resourceVersion. A rule with problems (an untyped ``namespace``
        list the schema could not bound, say) is left out: it copies nothing new, and the event mappers,
        which run for every ConfigMap and Secret event, never walk it."""
        out = []
        store = self._rules.store
        for raw in store:
            m = meta(raw)
            uid, version = m.get("uid", ""), m.get("resourceVersion", "")
            cached = self._parsed.get(uid)
            if cached is None or cached[0] != version:
                try:
                    parsed: CopyratorRule | None = CopyratorRule.from_dict(raw)
                except ValueError:
                    parsed = None  # the reconcile reports it; mapping skips it
                if parsed is not None and parsed.problems():
                    parsed = None
                cached = self._parsed[uid] = (version, parsed)
            if cached[1] is not None:
                out.append(cached[1])
        if len(self._parsed) > 2 * len(store) + 64:  # rules deleted since: forget them
            present = {meta(raw).get("uid", "") for raw in store}
            self._parsed = {uid: c for uid, c in self._parsed.items() if uid in present}
        return out

    def watches_rule(self, rule_key: str, rule_name_filter: str | None) -> bool:
        """Whether a rule by this key would be in our cache: copies of rules we do not watch (other
        namespaces under ``--namespace``, other names under ``--rule-name``) are not ours to touch."""
        namespace, _, name = rule_key.partition("/")
        scope = self.cache.namespaces
        return (scope is None or namespace in scope) and (not rule_name_filter or name == rule_name_filter)

    # --- event mappers (Watch(..., mapper=...)) ---------------------------------------------------

    def all_rules(self, obj: Obj) -> list[str]:
        """A namespace appeared, changed labels or started terminating: every rule may care."""
        return [r.key for r in self.rules()]

    def mapper(self, kind: str) -> Callable[[Obj], list[str]]:
        """``rules_for`` of one kind, as a ``Watch`` mapper."""
        return lambda obj: self.rules_for(kind, obj)

    def rules_for(self, kind: str, obj: Obj) -> list[str]:
        """A ConfigMap/Secret event → the rule that made it (a copy), the rules it is a source of, and
        the rules whose copy it blocks."""
        owner = owner_of(obj)
        keys = {owner} if owner else set()
        if owner is None and kind == "ConfigMap" and meta(obj).get("name") == POLICY_NAME:
            return sorted(r.key for r in self.rules())  # a namespace's policy: any rule may care
        if owner:  # the copy limit: later rules of the same namespace, and those that found no room
            ns, home = meta(obj).get("namespace", ""), owner.partition("/")[0]
            store = self.objects(kind).store
            keys |= {o for c in store.by_index(PLACEMENT_INDEX, f"{ns}|{home}") if (o := owner_of(c)) and o > owner}
            keys |= self.limited.get((kind, ns, home), set())
        # Consent is not asked here: an object losing it must wake the rules that copied it. A rule whose
        # last plan saw the object as it is now cached (say a source it may not read, or skips, rewritten)
        # is not woken: the same views make the same plan. The cached object, not ``obj``, is what counts:
        # this is asked of the object before a change too, which the rule's last plan may have seen.
        m = meta(obj)
        current = self.get(kind, m.get("namespace", ""), m.get("name", ""))
        keys |= {r.key for r in self.rules() if r.copy_kind == kind and matches_source(r, obj)
                 and not self.plans.sees_as_before(r, current, self.boundary)}
        keys |= self.blocked.get((kind, m.get("namespace", ""), m.get("name", "")), set())
        return sorted(keys)

    def set_blocked(self, rule_key: str, places: set[tuple[str, str, str]]) -> None:
        for key in [k for k, rules in self.blocked.items() if rule_key in rules and k not in places]:
            self.blocked[key].discard(rule_key)
            if not self.blocked[key]:
                del self.blocked[key]
        for place in places:
            self.blocked.setdefault(place, set()).add(rule_key)


def namespace_changed(event: Event) -> bool:
    """Only what decides scope: labels, phase, deletion."""
    if event.type != "modified" or event.old is None:
        return True
    old, new = event.old, event.object
    return (meta(old).get("labels") != meta(new).get("labels")
            or (old.get("status") or {}).get("phase") != (new.get("status") or {}).get("phase")
            or meta(old).get("deletionTimestamp") != meta(new).get("deletionTimestamp"))
