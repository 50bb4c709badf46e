"""Go's ``encoding/json`` error messages for the inputs a hand-written document gets wrong, so that a
value the real server unmarshals (a docker config, a continue token) is refused in its words."""

from __future__ import annotations

import json

_LITERALS = {"n": "null", "t": "true", "f": "false"}


def error(raw: bytes) -> str:
    """Go's ``json.Unmarshal`` error for ``raw`` into a map, "" when it is a JSON object. Worded as Go
    words the errors a hand-written config meets (a bad first character, a misspelt literal, an end too
    early, a value that is not an object); others in Python's words."""
    text = raw.decode("utf-8", "replace").lstrip(" \t\r\n")
    if not text:
        return "unexpected end of JSON input"
    first = text[0]
    if first in _LITERALS:
        word = _LITERALS[first]
        for got, want in zip(text, word, strict=False):
            if got != want:
                return f"invalid character {_char(got)} in literal {word} (expecting {_char(want)})"
        if len(text) < len(word):
            return "unexpected end of JSON input"
    elif first not in '{["-0123456789':
        stripped = raw.lstrip(b" \t\r\n")  # (Go's scanner reads bytes: a byte of no character is named alone)
        return f"invalid character {_byte(stripped[0]) if stripped[0] >= 0x80 else _char(first)} looking for " \
               "beginning of value"
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        return "unexpected end of JSON input" if exc.pos >= len(text) else str(exc)
    if not isinstance(value, dict) and value is not None:
        go = {bool: "bool", int: "number", float: "number", str: "string", list: "array"}[type(value)]
        return f"json: cannot unmarshal {go} into Go value of type map[string]interface {{}}"
    return ""


def _char(c: str) -> str:
    return "'\\''" if c == "'" else f"'{c}'"


_ESCAPES = {0x07: "\\a", 0x08: "\\b", 0x0C: "\\f", 0x0A: "\\n", 0x0D: "\\r", 0x09: "\\t", 0x0B: "\\v"}


def _byte(b: int) -> str:
    """Go's quoteChar of one byte: ``strconv.Quote(string(rune(b)))`` between single quotes."""
    c = chr(b)
    if b in _ESCAPES:
        return f"'{_ESCAPES[b]}'"
    if c.isprintable():
        return _char(c)
    return f"'\\x{b:02x}'" if b < 0x80 else f"'\\u{b:04x}'"
