"""Reloader-shaped metrics in kubeloop's shared registry (served on the manager's /metrics).

Module-level on purpose: the registry is process-wide, so every operator instance counts into them."""

from __future__ import annotations

from kubeloop import metrics

reload_executed = metrics.Counter(
    "reloader_reload_executed", "Rollouts triggered by a ConfigMap or Secret change, by success.",
    ["success", "namespace", "kind"], registry=metrics.REGISTRY)
reload_skipped = metrics.Counter(
    "reloader_reload_skipped", "Rollouts that were due but not made, by reason (paused, rate_limited, "
    "missing_source, dry_run, pause_period, loop).", ["reason", "namespace", "kind"], registry=metrics.REGISTRY)
