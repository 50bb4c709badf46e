import asyncio
import base64
import os
import ssl
import sys
import textwrap
import time
from pathlib import Path

import pytest
import yaml

from kubeloop.client.config import Config, ConfigError, ExecAuth, TokenFileAuth


def write(path: Path, doc: dict) -> Path:
    path.write_text(yaml.safe_dump(doc))
    return path


def test_kubeconfig_list_is_merged_first_wins(tmp_path, monkeypatch):
    a = write(tmp_path / "a", {"current-context": "one", "contexts": [
        {"name": "one", "context": {"cluster": "c1", "user": "u1", "namespace": "team"}}],
        "clusters": [{"name": "c1", "cluster": {"server": "https://a:6443/"}}],
        "users": [{"name": "u1", "user": {"token": "tok-a"}}]})
    b = write(tmp_path / "b", {"current-context": "two", "contexts": [
        {"name": "two", "context": {"cluster": "c2", "user": "u1"}}],
        "clusters": [{"name": "c2", "cluster": {"server": "https://b:6443"}},
                     {"name": "c1", "cluster": {"server": "https://ignored"}}],
        "users": [{"name": "u1", "user": {"token": "tok-b"}}]})
    monkeypatch.setenv("KUBECONFIG", f"{a}{os.pathsep}{b}")
    cfg = Config.from_kubeconfig()
    assert (cfg.server, cfg.namespace) == ("https://a:6443", "team")
    other = Config.from_kubeconfig(context="two")
    assert other.server == "https://b:6443" and other.namespace == "default"
    with pytest.raises(ConfigError, match="context 'nope' not found"):
        Config.from_kubeconfig(context="nope")


async def test_token_file_is_reread(tmp_path):
    f = tmp_path / "token"
    f.write_text("one\n")
    auth = TokenFileAuth(f, reread_every=0)
    assert (await auth.credentials()).token == "one"
    f.write_text("two")
    assert (await auth.credentials()).token == "two"


async def test_exec_plugin_v1_token_cached_until_expiry(tmp_path):
    counter = tmp_path / "count"
    script = tmp_path / "plugin.py"
    script.write_text(textwrap.dedent(f"""
        import json, os, pathlib
        info = json.loads(os.environ["KUBERNETES_EXEC_INFO"])
        assert info["apiVersion"] == "client.authentication.k8s.io/v1", info
        p = pathlib.Path({str(counter)!r}); n = int(p.read_text()) + 1 if p.exists() else 1; p.write_text(str(n))
        print(json.dumps({{"apiVersion": info["apiVersion"], "kind": "ExecCredential",
                          "status": {{"token": "t" + str(n) + os.environ["EXTRA"],
                                     "expirationTimestamp": os.environ["EXP"]}}}}))
    """))
    far = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + 3600))
    auth = ExecAuth({"apiVersion": "client.authentication.k8s.io/v1", "command": sys.executable,
                     "args": [str(script)], "env": [{"name": "EXTRA", "value": "-x"}, {"name": "EXP", "value": far}]})
    assert (await auth.credentials()).token == "t1-x"
    assert (await auth.credentials()).token == "t1-x"  # cached
    await auth.invalidate()  # e.g. after a 401
    assert (await auth.credentials()).token == "t2-x"


async def test_exec_plugin_missing_command_says_how_to_fix():
    auth = ExecAuth({"command": "/nonexistent/kubelogin", "installHint": "install kubelogin"})
    with pytest.raises(ConfigError, match="install kubelogin"):
        await auth.credentials()


def test_inline_client_key_never_touches_disk(tmp_path):
    import datetime as dt

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(x509.oid.NameOID.COMMON_NAME, "me")])
    now = dt.datetime.now(dt.UTC)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(1).not_valid_before(now).not_valid_after(now + dt.timedelta(days=1))
            .sign(key, hashes.SHA256()))
    cert_pem = cert.public_bytes(serialization.Encoding.PEM)
    key_pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption())
    kc = write(tmp_path / "kc", {"current-context": "x", "contexts": [{"name": "x", "context": {
        "cluster": "x", "user": "x"}}], "clusters": [{"name": "x", "cluster": {"server": "https://h"}}],
        "users": [{"name": "x", "user": {"client-certificate-data": base64.b64encode(cert_pem).decode(),
                                         "client-key-data": base64.b64encode(key_pem).decode()}}]})
    before = set(os.listdir("/tmp"))
    cfg = Config.from_kubeconfig(kc)
    creds = asyncio.run(cfg.auth.credentials())
    assert creds.key_pem == key_pem
    ctx = cfg.ssl_context(creds)
    assert ctx is not False
    assert set(os.listdir("/tmp")) == before  # no temp files with the key


def test_basic_auth_is_refused_with_a_fix(tmp_path):
    kc = write(tmp_path / "kc", {"current-context": "x", "contexts": [{"name": "x", "context": {
        "cluster": "x", "user": "x"}}], "clusters": [{"name": "x", "cluster": {"server": "https://h"}}],
        "users": [{"name": "x", "user": {"username": "a", "password": "b"}}]})
    with pytest.raises(ConfigError, match="basic auth was removed"):
        Config.from_kubeconfig(kc)


def test_in_cluster_requires_the_environment(monkeypatch):
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    with pytest.raises(ConfigError, match="not running in a cluster"):
        Config.in_cluster()


def _self_signed_pem() -> bytes:
    import datetime as dt

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(x509.oid.NameOID.COMMON_NAME, "cluster-ca")])
    now = dt.datetime.now(dt.UTC)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(1).not_valid_before(now).not_valid_after(now + dt.timedelta(days=1))
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(key, hashes.SHA256()))
    return cert.public_bytes(serialization.Encoding.PEM)


def test_a_cluster_ca_is_the_only_trusted_one(tmp_path):
    # client-go trusts only certificate-authority(-data) when the kubeconfig gives one: a certificate
    # from a public CA for the API server's name must not be accepted in its place.
    ca = _self_signed_pem()
    kc = write(tmp_path / "kc", {"current-context": "x", "contexts": [{"name": "x", "context": {
        "cluster": "x", "user": "x"}}], "clusters": [{"name": "x", "cluster": {
            "server": "https://h", "certificate-authority-data": base64.b64encode(ca).decode()}}],
        "users": [{"name": "x", "user": {"token": "t"}}]})
    cfg = Config.from_kubeconfig(kc)
    ctx = cfg.ssl_context(asyncio.run(cfg.auth.credentials()))
    assert [c["subject"] for c in ctx.get_ca_certs()] == [((("commonName", "cluster-ca"),),)]
    assert ctx.verify_mode == ssl.CERT_REQUIRED and ctx.check_hostname


def test_without_a_cluster_ca_the_system_ones_are_trusted(tmp_path):
    kc = write(tmp_path / "kc", {"current-context": "x", "contexts": [{"name": "x", "context": {
        "cluster": "x", "user": "x"}}], "clusters": [{"name": "x", "cluster": {"server": "https://h"}}],
        "users": [{"name": "x", "user": {"token": "t"}}]})
    cfg = Config.from_kubeconfig(kc)
    ctx = cfg.ssl_context(asyncio.run(cfg.auth.credentials()))
    assert ctx.cert_store_stats()["x509_ca"] > 1  # the machine's bundle (a public API endpoint)
