"""The author guard at run time: the signing key and the mutating webhook that writes the record.

- ``op.record_author(Kind)`` returns an :class:`AuthorGuard`; its mutating webhook writes the record
  (:mod:`kubeloop.webhooks.author`) on CREATE and UPDATE of that kind. A value the user put there is
  overwritten, which is what keeps the record unforgeable: no validating rule is needed on top.
- On UPDATE the record is rewritten with the requesting user when the content changed or the annotation
  was set to a value that is not a record (``kubectl annotate ... <domain>/author=renew``: how an author
  re-records an old object); otherwise the old record stays, so the operator's own writes (finalizers,
  labels) never make it the author. A metadata-only write that *removes* the annotation or writes a
  record back (a stale copy, another object's) gets the old record put back, with a warning: else a
  privileged tool's label write could be steered into signing a tenant's content (a server-side apply
  under a field manager the tenant made own the annotation, a 3-way merge from a doctored
  ``last-applied-configuration``, a read-modify-write of the annotations).
- A CREATE with ``generateName`` and no name is denied: mutating admission runs before the name is
  generated, and a record must name its object.
- The key is 32 random bytes in Secret ``<operator>-author-key`` in the operator's namespace, made by
  the first replica (create; a racing replica gets AlreadyExists and reads the winner's). Without a
  namespace (``kubeloop run`` outside a cluster) the key lives in memory: records die with the process.
- Until the key is loaded the webhook denies (503): with ``failurePolicy: Fail`` nothing goes unrecorded.
- The webhook is loop-free: it reads the review and the key only, so the webhook server runs it on its
  own thread and loop (kubeloop/webhooks/server.py), answering while a reconcile holds the operator's
  loop. Nothing here may await an object of the operator's loop: the key is a plain attribute, set once.
"""

from __future__ import annotations

import asyncio
import base64
import logging
import secrets
import time
from typing import Any

import orjson

from kubeloop.client import AlreadyExists, Client, NotFound
from kubeloop.client.resource import Resource
from kubeloop.webhooks.admission import AdmissionRequest, Denied
from kubeloop.webhooks.author import MAX_CLOCK_SKEW, Author, annotation_key, content_hash, sign, verify

log = logging.getLogger(__name__)
KEY_FIELD = "hmac.key"


def key_secret_name(operator: str) -> str:
    """The Secret holding an operator's author-signing key."""
    return f"{operator}-author-key"


async def load_key(client: Client, namespace: str, name: str) -> bytes:
    """The key in Secret ``namespace/name``, creating the Secret with a fresh key if it is missing."""
    for _ in range(3):
        try:
            secret = await client.get("secrets", name, namespace)
        except NotFound:
            body = {"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
                    "metadata": {"name": name, "namespace": namespace,
                                 "labels": {"app.kubernetes.io/managed-by": "kubeloop"}},
                    "data": {KEY_FIELD: base64.b64encode(secrets.token_bytes(32)).decode()}}
            try:
                await client.create(body, namespace)
                log.info("stored a new author-signing key in Secret %s/%s", namespace, name)
            except AlreadyExists:
                pass  # another replica won; read its key
            continue
        value = (secret.get("data") or {}).get(KEY_FIELD)
        if not value:
            raise RuntimeError(f"Secret {namespace}/{name} has no {KEY_FIELD!r}: delete it and restart the "
                               "operator to make a new key (existing author records then need re-applying)")
        return base64.b64decode(value)
    raise RuntimeError(f"Secret {namespace}/{name} could not be read or created; retry")


class AuthorGuard:
    """Records and verifies who wrote objects of ``resource``; see the module docstring."""

    def __init__(self, operator: str, resource: Resource, domain: str) -> None:
        self.operator, self.resource, self.domain = operator, resource, domain
        self.annotation = annotation_key(domain)
        # A record signed longer than this before its object was created is a replayed one (author.py).
        self.max_clock_skew = MAX_CLOCK_SKEW
        self._key: bytes | None = None  # set once (use_key); read from the webhook server's thread

    @property
    def ready(self) -> bool:
        """The key is loaded: records can be written and verified."""
        return self._key is not None

    def use_key(self, key: bytes) -> None:
        """Sets the signing key (what :meth:`start` does with the Secret's)."""
        self._key = key

    async def start(self, client: Client, namespace: str | None) -> None:
        """Loads the key from the operator's namespace (or makes an in-memory one without a namespace)."""
        if namespace is None:
            log.warning("no operator namespace: the author-signing key is kept in memory, so author records "
                        "are lost when the process ends (give --webhook-namespace to keep them)")
            self.use_key(secrets.token_bytes(32))
            return
        self.use_key(await load_key(client, namespace, key_secret_name(self.operator)))

    def author_of(self, obj: Any) -> Author:
        """The verified author of ``obj`` (a dict or a model with ``to_dict``), or ``UnverifiedAuthor``."""
        if self._key is None:
            raise RuntimeError("the author guard has no key yet: it is loaded when the operator starts")
        raw = obj.to_dict() if hasattr(obj, "to_dict") else obj
        return verify(self._key, raw, self.domain, self.max_clock_skew)

    async def admit(self, obj: dict[str, Any], req: AdmissionRequest) -> dict[str, Any] | None:
        """The mutating handler: the object with its author record written (or kept)."""
        key = await self._wait_for_key(2.0)
        meta = obj.setdefault("metadata", {})
        if not meta.get("name"):
            raise Denied("give the object a name: its author is recorded at admission, before a "
                         "generateName is turned into one", field="metadata.name")
        annotations = meta.get("annotations") or {}
        old = req.old_object or {}
        if req.operation == "UPDATE" and content_hash(obj) == content_hash(old):
            before = ((old.get("metadata") or {}).get("annotations") or {}).get(self.annotation)
            after = annotations.get(self.annotation)
            if after == before:
                return None
            if not after or _is_record(after):
                return self._put_back(obj, before, req)
        user = req.user
        author = Author(user.username, user.uid, user.groups, dict(user.extra))
        meta["annotations"] = {**annotations, self.annotation: sign(key, obj, author)}
        return obj

    async def _wait_for_key(self, seconds: float) -> bytes:
        """The key, waiting up to ``seconds`` for the start to load it; polled rather than awaited on an
        asyncio.Event, which would belong to one loop while this runs on the webhook server's."""
        give_up = time.monotonic() + seconds
        while self._key is None:
            if time.monotonic() >= give_up:
                raise Denied("the operator has not loaded its author-signing key yet; retry", code=503)
            await asyncio.sleep(0.05)
        return self._key

    def _put_back(self, obj: dict[str, Any], before: str | None, req: AdmissionRequest) -> dict[str, Any]:
        """``obj`` with the stored record (or its absence) restored: removing the annotation or writing a
        record into it is not a renewal, so it must not make this requester the author."""
        annotations = dict(obj["metadata"].get("annotations") or {})
        annotations.pop(self.annotation, None)
        if before is not None:
            annotations[self.annotation] = before
        obj["metadata"]["annotations"] = annotations
        req.warn(f"{self.annotation} is written by the operator's webhook: the stored value was kept. To record "
                 f"yourself as the author of the current content, set it to any other value, e.g. 'renew'")
        return obj


def _is_record(value: str) -> bool:
    """Whether ``value`` has a record's shape (valid or not): a JSON object with a signature."""
    try:
        parsed = orjson.loads(value)
    except orjson.JSONDecodeError:
        return False
    return isinstance(parsed, dict) and "sig" in parsed


def guard_permissions(guards: list[AuthorGuard]) -> list[Any]:
    """Cluster-wide: asking SubjectAccessReviews on the authors' behalf; none without a guard."""
    from kubeloop.resources.rbac import Permission

    return [Permission("authorization.k8s.io", "subjectaccessreviews", ("create",), namespaced=False)] if guards else []


def guard_namespaced_permissions(operator: str, guards: list[AuthorGuard]) -> list[Any]:
    """In the operator's namespace: read its key Secret by name, and create it on first start (RBAC
    cannot limit a create to one name)."""
    from kubeloop.resources.rbac import Permission

    if not guards:
        return []
    return [Permission("", "secrets", ("get",), names=(key_secret_name(operator),)),
            Permission("", "secrets", ("create",))]
