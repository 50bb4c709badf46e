"""Field types that custom resources share with Kubernetes' own APIs."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel


class LabelSelectorRequirement(BaseModel):
    """One ``matchExpressions`` entry of a label selector."""

    key: str
    operator: Literal["In", "NotIn", "Exists", "DoesNotExist"]
    values: list[str] | None = None


class LabelSelector(BaseModel):
    """A Kubernetes label selector: every term must match; an empty selector matches everything."""

    matchLabels: dict[str, str] | None = None
    matchExpressions: list[LabelSelectorRequirement] | None = None
