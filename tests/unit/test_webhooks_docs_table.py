"""The "Schema, CEL or webhook" table of docs/howto/webhooks.md against what the CRD generator emits.

Each row's first cell is a line of a model; the model is built and its generated schema must contain
every key of the second cell's JSON with that value (``nothing: {...}`` rows must equal it exactly,
so a constraint the generator started to emit would show up here). The docs cannot drift."""

from __future__ import annotations

import json
import re
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any, Literal

import pytest
from pydantic import AfterValidator, BaseModel, Field

from kubeloop.resources.schema import openapi_schema, validation

DOC = Path(__file__).parents[2] / "docs" / "howto" / "webhooks.md"
ROW = re.compile(r"^\| `(?P<code>[^`]+)`[^|]* \| (?P<what>[^|]*?)`(?P<json>\{.*\})`[^|]* \| (?P<who>[^|]+) \|$")


class Color(StrEnum):
    red = "red"
    blue = "blue"


def must_be_odd(value: int) -> int:
    if value % 2 == 0:
        raise ValueError("must be odd")
    return value


def rows() -> list[tuple[str, str, dict[str, Any], str]]:
    text = DOC.read_text().split("## Schema, CEL or webhook", 1)[1].split("\n## ", 1)[0]
    lines = [line for line in text.splitlines() if line.startswith("| `")]
    parsed = [ROW.match(line) for line in lines]
    assert all(parsed), [line for line, m in zip(lines, parsed, strict=True) if not m]
    return [(m["code"], m["what"], json.loads(m["json"]), m["who"].strip()) for m in parsed if m]


def generated(code: str) -> tuple[dict[str, Any], type[BaseModel]]:
    """The schema the generator emits for the row's line: the field's, or the model's for a model rule."""
    namespace: dict[str, Any] = {"Annotated": Annotated, "Literal": Literal, "Field": Field,
                                 "AfterValidator": AfterValidator, "validation": validation, "Color": Color,
                                 "must_be_odd": must_be_odd, "BaseModel": BaseModel}
    # dont_inherit: this module's `from __future__ import annotations` would leave the types as strings
    exec(compile(f"class Row(BaseModel):\n    {code}\n", DOC.name, "exec", dont_inherit=True),  # noqa: S102
         namespace)
    model = namespace["Row"]
    schema = openapi_schema(model)
    if code.startswith("__validations__"):
        return schema, model
    (field,) = schema["properties"].values()
    return field, model


def test_the_table_has_its_rows() -> None:
    whos = [who for *_, who in rows()]
    assert len(whos) >= 14 and any("CEL" in w for w in whos) and any("webhook" in w for w in whos)


@pytest.mark.parametrize(("code", "what", "expected", "who"), rows(), ids=[r[0].split(":")[0] for r in rows()])
def test_row_matches_the_generator(code: str, what: str, expected: dict[str, Any], who: str) -> None:
    schema, model = generated(code)
    if what.startswith("nothing"):
        assert schema == expected, f"{code}: the generator now emits {schema}; move the row out of 'nothing'"
        assert "webhook" in who
        # ... while pydantic does enforce it: that rule exists only inside the operator.
        with pytest.raises(ValueError):
            model.model_validate({"count": 2})
        return
    assert {k: schema.get(k) for k in expected} == expected, f"{code}: generated {schema}"
    assert who.startswith("API server")
