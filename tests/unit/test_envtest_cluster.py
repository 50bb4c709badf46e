"""LocalCluster bookkeeping that needs no Kubernetes: PID tracking, status, ports, naming."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import pytest

from kubeloop.client.wait import abbreviate
from kubeloop.envtest import cluster as cl
from kubeloop.envtest.cluster import LocalCluster
from kubeloop.testing.plugin import _namespace_name


def _sleeper() -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], start_new_session=True)


def test_down_stops_recorded_processes_only_if_they_are_ours(tmp_path: Path) -> None:
    cluster = LocalCluster("unit", data_dir=tmp_path, log=lambda _: None)
    ours, stranger = _sleeper(), _sleeper()
    try:
        start = cl._start_time(ours.pid)
        # A record whose start time does not match stands for a recycled PID: it must be left alone.
        cluster._save_state({"ports": {}, "processes": {
            "etcd": {"pid": ours.pid, "start": start},
            "kwok": {"pid": stranger.pid, "start": (cl._start_time(stranger.pid) or 0) + 1},
        }})
        status = cluster.status()
        assert [c.alive for c in status.components] == [True, False, False, False, False]
        assert not status.running
        cluster.down()
        assert ours.wait(5) is not None
        assert stranger.poll() is None
        assert cluster._state()["processes"] == {}
    finally:
        for proc in (ours, stranger):
            proc.kill()
            proc.wait()


def test_status_of_a_dead_component_shows_its_log(tmp_path: Path) -> None:
    cluster = LocalCluster("unit", data_dir=tmp_path, log=lambda _: None)
    log = cluster.log_file("kube-apiserver")
    log.parent.mkdir(parents=True)
    log.write_text("starting\nE0101 fatal: something broke\n")
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    cluster._save_state({"ports": {}, "processes": {"kube-apiserver": {"pid": proc.pid, "start": 1}}})
    comp = {c.name: c for c in cluster.status().components}["kube-apiserver"]
    assert not comp.alive
    assert "something broke" in comp.log_tail
    assert "DEAD" in str(comp) and "something broke" in str(comp)


def test_down_wipe_removes_the_data_dir(tmp_path: Path) -> None:
    data = tmp_path / "c"
    cluster = LocalCluster("unit", data_dir=data, log=lambda _: None)
    data.mkdir()
    (data / "state.json").write_text("{}")
    cluster.down(wipe=True)
    assert not data.exists()


def test_free_port_prefers_the_last_port_and_avoids_taken_ones() -> None:
    port = cl._free_port(set())
    assert cl._free_port(set(), preferred=port) == port
    assert cl._free_port({port}, preferred=port) != port
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        taken = busy.getsockname()[1]
        assert cl._free_port(set(), preferred=taken) != taken


def test_fake_nodes_carry_the_kwok_annotation() -> None:
    node = cl._fake_node("kwok-node-0")
    assert node["metadata"]["annotations"]["kwok.x-k8s.io/node"] == "fake"
    assert node["status"]["allocatable"]["pods"] == "110"


@pytest.mark.parametrize("test_name", ["test_foo", "test_param[a-b/C]", "test_" + "x" * 100])
def test_namespace_names_are_valid_dns_labels(test_name: str) -> None:
    name = _namespace_name(test_name)
    assert len(name) <= 63 and name.startswith("t-")
    assert all(ch.isalnum() or ch == "-" for ch in name) and name == name.lower()
    assert not name.endswith("-") and "--" not in name


def test_abbreviate_drops_noise_and_caps_length() -> None:
    obj = {"metadata": {"name": "x", "managedFields": [{"manager": "m"}],
                        "annotations": {"kubectl.kubernetes.io/last-applied-configuration": "{}"}},
           "data": {"big": "y" * 5000}}
    text = abbreviate(obj, limit=200)
    assert "managedFields" not in text and "last-applied" not in text
    assert len(text) < 260 and "more chars" in text
    assert obj["metadata"]["managedFields"]  # the caller's object is untouched


def test_feature_gates_parse_both_spellings_and_reach_the_apiserver(tmp_path: Path) -> None:
    assert cl.parse_feature_gates("ShardedListAndWatch=true, Foo=False") == {"ShardedListAndWatch": True,
                                                                            "Foo": False}
    assert cl.parse_feature_gates({"ShardedListAndWatch": True}) == {"ShardedListAndWatch": True}
    assert cl.parse_feature_gates(None) == {} == cl.parse_feature_gates("")
    cluster = LocalCluster("t", tmp_path, feature_gates="B=false,A=true")
    args = cluster._apiserver_args(cluster.pki, {"kube-apiserver": 1, "etcd": 2})
    assert "--feature-gates=A=true,B=false" in args
    plain = LocalCluster("u", tmp_path / "u")._apiserver_args(cluster.pki, {"kube-apiserver": 1, "etcd": 2})
    assert not any(a.startswith("--feature-gates") for a in plain)


@pytest.mark.parametrize("bad", ["ShardedListAndWatch", "ShardedListAndWatch=yes", "lower=true", "A-B=true"])
def test_bad_feature_gates_name_the_flag(bad: str) -> None:
    with pytest.raises(ValueError, match="--feature-gates"):
        cl.parse_feature_gates(bad)


def test_cli_up_rejects_a_bad_feature_gate_before_building() -> None:
    from click.testing import CliRunner

    from kubeloop.cli.cluster import command
    result = CliRunner().invoke(command, ["up", "--feature-gates", "ShardedListAndWatch=on"])
    assert result.exit_code == 2 and "--feature-gates" in result.output


def test_the_default_profile_is_hardened_and_reaches_the_apiserver(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(cl.ENV_PROFILE, raising=False)
    cluster = LocalCluster("t", tmp_path)
    assert cluster.profile == "hardened"
    args = cluster._apiserver_args(cluster.pki, {"kube-apiserver": 1, "etcd": 2})
    (plugins,) = [a.split("=", 1)[1].split(",") for a in args if a.startswith("--enable-admission-plugins=")]
    assert {"OwnerReferencesPermissionEnforcement", "NodeRestriction", "PodSecurity", "ResourceQuota",
            "LimitRanger"} <= set(plugins)
    assert "--authorization-mode=Node,RBAC" in args
    permissive = LocalCluster("u", tmp_path / "u", profile="permissive")
    args = permissive._apiserver_args(cluster.pki, {"kube-apiserver": 1, "etcd": 2})
    assert not any(a.startswith("--enable-admission-plugins") for a in args)
    assert "--authorization-mode=RBAC" in args


def test_the_profile_comes_from_the_environment_and_a_bad_one_is_named(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(cl.ENV_PROFILE, "permissive")
    assert LocalCluster("t", tmp_path).profile == "permissive"
    assert LocalCluster("t", tmp_path, profile="hardened").profile == "hardened"
    monkeypatch.setenv(cl.ENV_PROFILE, "strict")
    with pytest.raises(ValueError, match="KUBELOOP_CLUSTER_PROFILE='strict'.*hardened, permissive"):
        LocalCluster("t", tmp_path)


@pytest.mark.parametrize(("recorded", "wanted", "ok"), [
    ("hardened", "hardened", True), ("permissive", "permissive", True), (None, "permissive", True),
    ("permissive", "hardened", False), (None, "hardened", False), ("hardened", "permissive", False)])
def test_a_running_cluster_with_another_profile_is_not_reused(tmp_path: Path, recorded: str | None, wanted: str,
                                                              ok: bool) -> None:
    cluster = LocalCluster("t", tmp_path, profile=wanted)
    cluster._save_state({"ports": {}, "processes": {}, **({"profile": recorded} if recorded else {})})
    if ok:
        cluster._check_running_profile()
    else:
        with pytest.raises(cl.ClusterError, match=f"already runs with the '{recorded or 'permissive'}' profile"):
            cluster._check_running_profile()


def test_cli_up_offers_the_profiles() -> None:
    from click.testing import CliRunner

    from kubeloop.cli.cluster import command
    result = CliRunner().invoke(command, ["up", "--profile", "strict"])
    assert result.exit_code == 2 and "hardened" in result.output and "permissive" in result.output
    assert "KUBELOOP_CLUSTER_PROFILE" in CliRunner().invoke(command, ["up", "--help"]).output
