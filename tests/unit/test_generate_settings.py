"""``kubeloop generate ... --set NAME=VALUE`` and the chart's ``settings.<name>`` values: an operator's
non-default settings reach its manifests (copyrator's ``--check-author`` needs a webhook, its Service and
port, and RBAC that the default output has not), and nothing beyond what they need."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from kubeloop import Operator, Settings, builtin, setting
from kubeloop.cli.main import main
from kubeloop.operators.copyrator import operator as copyrator
from kubeloop.packaging.switches import Switch, unsupported

NS = "copyrator-system"
AUTHOR_RULES = [  # what --check-author adds to the RBAC, and nothing else
    ("ClusterRole", {"apiGroups": ["admissionregistration.k8s.io"], "resources": ["mutatingwebhookconfigurations"],
                     "verbs": ["get", "patch"], "resourceNames": ["copyrator-mutating"]}),
    ("ClusterRole", {"apiGroups": ["authorization.k8s.io"], "resources": ["subjectaccessreviews"],
                     "verbs": ["create"]}),
    ("Role", {"apiGroups": [""], "resources": ["secrets"], "verbs": ["create"]}),
    ("Role", {"apiGroups": [""], "resources": ["secrets"], "verbs": ["get"],
              "resourceNames": ["copyrator-author-key"]}),
    ("Role", {"apiGroups": [""], "resources": ["secrets"], "verbs": ["get", "patch"],
              "resourceNames": ["copyrator-webhook-ca"]}),
]


def generate(*args: str, env: dict[str, str] | None = None) -> list[dict[str, Any]]:
    result = CliRunner().invoke(main, ["generate", *args], env=env)
    assert result.exit_code == 0, result.output
    return [d for d in yaml.safe_load_all(result.output) if d]


def refused(*args: str) -> str:
    result = CliRunner().invoke(main, ["generate", *args])
    assert result.exit_code == 2, result.output
    return result.output


def by_kind(objs: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [o for o in objs if o["kind"] == kind]


def container(objs: list[dict[str, Any]]) -> dict[str, Any]:
    return by_kind(objs, "Deployment")[0]["spec"]["template"]["spec"]["containers"][0]


def canon(item: Any) -> str:
    return json.dumps(item, sort_keys=True)


def rules(objs: list[dict[str, Any]]) -> list[tuple[str, dict[str, Any]]]:
    return [(o["kind"], r) for o in objs if o["kind"] in ("ClusterRole", "Role") for r in o["rules"]]


def test_copyrator_by_default_has_no_author_guard() -> None:
    objs = generate("all", "copyrator")
    assert not by_kind(objs, "MutatingWebhookConfiguration") and not by_kind(objs, "ValidatingWebhookConfiguration")
    assert [s["metadata"]["name"] for s in by_kind(objs, "Service")] == ["copyrator-metrics"]
    assert not [a for a in container(objs)["args"] if "check-author" in a or a.startswith("--webhook-")]
    assert not [r for _, r in rules(objs) if "subjectaccessreviews" in r["resources"]]


def test_check_author_adds_the_webhook_service_port_args_and_exactly_its_rbac() -> None:
    default, guarded = generate("all", "copyrator"), generate("all", "copyrator", "--set", "check-author=true")
    hook = by_kind(guarded, "MutatingWebhookConfiguration")[0]
    assert hook["metadata"]["name"] == "copyrator-mutating" and len(hook["webhooks"]) == 1
    webhook = hook["webhooks"][0]
    assert webhook["clientConfig"]["service"] == {"name": "copyrator-webhook", "namespace": NS,
                                                  "path": "/mutate-flant-com-v1-copyrators", "port": 443}
    assert webhook["rules"] == [{"apiGroups": ["flant.com"], "apiVersions": ["v1"], "operations": ["CREATE", "UPDATE"],
                                 "resources": ["copyrators"], "scope": "Namespaced"}]
    assert webhook["failurePolicy"] == "Fail" and webhook["sideEffects"] == "None"
    assert webhook["namespaceSelector"]["matchExpressions"][0]["values"] == [NS, "kube-system"]
    service = next(s for s in by_kind(guarded, "Service") if s["metadata"]["name"] == "copyrator-webhook")
    assert service["spec"]["ports"] == [{"name": "webhook", "port": 443, "protocol": "TCP", "targetPort": "webhook"}]
    args = container(guarded)["args"]
    assert args[-4:] == ["--check-author=true", "--webhook-host=0.0.0.0", "--webhook-port=9443",
                         "--webhook-service=copyrator-webhook"]
    assert {"name": "webhook", "containerPort": 9443, "protocol": "TCP"} in container(guarded)["ports"]
    added = [r for r in rules(guarded) if r not in rules(default)]
    assert sorted(added, key=canon) == sorted(AUTHOR_RULES, key=canon)
    assert all(r in rules(guarded) for r in rules(default))  # nothing taken away either
    # the only new objects: the webhook's (the CA Secret the replicas share, the Service, the configuration)
    names = {(o["kind"], o["metadata"]["name"]) for o in guarded}
    names -= {(o["kind"], o["metadata"]["name"]) for o in default}
    assert names == {("Secret", "copyrator-webhook-ca"), ("Service", "copyrator-webhook"),
                     ("MutatingWebhookConfiguration", "copyrator-mutating")}


def test_set_is_read_like_the_run_flag_and_repeats_for_lists() -> None:
    off = generate("all", "copyrator", "--set", "check_author=false")
    assert not by_kind(off, "MutatingWebhookConfiguration") and "--check-author=false" in container(off)["args"]
    objs = generate("manager", "copyrator", "--set", "closed-namespace=monitoring", "--set", "closed-namespace=ci")
    assert container(objs)["args"][-2:] == ["--closed-namespace=monitoring", "--closed-namespace=ci"]


def test_the_environment_is_not_read() -> None:
    objs = generate("all", "copyrator", env={"KUBELOOP_CHECK_AUTHOR": "true"})
    assert not by_kind(objs, "MutatingWebhookConfiguration")


def test_generating_leaves_the_operators_settings_as_they_were() -> None:
    before = copyrator.settings
    generate("all", "copyrator", "--set", "check-author=true")
    assert copyrator.settings is before and not copyrator.settings.check_author


@pytest.mark.parametrize(("args", "message"), [
    (["--set", "check-autor=true"], "'check-autor' is not a setting of copyrator (its settings: rule-name, "
                                    "rule-type, trusted-namespace, allow-system-namespaces, closed-namespace, "
                                    "max-copies-per-namespace, check-author, operator-namespace)"),
    (["--set", "check-author"], "'check-author' is not NAME=VALUE: give the value too, e.g. --set check-author=true"),
    (["--set", "check-author=maybe"], "check-author: 'maybe' is not a valid boolean"),
    (["--set", "leader-elect=true"], "'leader-elect' is not a setting of copyrator"),
    (["--set", "rule-name=a", "--set", "rule-type=b"], "--rule-name 'a' and --rule-type 'b' disagree"),
])
def test_bad_settings_are_refused_naming_them(args: list[str], message: str) -> None:
    output = refused("all", "copyrator", *args)
    assert "--set" in output and message in " ".join(output.split())


def test_a_dockerfile_refuses_settings() -> None:
    assert "does not depend on the operator's settings" in refused("dockerfile", "copyrator", "--set",
                                                                   "check-author=true")


# --- the chart ----------------------------------------------------------------------------------------------


def chart(tmp_path: Path, *args: str) -> tuple[dict[str, Any], dict[str, str]]:
    result = CliRunner().invoke(main, ["generate", "chart", "copyrator", "-o", str(tmp_path), *args])
    assert result.exit_code == 0, result.output
    files = {str(p.relative_to(tmp_path)): p.read_text() for p in tmp_path.rglob("*") if p.is_file()}
    return yaml.safe_load(files["values.yaml"]), files


def test_copyrator_chart_switches_the_guard_with_a_value(tmp_path: Path) -> None:
    values, files = chart(tmp_path)
    assert values["settings"] == {"checkAuthor": False}
    assert "--check-author: Copy only what the rule's author may read" in files["values.yaml"]
    for name in ("webhooks.yaml", "webhook-service.yaml", "webhook-ca-secret.yaml"):
        assert files[f"templates/{name}"].startswith("{{- if .Values.settings.checkAuthor }}\n")
    deployment = files["templates/deployment.yaml"]
    assert "{{- if .Values.settings.checkAuthor }}\n            - --check-author\n" in deployment
    assert 'fail "extraArgs: set settings.checkAuthor=true instead of --check-author' in deployment
    assert "create cannot be limited by resourceNames" in files["templates/rbac.yaml"]
    assert values["rbac"] == {"create": True}  # the rest of the chart's values are untouched


def test_chart_set_gives_the_value_its_default(tmp_path: Path) -> None:
    values, _ = chart(tmp_path, "--set", "check-author=true")
    assert values["settings"] == {"checkAuthor": True}


def test_settings_that_change_nothing_are_no_chart_values(tmp_path: Path) -> None:
    values, files = chart(tmp_path, "--set", "allow-system-namespaces=true")
    assert values["settings"] == {"checkAuthor": False}  # allow-system-namespaces changes no manifest
    assert '- "--allow-system-namespaces=true"' in files["templates/deployment.yaml"]  # so it is baked in


class GadgetSettings(Settings):
    audit: bool = setting(False, "Record reads.")


gadgets = Operator("gadgets", settings=GadgetSettings)
gadgets.permission(builtin.CONFIG_MAP, ["list", "watch"])
gadgets.permission(builtin.SECRET, ["get"], when=lambda s: s.audit)


def test_an_operator_without_switches_gets_no_settings_value(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["generate", "chart", "immortal", "-o", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert "settings" not in yaml.safe_load((tmp_path / "values.yaml").read_text())


def test_a_conditional_permission_is_a_switched_rule(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["generate", "chart", f"{__name__}:gadgets", "-o", str(tmp_path)])
    assert result.exit_code == 0, result.output
    rbac = (tmp_path / "templates/rbac.yaml").read_text()
    assert "{{- if .Values.settings.audit }}\n- apiGroups:\n  - ''\n  resources:\n  - secrets\n" in rbac


def test_changes_a_chart_cannot_switch_are_named() -> None:
    crd = {"kind": "CustomResourceDefinition", "metadata": {"name": "x.example.com"}, "spec": {"a": 1}}
    changed = {**crd, "spec": {"a": 2}}
    assert unsupported([crd], [changed]) == "it changes CustomResourceDefinition x.example.com"
    assert unsupported([crd], []) == "it removes CustomResourceDefinition x.example.com"
    assert unsupported([], [crd]) == "it adds CustomResourceDefinition x.example.com"
    assert Switch("check-author", "", []).key == "checkAuthor"


def test_reloader_switches_are_its_permission_settings_and_refuse_their_aliases(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["generate", "chart", "reloader", "-o", str(tmp_path)])
    assert result.exit_code == 0, result.output
    values = yaml.safe_load((tmp_path / "values.yaml").read_text())
    assert values["settings"] == {"argoRollouts": False, "ignoreConfigmaps": False, "ignoreSecrets": False}
    deployment = (tmp_path / "templates/deployment.yaml").read_text()
    assert '(eq . "--is-Argo-Rollouts") (hasPrefix "--is-Argo-Rollouts=" .)' in deployment
    rbac = (tmp_path / "templates/rbac.yaml").read_text()
    assert "{{- if .Values.settings.argoRollouts }}\n- apiGroups:\n  - argoproj.io\n" in rbac


def test_deploy_refuses_an_unknown_setting_before_connecting() -> None:
    result = CliRunner().invoke(main, ["deploy", "copyrator", "--kubeconfig", "/nonexistent", "--set", "nope=1"])
    assert result.exit_code == 2 and "'nope' is not a setting of copyrator" in result.output
