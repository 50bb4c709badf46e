"""`kubeloop run FILE` as a real process: flags and KUBELOOP_* env vars, probes, metrics, SIGTERM."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import sys
import textwrap
from pathlib import Path

import aiohttp

from kubeloop.client import Client
from kubeloop.testing import wait_for

from .conftest import echo

OPERATOR = textwrap.dedent('''
    from kubeloop import Context, Operator

    op = Operator("echo")

    @op.reconcile("echoes.test.kubeloop.dev", owns=["configmaps"])
    async def reconcile(obj: dict, ctx: Context) -> None:
        await ctx.apply_children([{
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": f"{ctx.name}-echo"},
            "data": {"message": obj["spec"]["message"]},
        }])
        await ctx.patch_status({
            "observedGeneration": obj["metadata"]["generation"],
            "conditions": ctx.condition("Ready", True, "Echoed"),
        })
''')


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def get(url: str) -> tuple[int, str]:
    async with aiohttp.ClientSession() as http, http.get(url) as resp:
        return resp.status, await resp.text()


async def test_run_file_with_flags_and_env(kube_cluster, kube_client: Client, namespace: str, echo_crd: str,
                                           tmp_path: Path) -> None:
    (tmp_path / "echo.py").write_text(OPERATOR)
    metrics_port, probe_port = free_port(), free_port()
    env = {**os.environ, "KUBELOOP_NAMESPACE": namespace, "KUBELOOP_LOG_FORMAT": "json"}
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "kubeloop.cli.main", "run", str(tmp_path / "echo.py"),
        "--kubeconfig", str(kube_cluster.kubeconfig), "--metrics-bind-address", f"127.0.0.1:{metrics_port}",
        "--health-probe-bind-address", f"127.0.0.1:{probe_port}", env=env,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    try:
        for _ in range(200):
            try:
                if (await get(f"http://127.0.0.1:{probe_port}/readyz"))[0] == 200:
                    break
            except aiohttp.ClientError:
                pass
            assert proc.returncode is None, (await proc.stderr.read()).decode()[-2000:]
            await asyncio.sleep(0.1)
        await kube_client.create(echo("cli1", namespace, "from-cli"))
        cm = await wait_for(kube_client, "configmaps", "cli1-echo", namespace, timeout=30)
        assert cm["data"]["message"] == "from-cli"
        await wait_for(kube_client, echo_crd, "cli1", namespace, timeout=30,
                       predicate=lambda o: bool((o.get("status") or {}).get("conditions")))
        wanted = 'controller_runtime_reconcile_total{controller="echo-echoes",result="success"}'
        for _ in range(50):  # the status patch is the reconcile's last step: it is counted right after
            status, text = await get(f"http://127.0.0.1:{metrics_port}/metrics")
            if wanted in text:
                break
            await asyncio.sleep(0.1)
        assert status == 200 and wanted in text
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = await asyncio.wait_for(proc.communicate(), 30)
    assert proc.returncode == 0, err.decode()[-2000:]
    lines = [line for line in err.decode().splitlines() if line.startswith("{")]
    assert lines, "KUBELOOP_LOG_FORMAT=json should give JSON lines"
    assert any('"reconcileID"' in line and f'"{namespace}/cli1"' in line for line in lines) or any(
        "manager stopped" in line for line in lines)


async def test_run_names_a_missing_operator(tmp_path: Path) -> None:
    (tmp_path / "op.py").write_text(OPERATOR)
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "kubeloop.cli.main", "run", f"{tmp_path / 'op.py'}:missing",
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    _, err = await proc.communicate()
    assert proc.returncode != 0 and b"not a kubeloop.Operator" in err
