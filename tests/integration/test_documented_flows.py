"""The install-then-run-locally flows the README, the operators' READMEs and docs/howto/packaging.md show,
typed as a user types them, for every bundled operator:

    (crd-rbac)      kubeloop generate crd NAME | kubectl apply --server-side -f -
                    kubeloop generate rbac NAME | kubectl apply --server-side -f -
    (all)           kubeloop generate all NAME -o DIR; kubectl apply --server-side -k DIR
    (helm)          kubeloop generate chart NAME -o DIR; helm install NAME DIR   (CRDs from crds/)
    (install-crds)  kubeloop run NAME --install-crds

then ``kubeloop run NAME`` as a separate process on this machine (with the operator's ServiceAccount
token where the flow made RBAC, else the admin kubeconfig), which does its article's job once and stops
cleanly on SIGTERM. And the reverse: the operator deployed (``generate all``, Helm or ``kubeloop deploy``),
the Deployment scaled to 0, a local run with the Deployment's flags, and the Deployment back.

The CRDs and cluster-scoped RBAC have fixed names (they are the operator's), so a case starts from a
cluster without them and deletes what it made; on a cluster not started by the test session
($KUBELOOP_TEST_KUBECONFIG) the cases are skipped.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import signal
import socket
import subprocess
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import pytest
import yaml

from kubeloop.client import Client, NotFound
from kubeloop.envtest import ExternalCluster
from kubeloop.packaging.helm import ensure_helm
from kubeloop.testing import wait_for, wait_for_crd, wait_for_deletion
from kubeloop.testing.podsecurity import relax, restricted
from kubeloop.testing.session import CRD_LABEL
from kubeloop.testing.session import current as current_session

Obj = dict[str, Any]
OPERATORS = ["immortal", "blackadder", "copyrator", "reloader"]
WAYS = ["crd-rbac", "all", "helm", "install-crds"]
CRDS = {"immortal": ["immortalcontainers.immortalcontainer.flugel.it"],
        "blackadder": ["chaosagents.blackadder.io"],
        "copyrator": ["copyrators.flant.com"],
        "reloader": []}
CLUSTER_KINDS = {"ClusterRole": "clusterroles", "ClusterRoleBinding": "clusterrolebindings",
                 "ValidatingWebhookConfiguration": "validatingwebhookconfigurations",
                 "MutatingWebhookConfiguration": "mutatingwebhookconfigurations"}


def cli(*args: str) -> str:
    proc = subprocess.run([sys.executable, "-m", "kubeloop.cli.main", *args], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, f"kubeloop {' '.join(args)}:\n{proc.stderr}"
    return proc.stdout


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def helm(kube_cluster: Any, tmp_path_factory: pytest.TempPathFactory) -> Callable[..., str]:
    """The helm built from source (cached), with private homes, against the test cluster."""
    binary = ensure_helm()
    home = tmp_path_factory.mktemp("helm-home")
    env = {**os.environ, **{f"HELM_{k}_HOME": str(home / k.lower()) for k in ("CACHE", "CONFIG", "DATA")}}

    def run(*args: str) -> str:
        proc = subprocess.run([str(binary), "--kubeconfig", str(kube_cluster.kubeconfig), *args],
                              capture_output=True, text=True, timeout=120, env=env)
        assert proc.returncode == 0, f"helm {' '.join(args)}:\n{proc.stdout}\n{proc.stderr}"
        return proc.stdout
    return run


@dataclass
class Made:
    """What a flow put on the cluster beyond the test's namespace, to take away again."""

    cluster_scoped: set[tuple[str, str]] = field(default_factory=set)  # (resource, name)
    helm_release: str | None = None


def cluster_scoped(text: str) -> set[tuple[str, str]]:
    return {(CLUSTER_KINDS[d["kind"]], d["metadata"]["name"])
            for d in yaml.safe_load_all(text) if d and d.get("kind") in CLUSTER_KINDS}


async def clear_crds(cluster: Any, client: Client, name: str) -> None:
    """Starts the case without the operator's CRDs and cluster-wide RBAC. The flows install the operator
    under its own fixed names (CRDs, ClusterRoles), so they run only on a cluster the test session
    started, where all of it is a test's; on one given by $KUBELOOP_TEST_KUBECONFIG the case is skipped."""
    if isinstance(cluster, ExternalCluster):
        pytest.skip("installs the operator under its fixed cluster-wide names: only on the session's own cluster")
    for resource in ("clusterrolebindings", "clusterroles"):  # an earlier test's, of the same fixed name
        with contextlib.suppress(NotFound):
            await client.delete(resource, name)
    for crd in CRDS[name]:
        try:
            live = await client.get("customresourcedefinitions", crd)
        except NotFound:
            continue
        await release_leftovers(client, live)
        await client.delete("customresourcedefinitions", crd)
        await wait_for_deletion(client, "customresourcedefinitions", crd, timeout=60)


async def release_leftovers(client: Client, crd: Obj) -> None:
    """Custom resources an earlier test left with a finalizer and no operator to remove it (its namespace
    going, say) would hold the CRD's deletion forever; no operator runs between tests, so they are let go."""
    version = next(v["name"] for v in crd["spec"]["versions"] if v.get("served"))
    resource = f"{crd['spec']['group']}/{version}/{crd['spec']['names']['plural']}"
    for obj in (await client.list(resource))["items"]:
        if obj["metadata"].get("finalizers"):
            with contextlib.suppress(NotFound):
                await client.patch(resource, obj["metadata"]["name"], {"metadata": {"finalizers": None}},
                                   obj["metadata"].get("namespace"))


async def install(way: str, name: str, namespace: str, cluster: Any, client: Client, helm: Callable[..., str],
                  tmp: Path, made: Made) -> Path:
    """Installs ``name`` the ``way`` the docs show; returns the kubeconfig its local run uses."""
    def kubectl(*args: str, input: str | None = None) -> Awaitable[Any]:
        return asyncio.to_thread(cluster.kubectl, *args, input=input)

    if way == "crd-rbac":
        if CRDS[name]:  # reloader has none: `generate crd reloader` says so and fails
            await kubectl("apply", "--server-side", "-f", "-", input=cli("generate", "crd", name))
        rbac = cli("generate", "rbac", name, "--namespace", namespace)
        made.cluster_scoped |= cluster_scoped(rbac)
        await kubectl("apply", "--server-side", "-f", "-", input=rbac)
    elif way == "all":
        out = tmp / "config"
        cli("generate", "all", name, "-o", str(out), "--namespace", namespace)
        made.cluster_scoped |= cluster_scoped("\n---\n".join(p.read_text() for p in out.glob("*.yaml")))
        await kubectl("apply", "--server-side", "-k", str(out))
    elif way == "helm":
        chart = tmp / "charts" / name
        cli("generate", "chart", name, "-o", str(chart))
        made.helm_release = name
        await asyncio.to_thread(helm, "install", name, str(chart), "-n", namespace)
    else:  # install-crds: the run itself installs them, as admin
        return Path(cluster.kubeconfig)
    for crd in CRDS[name]:
        await wait_for_crd(client, crd, timeout=60)
    # The chart's ServiceAccount is the release's fullname, which is the operator's name for release NAME.
    return await asyncio.to_thread(cluster.service_account_kubeconfig, namespace, name, tmp / "sa.kubeconfig")


async def uninstall(client: Client, name: str, namespace: str, helm: Callable[..., str], made: Made) -> None:
    if made.helm_release:
        with contextlib.suppress(AssertionError):
            await asyncio.to_thread(helm, "uninstall", made.helm_release, "-n", namespace, "--wait")
    for resource, obj in made.cluster_scoped:
        with contextlib.suppress(NotFound):
            await client.delete(resource, obj)
    for crd in CRDS[name]:  # helm never deletes crds/; the other ways leave them by design
        with contextlib.suppress(NotFound):
            await client.delete("customresourcedefinitions", crd)
        await wait_for_deletion(client, "customresourcedefinitions", crd, timeout=60)
        current_session().crds.discard(crd)  # gone: nothing left for the session's end to remove


@contextlib.asynccontextmanager
async def local_run(name: str, kubeconfig: Path, namespace: str, logs: Path, *extra: str) -> AsyncIterator[None]:
    """``kubeloop run NAME`` as its own process; after the block, SIGTERM and a clean exit. Its log goes to
    a file (a pipe nobody reads while the test runs would stall a chatty process)."""
    probe = free_port()
    args = ["run", name, "--kubeconfig", str(kubeconfig), "--metrics-bind-address", "0",
            "--health-probe-bind-address", f"127.0.0.1:{probe}", *extra]
    if name == "blackadder":  # its conversion webhook: any free port; its own namespace spared
        args += ["--webhook-port", "0", "--operator-namespace", namespace]
    log = logs / f"{name}.log"
    with log.open("wb") as out:
        proc = await asyncio.create_subprocess_exec(sys.executable, "-m", "kubeloop.cli.main", *args,
                                                    stdout=out, stderr=out)
    try:
        await ready(probe, proc, name, log)
        yield
    finally:
        if proc.returncode is None:
            proc.send_signal(signal.SIGTERM)
        await asyncio.wait_for(proc.wait(), 60)
    text = log.read_text()
    assert proc.returncode == 0 and "Traceback" not in text, text[-3000:]
    # An RBAC denial (the API's 403 says "forbidden"); not the refusal of a namespace being deleted, which
    # an operator watching every namespace meets when an earlier test's namespace goes.
    denied = [line for line in text.splitlines()
              if "forbidden" in line.lower() and "because it is being terminated" not in line]
    assert not denied, "\n".join(denied)


async def ready(port: int, proc: asyncio.subprocess.Process, name: str, log: Path) -> None:
    for _ in range(900):
        with contextlib.suppress(aiohttp.ClientError):
            async with aiohttp.ClientSession() as http, http.get(f"http://127.0.0.1:{port}/readyz") as resp:
                if resp.status == 200:
                    return
        if proc.returncode is not None:
            raise AssertionError(f"kubeloop run {name} exited {proc.returncode}: {log.read_text()[-3000:]}")
        await asyncio.sleep(0.1)
    raise AssertionError(f"kubeloop run {name} never became ready")


# --- each operator's article, once ------------------------------------------------------------------------

async def immortal_job(client: Client, namespace: str) -> None:
    """The article: an ImmortalContainer gets its pod (nginx runs as root: the namespace is "baseline")."""
    await relax(client, namespace)
    ic = "immortalcontainers.immortalcontainer.flugel.it"
    await client.create({"apiVersion": "immortalcontainer.flugel.it/v1alpha1", "kind": "ImmortalContainer",
                         "metadata": {"name": "example", "namespace": namespace}, "spec": {"image": "nginx:latest"}})
    pod = await wait_for(client, "pods", "example-immortalpod", namespace, timeout=60)
    assert pod["spec"]["containers"][0]["image"] == "nginx:latest"
    assert await wait_for(client, ic, "example", namespace, timeout=60,
                          predicate=lambda o: (o.get("status") or {}).get("currentPod") == "example-immortalpod")
    await client.delete(ic, "example", namespace)
    await wait_for_deletion(client, ic, "example", namespace, timeout=60)


async def copyrator_job(client: Client, namespace: str) -> None:
    """The article: a ConfigMap labelled copyrator: "true" is copied into the namespaces in the rule's scope
    (here one namespace labelled for this test, not the whole cluster)."""
    token = secrets.token_hex(4)
    target = f"{namespace}-to"
    await client.create({"apiVersion": "v1", "kind": "Namespace",
                         "metadata": {"name": target, "labels": {"kubeloop-flows": token}}})
    try:
        await client.create({"apiVersion": "v1", "kind": "ConfigMap",
                             "metadata": {"name": "app-config", "namespace": namespace,
                                          "labels": {"copyrator": "true"}}, "data": {"LOG_LEVEL": "info"}})
        await client.create({"apiVersion": "flant.com/v1", "kind": "CopyratorRule",
                             "metadata": {"name": "main-rule", "namespace": namespace},
                             "ruleType": "configmap", "selector": {"copyrator": "true"}, "namespace": namespace,
                             "namespaceSelector": {"matchLabels": {"kubeloop-flows": token}}})
        copy = await wait_for(client, "configmaps", "app-config", target, timeout=60)
        assert copy["data"] == {"LOG_LEVEL": "info"}
        await client.delete("copyrators.flant.com", "main-rule", namespace)
        await wait_for_deletion(client, "copyrators.flant.com", "main-rule", namespace, timeout=60)
    finally:
        with contextlib.suppress(NotFound):
            await client.delete("namespaces", target)


async def reloader_job(client: Client, namespace: str) -> None:
    """The article: a Deployment annotated auto: "true" rolls when the ConfigMap it mounts changes."""
    await client.create({"apiVersion": "v1", "kind": "ConfigMap",
                         "metadata": {"name": "nginx-conf", "namespace": namespace}, "data": {"nginx.conf": "a"}})
    spec = restricted({"containers": [{"name": "nginx", "image": "nginx:1.27",
                                       "volumeMounts": [{"name": "conf", "mountPath": "/etc/nginx"}]}],
                       "volumes": [{"name": "conf", "configMap": {"name": "nginx-conf"}}]})
    await client.create({"apiVersion": "apps/v1", "kind": "Deployment",
                         "metadata": {"name": "nginx", "namespace": namespace,
                                      "annotations": {"reloader.stakater.com/auto": "true"}},
                         "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "nginx"}},
                                  "template": {"metadata": {"labels": {"app": "nginx"}}, "spec": spec}}})

    def hash_of(d: Obj) -> str | None:
        return (d["metadata"].get("annotations") or {}).get("reloader.kubeloop.dev/hash")

    first = hash_of(await wait_for(client, "deployments.apps", "nginx", namespace, timeout=60,
                                   predicate=lambda d: hash_of(d) is not None))
    await client.patch("configmaps", "nginx-conf", {"data": {"nginx.conf": "b"}}, namespace)
    rolled = await wait_for(client, "deployments.apps", "nginx", namespace, timeout=60,
                            predicate=lambda d: hash_of(d) not in (None, first))
    assert "reloader.kubeloop.dev/config-hash" in (rolled["spec"]["template"]["metadata"].get("annotations") or {})
    await client.delete("deployments.apps", "nginx", namespace)  # gone before the next run watches
    await wait_for_deletion(client, "deployments.apps", "nginx", namespace, timeout=60)


async def blackadder_job(client: Client, namespace: str) -> None:
    """The article's agent (v1alpha1, stored as v1beta1, read as v1beta2: conversions served by the local
    process), suspended and confined to this namespace: it reports and touches nothing."""
    v1beta2 = "blackadder.io/v1beta2/chaosagents"
    name = f"edmund-{secrets.token_hex(3)}"
    await client.create({
        "apiVersion": "blackadder.io/v1alpha1", "kind": "ChaosAgent", "metadata": {"name": name},
        "spec": {"tantrumMode": True, "podTolerance": 4, "suspend": True,
                 "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": namespace}}}})
    try:
        agent = await wait_for(client, v1beta2, name, timeout=60,
                               predicate=lambda a: bool((a.get("status") or {}).get("conditions")))
        assert agent["spec"]["minRunningPods"] == 4
        assert agent["status"]["conditions"][0]["reason"] == "Suspended"
        await client.delete(v1beta2, name)  # its finalizer is removed by the running operator
        await wait_for_deletion(client, v1beta2, name, timeout=60)
    finally:
        with contextlib.suppress(NotFound):  # a failed run left it: no operator removes the finalizer
            await client.patch(v1beta2, name, {"metadata": {"finalizers": None}})
            await client.delete(v1beta2, name)


JOBS: dict[str, Callable[[Client, str], Awaitable[None]]] = {
    "immortal": immortal_job, "copyrator": copyrator_job, "reloader": reloader_job, "blackadder": blackadder_job}


def conversion_client(crd: Obj) -> Obj:
    return dict(((crd["spec"].get("conversion") or {}).get("webhook") or {}).get("clientConfig") or {})


@pytest.mark.parametrize("way", WAYS)
@pytest.mark.parametrize("name", OPERATORS)
async def test_install_then_run_locally(name: str, way: str, kube_cluster: Any, kube_client: Client, namespace: str,
                                        helm: Callable[..., str], tmp_path: Path) -> None:
    await clear_crds(kube_cluster, kube_client, name)
    made = Made()
    try:
        kubeconfig = await install(way, name, namespace, kube_cluster, kube_client, helm, tmp_path, made)
        extra = ["--install-crds"] if way == "install-crds" else []
        async with local_run(name, kubeconfig, namespace, tmp_path, *extra):
            await kube_client.registry.refresh()
            if name == "blackadder":  # the conversion webhook points at this process while it runs
                crd = await kube_client.get("customresourcedefinitions", CRDS[name][0])
                assert conversion_client(crd)["url"].startswith("https://127.0.0.1:"), conversion_client(crd)
            await JOBS[name](kube_client, namespace)
        if name == "blackadder" and way != "install-crds":  # and back at the Service the install named
            crd = await kube_client.get("customresourcedefinitions", CRDS[name][0])
            assert conversion_client(crd)["service"]["name"] == "blackadder-webhook", conversion_client(crd)
            assert "url" not in conversion_client(crd)
    finally:
        await uninstall(kube_client, name, namespace, helm, made)


# The reverse flow per operator, each installed one of the ways its README shows, with what the deployed
# Deployment runs: copyrator with its author check, so that its MutatingWebhookConfiguration switches too.
DEPLOYED = {"immortal": ("all", []), "blackadder": ("deploy", []),
            "copyrator": ("deploy", ["--set", "check-author=true"]), "reloader": ("helm", [])}
# What the API server calls on the operator, so deployed: CRDs (conversion) and webhook configurations.
SERVED = {"immortal": set(), "blackadder": {"chaosagents.blackadder.io"}, "copyrator": {"copyrator-mutating"},
          "reloader": set()}


async def mark_crds(client: Client, name: str) -> None:
    """The operator's CRDs as the test kit marks its own, so that a failed case's are removed at session end."""
    for crd in CRDS[name]:
        await wait_for_crd(client, crd, timeout=60)
        await client.patch("customresourcedefinitions", crd, {"metadata": {"labels": {CRD_LABEL: "true"}}})
        current_session().crds.add(crd)


async def endpoints(client: Client, name: str) -> dict[str, Obj]:
    """Where the API server sends the operator's conversions and admission reviews: clientConfig by object."""
    out = {}
    for crd in CRDS[name]:
        with contextlib.suppress(NotFound):
            if config := conversion_client(await client.get("customresourcedefinitions", crd)):
                out[crd] = config
    for resource in ("mutatingwebhookconfigurations", "validatingwebhookconfigurations"):
        verb = resource.split("webhook")[0]
        with contextlib.suppress(NotFound):
            config = await client.get(f"admissionregistration.k8s.io/v1/{resource}", f"{name}-{verb}")
            for hook in config["webhooks"]:
                out[f"{config['metadata']['name']}/{hook['name']}"] = dict(hook["clientConfig"])
    return out


async def lease_holder(client: Client, name: str, namespace: str) -> str | None:
    try:
        lease = await client.get("coordination.k8s.io/v1/leases", f"{name}-leader", namespace)
    except NotFound:
        return None
    return lease["spec"].get("holderIdentity")


async def held_lease(client: Client, name: str, namespace: str, timeout: float = 30) -> str | None:
    """The Lease's holder once one holds it (None after ``timeout`` seconds)."""
    deadline = asyncio.get_running_loop().time() + timeout
    while not (holder := await lease_holder(client, name, namespace)):
        if asyncio.get_running_loop().time() > deadline:
            return None
        await asyncio.sleep(0.2)
    return holder


@pytest.mark.parametrize("name", OPERATORS)
async def test_deployed_then_run_locally_and_back(name: str, kube_cluster: Any, kube_client: Client, namespace: str,
                                                   helm: Callable[..., str], tmp_path: Path) -> None:
    """A user of a deployed operator switches to a local run and back: the Deployment to 0 (here it never runs
    a container anyway), ``kubeloop run`` with the deployed ServiceAccount and the Deployment's own flags
    (``--leader-elect``, the author check), the README's example converged, the Deployment back to 1. While
    the local run serves, the CRD's conversion and the webhook configurations name it; afterwards they name
    the Service again, and the lease is free for the deployed replica."""
    way, settings = DEPLOYED[name]
    await clear_crds(kube_cluster, kube_client, name)
    flags = ["--kubeconfig", str(kube_cluster.kubeconfig), "--namespace", namespace]
    made = Made()
    try:
        if way == "deploy":
            cli("deploy", name, *flags, *settings, "--image", f"reg.example/{name}:1", "--timeout", "90")
            await mark_crds(kube_client, name)
        else:
            await install(way, name, namespace, kube_cluster, kube_client, helm, tmp_path, made)
            await mark_crds(kube_client, name)
        deployed = await endpoints(kube_client, name)
        assert all(c["service"]["namespace"] == namespace and "url" not in c for c in deployed.values()), deployed
        assert {k.split("/")[0] for k in deployed} == SERVED[name], deployed
        replicas = (await kube_client.get("deployments.apps", name, namespace))["spec"]["replicas"]
        assert replicas == (2 if name == "blackadder" else 1)  # two serve a conversion webhook
        await asyncio.to_thread(kube_cluster.kubectl, "scale", "deployment", name, "-n", namespace, "--replicas=0")
        kubeconfig = await asyncio.to_thread(kube_cluster.service_account_kubeconfig, namespace, name,
                                             tmp_path / "sa.kubeconfig")
        local = ["--leader-elect"] + (["--check-author", "true", "--webhook-port", "0"] if settings else [])
        async with local_run(name, kubeconfig, namespace, tmp_path, *local):
            await kube_client.registry.refresh()
            serving = await endpoints(kube_client, name)
            assert set(serving) == set(deployed), serving
            assert all(c["url"].startswith("https://127.0.0.1:") and "service" not in c
                       for c in serving.values()), serving
            # /readyz does not wait for leadership (a standby is ready too): the Lease comes just after.
            assert await held_lease(kube_client, name, namespace)
            await JOBS[name](kube_client, namespace)
        assert await endpoints(kube_client, name) == deployed
        assert await lease_holder(kube_client, name, namespace) is None  # released at stop, not left to expire
        await asyncio.to_thread(kube_cluster.kubectl, "scale", "deployment", name, "-n", namespace,
                                f"--replicas={replicas}")
        await wait_for(kube_client, "deployments.apps", name, namespace, timeout=60,
                       predicate=lambda d: (d.get("status") or {}).get("readyReplicas") == replicas)
    finally:
        if way == "deploy":
            cli("undeploy", name, *flags, "--delete-crds", "--timeout", "90")
        await uninstall(kube_client, name, namespace, helm, made)
    assert not await endpoints(kube_client, name)  # no webhook configuration left behind
