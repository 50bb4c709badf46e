"""Bad input, three kinds:

1. Invalid custom resources: the API server refuses each one, naming the field (generated structural
   schema, enums, bounds, patterns and CEL) — a table per bundled CRD.
2. Odd but valid objects, generated with hypothesis (missing optional fields, unicode, huge lists,
   objects near the size limits): no reconciler or informer dies, the problem shows in status or
   events, and the operator keeps serving everything else (a canary converges afterwards).
   ``KUBELOOP_FUZZ_EXAMPLES`` (default 6) scales it.
3. Hostile configuration: a ChaosAgent without exclusions, a CopyratorRule reaching for a Secret
   without consent, a workload whose rollouts rewrite its own ConfigMap: contained, with a clear message.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest
import pytest_asyncio
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

from harness.faults.badinput import INVALID, agent, ic, refusal, rule
from kubeloop.client import ApiError, Client, Invalid
from kubeloop.operators.blackadder import ChaosAgent
from kubeloop.operators.blackadder import build_operator as build_blackadder
from kubeloop.operators.blackadder.settings import BlackadderSettings
from kubeloop.operators.copyrator import operator as copyrator
from kubeloop.operators.copyrator.models import CopyratorRule
from kubeloop.operators.immortal import ImmortalContainer
from kubeloop.operators.immortal import operator as immortal
from kubeloop.operators.reloader import build_operator as build_reloader
from kubeloop.operators.reloader.policy import HASH, TEMPLATE_HASH
from kubeloop.operators.reloader.settings import ReloaderSettings
from kubeloop.testing import wait_for, wait_for_deletion, wait_for_events
from kubeloop.testing.operator import RunningOperator, install_crds, run_operator
from kubeloop.testing.podsecurity import relax, restricted

Obj = dict[str, Any]
EXAMPLES = int(os.environ.get("KUBELOOP_FUZZ_EXAMPLES", "6"))
IC, RULE, AGENT = ImmortalContainer.resource(), CopyratorRule.resource(), ChaosAgent.resource()
MIB = 1024 * 1024
AUTO = {"reloader.stakater.com/auto": "true"}


def template_annotations(workload: Obj) -> dict[str, str]:
    return (workload["spec"]["template"].get("metadata") or {}).get("annotations") or {}


# --- 1. invalid objects, refused with field paths -----------------------------------------------------------


@pytest_asyncio.fixture(scope="module", loop_scope="session", autouse=True)
async def crds_installed(kube_client: Client) -> AsyncIterator[dict[str, bool]]:
    """Installs the bundled CRDs on first use; afterwards removes the ChaosAgent CRD again, whose stored
    version (v1beta1) would otherwise keep tests that install their own v1alpha1-only ChaosAgent CRD
    (test_crd_generation) from doing so on the same cluster."""
    done: dict[str, bool] = {}
    yield done
    with contextlib.suppress(ApiError):
        await kube_client.delete("customresourcedefinitions", "chaosagents.blackadder.io")
        await wait_for_deletion(kube_client, "customresourcedefinitions", "chaosagents.blackadder.io", timeout=60)


async def _install_all(client: Client, done: dict[str, bool]) -> None:
    if not done:
        for op in (immortal, copyrator, build_blackadder()):
            await install_crds(client, op)
        done["yes"] = True


@pytest.mark.parametrize("case,body,field,fragment", INVALID, ids=[c[0] for c in INVALID])
async def test_invalid_objects_are_refused_with_field_paths(kube_client: Client, namespace: str,
                                                            crds_installed: dict[str, bool], case: str,
                                                            body: Callable[[str], Obj], field: str,
                                                            fragment: str) -> None:
    await _install_all(kube_client, crds_installed)
    answer = await refusal(kube_client, body(namespace))
    assert answer is not None, f"{case}: accepted"
    fields, message = answer
    assert field in fields, f"{case}: the refusal should name {field}: {message}"
    assert fragment in message, f"{case}: {message}"


async def test_the_valid_bases_are_accepted_and_unknown_fields_refused_when_strict(
        kube_client: Client, namespace: str, crds_installed: dict[str, bool]) -> None:
    """The table's objects differ from accepted ones in the named field only."""
    await _install_all(kube_client, crds_installed)
    for body in (ic(namespace, {"image": "nginx"}), rule(namespace), agent(namespace)):
        await kube_client.create(body, dry_run=True)
    with pytest.raises(ApiError) as refused:  # 400: strict decoding fails before validation
        await kube_client.create(ic(namespace, {"image": "nginx", "imagee": "typo"}), dry_run=True,
                                 field_validation="Strict")
    assert 'unknown field "spec.imagee"' in refused.value.message


# --- 2. odd but valid objects, generated -------------------------------------------------------------------


def fuzz(loop: asyncio.AbstractEventLoop, strategy: Any, create: Callable[[Any], Awaitable[bool]],
         examples: list[Any] = ()) -> None:
    """Runs hypothesis in this (worker) thread; each example is created on the test's event loop.
    Derandomized (repeatable) and without an example database (nothing written to the repository)."""

    @settings(max_examples=EXAMPLES, deadline=None, database=None, derandomize=True,
              suppress_health_check=list(HealthCheck))
    @given(strategy)
    def one(value: Any) -> None:
        assume(asyncio.run_coroutine_threadsafe(create(value), loop).result(120))

    for value in examples:
        one = example(value)(one)
    one()


def alive(running: RunningOperator) -> None:
    """No informer task died (a crash would end it) and the operator still leads."""
    for informer in running.manager.cache.informers:
        task = informer._task
        assert task is not None and not task.done(), f"informer {informer.resource} stopped"
    assert running.manager.started.is_set()


text = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=40)
label_values = st.from_regex(r"\A([A-Za-z0-9][-A-Za-z0-9_.]{0,20})?[A-Za-z0-9]?\Z")

ic_templates = st.fixed_dictionaries({}, optional={
    "labels": st.dictionaries(st.from_regex(r"\A[a-z]{1,10}\Z"), st.one_of(label_values, text), max_size=4),
    "annotations": st.dictionaries(st.from_regex(r"\A[a-z]{1,10}\Z"), text, max_size=4),
    "args": st.lists(text, max_size=300),
    "env": st.lists(st.fixed_dictionaries({"name": st.one_of(st.from_regex(r"\A[A-Z_]{1,12}\Z"), text),
                                           "value": text}), max_size=20),
    "command": st.lists(text, min_size=1, max_size=3),
    "nodeSelector": st.dictionaries(st.from_regex(r"\A[a-z]{1,8}\Z"), label_values, max_size=2),
})
ic_specs = st.fixed_dictionaries({"image": st.one_of(st.just("nginx:latest"), text.filter(bool))},
                                 optional={"template": ic_templates})
# The worst the schema admits: its most args (1,024) at 1,400 characters, an object of ~1.4 MiB; one
# annotation value at its maximum (256 KiB), which with its key is past a pod's 256 KiB of annotations.
NEAR_LIMIT_ARGS = {"image": "nginx", "template": {"args": ["x" * 1400] * 1024}}
HUGE_ANNOTATIONS = {"image": "nginx", "template": {"annotations": {"huge-value": "y" * 262_144}}}


def reported(obj: Obj) -> bool:
    return bool((obj.get("status") or {}).get("conditions"))


async def test_fuzzed_immortal_containers(kube_cluster: Any, kube_client: Client, namespace: str) -> None:
    # immortal runs the image as written, without a securityContext of its own: the canary's nginx runs
    # as root, which the test namespace's "restricted" standard refuses (test_op_immortal shows that).
    await relax(kube_client, namespace)
    created: list[str] = []
    specs: list[Obj] = []

    async def create(spec: Obj) -> bool:
        name = f"f-{len(created):03d}"
        try:
            await kube_client.create(ic(namespace, spec) | {"metadata": {"name": name, "namespace": namespace}})
        except ApiError:
            return False  # not API-valid: not what this test is about
        created.append(name)
        specs.append(spec)
        return True

    async with run_operator(kube_cluster, kube_client, immortal, namespace) as running:
        await asyncio.to_thread(fuzz, asyncio.get_running_loop(), ic_specs, create,
                                [NEAR_LIMIT_ARGS, HUGE_ANNOTATIONS])
        assert len(created) >= 2
        for name in created:  # every one is reported on: running, or why not
            await wait_for(kube_client, IC, name, namespace, reported, timeout=60,
                           description="a condition in status (Available, or ReplicaFailure with the reason)")
        huge = next(n for n, spec in zip(created, specs, strict=True) if spec == HUGE_ANNOTATIONS)
        obj = await kube_client.get(IC, huge, namespace)
        failure = [c for c in obj["status"]["conditions"] if c["type"] == "ReplicaFailure"]
        assert failure and failure[0]["reason"] == "FailedCreate", obj["status"]
        await kube_client.create(ic(namespace, {"image": "nginx"})
                                 | {"metadata": {"name": "canary", "namespace": namespace}})
        await wait_for(kube_client, IC, "canary", namespace, lambda o: (o.get("status") or {}).get("startTimes") == 1,
                       timeout=60, description="the canary to run")
        alive(running)


source_data = st.dictionaries(st.from_regex(r"\A[-._a-zA-Z0-9]{1,30}\Z"),
                              st.one_of(text, st.text(max_size=5000), st.just("")), max_size=12)


async def test_fuzzed_copyrator_sources(kube_cluster: Any, kube_client: Client, namespace: str) -> None:
    target = f"{namespace}-to"
    await kube_client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {
        "name": target, "labels": {"kubeloop.dev/test": "true", f"fuzz-{namespace}": "yes"}}})
    sources: dict[str, Obj] = {}

    async def create(data: dict[str, str]) -> bool:
        name = f"src-{len(sources):03d}"
        try:
            await kube_client.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {
                "name": name, "namespace": namespace, "labels": {"fuzz": "yes"}}, "data": data})
        except (Invalid, ApiError):
            return False
        sources[name] = data
        return True

    try:
        async with run_operator(kube_cluster, kube_client, copyrator, namespace, watch_namespaces=None) as running:
            await kube_client.create(rule(namespace, selector={"fuzz": "yes"},
                                          namespaceSelector={"matchLabels": {f"fuzz-{namespace}": "yes"}})
                                     | {"metadata": {"name": "fuzz", "namespace": namespace}})
            near_limit = {"big": "z" * (MIB - 4096), "unicode": "ünïcødé ✓ 🚀"}
            await asyncio.to_thread(fuzz, asyncio.get_running_loop(), source_data, create, [near_limit, {}])
            for name, data in sources.items():
                copy = await wait_for(kube_client, "configmaps", name, target, timeout=60,
                                      description=f"the copy of {name}")
                assert (copy.get("data") or {}) == data
            await create({"canary": "sings"})
            await wait_for(kube_client, "configmaps", f"src-{len(sources) - 1:03d}", target, timeout=60)
            status = (await wait_for(kube_client, RULE, "fuzz", namespace,
                                     lambda o: (o.get("status") or {}).get("copyCount") == len(sources), timeout=60,
                                     description="every source counted as copied"))["status"]
            ready = next(c for c in status["conditions"] if c["type"] == "Ready")
            assert not status.get("conflicts") and ready["status"] == "True", status
            alive(running)
            await kube_client.delete(RULE, "fuzz", namespace)  # its finalizer removes the copies
            await wait_for_deletion(kube_client, RULE, "fuzz", namespace, timeout=60)
    finally:
        with contextlib.suppress(ApiError):
            await kube_client.delete("namespaces", target)


refs = st.sampled_from(["env", "envFrom", "volume", "projected", "missing", "optional-missing"])


async def test_fuzzed_reloader_workloads(kube_cluster: Any, kube_client: Client, namespace: str) -> None:
    op = build_reloader()
    op.settings = ReloaderSettings(debounce_seconds=0.3)
    made: list[tuple[str, str]] = []

    async def create(value: tuple[dict[str, str], str]) -> bool:
        data, how = value
        i = len(made)
        name, cm = f"app-{i:03d}", f"conf-{i:03d}"
        container: Obj = {"name": "app", "image": "nginx"}
        volumes: list[Obj] = []
        if how in ("env", "missing", "optional-missing"):
            key = next(iter(data), "k")
            container["env"] = [{"name": "X", "valueFrom": {"configMapKeyRef": {
                "name": cm, "key": key, **({"optional": True} if how == "optional-missing" else {})}}}]
        elif how == "envFrom":
            container["envFrom"] = [{"prefix": "P_", "configMapRef": {"name": cm}}]
        else:
            source = {"configMap": {"name": cm}}
            volumes = [{"name": "v", **source} if how == "volume"
                       else {"name": "v", "projected": {"sources": [source]}}]
            container["volumeMounts"] = [{"name": "v", "mountPath": "/etc/conf"}]
        try:
            if how not in ("missing", "optional-missing"):
                await kube_client.create({"apiVersion": "v1", "kind": "ConfigMap",
                                          "metadata": {"name": cm, "namespace": namespace}, "data": data})
            await kube_client.create({
                "apiVersion": "apps/v1", "kind": "Deployment",
                "metadata": {"name": name, "namespace": namespace, "annotations": AUTO},
                "spec": {"replicas": 0, "selector": {"matchLabels": {"app": name}},
                         "template": {"metadata": {"labels": {"app": name}},
                                      "spec": {"containers": [container], "volumes": volumes}}}})
        except (Invalid, ApiError):
            return False
        made.append((name, how))
        return True

    async with run_operator(kube_cluster, kube_client, op, namespace) as running:
        await asyncio.to_thread(fuzz, asyncio.get_running_loop(), st.tuples(source_data, refs), create,
                                [({"big": "q" * (MIB - 4096)}, "volume"), ({"k": "v"}, "missing")])
        for name, how in made:
            if how == "missing":  # reported as an event; no hash until the object exists
                await wait_for_events(kube_client, namespace, name, "ReloadSourceMissing", timeout=60)
            else:
                await wait_for(kube_client, "deployments.apps", name, namespace,
                               lambda d: HASH in (d["metadata"].get("annotations") or {}), timeout=60,
                               description="the first hash to be recorded")
        name, how = next((n, h) for n, h in made if h == "volume")
        i = name.split("-")[1]
        await kube_client.patch("configmaps", f"conf-{i}", {"data": {"changed": "yes ✓"}}, namespace)
        await wait_for(kube_client, "deployments.apps", name, namespace,
                       lambda d: TEMPLATE_HASH in template_annotations(d),
                       timeout=60, description="the rollout after a change")
        alive(running)


# --- 3. hostile configuration ---------------------------------------------------------------------------------


async def test_chaos_agent_without_exclusions_is_contained(kube_cluster: Any, kube_client: Client,
                                                           namespace: str) -> None:
    """Every mode on, eagerness 100, no selector, no exclusion (in dry run, so that the shared test cluster
    is not harmed): the agent picks victims, but never in kube-system, kube-public, kube-node-lease, the
    operator's own namespace or a namespace that opted out."""
    run = secrets.token_hex(3)
    op = build_blackadder(agent_selector=f"faults-test={run}")
    # In a cluster: the pod's namespace (the kubeconfig's is not).
    op.settings = BlackadderSettings(operator_namespace=namespace)
    opted_out = f"{namespace}-out"
    await kube_client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {
        "name": opted_out, "labels": {"kubeloop.dev/test": "true"}, "annotations": {"blackadder.io/exclude": "true"}}})
    victim_ns = f"{namespace}-in"
    await kube_client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {
        "name": victim_ns, "labels": {"kubeloop.dev/test": "true"}}})
    for ns in (namespace, opted_out, victim_ns):
        await kube_client.create({"apiVersion": "v1", "kind": "ConfigMap",
                                  "metadata": {"name": "precious", "namespace": ns}, "data": {"k": "v"}})
    name = f"reckless-{run}"
    try:
        async with run_operator(kube_cluster, kube_client, op, namespace, watch_namespaces=None):
            # AGENT is the hub, v1beta2, where the article's pauseDuration is named pauseSeconds.
            await kube_client.create({"apiVersion": AGENT.api_version, "kind": "ChaosAgent",
                                      "metadata": {"name": name, "labels": {"faults-test": run}},
                                      "spec": {"tantrumMode": True, "cancerMode": True, "ipsumMode": True,
                                               "eagerness": 100, "minPodAgeSeconds": 0, "excludedNamespaces": [],
                                               "dryRun": True, "seed": 7, "pauseSeconds": 3600}})
            done = await wait_for(kube_client, AGENT, name, None,
                                  lambda o: ((o.get("status") or {}).get("round") or 0) >= 1,
                                  timeout=60, description="the first round")
            assert (done["status"]["counters"] or {}).get("ipsum", 0) > 0, done["status"]
            await wait_for_events(kube_client, victim_ns, "precious", "DryRunConfigMapRewritten", timeout=60)
            for ns in ("kube-system", "kube-public", "kube-node-lease", namespace, opted_out):
                events = (await kube_client.list("events.events.k8s.io", ns))["items"]
                touched = [e for e in events if e.get("reportingController", "").startswith("blackadder")
                           or "blackadder" in (e.get("reportingInstance") or "")
                           or (e.get("reason") or "").startswith("DryRun")]
                assert not touched, f"the agent chose a victim in protected namespace {ns}: {touched[:1]}"
            for ns in (namespace, opted_out, victim_ns):  # dry run: nothing changed anywhere
                assert (await kube_client.get("configmaps", "precious", ns))["data"] == {"k": "v"}
            await kube_client.delete(AGENT, name)
            await wait_for_deletion(kube_client, AGENT, name, timeout=60)
    finally:
        for ns in (opted_out, victim_ns):
            with contextlib.suppress(ApiError):
                await kube_client.delete("namespaces", ns)


async def test_secret_rule_without_consent_copies_nothing(kube_cluster: Any, kube_client: Client,
                                                          namespace: str) -> None:
    target = f"{namespace}-to"
    await kube_client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {
        "name": target, "labels": {"kubeloop.dev/test": "true", f"grab-{namespace}": "yes"}}})
    await kube_client.create({"apiVersion": "v1", "kind": "Secret", "metadata": {
        "name": "db-password", "namespace": namespace, "labels": {"grab": "yes"}},
        "stringData": {"password": "hunter2"}})
    try:
        async with run_operator(kube_cluster, kube_client, copyrator, namespace, watch_namespaces=None):
            await kube_client.create(rule(namespace, ruleType="secret", selector={"grab": "yes"},
                                          namespaceSelector={"matchLabels": {f"grab-{namespace}": "yes"}})
                                     | {"metadata": {"name": "grab", "namespace": namespace}})
            status = (await wait_for(kube_client, RULE, "grab", namespace,
                                     lambda o: bool((o.get("status") or {}).get("skippedSources")), timeout=60,
                                     description="the Secret reported as skipped"))["status"]
            assert status["skippedSources"] == [{"source": f"{namespace}/db-password", "reason": "NoConsent"}]
            assert status["copyCount"] == 0
            assert not (await kube_client.list("secrets", target, field_selector="metadata.name=db-password"))["items"]
            # Consent is the gate: once the Secret's owner allows it, the copy is made.
            await kube_client.patch("secrets", "db-password", {"metadata": {"annotations": {
                "copyrator.flant.com/allow-copy": "true"}}}, namespace)
            await wait_for(kube_client, "secrets", "db-password", target, timeout=60)
            await kube_client.delete(RULE, "grab", namespace)
            await wait_for_deletion(kube_client, RULE, "grab", namespace, timeout=60)
    finally:
        with contextlib.suppress(ApiError):
            await kube_client.delete("namespaces", target)


async def test_a_workload_rewriting_its_own_configmap_is_not_rolled_forever(kube_cluster: Any, kube_client: Client,
                                                                            namespace: str) -> None:
    """Each rollout starts pods that write their start count into the ConfigMap they read (played here by
    the test): reloader rolls a few times, then says it is a loop and stops."""
    op = build_reloader()
    op.settings = ReloaderSettings(debounce_seconds=0.3, loop_rollouts=3, loop_window_seconds=30.0,
                                   max_reloads_per_second=0.0)
    await kube_client.create({"apiVersion": "v1", "kind": "ConfigMap",
                              "metadata": {"name": "self-conf", "namespace": namespace}, "data": {"starts": "0"}})
    await kube_client.create({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "ouroboros", "namespace": namespace, "annotations": AUTO},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "ouroboros"}},
                 "template": {"metadata": {"labels": {"app": "ouroboros"}}, "spec": restricted({"containers": [{
                     "name": "app", "image": "nginx", "envFrom": [{"configMapRef": {"name": "self-conf"}}]}]})}}})
    rollouts: list[str] = []

    async def workload() -> None:  # a new pod template (a rollout) writes the ConfigMap again
        while True:
            dep = await kube_client.get("deployments.apps", "ouroboros", namespace)
            current = template_annotations(dep).get(TEMPLATE_HASH)
            if current and current not in rollouts:
                rollouts.append(current)
                await kube_client.patch("configmaps", "self-conf", {"data": {"starts": str(len(rollouts))}}, namespace)
            await asyncio.sleep(0.2)

    async with run_operator(kube_cluster, kube_client, op, namespace):
        await wait_for(kube_client, "deployments.apps", "ouroboros", namespace,
                       lambda d: HASH in (d["metadata"].get("annotations") or {}), timeout=60)
        await kube_client.patch("configmaps", "self-conf", {"data": {"starts": "kick"}}, namespace)
        pods = asyncio.create_task(workload())
        try:
            (event, *_) = await wait_for_events(kube_client, namespace, "ouroboros", "ReloadLoop", timeout=90)
            settled = len(rollouts)
            await asyncio.sleep(4)  # well past debounce: no further rollout
            assert len(rollouts) == settled, rollouts
        finally:
            pods.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await pods
    assert event["type"] == "Warning" and "NOT rolled out" in event["note"], event
    assert 3 <= settled <= 4, rollouts
