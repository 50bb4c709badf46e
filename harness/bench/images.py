"""``python -m harness.bench.images``: kubeloop's bundled operators' images beside their peers', side by
side in one run on the local control plane, each run as a container the way its Deployment runs it.

Three comparisons (``--compare``), one mechanism:

- ``reloader`` beside Stakater Reloader (``--reloader-binary``),
- ``blackadder`` beside chaoskube (``--chaoskube-binary``), both in dry run,
- ``copyrator`` beside mittwald's kubernetes-replicator (``--replicator-binary``).

- Ours: the image the generated Dockerfile builds on the Debian-made base (``python -m
  kubeloop.packaging.baseimage``), run by ``kubeloop.packaging.podrun`` from the generated Deployment
  (its user, read-only root, no capabilities, its CPU and memory limits, ``--leader-elect``; a webhook,
  blackadder's conversion, served on a loopback port).
- A peer: its binary built from its source the way its Dockerfile builds it, in an image of that binary
  alone (``FROM scratch``; the peers' own images add a distroless or Alpine base), run with its image's
  user (or ours where its manifests set none), read-only root, no capabilities, in-cluster
  configuration and a TokenRequest token, under a ClusterRole with the rules its Helm chart grants.

Before each start the cluster holds the comparison's workload, made afresh for each run:

- reloader: ``--objects`` ConfigMaps of ``--size`` bytes (both operators cache every ConfigMap) and one
  Deployment with ``reloader.stakater.com/auto`` reading one of them; the change: that ConfigMap's data,
  its effect: the Deployment's new template (ours waits out its debounce, 2 s by default, first:
  reported as is, and with the flag that changes it).
- blackadder: a Deployment of ``--pods`` pods (Running on kwok's nodes) in one namespace; ours holds a
  ChaosAgent (tantrumMode, dryRun, eagerness 100, one victim per owner, no minimum age) confined to that
  namespace, chaoskube is given ``--namespaces`` of it (and ``--dry-run``, its default). The first action:
  the first round done, i.e. pods listed and a victim chosen, as each counts it on its metrics endpoint
  (``blackadder_rounds_total``, ``chaoskube_intervals_total``: both counted when the round's choice is
  made, before its Events and status). Afterwards the run checks that a victim was chosen (ours:
  ``status.recentActions``, chaoskube: its "terminating pod" log line) and that no pod was deleted.
- copyrator: ``--objects`` filler ConfigMaps and one source ConfigMap, labelled for ours (a CopyratorRule
  in its namespace selects it and the target namespaces by label) and annotated for the peer
  (``replicator.v1.mittwald.de/replicate-to-matching`` with the same namespace label), to be copied into
  ``--namespaces`` namespaces. The first action: every copy made; the change: the source's data, its
  effect: every copy updated.

Measured per operator: the image size; seconds from ``podman run`` to ready (ours: its readiness probe;
the peers: Reloader's metrics endpoint, chaoskube's ``/healthz``, the replicator's ``/readyz``) and to
the first action, polled side by side from the start; seconds from the change (made once ready, a
second later) to its effect; the container's memory (cgroup) and RSS two seconds after the last effect.
``--repeats`` alternates the operators. Nothing here is asserted: figures are printed and saved to
``results/images.json``, one entry per comparison, with the date, the load average and the sizes (a
run of some comparisons keeps the others' entries).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import hashlib
import json
import os
import re
import secrets
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import aiohttp

from harness.common.cluster import cluster_for
from harness.common.provenance import git_revision, invocation, save_json
from kubeloop.cli.generate import manifests
from kubeloop.cli.run import load_operator
from kubeloop.client import Client, NotFound
from kubeloop.client.config import Config
from kubeloop.client.wait import WaitTimeout, wait_for_deletion
from kubeloop.packaging import baseimage
from kubeloop.packaging.deploy import deploy
from kubeloop.packaging.podrun import ServiceAccountDir, memory_bytes, pod_run, webhooks_on_loopback
from kubeloop.testing.podsecurity import restricted

RESULTS = Path(__file__).resolve().parent / "results" / "images.json"
Obj = dict[str, Any]
Check = Callable[[], Awaitable[bool]]
KEYS = ("start_to_ready_s", "start_to_first_s", "change_to_effect_s", "cgroup_mib", "rss_mib")


@dataclass(frozen=True)
class Side:
    """One operator's running container, as the checks see it."""

    ours: bool
    container: str
    ready_url: str
    metrics_url: str


@dataclass
class Work:
    """What one run's cluster holds for the operator, and the checks of what the operator does with it."""

    namespace: str  # where the workload lives (a peer may be confined to it)
    namespaces: list[str] = field(default_factory=list)  # deleted after the run
    first: Callable[[Side], Check] | None = None  # the first action, polled from ``podman run`` on
    change: Callable[[], Awaitable[None]] | None = None  # made once ready and the first action seen
    changed: Check | None = None  # the change's effect
    after: Callable[[Side], Awaitable[dict[str, Any]]] | None = None  # what the run did (checked, not timed)
    release: Callable[[], Awaitable[None]] | None = None  # while the container still runs, after the figures


Prepare = Callable[[Client, str, bool, argparse.Namespace], Awaitable[Work]]


@dataclass(frozen=True)
class Peer:
    """A peer's binary, and how its manifests run it."""

    name: str
    flag: str  # the option naming its binary
    account: str
    user: str  # its image's USER (ours, 65532, where its manifests set none)
    rules: list[Obj]  # what its Helm chart's ClusterRole grants, for the defaults used here
    args: Callable[[Work, int], list[str]]  # its flags, given the workload and a free loopback port
    ready_path: str
    metrics_path: str = "/metrics"
    fixed_port: int | None = None  # a port it always listens on (every interface): it must be free


@dataclass(frozen=True)
class Comparison:
    name: str  # the bundled operator's
    peer: Peer
    prepare: Prepare
    phases: dict[str, str]  # what each measured figure is, in this comparison
    sizes: Callable[[argparse.Namespace], dict[str, int]]
    variants: dict[str, tuple[str, ...]] = field(default_factory=dict)  # our extra runs: label → extra args


def podman(*args: str, check: bool = True, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*baseimage.podman(), *args], capture_output=True, text=True, check=check,
                          timeout=timeout)


def image_size(image: str) -> int:
    return int(podman("image", "inspect", "--format", "{{.Size}}", image).stdout.strip())


def peer_image(binary: Path, peer: Peer) -> str:
    """The peer's binary alone in an image."""
    tag = f"localhost/{peer.name}-peer:{secrets.token_hex(3)}"
    with tempfile.TemporaryDirectory() as context:
        (Path(context) / "manager").write_bytes(binary.read_bytes())
        (Path(context) / "manager").chmod(0o755)
        (Path(context) / "Containerfile").write_text(
            f'FROM scratch\nCOPY manager /manager\nUSER {peer.user}\nENTRYPOINT ["/manager"]\n')
        podman("build", "-q", "-t", tag, "-f", str(Path(context) / "Containerfile"), context)
    return tag


async def until(check: Check, what: str, timeout: float = 120, container: str = "",
                since: float | None = None) -> float:
    """Seconds from ``since`` (default: now) until ``check()`` holds."""
    start = time.monotonic() if since is None else since
    while time.monotonic() - start < timeout:
        with contextlib.suppress(Exception):
            if await check():
                return time.monotonic() - start
        await asyncio.sleep(0.05)
    log = container_log(container)[-2000:] if container else ""
    raise RuntimeError(f"no {what} within {timeout} s\n{log}")


def container_log(container: str) -> str:
    done = podman("logs", container, check=False)
    return done.stdout + done.stderr


async def http_get(url: str) -> tuple[int, str]:
    async with aiohttp.ClientSession() as session:
        async with session.get(url, timeout=aiohttp.ClientTimeout(total=2)) as resp:
            return resp.status, await resp.text()


async def http_ok(url: str) -> bool:
    return (await http_get(url))[0] == 200


def metric_total(text: str, name: str) -> float:
    """The sum of a metric's samples (every label set) in Prometheus' text format; 0 if absent."""
    total = 0.0
    for line in text.splitlines():
        found = re.match(rf"{re.escape(name)}(?:\{{.*\}})?\s+(\S+)", line)
        if found:
            total += float(found.group(1))
    return total


def counter_reached(side: Side, name: str, at_least: float = 1) -> Check:
    async def check() -> bool:
        status, text = await http_get(side.metrics_url)
        return status == 200 and metric_total(text, name) >= at_least
    return check


async def token_for(client: Client, namespace: str, account: str) -> str:
    answer = await client.create({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
                                  "spec": {"expirationSeconds": 3600}}, namespace, resource="serviceaccounts",
                                 subresource="token", name=account)
    return str(answer["status"]["token"])


async def namespace(client: Client, name: str, labels: dict[str, str] | None = None) -> str:
    await client.create({"apiVersion": "v1", "kind": "Namespace",
                         "metadata": {"name": name, **({"labels": labels} if labels else {})}})
    return name


async def gather_bounded(coros: list[Awaitable[Any]], limit: int = 16) -> None:
    sem = asyncio.Semaphore(limit)

    async def one(coro: Awaitable[Any]) -> None:
        async with sem:
            await coro
    await asyncio.gather(*(one(c) for c in coros))


async def filler(client: Client, ns: str, objects: int, size: int) -> None:
    """``objects`` ConfigMaps of ``size`` bytes: what an operator caching every ConfigMap holds."""
    payload = "x" * size
    await gather_bounded([client.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"cm-{i}"},
                                         "data": {"v": payload}}, ns) for i in range(objects)])


async def release(client: Client, ref: str, name: str, ns: str | None = None, timeout: float = 60) -> None:
    """Deletes a custom resource while the operator runs (it releases its finalizer); one still held
    after ``timeout`` loses its finalizers, so that no later run meets it."""
    with contextlib.suppress(NotFound):
        await client.delete(ref, name, ns)
    try:
        await wait_for_deletion(client, ref, name, ns, timeout=timeout)
    except WaitTimeout:
        with contextlib.suppress(NotFound):
            await client.patch(ref, name, {"metadata": {"finalizers": None}}, ns)


# --- reloader beside Stakater Reloader ----------------------------------------------------------------


async def reloader_work(client: Client, ns: str, ours: bool, args: argparse.Namespace) -> Work:
    """The cached ConfigMaps, the watched Deployment; the change: its ConfigMap; the effect: a new template."""
    await namespace(client, ns)
    await filler(client, ns, args.objects, args.size)
    await client.create({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {
        "name": "web", "annotations": {"reloader.stakater.com/auto": "true"}},
        "spec": {"replicas": 0, "selector": {"matchLabels": {"app": "web"}}, "template": {
            "metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{
                "name": "web", "image": "nginx:1.27", "envFrom": [{"configMapRef": {"name": "cm-0"}}]}]}}}}, ns)
    before = (await client.get("deployments", "web", ns))["spec"]["template"]

    async def change() -> None:
        await client.patch("configmaps", "cm-0", {"data": {"v": secrets.token_hex(8)}}, ns)

    async def rolled() -> bool:
        return bool((await client.get("deployments", "web", ns))["spec"]["template"] != before)
    return Work(ns, [ns], change=change, changed=rolled)


# The rules Reloader's Helm chart (v2.2.16) gives its ClusterRole, for the defaults used here.
RELOADER_RULES = [
    {"apiGroups": [""], "resources": ["secrets", "configmaps"], "verbs": ["list", "get", "watch"]},
    {"apiGroups": [""], "resources": ["namespaces"], "verbs": ["get", "list", "watch"]},
    {"apiGroups": ["apps"], "resources": ["deployments", "daemonsets", "statefulsets"],
     "verbs": ["list", "get", "update", "patch"]},
    {"apiGroups": ["batch"], "resources": ["cronjobs", "jobs"], "verbs": ["list", "get", "create", "delete"]},
    {"apiGroups": [""], "resources": ["events"], "verbs": ["create", "patch"]},
]
RELOADER = Peer("stakater-reloader", "--reloader-binary", "reloader", "65532:65532", RELOADER_RULES,
                args=lambda work, port: [], ready_path="/metrics",
                fixed_port=9090)  # fixed in Reloader (constants.DefaultHttpListenAddr)


# --- blackadder beside chaoskube ----------------------------------------------------------------------

CHAOS_AGENT = "blackadder.io/v1beta1/chaosagents"  # the storage version: no conversion to create or delete
VICTIMS = "victims"


async def blackadder_work(client: Client, ns: str, ours: bool, args: argparse.Namespace) -> Work:
    """A Deployment's pods, Running (kwok); ours: a dry-run ChaosAgent confined to their namespace."""
    await namespace(client, ns)
    template = {"metadata": {"labels": {"app": VICTIMS}},
                "spec": restricted({"terminationGracePeriodSeconds": 0,
                                    "containers": [{"name": "app", "image": "nginx:1.27"}]})}
    await client.create({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": VICTIMS},
                         "spec": {"replicas": args.pods, "selector": {"matchLabels": {"app": VICTIMS}},
                                  "template": template}}, ns)

    async def running() -> list[str]:
        pods = (await client.list("pods", ns, field_selector="status.phase=Running"))["items"]
        return sorted(p["metadata"]["uid"] for p in pods)

    async def all_running() -> bool:
        return len(await running()) >= int(args.pods)
    await until(all_running, f"{args.pods} running pods", timeout=max(120, args.pods / 5))
    uids = set(await running())
    agent = f"bench-{ns}"
    if ours:
        await client.create({"apiVersion": "blackadder.io/v1beta1", "kind": "ChaosAgent", "metadata": {"name": agent},
                             "spec": {"tantrumMode": True, "dryRun": True, "eagerness": 100, "onePerOwner": True,
                                      "minPodAgeSeconds": 0, "pauseDuration": 600, "seed": 1,
                                      "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": ns}}}},
                            resource=CHAOS_AGENT)

    def first(side: Side) -> Check:
        return counter_reached(side, "blackadder_rounds_total" if side.ours else "chaoskube_intervals_total")

    async def after(side: Side) -> dict[str, Any]:
        if side.ours:
            await until(lambda: _round_recorded(client, agent), "the round in the agent's status", timeout=30)
            status = (await client.get(CHAOS_AGENT, agent)).get("status") or {}
            chosen = sum(1 for a in status.get("recentActions") or () if a.get("dryRun"))
        else:
            chosen = container_log(side.container).count("terminating pod")
        left = set(await running())
        return {"victims_chosen": chosen, "pods_deleted": len(uids - left)}

    async def release_agent() -> None:
        if ours:
            await release(client, CHAOS_AGENT, agent)
    return Work(ns, [ns], first=first, after=after, release=release_agent)


async def _round_recorded(client: Client, agent: str) -> bool:
    return int(((await client.get(CHAOS_AGENT, agent)).get("status") or {}).get("round") or 0) >= 1


# The rules chaoskube's Helm chart (0.6.0, app 0.39.0; examples/rbac.yaml alike) gives its ClusterRole.
CHAOSKUBE_RULES = [
    {"apiGroups": [""], "resources": ["pods"], "verbs": ["list", "delete"]},
    {"apiGroups": [""], "resources": ["events"], "verbs": ["create"]},
]
CHAOSKUBE = Peer("chaoskube", "--chaoskube-binary", "chaoskube", "65534", CHAOSKUBE_RULES,  # its Dockerfile's USER
                 args=lambda work, port: [f"--metrics-address=127.0.0.1:{port}", f"--namespaces={work.namespace}",
                                          "--dry-run"],
                 ready_path="/healthz")


# --- copyrator beside kubernetes-replicator -----------------------------------------------------------

REPLICATE_TO_MATCHING = "replicator.v1.mittwald.de/replicate-to-matching"
COPYRATOR = "copyrators.flant.com"
SOURCE = "shared"


async def copyrator_work(client: Client, ns: str, ours: bool, args: argparse.Namespace) -> Work:
    """A source ConfigMap (labelled for ours, annotated for the peer) and the namespaces to copy it into."""
    scope = {"bench-copy": ns}
    await namespace(client, ns)
    await filler(client, await namespace(client, f"{ns}-filler"), args.objects, args.size)
    targets = [f"{ns}-t{i:03d}" for i in range(args.namespaces)]
    await gather_bounded([namespace(client, t, scope) for t in targets])
    data = {"v": secrets.token_hex(8)}
    await client.create({"apiVersion": "v1", "kind": "ConfigMap", "data": data, "metadata": {
        "name": SOURCE, "labels": {"bench.example.com/shared": "true"},
        "annotations": {REPLICATE_TO_MATCHING: f"bench-copy={ns}"}}}, ns)
    if ours:
        await client.create({"apiVersion": "flant.com/v1", "kind": "CopyratorRule", "metadata": {"name": "bench"},
                             "ruleType": "configmap", "selector": {"bench.example.com/shared": "true"},
                             "namespace": ns, "namespaceSelector": {"matchLabels": scope}}, ns, resource=COPYRATOR)
    wanted = [data]

    async def copied() -> bool:
        copies = (await client.list("configmaps", None, field_selector=f"metadata.name={SOURCE}"))["items"]
        fresh = {c["metadata"]["namespace"] for c in copies if c.get("data") == wanted[0]}
        return fresh.issuperset(targets)

    async def change() -> None:
        wanted[0] = {"v": secrets.token_hex(8)}
        await client.patch("configmaps", SOURCE, {"data": wanted[0]}, ns)

    async def release_rule() -> None:
        if ours:
            await release(client, COPYRATOR, "bench", ns)
    return Work(ns, [ns, f"{ns}-filler", *targets], first=lambda side: copied, change=change, changed=copied,
                release=release_rule)


# The rules kubernetes-replicator's Helm chart (2.12.4) gives its ClusterRole by default (deploy/rbac.yaml alike):
# every replicator on (secrets, ConfigMaps, Roles, RoleBindings, ServiceAccounts).
REPLICATOR_RULES = [
    {"apiGroups": [""], "resources": ["namespaces"], "verbs": ["get", "watch", "list"]},
    {"apiGroups": [""], "resources": ["secrets", "configmaps", "serviceaccounts"],
     "verbs": ["get", "watch", "list", "create", "update", "patch", "delete"]},
    {"apiGroups": ["rbac.authorization.k8s.io"], "resources": ["roles", "rolebindings"],
     "verbs": ["get", "watch", "list", "create", "update", "patch", "delete"]},
]
REPLICATOR = Peer("kubernetes-replicator", "--replicator-binary", "replicator", "65532:65532", REPLICATOR_RULES,
                  args=lambda work, port: [f"--status-addr=127.0.0.1:{port}"], ready_path="/readyz")


COMPARISONS: dict[str, Comparison] = {c.name: c for c in [
    Comparison("reloader", RELOADER, reloader_work, variants={"--debounce-seconds=0": ("--debounce-seconds=0",)},
               phases={"start_to_ready_s": "podman run to ready",
                       "change_to_effect_s": "ConfigMap change to the Deployment's new template"},
               sizes=lambda a: {"objects": a.objects, "size": a.size}),
    Comparison("blackadder", CHAOSKUBE, blackadder_work,
               phases={"start_to_ready_s": "podman run to ready",
                       "start_to_first_s": "podman run to the first dry-run round done (its metrics' counter)"},
               sizes=lambda a: {"pods": a.pods}),
    Comparison("copyrator", REPLICATOR, copyrator_work,
               phases={"start_to_ready_s": "podman run to ready",
                       "start_to_first_s": "podman run to every copy made",
                       "change_to_effect_s": "source change to every copy updated"},
               sizes=lambda a: {"namespaces": a.namespaces, "objects": a.objects, "size": a.size}),
]}


# --- one run -----------------------------------------------------------------------------------------


async def measure(client: Client, argv: list[str], side: Side, work: Work) -> dict[str, Any]:
    started = time.monotonic()
    podman(*argv[len(baseimage.podman()):])
    try:
        waits = [until(lambda: http_ok(side.ready_url), "ready", container=side.container, since=started)]
        if work.first:
            waits.append(until(work.first(side), "first action", container=side.container, since=started))
        done = await asyncio.gather(*waits)
        figures: dict[str, Any] = {"start_to_ready_s": round(done[0], 3)}
        if work.first:
            figures["start_to_first_s"] = round(done[1], 3)
        if work.change and work.changed:
            await asyncio.sleep(1.0)  # settled: not a race with the informers' first events
            await work.change()
            figures["change_to_effect_s"] = round(await until(work.changed, "change's effect",
                                                              container=side.container), 3)
        await asyncio.sleep(2.0)
        cgroup, rss = memory_bytes(side.container)
        figures |= {"cgroup_mib": round(cgroup / 2**20, 1), "rss_mib": round(rss / 2**20, 1)}
        if work.after:
            figures |= await work.after(side)
        return figures
    finally:
        try:
            if work.release:
                await work.release()
        finally:
            podman("rm", "--force", "--time", "0", side.container, check=False)


async def run_ours(cluster: Any, client: Client, comparison: Comparison, image: str, args: argparse.Namespace,
                   tmp: Path, extra_args: tuple[str, ...] = ()) -> dict[str, Any]:
    api = Config.from_kubeconfig(cluster.kubeconfig)
    port = int(api.server.rsplit(":", 1)[1])
    operator = load_operator(comparison.name)
    ns = f"img-{comparison.name}-{secrets.token_hex(3)}"
    objs = manifests(comparison.name, operator, ns, image=image)
    deployment = next(o for o in objs if o["kind"] == "Deployment")
    webhook_args = webhooks_on_loopback(objs, _free_port())
    await deploy(client, [o for o in objs if o["kind"] != "Deployment"], part_of=operator.name, log=lambda _: None)
    work = await comparison.prepare(client, f"{ns}-work", True, args)
    try:
        account = deployment["spec"]["template"]["spec"]["serviceAccountName"]
        sa = ServiceAccountDir(tmp / f"sa-{ns}", api.ca_pem or b"", ns)
        sa.write("token", (await token_for(client, ns, account)).encode())
        name = f"ours-{secrets.token_hex(3)}"
        run = pod_run(deployment, name=name, service_account_dir=sa.path, api_host="127.0.0.1", api_port=port,
                      metrics_port=_free_port(), health_port=_free_port(), extra_args=(*webhook_args, *extra_args))
        side = Side(True, name, f"http://127.0.0.1:{run.health_port}{run.readiness_path}",
                    f"http://127.0.0.1:{run.metrics_port}/metrics")
        return await measure(client, run.argv, side, work)
    finally:
        await _delete_namespaces(client, ns, *work.namespaces)
        for kind, plural in (("ClusterRoleBinding", "clusterrolebindings"), ("ClusterRole", "clusterroles")):
            for obj in (o for o in objs if o["kind"] == kind):
                with contextlib.suppress(NotFound):
                    await client.delete(plural, obj["metadata"]["name"])


async def run_peer(cluster: Any, client: Client, comparison: Comparison, image: str, args: argparse.Namespace,
                   tmp: Path) -> dict[str, Any]:
    peer = comparison.peer
    api = Config.from_kubeconfig(cluster.kubeconfig)
    port = int(api.server.rsplit(":", 1)[1])
    ns = f"img-peer-{peer.name}-{secrets.token_hex(3)}"
    await namespace(client, ns)
    await client.create({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": peer.account}}, ns)
    role = f"{ns}-{peer.account}"
    await client.create({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
                         "metadata": {"name": role}, "rules": peer.rules})
    await client.create({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
                         "metadata": {"name": role},
                         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
                         "subjects": [{"kind": "ServiceAccount", "name": peer.account, "namespace": ns}]})
    work = await comparison.prepare(client, f"{ns}-work", False, args)
    try:
        sa = ServiceAccountDir(tmp / f"sa-{ns}", api.ca_pem or b"", ns)
        sa.write("token", (await token_for(client, ns, peer.account)).encode())
        name = f"peer-{secrets.token_hex(3)}"
        listen = peer.fixed_port or _free_port()
        argv = [*baseimage.podman(), "run", "--detach", "--name", name, "--network", "host", *baseimage.ulimits(),
                "--user", peer.user, "--read-only", "--cap-drop", "ALL", "--security-opt", "no-new-privileges",
                "-v", f"{sa.path.resolve()}:/var/run/secrets/kubernetes.io/serviceaccount:ro",
                "-e", "KUBERNETES_SERVICE_HOST=127.0.0.1", "-e", f"KUBERNETES_SERVICE_PORT={port}", image,
                *peer.args(work, listen)]
        side = Side(False, name, f"http://127.0.0.1:{listen}{peer.ready_path}",
                    f"http://127.0.0.1:{listen}{peer.metrics_path}")
        return await measure(client, argv, side, work)
    finally:
        await _delete_namespaces(client, ns, *work.namespaces)
        for plural in ("clusterrolebindings", "clusterroles"):
            with contextlib.suppress(NotFound):
                await client.delete(plural, role)


async def _delete_namespaces(client: Client, *names: str) -> None:
    """Deletes them and waits until they are gone, so that the next run's operator caches none of their objects."""
    for ns in names:
        with contextlib.suppress(NotFound):
            await client.delete("namespaces", ns)
    for ns in names:
        with contextlib.suppress(WaitTimeout):
            await wait_for_deletion(client, "namespaces", ns, timeout=120)


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# --- figures -----------------------------------------------------------------------------------------


def summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Median and worst of each measured figure the rows have (a figure is in all rows of one operator)."""
    return {k: {"median": statistics.median(r[k] for r in rows), "worst": max(r[k] for r in rows)}
            for k in KEYS if rows and k in rows[0]}


def merged(previous: Any, entries: dict[str, Any]) -> dict[str, Any]:
    """The saved results: the comparisons run now, and the others as an earlier run saved them (a file
    of the one-comparison layout before this one is dropped)."""
    kept = dict(previous.get("comparisons") or {}) if isinstance(previous, dict) else {}
    return {"comparisons": {**kept, **entries}}


def binaries_named(argv: list[str]) -> list[str]:
    """The command line with each peer binary by its file name: where it was built is this machine's."""
    flags = {c.peer.flag for c in COMPARISONS.values()}
    out, after_flag = [], False
    for arg in argv:
        flag, eq, value = arg.partition("=")
        if after_flag:
            out.append(Path(arg).name)
        elif flag in flags and eq:
            out.append(f"{flag}={Path(value).name}")
        else:
            out.append(arg)
        after_flag = arg in flags
    return out


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def load_average() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


async def run_comparison(cluster: Any, client: Client, comparison: Comparison, base: str,
                         args: argparse.Namespace, tmp: Path) -> dict[str, Any]:
    peer = comparison.peer
    binary = getattr(args, peer.flag.lstrip("-").replace("-", "_"))
    entry: dict[str, Any] = {"date": datetime.now(UTC).strftime("%Y-%m-%dT%H:%MZ"), "load_before": load_average(),
                             "repeats": args.repeats, **comparison.sizes(args), "phases": comparison.phases}
    ours_image = baseimage.build_operator_image(
        comparison.name, f"localhost/kubeloop-{comparison.name}-bench:{secrets.token_hex(3)}",
        context=baseimage.project_root(), base=base, log=False)
    peer_tag = peer_image(Path(binary), peer) if binary else None
    ours_name = f"kubeloop-{comparison.name}"
    variants = {ours_name: (), **{f"{ours_name} {label}": extra for label, extra in comparison.variants.items()}}
    runs: dict[str, list[dict[str, Any]]] = {name: [] for name in variants}
    entry["images"] = {ours_name: image_size(ours_image)}
    if peer_tag:
        entry["images"][peer.name] = image_size(peer_tag)
        entry["peer_binary"] = {"bytes": Path(binary).stat().st_size, "sha256": sha256(Path(binary))}
        runs[peer.name] = []
    try:
        for i in range(args.repeats):
            for name, extra in variants.items():
                runs[name].append(await run_ours(cluster, client, comparison, ours_image, args, tmp, extra))
                print(f"{comparison.name} repeat {i + 1}: {name} {runs[name][-1]}", file=sys.stderr)
            if peer_tag:
                runs[peer.name].append(await run_peer(cluster, client, comparison, peer_tag, args, tmp))
                print(f"{comparison.name} repeat {i + 1}: {peer.name} {runs[peer.name][-1]}", file=sys.stderr)
    finally:
        for image in (ours_image, peer_tag):
            if image:
                podman("rmi", "--force", image, check=False)
    entry["load_after"] = load_average()
    entry["runs"] = runs
    entry["summary"] = {k: summary(v) for k, v in runs.items() if v}
    return entry


async def main_async(args: argparse.Namespace, argv: list[str]) -> int:
    chosen = [COMPARISONS[name] for name in args.compare.split(",")]
    base = baseimage.ensure_base_image(log=False)
    entries: dict[str, Any] = {}
    async with cluster_for(args.kubeconfig, "bench-images", keep=False, log=print) as (cluster, _own):
        client = Client(Config.from_kubeconfig(cluster.kubeconfig))
        try:
            with tempfile.TemporaryDirectory() as tmp:
                for comparison in chosen:
                    entries[comparison.name] = await run_comparison(cluster, client, comparison, base, args, Path(tmp))
        finally:
            await client.close()
    command = invocation("python -m harness.bench.images", binaries_named(argv),
                         {"--results": True, "--kubeconfig": True})
    for entry in entries.values():
        entry["command"], entry["revision"] = command, git_revision()
    path = Path(args.results)
    previous = json.loads(path.read_text()) if path.exists() else None
    save_json(merged(previous, entries), path)
    for name, entry in entries.items():
        sizes = ", ".join(f"{k} {v}" for k, v in entry.items() if k in ("pods", "namespaces", "objects"))
        print(f"== {name} ({sizes})")
        for image, size in entry["images"].items():
            print(f"{image}: image {size / 1e6:.1f} MB")
        for operator, figures in entry["summary"].items():
            line = ", ".join(f"{k} median {v['median']} worst {v['worst']}" for k, v in figures.items())
            extras = {k: [r[k] for r in entry["runs"][operator]] for k in entry["runs"][operator][0] if k not in KEYS}
            print(f"{operator}: {line}" + (f"; {extras}" if extras else ""))
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(prog="python -m harness.bench.images", description=__doc__.split("\n")[0])
    parser.add_argument("--compare", default=",".join(COMPARISONS),
                        help=f"comma-separated, of {', '.join(COMPARISONS)} (default: all)")
    parser.add_argument("--reloader-binary", help="Stakater Reloader built from its source (CGO_ENABLED=0 go build)")
    parser.add_argument("--chaoskube-binary", help="chaoskube built from its source (CGO_ENABLED=0 go build)")
    parser.add_argument("--replicator-binary",
                        help="mittwald's kubernetes-replicator built from its source (CGO_ENABLED=0 go build)")
    parser.add_argument("--objects", type=int, default=1000,
                        help="filler ConfigMaps in the cluster (reloader, copyrator; every operator there caches them)")
    parser.add_argument("--size", type=int, default=1024, help="bytes of data per filler ConfigMap")
    parser.add_argument("--pods", type=int, default=50, help="running pods to choose victims from (blackadder)")
    parser.add_argument("--namespaces", type=int, default=50, help="namespaces to copy the source into (copyrator)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--kubeconfig", help="an existing cluster (default: a local one of the run's own)")
    parser.add_argument("--results", default=str(RESULTS))
    args = parser.parse_args(argv)
    unknown = [c for c in args.compare.split(",") if c not in COMPARISONS]
    if unknown:
        parser.error(f"--compare: unknown {', '.join(unknown)}; use {', '.join(COMPARISONS)}")
    return asyncio.run(main_async(args, argv))


if __name__ == "__main__":
    sys.exit(main())
