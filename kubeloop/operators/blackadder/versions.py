"""Conversions between ChaosAgent's versions, around the hub ``v1beta2``.

- Pure functions on typed objects, one pair per spoke; ``op.convert`` registers them and the
  framework keeps ``metadata``/``apiVersion``/``kind``, so only the spec changes hands here.
- ``v1alpha1`` and ``v1beta1`` share the article's spec: the only difference from the hub is two
  names (``podTolerance`` ↔ ``minRunningPods``, ``pauseDuration`` ↔ ``pauseSeconds``), so every
  conversion is lossless and hub → spoke → hub gives the object back (tests/unit check it).
- The status is the same in every version and is carried over as it is.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from kubeloop.operators.blackadder.models import (
    ArticleSpec,
    ChaosAgent,
    ChaosAgentSpec,
    ChaosAgentV1Alpha1,
    ChaosAgentV1Beta1,
)

# Article name → hub name. Every other field keeps its name in every version.
RENAMED = {"podTolerance": "minRunningPods", "pauseDuration": "pauseSeconds"}


def spec_to_hub(spec: ArticleSpec) -> ChaosAgentSpec:
    """The article's spec with the hub's names."""
    return ChaosAgentSpec.model_validate(_renamed(spec.model_dump(), RENAMED))


def spec_from_hub(spec: ChaosAgentSpec) -> ArticleSpec:
    """The hub's spec with the article's names."""
    return ArticleSpec.model_validate(_renamed(spec.model_dump(), {v: k for k, v in RENAMED.items()}))


def to_hub(agent: ChaosAgentV1Alpha1 | ChaosAgentV1Beta1) -> ChaosAgent:
    """A v1alpha1 or v1beta1 agent as v1beta2."""
    return ChaosAgent(metadata=agent.metadata, spec=spec_to_hub(agent.spec), status=agent.status)


def from_hub(model: type[ChaosAgentV1Alpha1 | ChaosAgentV1Beta1], agent: ChaosAgent
             ) -> ChaosAgentV1Alpha1 | ChaosAgentV1Beta1:
    """A v1beta2 agent as ``model`` (bound to one model with ``partial``: a value that pickles, so the
    conversion can be served from a process of its own)."""
    return model(metadata=agent.metadata, spec=spec_from_hub(agent.spec), status=agent.status)


# What op.convert takes: per spoke model, (to_hub, from_hub).
SPOKES: dict[type, tuple[Callable[[Any], ChaosAgent], Callable[[ChaosAgent], Any]]] = {
    model: (to_hub, partial(from_hub, model)) for model in (ChaosAgentV1Alpha1, ChaosAgentV1Beta1)}


def _renamed(fields: dict[str, Any], names: dict[str, str]) -> dict[str, Any]:
    return {names.get(k, k): v for k, v in fields.items()}
