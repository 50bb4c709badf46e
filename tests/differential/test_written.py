"""The written sequences (sequences.py): each must give the same normalised answers on the fake as on
the real control plane."""

from __future__ import annotations

import pytest

from tests.differential.compare import compare
from tests.differential.harness import Backend
from tests.differential.sequences import SEQUENCES


@pytest.mark.parametrize("name", sorted(SEQUENCES))
async def test_fake_agrees_with_real(name: str, fake: Backend, real: Backend) -> None:
    if name.startswith("cel_"):
        pytest.importorskip("celpy", reason="CEL rules need cel-python (pip install kubeloop[fake])")
    diffs = await compare(name, SEQUENCES[name], fake, real)
    assert not diffs, "\n".join(diffs)
