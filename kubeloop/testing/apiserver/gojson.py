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
    elif first not in '{["-0123456789':  # (Go's scanner reads bytes: a byte, not a character, is quoted)
        byte = raw.lstrip(b" \t\r\n")[:1]
        return f"invalid character {_char(chr(byte[0]) if byte else first)} looking for beginning of value"
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        return "unexpected end of JSON input" if exc.pos >= len(text) else str(exc)
    if not isinstance(value, dict) and value is not None:
        go = {bool: "bool", int: "number", float: "number", str: "string", list: "array"}[type(value)]
        return f"json: cannot unmarshal {go} into Go value of type map[string]interface {{}}"
    return ""


_ESCAPES = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v",
            "\\": "\\\\"}


def _char(c: str) -> str:
    """encoding/json's quoteChar: strconv.Quote's escapes for what does not print, a quote escaped."""
    if c == "'":
        return "'\\''"
    if c in _ESCAPES:
        return f"'{_ESCAPES[c]}'"
    if c == '"' or c.isprintable():
        return f"'{c}'"
    return f"'\\x{ord(c):02x}'" if ord(c) < 0x80 else f"'\\u{ord(c):04x}'"
