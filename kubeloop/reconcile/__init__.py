"""What reconcile functions take and return."""

from kubeloop.reconcile.context import Context
from kubeloop.reconcile.result import Request, Result

__all__ = ["Context", "Request", "Result"]
