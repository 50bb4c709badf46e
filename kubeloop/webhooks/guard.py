"""The author guard at run time: the signing key and the mutating webhook that writes the record.

- ``op.record_author(Kind)`` returns an :class:`AuthorGuard`; its mutating webhook writes the record
  (:mod:`kubeloop.webhooks.author`) on CREATE and UPDATE of that kind. A value the user put there is
  overwritten, which is what keeps the record unforgeable: no validating rule is needed on top.
- On UPDATE the record is rewritten with the requesting user when the content changed or the annotation
  itself was edited (``kubectl annotate ... <domain>/author=renew``: how an author re-records an old
  object); otherwise the old record stays, so the operator's own writes (finalizers, labels) never make
  it the author.
- A CREATE with ``generateName`` and no name is denied: mutating admission runs before the name is
  generated, and a record must name its object.
- The key is 32 random bytes in Secret ``<operator>-author-key`` in the operator's namespace, made by
  the first replica (create; a racing replica gets AlreadyExists and reads the winner's). Without a
  namespace (``kubeloop run`` outside a cluster) the key lives in memory: records die with the process.
- Until the key is loaded the webhook denies (503): with ``failurePolicy: Fail`` nothing goes unrecorded.
"""

from __future__ import annotations

import asyncio
import base64
import logging
import secrets
from collections.abc import Mapping
from typing import Any

from kubeloop.client import AlreadyExists, Client, NotFound
from kubeloop.client.resource import Resource
from kubeloop.webhooks.admission import AdmissionRequest, Denied
from kubeloop.webhooks.author import Author, annotation_key, content_hash, sign, verify

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
        self._key: bytes | None = None
        self._loaded = asyncio.Event()

    @property
    def ready(self) -> bool:
        """The key is loaded: records can be written and verified."""
        return self._key is not None

    def use_key(self, key: bytes) -> None:
        """Sets the signing key (what :meth:`start` does with the Secret's)."""
        self._key = key
        self._loaded.set()

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
        return verify(self._key, raw, self.domain)

    async def admit(self, obj: dict[str, Any], req: AdmissionRequest) -> dict[str, Any] | None:
        """The mutating handler: the object with its author record written (or kept)."""
        try:
            await asyncio.wait_for(self._loaded.wait(), 2)
        except TimeoutError:
            raise Denied("the operator has not loaded its author-signing key yet; retry", code=503) from None
        assert self._key is not None
        meta = obj.setdefault("metadata", {})
        if not meta.get("name"):
            raise Denied("give the object a name: its author is recorded at admission, before a "
                         "generateName is turned into one", field="metadata.name")
        annotations = meta.get("annotations") or {}
        if req.operation == "UPDATE" and self._keeps_record(obj, req.old_object or {}):
            return None
        user = req.user
        author = Author(user.username, user.uid, user.groups, dict(user.extra))
        meta["annotations"] = {**annotations, self.annotation: sign(self._key, obj, author)}
        return obj

    def _keeps_record(self, new: Mapping[str, Any], old: Mapping[str, Any]) -> bool:
        before = (old.get("metadata") or {}).get("annotations") or {}
        after = (new.get("metadata") or {}).get("annotations") or {}
        return content_hash(new) == content_hash(old) and before.get(self.annotation) == after.get(self.annotation)


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
