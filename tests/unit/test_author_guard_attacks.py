"""A hostile tenant against the guard's admission decisions (no cluster): which UPDATEs may move the
authorship of unchanged content. The same attacks on the real control plane are in
``tests/integration/test_author_guard_attacks.py``."""

from __future__ import annotations

import copy
import json
from typing import Any

from kubeloop import Author
from kubeloop.webhooks.guard import AuthorGuard
from tests.unit.test_author_guard import ANN, OTHER_KEY, guard, review, rule, signed, written_by

__all__ = ["guard"]  # the fixture, imported to be used here
ADMIN = "system:admin"


def tenant_rule() -> dict[str, Any]:
    return signed(rule(), Author("tenant"))


async def test_removing_the_record_puts_it_back_with_a_warning(guard: AuthorGuard) -> None:
    """An SSA under a squatted manager name, or a 3-way merge, removes the annotation in an admin's name."""
    old = tenant_rule()
    new = copy.deepcopy(old)
    del new["metadata"]["annotations"][ANN]
    new["metadata"]["labels"] = {"team": "a"}
    req = review(new, old, user=ADMIN)
    out = await guard.admit(new, req)
    assert written_by(guard, out) == "tenant"
    assert out is not None and out["metadata"]["labels"] == {"team": "a"}  # the admin's own change stays
    assert req.warnings and "renew" in req.warnings[0] and ANN in req.warnings[0]


async def test_writing_back_a_stale_record_is_not_a_renewal(guard: AuthorGuard) -> None:
    """A privileged read-modify-write of the annotations, from a read taken before the tenant's renewal."""
    stale = signed(rule(), Author("tenant-before"))
    old = tenant_rule()
    new = copy.deepcopy(old)
    new["metadata"]["annotations"][ANN] = stale["metadata"]["annotations"][ANN]
    out = await guard.admit(new, review(new, old, user=ADMIN))
    assert out is not None and out["metadata"]["annotations"][ANN] == old["metadata"]["annotations"][ANN]


async def test_a_record_of_other_content_or_another_key_written_back_is_not_a_renewal(guard: AuthorGuard) -> None:
    old = tenant_rule()
    for value in (signed(rule(selector={"other": "x"}), Author(ADMIN))["metadata"]["annotations"][ANN],
                  signed(rule(), Author(ADMIN), key=OTHER_KEY)["metadata"]["annotations"][ANN]):
        new = copy.deepcopy(old)
        new["metadata"]["annotations"][ANN] = value
        assert written_by(guard, await guard.admit(new, review(new, old, user="mallory"))) == "tenant"


async def test_without_a_stored_record_a_written_one_is_removed(guard: AuthorGuard) -> None:
    """An object created before the webhook stays unrecorded: a replayed record is taken out again."""
    old = rule()
    new = signed(old, Author(ADMIN))
    out = await guard.admit(new, review(new, old, user="mallory"))
    assert out is not None and ANN not in out["metadata"]["annotations"]
    assert out["metadata"]["annotations"]["keep"] == "me"


async def test_renewing_still_records_the_renewer(guard: AuthorGuard) -> None:
    """Any value that is not a record is a renewal, whatever its spelling."""
    old = tenant_rule()
    for value in ("renew", "x", json.dumps({"user": "me"}), "[1]"):
        new = copy.deepcopy(old)
        new["metadata"]["annotations"][ANN] = value
        assert written_by(guard, await guard.admit(new, review(new, old, user="alice"))) == "alice"


async def test_new_content_is_recorded_whatever_the_annotation_holds(guard: AuthorGuard) -> None:
    old = tenant_rule()
    new = copy.deepcopy(old)
    new["namespace"] = ["team-b"]
    del new["metadata"]["annotations"][ANN]
    assert written_by(guard, await guard.admit(new, review(new, old, user="bob"))) == "bob"
