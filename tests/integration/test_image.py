"""The operator images, built with the generated Dockerfile and run as the generated Deployment says.

Each bundled operator's image is built (podman, from the Debian-made base), its manifests but the
Deployment are applied to the local control plane, and the Deployment's pod runs as a podman container
(``kubeloop.packaging.podrun``): non-root, read-only root, no capabilities, its args and env, a
TokenRequest token with the CA and namespace where the kubelet mounts them, on the host's network
against the API server at 127.0.0.1. The operator must start from in-cluster configuration, win its
Lease, reconcile, keep working once its first token is revoked (the file holds a new one: a rotation),
answer its probes, and stop on SIGTERM within the grace period, releasing its Lease. The README's
echo.py runs the same way from a project made by ``kubeloop init``, built with that project's own
Dockerfile. Each run prints figures (image size, start-up to first reconcile, memory); none is asserted.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import secrets
import shutil
import socket
import ssl
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from kubeloop.cli.generate import manifests
from kubeloop.cli.run import load_operator
from kubeloop.client import ApiError, Client, NotFound
from kubeloop.client.config import Config
from kubeloop.operators.reloader.policy import HASH
from kubeloop.packaging import baseimage
from kubeloop.packaging.deploy import deploy
from kubeloop.packaging.podrun import PodRun, ServiceAccountDir, memory_bytes, pod_run, webhooks_on_loopback
from kubeloop.testing import wait_for
from kubeloop.testing.podsecurity import relax
from kubeloop.testing.session import CRD_LABEL
from kubeloop.testing.session import current as current_session

pytestmark = pytest.mark.cluster
ROOT = Path(__file__).resolve().parents[2]
SETUP = "apt-get install -y podman runc mmdebstrap && python -m kubeloop.packaging.baseimage"
Obj = dict[str, Any]
_built: dict[str, str] = {}


@pytest.fixture(scope="module", autouse=True)
def _remove_built_images() -> Any:
    yield
    for tag in _built.values():
        subprocess.run([*baseimage.podman(), "rmi", "--force", tag], capture_output=True)


def base_image() -> str:
    """The Debian-made base, or a skip naming the command that makes it."""
    try:
        baseimage.podman()
    except baseimage.ImageError:
        pytest.skip(f"podman not found: {SETUP}")
    name = baseimage.base_image_name()
    if not baseimage.image_exists(name):
        pytest.skip(f"no base image {name}: {SETUP}")
    return name


def operator_image(target: str, context: Path, build_args: dict[str, str] | None = None) -> str:
    if target not in _built:
        tag = f"localhost/kubeloop-test-{target.replace('_', '-')}:{secrets.token_hex(3)}"
        _built[target] = baseimage.build_operator_image(target, tag, context=context, base=base_image(),
                                                        build_args=build_args, log=False)
    return _built[target]


def podman(*args: str, check: bool = True, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*baseimage.podman(), *args], capture_output=True, text=True, check=check,
                          timeout=timeout)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Api:
    port: int
    ca: bytes
    config: Config


def api_of(kube_cluster: Any) -> Api:
    config = Config.from_kubeconfig(kube_cluster.kubeconfig)
    found = re.fullmatch(r"https://127\.0\.0\.1:(\d+)", config.server)
    if not found or not config.ca_pem:
        pytest.skip(f"the container reaches only an API server at https://127.0.0.1 with a CA ({config.server})")
    return Api(int(found.group(1)), config.ca_pem, config)


async def bound_token(client: Client, namespace: str, service_account: str, secret: str) -> str:
    """A TokenRequest token bound to a Secret of its own: deleting the Secret revokes the token (the
    shortest lifetime the API server grants is 10 minutes, too long to wait for an expiry)."""
    owner = await client.create({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": secret},
                                 "type": "Opaque"}, namespace)
    request = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {
        "expirationSeconds": 600,
        "boundObjectRef": {"apiVersion": "v1", "kind": "Secret", "name": secret, "uid": owner["metadata"]["uid"]}}}
    answer = await client.create(request, namespace, resource="serviceaccounts", subresource="token",
                                 name=service_account)
    return str(answer["status"]["token"])


async def status_with(api: Api, token: str) -> int:
    """The API server's answer to a request authenticated by ``token``."""
    ctx = ssl.create_default_context(cadata=api.ca.decode())
    async with aiohttp.ClientSession() as session:
        async with session.get(f"https://127.0.0.1:{api.port}/api/v1/namespaces/default",
                               headers={"Authorization": f"Bearer {token}"}, ssl=ctx) as resp:
            return resp.status


async def until(check: Callable[[], Awaitable[bool]], what: str, timeout: float = 60, run: PodRun | None = None,
                step: float = 0.05) -> float:
    """Seconds until ``check()`` holds; fails with the container's log when it does not in time."""
    start = time.monotonic()
    while time.monotonic() - start < timeout:
        with contextlib.suppress(Exception):
            if await check():
                return time.monotonic() - start
        await asyncio.sleep(step)
    logs = container_log(run)[-3000:] if run else ""
    pytest.fail(f"no {what} within {timeout} s{': container log:' if logs else ''}\n{logs}")


def container_log(run: PodRun) -> str:
    done = podman("logs", run.name, check=False)
    return done.stdout + done.stderr


async def probe(run: PodRun, path: str) -> int:
    async with aiohttp.ClientSession() as session:
        async with session.get(f"http://127.0.0.1:{run.health_port}{path}",
                               timeout=aiohttp.ClientTimeout(total=2)) as resp:
            return resp.status


# --- what each operator does, checked from outside --------------------------------------------------


@dataclass
class Scenario:
    """``make(n)`` creates the n-th object to reconcile and returns a check that its effect is there."""

    make: Callable[[Client, str, int], Awaitable[Callable[[], Awaitable[bool]]]]
    # the first object exists before the operator starts, unless the API server needs the operator's
    # webhook to accept it (a conversion webhook: the object waits until the process is ready)
    before_start: bool = True


async def _immortal(client: Client, ns: str, n: int) -> Callable[[], Awaitable[bool]]:
    # immortal runs the user's image as written (nginx, as root): its namespace admits "baseline" pods,
    # as immortal's other tests do (its README's Security model says why it adds no security context).
    await relax(client, ns)
    await client.create({"apiVersion": "immortalcontainer.flugel.it/v1alpha1", "kind": "ImmortalContainer",
                         "metadata": {"name": f"ic-{n}", "namespace": ns}, "spec": {"image": "nginx:latest"}})

    async def pod_made() -> bool:
        pods = (await client.list("pods", ns))["items"]
        return any(ref.get("kind") == "ImmortalContainer" and ref.get("name") == f"ic-{n}"
                   for p in pods for ref in p["metadata"].get("ownerReferences") or [])
    return pod_made


async def _blackadder(client: Client, ns: str, n: int) -> Callable[[], Awaitable[bool]]:
    name = f"{ns}-{n}"  # cluster-scoped
    await client.create({"apiVersion": "blackadder.io/v1beta2", "kind": "ChaosAgent", "metadata": {"name": name},
                         "spec": {"minRunningPods": 3, "pauseSeconds": 120, "seed": 1983,
                                  "namespaceSelector": {"matchLabels": {"image-test": "nowhere"}}}})

    async def observed() -> bool:
        agent = await client.get("chaosagents.blackadder.io", name)
        return (agent.get("status") or {}).get("observedGeneration") == agent["metadata"]["generation"]
    return observed


async def _copyrator(client: Client, ns: str, n: int) -> Callable[[], Awaitable[bool]]:
    target = f"{ns}-copy-{n}"
    await client.create({"apiVersion": "v1", "kind": "Namespace",
                         "metadata": {"name": target, "labels": {"image-test": ns}}})
    await client.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {
        "name": f"shared-{n}", "namespace": ns, "labels": {"image-test-copy": "true"}}, "data": {"n": str(n)}})
    await client.create({"apiVersion": "flant.com/v1", "kind": "CopyratorRule",
                         "metadata": {"name": f"rule-{n}", "namespace": ns}, "ruleType": "configmap",
                         "selector": {"image-test-copy": "true"}, "namespace": ns,
                         "namespaceSelector": {"matchLabels": {"image-test": ns}}})

    async def copied() -> bool:
        return (await client.get("configmaps", f"shared-{n}", target))["data"] == {"n": str(n)}
    return copied


async def _reloader(client: Client, ns: str, n: int) -> Callable[[], Awaitable[bool]]:
    """The first object: reloader has seen the workload (it records its objects' hash). Later ones: then a
    change of its ConfigMap rolls it (the template is stamped)."""
    await client.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"conf-{n}", "namespace": ns},
                         "data": {"v": "1"}})
    await client.create({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {
        "name": f"web-{n}", "namespace": ns, "annotations": {"reloader.stakater.com/auto": "true"}},
        "spec": {"replicas": 0, "selector": {"matchLabels": {"app": f"web-{n}"}}, "template": {
            "metadata": {"labels": {"app": f"web-{n}"}}, "spec": {"containers": [{
                "name": "web", "image": "nginx:1.27", "envFrom": [{"configMapRef": {"name": f"conf-{n}"}}]}]}}}})
    changed = [n == 1]

    async def reloaded() -> bool:
        dep = await client.get("deployments", f"web-{n}", ns)
        if HASH not in (dep["metadata"].get("annotations") or {}):
            return False
        if not changed[0]:
            await client.patch("configmaps", f"conf-{n}", {"data": {"v": "2"}}, ns)
            changed[0] = True
            return False
        return n == 1 or bool(dep["spec"]["template"]["metadata"].get("annotations"))
    return reloaded


SCENARIOS = {"immortal": Scenario(_immortal), "blackadder": Scenario(_blackadder, before_start=False),
             "copyrator": Scenario(_copyrator), "reloader": Scenario(_reloader)}


# --- the run ---------------------------------------------------------------------------------------


async def run_as_deployed(kube_cluster: Any, kube_client: Client, tmp_path: Path, target: str, image: str,
                          scenario: Scenario) -> None:
    api = api_of(kube_cluster)
    operator = load_operator(target)
    ns = f"img-{operator.name}-{secrets.token_hex(3)}"
    objs = manifests(target, operator, ns, image=image)
    for crd in (o for o in objs if o["kind"] == "CustomResourceDefinition"):
        # The session's CRD as the test kit marks its own: later tests' run_operator may take it over, and
        # the session removes it at its end if it made it.
        crd["metadata"].setdefault("labels", {})[CRD_LABEL] = "true"
        with contextlib.suppress(NotFound):
            await kube_client.get("customresourcedefinitions", crd["metadata"]["name"])
            continue
        current_session().crds.add(crd["metadata"]["name"])
    deployment = next(o for o in objs if o["kind"] == "Deployment")
    webhook_args = webhooks_on_loopback(objs, free_port())
    await deploy(kube_client, [o for o in objs if o["kind"] != "Deployment"], part_of=operator.name,
                 log=lambda _: None)
    pod_name = f"{operator.name}-{secrets.token_hex(4)}"
    lease_name = f"{operator.name}-leader"  # kubeloop run's default --leader-election-id
    run: PodRun | None = None
    try:
        await wait_for(kube_client, "serviceaccounts", deployment["spec"]["template"]["spec"]["serviceAccountName"],
                       ns, timeout=30)
        service_account = deployment["spec"]["template"]["spec"]["serviceAccountName"]
        sa_dir = ServiceAccountDir(tmp_path / "serviceaccount", api.ca, ns)
        first = await bound_token(kube_client, ns, service_account, "token-1")
        sa_dir.write("token", first.encode())
        run = pod_run(deployment, name=pod_name, service_account_dir=sa_dir.path, api_host="127.0.0.1",
                      api_port=api.port, metrics_port=free_port(), health_port=free_port(), extra_args=webhook_args)
        effect = await scenario.make(kube_client, ns, 1) if scenario.before_start else None

        started = time.monotonic()
        podman(*run.argv[len(baseimage.podman()):])
        if effect is None:
            await until(lambda: _probe_ok(run, run.readiness_path), "readiness", run=run)
            effect = await scenario.make(kube_client, ns, 1)
        await until(effect, "first reconcile", run=run)
        to_first = time.monotonic() - started
        await until(lambda: _probe_ok(run, run.readiness_path), "readiness", run=run)
        lease = await kube_client.get("leases.coordination.k8s.io", lease_name, ns)
        assert lease["spec"]["holderIdentity"].startswith(f"{pod_name}_"), lease["spec"]
        user = podman("exec", run.name, "id", "-u").stdout.strip()
        assert user == "65532"
        assert podman("exec", run.name, "touch", "/probe", check=False).returncode != 0  # read-only root

        # Rotation: the file gets a new token, then the old one is revoked. Requests must go on.
        second = await bound_token(kube_client, ns, service_account, "token-2")
        sa_dir.write("token", second.encode())
        await kube_client.delete("secrets", "token-1", ns)
        await until(lambda: _status_is(api, first, 401), "refusal of the revoked token", timeout=60)
        revoked_at = time.monotonic()
        renewed = lease["spec"]["renewTime"]
        after = await scenario.make(kube_client, ns, 2)
        await until(after, "reconcile after the token was revoked", run=run)
        await until(lambda: _renewed_since(kube_client, lease_name, ns, renewed, pod_name),
                    "a Lease renewal with the new token", timeout=30, run=run)
        for path in (run.liveness_path, run.readiness_path):
            assert await probe(run, path) == 200, path
        cgroup_memory, rss = memory_bytes(run.name)

        # SIGTERM, as the kubelet sends it; podman stop would SIGKILL after the grace period.
        stop = time.monotonic()
        podman("kill", "--signal", "TERM", run.name)
        code = podman("wait", run.name, timeout=run.grace_seconds + 30).stdout.strip()
        stopped_in = time.monotonic() - stop
        logs = container_log(run)
        assert code == "0", f"exit {code} after SIGTERM; log:\n{logs[-3000:]}"
        assert stopped_in < run.grace_seconds, f"stopped in {stopped_in:.1f} s, grace {run.grace_seconds} s"
        assert "Traceback" not in logs, logs[-3000:]
        released = await kube_client.get("leases.coordination.k8s.io", lease_name, ns)
        assert not released["spec"].get("holderIdentity"), released["spec"]
        size = int(podman("image", "inspect", "--format", "{{.Size}}", image).stdout.strip())
        print(f"\nimage {target}: {size / 1e6:.0f} MB; start-up to first reconcile {to_first:.2f} s; "
              f"memory {cgroup_memory / 2**20:.1f} MiB (cgroup), RSS {rss / 2**20:.1f} MiB; revoked token survived "
              f"({time.monotonic() - revoked_at:.1f} s to check); SIGTERM to exit {stopped_in:.2f} s",
              file=sys.stderr)
    finally:
        if run is not None:
            podman("rm", "--force", "--time", "0", run.name, check=False)
        await _release_custom_resources(kube_client, objs)
        for obj in (o for o in objs if o["kind"] == "Namespace"):
            with contextlib.suppress(NotFound):
                await kube_client.delete("namespaces", obj["metadata"]["name"])


async def _release_custom_resources(client: Client, objs: list[Obj]) -> None:
    """Deletes the custom resources the scenario made, their finalizers removed first (the operator is
    gone), through each CRD's storage version: no conversion webhook is called, since the one this run
    pointed at 127.0.0.1 died with the container, and later tests must not meet them."""
    for crd in (o for o in objs if o["kind"] == "CustomResourceDefinition"):
        spec = crd["spec"]
        version = next(v["name"] for v in spec["versions"] if v.get("storage"))
        path = f"{spec['group']}/{version}/{spec['names']['plural']}"
        with contextlib.suppress(ApiError):
            for item in (await client.list(path))["items"]:
                meta = item["metadata"]
                with contextlib.suppress(NotFound):
                    await client.patch(path, meta["name"], {"metadata": {"finalizers": None}}, meta.get("namespace"))
                    await client.delete(path, meta["name"], meta.get("namespace"))


async def _probe_ok(run: PodRun, path: str) -> bool:
    return await probe(run, path) == 200


async def _status_is(api: Api, token: str, status: int) -> bool:
    return await status_with(api, token) == status


async def _renewed_since(client: Client, name: str, ns: str, renew_time: str, pod_name: str) -> bool:
    spec = (await client.get("leases.coordination.k8s.io", name, ns))["spec"]
    return spec["renewTime"] > renew_time and spec["holderIdentity"].startswith(f"{pod_name}_")


@pytest.mark.parametrize("name", baseimage.BUNDLED)
async def test_bundled_operator_runs_from_its_image_as_deployed(name: str, kube_cluster: Any, kube_client: Client,
                                                                tmp_path: Path) -> None:
    base_image()
    api_of(kube_cluster)
    image = operator_image(name, baseimage.project_root())
    await run_as_deployed(kube_cluster, kube_client, tmp_path, name, image, SCENARIOS[name])


def readme_echo() -> str:
    text = (ROOT / "README.md").read_text()
    found = re.search(r"```python\n(# echo\.py.*?)```", text, re.DOTALL)
    assert found, "README.md has no echo.py block"
    return found.group(1)


async def _echo(client: Client, ns: str, n: int) -> Callable[[], Awaitable[bool]]:
    await client.create({"apiVersion": "demo.kubeloop.dev/v1", "kind": "Echo",
                         "metadata": {"name": f"hello-{n}", "namespace": ns}, "spec": {"message": f"Hello {n}"}})

    async def echoed() -> bool:
        return (await client.get("configmaps", f"hello-{n}-echo", ns))["data"] == {"message": f"Hello {n}"}
    return echoed


async def test_readme_echo_runs_from_a_scaffolded_projects_image(kube_cluster: Any, kube_client: Client,
                                                                 tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    base_image()
    api_of(kube_cluster)
    project = tmp_path / "echo-demo"
    made = subprocess.run([sys.executable, "-m", "kubeloop.cli.main", "init", "echo-demo"], capture_output=True,
                          text=True, cwd=tmp_path)
    assert made.returncode == 0, made.stdout + made.stderr
    (project / "echo_demo" / "__init__.py").write_text(readme_echo())
    for stale in ("models.py", "reconcile.py"):
        (project / "echo_demo" / stale).unlink()
    # kubeloop itself comes from this checkout: a wheel in the build context, found through the
    # Dockerfile's PIP_FIND_LINKS argument.
    source = tmp_path / "kubeloop-source"  # a copy: building in place would leave build/ in the checkout
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(".git", ".venv", "build", "dist", "*.egg-info",
                                                                "__pycache__", "site", "results"))
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w",
                    str(project / "wheels"), str(source)], check=True, capture_output=True)
    dockerfile = (project / "Dockerfile").read_text()
    assert 'CMD ["run", "echo_demo", "--leader-elect"]' in dockerfile
    tag = f"localhost/kubeloop-test-echo-demo:{secrets.token_hex(3)}"
    cmd = baseimage.build_command(project / "Dockerfile", tag, context=project, base=base_image(),
                                  build_args={"PIP_FIND_LINKS": "/src/wheels"})
    built = subprocess.run(cmd, capture_output=True, text=True)
    _built["echo_demo"] = tag
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    monkeypatch.syspath_prepend(str(project))  # the manifests are generated from the project's operator
    await run_as_deployed(kube_cluster, kube_client, tmp_path, "echo_demo", tag, Scenario(_echo))
