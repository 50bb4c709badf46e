"""The immortal operator on a real control plane (kwok nodes run the pods), under its generated RBAC."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
import yaml

from kubeloop.client import Client, Forbidden, Invalid, NotFound
from kubeloop.manager import ManagerOptions
from kubeloop.operators.immortal import ImmortalContainer, build_operator, operator
from kubeloop.operators.immortal import pods as podlib
from kubeloop.operators.immortal.backoff import ImmortalSettings
from kubeloop.testing import events_of, occurrences, wait_for, wait_for_deletion
from kubeloop.testing.operator import RunningOperator, install_crds, run_operator
from kubeloop.testing.podsecurity import CONTAINER_SECURITY_CONTEXT, relax

IC = ImmortalContainer.resource()
EXAMPLES = Path(__file__).resolve().parents[2] / "kubeloop" / "operators" / "immortal" / "examples"
Obj = dict[str, Any]


@pytest_asyncio.fixture(loop_scope="session")
async def namespace(namespace: str, kube_client: Client) -> str:
    """The test kit's namespace, relaxed to "baseline": immortal runs the user's image as written and adds
    no securityContext of its own (the article's nginx runs as root, which "restricted" refuses);
    test_a_restricted_namespace_refuses_a_root_pod_and_says_so shows what "restricted" does to it."""
    await relax(kube_client, namespace)
    return namespace


def immortal(name: str, namespace: str, image: str = "nginx:latest", **spec: Any) -> Obj:
    return {"apiVersion": "immortalcontainer.flugel.it/v1alpha1", "kind": "ImmortalContainer",
            "metadata": {"name": name, "namespace": namespace}, "spec": {"image": image, **spec}}


def status(obj: Obj) -> Obj:
    return obj.get("status") or {}


def condition(obj: Obj, type: str) -> Obj:
    return next((c for c in status(obj).get("conditions") or [] if c["type"] == type), {})


def running_pod(uid_not: str | None = None) -> Callable[[Obj], bool]:
    def check(pod: Obj) -> bool:
        return (pod["metadata"]["uid"] != uid_not and not pod["metadata"].get("deletionTimestamp")
                and pod.get("status", {}).get("phase") == "Running" and podlib.is_ready(pod))
    return check


def starts(n: int, available: bool = True) -> Callable[[Obj], bool]:
    def check(obj: Obj) -> bool:
        return (status(obj).get("startTimes") == n
                and (not available or condition(obj, "Available").get("status") == "True"))
    return check


async def events(running: RunningOperator, client: Client, namespace: str, name: str, reason: str) -> list[Obj]:
    """The Events the operator has recorded so far (it records each before the status saying so)."""
    await running.events_sent()
    return await events_of(client, namespace, name, reason)


async def audited(running: Any) -> None:
    report = running.audit()
    assert report.ok, report.message
    # Not every scenario adopts (patch), deletes or repeats an event; finalizers/update only matters
    # where the OwnerReferencesPermissionEnforcement admission plugin is on.
    unused = {(p.resource, p.subresource, v) for p in report.unused for v in p.verbs}
    assert unused <= {("immortalcontainers", "finalizers", "update"), ("pods", None, "patch"),
                      ("pods", None, "get"),
                      ("pods", None, "delete"), ("events", None, "patch")}, report.message


async def test_article_example_delete_and_failure_recreate(kube_cluster, kube_client: Client,
                                                           namespace: str) -> None:
    example = yaml.safe_load((EXAMPLES / "example.yaml").read_text())
    example["metadata"]["namespace"] = namespace
    name, pod_name = "example-immortal-container", "example-immortal-container-immortalpod"
    async with run_operator(kube_cluster, kube_client, operator, namespace) as running:
        await kube_client.apply(example, field_manager="kubectl")
        first = await wait_for(kube_client, "pods", pod_name, namespace, running_pod(), timeout=20)
        ref = first["metadata"]["ownerReferences"][0]
        assert (ref["kind"], ref["name"], ref["controller"], ref["blockOwnerDeletion"]) == (
            "ImmortalContainer", name, True, True)
        assert [c["image"] for c in first["spec"]["containers"]] == ["nginx:latest"]
        assert first["spec"]["restartPolicy"] == "Always"
        ic = await wait_for(kube_client, IC, name, namespace, starts(1), timeout=20)
        assert status(ic)["currentPod"] == pod_name and status(ic)["podUID"] == first["metadata"]["uid"]
        assert status(ic)["observedGeneration"] == 1 and status(ic)["phase"] == "Running"

        # kubectl delete pod …: recreated, startTimes 2 (the article's ending).
        await kube_client.delete("pods", pod_name, namespace)
        second = await wait_for(kube_client, "pods", pod_name, namespace,
                                running_pod(uid_not=first["metadata"]["uid"]), timeout=20)
        ic = await wait_for(kube_client, IC, name, namespace, starts(2), timeout=20)
        assert status(ic)["podUID"] == second["metadata"]["uid"]

        # The pod ends (evicted, node shut down…): deleted (this very one) and started again.
        await kube_client.patch("pods", pod_name, {"status": {"phase": "Failed"}}, namespace,
                                subresource="status")
        third = await wait_for(kube_client, "pods", pod_name, namespace,
                               running_pod(uid_not=second["metadata"]["uid"]), timeout=20)
        ic = await wait_for(kube_client, IC, name, namespace, starts(3), timeout=20)
        assert [h["reason"] for h in status(ic)["history"]] == ["Created", "PodDeleted", "PodFailed"]
        uids = [p["metadata"]["uid"] for p in (first, second, third)]
        assert [h["uid"] for h in status(ic)["history"]] == uids
        assert condition(ic, "Progressing")["reason"] == "PodAvailable"
        assert occurrences(await events(running, kube_client, namespace, name, "SuccessfulCreate")) == 3
        assert occurrences(await events(running, kube_client, namespace, name, "SuccessfulDelete")) == 1

        # Deleting the ImmortalContainer garbage-collects its pod (kube-controller-manager's GC).
        await kube_client.delete(IC, name, namespace)
        await wait_for_deletion(kube_client, "pods", pod_name, namespace, timeout=60)
    await audited(running)


async def test_template_and_image_change_replace_the_pod(kube_cluster, kube_client: Client,
                                                         namespace: str) -> None:
    template = {"labels": {"app": "web"}, "env": [{"name": "GREETING", "value": "hi"}],
                "command": ["nginx"], "args": ["-g", "daemon off;"],
                "resources": {"requests": {"cpu": "50m"}}, "nodeSelector": {"type": "kwok"}}
    async with run_operator(kube_cluster, kube_client, operator, namespace) as running:
        await kube_client.create(immortal("web", namespace, "nginx:1.26", template=template))
        old = await wait_for(kube_client, "pods", "web-immortalpod", namespace, running_pod(), timeout=20)
        container = old["spec"]["containers"][0]
        assert (container["image"], container["command"], container["args"], container["env"]) == (
            "nginx:1.26", ["nginx"], ["-g", "daemon off;"], [{"name": "GREETING", "value": "hi"}])
        assert container["resources"] == {"requests": {"cpu": "50m"}}
        assert old["spec"]["nodeSelector"] == {"type": "kwok"} and old["metadata"]["labels"]["app"] == "web"
        await wait_for(kube_client, IC, "web", namespace, starts(1), timeout=20)

        await kube_client.patch(IC, "web", {"spec": {"image": "nginx:1.27"}}, namespace)
        new = await wait_for(kube_client, "pods", "web-immortalpod", namespace,
                             running_pod(uid_not=old["metadata"]["uid"]), timeout=20)
        assert new["spec"]["containers"][0]["image"] == "nginx:1.27"
        assert new["metadata"]["labels"][podlib.HASH_LABEL] != old["metadata"]["labels"][podlib.HASH_LABEL]
        ic = await wait_for(kube_client, IC, "web", namespace, starts(2), timeout=20)
        assert status(ic)["history"][-1]["reason"] == "TemplateChanged"
        assert status(ic)["observedGeneration"] == 2
    await audited(running)


async def test_recreations_back_off(kube_cluster, kube_client: Client, namespace: str) -> None:
    """A pod that keeps ending is recreated at once the first time, then only after growing waits."""
    flaky = build_operator()  # its own settings and expectations, apart from the other tests' operator
    flaky.settings = ImmortalSettings(backoff_initial=1.0, backoff_max=2.0)
    async with run_operator(kube_cluster, kube_client, flaky, namespace) as running:
        await kube_client.create(immortal("flaky", namespace))
        uid = (await wait_for(kube_client, "pods", "flaky-immortalpod", namespace, running_pod(),
                              timeout=20))["metadata"]["uid"]
        loop = asyncio.get_running_loop()
        gaps = []
        for _ in range(3):
            await kube_client.patch("pods", "flaky-immortalpod", {"status": {"phase": "Failed"}},
                                    namespace, subresource="status")
            failed_at = loop.time()
            uid = (await wait_for(kube_client, "pods", "flaky-immortalpod", namespace,
                                  running_pod(uid_not=uid), timeout=20))["metadata"]["uid"]
            gaps.append(loop.time() - failed_at)
        ic = await wait_for(kube_client, IC, "flaky", namespace, starts(4), timeout=20)
        assert [h["reason"] for h in status(ic)["history"]] == ["Created"] + ["PodFailed"] * 3
        # 0 s, then 1 s and 2 s after the previous start (which was a moment before the failure).
        assert gaps[0] < 0.9 and 0.5 < gaps[1] < 1.9 and 1.5 < gaps[2] < 3, gaps
    await audited(running)


async def test_waits_for_a_terminating_pod_before_recreating(kube_cluster, kube_client: Client,
                                                             namespace: str) -> None:
    hold = "test.kubeloop.dev/hold"
    async with run_operator(kube_cluster, kube_client, operator, namespace) as running:
        await kube_client.create(immortal("slow", namespace))
        pod = await wait_for(kube_client, "pods", "slow-immortalpod", namespace, running_pod(), timeout=20)
        await wait_for(kube_client, IC, "slow", namespace, starts(1), timeout=20)
        await kube_client.patch("pods", "slow-immortalpod", {"metadata": {"finalizers": [hold]}}, namespace)
        await kube_client.delete("pods", "slow-immortalpod", namespace)
        # Fixed name: while the old pod terminates, the operator says so and waits.
        ic = await wait_for(kube_client, IC, "slow", namespace, timeout=20, predicate=lambda o: condition(
            o, "Progressing").get("reason") == "WaitingForTermination")
        assert status(ic)["phase"] == "Terminating" and status(ic)["startTimes"] == 1
        await kube_client.patch("pods", "slow-immortalpod", {"metadata": {"finalizers": None}}, namespace)
        await wait_for(kube_client, "pods", "slow-immortalpod", namespace,
                       running_pod(uid_not=pod["metadata"]["uid"]), timeout=20)
        await wait_for(kube_client, IC, "slow", namespace, starts(2), timeout=20)
    await audited(running)


async def test_name_conflict_is_left_alone_and_orphans_are_adopted(kube_cluster, kube_client: Client,
                                                                   namespace: str) -> None:
    def bare_pod(name: str, labels: dict[str, str] | None = None) -> Obj:
        return {"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": name, "namespace": namespace, "labels": labels or {}},
                "spec": {"containers": [{"name": "c", "image": "nginx:latest"}]}}

    foreign = await kube_client.create(bare_pod("taken-immortalpod"))
    orphan = await kube_client.create(bare_pod("orphan-immortalpod", {podlib.NAME_LABEL: "orphan"}))
    async with run_operator(kube_cluster, kube_client, operator, namespace) as running:
        await kube_client.create(immortal("taken", namespace))
        await kube_client.create(immortal("orphan", namespace))
        ic = await wait_for(kube_client, IC, "taken", namespace, timeout=20, predicate=lambda o: condition(
            o, "ReplicaFailure").get("reason") == "NameConflict")
        assert condition(ic, "ReplicaFailure")["status"] == "True" and not status(ic).get("startTimes")
        [event] = await events(running, kube_client, namespace, "taken", "NameConflict")
        assert event["type"] == "Warning"
        untouched = await kube_client.get("pods", "taken-immortalpod", namespace)
        assert untouched["metadata"]["uid"] == foreign["metadata"]["uid"]
        assert not untouched["metadata"].get("ownerReferences")

        # The orphan carrying our label is adopted, not replaced.
        ic = await wait_for(kube_client, IC, "orphan", namespace, starts(1, available=False), timeout=20)
        assert status(ic)["podUID"] == orphan["metadata"]["uid"]
        assert status(ic)["history"][0]["reason"] == "Adopted"
        adopted = await kube_client.get("pods", "orphan-immortalpod", namespace)
        assert adopted["metadata"]["ownerReferences"][0]["uid"] == ic["metadata"]["uid"]

        # Once the foreign pod is gone, the name is free: our pod is created, the failure cleared.
        await kube_client.delete("pods", "taken-immortalpod", namespace, grace_period_seconds=0)
        await wait_for(kube_client, "pods", "taken-immortalpod", namespace,
                       lambda p: p["metadata"]["uid"] != foreign["metadata"]["uid"], timeout=20)
        # kwok (the fake kubelet) may repeat its by-name delete of the foreign pod and hit ours once it
        # exists: then ours is recreated, which the history tells apart (reason PodDeleted).
        ic = await wait_for(kube_client, IC, "taken", namespace, lambda o: starts(1)(o) or (
            starts(2)(o) and [h["reason"] for h in status(o)["history"]][1:] == ["PodDeleted"]), timeout=20)
        assert not condition(ic, "ReplicaFailure")
    await audited(running)


async def test_caches_only_its_own_pods(kube_cluster, kube_client: Client, namespace: str) -> None:
    """The pod informer lists and watches with a label selector: someone else's pods are never cached,
    so memory does not grow with the cluster. The pod also carries the article's controller=<name>."""
    stranger = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "stranger", "namespace": namespace},
                "spec": {"containers": [{"name": "c", "image": "nginx:latest"}]}}
    await kube_client.create(stranger)
    async with run_operator(kube_cluster, kube_client, operator, namespace) as running:
        await kube_client.create(immortal("kept", namespace))
        await wait_for(kube_client, IC, "kept", namespace, starts(1, available=False), timeout=20)
        informers = [i for i in running.manager.cache.informers if i.resource.plural == "pods"]
        cached = {name for i in informers for _, name in (k.split("/") for k in i.store.keys())}
        assert cached == {"kept-immortalpod"}
        assert informers and all(i.key.label_selector == podlib.POD_SELECTOR for i in informers)
        pod = await kube_client.get("pods", "kept-immortalpod", namespace)
        assert pod["metadata"]["labels"]["controller"] == "kept"
        assert pod["metadata"]["labels"][podlib.NAME_LABEL] == "kept"
        # The article's selector finds it.
        listed = (await kube_client.list("pods", namespace, label_selector="controller=kept"))["items"]
        assert [p["metadata"]["name"] for p in listed] == ["kept-immortalpod"]
    await audited(running)


async def test_a_tenant_of_team_a_gets_pods_in_team_a_only(kube_cluster, kube_client: Client, namespace: str,
                                                           tmp_path: Path) -> None:
    """A tenant bound to a Role in team-a that allows ImmortalContainers (and not pods): the operator
    creates pods for them in team-a — that is its job, as a Deployment's — and nowhere else, and never
    takes over a pod of another namespace that carries the same name and label."""
    team_a, other = namespace, f"{namespace}-other"
    await kube_client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": other}})
    await wait_for(kube_client, "serviceaccounts", "default", other, timeout=30)
    rules = [{"apiGroups": [IC.group], "resources": [IC.plural], "verbs": ["*"]}]
    await kube_client.create({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "tenant"}},
                             team_a)
    await kube_client.create({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
                              "metadata": {"name": "tenant"}, "rules": rules}, team_a)
    await kube_client.create({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
                              "metadata": {"name": "tenant"},
                              "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "tenant"},
                              "subjects": [{"kind": "ServiceAccount", "name": "tenant", "namespace": team_a}]},
                             team_a)
    lookalike = await kube_client.create({
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web-immortalpod", "namespace": other,
                                                        "labels": {podlib.NAME_LABEL: "web"}},
        "spec": {"containers": [{"name": "c", "image": "nginx:latest"}]}})
    path = await asyncio.to_thread(kube_cluster.service_account_kubeconfig, team_a, "tenant", tmp_path / "kc")
    tenant = await Client.from_kubeconfig(str(path))
    try:
        async with run_operator(kube_cluster, kube_client, operator, team_a,
                                watch_namespaces=[team_a, other]) as running:
            with pytest.raises(Forbidden):
                await tenant.create(immortal("web", other))
            with pytest.raises(Forbidden):
                await tenant.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
                                     "spec": {"containers": [{"name": "c", "image": "nginx"}]}}, team_a)
            await tenant.create(immortal("web", team_a))
            ic = await wait_for(kube_client, IC, "web", team_a, starts(1, available=False), timeout=20)
            ours = await kube_client.get("pods", "web-immortalpod", team_a)
            assert ours["metadata"]["ownerReferences"][0]["uid"] == ic["metadata"]["uid"]
            untouched = await kube_client.get("pods", "web-immortalpod", other)
            assert untouched["metadata"]["uid"] == lookalike["metadata"]["uid"]
            assert not untouched["metadata"].get("ownerReferences")
        await audited(running)
    finally:
        await tenant.close()
        with contextlib.suppress(NotFound):
            await kube_client.delete("namespaces", other)


async def test_restart_in_the_middle_of_a_create_burst(kube_cluster, kube_client: Client,
                                                       namespace: str) -> None:
    """Stopped hard (in-flight reconciles cancelled) while creating pods, then restarted: exactly one pod
    per ImmortalContainer and startTimes 1 each — including a pod created just before a "crash" that
    never reached the status."""
    await install_crds(kube_client, operator)
    names = [f"burst-{i}" for i in range(12)]
    for name in names:
        await kube_client.create(immortal(name, namespace))
    # A crash between "create pod" and "write status": the pod exists, the status does not know it.
    crashed = await kube_client.get(IC, "burst-0", namespace)
    await kube_client.create(podlib.desired_pod(ImmortalContainer.from_dict(crashed), crashed))
    hard = ManagerOptions(namespaces=[namespace], metrics_bind_address="0", health_probe_bind_address="0",
                          graceful_shutdown_timeout=0, freeze_gc=False)
    async with run_operator(kube_cluster, kube_client, operator, namespace, options=hard,
                            concurrency=3) as first:
        await until(lambda: pod_count(kube_client, namespace), lambda n: n >= 5, timeout=20)
    async with run_operator(kube_cluster, kube_client, operator, namespace, options=hard) as second:
        for name in names:
            ic = await wait_for(kube_client, IC, name, namespace, starts(1), timeout=30)
            assert [h["reason"] for h in status(ic)["history"]] == ["Created"], ic
        pods = (await kube_client.list("pods", namespace))["items"]
        assert sorted(p["metadata"]["name"] for p in pods) == sorted(f"{n}-immortalpod" for n in names)
        assert (await kube_client.get(IC, "burst-0", namespace))["status"]["podUID"] == (
            await kube_client.get("pods", "burst-0-immortalpod", namespace))["metadata"]["uid"]
    for running in (first, second):
        await audited(running)


async def test_an_empty_image_is_refused_by_the_api_server(kube_client: Client) -> None:
    await install_crds(kube_client, operator)
    with pytest.raises(Invalid) as refused:
        await kube_client.create(immortal("empty", "default", image=""), dry_run=True)
    assert refused.value.status == 422
    assert [c["field"] for c in refused.value.causes] == ["spec.image"], refused.value.causes


async def pod_count(client: Client, namespace: str) -> int:
    return len((await client.list("pods", namespace))["items"])


async def until(probe: Callable[[], Any], done: Callable[[Any], bool], timeout: float) -> Any:
    """Polls ``probe`` (briefly) until ``done``; for conditions spanning many objects."""
    deadline = time.monotonic() + timeout
    while True:
        value = await probe()
        if done(value):
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s; last value {value!r}")
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.sleep(0.02)


async def test_a_restricted_namespace_refuses_a_root_pod_and_says_so(kube_cluster, kube_client: Client,
                                                                    namespace: str) -> None:
    """Under the "restricted" Pod Security Standard the article's ImmortalContainer gets no pod: the
    refusal is reported (a FailedCreate Warning and the condition), not retried silently; a template that
    meets the standard runs there."""
    await relax(kube_client, namespace, "restricted")
    compliant = {"securityContext": {**CONTAINER_SECURITY_CONTEXT, "runAsNonRoot": True,
                                     "seccompProfile": {"type": "RuntimeDefault"}}}
    async with run_operator(kube_cluster, kube_client, operator, namespace) as running:
        await kube_client.create(immortal("root", namespace))
        await kube_client.create(immortal("nonroot", namespace, template=compliant))
        refused = await wait_for(kube_client, IC, "root", namespace, timeout=30, predicate=lambda o: any(
            "PodSecurity" in (c.get("message") or "") for c in (o.get("status") or {}).get("conditions") or ()))
        assert not refused["status"].get("currentPod")
        assert await events(running, kube_client, namespace, "root", "FailedCreate")
        await wait_for(kube_client, "pods", "nonroot-immortalpod", namespace, running_pod(), timeout=30)
    await audited(running)
