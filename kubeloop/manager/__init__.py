"""The manager: controllers + shared cache + leader election + metrics/health HTTP + signals."""

from kubeloop.manager.leader import LeaderElector
from kubeloop.manager.manager import LeadershipLost, Manager, ManagerOptions

__all__ = ["LeaderElector", "LeadershipLost", "Manager", "ManagerOptions"]
