"""Controllers: a ``ControllerSpec`` says what to reconcile; a ``Controller`` runs one on the cache,
its triggers and predicates feeding a work queue that drives ``reconcile``."""

from kubeloop.controller import predicates
from kubeloop.controller.controller import Controller
from kubeloop.controller.spec import DEFAULT_CONCURRENCY, ControllerSpec, Watch

__all__ = ["DEFAULT_CONCURRENCY", "Controller", "ControllerSpec", "Watch", "predicates"]
