"""Who wrote an object: a signed record that the operator's own mutating webhook keeps in an annotation.

Kubernetes does not store who created or changed an object, so an operator acting with cluster-wide
rights on behalf of a namespaced object cannot tell whether that object's author may do what it asks.

- The record names the user the API server authenticated (username, uid, groups, extra) and is signed
  with HMAC-SHA256 over (API group and kind, namespace, name, a hash of the object's *content*, that
  user). Content is every top-level field but ``apiVersion``, ``kind``, ``metadata`` and ``status``: the
  spec, or the fields themselves for kinds that keep them at the top (copyrator's rules do).
- ``metadata.uid`` is not signed: mutating admission runs before the API server assigns it on CREATE
  (``tests/integration/test_author_guard.py::test_uid_is_absent_in_mutating_create`` checks this on the
  real server). The namespace and name take its place, and the signing time stands in for the uid's
  uniqueness: a record signed more than ``MAX_CLOCK_SKEW`` seconds before the object's
  ``creationTimestamp`` belongs to an earlier object of that name (replayed onto a re-creation while the
  webhook was not called) and is refused.
- :func:`verify` refuses with :class:`UnverifiedAuthor` whose ``reason`` says why (``Missing``,
  ``Malformed``, ``BadSignature`` for a forged record or one copied from another object,
  ``ContentChanged`` for content edited while the webhook was not there, ``SignedBeforeCreation`` for
  a record of an earlier object of the same name) and whose message says how to
  fix it: re-apply the object as its author. The key never appears in a message.
- Pure functions, no I/O: :mod:`kubeloop.webhooks.guard` loads the key and runs the webhook.
"""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import hmac
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson

VERSION = 2  # 2: the signing time is signed (1 had none: such records are refused, renew them)
# Seconds a record may be signed before its object's creationTimestamp: mutating admission runs just
# before the API server sets it, on another machine's clock. Beyond that the record is an earlier
# object's (a replay).
MAX_CLOCK_SKEW = 30.0
NOT_CONTENT = frozenset({"apiVersion", "kind", "metadata", "status"})


@dataclass(frozen=True)
class Author:
    """The user who last wrote an object's content, as the API server authenticated them."""

    username: str
    uid: str = ""
    groups: tuple[str, ...] = ()
    extra: dict[str, tuple[str, ...]] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        """The JSON form signed and stored (sorted, lists): one spelling per user."""
        return {"username": self.username, "uid": self.uid, "groups": list(self.groups),
                "extra": {k: list(v) for k, v in sorted(self.extra.items())}}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Author:
        """The author of a stored record (``KeyError``/``TypeError`` on a malformed one)."""
        return cls(str(data["username"]), str(data.get("uid") or ""), tuple(data.get("groups") or ()),
                   {str(k): tuple(v) for k, v in (data.get("extra") or {}).items()})


class UnverifiedAuthor(Exception):
    """An object whose author cannot be trusted; ``reason`` is a CamelCase word for conditions."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason, self.message = reason, message


def annotation_key(domain: str) -> str:
    """Where the record lives: ``<domain>/author``."""
    return f"{domain}/author"


def content_hash(obj: Mapping[str, Any]) -> str:
    """sha256 of the object's content in canonical JSON (sorted keys, no spaces)."""
    content = {k: v for k, v in obj.items() if k not in NOT_CONTENT}
    return "sha256:" + hashlib.sha256(orjson.dumps(content, option=orjson.OPT_SORT_KEYS)).hexdigest()


def _group_kind(obj: Mapping[str, Any]) -> str:
    api_version = str(obj.get("apiVersion", ""))
    return f"{api_version.rpartition('/')[0]}/{obj.get('kind', '')}"


def _signature(key: bytes, obj: Mapping[str, Any], digest: str, author: Author, at: int) -> str:
    meta = obj.get("metadata") or {}
    payload = orjson.dumps([VERSION, _group_kind(obj), meta.get("namespace") or "", meta.get("name") or "",
                            digest, author.as_dict(), at], option=orjson.OPT_SORT_KEYS)
    return base64.urlsafe_b64encode(hmac.new(key, payload, hashlib.sha256).digest()).decode()


def sign(key: bytes, obj: Mapping[str, Any], author: Author, now: float | None = None) -> str:
    """The annotation value recording ``author`` as the writer of ``obj``'s current content, ``now``
    (Unix seconds; the clock by default)."""
    digest, at = content_hash(obj), int(time.time() if now is None else now)
    return orjson.dumps({"v": VERSION, "user": author.as_dict(), "content": digest, "at": at,
                         "sig": _signature(key, obj, digest, author, at)}, option=orjson.OPT_SORT_KEYS).decode()


def verify(key: bytes, obj: Mapping[str, Any], domain: str, max_clock_skew: float = MAX_CLOCK_SKEW) -> Author:
    """The author recorded on ``obj``, or :class:`UnverifiedAuthor` saying why it is not trusted."""
    meta = obj.get("metadata") or {}
    where = f"{obj.get('kind', 'object')} {meta.get('namespace', '')}/{meta.get('name', '')}".replace(" /", " ")
    fix = (f"re-apply it as its author (e.g. kubectl annotate --overwrite {obj.get('kind', '').lower()} "
           f"{meta.get('name', '')} {annotation_key(domain)}=renew"
           + (f" -n {meta['namespace']}" if meta.get("namespace") else "") + ") while the operator's webhook runs")
    value = (meta.get("annotations") or {}).get(annotation_key(domain))
    if not value:
        raise UnverifiedAuthor("Missing", f"{where} has no author record (created before the webhook existed, "
                                          f"or while it was down): {fix}")
    try:
        record = orjson.loads(value)
        author, digest, sig = Author.from_dict(record["user"]), str(record["content"]), str(record["sig"])
        at = record["at"]
        if record.get("v") != VERSION or type(at) is not int:
            raise ValueError("version")
    except (orjson.JSONDecodeError, KeyError, TypeError, ValueError, AttributeError):
        raise UnverifiedAuthor("Malformed", f"{where}: its author record is not one this operator wrote: "
                                            f"{fix}") from None
    if not hmac.compare_digest(sig, _signature(key, obj, digest, author, at)):
        raise UnverifiedAuthor("BadSignature", f"{where}: its author record was not signed for this object by "
                                               f"this operator (forged or copied): {fix}")
    if digest != content_hash(obj):
        raise UnverifiedAuthor("ContentChanged", f"{where} changed since its author was recorded (written while "
                                                 f"the webhook was not called): {fix}")
    created = _created(meta)
    if created is not None and at < created - max_clock_skew:
        raise UnverifiedAuthor("SignedBeforeCreation", f"{where}: its author record was signed {created - at:.0f} s "
                                                       "before the object was created, so it is an earlier object's "
                                                       f"of the same name (replayed while the webhook was not "
                                                       f"called): {fix}")
    return author


def _created(meta: Mapping[str, Any]) -> float | None:
    """``metadata.creationTimestamp`` in Unix seconds (None before the API server set it)."""
    stamp = meta.get("creationTimestamp")
    if not isinstance(stamp, str):
        return None
    try:
        return dt.datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None
