"""Runs an Operator under a Manager with ``kubeloop run``'s options (``RunOptions``)."""

from __future__ import annotations

import logging

from kubeloop.builder import Operator
from kubeloop.cache.cache import CacheSyncTimeout
from kubeloop.cli import preflight
from kubeloop.cli.options import RunOptions
from kubeloop.client import Client
from kubeloop.manager import LeadershipLost, Manager
from kubeloop.reconcile import logs
from kubeloop.webhooks.runtime import WebhookSetupError

log = logging.getLogger("kubeloop.run")


async def _preflight(manager: Manager, operator: Operator, options: RunOptions, target: str) -> None:
    """Server reachable, CRDs installed (or installed now with --install-crds), list/watch allowed, for
    the controllers the manager will run (an operator may build them from its settings)."""
    client, install = manager.client, options.install_crds
    await preflight.check_reachable(client)
    if install:
        await preflight.install_crds(client, operator)
    items = preflight.watched(manager.specs)
    served = await preflight.check_served(client, operator, items, target, install)
    await preflight.check_rbac(client, operator, served, manager.options.namespaces, target)
    if manager.options.leader_elect or manager.options.shards:
        namespace = manager.options.leader_election_namespace or client.default_namespace
        await preflight.check_lease_rbac(client, operator, namespace, target, manager.options.shards)


async def run_operator(operator: Operator, options: RunOptions, target: str | None = None) -> int:
    """Runs ``operator`` until it is stopped; ``target``: how the command line named it (its messages
    name it so), by default its name. Returns the exit code."""
    logs.setup(options.log_level, options.log_format)
    client = await Client.load(options.kubeconfig, options.context, qps=options.qps, burst=options.burst,
                               field_manager=operator.name)
    manager = Manager(client, options.manager_options(operator.name, client.default_namespace), name=operator.name)
    log.info("starting %s against %s", operator.name, client.config.source)
    try:
        manager.add_operator(operator, options.max_concurrent_reconciles, options.resync_period)
        await _preflight(manager, operator, options, target or operator.name)
        await manager.run(install_signal_handlers=True)
        return 0
    except LeadershipLost as exc:
        log.error("%s; exiting so that a fresh process competes again", exc)
        return 1
    except (CacheSyncTimeout, WebhookSetupError) as exc:
        log.error("%s", exc)
        return 1
    finally:
        await client.close()
