"""Connection settings: kubeconfig files (merged as kubectl merges them), in-cluster service accounts,
tokens, client certificates and exec credential plugins."""

from __future__ import annotations

import asyncio
import base64
import datetime as dt
import logging
import os
import ssl
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

SERVICE_ACCOUNT_DIR = Path("/var/run/secrets/kubernetes.io/serviceaccount")
log = logging.getLogger(__name__)


class ConfigError(Exception):
    """The connection settings are missing or wrong; the message says which and how to fix it."""


@dataclass
class Credentials:
    """What is sent to authenticate: a bearer token and/or a client certificate (PEM bytes)."""

    token: str | None = None
    cert_pem: bytes | None = None
    key_pem: bytes | None = None
    expires_at: float | None = None  # epoch seconds; None = never


class Auth:
    """Static credentials. Subclasses refresh them (token files, exec plugins)."""

    def __init__(self, creds: Credentials | None = None) -> None:
        self._creds = creds or Credentials()

    async def credentials(self) -> Credentials:
        return self._creds

    async def invalidate(self) -> None:
        """Called after a 401: the next ``credentials()`` must fetch fresh ones."""


class TokenFileAuth(Auth):
    """A token re-read from its file: the kubelet rotates projected service-account tokens (about
    hourly, well before they expire), so the file is read again once a minute, as client-go does, and
    at once after a 401. A failed read (or an empty file) keeps the token in hand, as client-go does,
    rather than failing requests that it may still authenticate."""

    def __init__(self, path: str | Path, reread_every: float = 60.0) -> None:
        super().__init__()
        self._path = Path(path)
        self._reread_every = reread_every
        self._read_at = 0.0

    async def credentials(self) -> Credentials:
        if time.monotonic() - self._read_at > self._reread_every or not self._creds.token:
            token = self._read()
            if token:
                self._creds = Credentials(token=token)
            self._read_at = time.monotonic()
        return self._creds

    def _read(self) -> str | None:
        try:
            token = self._path.read_text().strip()
        except OSError as exc:
            if not self._creds.token:
                raise ConfigError(f"token file {self._path} cannot be read ({exc.strerror}): mount the "
                                  "service-account token there or fix tokenFile in the kubeconfig") from None
            log.warning("token file %s cannot be read (%s): keeping the token read before", self._path,
                        exc.strerror)
            return None
        if not token and not self._creds.token:
            raise ConfigError(f"token file {self._path} is empty: it should hold a bearer token")
        return token or None

    async def invalidate(self) -> None:
        self._read_at = 0.0


class ExecAuth(Auth):
    """A ``client.authentication.k8s.io`` exec plugin (v1 or v1beta1), cached until its expiry."""

    def __init__(self, spec: dict[str, Any], cluster: dict[str, Any] | None = None) -> None:
        super().__init__()
        self._spec = spec
        self._cluster = cluster or {}
        self._lock = asyncio.Lock()
        self._valid = False

    async def credentials(self) -> Credentials:
        async with self._lock:
            exp = self._creds.expires_at
            if not self._valid or (exp is not None and exp - time.time() < 10):
                self._creds = await self._run()
                self._valid = True
            return self._creds

    async def invalidate(self) -> None:
        self._valid = False

    async def _run(self) -> Credentials:
        spec = self._spec
        api_version = spec.get("apiVersion", "client.authentication.k8s.io/v1")
        env = dict(os.environ)
        for item in spec.get("env") or []:
            env[item["name"]] = item["value"]
        request: dict[str, Any] = {"apiVersion": api_version, "kind": "ExecCredential",
                                   "spec": {"interactive": False}}
        if spec.get("provideClusterInfo"):
            request["spec"]["cluster"] = self._cluster
        env["KUBERNETES_EXEC_INFO"] = orjson.dumps(request).decode()
        try:
            proc = await asyncio.create_subprocess_exec(
                spec["command"], *(spec.get("args") or []), env=env,
                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        except FileNotFoundError as exc:
            hint = spec.get("installHint") or "install it or fix users[].user.exec.command"
            raise ConfigError(f"exec credential plugin {spec['command']!r} not found: {hint}") from exc
        out, err = await proc.communicate()
        if proc.returncode != 0:
            raise ConfigError(f"exec credential plugin {spec['command']!r} failed "
                              f"(exit {proc.returncode}): {err.decode(errors='replace')[-500:]}")
        status = (orjson.loads(out) or {}).get("status") or {}
        expires = status.get("expirationTimestamp")
        cert, key = status.get("clientCertificateData"), status.get("clientKeyData")
        return Credentials(
            token=status.get("token"),
            cert_pem=cert.encode() if cert else None,
            key_pem=key.encode() if key else None,
            expires_at=_parse_time(expires) if expires else None,
        )


def _parse_time(value: str) -> float:
    return dt.datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()


@dataclass
class Config:
    """Everything needed to talk to one API server."""

    server: str
    auth: Auth = field(default_factory=Auth)
    ca_pem: bytes | None = None
    insecure: bool = False
    namespace: str = "default"
    tls_server_name: str | None = None
    source: str = ""  # where this came from, for messages

    def ssl_context(self, creds: Credentials) -> ssl.SSLContext | bool:
        if not self.server.startswith("https"):
            return False
        if self.ca_pem and not self.insecure:
            # Only the cluster's CA, as client-go does: no public CA can vouch for this API server (and
            # the system bundle is not parsed, ~17 ms of every start).
            ctx = ssl.create_default_context(cadata=self.ca_pem.decode())
        else:
            ctx = ssl.create_default_context()
        if self.insecure:
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE
        if creds.cert_pem and creds.key_pem:
            _load_cert_chain(ctx, creds.cert_pem, creds.key_pem)
        return ctx

    @classmethod
    def in_cluster(cls) -> Config:
        """The pod's service account, as client-go's InClusterConfig: both ``KUBERNETES_SERVICE_HOST``
        and ``KUBERNETES_SERVICE_PORT``, the token file and the cluster's CA beside it."""
        host, port = os.environ.get("KUBERNETES_SERVICE_HOST"), os.environ.get("KUBERNETES_SERVICE_PORT")
        if not host or not port:
            raise ConfigError("not running in a cluster: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT "
                              "are not both set")
        token, ca = SERVICE_ACCOUNT_DIR / "token", SERVICE_ACCOUNT_DIR / "ca.crt"
        for path in (token, ca):
            if not path.is_file():
                raise ConfigError(f"in a cluster, but {path} is missing: mount the service account's token "
                                  "(automountServiceAccountToken must not be false)")
        if ":" in host:
            host = f"[{host}]"
        ns_file = SERVICE_ACCOUNT_DIR / "namespace"
        return cls(server=f"https://{host}:{port}", auth=TokenFileAuth(token), ca_pem=ca.read_bytes(),
                   namespace=ns_file.read_text().strip() if ns_file.exists() else "default",
                   source="in-cluster service account")

    @classmethod
    def from_kubeconfig(cls, path: str | os.PathLike[str] | None = None, context: str | None = None) -> Config:
        paths = [Path(path).expanduser()] if path else _kubeconfig_paths()
        if path and not paths[0].is_file():
            raise ConfigError(f"--kubeconfig {path}: no such file; pass the path of an existing kubeconfig "
                              "(`kubeloop cluster kubeconfig` prints the local cluster's)")
        merged = _merge([p for p in paths if p.exists()])
        if not merged:
            raise ConfigError(f"no kubeconfig found at {', '.join(map(str, paths))}: pass --kubeconfig, "
                              "set KUBECONFIG, or run `kubeloop cluster up` for a local cluster")
        ctx_name = context or merged.get("current-context")
        if not ctx_name:
            raise ConfigError("the kubeconfig has no current-context: pass --context NAME")
        ctx = _named(merged, "contexts", ctx_name, "context")
        cluster = _named(merged, "clusters", ctx.get("cluster"), "cluster")
        user = _named(merged, "users", ctx.get("user"), "user", required=False)
        base = Path(merged["__dirs"].get(ctx.get("cluster"), "."))
        if not cluster.get("server"):
            raise ConfigError(f"kubeconfig cluster {ctx.get('cluster')!r} has no server address; fix the "
                              "kubeconfig")
        return cls(
            server=cluster["server"].rstrip("/"),
            auth=_auth_for(user, base, cluster),
            ca_pem=_data_or_file(cluster, "certificate-authority", base),
            insecure=bool(cluster.get("insecure-skip-tls-verify")),
            namespace=ctx.get("namespace") or "default",
            tls_server_name=cluster.get("tls-server-name"),
            source=f"kubeconfig {':'.join(map(str, paths))} context {ctx_name}",
        )

    @classmethod
    def load(cls, kubeconfig: str | None = None, context: str | None = None) -> Config:
        """client-go's order (controller-runtime's GetConfig): an explicit kubeconfig, else the files in
        ``KUBECONFIG``, else the pod's service account, else ``~/.kube/config``. A ``context`` asks for a
        kubeconfig (in-cluster configuration has none)."""
        if kubeconfig or context or os.environ.get("KUBECONFIG"):
            return cls.from_kubeconfig(kubeconfig, context)
        try:
            return cls.in_cluster()
        except ConfigError as exc:
            in_cluster_error = exc
        if any(p.exists() for p in _kubeconfig_paths()):
            return cls.from_kubeconfig()
        tried = ", ".join(map(str, _kubeconfig_paths()))
        raise ConfigError(f"no kubeconfig found (looked at {tried}) and {in_cluster_error}: pass --kubeconfig "
                          "PATH or set KUBECONFIG (`kubeloop cluster up` starts a local cluster and prints its "
                          "kubeconfig)")


def _kubeconfig_paths() -> list[Path]:
    env = os.environ.get("KUBECONFIG")
    if env:
        return [Path(p).expanduser() for p in env.split(os.pathsep) if p]
    return [Path.home() / ".kube" / "config"]


def _merge(paths: list[Path]) -> dict[str, Any]:
    """kubectl's merge rule: the first file to set a value or define a name wins."""
    merged: dict[str, Any] = {"clusters": [], "contexts": [], "users": [], "__dirs": {}}
    for path in paths:
        doc = _read_kubeconfig(path)
        merged.setdefault("current-context", doc.get("current-context"))
        if not merged["current-context"]:
            merged["current-context"] = doc.get("current-context")
        for section in ("clusters", "contexts", "users"):
            known = {item["name"] for item in merged[section]}
            for item in doc.get(section) or []:
                if item.get("name") not in known:
                    merged[section].append(item)
                    if section == "clusters":
                        merged["__dirs"][item["name"]] = str(path.parent)
                    if section == "users":
                        merged["__dirs"]["user:" + item["name"]] = str(path.parent)
    return merged if any(merged[s] for s in ("clusters", "contexts", "users")) else {}


def _read_kubeconfig(path: Path) -> dict[str, Any]:
    import yaml  # only here: a Deployment's in-cluster config reads no kubeconfig (start-up CPU)

    try:
        doc = yaml.safe_load(path.read_text()) or {}
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark else ""
        problem = getattr(exc, "problem", None) or type(exc).__name__
        raise ConfigError(f"kubeconfig {path} is not valid YAML{where}: {problem}; fix the file or point "
                          "--kubeconfig/KUBECONFIG at another one") from None
    if not isinstance(doc, dict):
        raise ConfigError(f"kubeconfig {path} is not a kubeconfig (a YAML mapping with clusters, contexts "
                          f"and users), it holds a {type(doc).__name__}")
    return doc


def _named(merged: dict[str, Any], section: str, name: str | None, key: str,
           required: bool = True) -> dict[str, Any]:
    for item in merged[section]:
        if item.get("name") == name:
            return item.get(key) or {}
    if required:
        known = ", ".join(i.get("name", "?") for i in merged[section]) or "none"
        raise ConfigError(f"kubeconfig {section[:-1]} {name!r} not found (known: {known}); "
                          f"fix --context or the kubeconfig")
    return {}


def _data_or_file(section: dict[str, Any], key: str, base: Path) -> bytes | None:
    data = section.get(f"{key}-data")
    if data:
        return base64.b64decode(data)
    path = section.get(key)
    if path:
        return (base / Path(path).expanduser()).read_bytes()
    return None


def _auth_for(user: dict[str, Any], base: Path, cluster: dict[str, Any]) -> Auth:
    if user.get("exec"):
        return ExecAuth(user["exec"], {"server": cluster.get("server"),
                                       "certificate-authority-data": cluster.get("certificate-authority-data")})
    if user.get("tokenFile"):
        return TokenFileAuth(base / user["tokenFile"])
    if user.get("auth-provider"):
        return _official_client_auth(user)
    creds = Credentials(
        token=user.get("token"),
        cert_pem=_data_or_file(user, "client-certificate", base),
        key_pem=_data_or_file(user, "client-key", base),
    )
    if user.get("username"):
        raise ConfigError("kubeconfig user has username/password: basic auth was removed in Kubernetes "
                          "1.19; use a token, a client certificate or an exec plugin")
    return Auth(creds)


def _official_client_auth(user: dict[str, Any]) -> Auth:
    """Auth providers (OIDC refresh and the like) through the official client, when it is installed."""
    try:
        from kubernetes.config.kube_config import KubeConfigLoader  # type: ignore[import-not-found]
    except ImportError as exc:
        name = user["auth-provider"].get("name")
        raise ConfigError(f"auth-provider {name!r} needs the official client: pip install kubernetes, "
                          "or switch the kubeconfig user to an exec plugin") from exc

    class _Provider(Auth):
        async def credentials(self) -> Credentials:
            loader = KubeConfigLoader({"users": [{"name": "u", "user": user}], "contexts": [
                {"name": "c", "context": {"user": "u", "cluster": "x"}}], "clusters": [
                {"name": "x", "cluster": {"server": "https://unused"}}], "current-context": "c"})
            loader._load_authentication()  # noqa: SLF001 - the loader's only entry point for this
            header = (loader.token or "").removeprefix("Bearer ")
            return Credentials(token=header or None)

    return _Provider()


def _load_cert_chain(ctx: ssl.SSLContext, cert_pem: bytes, key_pem: bytes) -> None:
    """Loads an in-memory key pair. ``ssl`` reads only paths, so use anonymous memory files
    (memfd) rather than temp files: the private key never touches a disk."""
    cert_fd = os.memfd_create("kubeloop-cert")
    key_fd = os.memfd_create("kubeloop-key")
    try:
        os.write(cert_fd, cert_pem)
        os.write(key_fd, key_pem)
        ctx.load_cert_chain(f"/proc/self/fd/{cert_fd}", f"/proc/self/fd/{key_fd}")
    finally:
        os.close(cert_fd)
        os.close(key_fd)
