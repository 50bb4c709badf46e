"""May this user do that? ``SubjectAccessReview`` answers, asked on a user's behalf, cached briefly.

- :meth:`AccessReviewer.check` asks the API server (``authorization.k8s.io/v1`` SubjectAccessReview,
  with the user's name, uid, groups and extra) whether ``user`` may ``verb`` the resource in the
  namespace (and name). The operator needs ``create subjectaccessreviews``: ``op.record_author`` adds it.
- Answers, yes and no, are cached for ``ttl`` seconds (default 10): a Role granted or revoked takes
  effect on the operator's actions within that time. At most ``size`` answers are kept (oldest dropped).
- :class:`Access` says what was asked and the answer; :meth:`Access.describe` is the sentence for a
  condition or an event ("user alice may not get configmaps in namespace prod").
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from kubeloop import clock
from kubeloop.client import Client
from kubeloop.client.resource import Resource

DEFAULT_TTL = 10.0
_SAR = Resource("authorization.k8s.io", "v1", "subjectaccessreviews", "SubjectAccessReview", namespaced=False)


class User(Protocol):
    """Who to ask about (``kubeloop.Author`` is one): what a SubjectAccessReview's spec names."""

    @property
    def username(self) -> str: ...
    @property
    def uid(self) -> str: ...
    @property
    def groups(self) -> tuple[str, ...]: ...
    @property
    def extra(self) -> Mapping[str, tuple[str, ...]]: ...


@dataclass(frozen=True)
class Access:
    """One question and its answer."""

    allowed: bool
    username: str
    verb: str
    group: str
    resource: str
    namespace: str | None
    name: str | None = None
    subresource: str | None = None
    reason: str = ""  # the authorizer's, when it gives one

    @property
    def permission(self) -> str:
        """``get configmaps`` / ``create secrets.example.com/status``, as RBAC spells it."""
        what = f"{self.resource}.{self.group}" if self.group else self.resource
        return f"{self.verb} {what}" + (f"/{self.subresource}" if self.subresource else "")

    def describe(self) -> str:
        """The answer as a sentence naming the user, the permission and where."""
        where = f" in namespace {self.namespace}" if self.namespace else " cluster-wide"
        named = f" named {self.name}" if self.name else ""
        return f"user {self.username} may {'' if self.allowed else 'not '}{self.permission}{named}{where}"


class AccessReviewer:
    """Asks SubjectAccessReviews through ``client``, caching the answers for ``ttl`` seconds."""

    def __init__(self, client: Client, *, ttl: float = DEFAULT_TTL, size: int = 4096) -> None:
        self.client, self.ttl, self.size = client, ttl, size
        self._cache: OrderedDict[tuple[Any, ...], tuple[float, Access]] = OrderedDict()

    async def check(self, user: User, verb: str, resource: Resource, namespace: str | None, *,
                    name: str | None = None, subresource: str | None = None) -> Access:
        """Whether ``user`` may ``verb`` ``resource`` (in ``namespace``, named ``name``)."""
        key = (user.username, user.uid, tuple(user.groups), tuple(sorted(user.extra.items())), verb,
               resource.group, resource.plural, subresource, namespace, name)
        now = clock.monotonic()
        hit = self._cache.get(key)
        if hit is not None and now - hit[0] < self.ttl:
            return hit[1]
        attributes = {k: v for k, v in {"verb": verb, "group": resource.group, "version": resource.version,
                                        "resource": resource.plural, "subresource": subresource,
                                        "namespace": namespace, "name": name}.items() if v is not None}
        spec = {"user": user.username, "uid": user.uid or None, "groups": list(user.groups),
                "extra": {k: list(v) for k, v in user.extra.items()}, "resourceAttributes": attributes}
        body = {"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
                "spec": {k: v for k, v in spec.items() if v not in (None, [], {})}}
        status = (await self.client.create(body, resource=_SAR)).get("status") or {}
        answer = Access(bool(status.get("allowed")) and not status.get("denied"), user.username, verb,
                        resource.group, resource.plural, namespace, name, subresource,
                        str(status.get("reason") or ""))
        self._cache[key] = (now, answer)
        self._cache.move_to_end(key)
        while len(self._cache) > self.size:
            self._cache.popitem(last=False)
        return answer
