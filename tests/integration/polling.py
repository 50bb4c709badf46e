"""Polling for what cannot be watched: the API server picks up a new webhook configuration or CRD
conversion stanza within a second or so, and only a request shows whether it has."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable


async def eventually(probe: Callable[[], Awaitable[bool]], what: str, timeout: float = 20) -> None:
    """Polls ``probe`` every 0.2 s until it returns True; fails naming ``what`` after ``timeout`` s."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not await probe():
        assert loop.time() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.2)
