"""The work queue: de-duplicated keys, per-key backoff, delays and priorities."""

from kubeloop.queue.workqueue import HIGH, LOW, ExponentialBackoff, ShutDown, WorkQueue

__all__ = ["HIGH", "LOW", "ExponentialBackoff", "ShutDown", "WorkQueue"]
