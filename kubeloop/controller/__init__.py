"""Controllers: triggers and predicates feeding a work queue that drives ``reconcile``."""

from kubeloop.controller import predicates
from kubeloop.controller.controller import DEFAULT_CONCURRENCY, Controller, Watch

__all__ = ["DEFAULT_CONCURRENCY", "Controller", "Watch", "predicates"]
