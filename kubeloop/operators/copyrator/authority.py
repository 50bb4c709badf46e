"""``--check-author``: a rule acts only as far as the user who wrote it may.

- The rule's author is the signed record the operator's own mutating webhook keeps on it
  (``op.record_author``); a rule without a valid record (written before the webhook, while it was down,
  forged or copied) copies nothing new and keeps its existing copies, with a condition saying how to fix.
- Sources are read only from namespaces where the author may ``get`` the copied kind, and copies are
  written only into namespaces where the author may ``create`` and ``update`` it, as the API server
  answers a SubjectAccessReview for that user (cached for a few seconds). A target the author lost is
  no longer wanted: the rule's copies there are removed, as for any namespace leaving its scope.
- The consent annotations (``boundary.py``) still apply on top: both must allow a copy.
- Rules in trusted namespaces are not screened: only admins write there, and the webhook's
  namespaceSelector leaves out the operator's own namespace (the default trusted one), so their rules
  could never be recorded.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kubeloop import Access, AccessReviewer, Author, AuthorGuard, UnverifiedAuthor, builtin, cooperatively
from kubeloop.operators.copyrator.boundary import Boundary
from kubeloop.operators.copyrator.models import CopyratorRule
from kubeloop.operators.copyrator.plan import Plan, PlanMemo, meta, planning
from kubeloop.operators.copyrator.receiving import Reception

CONDITION = "AuthorAllowed"
REVIEWS_AT_ONCE = 8  # SubjectAccessReviews one reconcile has in flight


@dataclass
class Screened:
    """What the author may do with a rule: the plan within it, and every permission refused."""

    author: Author | None
    desired: Plan | None = None
    refused: list[Access] = field(default_factory=list)
    unverified: UnverifiedAuthor | None = None

    def condition(self) -> tuple[bool, str, str]:
        """(status, reason, message) of the ``AuthorAllowed`` condition."""
        if self.unverified is not None:
            return False, f"Author{self.unverified.reason}", self.unverified.message
        assert self.author is not None
        if self.refused:
            return False, "Forbidden", "; ".join(a.describe() for a in self.refused[:5]) + (
                f" (and {len(self.refused) - 5} more)" if len(self.refused) > 5 else "")
        return True, "Allowed", f"user {self.author.username} may read every source and write every copy"


async def screen(guard: AuthorGuard, reviewer: AccessReviewer, rule: CopyratorRule, raw: Mapping[str, Any],
                 candidates: Sequence[Mapping[str, Any]], namespaces: Sequence[Mapping[str, Any]],
                 boundary: Boundary, reception: Reception | None = None,
                 memo: PlanMemo | None = None) -> Screened:
    """The rule's plan cut down to what its verified author may read and write. ``raw``: the rule as
    the API server sent it (the record signs that, not the model's reading of it)."""
    try:
        author = guard.author_of(raw)
    except UnverifiedAuthor as exc:
        return Screened(None, unverified=exc)
    kind = builtin.SECRET if rule.copy_kind == "Secret" else builtin.CONFIG_MAP
    out = Screened(author)
    readable = await _allowed(reviewer, out, author, ("get",), kind, rule.source_namespaces)
    sources = [c for c in candidates if meta(c)["namespace"] in readable]
    full = await cooperatively(planning(rule, sources, namespaces, boundary, reception, memo))
    targets = sorted({ns for ns, _ in full.copies})
    writable = await _allowed(reviewer, out, author, ("create", "update"), kind, targets)
    # The plan without the namespaces the author may not write to (each namespace is planned apart).
    out.desired = full.without(set(targets) - writable)
    return out


async def _allowed(reviewer: AccessReviewer, out: Screened, author: Author, verbs: tuple[str, ...],
                   kind: Any, namespaces: Iterable[str]) -> set[str]:
    """The namespaces where ``author`` may every one of ``verbs``; the refusals go to ``out.refused``.
    The questions not in the reviewer's cache go out together (a few at a time): on a busy API server
    a rule's first reconcile after the cache expired waits one round trip, not one per question."""
    questions = [(ns, verb) for ns in namespaces for verb in verbs]
    gate = asyncio.Semaphore(REVIEWS_AT_ONCE)

    async def ask(ns: str, verb: str) -> Access:
        async with gate:
            return await reviewer.check(author, verb, kind, ns)

    answers = await asyncio.gather(*(ask(ns, verb) for ns, verb in questions))
    out.refused += [a for a in answers if not a.allowed]
    refused = {ns for (ns, _), a in zip(questions, answers, strict=True) if not a.allowed}
    return {ns for ns, _ in questions} - refused
