"""Controllers: triggers and predicates feeding a work queue that drives ``reconcile``."""

from kubeloop.controller import predicates
from kubeloop.controller.controller import Controller, Watch

__all__ = ["Controller", "Watch", "predicates"]
