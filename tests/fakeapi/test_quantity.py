"""Quantities in canonical form, as kube-apiserver stores them (the examples of the Kubernetes
documentation on resource units, and the rewrites an operator meets)."""

from __future__ import annotations

import pytest

from kubeloop.testing.apiserver.quantity import canonical


@pytest.mark.parametrize(("given", "stored"), [
    ("1000m", "1"), ("1024Mi", "1Gi"), ("0.5", "500m"), (0.5, "500m"), (2, "2"), ("1.5Gi", "1536Mi"),
    ("1000k", "1M"), ("0.5Ki", "512"), ("0.1n", "1n"), ("1E6", "1e6"), ("0m", "0"),
    ("128974848", "128974848"), ("129e6", "129e6"), ("129M", "129M"), ("123Mi", "123Mi"), ("100m", "100m"),
])
def test_canonical(given: str | float, stored: str) -> None:
    assert canonical(given) == stored


@pytest.mark.parametrize("bad", ["", "1x", "abc", "1..2", "--1", "1Ki2"])
def test_invalid(bad: str) -> None:
    with pytest.raises(ValueError, match="quantities must match"):
        canonical(bad)


@pytest.mark.parametrize(("given", "stored"), [
    ("0.0001", "1m"), ("100.5", "100500m"), ("1e-4", "1e-3"), ("0.1n", "1m"), ("1Ki", "1Ki"), ("250m", "250m"),
])
def test_resource_list_rounds_up_to_milli(given: str, stored: str) -> None:
    """A ResourceList's values (a container's requests and limits, a quota's, a limit range's) are rounded
    up to milli units (SetDefaults_ResourceList), other quantities are not."""
    assert canonical(given, milli=True) == stored
