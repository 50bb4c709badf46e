"""copyrator on the real control plane, under its generated RBAC.

The cluster is shared with other tests that create namespaces concurrently, and copyrator writes into
*every* namespace in scope: every rule here is limited to namespaces carrying a label unique to the
test (``namespaceSelector``), and assertions look at the test's own namespaces only.
"""

from __future__ import annotations

import base64
import contextlib
import secrets
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
import pytest_asyncio
from prometheus_client import generate_latest

from kubeloop.client import Client, Invalid, NotFound
from kubeloop.manager import ManagerOptions
from kubeloop.metrics import REGISTRY
from kubeloop.operators.copyrator import build_operator, operator
from kubeloop.operators.copyrator.plan import (
    CONSENT_ANNOTATION,
    HASH_ANNOTATION,
    RULE_ANNOTATION,
    TAKEOVER_ANNOTATION,
)
from kubeloop.operators.copyrator.settings import CopyratorSettings
from kubeloop.testing import wait_for, wait_for_deletion, wait_for_events
from kubeloop.testing.operator import RunningOperator, install_crds, run_operator

RULES = "copyrators.flant.com"
SCOPE_LABEL = "copyrator-test"


# --- helpers -------------------------------------------------------------------------------------


class Scope:
    """Namespaces of one test, all labelled with its token (the rules' namespaceSelector)."""

    def __init__(self, client: Client, source: str) -> None:
        self.client, self.source = client, source
        self.token = secrets.token_hex(4)
        self.created: list[str] = []

    async def namespace(self, *, in_scope: bool = True) -> str:
        name = f"cpr-{self.token}-{len(self.created)}"
        labels = {SCOPE_LABEL: self.token if in_scope else "out"}
        await self.client.create({"apiVersion": "v1", "kind": "Namespace",
                                  "metadata": {"name": name, "labels": labels}})
        self.created.append(name)
        return name

    def rule(self, name: str, **fields: Any) -> dict[str, Any]:
        body = {"apiVersion": "flant.com/v1", "kind": "CopyratorRule",
                "metadata": {"name": name, "namespace": self.source, "labels": {"module": "copyrator"}},
                "ruleType": "configmap", "selector": {"copyrator": "true"}, "namespace": self.source,
                "namespaceSelector": {"matchLabels": {SCOPE_LABEL: self.token}}}
        body.update(fields)
        return body

    async def cleanup(self) -> None:
        for name in self.created:
            with contextlib.suppress(NotFound):
                await self.client.delete("namespaces", name)


def configmap(name: str, ns: str, data: dict[str, str], labels: dict[str, str] | None = None,
              **extra: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": ns, "labels": labels or {"copyrator": "true"}},
            "data": data, **extra}


def secret(name: str, ns: str, data: dict[str, str], consent: str | None = "true",
           **extra: Any) -> dict[str, Any]:
    annotations = {CONSENT_ANNOTATION: consent} if consent is not None else {}
    return {"apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": name, "namespace": ns, "labels": {"copyrator": "true"},
                         "annotations": annotations},
            "data": {k: base64.b64encode(v.encode()).decode() for k, v in data.items()}, **extra}


def status_is(check: Callable[[dict[str, Any]], bool]) -> Callable[[dict[str, Any]], bool]:
    def predicate(obj: dict[str, Any]) -> bool:
        status = obj.get("status") or {}
        return status.get("observedGeneration") == obj["metadata"]["generation"] and check(status)
    return predicate


async def wait_rule(client: Client, ns: str, name: str, check: Callable[[dict[str, Any]], bool],
                    what: str) -> dict[str, Any]:
    rule = await wait_for(client, RULES, name, ns, status_is(check), timeout=30, description=what)
    return rule["status"]


async def wait_data(client: Client, kind: str, name: str, ns: str, data: dict[str, str] | None) -> dict:
    return await wait_for(client, kind, name, ns, lambda o: (o.get("data") or None) == data, timeout=30,
                          description=f"data == {data}")


async def absent(client: Client, kind: str, name: str, ns: str) -> bool:
    try:
        await client.get(kind, name, ns)
    except NotFound:
        return True
    return False


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def options(namespace: str, **kw: Any) -> ManagerOptions:
    """run_operator's defaults (all namespaces), with overrides."""
    base: dict[str, Any] = dict(
        metrics_bind_address="127.0.0.1:0", health_probe_bind_address="127.0.0.1:0",
        graceful_shutdown_timeout=5, freeze_gc=False, leader_election_namespace=namespace)
    return ManagerOptions(**{**base, **kw})


@pytest_asyncio.fixture(loop_scope="session")
async def scope(kube_client: Client, namespace: str) -> AsyncIterator[Scope]:
    s = Scope(kube_client, namespace)
    try:
        yield s
    finally:
        await s.cleanup()


# --- restarts (own operator runs; before the shared operator starts) -----------------------------


async def test_restart_midway_leaves_no_orphans_or_duplicates(kube_cluster, kube_client: Client,
                                                              scope: Scope) -> None:
    """The operator is stopped with copies half made; meanwhile the world changes. A fresh process
    converges from what it finds: stale copies go, new ones come, nothing is duplicated."""
    src = scope.source
    targets = [await scope.namespace() for _ in range(3)]
    await install_crds(kube_client, operator)
    await kube_client.create(configmap("app", src, {"v": "1"}))
    await kube_client.create(configmap("gone", src, {"v": "1"}))
    # No graceful shutdown: the reconcile in flight is cancelled wherever it is.
    async with run_operator(kube_cluster, kube_client, operator, src,
                            options=options(src, graceful_shutdown_timeout=0)) as first:
        await kube_client.create(scope.rule("r"))
        # Stop as soon as the first copy exists: the others may or may not have been written yet.
        await wait_for(kube_client, "configmaps", "app", targets[0], timeout=30)
    assert first.audit().ok, first.audit().message
    # While no operator runs: a source changes, one goes, a namespace leaves scope, one joins.
    await kube_client.patch("configmaps", "app", {"data": {"v": "2"}}, src)
    await kube_client.delete("configmaps", "gone", src)
    await kube_client.patch("namespaces", targets[2], {"metadata": {"labels": {SCOPE_LABEL: "out"}}})
    joined = await scope.namespace()
    async with run_operator(kube_cluster, kube_client, operator, src, watch_namespaces=None) as second:
        await wait_rule(kube_client, src, "r", lambda s: s.get("copyCount") == 3, "3 copies in place")
        for ns in (targets[0], targets[1], joined):
            await wait_data(kube_client, "configmaps", "app", ns, {"v": "2"})
        labelled = await kube_client.list("configmaps", label_selector="copyrator.flant.com/rule=r")
        copies = [c for c in labelled["items"]
                  if c["metadata"]["annotations"].get(RULE_ANNOTATION) == f"{src}/r"]
        assert sorted(c["metadata"]["namespace"] for c in copies) == sorted([targets[0], targets[1], joined])
        assert {c["metadata"]["name"] for c in copies} == {"app"}
    assert second.audit().ok, second.audit().message
    # The rule is deleted while no operator runs: its finalizer holds it until the next one cleans up.
    await kube_client.delete(RULES, "r", src)
    async with run_operator(kube_cluster, kube_client, operator, src, watch_namespaces=None):
        await wait_for_deletion(kube_client, RULES, "r", src, timeout=30)
        for ns in (targets[0], targets[1], joined):
            assert await absent(kube_client, "configmaps", "app", ns)


async def test_rule_name_and_namespace_settings(kube_cluster, kube_client: Client, scope: Scope) -> None:
    """The article's deployment: rules are read from the operator's NAMESPACE only, and RULE_NAME picks
    one of them. Sources and copies still live anywhere."""
    src = scope.source
    target = await scope.namespace()
    chosen = build_operator()  # its own settings and world, apart from the module's operator
    chosen.settings = CopyratorSettings(rule_name="chosen")
    await install_crds(kube_client, chosen)
    await kube_client.create(configmap("picked", src, {"p": "1"}))
    await kube_client.create(configmap("ignored", src, {"i": "1"}, labels={"other": "yes"}))
    await kube_client.create(scope.rule("chosen"))
    await kube_client.create(scope.rule("other", selector={"other": "yes"}))
    async with run_operator(kube_cluster, kube_client, chosen, src,
                            options=options(src, namespaces=[src])) as running:
        await wait_data(kube_client, "configmaps", "picked", target, {"p": "1"})
        await wait_rule(kube_client, src, "chosen", lambda s: s.get("copyCount") == 1, "1 copy")
        other = await kube_client.get(RULES, "other", src)
        assert not other["metadata"].get("finalizers") and not other.get("status")
        assert await absent(kube_client, "configmaps", "ignored", target)
        await kube_client.delete(RULES, "chosen", src)
        await wait_for_deletion(kube_client, "configmaps", "picked", target, timeout=30)
    assert running.audit().ok, running.audit().message


# --- one operator for the rest of the module -----------------------------------------------------


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def copyrator(kube_cluster, kube_client: Client) -> AsyncIterator[RunningOperator]:
    home = f"copyrator-{secrets.token_hex(3)}"
    await kube_client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": home}})
    try:
        async with run_operator(kube_cluster, kube_client, operator, home, watch_namespaces=None) as running:
            yield running
    finally:
        with contextlib.suppress(NotFound):
            await kube_client.delete("namespaces", home)


async def test_article_rule_is_accepted_unchanged(copyrator: RunningOperator, kube_client: Client,
                                                  scope: Scope) -> None:
    """The article's main-rule, as printed (``namespace: default`` is a string), passes the CRD's
    validation and gets the documented defaults (server-side dry run: nothing is created)."""
    article = {"apiVersion": "flant.com/v1", "kind": "CopyratorRule",
               "metadata": {"name": "main-rule", "namespace": "default", "labels": {"module": "copyrator"}},
               "ruleType": "configmap", "selector": {"copyrator": "true"}, "namespace": "default"}
    rule = await kube_client.create(article, dry_run=True)
    assert rule["namespace"] == "default" and rule["conflictPolicy"] == "Skip"
    assert rule["copyLabels"] == ["*"] and rule["orphanOnDelete"] is False
    for bad in ({"ruleType": "pod"}, {"selector": {}}, {"conflictPolicy": "Merge"}):
        with pytest.raises(Invalid):
            await kube_client.create({**article, **bad}, dry_run=True)
    # What the schema cannot express (a name *or* a list of names) the operator checks and reports.
    await kube_client.create(scope.rule("odd", namespace=[1, 2]))
    status = await wait_rule(kube_client, scope.source, "odd", lambda s: bool(s.get("conditions")),
                             "conditions")
    ready = next(c for c in status["conditions"] if c["type"] == "Ready")
    assert (ready["status"], ready["reason"]) == ("False", "InvalidRule")


async def test_copies_follow_sources_and_namespaces(copyrator: RunningOperator, kube_client: Client,
                                                    scope: Scope) -> None:
    src = scope.source
    t1, t2 = await scope.namespace(), await scope.namespace()
    outside = await scope.namespace(in_scope=False)
    await kube_client.create(configmap("settings", src, {"a": "1", "b": "2"}))
    await kube_client.create(configmap("private", src, {"x": "y"}, labels={"other": "label"}))
    await kube_client.create(scope.rule("main-rule"))
    for ns in (t1, t2):
        copy = await wait_data(kube_client, "configmaps", "settings", ns, {"a": "1", "b": "2"})
        assert copy["metadata"]["labels"]["copyrator"] == "true"  # labels through the default allow-list
        assert copy["metadata"]["annotations"][RULE_ANNOTATION] == f"{src}/main-rule"
        assert not copy["metadata"].get("ownerReferences")
    status = await wait_rule(kube_client, src, "main-rule", lambda s: s.get("copyCount") == 2, "2 copies")
    assert status["sources"] == [f"{src}/settings"]
    assert {c["namespace"] for c in status["copies"]} == {t1, t2}
    assert await absent(kube_client, "configmaps", "settings", outside)
    assert await absent(kube_client, "configmaps", "private", t1)

    # A namespace created afterwards gets its copy.
    t3 = await scope.namespace()
    await wait_data(kube_client, "configmaps", "settings", t3, {"a": "1", "b": "2"})
    # A changed source updates every copy; a removed key disappears from them.
    await kube_client.replace({**await kube_client.get("configmaps", "settings", src), "data": {"a": "9"}})
    for ns in (t1, t2, t3):
        await wait_data(kube_client, "configmaps", "settings", ns, {"a": "9"})
    # A copy deleted by hand is restored; one edited in its namespace is its owner's: kept as edited and
    # reported, never reverted.
    await kube_client.patch("configmaps", "settings", {"data": {"a": "mine", "extra": "1"}}, t1)
    await kube_client.delete("configmaps", "settings", t2)
    await wait_data(kube_client, "configmaps", "settings", t2, {"a": "9"})
    status = await wait_rule(kube_client, src, "main-rule", lambda s: any(
        c["reason"] == "EditedInPlace" for c in s.get("conflicts") or []), "the edit reported")
    assert [(c["namespace"], c["name"]) for c in status["conflicts"]] == [(t1, "settings")]
    assert (await kube_client.get("configmaps", "settings", t1))["data"] == {"a": "mine", "extra": "1"}
    # A namespace leaving scope loses its copy.
    await kube_client.patch("namespaces", t3, {"metadata": {"labels": {SCOPE_LABEL: "out"}}})
    await wait_for_deletion(kube_client, "configmaps", "settings", t3, timeout=30)
    # The source losing its label: every copy goes, except the edited one, which is released (unmarked).
    await kube_client.patch("configmaps", "settings", {"metadata": {"labels": {"copyrator": None}}}, src)
    await wait_for_deletion(kube_client, "configmaps", "settings", t2, timeout=30)
    kept = await wait_for(kube_client, "configmaps", "settings", t1, lambda o: RULE_ANNOTATION not in (
        o["metadata"].get("annotations") or {}), timeout=30, description="the edited copy released")
    assert kept["data"] == {"a": "mine", "extra": "1"}
    status = await wait_rule(kube_client, src, "main-rule", lambda s: s.get("copyCount") == 0, "no copies")
    assert status["sourceCount"] == 0


async def test_secrets_are_copied_only_with_consent(copyrator: RunningOperator, kube_client: Client,
                                                    scope: Scope) -> None:
    src = scope.source
    t1, t2 = await scope.namespace(), await scope.namespace()
    await kube_client.create(secret("shared", src, {"token": "s3cr3t"}))
    await kube_client.create(secret("mine", src, {"token": "keep-out"}, consent=None))
    await kube_client.create(secret("only-t1", src, {"k": "v"}, consent=f"{t1},nowhere-*"))
    await kube_client.create(secret("frozen", src, {"k": "old"}, immutable=True, type="example.com/x"))
    await kube_client.create({
        "apiVersion": "v1", "kind": "Secret", "type": "kubernetes.io/service-account-token",
        "metadata": {"name": "sa-token", "namespace": src, "labels": {"copyrator": "true"},
                     "annotations": {CONSENT_ANNOTATION: "true",
                                     "kubernetes.io/service-account.name": "default"}}})
    await kube_client.create(scope.rule("secrets", ruleType="secret"))
    for ns in (t1, t2):
        copy = await wait_data(kube_client, "secrets", "shared", ns, {"token": b64("s3cr3t")})
        assert copy["type"] == "Opaque"
        frozen = await wait_for(kube_client, "secrets", "frozen", ns, timeout=30)
        assert frozen["immutable"] is True and frozen["type"] == "example.com/x"
    await wait_for(kube_client, "secrets", "only-t1", t1, timeout=30)
    status = await wait_rule(kube_client, src, "secrets", lambda s: s.get("copyCount") == 5, "5 copies")
    assert {(s["source"], s["reason"]) for s in status["skippedSources"]} == {
        (f"{src}/mine", "NoConsent"), (f"{src}/sa-token", "ProtectedSecretType")}
    for name, ns in (("mine", t1), ("mine", t2), ("sa-token", t1), ("only-t1", t2)):
        assert await absent(kube_client, "secrets", name, ns), f"{ns}/{name} must not be copied"
    # An immutable source is replaced (delete + create): so are its copies.
    old_uid = frozen["metadata"]["uid"]
    await kube_client.delete("secrets", "frozen", src)
    await kube_client.create(secret("frozen", src, {"k": "new"}, immutable=True, type="example.com/x"))
    copy = await wait_data(kube_client, "secrets", "frozen", t2, {"k": b64("new")})
    assert copy["metadata"]["uid"] != old_uid and copy["immutable"] is True
    # Secret data never shows in the rule's status or events.
    rule = await kube_client.get(RULES, "secrets", src)
    await copyrator.events_sent()
    events = (await kube_client.list("events.events.k8s.io", src))["items"]
    text = str(rule.get("status")) + str([e.get("note") for e in events])
    for leaked in ("s3cr3t", b64("s3cr3t"), "keep-out", b64("keep-out")):
        assert leaked not in text


async def test_conflict_policies(copyrator: RunningOperator, kube_client: Client, scope: Scope) -> None:
    src = scope.source
    differs, same, free, freed = [await scope.namespace() for _ in range(4)]
    await kube_client.create(configmap("shared", src, {"k": "source"}))
    # Adopt and Overwrite take over only objects whose owner consents: these two do.
    consent = {TAKEOVER_ANNOTATION: src}
    theirs = configmap("shared", differs, {"k": "theirs", "more": "x"}, labels={"team": "a"})
    theirs["metadata"]["annotations"] = consent
    await kube_client.create(theirs)
    twin = configmap("shared", same, {"k": "source"}, labels={"team": "b"})
    twin["metadata"]["annotations"] = consent
    await kube_client.create(twin)
    await kube_client.create(configmap("shared", freed, {"k": "in the way"}, labels={}))
    await kube_client.create(scope.rule("c"))
    # Skip (default): both foreign objects are left alone and reported; the free namespace gets its copy.
    await wait_for(kube_client, "configmaps", "shared", free, timeout=30)
    status = await wait_rule(kube_client, src, "c", lambda s: s.get("conflictCount") == 3, "3 conflicts")
    assert {(c["namespace"], c["reason"]) for c in status["conflicts"]} == {
        (differs, "AlreadyExists"), (same, "AlreadyExists"), (freed, "AlreadyExists")}
    assert {c["type"]: c["status"] for c in status["conditions"]} == {"Ready": "True", "Degraded": "True"}
    assert any(e["type"] == "Warning" for e in await wait_for_events(kube_client, src, "c", "Conflict"))
    theirs = await kube_client.get("configmaps", "shared", differs)
    assert theirs["data"] == {"k": "theirs", "more": "x"} and RULE_ANNOTATION not in (
        theirs["metadata"].get("annotations") or {})
    # The blocking object goes away: the copy takes its place at once (no need to wait for a resync).
    await kube_client.delete("configmaps", "shared", freed)
    await wait_data(kube_client, "configmaps", "shared", freed, {"k": "source"})
    await wait_rule(kube_client, src, "c", lambda s: s.get("conflictCount") == 2, "2 conflicts")
    # Adopt: the identical one is taken over, the different one is not (keys are never merged).
    await kube_client.patch(RULES, "c", {"conflictPolicy": "Adopt"}, src)
    await wait_for(kube_client, "configmaps", "shared", same, timeout=30,
                   predicate=lambda o: (o["metadata"].get("annotations") or {}).get(RULE_ANNOTATION))
    status = await wait_rule(kube_client, src, "c", lambda s: s.get("conflictCount") == 1, "1 conflict")
    assert status["conflicts"][0]["reason"] == "ContentDiffers"
    # Overwrite: replaced wholesale by the source's content.
    await kube_client.patch(RULES, "c", {"conflictPolicy": "Overwrite"}, src)
    await wait_data(kube_client, "configmaps", "shared", differs, {"k": "source"})
    await wait_rule(kube_client, src, "c", lambda s: s.get("conflictCount") == 0 and s.get("copyCount") == 4,
                    "no conflicts, 4 copies")
    # Taken-over objects are copies now: the rule's deletion removes them like the others.
    await kube_client.delete(RULES, "c", src)
    for ns in (differs, same, free, freed):
        await wait_for_deletion(kube_client, "configmaps", "shared", ns, timeout=30)


async def test_deletion_and_orphaning(copyrator: RunningOperator, kube_client: Client, scope: Scope) -> None:
    src = scope.source
    t1, t2 = await scope.namespace(), await scope.namespace()
    await kube_client.create(configmap("one", src, {"n": "1"}))
    await kube_client.create(configmap("two", src, {"n": "2"}, labels={"copyrator": "true", "keep": "yes"}))
    await kube_client.create(scope.rule("deleting"))
    await kube_client.create(scope.rule("keeping", selector={"keep": "yes"}, orphanOnDelete=True,
                                        targetName="kept-{name}"))
    for ns in (t1, t2):
        await wait_for(kube_client, "configmaps", "one", ns, timeout=30)
        await wait_for(kube_client, "configmaps", "two", ns, timeout=30)
        await wait_for(kube_client, "configmaps", "kept-two", ns, timeout=30)
    # Deleting a source removes its copies (rule "deleting"); rule "keeping" releases them instead.
    await kube_client.delete("configmaps", "one", src)
    for ns in (t1, t2):
        await wait_for_deletion(kube_client, "configmaps", "one", ns, timeout=30)
    # Deleting a rule removes its copies (after its finalizer ran)...
    await kube_client.delete(RULES, "deleting", src)
    await wait_for_deletion(kube_client, RULES, "deleting", src, timeout=30)
    for ns in (t1, t2):
        assert await absent(kube_client, "configmaps", "two", ns)
    # ... unless orphanOnDelete: the copies stay, without copyrator's marks (saying who released them).
    await kube_client.delete(RULES, "keeping", src)
    await wait_for_deletion(kube_client, RULES, "keeping", src, timeout=30)
    for ns in (t1, t2):
        kept = await kube_client.get("configmaps", "kept-two", ns)
        assert kept["data"] == {"n": "2"}
        annotations = dict(kept["metadata"].get("annotations") or {})
        assert annotations.pop("copyrator.flant.com/released-from") == f"{src}/keeping"
        marks = [*annotations, *(kept["metadata"].get("labels") or {})]
        assert not any(k.startswith("copyrator.flant.com/") for k in marks), marks


async def test_two_rules_at_once(copyrator: RunningOperator, kube_client: Client, scope: Scope) -> None:
    src = scope.source
    t1, t2 = await scope.namespace(), await scope.namespace()
    await kube_client.create(configmap("cfg", src, {"c": "1"}))
    await kube_client.create(secret("pw", src, {"p": "1"}))
    await kube_client.create(scope.rule("cms"))
    await kube_client.create(scope.rule("secs", ruleType="secret", excludedNamespaces=[t2]))
    for ns in (t1, t2):
        await wait_data(kube_client, "configmaps", "cfg", ns, {"c": "1"})
    await wait_data(kube_client, "secrets", "pw", t1, {"p": b64("1")})
    await wait_rule(kube_client, src, "secs", lambda s: s.get("copyCount") == 1, "1 secret copy")
    assert await absent(kube_client, "secrets", "pw", t2)  # excluded by name
    # Changing a rule's type swaps its copies: the ConfigMap copies go, Secret copies come.
    await kube_client.patch(RULES, "cms", {"ruleType": "secret", "targetName": "as-{name}"}, src)
    for ns in (t1, t2):
        await wait_for_deletion(kube_client, "configmaps", "cfg", ns, timeout=30)
        await wait_data(kube_client, "secrets", "as-pw", ns, {"p": b64("1")})
    copy = await kube_client.get("secrets", "pw", t1)
    assert copy["metadata"]["annotations"][RULE_ANNOTATION] == f"{src}/secs"
    assert HASH_ANNOTATION in copy["metadata"]["annotations"]


async def test_zz_rbac_audit_and_metrics(copyrator: RunningOperator) -> None:
    """Everything above ran under the generated RBAC; the counters saw it."""
    report = copyrator.audit()
    assert report.ok, report.message
    text = generate_latest(REGISTRY).decode()
    for name in ("copyrator_copies_created_total", "copyrator_copies_updated_total",
                 "copyrator_copies_deleted_total", "copyrator_conflicts_total"):
        assert f'{name}{{kind="configmap"}}' in text, name
