"""The pieces every scenario uses: the cluster, an admin client, operators run as real processes
(``kubeloop run``) under their generated RBAC, namespaces, and retrying writes.

Everything talks to 127.0.0.1 only: the harness's own LocalCluster (``faults``) or the cluster a test
session hands it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import secrets
import signal
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlsplit

import aiohttp
import yaml

from harness.common.processes import ChildProcess, free_port, kubeloop_run
from harness.common.provenance import REPO
from kubeloop.builder import Operator
from kubeloop.client import AlreadyExists, ApiError, Client, Conflict, NotFound
from kubeloop.client.wait import wait_for, wait_for_deletion
from kubeloop.resources import render_rbac
from kubeloop.testing.operator import install_crds

log = logging.getLogger("faults")
T = TypeVar("T")
_TRANSIENT = (aiohttp.ClientError, OSError, asyncio.TimeoutError)


def now() -> float:
    return time.monotonic()


def check_loopback(server: str) -> None:
    host = urlsplit(server).hostname
    if host not in ("127.0.0.1", "localhost", "::1"):
        raise SystemExit(f"faults only target a control plane on 127.0.0.1; {server} is not one")


async def retrying(call: Callable[[], Awaitable[T]], *, timeout: float = 90.0, what: str = "") -> T:
    """Retries a call through API-server restarts, throttling and dropped connections (bounded)."""
    deadline = now() + timeout
    delay = 0.2
    while True:
        try:
            return await call()
        except ApiError as exc:
            if exc.status not in (429, 500, 502, 503, 504) or now() > deadline:
                raise
        except _TRANSIENT:
            if now() > deadline:
                raise
        await asyncio.sleep(delay)
        delay = min(delay * 2, 2.0)
        if what:
            log.debug("retrying %s", what)


@dataclass
class Env:
    """A cluster to break. ``cluster`` is a LocalCluster (own, destructive faults allowed) or the test
    session's cluster (``destructive=False``: nothing that restarts or compacts it)."""

    cluster: Any
    admin: Client
    log_dir: Path
    destructive: bool = True
    run_id: str = field(default_factory=lambda: secrets.token_hex(2))

    @classmethod
    async def connect(cls, cluster: Any, log_dir: Path, destructive: bool) -> Env:
        admin = await Client.from_kubeconfig(str(cluster.kubeconfig), qps=0, field_manager="faults")
        check_loopback(admin.config.server)
        log_dir.mkdir(parents=True, exist_ok=True)
        return cls(cluster, admin, log_dir, destructive)

    async def close(self) -> None:
        await self.admin.close()

    @property
    def server_port(self) -> int:
        port = urlsplit(self.admin.config.server).port
        assert port is not None
        return port

    def name(self, stem: str) -> str:
        return f"{stem}-{self.run_id}-{secrets.token_hex(2)}"

    # --- namespaces --------------------------------------------------------------------------------

    async def namespace(self, name: str, labels: dict[str, str] | None = None) -> str:
        body = {"apiVersion": "v1", "kind": "Namespace",
                "metadata": {"name": name, "labels": {"faults.kubeloop.dev/run": "true", **(labels or {})}}}
        with contextlib.suppress(AlreadyExists):
            await retrying(lambda: self.admin.create(body))
        # kube-controller-manager makes it; after API server restarts its watches may still be backing off.
        await wait_for(self.admin, "serviceaccounts", "default", name, timeout=180,
                       description="the namespace's default ServiceAccount")
        return name

    async def delete_namespaces(self, names: Sequence[str]) -> None:
        for name in names:
            with contextlib.suppress(NotFound, ApiError, *_TRANSIENT):
                await self.admin.delete("namespaces", name)

    # --- operators ---------------------------------------------------------------------------------

    async def install(self, operator: Operator, namespace: str, *, rbac_name: str | None = None,
                      kubeconfig: Path | None = None) -> OperatorSetup:
        """CRDs, RBAC (ServiceAccount ``faults-<operator>`` in ``namespace``) and a kubeconfig with its
        token; returns what ``start`` needs."""
        new_crds = await self.missing_crds(operator)
        await retrying(lambda: install_crds(self.admin, operator))
        name = rbac_name or f"faults-{operator.name}"
        rbac = render_rbac(name, namespace, operator.permissions(), events="cluster", leader_election=True)
        for obj in rbac:
            await retrying(lambda o=obj: self.admin.apply(o, field_manager="faults", force=True))
        path = kubeconfig or self.log_dir / f"{name}-{namespace}.kubeconfig"
        await asyncio.to_thread(self.cluster.service_account_kubeconfig, namespace, name, path, 6 * 3600)
        return OperatorSetup(operator, name, namespace, path, rbac, new_crds)

    async def missing_crds(self, operator: Operator) -> list[str]:
        """The operator's CRDs that are not installed yet (so that cleanup removes only what it added)."""
        from kubeloop.resources import crds_for

        out = []
        for crd in crds_for(operator.custom_resources()):
            try:
                await self.admin.get("customresourcedefinitions", crd["metadata"]["name"])
            except NotFound:
                out.append(crd["metadata"]["name"])
        return out

    async def remove_crds(self, names: Sequence[str]) -> None:
        """Deletes CRDs the harness added to a cluster it does not own (waits until they are gone)."""
        if self.destructive:
            return  # the harness's own cluster is wiped anyway
        for name in names:
            with contextlib.suppress(NotFound, ApiError, AssertionError, *_TRANSIENT):
                await self.admin.delete("customresourcedefinitions", name)
                await wait_for_deletion(self.admin, "customresourcedefinitions", name, timeout=60)

    async def remove_setup(self, setup: OperatorSetup) -> None:
        """Takes away what ``install`` gave an operator: its namespace and its cluster-wide RBAC."""
        await self.delete_namespaces([setup.namespace])
        for obj in setup.rbac:
            if obj["kind"] in ("ClusterRole", "ClusterRoleBinding"):
                with contextlib.suppress(Exception):
                    await self.admin.delete(f"{obj['kind'].lower()}s.rbac.authorization.k8s.io",
                                            obj["metadata"]["name"])

    def process(self, setup: OperatorSetup, target: str, tag: str, *, args: Sequence[str] = (),
                env: dict[str, str] | None = None, server: str | None = None) -> OperatorProcess:
        kubeconfig = setup.kubeconfig
        if server is not None:  # through the fault proxy
            config = yaml.safe_load(kubeconfig.read_text())
            for cluster in config["clusters"]:
                cluster["cluster"]["server"] = server
            kubeconfig = kubeconfig.with_name(f"{kubeconfig.stem}-{tag}.kubeconfig")
            kubeconfig.write_text(yaml.safe_dump(config))
            kubeconfig.chmod(0o600)
        return OperatorProcess(target, kubeconfig, self.log_dir / f"{tag}.log", tag,
                               ["--leader-election-namespace", setup.namespace, *args], env or {})


@dataclass
class OperatorSetup:
    operator: Operator
    name: str  # ServiceAccount / ClusterRole
    namespace: str
    kubeconfig: Path
    rbac: list[dict[str, Any]]
    new_crds: list[str] = field(default_factory=list)  # CRDs that install() added

    @property
    def cluster_role(self) -> dict[str, Any]:
        return next(o for o in self.rbac if o["kind"] == "ClusterRole")


class OperatorProcess(ChildProcess):
    """``kubeloop run TARGET`` as a child process: started, killed, restarted, scraped. Exits that the
    harness did not cause count as crashes."""

    def __init__(self, target: str, kubeconfig: Path, log_path: Path, tag: str, args: Sequence[str],
                 env: dict[str, str]) -> None:
        super().__init__(log_path)
        self.target, self.kubeconfig, self.tag = target, kubeconfig, tag
        self.args, self.env = list(args), env
        self.starts = 0
        self.kills = 0
        self.crashes = 0
        self.exit_codes: list[int] = []
        self.metrics_port = 0
        self.probe_port = 0
        self._expected_exit = False
        self._monitor: asyncio.Task[None] | None = None

    async def start(self) -> None:
        assert not self.running, f"{self.tag} already runs"
        self.metrics_port, self.probe_port = free_port(), free_port()
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
               "FAULTS_REPLICA": self.tag, "POD_NAME": self.tag, **self.env}
        env.pop("KUBECONFIG", None)
        argv = kubeloop_run(self.target, self.kubeconfig, *self.args, metrics_port=self.metrics_port,
                            probe_port=self.probe_port)
        header = f"\n=== faults: start #{self.starts + 1} at {time.ctime()}: {' '.join(argv[2:])}\n"
        await self.spawn(argv, env, header=header, cwd=REPO)
        assert self.proc is not None
        self.starts += 1
        self._expected_exit = False
        self._monitor = asyncio.create_task(self._watch(self.proc))

    async def _watch(self, proc: asyncio.subprocess.Process) -> None:
        code = await proc.wait()
        self.exit_codes.append(code)
        if not self._expected_exit:
            self.crashes += 1
            log.warning("%s exited by itself with code %s (see %s)", self.tag, code, self.log_path)

    async def wait_ready(self, timeout: float = 90.0) -> float:
        """Until /readyz answers 200 (caches synced); returns the seconds it took."""
        started = now()
        async with aiohttp.ClientSession() as http:
            while True:
                if not self.running:
                    raise RuntimeError(f"{self.tag} exited ({self.exit_codes}) before it was ready; "
                                       f"see {self.log_path}")
                with contextlib.suppress(aiohttp.ClientError, OSError, asyncio.TimeoutError):
                    async with http.get(f"http://127.0.0.1:{self.probe_port}/readyz",
                                        timeout=aiohttp.ClientTimeout(total=2)) as resp:
                        if resp.status == 200:
                            return now() - started
                if now() - started > timeout:
                    raise TimeoutError(f"{self.tag} not ready after {timeout:.0f}s; see {self.log_path}")
                await asyncio.sleep(0.05)

    async def kill(self, sig: int = signal.SIGKILL) -> None:
        if not self.running:
            return
        assert self.proc is not None
        self._expected_exit = True
        self.send(sig)
        if sig == signal.SIGKILL:
            self.kills += 1
        await asyncio.wait_for(self.proc.wait(), 60)
        if self._monitor:
            await self._monitor

    async def stop(self, grace: float = 20.0) -> None:
        """SIGTERM, then SIGKILL after ``grace`` seconds."""
        if not self.running:
            return
        self._expected_exit = True
        await self.terminate(grace)
        if self._monitor:
            await self._monitor

    async def restart(self) -> None:
        await self.kill()
        await self.start()

    async def metrics(self) -> str:
        if not self.running:
            return ""
        try:
            async with aiohttp.ClientSession() as http, http.get(
                    f"http://127.0.0.1:{self.metrics_port}/metrics", timeout=aiohttp.ClientTimeout(total=5)) as resp:
                return await resp.text()
        except (TimeoutError, aiohttp.ClientError, OSError):
            return ""

    def log_count(self, needle: str) -> int:
        return self.log_text().count(needle)

    def log_lines(self, needle: str, limit: int = 3, since: int = 0) -> list[str]:
        """The first ``limit`` lines holding ``needle``, from character ``since`` of the log on."""
        return [line.strip() for line in self.log_text()[since:].splitlines() if needle in line][:limit]

    def log_size(self) -> int:
        return len(self.log_text())


class MetricsTotals:
    """Counters summed over every run of a process (a restart starts them from zero)."""

    def __init__(self) -> None:
        self.totals: dict[str, float] = {}
        self._last: dict[str, float] = {}

    def update(self, key: str, value: float) -> None:
        last = self._last.get(key, 0.0)
        if value < last:  # the process restarted: its counter began again
            last = 0.0
        self.totals[key] = self.totals.get(key, 0.0) + value - last
        self._last[key] = value


def conflict_free(exc: BaseException) -> bool:
    return isinstance(exc, Conflict | NotFound)
