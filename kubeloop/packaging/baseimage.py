"""A Python base image made from Debian's packages, for machines that reach no container registry.

``python -m kubeloop.packaging.baseimage`` builds it with ``mmdebstrap`` (Debian's bookworm: Python
3.11, pip in a venv on the ``PATH``, ``apt-get`` for the builder stage's compiler) and imports it into
podman as ``localhost/kubeloop-base:<hash>``; ``--operators`` then builds every bundled operator's
image with the generated Dockerfile (``--build-arg BASE_IMAGE=`` that image). The tag is a hash of the
recipe below, so a rerun finds the image and returns at once; a changed recipe makes a new tag.
Elsewhere the generated Dockerfile's default base, the slim Python image, is the one to use.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import TypedDict

from kubeloop.packaging.dockerfile import dockerfile, dockerignore

BASE_REPOSITORY = "localhost/kubeloop-base"
OPERATOR_REPOSITORY = "localhost/kubeloop-{name}"
BUNDLED = ("blackadder", "immortal", "copyrator", "reloader")
ENV_PODMAN = "KUBELOOP_PODMAN"
# runc and cgroupfs: crun refuses a hybrid cgroup v1/v2 layout, and systemd may not manage cgroups in
# a container; a file for podman's events, as journald may be absent.
PODMAN = "podman --runtime runc --cgroup-manager cgroupfs --events-backend file"
HOST_CA_BUNDLE = Path("/etc/ssl/certs/ca-certificates.crt")
VENV = "/opt/venv"

# Everything that decides the image's content: its hash is the tag.
class Recipe(TypedDict):
    """What the base image is made of (its name is the hash of this)."""

    suite: str
    mirror: str
    variant: str
    packages: list[str]
    dpkg: list[str]
    hooks: list[str]
    config: list[str]


RECIPE: Recipe = {
    "suite": "bookworm",
    "mirror": "http://deb.debian.org/debian",
    "variant": "minbase",
    "packages": ["python3", "python3-venv", "ca-certificates"],
    "dpkg": ["path-exclude=/usr/share/locale/*", "path-include=/usr/share/locale/locale.alias",
             "path-exclude=/usr/share/doc/*", "path-include=/usr/share/doc/*/copyright",
             "path-exclude=/usr/share/man/*", "path-exclude=/usr/share/info/*"],
    # pip and its console scripts in a venv: Debian's own python3 refuses pip installs (PEP 668)
    "hooks": [f'chroot "$1" python3 -m venv {VENV}',
              'rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/* "$1"/var/log/*'],
    "config": [f"ENV PATH={VENV}/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
               "ENV LANG=C.UTF-8", 'CMD ["python3"]'],
}


class ImageError(RuntimeError):
    """A tool is missing or a build failed; the message names the fix."""


def base_image_name(recipe: Recipe = RECIPE) -> str:
    digest = hashlib.sha256(json.dumps(recipe, sort_keys=True).encode()).hexdigest()[:12]
    return f"{BASE_REPOSITORY}:{digest}"


def podman() -> list[str]:
    """The podman command line (``KUBELOOP_PODMAN`` replaces it, e.g. with plain ``podman``)."""
    argv = shlex.split(os.environ.get(ENV_PODMAN, PODMAN))
    if not shutil.which(argv[0]):
        raise ImageError(f"{argv[0]} not found: apt-get install -y podman runc mmdebstrap")
    return argv


def ulimits() -> list[str]:
    """Explicit limits: podman's defaults can exceed what a nested container may set (runc fails)."""
    nofile = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    nofile = 1048576 if nofile == resource.RLIM_INFINITY else min(nofile, 1048576)
    return ["--ulimit", f"nofile={nofile}:{nofile}", "--ulimit", "nproc=4096:4096"]


def image_exists(name: str) -> bool:
    return subprocess.run([*podman(), "image", "exists", name], capture_output=True).returncode == 0


def ensure_base_image(recipe: Recipe = RECIPE, *, log: bool = True) -> str:
    """The base image's name, built first if podman does not have it yet."""
    name = base_image_name(recipe)
    if image_exists(name):
        return name
    if not shutil.which("mmdebstrap"):
        raise ImageError("mmdebstrap not found: apt-get install -y mmdebstrap")
    with tempfile.TemporaryDirectory(prefix="kubeloop-base-") as tmp:
        tar = Path(tmp) / "rootfs.tar"
        cmd = ["mmdebstrap", f"--variant={recipe['variant']}", "--include=" + ",".join(recipe["packages"]),
               "--hook-dir=/usr/share/mmdebstrap/hooks/merged-usr",
               *(f"--dpkgopt={opt}" for opt in recipe["dpkg"]),
               *(f"--customize-hook={hook}" for hook in recipe["hooks"]),
               str(recipe["suite"]), str(tar), str(recipe["mirror"])]
        _run(cmd, log)
        changes = [arg for line in recipe["config"] for arg in ("--change", line)]
        _run([*podman(), "import", *changes, str(tar), name], log)
    return name


def build_operator_image(target: str, tag: str, *, context: str | Path, base: str | None = None,
                         build_args: dict[str, str] | None = None, log: bool = True) -> str:
    """Builds ``context`` (a project root) with the Dockerfile ``kubeloop generate dockerfile TARGET``
    writes, from ``base`` (default: the Debian-made base image)."""
    base = base or ensure_base_image(log=log)
    with tempfile.TemporaryDirectory(prefix="kubeloop-image-") as tmp:
        (Path(tmp) / "Dockerfile").write_text(dockerfile(target))
        (Path(tmp) / ".dockerignore").write_text(dockerignore())
        _run(build_command(Path(tmp) / "Dockerfile", tag, context=context, base=base, build_args=build_args,
                           ignorefile=Path(tmp) / ".dockerignore"), log)
    return tag


def build_command(file: Path, tag: str, *, context: str | Path, base: str,
                  build_args: dict[str, str] | None = None, ignorefile: Path | None = None) -> list[str]:
    """``podman build`` of a generated Dockerfile. The RUN steps share the host's network (the only way
    out here) and its CA bundle, so their pip trusts what the host's pip trusts (e.g. a proxy's CA)."""
    cmd = [*podman(), "build", "--network", "host", *ulimits(), "-f", str(file), "-t", tag,
           "--build-arg", f"BASE_IMAGE={base}"]
    for key, value in sorted((build_args or {}).items()):
        cmd += ["--build-arg", f"{key}={value}"]
    if ignorefile is not None:
        cmd += ["--ignorefile", str(ignorefile)]
    if HOST_CA_BUNDLE.is_file():
        cmd += ["-v", f"{HOST_CA_BUNDLE}:{HOST_CA_BUNDLE}:ro"]
    return [*cmd, str(context)]


def project_root() -> Path:
    """The checkout holding kubeloop's ``pyproject.toml``: the bundled operators' build context."""
    root = Path(__file__).resolve().parents[2]
    if not (root / "pyproject.toml").is_file():
        raise ImageError(f"{root} has no pyproject.toml: build the bundled operators from a kubeloop checkout")
    return root


def _run(cmd: list[str], log: bool) -> None:
    if log:
        print("+", shlex.join(cmd), file=sys.stderr, flush=True)
    proc = subprocess.run(cmd, stdout=sys.stderr if log else subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if proc.returncode != 0:
        tail = "" if log else f": {(proc.stdout or '')[-2000:]}"
        raise ImageError(f"{cmd[0]} {' '.join(cmd[1:3])} ... failed (exit {proc.returncode}){tail}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m kubeloop.packaging.baseimage", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--name", action="store_true", help="print the base image's name, build nothing")
    parser.add_argument("--operators", action="store_true",
                        help="also build each bundled operator's image (localhost/kubeloop-NAME:dev)")
    args = parser.parse_args(argv)
    if args.name:
        print(base_image_name())
        return 0
    try:
        start = time.monotonic()
        base = ensure_base_image()
        print(f"{base} ready in {time.monotonic() - start:.1f} s", file=sys.stderr)
        print(base)
        for name in BUNDLED if args.operators else ():
            start = time.monotonic()
            tag = build_operator_image(name, OPERATOR_REPOSITORY.format(name=name) + ":dev",
                                       context=project_root(), base=base)
            print(f"{tag} built in {time.monotonic() - start:.1f} s", file=sys.stderr)
            print(tag)
    except ImageError as exc:
        print(f"Error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
