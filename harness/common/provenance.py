"""What a saved result says about the run that made it: the command, the commit, package versions;
and how it is saved. The committed results must name no path of the machine they were made on."""

from __future__ import annotations

import json
import shlex
import subprocess
from collections.abc import Mapping
from importlib import metadata
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]


def without_home(text: str) -> str:
    """The home directory as ``~``: the figures do not depend on whose machine it was."""
    return text.replace(str(Path.home()), "~")


def invocation(program: str, argv: list[str], output_flags: Mapping[str, bool]) -> str:
    """The command as run, less the flags that only say where output goes (``output_flags``: flag →
    whether it takes a value), the home directory as ``~``."""
    kept, skip = [], False
    for arg in argv:
        flag = arg.split("=", 1)[0]
        if skip:
            skip = False
        elif flag in output_flags:
            skip = output_flags[flag] and "=" not in arg
        else:
            kept.append(arg)
    return without_home(program + "".join(" " + shlex.quote(a) for a in kept))


def git_revision() -> str:
    """The checkout's commit (short), and whether tracked files differ from it."""
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True,
                              timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=REPO,
                               capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return (head or "unknown") + (", with uncommitted changes" if dirty else "")


def dist_version(package: str) -> str | None:
    """The installed version of a distribution, None if it is not installed."""
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None


def save_json(data: Any, path: Path) -> None:
    """Writes ``data`` (through a temporary file, so that an interrupted run never leaves half a file
    where the previous results were)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(data, indent=1, default=str) + "\n")
    tmp.replace(path)
