"""The article's Deployment, as a real ``kubeloop run copyrator`` process under the generated RBAC:
``args: ["--rule-type", "main-rule"]`` and ``NAMESPACE`` set to the pod's namespace, where the
article keeps its rules; its ``main-rule`` and ConfigMap applied unchanged (sources in ``default``)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import signal
import socket
import sys
from pathlib import Path
from typing import Any

import aiohttp
import yaml

from kubeloop.client import Client, NotFound
from kubeloop.operators.copyrator import operator
from kubeloop.resources import render_rbac
from kubeloop.testing import wait_for, wait_for_deletion
from kubeloop.testing.operator import install_crds, run_operator

EXAMPLES = Path(__file__).parents[2] / "kubeloop" / "operators" / "copyrator" / "examples"
RULES = "copyrators.flant.com"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def ready(port: int, proc: asyncio.subprocess.Process) -> None:
    for _ in range(300):
        with contextlib.suppress(aiohttp.ClientError):
            async with aiohttp.ClientSession() as http, http.get(f"http://127.0.0.1:{port}/readyz") as resp:
                if resp.status == 200:
                    return
        if proc.returncode is not None:
            assert proc.stderr is not None
            raise AssertionError(f"copyrator exited {proc.returncode}: {(await proc.stderr.read()).decode()[-2000:]}")
        await asyncio.sleep(0.1)
    raise AssertionError("copyrator did not become ready")


async def start(kube_cluster: Any, admin: Client, home: str, tmp: Path) -> asyncio.subprocess.Process:
    """The operator as the article deploys it, authenticated as its ServiceAccount in ``home``."""
    await install_crds(admin, operator)
    for obj in render_rbac(operator.name, home, operator.permissions(), events="cluster", leader_election=False):
        await admin.apply(obj, field_manager="kubeloop-test", force=True)
    kubeconfig = await asyncio.to_thread(kube_cluster.service_account_kubeconfig, home, operator.name,
                                         tmp / "kubeconfig")
    port = free_port()
    # NAMESPACE is the article's; POD_NAMESPACE stands for the ServiceAccount namespace file a pod has.
    env = {**os.environ, "NAMESPACE": home, "POD_NAMESPACE": home}
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "kubeloop.cli.main", "run", "copyrator", "--rule-type", "main-rule",
        "--kubeconfig", str(kubeconfig), "--metrics-bind-address", "0",
        "--health-probe-bind-address", f"127.0.0.1:{port}", env=env,
        stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE)
    await ready(port, proc)
    return proc


async def test_the_articles_deployment_and_rule(kube_cluster: Any, kube_client: Client, namespace: str,
                                                tmp_path: Path) -> None:
    home = namespace  # the operator's (the pod's) namespace: the article keeps its rules there
    target = f"article-{secrets.token_hex(3)}"
    source = yaml.safe_load((EXAMPLES / "configmap.yaml").read_text())  # in "default", as written
    article_rule = yaml.safe_load((EXAMPLES / "rule.yaml").read_text())
    await kube_client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": target}})
    proc = await start(kube_cluster, kube_client, home, tmp_path)
    try:
        await kube_client.create(source)
        await kube_client.create({**article_rule, "metadata": {**article_rule["metadata"], "namespace": home}})
        other = {**article_rule, "metadata": {"name": "other-rule", "namespace": home}}
        await kube_client.create(other)
        copy = await wait_for(kube_client, "configmaps", "app-config", target, timeout=30,
                              description="the copy of default/app-config")
        assert copy["data"] == source["data"]
        rule = await wait_for(kube_client, RULES, "main-rule", home, timeout=30, description="main-rule status",
                              predicate=lambda o: (o.get("status") or {}).get("observedGeneration") == 1)
        assert rule["status"]["sources"] == ["default/app-config"]
        copied_to = {c["namespace"] for c in rule["status"]["copies"]}
        assert target in copied_to and not copied_to & {home, "default", "kube-system", "kube-public"}
        # --rule-type picked main-rule: the other rule is not this operator's.
        untouched = await kube_client.get(RULES, "other-rule", home)
        assert not untouched.get("status") and not untouched["metadata"].get("finalizers")
        await kube_client.delete(RULES, "main-rule", home)
        await wait_for_deletion(kube_client, "configmaps", "app-config", target, timeout=30)
    finally:
        if proc.returncode is None:
            proc.send_signal(signal.SIGTERM)
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(proc.wait(), 30)
            if proc.returncode is None:
                proc.kill()
                await proc.wait()
        with contextlib.suppress(NotFound):
            await kube_client.delete("configmaps", "app-config", "default")
        with contextlib.suppress(NotFound):
            await kube_client.delete("namespaces", target)


async def test_uninstalled_operator_escape_hatch(kube_cluster: Any, kube_client: Client, namespace: str) -> None:
    """README, "Uninstalling with rules left": the operator is gone, a rule is deleted and hangs on
    its finalizer; the documented kubectl patch lets it go, and the documented label selector finds
    the copies it left."""
    target = f"hatch-{secrets.token_hex(3)}"
    await kube_client.create({"apiVersion": "v1", "kind": "Namespace",
                              "metadata": {"name": target, "labels": {"hatch": target}}})
    try:
        await kube_client.create({"apiVersion": "v1", "kind": "ConfigMap", "data": {"k": "v"}, "metadata": {
            "name": "hatch", "namespace": namespace, "labels": {"hatch": "yes"}}})
        await kube_client.create({"apiVersion": "flant.com/v1", "kind": "CopyratorRule",
                                  "metadata": {"name": "main-rule", "namespace": namespace},
                                  "ruleType": "configmap", "selector": {"hatch": "yes"}, "namespace": namespace,
                                  "namespaceSelector": {"matchLabels": {"hatch": target}}})
        async with run_operator(kube_cluster, kube_client, operator, namespace, watch_namespaces=None):
            await wait_for(kube_client, "configmaps", "hatch", target, timeout=30)
        await kube_client.delete(RULES, "main-rule", namespace)  # no operator any more
        stuck = await kube_client.get(RULES, "main-rule", namespace)
        assert stuck["metadata"]["deletionTimestamp"]
        assert stuck["metadata"]["finalizers"] == ["copyrator.flant.com/copies"]
        await asyncio.to_thread(kube_cluster.kubectl, "patch", "copyr", "main-rule", "-n", namespace, "--type=json",
                                "-p", '[{"op": "remove", "path": "/metadata/finalizers"}]')
        await wait_for_deletion(kube_client, RULES, "main-rule", namespace, timeout=30)
        assert (await kube_client.get("configmaps", "hatch", target))["data"] == {"k": "v"}  # copies stay
        await asyncio.to_thread(kube_cluster.kubectl, "delete", "cm", "-A", "-l",
                                f"copyrator.flant.com/rule-namespace={namespace}")
        await wait_for_deletion(kube_client, "configmaps", "hatch", target, timeout=30)
        assert (await kube_client.get("configmaps", "hatch", namespace))["data"] == {"k": "v"}  # the source stays
    finally:
        with contextlib.suppress(NotFound):
            await kube_client.delete("namespaces", target)
