"""Prometheus metrics with controller-runtime's and client-go's names, so existing dashboards work.

All live in one registry (``REGISTRY``) that the manager serves on ``/metrics``. The types are kubeloop's
own (kubeloop/metrics/core.py: no prometheus_client import at start-up); an operator declares its metrics
with them, e.g. ``metrics.Counter("myop_things", "Things done.", ["kind"], registry=metrics.REGISTRY)``.
"""

from __future__ import annotations

from kubeloop.metrics.core import Counter, Gauge, Histogram, Registry

__all__ = ["REGISTRY", "Counter", "Gauge", "Histogram", "Registry"]  # and the metrics below

REGISTRY = Registry()

_LATENCY = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60)

# client-go (rest_client_*)
rest_client_requests = Counter(
    "rest_client_requests", "Number of HTTP requests, partitioned by status code, method, and host.",
    ["code", "method", "host"], registry=REGISTRY)
rest_client_request_duration = Histogram(
    "rest_client_request_duration_seconds", "Request latency in seconds. Broken down by verb, and host.",
    ["verb", "host"], buckets=_LATENCY, registry=REGISTRY)
rest_client_rate_limiter_duration = Histogram(
    "rest_client_rate_limiter_duration_seconds", "Client side rate limiter latency in seconds.",
    ["verb", "host"], buckets=_LATENCY, registry=REGISTRY)

# workqueue_* (client-go workqueue, as exported by controller-runtime; label "name" = controller)
workqueue_depth = Gauge("workqueue_depth", "Current depth of workqueue", ["name", "controller"],
                        registry=REGISTRY)
workqueue_adds = Counter("workqueue_adds", "Total number of adds handled by workqueue",
                         ["name", "controller"], registry=REGISTRY)
workqueue_queue_duration = Histogram(
    "workqueue_queue_duration_seconds", "How long in seconds an item stays in workqueue before being requested",
    ["name", "controller"], buckets=_LATENCY, registry=REGISTRY)
workqueue_work_duration = Histogram(
    "workqueue_work_duration_seconds", "How long in seconds processing an item from workqueue takes.",
    ["name", "controller"], buckets=_LATENCY, registry=REGISTRY)
workqueue_retries = Counter("workqueue_retries", "Total number of retries handled by workqueue",
                            ["name", "controller"], registry=REGISTRY)
workqueue_unfinished_work = Gauge(
    "workqueue_unfinished_work_seconds",
    "How many seconds of work has been done that is in progress and hasn't been observed by "
    "work_duration. Large values indicate stuck threads.", ["name", "controller"], registry=REGISTRY)
workqueue_longest_running = Gauge(
    "workqueue_longest_running_processor_seconds",
    "How many seconds has the longest running processor for workqueue been running.",
    ["name", "controller"], registry=REGISTRY)

# controller_runtime_*
reconcile_total = Counter("controller_runtime_reconcile", "Total number of reconciliations per controller",
                          ["controller", "result"], registry=REGISTRY)
reconcile_errors = Counter("controller_runtime_reconcile_errors",
                           "Total number of reconciliation errors per controller", ["controller"],
                           registry=REGISTRY)
reconcile_time = Histogram("controller_runtime_reconcile_time_seconds",
                           "Length of time per reconciliation per controller", ["controller"],
                           buckets=_LATENCY, registry=REGISTRY)
active_workers = Gauge("controller_runtime_active_workers",
                       "Number of currently used workers per controller", ["controller"], registry=REGISTRY)
max_concurrent_reconciles = Gauge("controller_runtime_max_concurrent_reconciles",
                                  "Maximum number of concurrent reconciles per controller", ["controller"],
                                  registry=REGISTRY)

# leader election (client-go's leader_election_master_status)
leader_election_master_status = Gauge(
    "leader_election_master_status",
    "Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master.",
    ["name"], registry=REGISTRY)

# controller_runtime_webhook_* (label "webhook" = the webhook's path, as controller-runtime labels it)
webhook_requests = Counter("controller_runtime_webhook_requests",
                           "Total number of admission requests by HTTP status code.", ["webhook", "code"],
                           registry=REGISTRY)
webhook_latency = Histogram("controller_runtime_webhook_latency_seconds",
                            "Histogram of the latency of processing admission requests", ["webhook"],
                            buckets=(0.001, 0.0025, *_LATENCY), registry=REGISTRY)
webhook_in_flight = Gauge("controller_runtime_webhook_requests_in_flight",
                          "Current number of admission requests being served.", ["webhook"], registry=REGISTRY)

# scale-out (--shards): kubeloop_shard_* (the slots of kubeloop/sharding/ring.py; a handoff is one slot
# set moving in or out, its duration from the decision to the moment it took effect)
shard_slots_owned = Gauge("kubeloop_shard_slots_owned", "Hash slots this replica reconciles now.", ["name"],
                          registry=REGISTRY)
shard_keys_owned = Gauge("kubeloop_shard_keys_owned", "Cached keys this replica owns, per controller.",
                         ["controller"], registry=REGISTRY)
shard_server_side = Gauge("kubeloop_shard_server_side",
                          "1 when the API server filters this replica's list/watch by shard (KEP-5866).", ["name"],
                          registry=REGISTRY)
shard_cached_objects = Gauge("kubeloop_shard_cached_objects",
                             "Objects in a controller's primary informer (1/N of all in server-side mode).",
                             ["controller"], registry=REGISTRY)
shard_handoffs = Counter("kubeloop_shard_handoffs", "Slot handoffs by direction (acquired or released).",
                         ["name", "direction"], registry=REGISTRY)
shard_handoff_duration = Histogram("kubeloop_shard_handoff_duration_seconds",
                                   "Seconds from deciding a handoff to its effect: for a release, the drain "
                                   "of in-flight reconciles; for an acquisition, claim to hold.",
                                   ["name", "direction"], buckets=(0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30),
                                   registry=REGISTRY)
