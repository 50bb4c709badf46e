"""``kubeloop run blackadder``'s flags, and how they resolve into the ``safety.Settings`` a round
reads (which adds what only the running process knows: its own namespace and pod)."""

from __future__ import annotations

from pydantic import field_validator

from kubeloop import Settings, setting
from kubeloop.operators.blackadder import safety
from kubeloop.operators.blackadder.models import MAX_RECENT_ACTIONS


class BlackadderSettings(Settings):
    operator_namespace: str | None = setting(
        None, "The operator's own namespace: never touched, and where large ConfigMap backups live (default: "
        "the pod's namespace; outside a cluster: none, so nothing extra is protected and large ConfigMaps are "
        "not rewritten).", env=["POD_NAMESPACE"])
    protected_namespaces: tuple[str, ...] = setting(
        (), "More namespaces no agent may touch (besides kube-system, kube-public, kube-node-lease and the "
        "operator's own); repeat or comma-separate.")
    max_concurrent_actions: int = setting(8, "Requests one round makes at the same time.", ge=1)
    recent_actions: int = setting(20, "How many recent actions status.recentActions keeps.", ge=0,
                                  le=MAX_RECENT_ACTIONS)  # the CRD's maxItems
    annotation_limit: int = setting(64 * 1024, "Original ConfigMap data up to this many bytes is kept in an "
                                    "annotation, larger goes to a backup ConfigMap in the operator's namespace.",
                                    ge=0)

    @field_validator("protected_namespaces")
    @classmethod
    def _split(cls, given: tuple[str, ...]) -> tuple[str, ...]:
        """Repeated and comma-separated alike: ``a,b`` is two namespaces."""
        return tuple(n.strip() for value in given for n in value.split(",") if n.strip())

    def resolve(self, operator: str) -> safety.Settings:
        """What a round uses: these settings, the operator's name, and its namespace as found now."""
        return safety.Settings(operator=operator, operator_namespace=safety.operator_namespace(self.operator_namespace),
                               protected_namespaces=self.protected_namespaces,
                               max_concurrent_actions=self.max_concurrent_actions,
                               recent_actions=self.recent_actions, annotation_limit=self.annotation_limit)
