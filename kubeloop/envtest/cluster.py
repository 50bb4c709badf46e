"""A real Kubernetes control plane on 127.0.0.1: etcd, kube-apiserver, kube-controller-manager,
kube-scheduler and kwok (fake kubelets), run as plain processes from the kubeloop cache.

Ports are chosen at ``up()`` time, so several named clusters can run side by side. The processes
run in their own sessions and outlive the Python process that started them; a state file records
their PIDs (and kernel start times, so a recycled PID is never signalled) for ``down()``.
"""

from __future__ import annotations

import base64
import contextlib
import datetime as dt
import fcntl
import http.client
import json
import os
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from kubeloop.envtest import versions
from kubeloop.envtest.build import Builder, Toolchain, ensure_built
from kubeloop.envtest.certs import FRONT_PROXY_CLIENT, ClusterPKI, ensure_pki

COMPONENTS = ("etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kwok")
# Port names -> component; etcd needs a peer port even as a single member.
PORTS = ("etcd", "etcd-peer", "kube-apiserver", "kube-controller-manager", "kube-scheduler")
SA_ISSUER = "https://kubernetes.default.svc.cluster.local"
KWOK_ANNOTATION = ("kwok.x-k8s.io/node", "fake")
DEFAULT_NODES = 3

Logger = Callable[[str], None]

# The admission profile of a local control plane. "hardened" (the default) runs the admission plugins
# production and hardened clusters run, so that an operator meets their refusals on the developer's
# machine first; docs/howto/testing.md says where each comes from. kube-apiserver 1.35 already enables
# NamespaceLifecycle, LimitRanger, ServiceAccount, PodSecurity, ResourceQuota and the webhooks by
# default (they are named anyway: a profile states what runs); NodeRestriction and
# OwnerReferencesPermissionEnforcement are off upstream and on in OpenShift, NodeRestriction also in
# kubeadm, RKE2 and the CIS benchmark; PodNodeSelector and PodTolerationRestriction are on in OpenShift;
# DenyServiceExternalIPs closes CVE-2020-8554. "permissive" is kube-apiserver's own defaults.
PROFILES: dict[str, tuple[str, ...]] = {
    "hardened": ("NamespaceLifecycle", "LimitRanger", "ServiceAccount", "NodeRestriction", "PodSecurity",
                 "PodNodeSelector", "PodTolerationRestriction", "OwnerReferencesPermissionEnforcement",
                 "DenyServiceExternalIPs", "ResourceQuota"),
    "permissive": (),
}
DEFAULT_PROFILE = "hardened"
ENV_PROFILE = "KUBELOOP_CLUSTER_PROFILE"  # the default profile of `kubeloop cluster up`, the test kit, the demo
# What a cluster started before profiles existed ran: kube-apiserver's defaults.
_UNRECORDED_PROFILE = "permissive"


def cluster_profile(profile: str | None = None) -> str:
    """``profile``, else ``$KUBELOOP_CLUSTER_PROFILE``, else "hardened"; an unknown name is an error
    naming the known ones."""
    name = (profile or os.environ.get(ENV_PROFILE) or DEFAULT_PROFILE).strip().lower()
    if name not in PROFILES:
        source = "profile" if profile else ENV_PROFILE
        raise ValueError(f"{source}={name!r}: not a cluster profile; use one of {', '.join(PROFILES)}")
    return name


class ClusterError(RuntimeError):
    """The cluster could not be started or reached; the message includes the relevant log tail."""


def parse_feature_gates(text: str | Mapping[str, bool] | None) -> dict[str, bool]:
    """``"A=true,B=false"`` (kube-apiserver's ``--feature-gates`` syntax) or a mapping → ``{name: on}``.

    Checked here, not by the API server, so a typo fails at once with the flag named instead of as a
    crashed kube-apiserver whose reason is in its log.
    """
    if text is None:
        return {}
    if isinstance(text, Mapping):
        pairs = [(str(k), v) for k, v in text.items()]
    else:
        pairs = []
        for part in filter(None, (p.strip() for p in text.split(","))):
            name, sep, value = part.partition("=")
            if not sep or value.strip().lower() not in ("true", "false"):
                raise ValueError(f"--feature-gates: {part!r} is not NAME=true or NAME=false "
                                 "(e.g. ShardedListAndWatch=true)")
            pairs.append((name.strip(), value.strip().lower() == "true"))
    gates: dict[str, bool] = {}
    for name, on in pairs:
        if not name.isidentifier() or not name[:1].isupper() or not isinstance(on, bool):
            raise ValueError(f"--feature-gates: {name!r}={on!r} is not a gate name (CamelCase) with a bool")
        gates[name] = on
    return gates


def format_feature_gates(gates: Mapping[str, bool]) -> str:
    """The ``--feature-gates`` value kube-apiserver takes, sorted for stable command lines."""
    return ",".join(f"{name}={'true' if on else 'false'}" for name, on in sorted(gates.items()))


def _stderr(msg: str) -> None:
    print(f"kubeloop: {msg}", file=sys.stderr, flush=True)


# --- processes ------------------------------------------------------------------------------


def _start_time(pid: int) -> int | None:
    """Kernel start time of ``pid`` (clock ticks since boot); None if gone or a zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat[stat.rindex(")") + 2 :].split()  # skip "pid (comm) ", comm may contain spaces
    return None if fields[0] in ("Z", "X") else int(fields[19])


def _rss_mib(pid: int) -> float | None:
    with contextlib.suppress(OSError, ValueError):
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return None


def _tail(path: Path, lines: int = 20) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return ""


def _free_port(taken: set[int], preferred: int | None = None) -> int:
    """A currently free loopback port; ``preferred`` (the last one used) when still free."""
    candidates = [preferred] if preferred else []
    for port in [*candidates, 0]:
        with socket.socket() as sock:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:
                continue
            chosen: int = sock.getsockname()[1]
            if chosen not in taken:
                return chosen
    return _free_port(taken)


@dataclass
class ComponentStatus:
    name: str
    pid: int | None
    alive: bool
    log: Path
    rss_mib: float | None = None
    log_tail: str = ""  # only filled in for a component that died

    def __str__(self) -> str:
        if self.alive:
            mem = f", {self.rss_mib:.0f} MiB" if self.rss_mib is not None else ""
            return f"{self.name:<24} running (pid {self.pid}{mem})"
        if self.pid is None:
            return f"{self.name:<24} not started"
        tail = "\n".join(f"    | {line}" for line in self.log_tail.splitlines())
        return f"{self.name:<24} DEAD (was pid {self.pid}); end of {self.log}:\n{tail}"


@dataclass
class ClusterStatus:
    name: str
    kubeconfig: Path
    server: str | None
    components: list[ComponentStatus] = field(default_factory=list)

    @property
    def running(self) -> bool:
        return bool(self.components) and all(c.alive for c in self.components)

    def __str__(self) -> str:
        state = "running" if self.running else "not running"
        where = f" at {self.server}" if self.server and self.running else ""
        head = f"cluster {self.name!r}: {state}{where}"
        return "\n".join([head, *(f"  {c}" for c in self.components)])


# --- shared helpers for local and external clusters ----------------------------------------


class _KubectlMixin:
    kubeconfig: Path

    def _kubectl_binary(self) -> str:
        raise NotImplementedError

    @property
    def kubectl_path(self) -> str:
        """The kubectl binary ``kubectl()`` runs."""
        return self._kubectl_binary()

    def kubectl(
        self, *args: str, check: bool = True, input: str | None = None, timeout: float = 120
    ) -> subprocess.CompletedProcess[str]:
        """Run kubectl against this cluster as admin; output is captured as text."""
        argv = [self._kubectl_binary(), "--kubeconfig", str(self.kubeconfig), *args]
        proc = subprocess.run(argv, input=input, capture_output=True, text=True, timeout=timeout)
        if check and proc.returncode != 0:
            raise ClusterError(f"kubectl {' '.join(args)} failed ({proc.returncode}): {proc.stderr.strip()}")
        return proc

    def _server_and_ca(self) -> tuple[str, str]:
        view = json.loads(self.kubectl("config", "view", "--raw", "--minify", "-o", "json").stdout)
        cluster = view["clusters"][0]["cluster"]
        ca = cluster.get("certificate-authority-data")
        if not ca and cluster.get("certificate-authority"):
            ca = base64.b64encode(Path(cluster["certificate-authority"]).read_bytes()).decode()
        return cluster["server"], ca or ""

    def _token(self, namespace: str, name: str, expiration_seconds: int) -> str:
        proc = self.kubectl("create", "token", name, "-n", namespace, f"--duration={expiration_seconds}s")
        return proc.stdout.strip()

    def service_account_kubeconfig(
        self, namespace: str, name: str, path: str | Path, expiration_seconds: int = 3600
    ) -> Path:
        """Write a kubeconfig that authenticates as ServiceAccount ``namespace/name``.

        The token comes from the TokenRequest API, exactly what a pod would get, so RBAC applies.
        """
        token = self._token(namespace, name, expiration_seconds)
        server, ca = self._server_and_ca()
        ident = f"sa-{namespace}-{name}"
        cluster: dict[str, Any] = {"server": server}
        if ca:
            cluster["certificate-authority-data"] = ca
        config = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": ident, "cluster": cluster}],
            "users": [{"name": ident, "user": {"token": token}}],
            "contexts": [
                {"name": ident, "context": {"cluster": ident, "user": ident, "namespace": namespace}}
            ],
            "current-context": ident,
        }
        return _write_secret(Path(path), yaml.safe_dump(config))


def _write_secret(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as fh:
        fh.write(text)
    return path


class ExternalCluster(_KubectlMixin):
    """An already running cluster given by a kubeconfig (e.g. ``KUBELOOP_TEST_KUBECONFIG``)."""

    def __init__(self, kubeconfig: str | Path) -> None:
        self.kubeconfig = Path(kubeconfig)
        self.name = "external"

    def _kubectl_binary(self) -> str:
        # Prefer the kubectl we built (known version) over whatever happens to be on PATH.
        built = versions.Layout.default().kubernetes_dir(versions.kubernetes_version()) / "kubectl"
        found = str(built) if built.exists() else shutil.which("kubectl")
        if not found:
            raise ClusterError("kubectl not found on PATH (run `kubeloop cluster build` to build one)")
        return found


# --- the local cluster ----------------------------------------------------------------------


class LocalCluster(_KubectlMixin):
    """One named local control plane; data (PKI, etcd, logs, kubeconfig) under ``data_dir``."""

    def __init__(
        self,
        name: str = "default",
        data_dir: str | Path | None = None,
        *,
        kubernetes_version: str | None = None,
        nodes: int = DEFAULT_NODES,
        feature_gates: str | Mapping[str, bool] | None = None,
        profile: str | None = None,
        log: Logger = _stderr,
    ) -> None:
        self.name = name
        # Which admission plugins run (PROFILES): "hardened" unless $KUBELOOP_CLUSTER_PROFILE or this says.
        self.profile = cluster_profile(profile)
        self.data_dir = Path(data_dir) if data_dir else versions.Layout.default().cluster_dir(name)
        self.kubernetes_version = versions.kubernetes_version(kubernetes_version)
        # kube-apiserver's --feature-gates (e.g. {"ShardedListAndWatch": True}); empty: its defaults.
        self.feature_gates = parse_feature_gates(feature_gates)
        self.nodes = nodes
        self.log = log
        self._procs: dict[str, subprocess.Popen[bytes]] = {}  # children of *this* Python process

    # paths ----------------------------------------------------------------------------------

    @property
    def kubeconfig(self) -> Path:  # type: ignore[override]
        return self.data_dir / "kubeconfig"

    @property
    def state_file(self) -> Path:
        return self.data_dir / "state.json"

    def log_file(self, component: str) -> Path:
        return self.data_dir / "logs" / f"{component}.log"

    @property
    def pki(self) -> ClusterPKI:
        return ClusterPKI(self.data_dir / "pki")

    @property
    def context(self) -> str:
        return f"kubeloop-{self.name}"

    @property
    def server(self) -> str | None:
        port = self._state().get("ports", {}).get("kube-apiserver")
        return f"https://127.0.0.1:{port}" if port else None

    # lifecycle ------------------------------------------------------------------------------

    def __enter__(self) -> LocalCluster:
        return self.up()

    def __exit__(self, *exc: object) -> None:
        self.down()

    def up(self, *, build: bool = True, timeout: float = 180.0) -> LocalCluster:
        """Start the cluster (building binaries first if needed); a no-op if it already runs."""
        self.data_dir.mkdir(parents=True, exist_ok=True)
        with self._locked():
            if self._healthy():
                self._check_running_gates()
                self._check_running_profile()
                self.log(f"cluster {self.name!r} is already running at {self.server}")
                return self
            self._stop_recorded()  # leftovers of a half-dead cluster
            if build:
                toolchain = ensure_built(self.kubernetes_version, log=self.log)
            else:
                toolchain = self._cached_toolchain()
            started = time.monotonic()
            try:
                self._start_all(toolchain, time.monotonic() + timeout)
            except BaseException:
                self._stop_recorded()
                raise
            self.log(f"cluster {self.name!r} up in {time.monotonic() - started:.1f}s at {self.server}")
        return self

    def down(self, wipe: bool = False) -> None:
        """Stop the processes ``up`` started (by recorded PID only); ``wipe`` deletes all data."""
        if not self.data_dir.exists():
            return
        with self._locked():
            self._stop_recorded()
        if wipe:
            shutil.rmtree(self.data_dir, ignore_errors=True)

    def status(self) -> ClusterStatus:
        state = self._state()
        result = ClusterStatus(self.name, self.kubeconfig, self.server)
        procs = state.get("processes", {})
        for comp in COMPONENTS:
            rec = procs.get(comp)
            pid = rec["pid"] if rec else None
            alive = bool(rec) and _start_time(rec["pid"]) == rec["start"]
            status = ComponentStatus(comp, pid, alive, self.log_file(comp))
            if alive and pid:
                status.rss_mib = _rss_mib(pid)
            elif pid:
                status.log_tail = _tail(self.log_file(comp))
            result.components.append(status)
        return result

    def is_running(self) -> bool:
        return self.status().running

    def restart_apiserver(self, timeout: float = 60.0) -> None:
        """Stops kube-apiserver and starts it again on the same port (fault injection): its watch cache
        starts afresh, so clients resuming from an older resourceVersion get 410 Gone and must relist."""
        with self._locked():
            state = self._state()
            rec = state.get("processes", {}).get("kube-apiserver")
            if rec and _start_time(rec["pid"]) == rec["start"]:
                self._terminate("kube-apiserver", rec["pid"], rec["start"])
            self._procs.pop("kube-apiserver", None)
            ports = state["ports"]
            self.feature_gates = self.feature_gates or dict(state.get("feature_gates") or {})
            self.profile = state.get("profile") or _UNRECORDED_PROFILE
            self._spawn("kube-apiserver", self._cached_toolchain(), self._apiserver_args(self.pki, ports))
            self._wait(time.monotonic() + timeout, "kube-apiserver",
                       lambda: self._api("GET", "/readyz")[0] == 200)

    # starting -------------------------------------------------------------------------------

    def _start_all(self, tc: Toolchain, deadline: float) -> None:
        pki = ensure_pki(self.pki.directory)
        old_ports = self._state().get("ports", {})
        taken: set[int] = set()
        ports: dict[str, int] = {}
        for name in PORTS:  # reuse last ports when free: etcd remembers its peer URL
            ports[name] = _free_port(taken, old_ports.get(name))
            taken.add(ports[name])
        self._save_state({"name": self.name, "kubernetes_version": tc.kubernetes_version,
                          "feature_gates": self.feature_gates, "profile": self.profile,
                          "kubectl": str(tc.kubectl), "ports": ports,
                          "processes": {}})
        self._write_kubeconfigs(pki, ports["kube-apiserver"])

        self._spawn("etcd", tc, self._etcd_args(ports))
        self._wait(deadline, "etcd", lambda: self._http_ok(ports["etcd"], "/health"))
        self._spawn("kube-apiserver", tc, self._apiserver_args(pki, ports))
        self._wait(deadline, "kube-apiserver", lambda: self._api("GET", "/readyz")[0] == 200)
        self._spawn("kube-controller-manager", tc, self._controller_manager_args(pki, ports))
        self._spawn("kube-scheduler", tc, self._scheduler_args(ports))
        kwok_started = time.time()
        self._spawn("kwok", tc, self._kwok_args(tc), env={"HOME": str(self.data_dir / "kwok-home")})
        self._create_nodes()
        self._wait(deadline, f"{self.nodes} Ready nodes", self._nodes_ready)
        # After a restart the nodes are Ready from etcd before this kwok runs them: wait for its heartbeat.
        self._wait(deadline, "kwok's node heartbeats", lambda: self._nodes_renewed_since(kwok_started))
        # The ServiceAccount controller proves the controller-manager works; pods need the SA too.
        self._wait(deadline, "the default ServiceAccount",
                   lambda: self._api("GET", "/api/v1/namespaces/default/serviceaccounts/default")[0] == 200)

    def _spawn(self, comp: str, tc: Toolchain, args: list[str], env: dict[str, str] | None = None) -> None:
        log_path = self.log_file(comp)
        log_path.parent.mkdir(parents=True, exist_ok=True)
        child_env = {k: v for k, v in os.environ.items() if k != "KUBECONFIG"}  # never the user's cluster
        child_env.update(env or {})
        with log_path.open("ab") as log:
            log.write(f"\n=== kubeloop: starting {comp} at {time.ctime()} ===\n".encode())
            log.flush()
            # start_new_session: the component survives `kubeloop cluster up` exiting and a ^C in it.
            proc = subprocess.Popen([str(tc.binary(comp)), *args], stdin=subprocess.DEVNULL, stdout=log,
                                    stderr=subprocess.STDOUT, cwd=self.data_dir, env=child_env,
                                    start_new_session=True)
        self._procs[comp] = proc
        state = self._state()
        state["processes"][comp] = {"pid": proc.pid, "start": _start_time(proc.pid)}
        self._save_state(state)

    def _wait(self, deadline: float, what: str, check: Callable[[], bool]) -> None:
        """Poll ``check`` until true; fail fast with the log tail if a component died meanwhile."""
        while True:
            for comp, proc in self._procs.items():
                if proc.poll() is not None:
                    raise ClusterError(f"{comp} exited with code {proc.returncode} while waiting for {what}; "
                                       f"end of {self.log_file(comp)}:\n{_tail(self.log_file(comp))}")
            with contextlib.suppress(OSError, http.client.HTTPException, ValueError):
                if check():
                    return
            if time.monotonic() > deadline:
                raise ClusterError(f"timed out waiting for {what}; logs are in {self.data_dir / 'logs'}")
            time.sleep(0.2)

    # component flags ------------------------------------------------------------------------

    def _etcd_args(self, ports: dict[str, int]) -> list[str]:
        client, peer = f"http://127.0.0.1:{ports['etcd']}", f"http://127.0.0.1:{ports['etcd-peer']}"
        return ["--name=kubeloop", f"--data-dir={self.data_dir / 'etcd'}",
                f"--listen-client-urls={client}", f"--advertise-client-urls={client}",
                f"--listen-peer-urls={peer}", f"--initial-advertise-peer-urls={peer}",
                f"--initial-cluster=kubeloop={peer}",
                "--unsafe-no-fsync",  # throwaway data: durability is not worth the latency
                "--log-level=warn"]

    def _apiserver_args(self, pki: ClusterPKI, ports: dict[str, int]) -> list[str]:
        return ["--bind-address=127.0.0.1", "--advertise-address=127.0.0.1",
                f"--secure-port={ports['kube-apiserver']}",
                f"--etcd-servers=http://127.0.0.1:{ports['etcd']}",
                # Node: kubelets may only read what their pods need (with NodeRestriction), as kubeadm does.
                f"--authorization-mode={'Node,RBAC' if self.profile == 'hardened' else 'RBAC'}",
                *self._admission_args(),
                f"--client-ca-file={pki.ca_crt}",
                f"--tls-cert-file={pki.crt('apiserver')}", f"--tls-private-key-file={pki.key('apiserver')}",
                f"--service-account-issuer={SA_ISSUER}", f"--api-audiences={SA_ISSUER}",
                f"--service-account-key-file={pki.sa_pub}",
                f"--service-account-signing-key-file={pki.sa_key}",
                "--service-cluster-ip-range=10.0.0.0/24",
                # The apiserver refuses a loopback IP as endpoint of the `kubernetes` Service.
                "--endpoint-reconciler-type=none",
                f"--requestheader-client-ca-file={pki.crt('front-proxy-ca')}",
                f"--requestheader-allowed-names={FRONT_PROXY_CLIENT}",
                "--requestheader-username-headers=X-Remote-User",
                "--requestheader-group-headers=X-Remote-Group",
                "--requestheader-extra-headers-prefix=X-Remote-Extra-",
                f"--proxy-client-cert-file={pki.crt('front-proxy-client')}",
                f"--proxy-client-key-file={pki.key('front-proxy-client')}",
                "--allow-privileged=true", "--profiling=false",
                f"--cert-dir={self.data_dir / 'pki' / 'generated'}",
                *([f"--feature-gates={format_feature_gates(self.feature_gates)}"] if self.feature_gates else [])]

    def _admission_args(self) -> list[str]:
        plugins = PROFILES[self.profile]
        return [f"--enable-admission-plugins={','.join(plugins)}"] if plugins else []

    def _check_running_profile(self) -> None:
        """A cluster running with another admission profile is not reused silently: a test meant for the
        hardened profile would pass on a permissive cluster, and the other way round fail."""
        running = self._state().get("profile") or _UNRECORDED_PROFILE
        if running != self.profile:
            raise ClusterError(
                f"cluster {self.name!r} already runs with the {running!r} profile, not {self.profile!r}: stop it "
                f"first (kubeloop cluster down --name {self.name}), use another --name, or ask for "
                f"--profile {running} ({ENV_PROFILE}={running})")

    def _check_running_gates(self) -> None:
        """An explicit ``feature_gates`` that the running cluster was not started with is an error, not a
        silent no-op: the caller would test a feature that is off."""
        running = self._state().get("feature_gates") or {}
        if self.feature_gates and self.feature_gates != running:
            raise ClusterError(
                f"cluster {self.name!r} already runs with feature gates {format_feature_gates(running) or 'none'}, "
                f"not {format_feature_gates(self.feature_gates)}: stop it first (kubeloop cluster down "
                f"--name {self.name}) or use another --name")

    def _controller_manager_args(self, pki: ClusterPKI, ports: dict[str, int]) -> list[str]:
        kc = self.data_dir / "kubeconfigs" / "controller-manager.kubeconfig"
        return [f"--kubeconfig={kc}", f"--authentication-kubeconfig={kc}", f"--authorization-kubeconfig={kc}",
                "--use-service-account-credentials=true",
                f"--root-ca-file={pki.ca_crt}", f"--service-account-private-key-file={pki.sa_key}",
                f"--cluster-signing-cert-file={pki.ca_crt}", f"--cluster-signing-key-file={pki.key('ca')}",
                f"--cluster-name={self.context}",
                "--controllers=*,bootstrapsigner,tokencleaner",
                "--leader-elect=false", "--bind-address=127.0.0.1",
                f"--secure-port={ports['kube-controller-manager']}",
                f"--cert-dir={self.data_dir / 'pki' / 'generated'}"]

    def _scheduler_args(self, ports: dict[str, int]) -> list[str]:
        kc = self.data_dir / "kubeconfigs" / "scheduler.kubeconfig"
        return [f"--kubeconfig={kc}", f"--authentication-kubeconfig={kc}", f"--authorization-kubeconfig={kc}",
                "--leader-elect=false", "--bind-address=127.0.0.1",
                f"--secure-port={ports['kube-scheduler']}",
                f"--cert-dir={self.data_dir / 'pki' / 'generated'}"]

    def _kwok_args(self, tc: Toolchain) -> list[str]:
        key, value = KWOK_ANNOTATION
        return [f"--kubeconfig={self.data_dir / 'kubeconfigs' / 'kwok.kubeconfig'}",
                f"--config={tc.kwok_stages}",
                "--manage-all-nodes=false", f"--manage-nodes-with-annotation-selector={key}={value}",
                "--node-ip=127.0.0.1",
                "--cidr=10.244.0.0/16",  # pod IPs; must not overlap the service range 10.0.0.0/24
                "--node-lease-duration-seconds=40"]

    # kubeconfigs ------------------------------------------------------------------------------

    def _write_kubeconfigs(self, pki: ClusterPKI, port: int) -> None:
        server = f"https://127.0.0.1:{port}"

        def b64(p: Path) -> str:
            return base64.b64encode(p.read_bytes()).decode()

        # The admin kubeconfig is self-contained (embedded data) so it can be copied anywhere.
        admin = {"client-certificate-data": b64(pki.crt("admin")), "client-key-data": b64(pki.key("admin"))}
        _write_secret(self.kubeconfig, yaml.safe_dump(
            _kubeconfig(self.context, server, {"certificate-authority-data": b64(pki.ca_crt)}, admin)))
        for stem, user in (("controller-manager", "controller-manager"), ("scheduler", "scheduler"),
                           ("kwok", "admin")):
            creds = {"client-certificate": str(pki.crt(user)), "client-key": str(pki.key(user))}
            ca = {"certificate-authority": str(pki.ca_crt)}
            text = yaml.safe_dump(_kubeconfig(stem, server, ca, creds))
            _write_secret(self.data_dir / "kubeconfigs" / f"{stem}.kubeconfig", text)

    # nodes ------------------------------------------------------------------------------------

    def _create_nodes(self) -> None:
        for i in range(self.nodes):
            status, body = self._api("POST", "/api/v1/nodes", _fake_node(f"kwok-node-{i}"))
            if status not in (201, 409):  # 409: it survived a restart in etcd
                raise ClusterError(f"cannot create node kwok-node-{i}: {status} {body}")

    def _nodes_ready(self) -> bool:
        status, body = self._api("GET", "/api/v1/nodes")
        ready = [
            n for n in body.get("items", [])
            if n["metadata"].get("annotations", {}).get(KWOK_ANNOTATION[0]) == KWOK_ANNOTATION[1]
            and any(c["type"] == "Ready" and c["status"] == "True"
                    for c in (n.get("status") or {}).get("conditions") or [])
        ]
        return status == 200 and len(ready) >= self.nodes

    def _nodes_renewed_since(self, started: float) -> bool:
        status, body = self._api("GET", "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases")
        renewed = [
            lease for lease in body.get("items", []) if lease["metadata"]["name"].startswith("kwok-node-")
            and _epoch((lease.get("spec") or {}).get("renewTime")) >= started - 1
        ]
        return status == 200 and len(renewed) >= self.nodes

    # raw API access (admin) -------------------------------------------------------------------

    def _ssl_context(self) -> ssl.SSLContext:
        ctx = ssl.create_default_context(cafile=str(self.pki.ca_crt))
        ctx.load_cert_chain(str(self.pki.crt("admin")), str(self.pki.key("admin")))
        return ctx

    def _api(self, method: str, path: str, body: dict[str, Any] | None = None) -> tuple[int, Any]:
        port = self._state()["ports"]["kube-apiserver"]
        conn = http.client.HTTPSConnection("127.0.0.1", port, context=self._ssl_context(), timeout=10)
        try:
            data = json.dumps(body).encode() if body is not None else None
            conn.request(method, path, body=data, headers={"Content-Type": "application/json"})
            resp = conn.getresponse()
            raw = resp.read()
        finally:
            conn.close()
        try:
            return resp.status, json.loads(raw) if raw else {}
        except ValueError:
            return resp.status, {"raw": raw.decode(errors="replace")}

    def _http_ok(self, port: int, path: str) -> bool:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
        try:
            conn.request("GET", path)
            return conn.getresponse().status == 200
        finally:
            conn.close()

    def _token(self, namespace: str, name: str, expiration_seconds: int) -> str:
        path = f"/api/v1/namespaces/{namespace}/serviceaccounts/{name}/token"
        body = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
                "spec": {"audiences": [SA_ISSUER], "expirationSeconds": expiration_seconds}}
        status, resp = self._api("POST", path, body)
        if status != 201:
            reason = resp.get("message", resp)
            raise ClusterError(f"TokenRequest for {namespace}/{name} failed: {status} {reason}")
        return str(resp["status"]["token"])

    def _server_and_ca(self) -> tuple[str, str]:
        return str(self.server), base64.b64encode(self.pki.ca_crt.read_bytes()).decode()

    def _kubectl_binary(self) -> str:
        recorded = self._state().get("kubectl")
        if recorded and Path(recorded).exists():
            return str(recorded)
        return str(self._cached_toolchain().kubectl)

    # state & process bookkeeping -------------------------------------------------------------

    def _state(self) -> dict[str, Any]:
        try:
            state = json.loads(self.state_file.read_text())
        except (OSError, ValueError):
            return {"processes": {}}
        state.setdefault("processes", {})
        return state  # type: ignore[no-any-return]

    def _save_state(self, state: dict[str, Any]) -> None:
        tmp = self.state_file.with_suffix(".tmp")
        tmp.write_text(json.dumps(state, indent=2) + "\n")
        tmp.replace(self.state_file)  # atomic: `status` in another process never sees half a file

    def _healthy(self) -> bool:
        if not self.status().running:
            return False
        try:
            return self._api("GET", "/readyz")[0] == 200
        except (OSError, http.client.HTTPException, KeyError):
            return False

    def _stop_recorded(self) -> None:
        """SIGTERM (then SIGKILL) every recorded process that is still the one we started."""
        state = self._state()
        procs: dict[str, dict[str, int]] = state.get("processes", {})
        for comp in reversed(COMPONENTS):  # dependents first, etcd last
            rec = procs.get(comp)
            if rec and _start_time(rec["pid"]) == rec["start"]:
                self._terminate(comp, rec["pid"], rec["start"])
            self._procs.pop(comp, None)
        if procs:
            state["processes"] = {}
            self._save_state(state)

    def _terminate(self, comp: str, pid: int, start: int, grace: float = 10.0) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline:
            if comp in self._procs:
                self._procs[comp].poll()  # reap our own child so it does not linger as a zombie
            if _start_time(pid) != start:
                return
            time.sleep(0.05)
        self.log(f"{comp} (pid {pid}) ignored SIGTERM for {grace:.0f}s; sending SIGKILL")
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
        if comp in self._procs:
            self._procs[comp].wait(5)

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        """Serialise up/down of the same cluster across processes (e.g. two terminals)."""
        with (self.data_dir / ".lock").open("w") as fh:
            fcntl.flock(fh, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(fh, fcntl.LOCK_UN)

    def _cached_toolchain(self) -> Toolchain:
        toolchain = Builder(log=self.log).cached(self.kubernetes_version)
        if toolchain is None:
            raise ClusterError(f"Kubernetes {self.kubernetes_version} is not built yet; "
                               "run `kubeloop cluster build` first")
        return toolchain


def _kubeconfig(name: str, server: str, ca: dict[str, str], user: dict[str, str]) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": name, "cluster": {"server": server, **ca}}],
        "users": [{"name": name, "user": user}],
        "contexts": [{"name": name, "context": {"cluster": name, "user": name}}],
        "current-context": name,
    }


def _epoch(timestamp: str | None) -> float:
    """An RFC 3339 time (microseconds, ``Z``) as seconds since the epoch; 0 when absent."""
    if not timestamp:
        return 0.0
    return dt.datetime.fromisoformat(timestamp.replace("Z", "+00:00")).timestamp()


def _fake_node(name: str) -> dict[str, Any]:
    """A Node for kwok to manage: the annotation selects it, the capacity lets pods schedule."""
    capacity = {"cpu": "32", "memory": "256Gi", "pods": "110"}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "annotations": {KWOK_ANNOTATION[0]: KWOK_ANNOTATION[1], "node.alpha.kubernetes.io/ttl": "0"},
            "labels": {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux",
                       "kubernetes.io/arch": "amd64", "type": "kwok"},
        },
        "spec": {},
        "status": {"capacity": capacity, "allocatable": capacity},
    }
