"""The spec and status of the Blackadder article's ChaosAgent, shared by the resource tests (unit and
integration); each test module declares its own ``ChaosAgent`` class with the options it checks."""

from __future__ import annotations

from pydantic import BaseModel, Field


class ChaosAgentSpec(BaseModel):
    """Settings of one chaos agent."""

    tantrumMode: bool = False
    eagerness: int = Field(20, ge=1, le=100, description="Probability in % of acting on each object.")
    excludedNamespaces: list[str] = Field(default_factory=list)


class ChaosAgentStatus(BaseModel):
    victims: int = 0
