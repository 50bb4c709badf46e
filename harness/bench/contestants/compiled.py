"""Compiled contestants (Go, Rust): built from their committed sources on first use, then cached.

- A source directory here (``controller_runtime_widget/``, ``kube_rs_widget/``, and the cache holders
  ``controller_runtime_cache/``, ``kube_rs_cache/``) holds the program and
  its lock file (go.sum, Cargo.lock): the build fetches exactly those versions from the registry.
- The binary lands in ``~/.cache/kubeloop/bench/<dir>-<hash>/`` where the hash covers every source
  file: an edited source is rebuilt, an unchanged one is reused (a cold build takes minutes on 2 cores).
- A missing toolchain is an error that names it; nothing falls back to another contestant.
- Builds go to a temporary directory first and are renamed into place: an interrupted build leaves
  no half-written binary behind.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "kubeloop" / "bench"


class BuildError(RuntimeError):
    pass


@dataclass(frozen=True)
class Compiled:
    directory: str  # under harness/bench/contestants/
    toolchain: str  # "go" or "cargo": the command that must be on PATH
    binary: str

    @property
    def source(self) -> Path:
        return HERE / self.directory

    def source_hash(self) -> str:
        h = hashlib.sha256()
        for path in sorted(p for p in self.source.rglob("*") if p.is_file() and "target" not in p.parts):
            h.update(str(path.relative_to(self.source)).encode() + b"\0" + path.read_bytes() + b"\0")
        return h.hexdigest()[:12]

    def path(self) -> Path:
        return CACHE / f"{self.directory}-{self.source_hash()}" / self.binary

    def build(self, log=lambda msg: print(msg, file=sys.stderr)) -> Path:
        """The binary, built first if this source has no cached build yet."""
        target = self.path()
        if target.exists():
            return target
        if shutil.which(self.toolchain) is None:
            raise BuildError(f"the {self.binary} contestant needs the `{self.toolchain}` toolchain on PATH "
                             f"to build {self.source}; install {TOOLCHAINS[self.toolchain]} or leave it out")
        log(f"building {self.binary} with {self.toolchain} into {target.parent} (first use of this source; "
            "a cold build takes minutes)")
        target.parent.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=target.parent.parent, prefix=".build-") as tmp:
            built = self._compile(Path(tmp))
            target.parent.mkdir(exist_ok=True)
            os.replace(built, target)
        return target

    def _compile(self, tmp: Path) -> Path:
        env = dict(os.environ)
        if self.toolchain == "go":
            argv = ["go", "build", "-trimpath", "-mod=readonly", "-o", str(tmp / self.binary), "."]
            out = tmp / self.binary
        else:
            # One target directory for every kube-rs source version: an edit recompiles only the crate.
            env.setdefault("CARGO_BUILD_JOBS", "2")
            env["CARGO_TARGET_DIR"] = str(CACHE / "cargo-target")
            argv = ["cargo", "build", "--release", "--locked", "--quiet"]
            out = CACHE / "cargo-target" / "release" / self.binary
        done = subprocess.run(argv, cwd=self.source, env=env, capture_output=True, text=True)
        if done.returncode != 0:
            raise BuildError(f"`{' '.join(argv)}` in {self.source} failed ({done.returncode}):\n"
                             f"{done.stderr[-3000:]}")
        if self.toolchain == "cargo":
            shutil.copy2(out, tmp / self.binary)
            out = tmp / self.binary
        return out


TOOLCHAINS = {"go": "Go ≥ 1.25", "cargo": "Rust ≥ 1.85 with cargo"}
CONTROLLER_RUNTIME = Compiled("controller_runtime_widget", "go", "controller-runtime-widget")
KUBE_RS = Compiled("kube_rs_widget", "cargo", "kube-rs-widget")
# Cache holders (harness/bench/cached.py): the same frameworks caching Pods or ConfigMaps, writing nothing.
CONTROLLER_RUNTIME_CACHE = Compiled("controller_runtime_cache", "go", "controller-runtime-cache")
KUBE_RS_CACHE = Compiled("kube_rs_cache", "cargo", "kube-rs-cache")
ALL = (CONTROLLER_RUNTIME, KUBE_RS, CONTROLLER_RUNTIME_CACHE, KUBE_RS_CACHE)


def go_module_version(module: str) -> str:
    """The version go.mod pins for ``module`` (e.g. ``sigs.k8s.io/controller-runtime``)."""
    text = (CONTROLLER_RUNTIME.source / "go.mod").read_text()
    found = re.search(rf"^\s*{re.escape(module)} (v\S+)", text, re.M)
    return found.group(1) if found else "?"


def crate_version(crate: str) -> str:
    """The version Cargo.lock pins for ``crate``."""
    text = (KUBE_RS.source / "Cargo.lock").read_text()
    found = re.search(rf'^name = "{re.escape(crate)}"\nversion = "([^"]+)"', text, re.M)
    return found.group(1) if found else "?"


BUILD_COMMAND = "python -m harness.bench.build"  # harness/bench/build.py


def missing() -> list[Compiled]:
    """The compiled contestants whose current source has no cached build."""
    return [c for c in ALL if not c.path().exists()]

