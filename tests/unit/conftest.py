"""Fixtures of the library's unit tests."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from .controller_kit import Kit


@pytest.fixture
async def kit() -> AsyncIterator[Kit]:
    """A FakeClient and the controllers built on it (tests/unit/controller_kit.py), stopped afterwards."""
    kit = Kit()
    yield kit
    await kit.close()
