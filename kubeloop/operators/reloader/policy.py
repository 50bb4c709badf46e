"""What a workload asks for, read from its annotations: Reloader's (``reloader.stakater.com``), unchanged,
and the same set under kubeloop's own prefix (``reloader.kubeloop.dev``). Plus the annotations the
operator writes."""

from __future__ import annotations

import contextlib
import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import re2

STAKATER = "reloader.stakater.com"
KUBELOOP = "reloader.kubeloop.dev"
PREFIXES = (STAKATER, KUBELOOP)

CONFIG_MAP, SECRET = "ConfigMap", "Secret"
SOURCE_KINDS = (CONFIG_MAP, SECRET)
_WORD = {CONFIG_MAP: "configmap", SECRET: "secret"}

# Written by the operator. The first two live on the workload's own metadata, so recording them never
# changes the pod template and never rolls anything.
HASH = f"{KUBELOOP}/hash"  # the combined content hash last acted on
SOURCES = f"{KUBELOOP}/sources"  # "Kind/name=<hash prefix>,..." of that hash, to name what changed
HASHED_KEYS = f"{KUBELOOP}/hashed-keys"  # "all" or "used": hashes of another mode are not comparable
TEMPLATE_HASH = f"{KUBELOOP}/config-hash"  # pod-template annotation of the "annotations" strategy
RESTARTED_AT = "kubectl.kubernetes.io/restartedAt"  # what `kubectl rollout restart` sets
STRATEGY = f"{KUBELOOP}/strategy"  # per-workload override of --reload-strategy

PAUSE_PERIOD = "deployment.{p}/pause-period"  # Reloader's, on a Deployment: batch changes for this long

Annotations = Mapping[str, str]
_DURATION = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)")
_UNIT = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}


def duration(text: str) -> float:
    """Seconds of a Go duration (``30s``, ``5m``, ``1h30m``), as Reloader parses ``pause-period``.
    Raises ValueError unless it is one, and positive."""
    parts = _DURATION.findall(text.strip())
    if not parts or "".join(n + u for n, u in parts) != text.strip():
        raise ValueError("not a duration such as 30s, 5m or 1h30m")
    seconds = sum(float(n) * _UNIT[u] for n, u in parts)
    if seconds <= 0:
        raise ValueError("not a positive duration")
    return seconds


@dataclass(frozen=True)
class Names:
    """The annotation keys in use: Reloader lets each of its keys be renamed by a flag
    (``--auto-annotation my.org/reload``); the renamed key replaces Reloader's, kubeloop's own stays."""

    renamed: Mapping[str, str] = field(default_factory=dict)  # Reloader's key → the key read instead

    def keys(self, template: str) -> list[str]:
        return [self.renamed.get(key, key) for key in (template.format(p=p) for p in PREFIXES)]


DEFAULT_NAMES = Names()


@dataclass(frozen=True)
class Policy:
    """Which ConfigMaps and Secrets a workload wants to be rolled for."""

    ignored: bool = False
    auto: frozenset[str] = frozenset()  # kinds whose pod-template references are all tracked
    search: frozenset[str] = frozenset()  # kinds whose referenced objects count if they say ``match``
    named: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # kind → names or regexes
    excluded: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # kind → names or regexes
    strategy: str | None = None
    rollout_strategy: str = "rollout"  # Argo Rollouts only: "rollout" (the template) or "restart"
    pause_period: str | None = None  # Deployments only: Reloader's batching window, a Go duration
    dropped: tuple[str, ...] = ()  # expressions beyond MAX_PATTERNS, names beyond MAX_NAMES: not used (reported)
    over_budget: tuple[str, ...] = ()  # expressions beyond the namespace's budget (``budget.py``): not used

    @property
    def tracks_anything(self) -> bool:
        return not self.ignored and bool(self.auto or self.search or any(self.named.values()))

    def is_excluded(self, kind: str, name: str) -> bool:
        return matches_any(name, self.excluded.get(kind, ()))


def policy_of(annotations: Annotations | None, *, auto_all: bool = False,
              template_annotations: Annotations | None = None, names: Names = DEFAULT_NAMES) -> Policy:
    """Reads a workload's annotations. ``auto_all`` (opt-out mode) makes every workload ``auto``
    unless it says ``auto: "false"``.

    Like Reloader, the pod template's annotations stand in for the workload's, kind by kind: when the
    workload sets none of ``auto``, ``search``, ``<kind>.…/auto`` or ``<kind>.…/reload``, those four are
    read from the template. Exclusions, ``ignore`` and the strategy are read from the workload only."""
    a, n = annotations or {}, names
    by_kind = {k: _kind_source(a, template_annotations or {}, k, n) for k in SOURCE_KINDS}
    auto = frozenset(k for k, src in by_kind.items() if _auto(src, k, auto_all, n))
    raw_named = {k: _names(src, n.keys(_kinded(k, "reload"))) for k, src in by_kind.items()}
    raw_excluded = {k: _names(a, n.keys(f"{_WORD[k]}s.exclude.{{p}}/reload")) for k in SOURCE_KINDS}
    kept: list[str] = []  # regular expressions used, across both maps
    plain: list[str] = []  # plain names used, across both maps
    named = {k: _capped(v, kept, plain) for k, v in raw_named.items()}
    excluded = {k: _capped(v, kept, plain) for k, v in raw_excluded.items()}
    given = (x for v in (*raw_named.values(), *raw_excluded.values()) for x in v)
    return Policy(
        ignored=_flag(a, n.keys("{p}/ignore")) is True,
        auto=auto,
        search=frozenset(k for k, src in by_kind.items() if _flag(src, n.keys("{p}/search")) is True),
        named=named,
        excluded=excluded,
        dropped=tuple(dict.fromkeys(x for x in given if x not in kept and x not in plain)),
        strategy=a.get(STRATEGY) or None,
        rollout_strategy=_value(a, n.keys("{p}/rollout-strategy")) or "rollout",
        pause_period=_value(a, n.keys(PAUSE_PERIOD)),
    )


def _capped(names: tuple[str, ...], kept: list[str], plain: list[str]) -> tuple[str, ...]:
    """Regular expressions while fewer than MAX_PATTERNS are kept, plain names while fewer than MAX_NAMES
    (``kept`` and ``plain`` grow): every expression is matched against every object name of the
    namespace, and every name is looked up, so their numbers bound the work a workload's annotations
    can cause."""
    out = []
    for name in names:
        used, limit = (kept, MAX_PATTERNS) if is_pattern(name) else (plain, MAX_NAMES)
        if name not in used:
            if len(used) >= limit:
                continue
            used.append(name)
        out.append(name)
    return tuple(out)


def _kind_source(workload: Annotations, template: Annotations, kind: str, names: Names) -> Annotations:
    """The annotations that say what to do for ``kind``: the workload's, or (when it says nothing
    about ``kind``) its pod template's."""
    wanted = ("{p}/auto", "{p}/search", _kinded(kind, "auto"), _kinded(kind, "reload"))
    said = any(key in workload for t in wanted for key in names.keys(t))
    return workload if said or not template else template


def _auto(a: Annotations, kind: str, auto_all: bool, names: Names) -> bool:
    auto_flag = _flag(a, names.keys("{p}/auto"))
    return (auto_flag is True or (auto_all and auto_flag is not False)
            or _flag(a, names.keys(_kinded(kind, "auto"))) is True)


def source_ignored(annotations: Annotations | None, names: Names = DEFAULT_NAMES) -> bool:
    """A ConfigMap or Secret annotated ``ignore: "true"`` never triggers a rollout."""
    return _flag(annotations or {}, names.keys("{p}/ignore")) is True


def source_matches(annotations: Annotations | None, names: Names = DEFAULT_NAMES) -> bool:
    """The ``match: "true"`` annotation that ``search`` workloads look for."""
    return _flag(annotations or {}, names.keys("{p}/match")) is True


def is_pattern(name: str) -> bool:
    """Reloader accepts regular expressions in its name lists; a plain object name has none of
    these characters."""
    return _PLAIN.fullmatch(name) is None


def matches_any(name: str, names_or_patterns: tuple[str, ...]) -> bool:
    """``name`` is one of the plain names or fully matches one of the expressions (one compiled matcher
    per list: a set lookup and one linear RE2 pass)."""
    return name_matcher(names_or_patterns)(name)


# Reloader matches these expressions with Go's regexp, which is RE2: linear in the name's length whatever
# the expression. Python's engine backtracks, and the names matched are chosen by whoever may create
# objects in the namespace (up to 253 characters): ".*?.*?(?:a|aa)(?:a|aa)(?:a|aa)(?:a|aa)q0b" costs tens
# of milliseconds per long name there, "(a+)+b" hours. So expressions are compiled with RE2 (the syntax
# Reloader's users write for), and bounded: their length, their number per workload, their number per
# namespace (``budget.py``), the memory of each compiled program.
MAX_PATTERN_LENGTH = 256
MAX_PATTERNS = 16  # regular expressions per workload (reload and exclude annotations together)
MAX_NAMES = 256  # plain names per workload (each a lookup; beyond this, names are not used, reported)
_PLAIN = re.compile(r"[a-z0-9.\-]+")
_OPTIONS = re2.Options()
_OPTIONS.log_errors = False  # the reconcile reports a refused expression as an Event
_OPTIONS.max_mem = 1 << 20  # bytes per compiled program: an expression needing more is refused
_OPTIONS.never_capture = True  # only "does it match" is asked


def _full_matcher(regex: Any) -> Any:
    """``regex.fullmatch(text) is not None``, calling RE2 directly: the module's ``fullmatch`` builds
    match objects and offset tables in Python, about 20 times the cost of the match itself."""
    raw, anchor = getattr(regex, "_regexp", None), getattr(getattr(re2, "_Anchor", None), "ANCHOR_BOTH", None)
    if raw is None or anchor is None:  # another version of the binding: its public API
        return lambda text: regex.fullmatch(text) is not None

    def match(text: str) -> bool:
        data = text.encode()
        return bool(raw.Match(anchor, data, 0, len(data))[0] != (-1, -1))
    return match


def pattern_problem(pattern: str) -> str | None:
    """Why a ``reload``/``exclude`` regular expression is not used (None: it is)."""
    if len(pattern) > MAX_PATTERN_LENGTH:
        return f"longer than {MAX_PATTERN_LENGTH} characters"
    if _compiled(pattern) is None:
        return "not a regular expression RE2 accepts (Go's syntax: no backreferences or lookarounds)"
    return None


@functools.lru_cache(maxsize=1024)
def _compiled(pattern: str) -> Any:
    if len(pattern) > MAX_PATTERN_LENGTH:
        return None
    try:
        return re2.compile(pattern, _OPTIONS)
    except re2.error:
        return None


@dataclass(frozen=True)
class NameMatcher:
    """A list of names and expressions compiled once: a set of the names, one RE2 alternation of the
    usable expressions (refused ones match nothing)."""

    names: frozenset[str]
    regex: Any  # re2 compiled alternation, or None
    _regex: Any = field(default=None, compare=False, repr=False)  # its direct full-match call

    def __post_init__(self) -> None:
        if self.regex is not None:
            object.__setattr__(self, "_regex", _full_matcher(self.regex))

    def __call__(self, name: str) -> bool:
        return name in self.names or (self._regex is not None and self._regex(name))


@functools.lru_cache(maxsize=4096)
def name_matcher(names_or_patterns: tuple[str, ...]) -> NameMatcher:
    """The matcher of a list, cached by the list's content."""
    usable = [p for p in dict.fromkeys(names_or_patterns) if is_pattern(p) and _compiled(p) is not None]
    regex = None
    if usable:
        try:
            regex = re2.compile("|".join(f"(?:{p})" for p in usable), _OPTIONS)
        except re2.error:  # together beyond max_mem: keep the first ones that fit
            while usable and regex is None:
                usable.pop()
                with contextlib.suppress(re2.error):
                    regex = re2.compile("|".join(f"(?:{p})" for p in usable), _OPTIONS) if usable else None
    return NameMatcher(frozenset(n for n in names_or_patterns if not is_pattern(n)), regex)


def _kinded(kind: str, what: str) -> str:
    return f"{_WORD[kind]}.{{p}}/{what}"


def _flag(a: Annotations, keys: list[str]) -> bool | None:
    """True/False if any of the keys sets the annotation to true/false (true wins), None if unset."""
    values = [str(a[key]).strip().lower() for key in keys if key in a]
    if "true" in values:
        return True
    return False if "false" in values else None


def _value(a: Annotations, keys: list[str]) -> str | None:
    values = [str(a[key]).strip() for key in keys if key in a]
    return values[0] if values else None


def _names(a: Annotations, keys: list[str]) -> tuple[str, ...]:
    out: list[str] = []
    for key in keys:
        for name in (a.get(key) or "").split(","):
            if name.strip() and name.strip() not in out:
                out.append(name.strip())
    return tuple(out)
