"""The largest CopyratorRule the schema admits, every list full and every string at its maximum, built
of globs that need the general (regular-expression) matcher: what a hostile tenant would write. And the
smallest step beyond each bound, which the API server must refuse."""

from __future__ import annotations

from typing import Any

from kubeloop.operators.copyrator.boundary import MAX_CONSENT_ENTRIES
from kubeloop.operators.copyrator.globs import MAX_GENERAL
from kubeloop.operators.copyrator.models import (
    MAX_EXCLUDED,
    MAX_EXPRESSION_VALUES,
    MAX_EXPRESSIONS,
    MAX_KEY,
    MAX_KEY_PATTERNS,
    MAX_LABEL_VALUE,
    MAX_NAME,
    MAX_NAMESPACE,
    MAX_SELECTOR_LABELS,
    MAX_SOURCE_NAMESPACES,
)


def _glob(i: int, length: int) -> str:
    """A glob of exactly ``length`` characters: the first MAX_GENERAL with wildcards inside (the general
    matcher), the rest ``prefix*`` (a prefix scan each)."""
    if i >= MAX_GENERAL:
        return (f"p{i}-" + "x" * length)[:length - 1] + "*"
    head = f"*a?{i}[a-z]*b"
    return (head + "x" * length)[:length - 1] + "?"


def worst_rule(name: str, ns: str, selector: dict[str, str], match_labels: bool = True) -> dict[str, Any]:
    """Every field full except ``selector`` (the labels the sources carry, so that they match) and, with
    ``match_labels=False``, the namespaceSelector's matchLabels (so that unlabelled namespaces are in
    scope and every expression is evaluated)."""
    return {
        "apiVersion": "flant.com/v1", "kind": "CopyratorRule", "metadata": {"name": name, "namespace": ns},
        "ruleType": "configmap", "selector": selector,
        "namespace": [ns] + [f"{'n' * (MAX_NAMESPACE - 4)}{i:04d}" for i in range(MAX_SOURCE_NAMESPACES - 1)],
        "excludedNamespaces": [_glob(i, MAX_NAMESPACE) for i in range(MAX_EXCLUDED)],
        "namespaceSelector": {
            "matchLabels": {f"k{i}": "" for i in range(MAX_SELECTOR_LABELS if match_labels else 0)},
            "matchExpressions": [
                {"key": f"x{i}." + "k" * (MAX_KEY - 10), "operator": "NotIn",
                 "values": [f"{j:04d}" + "v" * (MAX_LABEL_VALUE - 4) for j in range(MAX_EXPRESSION_VALUES)]}
                for i in range(MAX_EXPRESSIONS)]},
        "targetName": "t" * (MAX_NAME - 6) + "{name}",
        "copyLabels": [_glob(i, MAX_KEY) for i in range(MAX_KEY_PATTERNS)],
        "copyAnnotations": [_glob(i, MAX_KEY) for i in range(MAX_KEY_PATTERNS)],
    }


def worst_consent(targets: list[str]) -> str:
    """An allow-copy value with every entry the operator accepts, naming ``targets`` last."""
    filler = [_glob(i, MAX_NAMESPACE) for i in range(MAX_CONSENT_ENTRIES - len(targets))]
    return ",".join([*filler, *targets])


def beyond(rule: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """One rule per bound, each one step past it (what the API server must refuse)."""
    out: dict[str, dict[str, Any]] = {}
    for field, item in (("excludedNamespaces", "x"), ("copyLabels", "k"), ("copyAnnotations", "k")):
        out[f"{field}: one item too many"] = {**rule, field: [*rule[field], item]}
        out[f"{field}: one character too long"] = {**rule, field: [rule[field][0] + "x"]}
        out[f"{field}: one general glob too many"] = {**rule, field: [*rule[field][:-1], "*?x*"]}
    sel = rule["namespaceSelector"]
    expressions = sel["matchExpressions"]
    out["namespaceSelector.matchExpressions: one too many"] = {
        **rule, "namespaceSelector": {**sel, "matchExpressions": [*expressions, expressions[0]]}}
    out["namespaceSelector.matchLabels: one too many"] = {
        **rule, "namespaceSelector": {**sel, "matchLabels": {**sel["matchLabels"], "extra": ""}}}
    out["selector: a key too long"] = {**rule, "selector": {"k" * (MAX_KEY + 1): "v"}}
    out["selector: a value too long"] = {**rule, "selector": {"k": "v" * (MAX_LABEL_VALUE + 1)}}
    out["targetName: one character too long"] = {**rule, "targetName": "t" + rule["targetName"]}
    return out
