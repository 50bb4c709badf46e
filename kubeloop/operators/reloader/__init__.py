"""reloader: rolls Deployments, StatefulSets and DaemonSets (and optionally CronJobs and Argo Rollouts)
when the ConfigMaps or Secrets they use change — level-based, by content hash, a drop-in for
stakater/Reloader's annotations and flags.

``kubeloop run reloader`` runs it; see README.md in this folder."""

from kubeloop.operators.reloader.operator import build_operator, operator

__all__ = ["build_operator", "operator"]
