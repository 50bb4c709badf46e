"""What reconcile functions take and return, and the state they keep per object."""

from kubeloop.reconcile.context import Context
from kubeloop.reconcile.cooperative import Steps, cooperatively, to_completion
from kubeloop.reconcile.result import GIVE_UP, PermanentError, Request, Result
from kubeloop.reconcile.state import State

__all__ = ["GIVE_UP", "Context", "PermanentError", "Request", "Result", "State", "Steps", "cooperatively",
           "to_completion"]
