"""What a reconcile returns."""

from __future__ import annotations

import math
from dataclasses import dataclass

# An error policy's answer for "stop retrying": an infinite delay. The controller records the failure on
# the object (a Warning Event and a ``Stalled`` condition) and leaves it until the object changes.
GIVE_UP = math.inf


class PermanentError(Exception):
    """Raise from a reconcile (or cleanup) when retrying cannot help: the object is left as it is, with a
    Warning Event and a ``Stalled=True`` condition saying why, and reconciled again only once it changes.
    (Kopf's ``kopf.PermanentError``; an ``error_policy`` gives up the same way by returning ``GIVE_UP``.)"""


@dataclass(frozen=True, slots=True)
class Result:
    """``requeue_after``: reconcile again after that many seconds (a timer, not a failure).
    ``requeue``: reconcile again soon with the key's failure backoff. Returning ``None`` means done."""

    requeue_after: float | None = None
    requeue: bool = False


@dataclass(frozen=True, slots=True)
class Request:
    """Which object to reconcile. ``namespace`` is None for cluster-scoped objects."""

    name: str
    namespace: str | None = None

    @property
    def key(self) -> str:
        """The work-queue key: ``namespace/name``, or ``name`` when cluster-scoped."""
        return f"{self.namespace}/{self.name}" if self.namespace else self.name

    @classmethod
    def from_key(cls, key: str) -> Request:
        """The request for a work-queue key: ``namespace/name``, or ``name`` for a cluster-scoped object."""
        ns, _, name = key.rpartition("/")
        return cls(name, ns or None)

    def __str__(self) -> str:
        return self.key
