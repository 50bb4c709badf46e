"""Every way `kubeloop run` can fail to start, as a real process: one `Error:` paragraph naming the
problem and the fix, a non-zero exit code, and no traceback unless --debug asks for it."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from kubeloop.client import Client

DICT_OPERATOR = textwrap.dedent('''
    from kubeloop import Operator

    op = Operator("gadgets")

    @op.reconcile("gadgets.missing.kubeloop.dev")
    async def reconcile(obj, ctx):
        pass
''')

TYPED_OPERATOR = textwrap.dedent('''
    from pydantic import BaseModel
    from kubeloop import Operator
    from kubeloop.resources import CustomResource

    class WidgetSpec(BaseModel):
        size: int = 1

    class Widget(CustomResource, group="errors.kubeloop.dev", version="v1", kind="Widget"):
        spec: WidgetSpec

    op = Operator("widgets")

    @op.reconcile(Widget)
    async def reconcile(obj, ctx):
        pass
''')

CONFIGMAP_OPERATOR = textwrap.dedent('''
    from kubeloop import Operator

    op = Operator("cmwatch")

    @op.reconcile("configmaps")
    async def reconcile(obj, ctx):
        pass
''')

NO_PORTS = ["--metrics-bind-address", "0", "--health-probe-bind-address", "0"]


def kubeloop_run(*args: str, cwd: Path, env: dict[str, str] | None = None) -> tuple[int, str]:
    proc = subprocess.run([sys.executable, "-m", "kubeloop.cli.main", "run", *args], cwd=cwd,
                          env={**os.environ, **(env or {})}, capture_output=True, text=True, timeout=90)
    return proc.returncode, proc.stdout + proc.stderr


def assert_one_error(rc: int, out: str, *needles: str) -> None:
    assert rc != 0, out
    assert "Traceback" not in out, out
    assert "Error:" in out, out
    for needle in needles:
        assert needle in out, f"{needle!r} not in:\n{out}"


def write(tmp_path: Path, name: str, text: str) -> str:
    (tmp_path / name).write_text(text)
    return str(tmp_path / name)


# --- a wrong target ----------------------------------------------------------------------------------

def test_missing_file_suggests_the_nearby_one(tmp_path: Path) -> None:
    write(tmp_path, "echo.py", CONFIGMAP_OPERATOR)
    assert_one_error(*kubeloop_run("ecoh.py", cwd=tmp_path), "no such file: ecoh.py", "did you mean 'echo.py'")


def test_module_without_an_operator_says_how_to_make_one(tmp_path: Path) -> None:
    write(tmp_path, "plain.py", "x = 1\n")
    assert_one_error(*kubeloop_run("plain.py", cwd=tmp_path), "defines 0 kubeloop.Operator", "Operator(")


def test_typo_in_a_bundled_operators_name(tmp_path: Path) -> None:
    assert_one_error(*kubeloop_run("imortal", cwd=tmp_path), "'imortal' is not a bundled operator",
                     "did you mean 'immortal'")


def test_typo_in_the_operator_attribute(tmp_path: Path) -> None:
    write(tmp_path, "cm.py", CONFIGMAP_OPERATOR)
    assert_one_error(*kubeloop_run("cm.py:opp", cwd=tmp_path), "'opp' is not a kubeloop.Operator",
                     "did you mean 'op'")


def test_an_exception_in_the_users_module_is_one_line_and_debug_shows_the_traceback(tmp_path: Path) -> None:
    write(tmp_path, "broken.py", "import json\nimport not_installed_dependency\n")
    rc, out = kubeloop_run("broken.py", cwd=tmp_path)
    assert_one_error(rc, out, "loading", "No module named 'not_installed_dependency'", "line 2", "--debug")
    rc, out = kubeloop_run("broken.py", "--debug", cwd=tmp_path)
    assert rc != 0 and "Traceback" in out, out


# --- a bad kubeconfig --------------------------------------------------------------------------------

def test_kubeconfig_file_missing(tmp_path: Path) -> None:
    assert_one_error(*kubeloop_run("immortal", "--kubeconfig", str(tmp_path / "nope"), *NO_PORTS, cwd=tmp_path),
                     f"--kubeconfig {tmp_path / 'nope'}: no such file", "kubeloop cluster kubeconfig")


def test_no_kubeconfig_anywhere_and_not_in_a_cluster(tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path), "KUBECONFIG": "", "KUBERNETES_SERVICE_HOST": ""}
    assert_one_error(*kubeloop_run("immortal", *NO_PORTS, cwd=tmp_path, env=env), "no kubeconfig found",
                     str(tmp_path / ".kube" / "config"), "--kubeconfig")


def test_kubeconfig_that_is_not_yaml(tmp_path: Path) -> None:
    bad = write(tmp_path, "bad.yaml", "clusters: [oops\n")
    assert_one_error(*kubeloop_run("immortal", "--kubeconfig", bad, *NO_PORTS, cwd=tmp_path),
                     f"kubeconfig {bad} is not valid YAML", "line 2")


def test_kubeconfig_context_missing(kube_cluster, tmp_path: Path) -> None:
    assert_one_error(*kubeloop_run("immortal", "--kubeconfig", str(kube_cluster.kubeconfig), "--context",
                                   "nope", *NO_PORTS, cwd=tmp_path),
                     "context 'nope' not found", "known:", "--context")


# --- an unreachable server ---------------------------------------------------------------------------

def test_connection_refused_names_the_server_and_what_to_check(kube_cluster, tmp_path: Path) -> None:
    with socket.socket() as s:  # a port that was free a moment ago: nothing listens there
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    text = kube_cluster.kubeconfig.read_text()
    server = next(line.split("server:", 1)[1].strip() for line in text.splitlines() if "server:" in line)
    kubeconfig = write(tmp_path, "refused.yaml", text.replace(server, f"https://127.0.0.1:{port}"))
    assert_one_error(*kubeloop_run("immortal", "--kubeconfig", kubeconfig, *NO_PORTS, cwd=tmp_path),
                     f"cannot reach the API server https://127.0.0.1:{port}", "connection refused",
                     "kubeloop cluster status", "kubeloop cluster up")


# --- a kind the server does not serve ----------------------------------------------------------------

def test_typed_kind_not_installed_names_generate_crd_and_install_crds(kube_cluster, tmp_path: Path) -> None:
    target = write(tmp_path, "widgets.py", TYPED_OPERATOR)
    assert_one_error(*kubeloop_run(target, "--kubeconfig", str(kube_cluster.kubeconfig), *NO_PORTS, cwd=tmp_path),
                     "does not serve Widget (widgets.errors.kubeloop.dev", "not installed",
                     f"kubeloop generate crd {target}", "--install-crds")


def test_install_crds_is_refused_for_a_kind_named_only_by_a_string(kube_cluster, tmp_path: Path) -> None:
    target = write(tmp_path, "gadgets.py", DICT_OPERATOR)
    args = (target, "--kubeconfig", str(kube_cluster.kubeconfig), *NO_PORTS)
    assert_one_error(*kubeloop_run(*args, cwd=tmp_path), "does not serve 'gadgets.missing.kubeloop.dev'",
                     "kubectl apply")
    assert_one_error(*kubeloop_run(*args, "--install-crds", cwd=tmp_path), "--install-crds cannot help",
                     "no model to build its CRD from", "CustomResource model")


# --- missing RBAC ------------------------------------------------------------------------------------

async def test_forbidden_list_names_verb_resource_and_generate_rbac(kube_cluster, kube_client: Client,
                                                                    namespace: str, tmp_path: Path) -> None:
    await kube_client.create({"apiVersion": "v1", "kind": "ServiceAccount",
                              "metadata": {"name": "nobody", "namespace": namespace}})
    kubeconfig = kube_cluster.service_account_kubeconfig(namespace, "nobody", tmp_path / "sa.kubeconfig")
    target = write(tmp_path, "cm.py", CONFIGMAP_OPERATOR)
    user = f"system:serviceaccount:{namespace}:nobody"
    rc, out = kubeloop_run(target, "--kubeconfig", str(kubeconfig), *NO_PORTS, cwd=tmp_path)
    assert_one_error(rc, out, f"user '{user}' may not list configmaps in all namespaces",
                     f"kubeloop generate rbac {target}")
    rc, out = kubeloop_run(target, "--kubeconfig", str(kubeconfig), "--namespace", namespace, *NO_PORTS,
                           cwd=tmp_path)
    assert_one_error(rc, out, f"may not list configmaps in namespace {namespace}")


@pytest.mark.parametrize("flag", ["--debug"])
def test_debug_shows_the_traceback_of_a_start_up_error(flag: str, tmp_path: Path) -> None:
    bad = write(tmp_path, "bad.yaml", "clusters: [oops\n")
    rc, out = kubeloop_run("immortal", "--kubeconfig", bad, *NO_PORTS, flag, cwd=tmp_path)
    assert rc != 0 and "Traceback" in out and "not valid YAML" in out, out


def test_generate_rbac_for_a_kind_named_by_a_string_is_one_error(tmp_path: Path) -> None:
    target = write(tmp_path, "gadgets.py", DICT_OPERATOR)
    proc = subprocess.run([sys.executable, "-m", "kubeloop.cli.main", "generate", "rbac", target], cwd=tmp_path,
                          capture_output=True, text=True, timeout=60)
    assert_one_error(proc.returncode, proc.stdout + proc.stderr, "cannot tell which resource",
                     "'gadgets.missing.kubeloop.dev'", "CustomResource model")


async def test_forbidden_lease_names_leader_election(kube_cluster, kube_client: Client, namespace: str,
                                                     tmp_path: Path) -> None:
    sa = {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "watcher", "namespace": namespace}}
    role = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
            "metadata": {"name": "watch-configmaps", "namespace": namespace},
            "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["list", "watch"]}]}
    binding = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
               "metadata": {"name": "watch-configmaps", "namespace": namespace},
               "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "watch-configmaps"},
               "subjects": [{"kind": "ServiceAccount", "name": "watcher", "namespace": namespace}]}
    for obj in (sa, role, binding):
        await kube_client.create(obj)
    kubeconfig = kube_cluster.service_account_kubeconfig(namespace, "watcher", tmp_path / "sa.kubeconfig")
    target = write(tmp_path, "cm.py", CONFIGMAP_OPERATOR)
    args = (target, "--kubeconfig", str(kubeconfig), "--namespace", namespace, *NO_PORTS)
    rc, out = kubeloop_run(*args, "--leader-elect", "--leader-election-namespace", namespace, cwd=tmp_path)
    assert_one_error(rc, out, f"may not get leases.coordination.k8s.io in namespace {namespace}",
                     "for --leader-elect", "kubeloop generate rbac")
