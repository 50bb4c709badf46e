"""copyrator deployed with its author guard on, from what ``kubeloop generate`` and the Helm chart emit.

- The chart, rendered by a real helm with ``settings.checkAuthor=true``, has the mutating webhook, its
  Service and port, ``--check-author`` and the guard's RBAC, and the API server accepts it (server
  dry-run); with the default value none of it.
- ``kubeloop generate all copyrator --set check-author=true``: the operator runs (in-process, as its
  ServiceAccount) with the settings parsed from the generated Deployment's arguments, under RBAC equal to
  the generated rules, and every request it makes is granted by the generated RBAC. A tenant whose rights
  are its own namespace (plus ConfigMap writes in one other) asks for copies: where it may not write,
  refused with ``AuthorAllowed=False``; where it may, copied.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shlex
import subprocess
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
import yaml
from click.testing import CliRunner

from kubeloop.cli.flags import settings_from
from kubeloop.cli.main import main
from kubeloop.cli.run import build_command
from kubeloop.client import Client, NotFound
from kubeloop.operators.copyrator import build_operator
from kubeloop.operators.copyrator.settings import CopyratorSettings
from kubeloop.packaging.helm import ensure_helm
from kubeloop.resources import RbacAudit
from kubeloop.testing import wait_for_deletion
from kubeloop.testing.operator import RunningOperator, install_crds, run_operator
from kubeloop.testing.session import current as current_session
from tests.integration.test_author_guard import RULES, _grant_configmaps, author_condition, rule
from tests.integration.test_op_copyrator_security import configmap, tenant_client, wait_status
from tests.integration.test_packaging import helm, render  # noqa: F401 - helm is a fixture

SHELL = Path(__file__).parents[2] / "docs" / "howto" / "shell"
SAR = {"apiGroups": ["authorization.k8s.io"], "resources": ["subjectaccessreviews"], "verbs": ["create"]}
KEY_READ = {"apiGroups": [""], "resources": ["secrets"], "verbs": ["get"], "resourceNames": ["copyrator-author-key"]}
KEY_CREATE = {"apiGroups": [""], "resources": ["secrets"], "verbs": ["create"]}


def by_kind(docs: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [d for d in docs if d["kind"] == kind]


def container(docs: list[dict[str, Any]]) -> dict[str, Any]:
    return by_kind(docs, "Deployment")[0]["spec"]["template"]["spec"]["containers"][0]


def rules_of(docs: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [r for d in by_kind(docs, kind) for r in d["rules"]]


# --- the Helm chart -------------------------------------------------------------------------------------


@pytest.fixture
def chart(tmp_path: Path) -> Path:
    result = CliRunner().invoke(main, ["generate", "chart", "copyrator", "-o", str(tmp_path / "copyrator")])
    assert result.exit_code == 0, result.output
    return tmp_path / "copyrator"


def test_chart_value_switches_the_guard_on(kube_cluster: Any, helm: Any, chart: Path) -> None:  # noqa: F811
    helm("lint", "--strict", str(chart), "--set", "settings.checkAuthor=true")
    namespace = f"t-guard-chart-{secrets.token_hex(3)}"
    _, default = render(helm, chart, namespace)
    assert not by_kind(default, "MutatingWebhookConfiguration") and "--check-author" not in container(default)["args"]
    assert SAR not in rules_of(default, "ClusterRole") and KEY_READ not in rules_of(default, "Role")

    text, docs = render(helm, chart, namespace, "settings.checkAuthor=true")
    hook = by_kind(docs, "MutatingWebhookConfiguration")[0]["webhooks"][0]
    assert hook["clientConfig"]["service"]["name"] == "rel-copyrator-webhook"
    assert hook["clientConfig"]["service"]["namespace"] == namespace
    assert hook["rules"][0]["resources"] == ["copyrators"] and hook["failurePolicy"] == "Fail"
    assert any(s["metadata"]["name"] == "rel-copyrator-webhook" for s in by_kind(docs, "Service"))
    args = container(docs)["args"]
    assert "--check-author" in args and "--webhook-service=rel-copyrator-webhook" in args
    assert {"name": "webhook", "containerPort": 9443, "protocol": "TCP"} in container(docs)["ports"]
    assert SAR in rules_of(docs, "ClusterRole")
    assert KEY_READ in rules_of(docs, "Role") and KEY_CREATE in rules_of(docs, "Role")
    # The key's rules live in the Role, which then exists without leader election too.
    _, alone = render(helm, chart, namespace, "settings.checkAuthor=true", "leaderElection.enabled=false")
    role_rules = rules_of(alone, "Role")
    assert KEY_READ in role_rules and not [r for r in role_rules if "leases" in r["resources"]]
    kube_cluster.kubectl("create", "namespace", namespace)
    try:
        kube_cluster.kubectl("apply", "--dry-run=server", "-f", "-", input=text)
    finally:
        kube_cluster.kubectl("delete", "namespace", namespace, "--wait=false", check=False)


def test_chart_refuses_the_flag_in_extra_args(chart: Path) -> None:
    binary = ensure_helm()
    env = {**os.environ, **{f"HELM_{k}_HOME": str(chart.parent / "helm-home" / k.lower())
                            for k in ("CACHE", "CONFIG", "DATA")}}
    proc = subprocess.run([str(binary), "template", "rel", str(chart), "--set", "extraArgs={--check-author=true}"],
                          capture_output=True, text=True, timeout=120, env=env)
    assert proc.returncode != 0
    assert "extraArgs: set settings.checkAuthor=true instead of --check-author" in proc.stderr


def commands(name: str) -> list[list[str]]:
    """The commands of a shell file the docs include (docs/howto/shell/), one per line."""
    return [shlex.split(line) for line in (SHELL / name).read_text().splitlines() if line.strip()]


@pytest.fixture(scope="module")
def copyrator_system(kube_cluster: Any) -> Iterator[None]:
    """The documented namespace exists for the server dry-runs (deleted at the end if made here: a
    namespace being deleted refuses new content, so the tests share it)."""
    created = kube_cluster.kubectl("create", "namespace", "copyrator-system", check=False).returncode == 0
    yield
    if created:
        kube_cluster.kubectl("delete", "namespace", "copyrator-system", "--wait=false", check=False)


def test_the_documented_generate_command_applies(kube_cluster: Any, copyrator_system: None) -> None:
    """docs/howto/shell/check-author.sh, its apply as a server dry-run (a real MutatingWebhookConfiguration
    with nothing serving it would refuse every rule in the shared cluster)."""
    (line,) = commands("check-author.sh")
    pipe = line.index("|")
    generate, apply = line[:pipe], line[pipe + 1:]
    assert generate[0] == "kubeloop" and apply[0] == "kubectl"
    result = CliRunner().invoke(main, generate[1:])
    assert result.exit_code == 0, result.output
    # --force-conflicts: earlier tests in this shared cluster leave a ClusterRoleBinding "copyrator" owned
    # by their own field manager; a dry run takes nothing over.
    out = kube_cluster.kubectl(*apply[1:], "--dry-run=server", "--force-conflicts", input=result.output).stdout
    for applied in ("mutatingwebhookconfiguration.admissionregistration.k8s.io/copyrator-mutating",
                    "service/copyrator-webhook", "deployment.apps/copyrator"):
        assert f"{applied} serverside-applied (server dry run)" in out, out


def test_the_documented_helm_commands_render_and_apply(kube_cluster: Any, helm: Any, tmp_path: Path,  # noqa: F811
                                                       monkeypatch: pytest.MonkeyPatch, copyrator_system: None) -> None:
    """docs/howto/shell/check-author-helm.sh, its install as `helm template` with the same arguments and
    a server dry-run of the result."""
    generate, install = commands("check-author-helm.sh")
    assert generate[0] == "kubeloop" and install[:2] == ["helm", "install"]
    monkeypatch.chdir(tmp_path)  # the commands' relative chart path
    result = CliRunner().invoke(main, generate[1:])
    assert result.exit_code == 0, result.output
    text = helm("template", *install[2:])
    docs = [d for d in yaml.safe_load_all(text) if d]
    assert "--check-author" in container(docs)["args"] and by_kind(docs, "MutatingWebhookConfiguration")
    kube_cluster.kubectl("apply", "--dry-run=server", "-f", "-", input=text)


def test_the_readme_shows_the_tested_commands() -> None:
    readme = (Path(__file__).parents[2] / "kubeloop" / "operators" / "copyrator" / "README.md").read_text()
    for name in ("check-author.sh", "check-author-helm.sh"):
        for line in (SHELL / name).read_text().splitlines():
            assert line in readme, line


def test_deploy_with_the_setting_and_undeploy_without_it(kube_cluster: Any) -> None:
    """`kubeloop deploy copyrator --set check-author=true` installs the guard's objects; a plain
    `kubeloop undeploy copyrator` removes them too (a webhook configuration left behind, with
    `failurePolicy: Fail` and no Service, would refuse every rule)."""
    namespace = f"t-guard-deploy-{secrets.token_hex(3)}"
    flags = ["--kubeconfig", str(kube_cluster.kubeconfig), "--namespace", namespace, "--timeout", "60"]
    hook = "mutatingwebhookconfiguration/copyrator-mutating"
    try:
        result = CliRunner().invoke(main, ["deploy", "copyrator", *flags, "--set", "check-author=true"])
        assert result.exit_code == 0, result.output
        assert "applied MutatingWebhookConfiguration copyrator-mutating" in result.output
        args = json.loads(kube_cluster.kubectl("get", "-n", namespace, "deployment/copyrator", "-o",
                                               "json").stdout)["spec"]["template"]["spec"]["containers"][0]["args"]
        assert "--check-author=true" in args
        result = CliRunner().invoke(main, ["undeploy", "copyrator", *flags, "--delete-namespace"])
        assert result.exit_code == 0, result.output
        assert "deleted MutatingWebhookConfiguration copyrator-mutating" in result.output
        assert kube_cluster.kubectl("get", hook, check=False).returncode != 0
    finally:
        kube_cluster.kubectl("delete", hook, "--ignore-not-found", check=False)
        kube_cluster.kubectl("delete", "namespace", namespace, "--wait=false", "--ignore-not-found", check=False)


# --- generate all, run under its RBAC -------------------------------------------------------------------------


def generated(home: str) -> list[dict[str, Any]]:
    result = CliRunner().invoke(main, ["generate", "all", "copyrator", "--namespace", home,
                                       "--set", "check-author=true"])
    assert result.exit_code == 0, result.output
    return [d for d in yaml.safe_load_all(result.output) if d]


def deployed_settings(docs: list[dict[str, Any]], home: str) -> CopyratorSettings:
    """What the generated Deployment's arguments make of the settings, parsed as ``kubeloop run`` does;
    the namespace is the pod's (its POD_NAMESPACE), here the test's."""
    args = container(docs)["args"]
    assert args[:2] == ["run", "copyrator"]
    command = build_command(build_operator())
    values = command.make_context("copyrator", list(args[2:])).params
    settings = settings_from(CopyratorSettings, dict(values), command)
    assert {"name": "POD_NAMESPACE", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}} in \
        container(docs)["env"]
    return settings.model_copy(update={"operator_namespace": home})


@pytest_asyncio.fixture(loop_scope="session")
async def deployed(kube_cluster: Any, kube_client: Client) -> AsyncIterator[tuple[RunningOperator, list[Any], str]]:
    token = secrets.token_hex(3)
    home, a, b, c = (f"gen-guard-{x}-{token}" for x in ("home", "a", "b", "c"))
    docs = generated(home)
    op = build_operator()
    op.settings = deployed_settings(docs, home)
    assert op.settings.check_author
    for ns in (home, a, b, c):
        await kube_client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
    await install_crds(kube_client, op)  # before the tenant: its client waits until it may list rules
    try:
        async with tenant_client(kube_cluster, kube_client, a) as tenant:
            await _grant_configmaps(kube_client, c, a)
            async with run_operator(kube_cluster, kube_client, op, home, watch_namespaces=[a, b, c, home]) as run:
                yield run, [docs, tenant, (a, b, c)], home
                for r in (await kube_client.list(RULES, a))["items"]:  # while the operator runs its finalizer
                    await kube_client.delete(RULES, r["metadata"]["name"], a)
                    await wait_for_deletion(kube_client, RULES, r["metadata"]["name"], a, timeout=30)
    finally:
        for ns in (home, a, b, c):
            with contextlib.suppress(NotFound):
                await kube_client.delete("namespaces", ns)


async def test_guard_works_under_the_generated_rbac(deployed: Any, kube_client: Client) -> None:
    run, (docs, tenant, (a, b, c)), home = deployed
    # The RBAC the operator runs under is the generated one (but the lease rule: this run elects no leader),
    # with the test session's names for its cluster-scoped objects (its webhook configurations).
    generated = current_session().rename(docs)
    for kind in ("ClusterRole", "Role"):
        assert {json.dumps(r, sort_keys=True) for r in rules_of(run.rbac, kind)} == {
            json.dumps(r, sort_keys=True) for r in rules_of(generated, kind) if "leases" not in r["resources"]}

    await tenant.create(configmap("mine", a, {"k": "v"}, {"src": "gen"}))
    await tenant.create(rule("into-b", a, "gen", [a], [b]))  # b: the tenant may not write there
    await tenant.create(rule("into-c", a, "gen", [a], [c]))  # c: it may
    refused = await wait_status(kube_client, a, "into-b", lambda st: author_condition(st) is not None, "into-b judged")
    cond = author_condition(refused)
    assert cond and cond["status"] == "False" and cond["reason"] == "Forbidden"
    assert f"user system:serviceaccount:{a}:tenant may not create configmaps in namespace {b}" in cond["message"]
    with pytest.raises(NotFound):
        await kube_client.get("configmaps", "mine", b)
    allowed = await wait_status(kube_client, a, "into-c", lambda st: st.get("copyCount") == 1, "into-c: 1 copy")
    assert (author_condition(allowed) or {}).get("status") == "True"
    assert (await kube_client.get("configmaps", "mine", c))["data"] == {"k": "v"}

    # Every request the operator made is granted by the generated RBAC, and the guard's rules were used:
    # the key Secret made on first start, SubjectAccessReviews asked.
    await kube_client.get("secrets", "copyrator-author-key", home)
    assert run.client.used_permissions is not None
    used = {u for u in run.client.used_permissions if not (u.verb == "create" and (u.group, u.resource) in run.shipped)}
    report = RbacAudit.from_manifests(docs).check(used)
    assert not report.missing, report.message
    made = {(u.verb, u.group, u.resource) for u in used}
    assert {("create", "authorization.k8s.io", "subjectaccessreviews"), ("create", "", "secrets"),
            ("get", "", "secrets")} <= made
