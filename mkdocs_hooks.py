"""MkDocs hooks (mkdocs.yml ``hooks:``) for the pages other tools generate.

docs/RELIABILITY.md, BENCHMARKS.md and PERFORMANCE.md are written by ``python -m faults`` and
``python -m bench``; they quote API server messages verbatim, such as a regular expression
``[01][0-9]``, which Markdown reads as a reference link and mkdocs-autorefs then reports as a missing
cross-reference, failing the strict build. Those pages hold no reference links of their own, so
``][`` outside code spans is escaped there; written pages are left as they are, so a broken link in
them still fails the build.
"""

from __future__ import annotations

from typing import Any

GENERATED = frozenset({"RELIABILITY.md", "BENCHMARKS.md", "PERFORMANCE.md"})


def escape_reference_brackets(markdown: str) -> str:
    """``][`` → ``]\\[`` outside inline code spans and fenced blocks."""
    lines, fenced = [], False
    for line in markdown.split("\n"):
        if line.lstrip().startswith("```"):
            fenced = not fenced
        if not fenced:
            parts = line.split("`")
            line = "`".join(p.replace("][", "]\\[") if i % 2 == 0 else p for i, p in enumerate(parts))
        lines.append(line)
    return "\n".join(lines)


def on_page_markdown(markdown: str, page: Any, **_: Any) -> str:
    if page.file.src_uri in GENERATED:
        return escape_reference_brackets(markdown)
    return markdown
