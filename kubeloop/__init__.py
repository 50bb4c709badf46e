"""kubeloop: level-based Kubernetes operators in Python.

The folders are the architecture: ``client`` → ``watch`` → ``cache`` → ``queue`` → ``controller`` →
``manager``; ``reconcile`` (what reconcilers get and return), ``helpers`` (finalizers, owners,
conditions, events), ``resources`` (models → CRD/RBAC), ``envtest`` (a local control plane),
``testing`` (pytest plugin), ``cli`` and the bundled ``operators``.
"""

from kubeloop.builder import Operator
from kubeloop.client import Client, Resource
from kubeloop.controller import Controller, ControllerSpec, Watch, predicates
from kubeloop.manager import Manager, ManagerOptions
from kubeloop.reconcile import Context, Request, Result, State
from kubeloop.settings import Flag, Settings, setting

__version__ = "0.1.0"
__all__ = ["Client", "Context", "Controller", "ControllerSpec", "Flag", "Manager", "ManagerOptions", "Operator",
           "Request", "Resource", "Result", "Settings", "State", "Watch", "predicates", "setting"]
