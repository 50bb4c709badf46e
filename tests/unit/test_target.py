"""kube_target's mode: the fake unless the flag or the environment variable asks for the real cluster;
a value of the variable that means neither is an error naming it and the values it takes."""

from __future__ import annotations

import pytest

from kubeloop.testing.target import ENV_REAL, wants_real_cluster


def test_fake_by_default_real_with_the_flag_or_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV_REAL, raising=False)
    assert not wants_real_cluster(False) and wants_real_cluster(True)
    monkeypatch.setenv(ENV_REAL, "1")
    assert wants_real_cluster(False)
    monkeypatch.setenv(ENV_REAL, "0")
    assert not wants_real_cluster(False) and wants_real_cluster(True)  # the flag wins


def test_a_value_meaning_neither_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_REAL, "maybe")
    with pytest.raises(ValueError, match="KUBELOOP_TEST_REAL_CLUSTER='maybe': use 1"):
        wants_real_cluster(False)
