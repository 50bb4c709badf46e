"""docs/reference/reconcile.md lists every public field and method of ``Context``: a field added to the
context without a line in that table fails here, so the reference never has to be read in the source."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

from kubeloop import Context

PAGE = Path(__file__).resolve().parents[2] / "docs" / "reference" / "reconcile.md"


def _public_members() -> set[str]:
    fields = {f.name for f in dataclasses.fields(Context)}
    methods = {name for name, value in vars(Context).items()
               if not name.startswith("_") and (callable(value) or isinstance(value, property))}
    return {name for name in fields | methods if not name.startswith("_")}


def _documented() -> set[str]:
    table = PAGE.read_text().split("## Every field of `Context`", 1)[1].split("::: ", 1)[0]
    first_cells = [line.split("|")[1] for line in table.splitlines() if line.startswith("| `")]
    return {name for cell in first_cells for name in re.findall(r"`(\w+)", cell)}


def test_every_public_member_of_context_is_in_the_reference_table() -> None:
    missing = _public_members() - _documented()
    assert not missing, f"add a row for {sorted(missing)} to {PAGE.name}'s 'Every field of `Context`' table"


def test_the_table_names_nothing_that_context_does_not_have() -> None:
    extra = _documented() - _public_members()
    assert not extra, f"{PAGE.name} documents {sorted(extra)}, which Context does not have"
