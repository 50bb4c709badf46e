"""``python -m harness.bench.images``: kubeloop's reloader image beside Stakater Reloader's, side by side
in one run on the local control plane, each run as a container the way its Deployment runs it.

- Ours: the image the generated Dockerfile builds on the Debian-made base (``python -m
  kubeloop.packaging.baseimage``), run by ``kubeloop.packaging.podrun`` from the generated Deployment.
- The peer: a Reloader binary built from its source (``--reloader-binary``; its Dockerfile builds the
  same static binary) in an image of that binary alone (``FROM scratch``; Reloader's own image adds
  distroless/static's ~2 MB), run with the same user, read-only root, no capabilities, in-cluster
  configuration and a TokenRequest token, under a ClusterRole with the rules its Helm chart grants.

Before each start the cluster holds ``--objects`` ConfigMaps of ``--size`` bytes (both operators cache
every ConfigMap of the cluster) and one Deployment with ``reloader.stakater.com/auto`` reading one of them.
Measured per operator: the image size; seconds from ``podman run`` to ready (ours: its readiness probe;
Reloader: its metrics endpoint, which it serves once its informers have synced); seconds from a change of
the ConfigMap (made once ready) to the Deployment's new template (ours waits out its debounce, 2 s by
default, first: reported as is, with the flag that changes it); the container's memory (cgroup) and
RSS after the rollout. ``--repeats`` alternates the two. Nothing here is asserted: figures are printed
and saved to ``results/images.json``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import secrets
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import aiohttp

from harness.common.cluster import cluster_for
from harness.common.provenance import save_json
from kubeloop.cli.generate import manifests
from kubeloop.cli.run import load_operator
from kubeloop.client import Client, NotFound
from kubeloop.client.config import Config
from kubeloop.packaging import baseimage
from kubeloop.packaging.deploy import deploy
from kubeloop.packaging.podrun import ServiceAccountDir, memory_bytes, pod_run

RESULTS = Path(__file__).resolve().parent / "results" / "images.json"
PEER_METRICS_PORT = 9090  # fixed in Reloader (constants.DefaultHttpListenAddr)
# The rules Reloader's Helm chart (v2.2.16) gives its ClusterRole, for the defaults used here.
PEER_RULES = [
    {"apiGroups": [""], "resources": ["secrets", "configmaps"], "verbs": ["list", "get", "watch"]},
    {"apiGroups": [""], "resources": ["namespaces"], "verbs": ["get", "list", "watch"]},
    {"apiGroups": ["apps"], "resources": ["deployments", "daemonsets", "statefulsets"],
     "verbs": ["list", "get", "update", "patch"]},
    {"apiGroups": ["batch"], "resources": ["cronjobs", "jobs"], "verbs": ["list", "get", "create", "delete"]},
    {"apiGroups": [""], "resources": ["events"], "verbs": ["create", "patch"]},
]
Check = Callable[[], Awaitable[bool]]


def podman(*args: str, check: bool = True, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*baseimage.podman(), *args], capture_output=True, text=True, check=check,
                          timeout=timeout)


def image_size(image: str) -> int:
    return int(podman("image", "inspect", "--format", "{{.Size}}", image).stdout.strip())


def peer_image(binary: Path) -> str:
    """Reloader's binary alone in an image (its own adds distroless/static: CA certificates, tzdata, passwd)."""
    tag = f"localhost/reloader-peer:{secrets.token_hex(3)}"
    with tempfile.TemporaryDirectory() as context:
        (Path(context) / "manager").write_bytes(binary.read_bytes())
        (Path(context) / "manager").chmod(0o755)
        (Path(context) / "Containerfile").write_text(
            'FROM scratch\nCOPY manager /manager\nUSER 65532:65532\nENTRYPOINT ["/manager"]\n')
        podman("build", "-q", "-t", tag, "-f", str(Path(context) / "Containerfile"), context)
    return tag


async def until(check: Check, what: str, timeout: float = 120, container: str = "") -> float:
    start = time.monotonic()
    while time.monotonic() - start < timeout:
        with contextlib.suppress(Exception):
            if await check():
                return time.monotonic() - start
        await asyncio.sleep(0.05)
    log = podman("logs", container, check=False).stderr[-2000:] if container else ""
    raise RuntimeError(f"no {what} within {timeout} s\n{log}")


async def http_ok(url: str) -> bool:
    async with aiohttp.ClientSession() as session:
        async with session.get(url, timeout=aiohttp.ClientTimeout(total=2)) as resp:
            return resp.status == 200


async def token_for(client: Client, namespace: str, account: str) -> str:
    answer = await client.create({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
                                  "spec": {"expirationSeconds": 3600}}, namespace, resource="serviceaccounts",
                                 subresource="token", name=account)
    return str(answer["status"]["token"])


async def workload(client: Client, ns: str, objects: int, size: int) -> Check:
    """The cached ConfigMaps, the watched Deployment; returns a check that a change of its ConfigMap rolled it."""
    await client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
    payload = "x" * size
    sem = asyncio.Semaphore(16)

    async def one(i: int) -> None:
        async with sem:
            await client.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"cm-{i}"},
                                 "data": {"v": payload}}, ns)
    await asyncio.gather(*(one(i) for i in range(objects)))
    await client.create({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {
        "name": "web", "annotations": {"reloader.stakater.com/auto": "true"}},
        "spec": {"replicas": 0, "selector": {"matchLabels": {"app": "web"}}, "template": {
            "metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{
                "name": "web", "image": "nginx:1.27", "envFrom": [{"configMapRef": {"name": "cm-0"}}]}]}}}}, ns)
    before = (await client.get("deployments", "web", ns))["spec"]["template"]

    async def rolled() -> bool:
        return (await client.get("deployments", "web", ns))["spec"]["template"] != before
    return rolled


async def measure(client: Client, ns: str, name: str, argv: list[str], ready: Check, rolled: Check
                  ) -> dict[str, float]:
    started = time.monotonic()
    podman(*argv[len(baseimage.podman()):])
    try:
        await until(ready, f"{name} ready", container=name)
        to_ready = time.monotonic() - started
        await asyncio.sleep(1.0)  # settled: not a race with the informers' first events
        changed = time.monotonic()
        await client.patch("configmaps", "cm-0", {"data": {"v": secrets.token_hex(8)}}, ns)
        await until(rolled, f"{name}'s rollout", container=name)
        to_roll = time.monotonic() - changed
        await asyncio.sleep(2.0)
        cgroup, rss = memory_bytes(name)
        return {"start_to_ready_s": round(to_ready, 3), "change_to_rollout_s": round(to_roll, 3),
                "cgroup_mib": round(cgroup / 2**20, 1),
                "rss_mib": round(rss / 2**20, 1)}
    finally:
        podman("rm", "--force", "--time", "0", name, check=False)


async def run_ours(cluster: Any, client: Client, image: str, objects: int, size: int, tmp: Path,
                   extra_args: tuple[str, ...] = ()) -> dict[str, float]:
    api = Config.from_kubeconfig(cluster.kubeconfig)
    port = int(api.server.rsplit(":", 1)[1])
    operator = load_operator("reloader")
    ns = f"img-reloader-{secrets.token_hex(3)}"
    objs = manifests("reloader", operator, ns, image=image)
    deployment = next(o for o in objs if o["kind"] == "Deployment")
    await deploy(client, [o for o in objs if o["kind"] != "Deployment"], part_of=operator.name, log=lambda _: None)
    rolled = await workload(client, f"{ns}-work", objects, size)
    account = deployment["spec"]["template"]["spec"]["serviceAccountName"]
    sa = ServiceAccountDir(tmp / f"sa-{ns}", api.ca_pem or b"", ns)
    sa.write("token", (await token_for(client, ns, account)).encode())
    name = f"ours-{secrets.token_hex(3)}"
    run = pod_run(deployment, name=name, service_account_dir=sa.path, api_host="127.0.0.1", api_port=port,
                  metrics_port=_free_port(), health_port=_free_port(), extra_args=extra_args)
    try:
        return await measure(client, f"{ns}-work", name, run.argv,
                             lambda: http_ok(f"http://127.0.0.1:{run.health_port}{run.readiness_path}"), rolled)
    finally:
        await _delete_namespaces(client, ns, f"{ns}-work")
        for kind, plural in (("ClusterRoleBinding", "clusterrolebindings"), ("ClusterRole", "clusterroles")):
            for obj in (o for o in objs if o["kind"] == kind):
                with contextlib.suppress(NotFound):
                    await client.delete(plural, obj["metadata"]["name"])


async def run_peer(cluster: Any, client: Client, image: str, objects: int, size: int, tmp: Path) -> dict[str, float]:
    api = Config.from_kubeconfig(cluster.kubeconfig)
    port = int(api.server.rsplit(":", 1)[1])
    ns = f"img-peer-{secrets.token_hex(3)}"
    await client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
    await client.create({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "reloader"}}, ns)
    role = f"{ns}-reloader"
    await client.create({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
                         "metadata": {"name": role}, "rules": PEER_RULES})
    await client.create({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
                         "metadata": {"name": role},
                         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
                         "subjects": [{"kind": "ServiceAccount", "name": "reloader", "namespace": ns}]})
    rolled = await workload(client, f"{ns}-work", objects, size)
    sa = ServiceAccountDir(tmp / f"sa-{ns}", api.ca_pem or b"", ns)
    sa.write("token", (await token_for(client, ns, "reloader")).encode())
    name = f"peer-{secrets.token_hex(3)}"
    argv = [*baseimage.podman(), "run", "--detach", "--name", name, "--network", "host", *baseimage.ulimits(),
            "--user", "65532:65532", "--read-only", "--cap-drop", "ALL", "--security-opt", "no-new-privileges",
            "-v", f"{sa.path.resolve()}:/var/run/secrets/kubernetes.io/serviceaccount:ro",
            "-e", "KUBERNETES_SERVICE_HOST=127.0.0.1", "-e", f"KUBERNETES_SERVICE_PORT={port}", image]
    try:
        return await measure(client, f"{ns}-work", name, argv,
                             lambda: http_ok(f"http://127.0.0.1:{PEER_METRICS_PORT}/metrics"), rolled)
    finally:
        await _delete_namespaces(client, ns, f"{ns}-work")
        for plural in ("clusterrolebindings", "clusterroles"):
            with contextlib.suppress(NotFound):
                await client.delete(plural, role)


async def _delete_namespaces(client: Client, *names: str) -> None:
    for ns in names:
        with contextlib.suppress(NotFound):
            await client.delete("namespaces", ns)


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def summary(rows: list[dict[str, float]]) -> dict[str, Any]:
    keys = ("start_to_ready_s", "change_to_rollout_s", "cgroup_mib", "rss_mib")
    return {k: {"median": statistics.median(r[k] for r in rows), "worst": max(r[k] for r in rows)} for k in keys}


async def main_async(args: argparse.Namespace) -> int:
    base = baseimage.ensure_base_image(log=False)
    ours_image = baseimage.build_operator_image("reloader", f"localhost/kubeloop-reloader-bench:{secrets.token_hex(3)}",
                                                context=baseimage.project_root(), base=base, log=False)
    peer = peer_image(Path(args.reloader_binary)) if args.reloader_binary else None
    results: dict[str, Any] = {"objects": args.objects, "size": args.size, "repeats": args.repeats,
                               "images": {"kubeloop-reloader": image_size(ours_image)}}
    if peer:
        results["images"]["stakater-reloader"] = image_size(peer)
    ours = {"kubeloop-reloader": (), "kubeloop-reloader --debounce-seconds=0": ("--debounce-seconds=0",)}
    runs: dict[str, list[dict[str, float]]] = {name: [] for name in [*ours, "stakater-reloader"]}
    try:
        async with cluster_for(args.kubeconfig, "bench-images", keep=False, log=print) as (cluster, _own):
            client = Client(Config.from_kubeconfig(cluster.kubeconfig))
            try:
                with tempfile.TemporaryDirectory() as tmp:
                    for i in range(args.repeats):
                        for name, extra in ours.items():
                            runs[name].append(await run_ours(cluster, client, ours_image, args.objects, args.size,
                                                             Path(tmp), extra))
                            print(f"repeat {i + 1}: {name} {runs[name][-1]}", file=sys.stderr)
                        if peer:
                            runs["stakater-reloader"].append(
                                await run_peer(cluster, client, peer, args.objects, args.size, Path(tmp)))
                            print(f"repeat {i + 1}: Reloader {runs['stakater-reloader'][-1]}", file=sys.stderr)
            finally:
                await client.close()
    finally:
        for image in (ours_image, peer):
            if image:
                podman("rmi", "--force", image, check=False)
    results["runs"] = runs
    results["summary"] = {k: summary(v) for k, v in runs.items() if v}
    save_json(results, Path(args.results))
    for name, size in results["images"].items():
        print(f"{name}: image {size / 1e6:.1f} MB")
    for name, figures in results["summary"].items():
        line = ", ".join(f"{k} median {v['median']} worst {v['worst']}" for k, v in figures.items())
        print(f"{name}: {line}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m harness.bench.images", description=__doc__.split("\n")[0])
    parser.add_argument("--reloader-binary", help="Stakater Reloader built from its source (CGO_ENABLED=0 go build)")
    parser.add_argument("--objects", type=int, default=1000, help="ConfigMaps in the cluster (cached by both)")
    parser.add_argument("--size", type=int, default=1024, help="bytes of data per ConfigMap")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--kubeconfig", help="an existing cluster (default: a local one of the run's own)")
    parser.add_argument("--results", default=str(RESULTS))
    return asyncio.run(main_async(parser.parse_args(argv)))


if __name__ == "__main__":
    sys.exit(main())
