"""Where the connection settings come from: client-go's order, and the in-cluster service account."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
import yaml

from kubeloop.client import config as config_module
from kubeloop.client.config import Config, ConfigError, TokenFileAuth


def kubeconfig(path: Path, server: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump({
        "current-context": "c", "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}],
        "clusters": [{"name": "c", "cluster": {"server": server}}], "users": [{"name": "u", "user": {"token": "t"}}]}))
    return path


@pytest.fixture
def places(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    """A home with ~/.kube/config, a KUBECONFIG file, an explicit file and a mounted service account,
    none of them in effect until a test sets the environment."""
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    monkeypatch.delenv("KUBERNETES_SERVICE_PORT", raising=False)
    sa = tmp_path / "serviceaccount"
    sa.mkdir()
    (sa / "token").write_text("sa-token-1\n")
    (sa / "ca.crt").write_bytes(b"-----BEGIN CERTIFICATE-----\n")
    (sa / "namespace").write_text("operators")
    monkeypatch.setattr(config_module, "SERVICE_ACCOUNT_DIR", sa)
    return {"home": kubeconfig(home / ".kube" / "config", "https://home:6443"),
            "env": kubeconfig(tmp_path / "env-config", "https://env:6443"),
            "explicit": kubeconfig(tmp_path / "explicit", "https://explicit:6443"), "sa": sa}


def in_cluster(monkeypatch: pytest.MonkeyPatch, port: str = "6443") -> None:
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "10.0.0.1")
    monkeypatch.setenv("KUBERNETES_SERVICE_PORT", port)


def test_an_explicit_kubeconfig_comes_first(places, monkeypatch):
    in_cluster(monkeypatch)
    monkeypatch.setenv("KUBECONFIG", str(places["env"]))
    assert Config.load(str(places["explicit"])).server == "https://explicit:6443"


def test_kubeconfig_env_comes_before_in_cluster(places, monkeypatch):
    in_cluster(monkeypatch)
    monkeypatch.setenv("KUBECONFIG", str(places["env"]))
    assert Config.load().server == "https://env:6443"


def test_in_cluster_comes_before_the_home_kubeconfig(places, monkeypatch):
    in_cluster(monkeypatch, "443")
    cfg = Config.load()
    assert (cfg.server, cfg.namespace, cfg.source) == ("https://10.0.0.1:443", "operators",
                                                       "in-cluster service account")
    assert asyncio.run(cfg.auth.credentials()).token == "sa-token-1"


def test_the_home_kubeconfig_is_last(places, monkeypatch):
    assert Config.load().server == "https://home:6443"
    # in a pod whose token is not mounted, client-go falls back to the home kubeconfig too
    in_cluster(monkeypatch)
    (places["sa"] / "token").unlink()
    assert Config.load().server == "https://home:6443"


def test_a_context_asks_for_a_kubeconfig(places, monkeypatch):
    in_cluster(monkeypatch)
    assert Config.load(context="c").server == "https://home:6443"


def test_nothing_found_names_every_place_and_the_fix(places, monkeypatch):
    places["home"].unlink()
    with pytest.raises(ConfigError) as err:
        Config.load()
    assert "looked at" in str(err.value) and "KUBERNETES_SERVICE_HOST" in str(err.value)
    assert "--kubeconfig" in str(err.value)


def test_in_cluster_needs_host_and_port_as_client_go_does(places, monkeypatch):
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "10.0.0.1")
    with pytest.raises(ConfigError, match="KUBERNETES_SERVICE_PORT"):
        Config.in_cluster()
    monkeypatch.setenv("KUBERNETES_SERVICE_PORT", "443")
    (places["sa"] / "ca.crt").unlink()
    with pytest.raises(ConfigError, match=r"ca\.crt is missing"):
        Config.in_cluster()


def test_an_ipv6_service_host_is_bracketed(places, monkeypatch):
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "fd00::1")
    monkeypatch.setenv("KUBERNETES_SERVICE_PORT", "443")
    assert Config.in_cluster().server == "https://[fd00::1]:443"


async def test_a_rotated_token_is_read_after_the_period_or_a_401(tmp_path):
    path = tmp_path / "token"
    path.write_text("one")
    auth = TokenFileAuth(path, reread_every=0.05)
    assert (await auth.credentials()).token == "one"
    path.write_text("two")
    assert (await auth.credentials()).token == "one"  # within the period: no read
    await asyncio.sleep(0.1)
    assert (await auth.credentials()).token == "two"
    path.write_text("three")
    await auth.invalidate()  # what the transport does after a 401
    assert (await auth.credentials()).token == "three"


async def test_a_token_file_that_cannot_be_read_keeps_the_token_in_hand(tmp_path):
    path = tmp_path / "token"
    path.write_text("one")
    auth = TokenFileAuth(path)
    assert (await auth.credentials()).token == "one"
    path.unlink()
    await auth.invalidate()
    assert (await auth.credentials()).token == "one"
    path.write_text("")
    await auth.invalidate()
    assert (await auth.credentials()).token == "one"
    path.write_text("two\n")
    await auth.invalidate()
    assert (await auth.credentials()).token == "two"


async def test_a_missing_token_file_at_start_is_a_clear_error(tmp_path):
    with pytest.raises(ConfigError, match="cannot be read"):
        await TokenFileAuth(tmp_path / "absent").credentials()
    (tmp_path / "empty").write_text("\n")
    with pytest.raises(ConfigError, match="is empty"):
        await TokenFileAuth(tmp_path / "empty").credentials()
