"""The watch stream's line splitting (the hot path of every informer)."""

from typing import Any

import orjson

from kubeloop.client.transport import json_lines


async def _chunks(*parts: bytes):
    for part in parts:
        yield part


async def _decode(*parts: bytes) -> list[Any]:
    return [event async for event in json_lines(_chunks(*parts))]


async def test_json_lines_across_arbitrary_chunk_boundaries():
    events = [{"type": "ADDED", "object": {"n": i, "pad": "x" * i}} for i in range(50)]
    stream = b"".join(orjson.dumps(e) + b"\n" for e in events)
    for size in (1, 7, 64, len(stream)):
        parts = [stream[i:i + size] for i in range(0, len(stream), size)]
        assert await _decode(*parts) == events


async def test_json_lines_skips_blank_lines_and_keeps_unterminated_tail_out():
    assert await _decode(b'{"a":1}\n\n  \n{"b"', b':2}\n{"c":') == [{"a": 1}, {"b": 2}]
