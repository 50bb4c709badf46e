"""copyrator's Prometheus counters, served with the framework's on ``/metrics``. Labelled by the kind
copied only: rule names would make the series count grow with every rule ever created.

Module-level on purpose, unlike the rest of an operator's state: the registry is process-wide (one
``/metrics`` per process), so every operator instance in a process counts into these same series."""

from __future__ import annotations

from kubeloop import metrics

created = metrics.Counter("copyrator_copies_created", "Copies created.", ["kind"], registry=metrics.REGISTRY)
updated = metrics.Counter("copyrator_copies_updated", "Copies brought back in line with their source (or "
                          "taken over under conflictPolicy Adopt/Overwrite).", ["kind"], registry=metrics.REGISTRY)
deleted = metrics.Counter("copyrator_copies_deleted", "Copies deleted (or released under orphanOnDelete).",
                          ["kind"], registry=metrics.REGISTRY)
conflicts = metrics.Counter("copyrator_conflicts", "New conflicts: a copy's place taken by an object that is "
                            "not the rule's copy.", ["kind"], registry=metrics.REGISTRY)
errors = metrics.Counter("copyrator_errors", "Failed API requests while copying (retried with backoff).",
                         ["kind"], registry=metrics.REGISTRY)
