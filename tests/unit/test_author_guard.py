"""The author record (signing and verification, pure functions), the guard's admission decisions as the
webhook server calls them, and what ``op.record_author`` adds to an operator (no cluster needed)."""

from __future__ import annotations

import asyncio
import copy
import json
from typing import Any

import pytest

from kubeloop import Author, Operator, UnverifiedAuthor, builtin
from kubeloop.webhooks import Denied
from kubeloop.webhooks.admission import parse_admission
from kubeloop.webhooks.author import annotation_key, content_hash, sign, verify
from kubeloop.webhooks.guard import AuthorGuard, key_secret_name

KEY, OTHER_KEY = b"k" * 32, b"o" * 32
DOMAIN = "example.com"
ANN = annotation_key(DOMAIN)
ALICE = Author("alice", "u-1", ("team-a", "system:authenticated"), {"scopes": ("x",)})


def rule(name: str = "r", namespace: str = "team-a", **content: Any) -> dict[str, Any]:
    return {"apiVersion": "flant.com/v1", "kind": "CopyratorRule",
            "metadata": {"name": name, "namespace": namespace, "annotations": {"keep": "me"}},
            "ruleType": "configmap", "selector": {"copy": "yes"}, "namespace": ["team-a"], **content}


def signed(obj: dict[str, Any], author: Author = ALICE, key: bytes = KEY) -> dict[str, Any]:
    obj = copy.deepcopy(obj)
    obj["metadata"]["annotations"][ANN] = sign(key, obj, author)
    return obj


def reason(obj: dict[str, Any], key: bytes = KEY) -> str:
    with pytest.raises(UnverifiedAuthor) as caught:
        verify(key, obj, DOMAIN)
    assert "kubectl annotate --overwrite copyratorrule" in caught.value.message  # the fix is always named
    return caught.value.reason


def test_a_signed_record_verifies_with_its_user() -> None:
    assert verify(KEY, signed(rule()), DOMAIN) == ALICE


def created_at(obj: dict[str, Any], stamp: str) -> dict[str, Any]:
    obj = copy.deepcopy(obj)
    obj["metadata"]["creationTimestamp"] = stamp
    return obj


def test_a_record_signed_before_its_object_was_created_is_a_replay() -> None:
    # 2026-11-24T10:00:00Z is 1795514400: the record of an object of this name deleted earlier, put on a
    # re-creation while the webhook was not called (no uid exists at mutating CREATE to tell them apart).
    obj = copy.deepcopy(rule())
    obj["metadata"]["annotations"][ANN] = sign(KEY, obj, ALICE, now=1795514400 - 31)
    assert reason(created_at(obj, "2026-11-24T10:00:00Z")) == "SignedBeforeCreation"
    with pytest.raises(UnverifiedAuthor, match="signed 31 s before the object was created"):
        verify(KEY, created_at(obj, "2026-11-24T10:00:00Z"), DOMAIN)


def test_clock_skew_between_webhook_and_api_server_is_tolerated() -> None:
    obj = copy.deepcopy(rule())
    obj["metadata"]["annotations"][ANN] = sign(KEY, obj, ALICE, now=1795514400 - 29)  # webhook clock behind
    assert verify(KEY, created_at(obj, "2026-11-24T10:00:00Z"), DOMAIN) == ALICE
    obj["metadata"]["annotations"][ANN] = sign(KEY, obj, ALICE, now=1795514400 + 3600)  # renewed later
    assert verify(KEY, created_at(obj, "2026-11-24T10:00:00Z"), DOMAIN) == ALICE
    recreated = created_at(obj, "2026-11-24T11:00:05Z")  # 5 s after the renewal
    assert verify(KEY, recreated, DOMAIN) == ALICE  # within the default 30 s: the window left open
    with pytest.raises(UnverifiedAuthor, match="signed 5 s before"):
        verify(KEY, recreated, DOMAIN, max_clock_skew=2)


def test_the_signing_time_is_signed() -> None:
    obj = copy.deepcopy(rule())
    obj["metadata"]["annotations"][ANN] = sign(KEY, obj, ALICE, now=1795514400 - 3600)
    record = json.loads(obj["metadata"]["annotations"][ANN])
    record["at"] = 1795514400  # moved forward to pass as the re-created object's
    obj["metadata"]["annotations"][ANN] = json.dumps(record)
    assert reason(created_at(obj, "2026-11-24T10:00:00Z")) == "BadSignature"


def test_a_version_1_record_is_refused_with_the_renewal() -> None:
    obj = signed(rule())
    record = json.loads(obj["metadata"]["annotations"][ANN])
    del record["at"]
    record["v"] = 1
    obj["metadata"]["annotations"][ANN] = json.dumps(record)
    assert reason(obj) == "Malformed"


def test_metadata_and_status_are_not_content() -> None:
    obj = signed(rule())
    obj["metadata"]["labels"] = {"new": "label"}
    obj["metadata"]["finalizers"] = ["x/y"]
    obj["status"] = {"copyCount": 3}
    assert verify(KEY, obj, DOMAIN) == ALICE


def test_content_hash_ignores_key_order_only() -> None:
    a, b = rule(x={"p": 1, "q": 2}), rule(x={"q": 2, "p": 1})
    assert content_hash(a) == content_hash(b)
    assert content_hash(a) != content_hash(rule(x={"p": 1, "q": 3}))


def test_missing_record() -> None:
    assert reason(rule()) == "Missing"


def test_garbage_record() -> None:
    obj = rule()
    obj["metadata"]["annotations"][ANN] = "alice wrote this"
    assert reason(obj) == "Malformed"


def test_forged_user_fails_the_signature() -> None:
    obj = signed(rule())
    record = json.loads(obj["metadata"]["annotations"][ANN])
    record["user"]["username"] = "cluster-admin"
    record["user"]["groups"] = ["system:masters"]
    obj["metadata"]["annotations"][ANN] = json.dumps(record)
    assert reason(obj) == "BadSignature"


@pytest.mark.parametrize("where", [("name", "other"), ("namespace", "team-b")])
def test_a_record_copied_to_another_object_fails(where: tuple[str, str]) -> None:
    original = signed(rule())
    other = rule(**{})
    other["metadata"][where[0]] = where[1]
    other["metadata"]["annotations"][ANN] = original["metadata"]["annotations"][ANN]
    assert reason(other) == "BadSignature"


def test_a_record_copied_to_another_kind_fails() -> None:
    original = signed(rule())
    other = copy.deepcopy(original)
    other["apiVersion"], other["kind"] = "other.example.com/v1", "CopyratorRule"
    assert reason(other) == "BadSignature"


def test_another_key_fails() -> None:
    assert reason(signed(rule(), key=OTHER_KEY)) == "BadSignature"


def test_content_changed_after_signing() -> None:
    obj = signed(rule())
    obj["namespace"] = ["kube-system"]
    assert reason(obj) == "ContentChanged"


def test_the_key_is_never_in_a_message() -> None:
    obj = signed(rule(), key=b"s3cret-s3cret-s3cret-s3cret-0000")
    with pytest.raises(UnverifiedAuthor) as caught:
        verify(KEY, obj, DOMAIN)
    assert "s3cret" not in str(caught.value)


# --- the webhook --------------------------------------------------------------------------------------


def review(obj: dict[str, Any], old: dict[str, Any] | None = None, user: str = "alice") -> Any:
    return parse_admission({
        "apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
        "request": {"uid": "u1", "operation": "UPDATE" if old else "CREATE", "kind": {"kind": "CopyratorRule"},
                    "resource": {}, "name": obj["metadata"].get("name", ""), "namespace": "team-a",
                    "userInfo": {"username": user, "uid": f"uid-{user}", "groups": ["g"]},
                    "object": obj, "oldObject": old, "dryRun": False}})


@pytest.fixture
def guard() -> AuthorGuard:
    out = AuthorGuard("copyrator", builtin.CONFIG_MAP, DOMAIN)
    out.use_key(KEY)
    return out


def written_by(guard: AuthorGuard, obj: dict[str, Any] | None) -> str:
    assert obj is not None
    return guard.author_of(obj).username


async def test_create_records_the_requester_over_a_forged_value(guard: AuthorGuard) -> None:
    forged = rule()
    forged["metadata"]["annotations"][ANN] = sign(OTHER_KEY, forged, Author("cluster-admin"))
    out = await guard.admit(copy.deepcopy(forged), review(forged, user="mallory"))
    assert written_by(guard, out) == "mallory"
    assert out is not None and out["metadata"]["annotations"]["keep"] == "me"


async def test_update_with_new_content_records_the_new_writer(guard: AuthorGuard) -> None:
    old = signed(rule())
    new = copy.deepcopy(old)
    new["namespace"] = ["team-b"]
    assert written_by(guard, await guard.admit(new, review(new, old, user="bob"))) == "bob"


async def test_update_of_metadata_only_keeps_the_record(guard: AuthorGuard) -> None:
    """The operator's own finalizer and label writes never make it the author."""
    old = signed(rule())
    new = copy.deepcopy(old)
    new["metadata"]["finalizers"] = ["flant.com/copies"]
    assert await guard.admit(new, review(new, old, user="system:serviceaccount:ops:copyrator")) is None


async def test_editing_the_annotation_renews_the_record(guard: AuthorGuard) -> None:
    old = rule()  # created before the webhook: no record
    new = copy.deepcopy(old)
    new["metadata"]["annotations"][ANN] = "renew"
    assert written_by(guard, await guard.admit(new, review(new, old, user="alice"))) == "alice"


async def test_generate_name_is_denied_with_the_field(guard: AuthorGuard) -> None:
    obj = rule(name="")
    with pytest.raises(Denied) as caught:
        await guard.admit(obj, review(obj))
    assert caught.value.field == "metadata.name"


async def test_without_a_key_the_webhook_denies() -> None:
    guard = AuthorGuard("copyrator", builtin.CONFIG_MAP, DOMAIN)
    obj = rule()
    with pytest.raises(Denied) as caught:
        await guard.admit(obj, review(obj))
    assert caught.value.code == 503


# --- op.record_author ----------------------------------------------------------------------------------


def test_record_author_adds_the_webhook_and_permissions_only_when_enabled() -> None:
    op: Operator = Operator("demo", finalizer_domain=DOMAIN)
    enabled = {"on": False}
    op.record_author(builtin.CONFIG_MAP, when=lambda settings: enabled["on"])
    assert not op.hooks
    assert not any(p.resource == "subjectaccessreviews" for p in op.permissions())
    enabled["on"] = True
    assert [h.verb for h in op.hooks.admission] == ["mutating"]
    sar = [p for p in op.permissions() if p.resource == "subjectaccessreviews"]
    assert sar and sar[0].verbs == frozenset({"create"}) and not sar[0].namespaced
    names = {n for p in op.namespaced_permissions() for n in p.names}
    assert key_secret_name("demo") in names


# --- the SubjectAccessReview helper (its client stubbed: the real server answers in the integration test) ---


class _Answers:
    """Stands in for a Client's ``create``: answers SubjectAccessReviews from a set of allowed verbs."""

    def __init__(self, allowed: set[str]) -> None:
        self.allowed, self.asked = allowed, []  # type: ignore[var-annotated]

    async def create(self, body: dict[str, Any], **_: Any) -> dict[str, Any]:
        self.asked.append(body["spec"])
        return {**body, "status": {"allowed": body["spec"]["resourceAttributes"]["verb"] in self.allowed}}


async def test_access_reviews_ask_as_the_user_and_are_cached(monkeypatch: pytest.MonkeyPatch) -> None:
    from kubeloop import AccessReviewer
    from kubeloop.helpers import access

    now = [100.0]
    monkeypatch.setattr(access.clock, "monotonic", lambda: now[0])
    client = _Answers({"get"})
    reviewer = AccessReviewer(client, ttl=10)  # type: ignore[arg-type]
    answer = await reviewer.check(ALICE, "create", builtin.CONFIG_MAP, "team-b")
    assert not answer.allowed
    assert answer.describe() == "user alice may not create configmaps in namespace team-b"
    assert client.asked[0] == {"user": "alice", "uid": "u-1", "groups": ["team-a", "system:authenticated"],
                               "extra": {"scopes": ["x"]}, "resourceAttributes": {
                                   "verb": "create", "group": "", "version": "v1", "resource": "configmaps",
                                   "namespace": "team-b"}}
    assert (await reviewer.check(ALICE, "get", builtin.CONFIG_MAP, "team-b")).allowed
    await reviewer.check(ALICE, "create", builtin.CONFIG_MAP, "team-b")
    assert len(client.asked) == 2  # the repeated question came from the cache
    now[0] += 11
    await reviewer.check(ALICE, "create", builtin.CONFIG_MAP, "team-b")
    assert len(client.asked) == 3  # asked again once the answer was older than the TTL


async def test_the_same_question_asked_at_once_goes_to_the_api_server_once() -> None:
    """Ten rules of one author reconciled together after the cache expired: one SubjectAccessReview per
    question, not one per rule; a caller cancelled while waiting does not take the answer from the others,
    and a failed question fails every caller waiting for it, then is asked again."""
    from kubeloop import AccessReviewer

    class Slow(_Answers):
        def __init__(self) -> None:
            super().__init__({"get"})
            self.release = asyncio.Event()
            self.fail = False

        async def create(self, body: dict[str, Any], **kw: Any) -> dict[str, Any]:
            await self.release.wait()
            if self.fail:
                raise ConnectionResetError("lost")
            return await super().create(body, **kw)

    client = Slow()
    reviewer = AccessReviewer(client, ttl=10)  # type: ignore[arg-type]
    callers = [asyncio.create_task(reviewer.check(ALICE, "get", builtin.CONFIG_MAP, "team-a")) for _ in range(10)]
    other = asyncio.create_task(reviewer.check(ALICE, "get", builtin.CONFIG_MAP, "team-b"))
    await asyncio.sleep(0.01)
    callers[0].cancel()
    client.release.set()
    answers = await asyncio.gather(*callers[1:], other)
    assert all(a.allowed for a in answers)
    assert sorted(s["resourceAttributes"]["namespace"] for s in client.asked) == ["team-a", "team-b"]

    client.fail, client.release = True, asyncio.Event()
    failing = [asyncio.create_task(reviewer.check(ALICE, "get", builtin.CONFIG_MAP, "team-c")) for _ in range(3)]
    await asyncio.sleep(0.01)
    client.release.set()
    results = await asyncio.gather(*failing, return_exceptions=True)
    assert all(isinstance(r, ConnectionResetError) for r in results)
    client.fail = False
    assert (await reviewer.check(ALICE, "get", builtin.CONFIG_MAP, "team-c")).allowed  # asked anew


async def test_an_answer_in_the_second_half_of_its_ttl_is_served_and_asked_again_meanwhile(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from kubeloop import AccessReviewer
    from kubeloop.helpers import access

    now = [100.0]
    monkeypatch.setattr(access.clock, "monotonic", lambda: now[0])
    client = _Answers({"get"})
    reviewer = AccessReviewer(client, ttl=10)  # type: ignore[arg-type]
    await reviewer.check(ALICE, "get", builtin.CONFIG_MAP, "team-a")
    now[0] += 4
    await reviewer.check(ALICE, "get", builtin.CONFIG_MAP, "team-a")
    await asyncio.sleep(0)
    assert len(client.asked) == 1, "young: from the cache, nothing asked"
    now[0] += 2  # 6 s old: served at once, and asked again in the background
    client.allowed = set()  # revoked meanwhile
    assert (await reviewer.check(ALICE, "get", builtin.CONFIG_MAP, "team-a")).allowed
    await asyncio.sleep(0)
    assert len(client.asked) == 2
    assert not (await reviewer.check(ALICE, "get", builtin.CONFIG_MAP, "team-a")).allowed, "the fresh answer"
    now[0] += 11  # older than the TTL: never served, asked and waited for
    client.allowed = {"get"}
    assert (await reviewer.check(ALICE, "get", builtin.CONFIG_MAP, "team-a")).allowed
    assert len(client.asked) == 3
