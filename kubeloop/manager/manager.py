"""The manager runs controllers on a shared cache, under leader election, with metrics and probes.

Embeddable: ``await manager.run()`` inside any asyncio application; ``manager.stop()`` ends it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import sys
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from kubeloop import clock
from kubeloop.cache import Cache
from kubeloop.client import Client
from kubeloop.client.transport import WATCH_INACTIVITY_TIMEOUT
from kubeloop.controller import DEFAULT_CONCURRENCY, Controller, ControllerSpec
from kubeloop.controller.gate import Fenced
from kubeloop.helpers.events import EventRecorder
from kubeloop.lease import LEASE_DURATION, RENEW_DEADLINE, RETRY_PERIOD
from kubeloop.manager.fence import FencedClient
from kubeloop.manager.http import HttpServer
from kubeloop.manager.leader import LeaderElector, default_identity
from kubeloop.metrics.loop import LoopMonitor
from kubeloop.reconcile.context import close_process_pool
from kubeloop.sharding.membership import Timings
from kubeloop.sharding.runtime import ShardMember
from kubeloop.webhooks.runtime import WebhookOptions, WebhookRuntime

log = logging.getLogger("kubeloop.manager")


class SpecSource(Protocol):
    """What ``Manager.add_operator`` takes: controller specs and startup hooks. ``kubeloop.Operator`` is
    one; the manager sits below it and does not import it. A source may also have ``hooks`` (webhook
    registrations, ``kubeloop.webhooks.hooks.Hooks``): the manager then serves them (see ``run``); and
    ``build_deps(manager)``, awaited once its controllers' informers exist and before the caches start:
    what it returns is their contexts' ``deps``."""

    @property
    def startup(self) -> Sequence[Callable[..., Any]]: ...

    def specs(self, concurrency: int = DEFAULT_CONCURRENCY) -> list[ControllerSpec]: ...


class LeadershipLost(RuntimeError):
    """The lease was lost: stop acting at once (like controller-runtime, the process should exit)."""


@dataclass
class ManagerOptions:
    """How a ``Manager`` runs: which namespaces it watches (None: all), leader election (off unless
    ``leader_elect``; the Lease ``leader_election_id`` in ``leader_election_namespace``, with client-go's
    durations), the metrics and health probe addresses, how long a graceful shutdown and the initial
    cache sync may take, and the cache's memory settings. ``kubeloop run`` fills it from its flags.
    """

    namespaces: list[str] | None = None  # None = all namespaces
    leader_elect: bool = False
    leader_election_id: str = "kubeloop"
    leader_election_namespace: str | None = None
    identity: str = field(default_factory=default_identity)
    lease_duration: float = LEASE_DURATION
    renew_deadline: float = RENEW_DEADLINE
    retry_period: float = RETRY_PERIOD
    metrics_bind_address: str = ":8080"
    health_probe_bind_address: str = ":8081"
    graceful_shutdown_timeout: float = 30.0
    sync_timeout: float = 120.0
    freeze_gc: bool = True
    strip_managed_fields: bool = True  # cached objects without metadata.managedFields (see Cache)
    # Seconds without a byte on a watch (bookmarks included) before it counts as dead and reconnects.
    watch_inactivity_timeout: float = WATCH_INACTIVITY_TIMEOUT
    # Where an operator's webhooks listen and how the API server reaches them (unused without webhooks).
    webhook: WebhookOptions = field(default_factory=WebhookOptions)
    # Scale-out (docs/SHARDING.md): every replica acts on its own share of the keys, found through one
    # Lease per replica in the leader election namespace with the durations above. Excludes leader_elect.
    shards: bool = False
    shard_handoff_timeout: float | None = None  # seconds a released slot's reconciles get; None: derived
    # Event-loop lag (kubeloop/metrics/loop.py): a WARNING naming the reconcile that held the loop this
    # many seconds (0: no monitor); /healthz fails while the loop has been held loop_unhealthy_after
    # seconds (0: never), so a wedged process is restarted but a long computation is not taken for one.
    loop_lag_warning: float = 1.0
    loop_unhealthy_after: float = 120.0
    # While the manager runs, the seconds a thread may keep the GIL while another waits for it
    # (sys.setswitchinterval; Python's default is 5 ms). The webhook server and the probes answer from
    # threads of their own while a reconcile computes on the loop, and each of their wake-ups waits up to
    # this long: 1 ms cut a threaded webhook's median under an on-loop computation from 62 to 25 ms
    # (tests/unit/test_webhooks_threaded.py, a loaded 2-core machine). Without a waiting thread it costs
    # nothing. None: leave the process's setting.
    switch_interval: float | None = 0.001

    def __post_init__(self) -> None:
        if self.loop_lag_warning < 0 or self.loop_unhealthy_after < 0:
            raise ValueError("loop_lag_warning and loop_unhealthy_after are seconds >= 0 (0 turns them off)")
        if self.switch_interval is not None and not 0 < self.switch_interval <= 1:
            raise ValueError(f"switch_interval {self.switch_interval} must be seconds in (0, 1], or None")
        check_one_role(self.leader_elect, self.shards)


def check_one_role(leader_elect: bool, shards: bool) -> None:
    """Leader election (one replica acts) and sharding (every replica acts on its share) exclude each
    other: raises ValueError for both. ``ManagerOptions`` and ``kubeloop run``'s options check with it."""
    if leader_elect and shards:
        raise ValueError("--leader-elect and --shards auto are exclusive: one replica acting (--leader-elect) "
                         "or every replica acting on its share (--shards auto); drop one of them")


class Manager:
    """Runs controllers on one shared cache, under leader election when enabled, serving metrics
    (``/metrics``) and health probes (``/healthz``, ``/readyz``). ``await manager.run()`` runs it inside
    any asyncio program; ``manager.stop()`` ends it gracefully.
    """

    def __init__(self, client: Client, options: ManagerOptions | None = None, name: str = "kubeloop") -> None:
        self.client = client
        self.options = options or ManagerOptions()
        self.name = name
        self.cache = Cache(client, self.options.namespaces, freeze_gc=self.options.freeze_gc,
                           inactivity_timeout=self.options.watch_inactivity_timeout,
                           strip_managed_fields=self.options.strip_managed_fields)
        # What the controllers (and their Events) write through: fenced when another replica may take over.
        fenced = self.options.leader_elect or self.options.shards
        self.writer: Client = FencedClient(client, self._fence) if fenced else client  # type: ignore[assignment]
        self.events = EventRecorder(self.writer, name)
        self.specs: list[ControllerSpec] = []
        self.controllers: list[Controller] = []  # built from ``specs`` by ``run``, after the startup hooks
        self._startup: list[Callable[[Manager], Awaitable[object]]] = []
        # Each added operator's deps factory and the names of its controllers (their ctx.deps).
        self._deps: list[tuple[Callable[[Manager], Awaitable[Any]], list[str]]] = []
        self.elector: LeaderElector | None = None
        self.shard: ShardMember | None = None  # with options.shards, made by run
        self.webhooks: WebhookRuntime | None = None  # set by add_operator for an operator with webhooks
        warn = self.options.loop_lag_warning
        self.loop_monitor = LoopMonitor(interval=min(0.25, warn / 4), warn_after=warn) if warn else None
        self.http = HttpServer(self.options.metrics_bind_address, self.options.health_probe_bind_address,
                               ready=self.ready, healthy=self.healthy)
        self._stop = asyncio.Event()
        self._stop_requested: float | None = None  # monotonic time of stop(): the webhooks' drain counts from it
        self.started = asyncio.Event()  # set once controllers run (i.e. we lead)

    def add_operator(self, operator: SpecSource, concurrency: int = DEFAULT_CONCURRENCY,
                     resync: float | None = None) -> None:
        """Adds an operator's controllers (its ``specs()`` with its settings as they are now, ``resync``
        overriding theirs when given); its startup hooks run at the start of ``run``."""
        self._startup.extend(operator.startup)
        self._explain_forbidden(operator)
        hooks = getattr(operator, "hooks", None)  # webhook registrations (kubeloop.webhooks.hooks.Hooks)
        if hooks:
            if self.webhooks is not None:
                raise ValueError("a manager serves one operator's webhooks; run the other in its own manager")
            self.webhooks = WebhookRuntime(self.name, hooks, self.options.webhook)
        names = [self.add(replace(spec, resync=resync) if resync else spec).name
                 for spec in operator.specs(concurrency)]
        build_deps = getattr(operator, "build_deps", None)
        if build_deps is not None:
            self._deps.append((build_deps, names))

    def _explain_forbidden(self, operator: SpecSource) -> None:
        """Lets a 403 say whether the operator's generated RBAC has the rule it lacked."""
        permissions = getattr(operator, "permissions", None)
        if permissions is None or self.client.generated_rbac is not None:
            return
        from kubeloop.resources.rbac import generated_grants

        namespace = self.options.leader_election_namespace or self.options.webhook.namespace
        try:
            own = getattr(operator, "namespaced_permissions", list)
            self.client.generated_rbac = generated_grants(permissions(), own(),
                                                          namespace, shards=self.options.shards)
        except Exception as exc:  # an operator whose permissions need a server (strings not built in)
            log.debug("no generated RBAC to compare 403s with: %s", exc)

    def add(self, spec: ControllerSpec) -> ControllerSpec:
        """Adds one controller, built and started by ``run``; returns its spec."""
        if any(s.name == spec.name for s in self.specs):
            raise ValueError(f"two controllers named {spec.name!r}: give one a name=...")
        self.specs.append(spec)
        return spec

    def ready(self) -> bool:
        """``/readyz``: caches synced and, with webhooks, their server listening with its certificate
        and its ``caBundle`` written (every replica serves webhooks, leader or not). False from the
        moment a stop is asked: the Service stops sending reviews here while the server still answers."""
        if self._stop.is_set():
            return False
        return self.cache.synced() and (self.webhooks is None or self.webhooks.ready)

    def healthy(self) -> bool:
        """``/healthz`` (answered from the HTTP thread): false only while the event loop has been held
        for ``loop_unhealthy_after`` seconds, i.e. nothing of the operator runs."""
        limit = self.options.loop_unhealthy_after
        return self.loop_monitor is None or not limit or self.loop_monitor.blocked_for() < limit

    async def _fence(self) -> None:
        """Before each write of a controller: the lease (or the shard member's) must be current, see
        kubeloop/manager/fence.py."""
        if self.elector is not None:
            await self.elector.confirm()
        elif self.shard is not None and not self.shard.member.active(clock.monotonic()):
            raise Fenced("this replica's shard Lease was not renewed within the renew deadline: it holds "
                         "no slot until it renews; the write was not sent")
        elif self.elector is None and self.shard is None:
            raise Fenced("no write before this replica leads")

    def stop(self) -> None:
        """Asks ``run`` to stop: controllers finish their current reconciles (up to the graceful
        shutdown timeout), then the cache and HTTP servers stop and the Lease is released.
        """
        if self._stop_requested is None:
            self._stop_requested = clock.monotonic()
        self._stop.set()

    async def _drain_webhooks(self) -> None:
        """Keeps the webhook server answering until ``webhook.drain`` seconds after the stop was asked (or
        now, on an error): a replica leaving the Service's endpoints is still called for a moment (the API
        server's resolver and kube-proxy learn of it late), and a conversion it refused would be a failed
        read of the kind. Shutting the controllers down counts towards it."""
        drain = self.options.webhook.drain
        since = self._stop_requested if self._stop_requested is not None else clock.monotonic()
        left = since + drain - clock.monotonic()
        if left > 0:
            log.info("webhook server answers %.1f s more while this replica leaves the Service", left)
            await asyncio.sleep(left)

    async def run(self, install_signal_handlers: bool = False) -> None:
        """Runs until ``stop()`` (or SIGTERM/SIGINT when installed), or raises ``LeadershipLost``. Cancelled
        (``task.cancel()``), it cancels and awaits its reconciles, workers and daemons, then releases the
        Lease and stops the cache and servers, as a stop with no grace period, before it ends."""
        if install_signal_handlers:
            loop = asyncio.get_running_loop()
            for sig in (signal.SIGTERM, signal.SIGINT):
                loop.add_signal_handler(sig, self.stop)
        for hook in self._startup:
            await hook(self)
        await self.http.start()
        if self.loop_monitor is not None:
            self.loop_monitor.start()
        switch_interval = sys.getswitchinterval()  # given back when the manager stops
        if self.options.switch_interval is not None:
            sys.setswitchinterval(min(switch_interval, self.options.switch_interval))
        renewing: asyncio.Task[None] | None = None
        stop_wait: asyncio.Task[bool] | None = None
        try:
            self.controllers = [await Controller.build(spec, self.writer, self.cache, self.events)
                                for spec in self.specs]
            await self._build_deps()  # before the webhooks too: their handlers may read operator.deps
            if self.webhooks is not None:  # before the cache: listing a converted CRD needs its webhook
                await self.webhooks.start(self.client)
            if self.options.shards:
                self.shard = self._shard_member()
                await self.shard.choose_mode()  # before the cache lists: it may list by shard
            self.cache.start()
            if not await self._until_stopped(self.cache.wait_synced(self.options.sync_timeout)):
                return
            log.info("caches synced (%d informers, %d objects)", len(self.cache.informers),
                     sum(len(i.store) for i in self.cache.informers))
            if self.options.leader_elect:
                self.elector = LeaderElector(
                    self.client, self.options.leader_election_id,
                    self.options.leader_election_namespace or self.client.default_namespace,
                    self.options.identity, self.options.lease_duration, self.options.renew_deadline,
                    self.options.retry_period)
                if not await self._until_stopped(self.elector.acquire()):
                    return
                renewing = asyncio.create_task(self.elector.renew_until_lost(), name="lease renewal")
            if self.shard is not None:
                renewing = asyncio.create_task(self.shard.run(), name="shard membership")
            for controller in self.controllers:
                controller.start()
            self.started.set()
            stop_wait = asyncio.create_task(self._stop.wait())
            waits = {stop_wait} | ({renewing} if renewing else set())
            await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
            if renewing is not None and renewing.done():
                await self._shutdown_controllers(0)
                if self.shard is not None:  # a bug in the membership loop: its traceback, then exit
                    renewing.result()
                raise LeadershipLost(f"lost lease {self.options.leader_election_id}")
            await self._shutdown_controllers(self.options.graceful_shutdown_timeout)
        finally:
            # Cancelled from outside (``task.cancel()``) or failed: no worker, housekeeping or daemon of
            # this run outlives it (after a graceful stop there is nothing left to stop).
            await self._shutdown_controllers(0)
            await self.events.close()  # the reconciles' last Events, while this replica still leads
            if stop_wait is not None:
                stop_wait.cancel()
            if renewing is not None:
                renewing.cancel()
            if self.shard is not None:
                if renewing is not None:  # no round may write the Lease after it is deleted
                    await asyncio.wait({renewing})
                await self.shard.leave()
            if self.elector is not None:
                await self.elector.release()
            await self.cache.stop()
            if self.webhooks is not None:
                self._stop.set()  # not ready any more, whatever ended the run
                if self.webhooks.installed:  # it was called: it may still be, for a moment
                    await self._drain_webhooks()
                await self.webhooks.stop()
            await self.http.stop()
            if self.loop_monitor is not None:
                self.loop_monitor.stop()
            await asyncio.to_thread(close_process_pool)  # ctx.run_in_process's workers, if any
            sys.setswitchinterval(switch_interval)
            log.info("manager stopped")

    async def _build_deps(self) -> None:
        """Each operator's dependencies, given to its controllers: after the informers exist (the factory
        may look them up), before the caches start (no event is handled without them)."""
        by_name = {c.name: c for c in self.controllers}
        for build, names in self._deps:
            deps = await build(self)
            for name in names:
                by_name[name].deps = deps

    def _shard_member(self) -> ShardMember:
        """This replica's shard membership, set as every controller's gate (kubeloop/controller/gate.py)."""
        o = self.options
        shard = ShardMember(self.client, self.name, o.leader_election_namespace or self.client.default_namespace,
                            o.identity, Timings(o.lease_duration, o.renew_deadline, o.retry_period),
                            o.shard_handoff_timeout)
        for controller in self.controllers:
            controller.gate = shard
        shard.attach(self.controllers)
        return shard

    async def _until_stopped(self, awaitable: Awaitable[object]) -> bool:
        """Awaits something unless stop() comes first; returns False if stopped."""
        task = asyncio.ensure_future(awaitable)
        stop_wait = asyncio.create_task(self._stop.wait())
        try:
            await asyncio.wait({task, stop_wait}, return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:  # run() cancelled from outside: nothing of this wait stays behind
            task.cancel()
            raise
        finally:
            stop_wait.cancel()
        if not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
            return False
        task.result()
        return True

    async def _shutdown_controllers(self, deadline: float) -> None:
        """Stops every controller: their reconciles get ``deadline`` seconds, then workers and daemons are
        cancelled and awaited. Shielded, so that a second cancellation of ``run`` cannot leave some behind."""
        stopping = asyncio.gather(*(c.stop(deadline) for c in self.controllers))
        try:
            await asyncio.shield(stopping)
        except asyncio.CancelledError:
            await stopping  # cancelled again while stopping: finish stopping first
            raise
