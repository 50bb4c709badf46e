"""Lists of names and shell-style globs (``team-*``, ``kube-?``, ``[ab]-x``), compiled once per list.

A tenant writes these lists (a rule's ``excludedNamespaces``, ``copyLabels``, ``copyAnnotations``; the
values of the consent annotations), and the operator matches them against every namespace name and
every label key of every copy. Matching pattern by pattern costs (patterns × names) and, with
``fnmatch``, a regex compilation per pattern beyond its cache. Here a list becomes one matcher, built
once per distinct list and cached by its content:

- names without glob characters go into a set (one hash lookup);
- ``prefix*`` and ``*suffix`` become a prefix and a suffix tuple (``str.startswith``/``endswith``);
- everything else ("general" globs, at most MAX_GENERAL per list: the schema and the consent checks
  enforce it) becomes one alternation compiled with RE2, whose matching time is linear in the name's
  length whatever the patterns (an automaton: no backtracking). Few general globs keep that automaton
  small: 16 of 63 characters match 1,000 namespace names in about 20 ms on first sight and half that
  once RE2 has cached its states, where 256 took about 0.5-0.9 s (RE2's state cache overflows).

So matching one name costs one set lookup, two tuple scans bounded by the list's schema maximum, and
one linear pass; building the matcher happens once per list per process.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import re2

_GLOB_CHARS = frozenset("*?[")
MAX_GENERAL = 16  # globs per list that are neither names, "prefix*" nor "*suffix"
# The same classification as a CEL expression over a list ``self`` (the schema's bound on general globs).
CEL_GENERAL_COUNT = ("self.filter(p, !p.matches('^[^*?\\\\[]*$') && !p.matches('^[^*?\\\\[]*[*]$') "
                     "&& !p.matches('^[*][^*?\\\\[]*$')).size()")
_OPTIONS = re2.Options()
_OPTIONS.log_errors = False  # a bad class such as "[z-a]" is reported by the caller, not on stderr
_OPTIONS.dot_nl = True  # fnmatch's "*" and "?" match any character
_OPTIONS.never_capture = True  # only "does it match" is asked


def full_matcher(regex: re2._Regexp) -> Callable[[str], bool]:
    """``regex.fullmatch(text) is not None``, calling RE2 directly: the module's ``fullmatch`` builds
    match objects and offset tables in Python, about 20 times the cost of the match itself."""
    raw, anchor = getattr(regex, "_regexp", None), getattr(getattr(re2, "_Anchor", None), "ANCHOR_BOTH", None)
    if raw is None or anchor is None:  # another version of the binding: its public API
        return lambda text: regex.fullmatch(text) is not None

    def match(text: str) -> bool:
        data = text.encode()
        return bool(raw.Match(anchor, data, 0, len(data))[0] != (-1, -1))
    return match


@dataclass(frozen=True)
class Globs:
    """A compiled list: call it with a name."""

    exact: frozenset[str]
    prefixes: tuple[str, ...]
    suffixes: tuple[str, ...]
    general: re2._Regexp | None
    anything: bool = False
    _general: Callable[[str], bool] | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.general is not None:
            object.__setattr__(self, "_general", full_matcher(self.general))

    def __call__(self, name: str) -> bool:
        return (self.anything or name in self.exact
                or (bool(self.prefixes) and name.startswith(self.prefixes))
                or (bool(self.suffixes) and name.endswith(self.suffixes))
                or (self._general is not None and self._general(name)))

    def any(self, names: Iterable[str]) -> bool:
        return any(self(n) for n in names)


def is_general(pattern: str) -> bool:
    """Neither a plain name, nor ``prefix*``, nor ``*suffix``: needs the regular-expression matcher."""
    if not _GLOB_CHARS & set(pattern):
        return False
    head, tail = pattern[:-1], pattern[1:]
    return not ((pattern.endswith("*") and not _GLOB_CHARS & set(head))
                or (pattern.startswith("*") and not _GLOB_CHARS & set(tail)))


def compile_globs(patterns: Iterable[str]) -> Globs:
    """The matcher of ``patterns`` (cached by the list's content: the same list compiles once)."""
    return _compiled(tuple(dict.fromkeys(patterns)))


@functools.lru_cache(maxsize=4096)
def _compiled(patterns: tuple[str, ...]) -> Globs:
    exact, prefixes, suffixes, general = set(), [], [], []
    for p in patterns:
        if not _GLOB_CHARS & set(p):
            exact.add(p)
        elif p.count("*") == len(p):  # "*", "**": everything
            return Globs(frozenset(), (), (), None, anything=True)
        elif p.endswith("*") and not _GLOB_CHARS & set(p[:-1]):
            prefixes.append(p[:-1])
        elif p.startswith("*") and not _GLOB_CHARS & set(p[1:]):
            suffixes.append(p[1:])
        else:
            general.append(translate(p))
    regex = None
    if general:
        try:
            regex = re2.compile("|".join(f"(?:{g})" for g in general), _OPTIONS)
        except re2.error:  # only a malformed class gets here; match each valid one alone instead
            valid = [g for g in general if _valid(g)]
            regex = re2.compile("|".join(f"(?:{g})" for g in valid), _OPTIONS) if valid else None
    return Globs(frozenset(exact), tuple(prefixes), tuple(suffixes), regex)


def _valid(regex: str) -> bool:
    try:
        re2.compile(regex, _OPTIONS)
    except re2.error:
        return False
    return True


def translate(glob: str) -> str:
    """A glob as an RE2 expression with fnmatch's meaning: ``*`` any run, ``?`` one character,
    ``[...]``/``[!...]`` a class; anything else literal."""
    out, i, n = [], 0, len(glob)
    while i < n:
        c = glob[i]
        i += 1
        if c == "*":
            out.append(".*")
        elif c == "?":
            out.append(".")
        elif c == "[":
            j = i + 1 if i < n and glob[i] == "!" else i
            j = j + 1 if j < n and glob[j] == "]" else j  # a leading "]" is a member, as in fnmatch
            end = glob.find("]", j)
            if end < 0:
                out.append(re.escape(c))
                continue
            body = glob[i:end]
            negate = body.startswith("!")
            body = body[1:] if negate else body
            body = body.replace("\\", "\\\\").replace("[", "\\[").replace("]", "\\]").replace("^", "\\^")
            out.append(f"[{'^' if negate else ''}{body}]")
            i = end + 1
        else:
            out.append(re.escape(c))
    return "".join(out)
