"""The documentation site builds in strict mode (a broken link, a missing snippet file or an
unresolved API reference fails it), as CI builds it; and strict mode does catch a broken link."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
pytest.importorskip("mkdocs", reason="the docs extra is not installed: pip install -e '.[docs]'")
pytest.importorskip("material", reason="the docs extra is not installed: pip install -e '.[docs]'")
pytest.importorskip("mkdocstrings_handlers.python", reason="the docs extra is not installed: "
                    "pip install -e '.[docs]'")


def _build(config: Path, site: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    return subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(config),
                           "-d", str(site)], cwd=REPO, env=env, capture_output=True, text=True, timeout=300)


def test_site_builds_strict(tmp_path: Path) -> None:
    proc = _build(REPO / "mkdocs.yml", tmp_path / "site")
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert "WARNING" not in proc.stderr, proc.stderr[-4000:]
    tutorial = (tmp_path / "site" / "tutorial" / "3-reconcile" / "index.html").read_text()
    assert "reconcile_website" in tutorial  # the snippet was included, not left as a marker
    reference = (tmp_path / "site" / "reference" / "operator" / "index.html").read_text()
    assert "Registers" in reference  # Operator.reconcile's docstring, rendered by mkdocstrings


def test_strict_build_fails_on_a_broken_link(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    shutil.copytree(REPO / "docs", docs)
    with (docs / "index.md").open("a") as page:
        page.write("\nSee [the missing page](no-such-page.md).\n")
    config = (REPO / "mkdocs.yml").read_text()
    config = config.replace("docs_dir: docs", f"docs_dir: {docs}")
    (tmp_path / "mkdocs.yml").write_text(config)
    proc = _build(tmp_path / "mkdocs.yml", tmp_path / "site")
    assert proc.returncode != 0
    assert "no-such-page.md" in proc.stderr


# Measurement records: their blocks are the commands that produced the figures (python -m harness.bench /
# harness.faults), quoted as run, not examples to execute.
GENERATED = {"BENCHMARKS.md", "PERFORMANCE.md", "RELIABILITY.md", "CHANGELOG.md"}
_FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.DOTALL | re.MULTILINE)
_INCLUDE = re.compile(r'^\s*--8<-- "[^"]+"\s*$')


def test_every_code_block_is_included_from_a_tested_file_or_runs() -> None:
    """A block is a snippet include (of files the tests run), a `text` diagram or output, or Python
    that is executed here; anything else would be an example no test keeps honest."""
    for page in sorted((REPO / "docs").rglob("*.md")):
        if page.name in GENERATED:
            continue
        for lang, body in _FENCE.findall(page.read_text()):
            lines = [line for line in body.splitlines() if line.strip()]
            if lines and all(_INCLUDE.match(line) for line in lines) or lang == "text":
                continue
            assert lang == "python", f"{page.relative_to(REPO)}: a {lang or 'plain'} block nobody runs:\n{body}"
            exec(compile(body, str(page), "exec"), {})  # noqa: S102 - the docs' own example
