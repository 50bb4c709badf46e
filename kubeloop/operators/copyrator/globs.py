"""Lists of names and shell-style globs (``team-*``, ``kube-?``, ``[ab]-x``), compiled once per list.

A tenant writes these lists (a rule's ``excludedNamespaces``, ``copyLabels``, ``copyAnnotations``; the
values of the consent annotations), and the operator matches them against every namespace name and
every label key of every copy. Matching pattern by pattern costs (patterns × names) and, with
``fnmatch``, a regex compilation per pattern beyond its cache. Here a list becomes one matcher, built
once per distinct list and cached by its content:

- names without glob characters go into a set (one hash lookup);
- ``prefix*`` and ``*suffix`` become a prefix and a suffix tuple (``str.startswith``/``endswith``);
- everything else becomes one alternation compiled with RE2, whose matching time is linear in the
  name's length whatever the patterns (a deterministic automaton: no backtracking).

So matching one name costs one set lookup, two tuple scans bounded by the list's schema maximum, and
one linear pass; building the matcher happens once per list per process.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass

import re2

_GLOB_CHARS = frozenset("*?[")
_OPTIONS = re2.Options()
_OPTIONS.log_errors = False  # a bad class such as "[z-a]" is reported by the caller, not on stderr
_OPTIONS.dot_nl = True  # fnmatch's "*" and "?" match any character


@dataclass(frozen=True)
class Globs:
    """A compiled list: call it with a name."""

    exact: frozenset[str]
    prefixes: tuple[str, ...]
    suffixes: tuple[str, ...]
    general: re2._Regexp | None
    anything: bool = False

    def __call__(self, name: str) -> bool:
        return (self.anything or name in self.exact
                or (bool(self.prefixes) and name.startswith(self.prefixes))
                or (bool(self.suffixes) and name.endswith(self.suffixes))
                or (self.general is not None and self.general.fullmatch(name) is not None))

    def any(self, names: Iterable[str]) -> bool:
        return any(self(n) for n in names)


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
