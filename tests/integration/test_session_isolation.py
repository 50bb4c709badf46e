"""Two test sessions on one cluster (a second pytest process pointed at this session's cluster through
KUBELOOP_TEST_KUBECONFIG, as two developers or two CI jobs sharing a cluster would): each runs the same
operator under its own generated RBAC at the same time, and neither takes the other's rights. Afterwards
nothing of the second session is left, and a user's own server-side apply of the same names is not
refused for a conflict with the test kit."""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import json
import os
import signal
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from kubeloop.client import Client, NotFound
from kubeloop.testing import run_operator, wait_for, wait_for_deletion
from kubeloop.testing.session import CRD_LABEL, SESSION_LABEL, current, remove_crd

pytestmark = pytest.mark.time_limit(600)

GROUP = "isolation.kubeloop.dev"
CRD = f"echoes.{GROUP}"

OPERATOR = textwrap.dedent(f'''
    from pydantic import BaseModel

    from kubeloop import Context, Operator
    from kubeloop.resources import CustomResource

    class EchoSpec(BaseModel):
        message: str

    class Echo(CustomResource, group="{GROUP}", version="v1", kind="Echo", plural="echoes"):
        spec: EchoSpec

    op = Operator("isolation-echo")

    @op.reconcile(Echo, owns=["configmaps"])
    async def reconcile(obj: Echo, ctx: Context) -> None:
        await ctx.apply_children([{{"apiVersion": "v1", "kind": "ConfigMap",
                                   "metadata": {{"name": f"{{ctx.name}}-echo"}},
                                   "data": {{"message": obj.spec.message}}}}])

    def echo(name, namespace, message):
        return {{"apiVersion": "{GROUP}/v1", "kind": "Echo", "metadata": {{"name": name, "namespace": namespace}},
                "spec": {{"message": message}}}}
''')

# The second session: its operator converges, tells the first it is running, holds on until the first
# has converged an object meanwhile, then converges one more (its rights intact too).
SECOND = textwrap.dedent('''
    import asyncio, os, pathlib

    from kubeloop.testing import run_operator, wait_for
    from kubeloop.testing.session import current
    from isolation_op import echo, op

    async def test_second_session(kube_cluster, kube_client, namespace):
        here = pathlib.Path(os.environ["ISOLATION_DIR"])
        async with run_operator(kube_cluster, kube_client, op, namespace):
            await kube_client.create(echo("b1", namespace, "one"))
            await wait_for(kube_client, "configmaps", "b1-echo", namespace, timeout=60)
            (here / "b-ready").write_text(current().id)
            for _ in range(1800):
                if (here / "a-done").exists():
                    break
                await asyncio.sleep(0.1)
            else:
                raise AssertionError("the first session never said it was done")
            await kube_client.create(echo("b2", namespace, "two"))
            await wait_for(kube_client, "configmaps", "b2-echo", namespace, timeout=60)
''')


def _load(path: Path) -> Any:
    spec = importlib.util.spec_from_file_location("isolation_op", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


async def _converges(client: Client, module: Any, name: str, namespace: str) -> None:
    await client.create(module.echo(name, namespace, name))
    await wait_for(client, "configmaps", f"{name}-echo", namespace, timeout=60,
                   description=f"the first session's operator to converge {name}")


async def _until(path: Path, proc: asyncio.subprocess.Process, timeout: float) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not path.exists():
        if proc.returncode is not None or loop.time() > deadline:
            out = (await proc.stdout.read()).decode(errors="replace") if proc.stdout else ""
            raise AssertionError(f"the second session did not get its operator running:\n{out[-4000:]}")
        await asyncio.sleep(0.2)


async def _labelled(client: Client, resource: str, session_id: str) -> list[str]:
    items = (await client.list(resource, label_selector=f"{SESSION_LABEL}={session_id}"))["items"]
    return [o["metadata"]["name"] for o in items]


async def test_two_sessions_on_one_cluster_keep_their_own_rights(kube_cluster, kube_client: Client,
                                                                 namespace: str, tmp_path: Path) -> None:
    (tmp_path / "isolation_op.py").write_text(OPERATOR)
    (tmp_path / "test_second.py").write_text(SECOND)
    module = _load(tmp_path / "isolation_op.py")
    env = {**os.environ, "KUBELOOP_TEST_KUBECONFIG": str(kube_cluster.kubeconfig), "ISOLATION_DIR": str(tmp_path)}
    argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir", str(tmp_path),
            "-c", os.devnull, "-o", "asyncio_mode=auto", "-o", "asyncio_default_fixture_loop_scope=session",
            "-o", "asyncio_default_test_loop_scope=session", "test_second.py"]
    async with run_operator(kube_cluster, kube_client, module.op, namespace) as running:
        await _converges(kube_client, module, "a1", namespace)
        proc = await asyncio.create_subprocess_exec(*argv, cwd=tmp_path, env=env, stdout=asyncio.subprocess.PIPE,
                                                    stderr=asyncio.subprocess.STDOUT)
        try:
            await _until(tmp_path / "b-ready", proc, timeout=240)
            second = (tmp_path / "b-ready").read_text()
            assert second != current().id
            # Both sessions' bindings exist side by side, each its own; the first's operator still has its rights.
            mine = await _labelled(kube_client, "clusterrolebindings", current().id)
            assert mine == [f"isolation-echo{current().suffix}"]
            assert await _labelled(kube_client, "clusterrolebindings", second) == [f"isolation-echo-{second}"]
            await _converges(kube_client, module, "a2", namespace)
            (tmp_path / "a-done").write_text("")
            out, _ = await asyncio.wait_for(proc.communicate(), 240)
        finally:
            if proc.returncode is None:
                proc.kill()
                await proc.wait()
        assert proc.returncode == 0, out.decode(errors="replace")[-4000:]
        # The second session ended: nothing of it is left, and the first's operator goes on.
        for resource in ("clusterroles", "clusterrolebindings"):
            assert await _labelled(kube_client, resource, second) == [], resource
        await _converges(kube_client, module, "a3", namespace)
        assert running.audit().ok, running.audit().message

    # The run ended: its session's objects went with it; the user's names were never the test kit's.
    for resource in ("clusterroles", "clusterrolebindings"):
        assert await _labelled(kube_client, resource, current().id) == [], resource
        with pytest.raises(NotFound):
            await kube_client.get(resource, "isolation-echo")
    crd = await kube_client.get("customresourcedefinitions", CRD)
    assert crd["metadata"]["labels"][CRD_LABEL] == "true"
    # What the session's end does to the CRDs it created, done now (no other session runs, and the Echoes
    # left are in test namespaces): the CRD goes, and a user's own server-side apply of it, changed, and of
    # RBAC under the operator's name then goes through without --force-conflicts.
    assert CRD in current().crds
    assert await remove_crd(kube_client, CRD)
    current().crds.discard(CRD)
    # Deleting a CRD with custom resources left takes a while (the API server deletes them first); until it
    # is gone, an apply meets the Terminating CRD and its managers.
    await wait_for_deletion(kube_client, "customresourcedefinitions", CRD, timeout=60)
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["description"] = "the user's own"
    user_crd = {"apiVersion": crd["apiVersion"], "kind": crd["kind"], "metadata": {"name": CRD}, "spec": crd["spec"]}
    user_role = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
                 "metadata": {"name": "isolation-echo"}, "rules": []}
    try:
        for obj in (user_crd, user_role):
            path = tmp_path / f"{obj['kind']}.json"
            path.write_text(json.dumps(obj))
            done = kube_cluster.kubectl("apply", "--server-side", "-f", str(path), check=False)
            assert done.returncode == 0, done.stderr
    finally:
        for resource, name in (("clusterroles", "isolation-echo"), ("customresourcedefinitions", CRD)):
            with contextlib.suppress(NotFound):
                await kube_client.delete(resource, name)


# A session that is stopped while its operator runs: Ctrl-C (SIGINT), or killed outright (SIGKILL).
STOPPED = textwrap.dedent('''
    import asyncio, os, pathlib

    from kubeloop.testing import run_operator
    from kubeloop.testing.session import current
    from isolation_op import op

    async def test_stopped_while_running(kube_cluster, kube_client, namespace):
        async with run_operator(kube_cluster, kube_client, op, namespace):
            (pathlib.Path(os.environ["ISOLATION_DIR"]) / "ready").write_text(current().id)
            await asyncio.sleep(600)
''')


@pytest.mark.parametrize("sig", ["SIGINT", "SIGKILL"])
async def test_a_stopped_session_leaves_nothing_for_long(kube_cluster, kube_client: Client, tmp_path: Path,
                                                         sig: str) -> None:
    """Ctrl-C: the session removes its objects on the way out. SIGKILL: nothing can, so the next session
    on the same host sweeps them at its start (here: this session's sweep, as its start would run it)."""
    (tmp_path / "isolation_op.py").write_text(OPERATOR)
    (tmp_path / "test_stopped.py").write_text(STOPPED)
    env = {**os.environ, "KUBELOOP_TEST_KUBECONFIG": str(kube_cluster.kubeconfig), "ISOLATION_DIR": str(tmp_path)}
    argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir", str(tmp_path),
            "-c", os.devnull, "-o", "asyncio_mode=auto", "-o", "asyncio_default_fixture_loop_scope=session",
            "-o", "asyncio_default_test_loop_scope=session", "test_stopped.py"]
    proc = await asyncio.create_subprocess_exec(*argv, cwd=tmp_path, env=env, stdout=asyncio.subprocess.PIPE,
                                                stderr=asyncio.subprocess.STDOUT)
    try:
        await _until(tmp_path / "ready", proc, timeout=240)
        stopped = (tmp_path / "ready").read_text()
        assert await _labelled(kube_client, "clusterrolebindings", stopped) == [f"isolation-echo-{stopped}"]
        proc.send_signal(getattr(signal, sig))
        out, _ = await asyncio.wait_for(proc.communicate(), 120)
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    if sig == "SIGKILL":
        assert await _labelled(kube_client, "clusterrolebindings", stopped) != []  # nothing could clean up
        swept = await current().sweep(kube_client)
        assert f"ClusterRoleBinding isolation-echo-{stopped}" in swept
    for resource in ("clusterroles", "clusterrolebindings"):
        assert await _labelled(kube_client, resource, stopped) == [], (resource, out.decode(errors="replace")[-3000:])


async def test_a_crd_the_test_kit_did_not_install_is_never_changed(kube_client: Client) -> None:
    """A cluster someone uses has the CRD already: the same one is used as it is (the test kit writes
    nothing, owns no field); a different one fails the test, saying why, and stays as it was."""
    from pydantic import BaseModel

    from kubeloop import Operator
    from kubeloop.resources import CustomResource, crds_for
    from kubeloop.testing import install_crds
    from kubeloop.testing.operator import ForeignCRD

    class GadgetSpec(BaseModel):
        size: int

    class Gadget(CustomResource, group="foreign.kubeloop.dev", version="v1", kind="Gadget", plural="gadgets"):
        spec: GadgetSpec

    op = Operator("foreign-gadgets")

    @op.reconcile(Gadget)
    async def reconcile(obj: Gadget, ctx: Any) -> None:
        pass

    name = "gadgets.foreign.kubeloop.dev"
    [generated] = crds_for(op.custom_resources())
    await kube_client.create(generated)  # the user's, made with their own tool: no test-kit label or manager
    try:
        await install_crds(kube_client, op)
        live = await kube_client.get("customresourcedefinitions", name)
        assert all(m["manager"] != "kubeloop-test" for m in live["metadata"]["managedFields"])
        assert name not in current().crds  # not the session's: never deleted by it

        changed = json.loads(json.dumps(live))
        changed["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["description"] = "the user's own"
        before = await kube_client.replace(changed)
        with pytest.raises(ForeignCRD, match=r"CRD gadgets.foreign.kubeloop.dev exists on this cluster, was not "
                                             r"installed by kubeloop's test kit, and differs .*spec: versions"):
            await install_crds(kube_client, op)
        after = await kube_client.get("customresourcedefinitions", name)
        assert after["metadata"]["resourceVersion"] == before["metadata"]["resourceVersion"]
    finally:
        with contextlib.suppress(NotFound):
            await kube_client.delete("customresourcedefinitions", name)


# One `pytest -n 2` run (pytest-xdist, `--dist each`: every worker runs this test): the workers share one
# local cluster, each runs the operator under its own session's RBAC at the same time as the other.
WORKERS = textwrap.dedent('''
    import asyncio, os, pathlib

    from kubeloop.testing import run_operator, wait_for
    from isolation_op import echo, op

    async def test_each_worker(kube_cluster, kube_client, namespace, worker_id):
        here = pathlib.Path(os.environ["ISOLATION_DIR"])
        async with run_operator(kube_cluster, kube_client, op, namespace):
            await kube_client.create(echo("w1", namespace, worker_id))
            await wait_for(kube_client, "configmaps", "w1-echo", namespace, timeout=60)
            (here / f"{worker_id}.seen").write_text(f"{kube_cluster.server} {kube_cluster.data_dir}")
            for _ in range(1800):  # until the other worker's operator has converged too: side by side
                if len(list(here.glob("gw*.seen"))) == 2:
                    break
                await asyncio.sleep(0.1)
            else:
                raise AssertionError("the other worker never converged")
            await kube_client.create(echo("w2", namespace, worker_id))
            await wait_for(kube_client, "configmaps", "w2-echo", namespace, timeout=60)
''')


@pytest.mark.cluster
async def test_pytest_xdist_workers_share_one_cluster_and_keep_their_own_rights(tmp_path: Path) -> None:
    pytest.importorskip("xdist", reason="pytest-xdist is in the dev extra: pip install -e '.[dev]'")
    (tmp_path / "isolation_op.py").write_text(OPERATOR)
    (tmp_path / "test_workers.py").write_text(WORKERS)
    env = {k: v for k, v in os.environ.items() if k not in ("KUBELOOP_TEST_KUBECONFIG", "KUBELOOP_TEST_KEEP")}
    env["ISOLATION_DIR"] = str(tmp_path)
    argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir", str(tmp_path),
            "-c", os.devnull, "-o", "asyncio_mode=auto", "-o", "asyncio_default_fixture_loop_scope=session",
            "-o", "asyncio_default_test_loop_scope=session", "-n", "2", "--dist", "each", "test_workers.py"]
    proc = await asyncio.create_subprocess_exec(*argv, cwd=tmp_path, env=env, stdout=asyncio.subprocess.PIPE,
                                                stderr=asyncio.subprocess.STDOUT)
    try:
        out, _ = await asyncio.wait_for(proc.communicate(), 480)
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    text = out.decode(errors="replace")
    assert proc.returncode == 0, text[-4000:]
    assert "2 passed" in text, text[-4000:]
    seen = {p.name: p.read_text().split() for p in tmp_path.glob("gw*.seen")}
    assert sorted(seen) == ["gw0.seen", "gw1.seen"]
    (server, data_dir), other = seen["gw0.seen"], seen["gw1.seen"]
    assert other == [server, data_dir], "the two workers used different clusters"
    # The last worker out stopped and wiped it; nothing of the run is left on disk.
    assert not Path(data_dir).exists()
    assert not Path(data_dir).with_name(f"{Path(data_dir).name}.workers").exists()
