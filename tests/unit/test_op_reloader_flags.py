"""Reloader's command line on ``kubeloop run reloader``: every flag of Reloader 1.4 is accepted with its
meaning or refused with what to use instead; its selector syntax and list flags are read as Reloader
reads them."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from click.testing import CliRunner, Result

from kubeloop.helpers.selectors import matches, parse
from kubeloop.operators.reloader import build_operator
from kubeloop.operators.reloader.compat import BOOLEAN, UNSUPPORTED, items, selector
from kubeloop.operators.reloader.policy import CONFIG_MAP, SECRET, policy_of
from kubeloop.operators.reloader.settings import ReloaderSettings

# Every flag Reloader 1.4.14 registers (internal/pkg/util/util.go: ConfigureReloaderFlags).
RELOADER_FLAGS = {
    "auto-reload-all", "configmap-annotation", "secret-annotation", "auto-annotation", "ignore-annotation",
    "configmap-auto-annotation", "secret-auto-annotation", "auto-search-annotation", "search-match-annotation",
    "pause-deployment-annotation", "pause-deployment-time-annotation", "log-format", "log-level", "webhook-url",
    "resources-to-ignore", "ignored-workload-types", "namespaces", "namespaces-to-ignore", "namespace-selector",
    "resource-label-selector", "is-Argo-Rollouts", "reload-strategy", "reload-on-create", "reload-on-delete",
    "enable-ha", "sync-after-restart", "enable-pprof", "pprof-addr", "enable-csi-integration",
}


def invoke(args: list[str], monkeypatch: pytest.MonkeyPatch,
           env: dict[str, str] | None = None) -> tuple[Result, ReloaderSettings, dict[str, Any]]:
    """Runs ``kubeloop run reloader ARGS`` up to the point where it would start: (result, the
    operator's settings, the framework's options as a dict)."""
    import kubeloop.cli.runner as runner
    from kubeloop.cli.run import build_command

    seen: dict[str, ReloaderSettings] = {}
    framework: dict[str, Any] = {}

    async def fake_run(op, options, target=None):  # noqa: ANN001, ANN202 - stands in for the real runner
        seen["settings"] = op.settings
        framework.update(dataclasses.asdict(options))
        op.specs()  # what the real runner does first
        return 0

    monkeypatch.setattr(runner, "run_operator", fake_run)
    result = CliRunner().invoke(build_command(build_operator()), args, env=env or {})
    return result, seen.get("settings", ReloaderSettings()), framework


def test_every_reloader_flag_is_known(monkeypatch: pytest.MonkeyPatch) -> None:
    from kubeloop.cli.run import build_command

    command = build_command(build_operator())
    spelled = {opt.lstrip("-") for p in command.params for opt in p.opts}
    assert RELOADER_FLAGS <= spelled, RELOADER_FLAGS - spelled


def test_the_arguments_reloaders_chart_passes(monkeypatch: pytest.MonkeyPatch) -> None:
    """Arguments as deployments/kubernetes/chart/reloader/templates/deployment.yaml writes them."""
    result, settings, framework = invoke([
        "--log-format=json", "--log-level=debug", "--resources-to-ignore=secrets",
        "--ignored-workload-types=jobs,cronjobs", "--namespaces-to-ignore=kube-system",
        '--namespace-selector="reloader:enabled,team:*"', "--resource-label-selector=reload=yes",
        "--is-Argo-Rollouts=true", "--reload-on-create=true", "--reload-on-delete=true",
        "--sync-after-restart=true", "--reload-strategy=env-vars", "--enable-ha=true", "--auto-reload-all=true",
        "--enable-csi-integration=false"], monkeypatch)
    assert result.exit_code == 0, result.output
    s = settings
    assert s.auto_reload_all and s.reload_on_create and s.reload_on_delete and s.argo_rollouts
    assert s.reload_strategy == "env-vars" and s.ignored_namespaces == {"kube-system"}
    assert s.namespace_selector == ("reloader=enabled", "team") and s.resource_label_selector == ("reload=yes",)
    assert not s.tracks(SECRET) and s.tracks(CONFIG_MAP)
    assert not s.reloads("cronjobs") and s.reloads("deployments") and s.reloads("rollouts")
    assert framework["leader_elect"] is True and framework["log_format"] == "json"


def test_scoped_namespaces_map_onto_the_framework(monkeypatch: pytest.MonkeyPatch) -> None:
    result, _, framework = invoke(["--namespaces=a,b"], monkeypatch)
    assert result.exit_code == 0, result.output
    assert framework["namespace"] == ("a,b",)
    result, _, framework = invoke([], monkeypatch, env={"KUBERNETES_NAMESPACE": "team-a"})
    assert framework["namespace"] == ("team-a",)


def test_switches_take_go_style_values(monkeypatch: pytest.MonkeyPatch) -> None:
    for args, expected in ((["--auto-reload-all"], True), (["--auto-reload-all=false"], False),
                           (["--auto-reload-all=true", "--dry-run"], True), ([], False)):
        result, settings, _ = invoke(args, monkeypatch)
        assert result.exit_code == 0, result.output
        assert settings.auto_reload_all is expected, args
    result, _, _ = invoke(["--reload-on-create=maybe"], monkeypatch)
    assert result.exit_code == 2 and "--reload-on-create" in result.output


def test_repeated_list_flags_add_up(monkeypatch: pytest.MonkeyPatch) -> None:
    result, settings, _ = invoke(["--namespace-selector", "reloader:enabled", "--namespace-selector", "env=*",
                                  "--namespaces-to-ignore=a", "--namespaces-to-ignore=b,c",
                                  "--ignored-workload-types=jobs", "--ignored-workload-types=daemonsets"],
                                 monkeypatch)
    assert result.exit_code == 0, result.output
    s = settings
    assert s.namespace_selector == ("reloader=enabled", "env")
    assert s.ignored_namespaces == {"a", "b", "c"} and not s.reloads("daemonsets")


@pytest.mark.parametrize("flag", sorted(UNSUPPORTED))
def test_unsupported_flags_are_refused_with_what_to_do(flag: str, monkeypatch: pytest.MonkeyPatch) -> None:
    args = [f"--{flag}"] if flag in ("enable-pprof", "enable-csi-integration") else [f"--{flag}", "x"]
    result, _, _ = invoke(args, monkeypatch)
    assert result.exit_code == 2, result.output
    assert f"--{flag}" in result.output and "not supported by kubeloop's reloader" in result.output
    with pytest.raises(ValueError, match=f"--{flag}"):
        ReloaderSettings(**{flag.replace("-", "_"): "x" if flag not in BOOLEAN else True})


@pytest.mark.parametrize(("args", "named"), [
    (["--namespace-selector", "reloader:enabled:yes"], "--namespace-selector"),
    (["--namespace-selector", "a in (x"], "--namespace-selector"),
    (["--resource-label-selector", "team=web*"], "--resource-label-selector"),
    (["--ignored-workload-types=pods"], "--ignored-workload-types"),
    (["--resources-to-ignore=services"], "--resources-to-ignore"),
    (["--resources-to-ignore=secrets", "--resources-to-ignore=configmaps"], "--resources-to-ignore"),
    (["--reload-strategy=rolling"], "--reload-strategy"),
    (["--log-level=trace"], "--log-level"),
])
def test_bad_values_stop_with_the_flags_name(args: list[str], named: str,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    result, _, _ = invoke(args, monkeypatch)
    assert result.exit_code == 2, result.output
    assert named in result.output, result.output


@pytest.mark.parametrize(("given", "expected"), [
    ("reloader:enabled", "reloader=enabled"), ("team:*", "team"), ("team=*", "team"),
    ("a=b,c:d", "a=b,c=d"), (("a:b", "c"), "a:b,c".replace("a:b", "a=b")), ('"x:y"', "x=y"),
    ("tier in (web, api),!legacy", "tier in (web, api),!legacy"), ("example.com/team:web", "example.com/team=web"),
    ("", ""),
])
def test_reloader_selector_syntax(given: str | tuple[str, ...], expected: str) -> None:
    assert selector("--namespace-selector", given) == expected


def test_converted_selectors_match_what_reloader_matches() -> None:
    requirements = parse(selector("--namespace-selector", ("reloader:enabled", "team:*")))
    assert matches(requirements, {"reloader": "enabled", "team": "x"})
    assert not matches(requirements, {"reloader": "enabled"})
    assert not matches(requirements, {"reloader": "disabled", "team": "x"})


def test_list_items() -> None:
    assert items(("a,b", " c ", '"d,e"')) == ["a", "b", "c", "d", "e"]
    assert items("x in (1,2),y") == ["x in (1,2)", "y"]
    assert items(None) == [] and items("") == []


def test_pod_template_annotations_stand_in_kind_by_kind() -> None:
    template = {"reloader.stakater.com/auto": "true", "configmap.reloader.stakater.com/reload": "t"}
    assert policy_of({}, template_annotations=template).auto == {CONFIG_MAP, SECRET}
    # The workload speaks about Secrets only: ConfigMaps still follow the template.
    p = policy_of({"secret.reloader.stakater.com/reload": "s"}, template_annotations=template)
    assert p.auto == {CONFIG_MAP} and p.named == {CONFIG_MAP: ("t",), SECRET: ("s",)}
    # "auto" on the workload covers both kinds: the template is not read at all.
    p = policy_of({"reloader.stakater.com/auto": "false"}, template_annotations=template)
    assert not p.tracks_anything
    # Exclusions and "ignore" are the workload's only (as in Reloader).
    p = policy_of({}, template_annotations={**template, "reloader.stakater.com/ignore": "true",
                                            "configmaps.exclude.reloader.stakater.com/reload": "t"})
    assert not p.ignored and p.excluded[CONFIG_MAP] == ()


def test_with_a_resource_label_selector_label_changes_wake_the_workloads() -> None:
    from kubeloop.cache import Event

    def cm(labels: dict[str, str]) -> dict[str, Any]:
        return {"kind": "ConfigMap", "metadata": {"name": "c", "namespace": "n", "labels": labels}, "data": {}}

    op = build_operator()
    relabelled = Event("modified", cm({"team": "web"}), cm({}))
    (plain, _) = op.specs()[0].watches
    assert not any(p(relabelled) for p in plain.predicates)  # labels alone do not matter by default
    op.settings = ReloaderSettings(resource_label_selector="team:web")
    watches = op.specs()[0].watches
    assert watches and all(any(p(relabelled) for p in w.predicates) for w in watches)


def test_rbac_follows_the_settings() -> None:
    def rules(**settings: Any) -> dict[tuple[str, str], set[str]]:
        op = build_operator()
        op.settings = ReloaderSettings(**settings)
        out: dict[tuple[str, str], set[str]] = {}
        for p in op.permissions():
            out.setdefault((p.group, p.resource), set()).update(p.verbs)
        return out

    default = rules()
    assert ("argoproj.io", "rollouts") not in default
    recreated = {"list", "watch", "patch", "delete", "create"}
    assert default[("batch", "jobs")] == recreated, "annotated Jobs are deleted and created again, as by Reloader"
    assert ("batch", "jobs") not in rules(ignored_workload_types="jobs")
    assert rules(argo_rollouts=True)[("argoproj.io", "rollouts")] == {"list", "watch", "patch"}
    assert rules(cronjob_action="create-job")[("batch", "jobs")] == recreated
    assert rules(cronjob_action="create-job", ignored_workload_types="jobs").get(("batch", "jobs")) is None
    assert rules(reload_cronjobs=True, cronjob_action="create-job",
                 ignored_workload_types="jobs")[("batch", "jobs")] == {"create"}  # a CronJob's Job only
    assert ("", "secrets") not in rules(resources_to_ignore="secrets")
    assert ("", "secrets") in rules(resources_to_ignore="configmaps")


def test_merge_patches_for_custom_resources_carry_whole_lists() -> None:
    from kubeloop.operators.reloader.workloads import expand_lists

    template = {"metadata": {"labels": {"a": "b"}}, "spec": {"containers": [
        {"name": "app", "image": "i", "env": [{"name": "KEEP", "value": "1"},
                                              {"name": "STAKATER_X_CONFIGMAP", "value": "old"}]},
        {"name": "sidecar", "image": "s"}]}}
    change = {"spec": {"containers": [{"name": "app", "env": [{"name": "STAKATER_X_CONFIGMAP", "value": "new"},
                                                              {"name": "STAKATER_Y_SECRET", "value": "y"}]}]}}
    assert expand_lists(template, change) == {"spec": {"containers": [
        {"name": "app", "image": "i", "env": [{"name": "KEEP", "value": "1"},
                                              {"name": "STAKATER_X_CONFIGMAP", "value": "new"},
                                              {"name": "STAKATER_Y_SECRET", "value": "y"}]},
        {"name": "sidecar", "image": "s"}]}}
    annotation = {"metadata": {"annotations": {"h": "1"}}}
    assert expand_lists(template, annotation) == annotation  # maps stay partial


def test_job_from_cronjob() -> None:
    from kubeloop.operators.reloader.jobs import job_from, job_name

    cron = {"metadata": {"name": "nightly-report", "namespace": "n", "uid": "u1"},
            "spec": {"jobTemplate": {"metadata": {"labels": {"t": "r"}, "annotations": {"x": "y"}},
                                     "spec": {"backoffLimit": 1, "template": {"spec": {"containers": []}}}}}}
    job = job_from(cron, {"metadata": {"annotations": {"h": "abc"}}}, "abcdef0123456789")
    assert job["metadata"]["name"] == "nightly-report-reload-abcdef0123"
    assert job["metadata"]["annotations"] == {"cronjob.kubernetes.io/instantiate": "manual", "x": "y"}
    assert job["metadata"]["ownerReferences"][0]["uid"] == "u1" and job["spec"]["backoffLimit"] == 1
    assert job["spec"]["template"] == {"metadata": {"annotations": {"h": "abc"}}, "spec": {"containers": []}}
    assert len(job_name("x" * 80, "f" * 64)) == 52


def test_a_selector_from_the_environment_is_one_value(monkeypatch: pytest.MonkeyPatch) -> None:
    result, settings, _ = invoke([], monkeypatch, env={"KUBELOOP_NAMESPACE_SELECTOR": "tier in (web, api),team:x"})
    assert result.exit_code == 0, result.output
    assert settings.namespace_selector == ("tier in (web, api)", "team=x")


def test_pause_period_is_a_go_duration_and_a_fixed_window() -> None:
    from kubeloop.operators.reloader.pacing import Pacing, settle
    from kubeloop.operators.reloader.policy import duration

    assert duration("5m") == 300 and duration("1h30m") == 5400 and duration("1.5s") == 1.5
    for bad in ("5", "5 m", "-1s", "0s", "1d", "m", ""):
        with pytest.raises(ValueError):
            duration(bad)
    assert policy_of({"deployment.reloader.stakater.com/pause-period": "5m"}).pause_period == "5m"
    pace = Pacing()
    assert settle(pace, "h1", 0.5, 100.0, period=10.0) == 10.0
    assert settle(pace, "h2", 0.5, 104.0, period=10.0) == 6.0  # a new change does not extend it
    assert settle(pace, "h2", 0.5, 110.0, period=10.0) == 0.0


def test_annotation_renames(monkeypatch: pytest.MonkeyPatch) -> None:
    """Reloader's --auto-annotation & co. (its chart's custom_annotations) replace its keys."""
    from kubeloop.operators.reloader.policy import source_ignored

    result, settings, _ = invoke(["--auto-annotation", "example.com/reload", "--ignore-annotation",
                                  "example.com/skip", "--configmap-annotation", "example.com/configs"],
                                 monkeypatch)
    assert result.exit_code == 0, result.output
    names = settings.names
    assert policy_of({"example.com/reload": "true"}, names=names).auto == {CONFIG_MAP, SECRET}
    assert not policy_of({"reloader.stakater.com/auto": "true"}, names=names).tracks_anything
    assert policy_of({"reloader.kubeloop.dev/auto": "true"}, names=names).auto  # kubeloop's own stays
    assert policy_of({"example.com/configs": "a"}, names=names).named[CONFIG_MAP] == ("a",)
    assert source_ignored({"example.com/skip": "true"}, names)
    assert not source_ignored({"reloader.stakater.com/ignore": "true"}, names)
    result, _, _ = invoke(["--auto-annotation", "not a key"], monkeypatch)
    assert result.exit_code == 2 and "--auto-annotation" in result.output


async def test_argo_rollouts_without_the_crd_is_a_setting_error() -> None:
    from kubeloop.manager import Manager, ManagerOptions
    from kubeloop.testing.fakeclient import FakeClient

    op = build_operator()
    op.settings = ReloaderSettings(argo_rollouts=True)
    manager = Manager(FakeClient(), ManagerOptions(metrics_bind_address="0", health_probe_bind_address="0"))
    with pytest.raises(ValueError, match="--argo-rollouts: the API server serves no argoproj.io/v1alpha1 Rollout"):
        await op.startup[0](manager)  # the reloader's start hook  # type: ignore[arg-type]
