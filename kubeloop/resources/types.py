"""Field types that custom resources share with Kubernetes' own APIs."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, Field

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


# Kubernetes' own limits for labels (apimachinery's validation): a key is an optional DNS-subdomain prefix
# (253) and "/" before a name (63), a value at most 63 characters. The counts are kubeloop's: a selector
# in a custom resource is tenant input, and its terms are matched against every candidate object.
MAX_LABEL_KEY = 317
MAX_LABEL_VALUE = 63
MAX_SELECTOR_LABELS = 32
MAX_SELECTOR_EXPRESSIONS = 16
MAX_SELECTOR_VALUES = 64
_BoundedKey = Annotated[str, Field(max_length=MAX_LABEL_KEY)]
_BoundedValue = Annotated[str, Field(max_length=MAX_LABEL_VALUE)]
# A map's keys have no maxLength in a structural schema: CEL bounds them (its cost: the map's maxProperties).
_KEYS_BOUNDED = validation(f"self.all(k, size(k) <= {MAX_LABEL_KEY})", f"keys are at most {MAX_LABEL_KEY} characters")


class BoundedLabelSelectorRequirement(BaseModel):
    """One ``matchExpressions`` entry of a label selector."""

    __validations__ = LabelSelectorRequirement.__validations__

    key: _BoundedKey
    operator: Literal["In", "NotIn", "Exists", "DoesNotExist"]
    values: Annotated[list[_BoundedValue], Field(max_length=MAX_SELECTOR_VALUES)] | None = None


class BoundedLabelSelector(LabelSelector):
    """A LabelSelector with maxima on every list and string."""

    # The API server enforces them: keys at most 317 characters and values 63 (Kubernetes' own label
    # limits), at most 32 ``matchLabels``, 16 ``matchExpressions`` and 64 values in each.
    matchLabels: Annotated[dict[str, _BoundedValue], Field(max_length=MAX_SELECTOR_LABELS),
                           _KEYS_BOUNDED] | None = None
    # A narrower item type than the base's (lists are invariant, hence the ignore).
    matchExpressions: Annotated[list[BoundedLabelSelectorRequirement],
                                Field(max_length=MAX_SELECTOR_EXPRESSIONS)] | None = None  # type: ignore[assignment]
