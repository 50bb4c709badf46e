"""reloader: rolls Deployments, StatefulSets and DaemonSets (and optionally CronJobs) when the
ConfigMaps or Secrets they use change — level-based, by content hash, Reloader-annotation compatible.

``kubeloop run reloader`` runs it; see README.md in this folder."""

from kubeloop.operators.reloader.operator import ReloaderOperator, build_operator, operator

__all__ = ["ReloaderOperator", "build_operator", "operator"]
