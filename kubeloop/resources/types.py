"""Field types that custom resources share with Kubernetes' own APIs."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel

from kubeloop.resources.schema import validation


class LabelSelectorRequirement(BaseModel):
    """One ``matchExpressions`` entry of a label selector."""

    # What the API server checks for its own selectors: a set operator needs values, an existence test none.
    __validations__ = [validation(
        "self.operator in ['In', 'NotIn'] ? (has(self.values) && size(self.values) > 0)"
        " : (!has(self.values) || size(self.values) == 0)",
        "values must be non-empty for In and NotIn, and empty for Exists and DoesNotExist")]

    key: str
    operator: Literal["In", "NotIn", "Exists", "DoesNotExist"]
    values: list[str] | None = None


class LabelSelector(BaseModel):
    """A Kubernetes label selector: every term must match; an empty selector matches everything."""

    matchLabels: dict[str, str] | None = None
    matchExpressions: list[LabelSelectorRequirement] | None = None
