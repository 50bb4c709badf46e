"""The README's operator example, run as a new user would: its ``echo.py`` block saved as a file, its
shell blocks run by bash against the test session's cluster.

Only what a shared test machine forces is changed: ``kubeloop cluster ...`` finds the session's
cluster through ``KUBELOOP_CLUSTER_NAME`` (a setting every user has too), the metrics port 8080 becomes a
free port, and the health probe (not in the README's command) gets a free port through its env var."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from kubeloop.envtest import LocalCluster
from kubeloop.envtest.versions import Layout

README = Path(__file__).resolve().parents[2] / "README.md"


def readme_blocks(lang: str) -> list[str]:
    return re.findall(rf"^```{lang}\n(.*?)^```", README.read_text(), re.S | re.M)


def block_with(lang: str, needle: str) -> str:
    found = [b for b in readme_blocks(lang) if needle in b]
    assert len(found) == 1, f"README: expected one {lang} block containing {needle!r}, found {len(found)}"
    return found[0]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cluster_name(cluster: object) -> str:
    if isinstance(cluster, LocalCluster):
        return cluster.name
    kubeconfig = Path(getattr(cluster, "kubeconfig", ""))
    if kubeconfig.parent.parent == Layout.default().cluster_dir("x").parent:
        return kubeconfig.parent.name  # an external cluster that is a kubeloop one
    pytest.skip("the README's commands drive a kubeloop cluster; KUBELOOP_TEST_KUBECONFIG is another one")


def user_env(cluster: object, kubectl: str, probe_port: int) -> dict[str, str]:
    # The console script next to this interpreter (falls back to a wrapper when not installed), and the
    # kubectl that `kubeloop cluster up` built, as the README says.
    bin_dir = Path(sys.executable).parent
    path = [str(bin_dir), str(Path(kubectl).parent), os.environ.get("PATH", "")]
    env = {k: v for k, v in os.environ.items() if k != "KUBECONFIG"}
    env.update(PATH=os.pathsep.join(path), KUBELOOP_CLUSTER_NAME=cluster_name(cluster),
               KUBELOOP_HEALTH_PROBE_BIND_ADDRESS=f"127.0.0.1:{probe_port}")
    return env


def wait_ready(proc: subprocess.Popen[bytes], port: int, timeout: float = 90) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert proc.poll() is None, f"the README's `kubeloop run` exited:\n{proc.stderr.read().decode()[-3000:]}"  # type: ignore[union-attr]
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=2) as resp:
                if resp.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.2)
    raise AssertionError("the README's operator did not become ready")


def stop_operator(shell: subprocess.Popen[bytes]) -> None:
    """SIGTERM to the `kubeloop run` the shell waits for (as Ctrl-C in the README's terminal would), so
    the shell's exit status is the operator's; the whole group only if it is not found."""
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                if os.getpgid(int(proc.name)) == shell.pid and b"run\0echo.py" in (proc / "cmdline").read_bytes():
                    os.kill(int(proc.name), signal.SIGTERM)
                    return
            except OSError:
                continue
    if shell.poll() is None:
        os.killpg(shell.pid, signal.SIGTERM)


def test_readme_operator_example_runs_as_written(kube_cluster, tmp_path: Path) -> None:
    (tmp_path / "echo.py").write_text(block_with("python", "# echo.py"))
    metrics_port, probe_port = free_port(), free_port()
    run_block = block_with("bash", "kubeloop run echo.py").replace("127.0.0.1:8080", f"127.0.0.1:{metrics_port}")
    try_block = block_with("bash", "kubectl apply").replace("127.0.0.1:8080", f"127.0.0.1:{metrics_port}")
    env = user_env(kube_cluster, kube_cluster.kubectl_path, probe_port)
    if not (Path(sys.executable).parent / "kubeloop").exists():
        pytest.skip("the kubeloop console script is not installed next to this Python")
    # The production way to install the CRD, which the README gives inline: it must work as well.
    install = re.search(r"`(kubeloop generate crd echo\.py \| kubectl apply[^`]*)`", README.read_text())
    assert install, "README: the inline `kubeloop generate crd echo.py | kubectl apply ...` is gone"
    applied = subprocess.run(["bash", "-euo", "pipefail", "-c", f"export KUBECONFIG={kube_cluster.kubeconfig}; "
                              + install.group(1)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert applied.returncode == 0 and "echoes.demo.kubeloop.dev" in applied.stdout, applied.stdout + applied.stderr
    operator = subprocess.Popen(["bash", "-euo", "pipefail", "-c", run_block], cwd=tmp_path, env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    try:
        wait_ready(operator, probe_port)
        user = subprocess.run(["bash", "-euo", "pipefail", "-c", try_block], cwd=tmp_path, env=env,
                              capture_output=True, timeout=120)
        assert user.returncode == 0, (user.stdout + user.stderr).decode()[-3000:]
        out = user.stdout.decode()
        assert "Hello" in out and "controller_runtime_reconcile_total" in out, out
    finally:
        stop_operator(operator)
        _, err = operator.communicate(timeout=60)
        kube_cluster.kubectl("delete", "echo", "hello", "-n", "default", "--wait=false",
                             check=False)
    assert operator.returncode == 0, err.decode()[-3000:]
    assert "Traceback" not in err.decode()
