"""A hostile tenant against the tenancy guard, on the real control plane.

The tenant is ``test_author_guard``'s: a ServiceAccount that may create/update/patch/delete
CopyratorRules and ConfigMaps in namespace a only. Each test is one attack and says whether the guard
held; ``xfail(strict=True)`` marks a hole that is not fixed (its reason says why, and
docs/howto/webhooks.md "Tenancy guard" lists it as a limit). The record is checked with the test's own
copy of the key: it is what copyrator's ``--check-author`` trusts (``test_author_guard`` shows it
acting on it).
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import copy
import json
import secrets
import tempfile
import time
from pathlib import Path
from typing import Any

import aiohttp
import pytest
import yaml

from kubeloop import AccessReviewer, Author, Operator, UnverifiedAuthor, builtin
from kubeloop.client import ApiError, Client, Forbidden, NotFound
from kubeloop.testing import wait_for, wait_for_deletion
from kubeloop.testing.operator import run_operator
from kubeloop.testing.session import current
from kubeloop.webhooks.author import verify
from tests.integration.polling import eventually
from tests.integration.test_author_guard import AUTHOR, KEY, RULES, Setup, rule, setup
from tests.integration.test_op_copyrator_security import configmap

__all__ = ["setup"]  # the module-scoped fixture: this module gets its own namespaces and operator
DOMAIN = "copyrator.flant.com"
CONFIG = f"copyrator-mutating{current().suffix}"  # run_operator names it for this test session
SIZE = 1_450_000  # bytes of content, close to the 1.5 MiB etcd takes per object by default
ADMIN_TOOL = "admin-labeler"  # a privileged tool's field manager, whose name the tenant can use too


class StillBroken(AssertionError):
    """The attack still works: what an ``xfail(raises=StillBroken)`` test expects, and nothing else."""


def author(obj: dict[str, Any]) -> str:
    """Who the operator would act as for ``obj`` (``UnverifiedAuthor`` if nobody)."""
    return verify(KEY, obj, DOMAIN).username


def quiet_rule(name: str, ns: str, **extra: Any) -> dict[str, Any]:
    """A rule whose selector matches nothing: the attacks are on its record, not on copies."""
    body = rule(name, ns, f"none-{name}", [ns], [ns])
    body.update(extra)
    return body


async def labelled_by_admin_tool(s: Setup, name: str) -> dict[str, Any]:
    """The privileged tool's routine write: server-side apply of a label, nothing else."""
    return await s.admin.apply({"apiVersion": "flant.com/v1", "kind": "CopyratorRule",
                                "metadata": {"name": name, "namespace": s.a, "labels": {"team": "a"}}},
                               field_manager=ADMIN_TOOL, force=False, resource=RULES)


# --- records cannot be carried, forged or requested ---------------------------------------------------


async def test_the_record_is_the_api_servers_user_not_the_tenants_claim(setup: Setup) -> None:
    """Groups and extra forged in the annotation are replaced by what the API server authenticated."""
    s = setup
    forged = json.dumps({"v": 1, "user": {"username": "admin", "groups": ["system:masters"], "extra": {}},
                         "content": "sha256:0", "sig": "x"})
    body = quiet_rule("claims", s.a)
    body["metadata"]["annotations"] = {AUTHOR: forged}
    stored = await s.tenant.create(body)
    whoami = (await s.tenant.create({"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}))
    user = whoami["status"]["userInfo"]
    record = json.loads(stored["metadata"]["annotations"][AUTHOR])["user"]
    assert verify(KEY, stored, DOMAIN) == Author(user["username"], user.get("uid", ""), tuple(user["groups"]),
                                                 {k: tuple(v) for k, v in (user.get("extra") or {}).items()})
    assert record["username"] == s.tenant_user and "system:masters" not in record["groups"]


async def test_a_record_replayed_on_a_recreated_object_is_replaced(setup: Setup) -> None:
    """The admin's rule in the tenant's namespace, deleted and re-created by the tenant with the same
    name, content and the admin's annotation: the CREATE is recorded as the tenant's."""
    s = setup
    admins = await s.admin.create(quiet_rule("replayed", s.a))
    assert author(admins) != s.tenant_user
    await s.tenant.delete(RULES, "replayed", s.a)
    await wait_for_deletion(s.admin, RULES, "replayed", s.a, timeout=30)
    again = quiet_rule("replayed", s.a)
    again["metadata"]["annotations"] = {AUTHOR: admins["metadata"]["annotations"][AUTHOR]}
    stored = await s.tenant.create(again)
    assert author(stored) == s.tenant_user


async def test_a_record_copied_to_another_name_is_replaced(setup: Setup) -> None:
    s = setup
    first = await s.tenant.create(quiet_rule("original-t", s.a))
    twin = quiet_rule("twin-t", s.a)
    twin["selector"] = first["selector"]
    twin["metadata"]["annotations"] = {AUTHOR: first["metadata"]["annotations"][AUTHOR]}
    stored = await s.tenant.create(twin)
    assert stored["metadata"]["annotations"][AUTHOR] != first["metadata"]["annotations"][AUTHOR]
    assert author(stored) == s.tenant_user


async def test_a_manifest_without_a_namespace_is_recorded_for_the_one_it_lands_in(setup: Setup) -> None:
    """``kubectl apply -n team -f rule.yaml`` sends no ``metadata.namespace``: the API server fills it in
    before admission, so the record signs the namespace the object is stored in."""
    s = setup
    body = quiet_rule("no-ns", s.a)
    del body["metadata"]["namespace"]
    await s.tenant.create(body, s.a)
    assert author(await s.admin.get(RULES, "no-ns", s.a)) == s.tenant_user


async def test_a_dry_run_gives_the_tenant_only_its_own_record(setup: Setup) -> None:
    """A dry run's answer carries a record, but one naming the requester, for an object not stored."""
    s = setup
    answer = await s.tenant.create(quiet_rule("dry", s.a), dry_run=True)
    assert author(answer) == s.tenant_user
    with pytest.raises(NotFound):
        await s.admin.get(RULES, "dry", s.a)


async def test_the_tenant_cannot_impersonate(kube_cluster: Any, setup: Setup) -> None:
    """Impersonation headers need the impersonate verb, which the tenant lacks: the API server refuses
    before any webhook runs, so no record can name a user the tenant only claims to be."""
    s = setup
    with tempfile.TemporaryDirectory() as tmp:
        path = await asyncio.to_thread(kube_cluster.service_account_kubeconfig, s.a, "tenant",
                                       Path(tmp) / "kubeconfig")
        config = yaml.safe_load(path.read_text())
    server, token = config["clusters"][0]["cluster"]["server"], config["users"][0]["user"]["token"]
    url = f"{server}/apis/flant.com/v1/namespaces/{s.a}/copyrators"
    for claim in ({"Impersonate-User": "admin"},
                  {"Impersonate-User": s.tenant_user, "Impersonate-Group": "system:masters"},
                  {"Impersonate-User": s.tenant_user, "Impersonate-Extra-Scopes": "admin"}):
        headers = {"Authorization": f"Bearer {token}", **claim}
        async with aiohttp.ClientSession() as http, http.post(
                url, json=quiet_rule("impersonated", s.a), headers=headers, ssl=False) as resp:
            assert resp.status == 403, claim
            assert "cannot impersonate" in (await resp.json())["message"], claim
    with pytest.raises(NotFound):
        await s.admin.get(RULES, "impersonated", s.a)


async def test_impersonation_records_the_impersonated_user_and_groups(kube_cluster: Any, setup: Setup) -> None:
    """Documented: one who may impersonate (here the admin) is recorded as the user and groups claimed,
    and access reviews honour those groups as given: nothing in Kubernetes says whether the group is
    real or still held, so a record keeps its groups until the content is written again."""
    s = setup
    group = f"team-admins-{s.a}"
    await s.admin.create({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
                          "metadata": {"name": "team-admins", "namespace": s.a}, "rules": [
                              {"apiGroups": ["flant.com"], "resources": ["copyrators"], "verbs": ["create"]},
                              {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["create"]}]})
    await s.admin.create({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
                          "metadata": {"name": "team-admins", "namespace": s.a},
                          "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role",
                                      "name": "team-admins"},
                          "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": group}]})
    body = json.dumps(quiet_rule("impersonated-alice", s.a))

    def create_as_alice() -> Any:
        return kube_cluster.kubectl("--as", "alice", "--as-group", group, "create", "--validate=false",
                                    "-o", "json", "-f", "-", input=body, check=False)

    errors: list[str] = []

    async def created() -> bool:
        proc = await asyncio.to_thread(create_as_alice)
        errors.append(proc.stderr)
        return proc.returncode == 0
    try:
        await eventually(created, "alice's rule, as the group's binding reaches the authorizer")
    except AssertionError as exc:
        raise AssertionError(f"{exc}; kubectl said: {errors[-1]}") from None
    recorded = verify(KEY, await s.admin.get(RULES, "impersonated-alice", s.a), DOMAIN)
    assert recorded.username == "alice" and group in recorded.groups
    reviewer = AccessReviewer(s.admin, ttl=0)
    assert (await reviewer.check(recorded, "create", builtin.CONFIG_MAP, s.a)).allowed
    assert not (await reviewer.check(Author("alice"), "create", builtin.CONFIG_MAP, s.a)).allowed


async def test_huge_and_unusual_values_are_overwritten_and_verify(setup: Setup) -> None:
    """A 200 kB forged record is replaced; unusual unicode in the content hashes the same in the webhook
    and when read back (the API server re-encodes JSON; the hash must survive that)."""
    s = setup
    odd = {"src": "é😀\u2028<>&\"\\ \u0000\ud7ff\ue000 ١٢٣"}
    body = quiet_rule("unicode", s.a, selector=odd)
    body["metadata"]["annotations"] = {AUTHOR: "x" * 200_000, "note": "ß" * 20_000}
    stored = await s.tenant.create(body)
    assert len(stored["metadata"]["annotations"][AUTHOR]) < 2000
    assert stored["selector"] == odd
    assert author(await s.admin.get(RULES, "unicode", s.a)) == s.tenant_user


async def test_an_object_near_the_size_limit_is_recorded_updated_and_deleted(setup: Setup) -> None:
    """An UPDATE's review carries the object twice (new and old): the webhook must take that, or a huge
    object could be neither changed nor released from the operator's finalizer (failurePolicy Fail)."""
    s = setup
    # The schema bounds every typed list; the untyped ``namespace`` field (a name or a list) is bounded by
    # the operator only (the rule is then invalid), so it is what still makes an object this large.
    huge = quiet_rule("huge", s.a, namespace=[s.a, *(f"{i:06d}-" + "x" * 57 for i in range(SIZE // 66))])
    stored = await s.tenant.create(huge)
    assert author(stored) == s.tenant_user
    await wait_for(s.admin, RULES, "huge", s.a, lambda o: bool(o["metadata"].get("finalizers")), timeout=30)
    labelled = await s.admin.patch(RULES, "huge", {"metadata": {"labels": {"big": "yes"}}}, s.a)
    assert author(labelled) == s.tenant_user
    await s.tenant.delete(RULES, "huge", s.a)
    await wait_for_deletion(s.admin, RULES, "huge", s.a, timeout=60)


async def test_an_update_of_an_escaped_built_in_object_reaches_the_webhook(
        kube_cluster: Any, kube_client: Client, namespace: str) -> None:
    """The API server sends JSON with ``<`` escaped as six bytes, and a review carries the object twice:
    a ConfigMap of 400 kB of ``<`` (1 MiB is its limit) makes a 5 MB review. A webhook that refused it
    (with failurePolicy Fail) would leave the object unchangeable, its finalizers never removed."""
    probe = Operator("size-probe")
    guard = probe.record_author(builtin.CONFIG_MAP)
    async with run_operator(kube_cluster, kube_client, probe, namespace):
        created = await kube_client.create(configmap("escaped", namespace, {"k": "<" * 400_000}, {}))
        labelled = await kube_client.patch("configmaps", "escaped", {"metadata": {"labels": {"a": "b"}}}, namespace)
        assert labelled["metadata"]["labels"] == {"a": "b"}
        assert guard.author_of(labelled) == guard.author_of(created)


# --- metadata writes by others must not move authorship ----------------------------------------------


async def test_metadata_writes_by_an_admin_keep_the_tenants_record(setup: Setup) -> None:
    """Labels, other annotations, owner references and finalizers are not content: whoever writes them,
    the tenant stays the author (and the operator's decisions read the content only)."""
    s = setup
    created = await s.tenant.create(quiet_rule("meta", s.a))
    owner = await s.admin.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "owner",
                                  "namespace": s.a}})
    await s.admin.patch(RULES, "meta", {"metadata": {
        "labels": {"x": "y"}, "annotations": {"other": "z"},
        "ownerReferences": [{"apiVersion": "v1", "kind": "ConfigMap", "name": "owner",
                             "uid": owner["metadata"]["uid"]}]}}, s.a)
    stored = await s.admin.get(RULES, "meta", s.a)
    assert stored["metadata"]["annotations"][AUTHOR] == created["metadata"]["annotations"][AUTHOR]
    assert author(stored) == s.tenant_user


async def test_the_status_subresource_is_no_way_to_change_content(setup: Setup) -> None:
    """The webhook is not called for ``/status``; the API server keeps everything but status there, so
    the content (and the record) cannot change through it. The tenant may not write it at all."""
    s = setup
    created = await s.tenant.create(quiet_rule("status", s.a))
    sneaky = {"selector": {"src": "everything"}, "namespace": [s.d], "status": {"sourceCount": 99}}
    with pytest.raises(Forbidden):
        await s.tenant.patch(RULES, "status", sneaky, s.a, subresource="status")
    written = await s.admin.patch(RULES, "status", sneaky, s.a, subresource="status")
    assert written["selector"] == created["selector"] and written["namespace"] == created["namespace"]
    assert author(written) == s.tenant_user


async def test_an_admin_who_edits_the_content_becomes_its_author(setup: Setup) -> None:
    """Documented: the last writer of the content is the author, so an admin's edit lends the admin's
    authority to the object; the tenant's next edit of the content takes it back."""
    s = setup
    await s.tenant.create(quiet_rule("edited", s.a))
    assert author(await s.admin.patch(RULES, "edited", {"excludedNamespaces": [s.b]}, s.a)) != s.tenant_user
    assert author(await s.tenant.patch(RULES, "edited", {"excludedNamespaces": []}, s.a)) == s.tenant_user


async def test_a_json_patch_removing_the_record_keeps_it(setup: Setup) -> None:
    """The tenant strips the admin's record from unchanged content: the record is put back (the admin
    still wrote that content), not re-signed as the tenant."""
    s = setup
    await s.admin.create(quiet_rule("stripped", s.a))
    await s.tenant.patch(RULES, "stripped", [{"op": "remove", "path": f"/metadata/annotations/{_pointer(AUTHOR)}"}],
                         s.a, type="json")
    assert author(await s.admin.get(RULES, "stripped", s.a)) != s.tenant_user


async def test_an_admins_label_apply_cannot_be_steered_into_signing(setup: Setup) -> None:
    """Broke, fixed. The tenant applies the annotation under the admin tool's field-manager name, so the
    tool's next apply (a label) removes it in the admin's name; before the fix that re-signed the
    tenant's content as the admin."""
    s = setup
    await s.tenant.apply(quiet_rule("steered", s.a), field_manager="tenant", force=False, resource=RULES)
    await s.tenant.apply({"apiVersion": "flant.com/v1", "kind": "CopyratorRule", "metadata": {
        "name": "steered", "namespace": s.a, "annotations": {AUTHOR: "mine"}}},
        field_manager=ADMIN_TOOL, force=False, resource=RULES)
    labelled = await labelled_by_admin_tool(s, "steered")
    assert labelled["metadata"]["labels"] == {"team": "a"}  # the admin's write went through
    assert author(labelled) == s.tenant_user


async def test_a_stale_record_written_back_by_an_admin_is_not_a_renewal(setup: Setup) -> None:
    """Broke, fixed. A privileged read-modify-write of the annotations, from a read taken before the
    tenant changed the content, wrote the admin's old record back; that re-signed the tenant's new
    content as the admin."""
    s = setup
    stale = (await s.admin.create(quiet_rule("stale", s.a)))["metadata"]["annotations"]
    await s.tenant.patch(RULES, "stale", {"excludedNamespaces": [s.b]}, s.a)
    await s.admin.patch(RULES, "stale", {"metadata": {"annotations": {**stale, "touched": "yes"}}}, s.a)
    stored = await s.admin.get(RULES, "stale", s.a)
    assert stored["metadata"]["annotations"]["touched"] == "yes"
    assert author(stored) == s.tenant_user


@pytest.mark.xfail(strict=True, raises=StillBroken, reason=(
    "not fixed: server-side apply removes fields the applier's field manager "
    "owned, and field-manager names are not authenticated; the webhook cannot tell that removal "
    "from an intended one, so the admin becomes the author of what the tenant left. Documented "
    "limit (docs/howto/webhooks.md, Tenancy guard)"))
async def test_an_admins_label_apply_cannot_remove_content_in_its_name(setup: Setup) -> None:
    s = setup
    await s.tenant.apply(quiet_rule("narrowed", s.a), field_manager="tenant", force=False, resource=RULES)
    await s.tenant.apply({"apiVersion": "flant.com/v1", "kind": "CopyratorRule", "metadata": {
        "name": "narrowed", "namespace": s.a}, "excludedNamespaces": [s.b]},
        field_manager=ADMIN_TOOL, force=False, resource=RULES)
    labelled = await labelled_by_admin_tool(s, "narrowed")
    assert not labelled.get("excludedNamespaces")  # the tenant's restriction went, in the admin's name
    if author(labelled) != s.tenant_user:
        raise StillBroken(f"{author(labelled)} is now the author of the tenant's rule")


# --- access reviews -----------------------------------------------------------------------------------


async def test_a_revoked_binding_acts_until_the_cached_answer_expires(setup: Setup) -> None:
    """Documented: answers are cached per user, verb, resource, namespace and name for ``ttl`` seconds."""
    s = setup
    tenant = verify(KEY, await s.admin.get(RULES, "claims", s.a), DOMAIN)
    await s.admin.create({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
                          "metadata": {"name": "probe", "namespace": s.b},
                          "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]}]})
    binding = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
               "metadata": {"name": "probe", "namespace": s.b},
               "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "probe"},
               "subjects": [{"kind": "ServiceAccount", "name": "tenant", "namespace": s.a}]}
    await s.admin.create(binding)
    fresh, ttl = AccessReviewer(s.admin, ttl=0), 6.0
    cached = AccessReviewer(s.admin, ttl=ttl)

    async def answer(allowed: bool) -> bool:
        return (await fresh.check(tenant, "get", builtin.CONFIG_MAP, s.b)).allowed is allowed
    await eventually(lambda: answer(True), "the binding reaching the authorizer")
    assert (await cached.check(tenant, "get", builtin.CONFIG_MAP, s.b)).allowed
    asked = time.monotonic()
    await s.admin.delete("rolebindings.rbac.authorization.k8s.io", "probe", s.b)
    await eventually(lambda: answer(False), "the revocation reaching the authorizer")
    assert time.monotonic() - asked < ttl, "the revocation took longer than the TTL: the cache cannot be seen"
    assert (await cached.check(tenant, "get", builtin.CONFIG_MAP, s.b)).allowed  # the cached answer
    assert not (await cached.check(tenant, "get", builtin.CONFIG_MAP, s.d)).allowed  # not another namespace's
    assert not (await cached.check(tenant, "list", builtin.CONFIG_MAP, s.b)).allowed  # nor another verb's
    await asyncio.sleep(ttl - (time.monotonic() - asked) + 0.1)
    assert not (await cached.check(tenant, "get", builtin.CONFIG_MAP, s.b)).allowed


# --- the webhook itself -------------------------------------------------------------------------------


async def test_a_webhook_that_does_not_answer_refuses_the_write(setup: Setup) -> None:
    """The record's webhook pointed at a listener that never answers: the API server's timeout and the
    configuration's failurePolicy Fail refuse the tenant's write; nothing is stored unrecorded."""
    s = setup
    server = await asyncio.start_server(_silent, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    index, url = await _guard_webhook(s.admin)
    try:
        await _set_url(s.admin, index, f"https://127.0.0.1:{port}/silent")

        async def refused() -> bool:
            name = f"timeout-{secrets.token_hex(2)}"
            try:
                await s.tenant.create(quiet_rule(name, s.a))
            except ApiError as exc:
                return "silent" in str(exc) or "deadline" in str(exc) or "timeout" in str(exc).lower()
            await s.admin.delete(RULES, name, s.a)  # the new URL was not in use yet
            return False
        await eventually(refused, "a write refused by the silent webhook", timeout=60)
        names = [r["metadata"]["name"] for r in (await s.admin.list(RULES, s.a))["items"]]
        assert not [n for n in names if n.startswith("timeout-")]
    finally:
        await _set_url(s.admin, index, url)
        server.close()
    await _until_recorded(s)


async def _silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    with contextlib.suppress(Exception):
        await reader.read()  # never answers; the API server gives up
    writer.close()


@pytest.mark.xfail(strict=True, raises=StillBroken, reason=(
    "not fixed: the webhook cannot authenticate its caller (the API server "
    "presents no identity by default), so anyone who reaches it gets a record signed for any "
    "user; such a record is only stored while the webhook is not called. Documented limit: "
    "restrict ingress to the webhook port, rotate the key after any gap"))
async def test_the_webhook_signs_only_for_the_api_server(setup: Setup) -> None:
    s = setup
    _, url = await _guard_webhook(s.admin)
    obj = quiet_rule("oracle", s.a)
    review = {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {
        "uid": "forged", "operation": "CREATE", "kind": {"group": "flant.com", "version": "v1",
                                                          "kind": "CopyratorRule"},
        "resource": {"group": "flant.com", "version": "v1", "resource": "copyrators"},
        "name": "oracle", "namespace": s.a, "userInfo": {"username": "admin", "groups": ["system:masters"]},
        "object": obj, "dryRun": False}}
    async with aiohttp.ClientSession() as http, http.post(url, json=review, ssl=False) as resp:
        answer = await resp.json() if resp.status == 200 else {}
    patch = (answer.get("response") or {}).get("patch")
    if patch:
        with contextlib.suppress(UnverifiedAuthor):
            raise StillBroken(f"a record for {author(_patched(obj, json.loads(base64.b64decode(patch))))}")


async def test_a_record_replayed_during_a_webhook_gap_is_refused(setup: Setup) -> None:
    """metadata.uid does not exist when the record is made, so a record of a deleted object would verify on
    a re-creation with the same name and content written while the webhook is not called; the signing
    time, checked against the new object's creationTimestamp, refuses it. The test uses a 2 s tolerance
    (the default is 30 s of clock skew) and replays after more than that."""
    s = setup
    skew = 2.0
    admins = await s.admin.create(quiet_rule("gap", s.a))
    saved = (await s.admin.get("mutatingwebhookconfigurations.admissionregistration.k8s.io", CONFIG))
    await s.admin.delete(RULES, "gap", s.a)
    await wait_for_deletion(s.admin, RULES, "gap", s.a, timeout=30)
    await s.admin.delete("mutatingwebhookconfigurations.admissionregistration.k8s.io", CONFIG)
    signed_at = json.loads(admins["metadata"]["annotations"][AUTHOR])["at"]
    await asyncio.sleep(max(0.0, signed_at + skew + 1.5 - time.time()))
    try:
        replay = quiet_rule("gap", s.a)
        replay["metadata"]["annotations"] = {AUTHOR: admins["metadata"]["annotations"][AUTHOR]}

        async def stored_unrecorded() -> bool:
            stored = await s.tenant.create(replay)
            if stored["metadata"]["annotations"][AUTHOR] == admins["metadata"]["annotations"][AUTHOR]:
                return True
            await s.admin.delete(RULES, "gap", s.a)  # the webhook was still called; try again
            await wait_for_deletion(s.admin, RULES, "gap", s.a, timeout=30)
            return False
        await eventually(stored_unrecorded, "a write while the webhook is not called")
    finally:
        await s.admin.create(_fresh(saved))
        await _until_recorded(s)
    with pytest.raises(UnverifiedAuthor) as refused:
        verify(KEY, await s.admin.get(RULES, "gap", s.a), DOMAIN, max_clock_skew=skew)
    assert refused.value.reason == "SignedBeforeCreation"


# --- helpers --------------------------------------------------------------------------------------------


async def _gone(client: Client, name: str, ns: str) -> bool:
    try:
        await client.get(RULES, name, ns)
    except NotFound:
        return True
    return False


def _pointer(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


def _patched(obj: dict[str, Any], ops: list[dict[str, Any]]) -> dict[str, Any]:
    from kubeloop.webhooks.patch import apply

    return apply(copy.deepcopy(obj), ops)


def _fresh(obj: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(obj)
    out["metadata"] = {k: v for k, v in out["metadata"].items()
                       if k in ("name", "labels", "annotations")}
    return out


async def _guard_webhook(admin: Client) -> tuple[int, str]:
    """The index and URL of the record's webhook in the operator's configuration."""
    config = await admin.get("mutatingwebhookconfigurations.admissionregistration.k8s.io", CONFIG)
    for index, hook in enumerate(config["webhooks"]):
        if "copyrators" in hook["name"]:
            return index, hook["clientConfig"]["url"]
    raise AssertionError(f"no copyrators webhook in {CONFIG}: {[h['name'] for h in config['webhooks']]}")


async def _set_url(admin: Client, index: int, url: str) -> None:
    await admin.patch("mutatingwebhookconfigurations.admissionregistration.k8s.io", CONFIG,
                      [{"op": "replace", "path": f"/webhooks/{index}/clientConfig/url", "value": url}], type="json")


async def _until_recorded(s: Setup) -> None:
    """Waits until the API server calls the record's webhook again (a dry run comes back recorded)."""
    async def recorded() -> bool:
        try:
            answer = await s.tenant.create(quiet_rule("probe", s.a), dry_run=True)
        except (ApiError, Forbidden):
            return False
        return AUTHOR in (answer["metadata"].get("annotations") or {})
    await eventually(recorded, "the record's webhook called again", timeout=30)

