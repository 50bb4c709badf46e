"""May this user do that? ``SubjectAccessReview`` answers, asked on a user's behalf, cached briefly.

- :meth:`AccessReviewer.check` asks the API server (``authorization.k8s.io/v1`` SubjectAccessReview,
  with the user's name, uid, groups and extra) whether ``user`` may ``verb`` the resource in the
  namespace (and name). The operator needs ``create subjectaccessreviews``: ``op.record_author`` adds it.
- Answers, yes and no, are cached for ``ttl`` seconds (default 10): a Role granted or revoked takes
  effect on the operator's actions within that time. At most ``size`` answers are kept (oldest dropped).
- A question already on its way is not asked twice: every caller waits for the one answer (ten rules of
  one author reconciled at once, after the cache expired, ask the API server once, not ten times).
- An answer used in the second half of its ``ttl`` is asked again in the background while it is still
  served: an object reconciled at least every ``ttl`` seconds never waits for a review, and no answer
  older than ``ttl`` is ever used.
- :class:`Access` says what was asked and the answer; :meth:`Access.describe` is the sentence for a
  condition or an event ("user alice may not get configmaps in namespace prod").
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
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
        self._asking: dict[tuple[Any, ...], asyncio.Task[Access]] = {}

    async def check(self, user: User, verb: str, resource: Resource, namespace: str | None, *,
                    name: str | None = None, subresource: str | None = None) -> Access:
        """Whether ``user`` may ``verb`` ``resource`` (in ``namespace``, named ``name``)."""
        key = (user.username, user.uid, tuple(user.groups), tuple(sorted(user.extra.items())), verb,
               resource.group, resource.plural, subresource, namespace, name)
        hit = self._cache.get(key)
        age = None if hit is None else clock.monotonic() - hit[0]
        if hit is not None and age is not None and age < self.ttl:
            if age >= self.ttl / 2:
                self._asking_now(key, user, verb, resource, namespace, name, subresource)  # refreshed meanwhile
            return hit[1]
        asking = self._asking_now(key, user, verb, resource, namespace, name, subresource)
        return await asyncio.shield(asking)  # a caller cancelled does not cancel the others' answer

    def _asking_now(self, key: tuple[Any, ...], user: User, verb: str, resource: Resource, namespace: str | None,
                    name: str | None, subresource: str | None) -> asyncio.Task[Access]:
        """The question on its way: the one already asked, else a new one."""
        asking = self._asking.get(key)
        if asking is None or asking.done():  # done: its answer is cached, or it failed (asked anew)
            asking = self._asking[key] = asyncio.create_task(  # shared: in no caller's context
                self._ask(key, user, verb, resource, namespace, name, subresource), context=contextvars.Context())
            asking.add_done_callback(functools.partial(self._answered, key))
        return asking

    def _answered(self, key: tuple[Any, ...], task: asyncio.Task[Access]) -> None:
        if self._asking.get(key) is task:
            del self._asking[key]
        if not task.cancelled():
            task.exception()  # retrieved here: a failure whose callers all left is not logged as unseen

    async def _ask(self, key: tuple[Any, ...], user: User, verb: str, resource: Resource, namespace: str | None,
                   name: str | None, subresource: str | None) -> Access:
        now = clock.monotonic()
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
