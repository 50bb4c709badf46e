"""Reloader as a drop-in for stakater/Reloader users, on the real control plane under the operator's
generated RBAC: their annotations (also on the pod template), their selectors, and what a tenant of one
namespace can make the operator do (nothing outside that namespace)."""

from __future__ import annotations

import asyncio
import signal
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from kubeloop.client import Client, Forbidden
from kubeloop.testing import wait_for
from kubeloop.testing.operator import run_operator

from .test_op_reloader import (
    AUTO,
    QUIET,
    cm_volume,
    config_map,
    deployment,
    events,
    eventually,
    pod_spec,
    recorded,
    reloader,
    revision,
    wait_recorded,
)

Obj = dict[str, Any]
DEPLOYMENTS = "deployments.apps"


def with_template_annotations(workload: Obj, annotations: dict[str, str]) -> Obj:
    workload["spec"]["template"]["metadata"]["annotations"] = annotations
    return workload


async def test_missing_named_object_does_not_hold_back_the_others(kube_cluster, kube_client: Client,
                                                                  namespace: str) -> None:
    """a name in a reload annotation that does not exist warns; the others still roll."""
    ns = namespace
    await kube_client.create(config_map("present", ns, {"k": "1"}))
    await kube_client.create(deployment("app", ns, pod_spec(), {
        "configmap.reloader.stakater.com/reload": "present,not-there",
        "secret.reloader.stakater.com/reload": "no-such-secret"}))
    async with run_operator(kube_cluster, kube_client, reloader(), ns) as running:
        await wait_recorded(kube_client, DEPLOYMENTS, "app", ns)
        warned = await eventually(lambda: events(kube_client, ns, "app", "ReloadSourceMissing"))
        assert warned[0]["type"] == "Warning"
        assert "ConfigMap/not-there" in warned[0]["note"] and "Secret/no-such-secret" in warned[0]["note"]
        await kube_client.patch("configmaps", "present", {"data": {"k": "2"}}, ns)
        await wait_for(kube_client, DEPLOYMENTS, "app", ns, lambda d: revision(d) == 2, timeout=30,
                       description="the rollout for the object that exists")
        # Created later, the named object is recorded; without --reload-on-create it rolls nothing.
        before = await kube_client.get(DEPLOYMENTS, "app", ns)
        await kube_client.create(config_map("not-there", ns, {"k": "1"}))
        await wait_for(kube_client, DEPLOYMENTS, "app", ns, timeout=30,
                       predicate=lambda d: "ConfigMap/not-there" in d["metadata"]["annotations"][
                           "reloader.kubeloop.dev/sources"])
        await asyncio.sleep(QUIET)
        after = await kube_client.get(DEPLOYMENTS, "app", ns)
        assert revision(after) == 2 and after["spec"]["template"] == before["spec"]["template"]
    assert running.audit().ok, running.audit().message


async def test_reload_on_create_rolls_when_a_named_object_appears(kube_cluster, kube_client: Client,
                                                                  namespace: str) -> None:
    ns = namespace
    await kube_client.create(deployment("app", ns, pod_spec(), {
        "configmap.reloader.stakater.com/reload": "later"}))
    async with run_operator(kube_cluster, kube_client, reloader(reload_on_create=True), ns) as running:
        first = await wait_recorded(kube_client, DEPLOYMENTS, "app", ns)
        assert revision(first) == 1
        await kube_client.create(config_map("later", ns, {"k": "1"}))
        await wait_for(kube_client, DEPLOYMENTS, "app", ns, lambda d: revision(d) == 2, timeout=30,
                       description="a rollout for the creation")
    assert running.audit().ok, running.audit().message


async def test_annotations_on_the_pod_template(kube_cluster, kube_client: Client, namespace: str) -> None:
    """Reloader reads its annotations from the pod template when the workload has none."""
    ns = namespace
    for name in ("mounted", "named", "secret-side"):
        await kube_client.create(config_map(name, ns, {"k": "1"}))
    await kube_client.create(with_template_annotations(
        deployment("auto", ns, pod_spec(volumes=[cm_volume("mounted")])), AUTO))
    await kube_client.create(with_template_annotations(
        deployment("named", ns, pod_spec()), {"configmap.reloader.stakater.com/reload": "named"}))
    # The workload's own annotation wins for its kind: "auto: false" there, "auto: true" on the template.
    await kube_client.create(with_template_annotations(
        deployment("opted-out", ns, pod_spec(volumes=[cm_volume("secret-side")]),
                   {"reloader.stakater.com/auto": "false"}), AUTO))
    async with run_operator(kube_cluster, kube_client, reloader(), ns) as running:
        await wait_recorded(kube_client, DEPLOYMENTS, "auto", ns)
        await wait_recorded(kube_client, DEPLOYMENTS, "named", ns)
        for name in ("mounted", "named", "secret-side"):
            await kube_client.patch("configmaps", name, {"data": {"k": "2"}}, ns)
        await wait_for(kube_client, DEPLOYMENTS, "auto", ns, lambda d: revision(d) == 2, timeout=30)
        await wait_for(kube_client, DEPLOYMENTS, "named", ns, lambda d: revision(d) == 2, timeout=30)
        await asyncio.sleep(QUIET)
        opted_out = await kube_client.get(DEPLOYMENTS, "opted-out", ns)
        assert revision(opted_out) == 1 and recorded(opted_out) is None
    assert running.audit().ok, running.audit().message


async def test_pause_period_batches_changes_into_one_rollout(kube_cluster, kube_client: Client,
                                                              namespace: str) -> None:
    """Reloader's ``deployment.reloader.stakater.com/pause-period`` on a Deployment: changes within the
    period after the first one roll out together, once, when it ends (the debounce alone would roll
    each of these two changes, 1.5 s apart)."""
    ns = namespace
    for name in ("a", "b"):
        await kube_client.create(config_map(name, ns, {"k": "1"}))
    await kube_client.create(deployment("app", ns, pod_spec(volumes=[cm_volume("a"), cm_volume("b")]), {
        **AUTO, "deployment.reloader.stakater.com/pause-period": "4s"}))
    async with run_operator(kube_cluster, kube_client, reloader(), ns) as running:
        await wait_recorded(kube_client, DEPLOYMENTS, "app", ns)
        started = asyncio.get_running_loop().time()
        await kube_client.patch("configmaps", "a", {"data": {"k": "2"}}, ns)
        await asyncio.sleep(1.5)
        assert revision(await kube_client.get(DEPLOYMENTS, "app", ns)) == 1, "held by the pause-period"
        await kube_client.patch("configmaps", "b", {"data": {"k": "2"}}, ns)
        await wait_for(kube_client, DEPLOYMENTS, "app", ns, lambda d: revision(d) == 2, timeout=30)
        assert asyncio.get_running_loop().time() - started >= 3.5
        await asyncio.sleep(QUIET)
        assert revision(await kube_client.get(DEPLOYMENTS, "app", ns)) == 2, "one rollout for both"
        (event,) = await eventually(lambda: events(kube_client, ns, "app", "Reloaded"))
        assert "ConfigMap a changed" in event["note"] and "ConfigMap b changed" in event["note"]
        held = await eventually(lambda: events(kube_client, ns, "app", "ReloadSkipped"))
        assert held and "pause-period 4s" in held[0]["note"]
    assert running.audit().ok, running.audit().message


async def test_renamed_annotations(kube_cluster, kube_client: Client, namespace: str) -> None:
    """Reloader's rename flags (its chart's ``custom_annotations``): the renamed keys are read, the
    default ones they replace are not."""
    ns = namespace
    await kube_client.create(config_map("conf", ns, {"k": "1"}))
    await kube_client.create(config_map("skipped", ns, {"k": "1"}, annotations={"example.com/skip": "true"}))
    volumes = [cm_volume("conf"), cm_volume("skipped")]
    await kube_client.create(deployment("renamed", ns, pod_spec(volumes=volumes), {"example.com/reload": "true"}))
    await kube_client.create(deployment("default-key", ns, pod_spec(volumes=volumes), AUTO))
    op = reloader(auto_annotation="example.com/reload", ignore_annotation="example.com/skip")
    async with run_operator(kube_cluster, kube_client, op, ns) as running:
        await wait_recorded(kube_client, DEPLOYMENTS, "renamed", ns)
        await kube_client.patch("configmaps", "skipped", {"data": {"k": "2"}}, ns)
        await asyncio.sleep(QUIET)
        assert revision(await kube_client.get(DEPLOYMENTS, "renamed", ns)) == 1, "ignored by the renamed key"
        await kube_client.patch("configmaps", "conf", {"data": {"k": "2"}}, ns)
        await wait_for(kube_client, DEPLOYMENTS, "renamed", ns, lambda d: revision(d) == 2, timeout=30)
        other = await kube_client.get(DEPLOYMENTS, "default-key", ns)
        assert revision(other) == 1 and recorded(other) is None, "the replaced key is not read"
    assert running.audit().ok, running.audit().message


async def test_reloader_selector_syntax(kube_cluster, kube_client: Client, namespace: str) -> None:
    """``key:*`` / ``key:value`` (and repeated flags) select what Reloader selects."""
    ns = namespace
    await kube_client.create(config_map("labelled", ns, {"k": "1"}, labels={"team": "web"}))
    await kube_client.create(config_map("other-team", ns, {"k": "1"}, labels={"team": "db"}))
    await kube_client.create(deployment("app", ns, pod_spec(volumes=[cm_volume("labelled")]), AUTO))
    await kube_client.create(deployment("db", ns, pod_spec(volumes=[cm_volume("other-team")]), AUTO))
    op = reloader(namespace_selector=("reloader:*", "tier:backend"), resource_label_selector="team:web")
    async with run_operator(kube_cluster, kube_client, op, ns) as running:
        await asyncio.sleep(1)
        assert recorded(await kube_client.get(DEPLOYMENTS, "app", ns)) is None, "namespace not selected yet"
        await kube_client.patch("namespaces", ns, {"metadata": {"labels": {"reloader": "enabled",
                                                                           "tier": "backend"}}})
        await wait_recorded(kube_client, DEPLOYMENTS, "app", ns)  # "db" tracks nothing: no record
        await kube_client.patch("configmaps", "labelled", {"data": {"k": "2"}}, ns)
        await kube_client.patch("configmaps", "other-team", {"data": {"k": "2"}}, ns)
        await wait_for(kube_client, DEPLOYMENTS, "app", ns, lambda d: revision(d) == 2, timeout=30)
        await asyncio.sleep(QUIET)
        assert revision(await kube_client.get(DEPLOYMENTS, "db", ns)) == 1, "team:db is not selected"
    assert running.audit().ok, running.audit().message


# --- the security model -------------------------------------------------------------------------------------

TENANT_ROLE = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
               "rules": [{"apiGroups": [""], "resources": ["configmaps", "secrets"], "verbs": ["*"]},
                         {"apiGroups": ["apps"], "resources": ["deployments"], "verbs": ["*"]}]}


async def tenant_client(cluster: Any, admin: Client, ns: str) -> Client:
    """A client acting as a tenant who may edit ConfigMaps, Secrets and Deployments in ``ns`` only."""
    await admin.create({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "tenant",
                                                                                     "namespace": ns}})
    await admin.create({**TENANT_ROLE, "metadata": {"name": "tenant", "namespace": ns}})
    await admin.create({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
                        "metadata": {"name": "tenant", "namespace": ns},
                        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "tenant"},
                        "subjects": [{"kind": "ServiceAccount", "name": "tenant", "namespace": ns}]})
    with tempfile.TemporaryDirectory() as tmp:
        path = await asyncio.to_thread(cluster.service_account_kubeconfig, ns, "tenant", Path(tmp) / "kc")
        return await Client.from_kubeconfig(str(path))


async def test_a_tenant_cannot_make_it_touch_another_namespace(kube_cluster, kube_client: Client,
                                                               namespace: str) -> None:
    """A tenant of namespace A does everything it can (same-named ConfigMaps, reload annotations naming
    B's objects by name, path and pattern, search/match, changes): the workload in B is never written
    by the operator after its first-sight record; B's own change still rolls it (so B is watched)."""
    a, b = namespace, f"{namespace}-b"
    await kube_client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": b}})
    try:
        await kube_client.create(config_map("shared", b, {"k": "1"}))
        await kube_client.create(config_map("only-in-b", b, {"k": "1"}))
        await kube_client.create(deployment("victim", b, pod_spec(volumes=[cm_volume("shared")]), {
            **AUTO, "configmap.reloader.stakater.com/reload": "only-in-b"}))
        tenant = await tenant_client(kube_cluster, kube_client, a)
        try:
            async with run_operator(kube_cluster, kube_client, reloader(), a,
                                    watch_namespaces=[a, b]) as running:
                victim = await wait_recorded(kube_client, DEPLOYMENTS, "victim", b)
                await attack_from(tenant, a, b)
                # The tenant's own workload rolls for its own ConfigMap: its changes were processed.
                await wait_for(kube_client, DEPLOYMENTS, "mine", a, lambda d: revision(d) >= 2, timeout=30)
                await asyncio.sleep(QUIET)
                untouched = await kube_client.get(DEPLOYMENTS, "victim", b)
                # A Deployment's generation moves with any change of its spec or annotations; its
                # resourceVersion also moves with the status its own controller writes, so it would not do.
                assert untouched["metadata"]["generation"] == victim["metadata"]["generation"]
                assert untouched["metadata"]["annotations"] == victim["metadata"]["annotations"]
                assert untouched["spec"] == victim["spec"]
                await running.events_sent()
                assert not await events(kube_client, b, "victim", "Reloaded")
                # Control: B's own change rolls B (the operator does watch B).
                await kube_client.patch("configmaps", "shared", {"data": {"k": "b-changed"}}, b)
                await wait_for(kube_client, DEPLOYMENTS, "victim", b, lambda d: revision(d) == 2, timeout=30)
            assert running.audit().ok, running.audit().message
        finally:
            await tenant.close()
    finally:
        await kube_client.delete("namespaces", b)


async def attack_from(tenant: Client, a: str, b: str) -> None:
    """Everything the tenant can do in A to reach B's workload through the operator."""
    try:
        await tenant.patch("configmaps", "shared", {"data": {"k": "x"}}, b)
        raise AssertionError("the tenant must not be able to edit B directly")
    except Forbidden:
        pass
    match = {"reloader.stakater.com/match": "true"}
    await tenant.create(config_map("shared", a, {"k": "1"}, annotations=match))
    await tenant.create(config_map("only-in-b", a, {"k": "1"}))
    names = f"shared,only-in-b,{b}/shared,../{b}/only-in-b,.*"
    await tenant.create(deployment("mine", a, pod_spec(volumes=[cm_volume("shared")]), {
        **AUTO, "reloader.stakater.com/search": "true", "configmap.reloader.stakater.com/reload": names,
        "secret.reloader.stakater.com/reload": f"{b}/any,.*"}))
    await wait_for(tenant, DEPLOYMENTS, "mine", a, lambda d: recorded(d) is not None, timeout=30)
    for value in ("2", "3"):
        await tenant.patch("configmaps", "shared", {"data": {"k": value}}, a)
        await tenant.patch("configmaps", "only-in-b", {"data": {"k": value}}, a)
        await asyncio.sleep(0.7)


async def longest_stall(stop: asyncio.Event) -> float:
    """The longest time the event loop (the operator runs in it) went without running this task."""
    loop, worst = asyncio.get_running_loop(), 0.0
    while not stop.is_set():
        before = loop.time()
        await asyncio.sleep(0.05)
        worst = max(worst, loop.time() - before)
    return worst


EVIL = ".*?.*?(?:a|aa)(?:a|aa)(?:a|aa)(?:a|aa)q0b"  # 16-32 ms per 250-character name in Python's engine


async def rollout_seconds(admin: Client, b: str, revision_now: int) -> float:
    started = time.monotonic()
    await admin.patch("configmaps", "shared", {"data": {"k": str(revision_now)}}, b)
    await wait_for(admin, DEPLOYMENTS, "victim", b, lambda d: revision(d) == revision_now, timeout=120)
    return time.monotonic() - started


async def test_a_tenants_regular_expressions_cannot_stall_the_operator(kube_cluster, kube_client: Client,
                                                                        namespace: str) -> None:
    """The worst a tenant of A can write: 150 ConfigMaps with 250-character names and 3 Deployments, each
    with the 16 expressions it may use, 15 of them catastrophic for a backtracking engine,
    and 50 ConfigMaps touched. B's rollout is measured unloaded and beside it (printed, not asserted);
    what is asserted is the algorithm: the expressions are used (RE2 accepts them; no Warning) and B
    still rolls."""
    a, b = namespace, f"{namespace}-b"
    await kube_client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": b}})
    try:
        await kube_client.create(config_map("shared", b, {"k": "1"}))
        await kube_client.create(deployment("victim", b, pod_spec(volumes=[cm_volume("shared")]), AUTO))
        tenant = await tenant_client(kube_cluster, kube_client, a)
        try:
            async with run_operator(kube_cluster, kube_client, reloader(), a, watch_namespaces=[a, b]) as running:
                await wait_recorded(kube_client, DEPLOYMENTS, "victim", b)
                unloaded = await rollout_seconds(kube_client, b, 2)
                names = [f"{'a' * 246}{i:04d}" for i in range(150)]
                for name in names:
                    await tenant.create(config_map(name, a, {"k": "1"}))
                # 15 that match nothing, and one that matches names[1] (so the workloads record a hash)
                expressions = ",".join([EVIL, *(f"{EVIL[:-3]}q{i}b" for i in range(1, 15)), "a+0001"])
                for d in range(3):
                    await tenant.create(deployment(f"mine-{d}", a, pod_spec(), {
                        "configmap.reloader.stakater.com/reload": expressions}))
                for d in range(3):
                    await wait_recorded(kube_client, DEPLOYMENTS, f"mine-{d}", a)
                stop = asyncio.Event()
                stall = asyncio.create_task(longest_stall(stop))
                async def churn() -> None:  # one after another, as a script would: one connection, no TLS
                    for n in names[:50]:      # handshakes of the test's own client in the measured loop
                        await tenant.patch("configmaps", n, {"data": {"k": "2"}}, a)
                touch = asyncio.create_task(churn())
                loaded = await rollout_seconds(kube_client, b, 3)
                await touch
                stop.set()
                print(f"\nB's rollout: {unloaded:.2f}s unloaded, {loaded:.2f}s beside A's worst admitted input; "
                      f"longest event-loop stall {await stall * 1000:.0f} ms")
                await running.events_sent()
                assert not await events(kube_client, a, "mine-0", "ReloadConfigInvalid")
            assert running.audit().ok, running.audit().message
        finally:
            await tenant.close()
    finally:
        await kube_client.delete("namespaces", b)


# --- `kubeloop run reloader` with Reloader's arguments --------------------------------------------------------

async def kubeloop_run(*args: str) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        sys.executable, "-m", "kubeloop.cli.main", "run", "reloader", *args,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)


async def test_kubeloop_run_with_reloaders_arguments(kube_cluster, kube_client: Client, namespace: str) -> None:
    """The arguments Reloader's chart writes, end to end in a real process."""
    ns = namespace
    await kube_client.create(config_map("conf", ns, {"k": "1"}))
    await kube_client.create(deployment("app", ns, pod_spec(volumes=[cm_volume("conf")]), AUTO))
    await kube_client.patch("namespaces", ns, {"metadata": {"labels": {"reloader": "enabled"}}})
    proc = await kubeloop_run(
        "--kubeconfig", str(kube_cluster.kubeconfig), f"--namespaces={ns}", "--enable-ha=true",
        "--leader-election-namespace", ns, '--namespace-selector="reloader:enabled"',
        "--resource-label-selector=team:*", "--reload-strategy=env-vars", "--ignored-workload-types=jobs,cronjobs",
        "--resources-to-ignore=secrets", "--reload-on-create=true", "--is-Argo-Rollouts=false",
        "--log-level=info", "--metrics-bind-address=0", "--health-probe-bind-address=0")
    try:
        await wait_for(kube_client, DEPLOYMENTS, "app", ns, lambda d: revision(d) == 1, timeout=30)
        await asyncio.sleep(QUIET)  # the ConfigMap has no "team" label: it is not selected, nothing rolls
        assert revision(await kube_client.get(DEPLOYMENTS, "app", ns)) == 1
        # Gaining the label is the ConfigMap's creation as Reloader's filtered watch sees it (ADDED), and
        # --reload-on-create=true rolls on a creation; then a change of its data rolls again.
        await kube_client.patch("configmaps", "conf", {"metadata": {"labels": {"team": "web"}}}, ns)
        await wait_for(kube_client, DEPLOYMENTS, "app", ns, lambda d: revision(d) == 2, timeout=30)
        await kube_client.patch("configmaps", "conf", {"data": {"k": "2"}}, ns)
        rolled = await wait_for(kube_client, DEPLOYMENTS, "app", ns, lambda d: revision(d) == 3, timeout=30)
        env = rolled["spec"]["template"]["spec"]["containers"][0].get("env") or []
        assert [e["name"] for e in env] == ["STAKATER_CONF_CONFIGMAP"]  # Reloader's env-vars strategy
        lease = await kube_client.get("leases.coordination.k8s.io", "reloader-leader", ns)
        assert lease["spec"]["holderIdentity"], "--enable-ha is leader election"
    except BaseException:
        await stop(proc)  # the operator's log says why
        raise
    err = await stop(proc)
    assert proc.returncode == 0, err[-2000:]


async def stop(proc: asyncio.subprocess.Process) -> str:
    if proc.returncode is None:
        proc.send_signal(signal.SIGTERM)
    _, err = await asyncio.wait_for(proc.communicate(), 30)
    print(err.decode()[-3000:])
    return err.decode()


async def test_kubeloop_run_refuses_what_it_cannot_honour(kube_cluster) -> None:
    kubeconfig = ("--kubeconfig", str(kube_cluster.kubeconfig))
    for args, named in ((["--namespace-selector", "reloader:enabled:yes"], "--namespace-selector"),
                        (["--webhook-url", "https://hooks.example/x"], "--webhook-url"),
                        (["--resources-to-ignore=secrets", "--resources-to-ignore=configmaps"],
                         "--resources-to-ignore")):
        proc = await kubeloop_run(*kubeconfig, *args)
        _, err = await asyncio.wait_for(proc.communicate(), 60)
        assert proc.returncode == 2, err.decode()[-2000:]
        assert "Error: " in err.decode() and named in err.decode(), err.decode()[-2000:]
        assert "Traceback" not in err.decode(), err.decode()[-2000:]


# --- Argo Rollouts and CronJobs, as Reloader reloads them ----------------------------------------------------

ROLLOUT_CRD = {
    "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
    "metadata": {"name": "rollouts.argoproj.io"},
    "spec": {"group": "argoproj.io", "scope": "Namespaced",
             "names": {"plural": "rollouts", "singular": "rollout", "kind": "Rollout", "listKind": "RolloutList"},
             "versions": [{"name": "v1alpha1", "served": True, "storage": True, "subresources": {"status": {}},
                           "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                               "spec": {"type": "object", "properties": {
                                   "replicas": {"type": "integer"}, "paused": {"type": "boolean"},
                                   "restartAt": {"type": "string", "format": "date-time"},
                                   **{f: {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
                                      for f in ("selector", "template", "strategy")}}},
                               "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}}}}]}}


async def install_rollout_crd(client: Client) -> None:
    await client.apply(ROLLOUT_CRD, field_manager="kubeloop-test", force=True)
    await wait_for(client, "customresourcedefinitions.apiextensions.k8s.io", "rollouts.argoproj.io", timeout=30,
                   predicate=lambda crd: any(c["type"] == "Established" and c["status"] == "True"
                                             for c in (crd.get("status") or {}).get("conditions") or ()))


def rollout(name: str, ns: str, spec: Obj, annotations: dict[str, str]) -> Obj:
    return {"apiVersion": "argoproj.io/v1alpha1", "kind": "Rollout",
            "metadata": {"name": name, "namespace": ns, "annotations": annotations},
            "spec": {"replicas": 1, "selector": {"matchLabels": {"app": name}},
                     "strategy": {"canary": {"steps": [{"setWeight": 50}]}},
                     "template": {"metadata": {"labels": {"app": name}}, "spec": spec}}}


async def test_argo_rollouts_both_strategies(kube_cluster, kube_client: Client, namespace: str) -> None:
    """a Rollout gets the template change (a merge patch keeping its other containers and
    env), or ``spec.restartAt`` when annotated ``rollout-strategy: restart``."""
    ns = namespace
    await install_rollout_crd(kube_client)
    await kube_client.create(config_map("conf", ns, {"k": "1"}))
    spec = pod_spec(volumes=[cm_volume("conf")], env=[{"name": "KEEP", "value": "me"}])
    spec["containers"].append({"name": "sidecar", "image": "busybox", "env": [{"name": "S", "value": "1"}]})
    resource = "rollouts.argoproj.io"
    await kube_client.create(rollout("web", ns, spec, AUTO))
    await kube_client.create(rollout("restarting", ns, spec, {
        **AUTO, "reloader.stakater.com/rollout-strategy": "restart"}))
    op = reloader(argo_rollouts=True, reload_strategy="env-vars")
    async with run_operator(kube_cluster, kube_client, op, ns) as running:
        before = {n: await wait_for(kube_client, resource, n, ns, lambda r: recorded(r) is not None, timeout=30)
                  for n in ("web", "restarting")}
        await kube_client.patch("configmaps", "conf", {"data": {"k": "2"}}, ns)
        web = await wait_for(kube_client, resource, "web", ns, timeout=30,
                             predicate=lambda r: recorded(r) != recorded(before["web"]))
        app, sidecar = web["spec"]["template"]["spec"]["containers"]
        assert [e["name"] for e in app["env"]] == ["KEEP", "STAKATER_CONF_CONFIGMAP"]
        assert app["image"] == "nginx:1.27" and app["volumeMounts"] and sidecar == spec["containers"][1]
        restarted = await wait_for(kube_client, resource, "restarting", ns, timeout=30,
                                   predicate=lambda r: bool(r["spec"].get("restartAt")))
        assert restarted["spec"]["template"] == before["restarting"]["spec"]["template"]
        assert recorded(restarted) != recorded(before["restarting"])
    assert running.audit().ok, running.audit().message


async def test_cronjob_create_job(kube_cluster, kube_client: Client, namespace: str) -> None:
    """with --cronjob-action create-job a change runs a Job from the CronJob's template,
    owned by the CronJob, as Reloader does; the CronJob's template stays as it is."""
    ns = namespace
    await kube_client.create(config_map("report-conf", ns, {"k": "1"}))
    job_pod = {**pod_spec(env_from=[{"configMapRef": {"name": "report-conf"}}]), "restartPolicy": "Never"}
    await kube_client.create({
        "apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "report", "namespace": ns,
                                                                  "annotations": AUTO},
        "spec": {"schedule": "0 0 1 1 *", "suspend": True, "jobTemplate": {
            "metadata": {"labels": {"team": "reports"}}, "spec": {"template": {"spec": job_pod}}}}})
    op = reloader(reload_cronjobs=True, cronjob_action="create-job")
    async with run_operator(kube_cluster, kube_client, op, ns) as running:
        first = await wait_recorded(kube_client, "cronjobs.batch", "report", ns)
        await kube_client.patch("configmaps", "report-conf", {"data": {"k": "2"}}, ns)
        cron = await wait_for(kube_client, "cronjobs.batch", "report", ns, timeout=30,
                              predicate=lambda c: recorded(c) != recorded(first))
        (job,) = (await kube_client.list("jobs.batch", ns))["items"]
        assert job["metadata"]["annotations"]["cronjob.kubernetes.io/instantiate"] == "manual"
        assert job["metadata"]["labels"]["team"] == "reports"
        (owner,) = job["metadata"]["ownerReferences"]
        assert (owner["kind"], owner["name"], owner["uid"]) == ("CronJob", "report", cron["metadata"]["uid"])
        assert job["spec"]["template"]["spec"]["containers"][0]["envFrom"] == job_pod["containers"][0]["envFrom"]
        assert cron["spec"]["jobTemplate"]["spec"]["template"] == first["spec"]["jobTemplate"]["spec"]["template"]
        await asyncio.sleep(QUIET)
        assert len((await kube_client.list("jobs.batch", ns))["items"]) == 1, "one Job per change"
    assert running.audit().ok, running.audit().message
