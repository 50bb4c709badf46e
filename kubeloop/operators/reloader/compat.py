"""Reloader's command line, read the way Reloader reads it: list flags (comma-separated, repeatable,
possibly wrapped in the quotes its Helm chart adds), its ``key:value`` / ``key=*`` label selectors, its
flags that rename its annotations, and its flags that have no meaning here, refused with what to use
instead. The fields themselves are declared in ``settings.ReloaderSettings``, with the flags of
Reloader that are framework flags here (``--enable-ha``, ``--namespaces``)."""

from __future__ import annotations

import re
from typing import Any

import click

from kubeloop import selectors, setting


class SettingError(click.UsageError, ValueError):
    """A setting that cannot be used. A ValueError for code that builds settings itself; a UsageError so
    that ``kubeloop run reloader`` reports it as ``Error: --flag: ...`` (exit code 2), not a traceback."""


# Reloader's flags without an equivalent here: flag → why, and what to do instead.
UNSUPPORTED = {
    "webhook-url": "kubeloop's reloader always rolls the workload; it has no webhook mode (use --dry-run "
                   "to only report, and watch the ReloadSkipped events)",
    "enable-pprof": "no Go profiler in a Python process (profile the pod with py-spy; /metrics is on "
                    "--metrics-bind-address)",
    "pprof-addr": "no Go profiler in a Python process (see --enable-pprof)",
    "enable-csi-integration": "SecretProviderClasses are not watched; sync them into a Secret "
                              "(secretObjects) and reference that Secret",
    "pause-deployment-time-annotation": "no Deployment is paused here (the rollout is held for the "
                                        "pause-period instead), so no paused-at annotation is written",
}
# Reloader's flags that rename one of its annotations: flag → the annotation it replaces.
RENAMES = {
    "configmap-annotation": "configmap.reloader.stakater.com/reload",
    "secret-annotation": "secret.reloader.stakater.com/reload",
    "auto-annotation": "reloader.stakater.com/auto",
    "configmap-auto-annotation": "configmap.reloader.stakater.com/auto",
    "secret-auto-annotation": "secret.reloader.stakater.com/auto",
    "auto-search-annotation": "reloader.stakater.com/search",
    "search-match-annotation": "reloader.stakater.com/match",
    "ignore-annotation": "reloader.stakater.com/ignore",
    "pause-deployment-annotation": "deployment.reloader.stakater.com/pause-period",
}
BOOLEAN = ("enable-pprof", "enable-csi-integration")  # on/off flags: only "on" is refused


def rename(flag: str) -> Any:
    """The settings field of a rename flag (its value is checked by ``annotation_key``)."""
    return setting(None, f"Read this annotation instead of {RENAMES[flag]} (Reloader's rename).")


def refused(flag: str) -> Any:
    """The settings field of a flag refused when given (an on/off one: when on)."""
    return setting(False if flag in BOOLEAN else None, f"Reloader's; not supported: {UNSUPPORTED[flag]}.")


def annotation_key(flag: str, value: str) -> str:
    """An annotation key as the API server accepts it (``[prefix/]name``)."""
    name = value.rpartition("/")[2]
    if not _KEY.match(value) or len(name) > 63 or len(value) - len(name) > 254:
        raise SettingError(f"{flag}: {value!r} is not an annotation key (such as example.com/reload)")
    return value


def renamed(settings: object) -> dict[str, str]:
    """Reloader's annotation keys → the keys given by its rename flags (fields of ``settings``)."""
    out = {}
    for flag, default in RENAMES.items():
        if value := getattr(settings, flag.replace("-", "_")):
            out[default] = annotation_key(f"--{flag}", str(value))
    return out


def items(value: str | tuple[str, ...] | list[str] | None) -> list[str]:
    """The values of a list flag: repeated flags and commas both separate (commas inside ``( )`` do
    not, so ``tier in (web,api)`` stays one); the double quotes Reloader's chart puts around a value
    are dropped, as Go's flag parser drops them."""
    values = [value] if isinstance(value, str) else list(value or ())
    out: list[str] = []
    for v in values:
        v = v.strip()
        if len(v) >= 2 and v[0] == v[-1] == '"':
            v = v[1:-1]
        out += [part.strip() for part in selectors.split(v)]
    return out


def selector(flag: str, value: str | tuple[str, ...] | None) -> str:
    """Reloader's selector syntax as a Kubernetes label selector (see ``selector_terms``)."""
    return ",".join(selector_terms(flag, value))


def selector_terms(flag: str, value: str | tuple[str, ...] | None) -> tuple[str, ...]:
    """Reloader's selector syntax as Kubernetes label selector terms: ``key:value`` is ``key=value``,
    ``key:*`` and ``key=*`` are ``key`` (the label exists); anything else is read as a Kubernetes
    selector. Raises ValueError naming the flag for anything that is not a valid selector, rather than
    keep a selector that silently matches nothing."""
    given = items(value)
    terms = [_reloader_term(t) for t in given]
    bad = [g for g, t in zip(given, terms, strict=True) if not _valid(_parse(t))]
    if bad:
        raise SettingError(f"{flag}: cannot parse {bad[0]!r} as a label selector (use key=value, key:value, "
                         "key!=value, key=* or key:* for \"has the label\", !key, key in (a,b); "
                         "comma-separate or repeat the flag)")
    return tuple(terms)


_WILDCARD = re.compile(r"^([^:=!\s()]+)\s*(?::|==?)\s*\*$")
_COLON = re.compile(r"^([^:=!\s()]+)\s*:\s*(\S*)$")
_NAME = r"[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?"
_KEY = re.compile(rf"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?{_NAME}$")
_VALUE = re.compile(rf"^({_NAME})?$")


def _reloader_term(term: str) -> str:
    if m := _WILDCARD.match(term):
        return m.group(1)
    if m := _COLON.match(term):
        return f"{m.group(1)}={m.group(2)}"
    return term


def _parse(term: str) -> tuple[selectors.Requirement, ...] | None:
    try:
        return selectors.parse(term)
    except ValueError:
        return None


def _valid(requirements: tuple[selectors.Requirement, ...] | None) -> bool:
    """Label keys and values as the API server would accept them (a key with ``:`` or ``*`` can never
    be on any object, so a selector naming one would select nothing, silently)."""
    if not requirements:
        return False
    for r in requirements:
        name = r.key.rpartition("/")[2]
        if not _KEY.match(r.key) or len(name) > 63 or len(r.key) - len(name) > 254:
            return False
        if any(not _VALUE.match(v) or len(v) > 63 for v in r.values):
            return False
    return True
