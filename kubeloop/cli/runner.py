"""Runs an Operator under a Manager from ``kubeloop run`` settings."""

from __future__ import annotations

import logging
from typing import Any

from kubeloop.builder import Operator
from kubeloop.cache.cache import CacheSyncTimeout
from kubeloop.cli import preflight
from kubeloop.cli.flags import leader_lease
from kubeloop.client import Client
from kubeloop.manager import LeadershipLost, Manager, ManagerOptions
from kubeloop.reconcile import logs
from kubeloop.webhooks.runtime import WebhookOptions, WebhookSetupError

log = logging.getLogger("kubeloop.run")


def _namespaces(values: tuple[str, ...] | None) -> list[str] | None:
    names = [n.strip() for v in values or () for n in v.split(",") if n.strip()]
    return names or None


async def _preflight(manager: Manager, operator: Operator, settings: dict[str, Any]) -> None:
    """Server reachable, CRDs installed (or installed now with --install-crds), list/watch allowed, for
    the controllers the manager will run (an operator may build them from its settings)."""
    client, target, install = manager.client, settings.get("target") or operator.name, settings.get("install_crds")
    await preflight.check_reachable(client)
    if install:
        await preflight.install_crds(client, operator)
    items = preflight.watched(manager.specs)
    served = await preflight.check_served(client, operator, items, target, bool(install))
    await preflight.check_rbac(client, operator, served, manager.options.namespaces, target)
    if manager.options.leader_elect or manager.options.shards:
        namespace = manager.options.leader_election_namespace or client.default_namespace
        await preflight.check_lease_rbac(client, operator, namespace, target, manager.options.shards)


def webhook_options(settings: dict[str, Any], default_namespace: str) -> WebhookOptions:
    """The ``--webhook-*`` flags: the URL form (local, the default) or the Service form (in a cluster)."""
    service = settings.get("webhook_service")
    namespace = settings.get("webhook_namespace") or (default_namespace if service else None)
    return WebhookOptions(host=settings.get("webhook_host") or "127.0.0.1", port=settings.get("webhook_port", 9443),
                          url_host=settings.get("webhook_url_host"), url_port=settings.get("webhook_url_port"),
                          service=service, namespace=namespace, cert_dir=settings.get("webhook_cert_dir"),
                          drain_seconds=settings.get("webhook_drain_seconds"))


async def run_operator(operator: Operator, settings: dict[str, Any]) -> int:
    logs.setup(settings["log_level"], settings["log_format"])
    client = await Client.load(settings["kubeconfig"], settings["context"], qps=settings["qps"],
                               burst=settings["burst"], field_manager=operator.name)
    options = ManagerOptions(
        namespaces=_namespaces(settings["namespace"]),
        leader_elect=settings["leader_elect"],
        leader_election_id=settings["leader_election_id"] or leader_lease(operator.name),
        leader_election_namespace=settings["leader_election_namespace"],
        metrics_bind_address=settings["metrics_bind_address"],
        health_probe_bind_address=settings["health_probe_bind_address"],
        graceful_shutdown_timeout=settings["graceful_shutdown_timeout"],
        watch_inactivity_timeout=settings["watch_inactivity_timeout"],
        webhook=webhook_options(settings, client.default_namespace),
        shards=settings["shards"] == "auto",
        lease_duration=settings["lease_duration"], renew_deadline=settings["renew_deadline"],
        retry_period=settings["retry_period"],
    )
    manager = Manager(client, options, name=operator.name)
    log.info("starting %s against %s", operator.name, client.config.source)
    try:
        manager.add_operator(operator, settings["max_concurrent_reconciles"], settings["resync_period"])
        await _preflight(manager, operator, settings)
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
