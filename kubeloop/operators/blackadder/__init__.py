"""blackadder: the chaos operator of "Writing Kubernetes Operators with Python", made safe to run.

ChaosAgents (``chaosagents.blackadder.io``, cluster-scoped) kill pods (tantrumMode), double
Deployments' replicas (cancerMode) and fill ConfigMaps with lorem ipsum (ipsumMode) in periodic,
seeded rounds; what cancer and ipsum change is put back when the mode is switched off, the agent is
deleted or a TTL passes. ``kubeloop run blackadder --help`` lists the settings.
"""

from __future__ import annotations

from kubeloop import Operator
from kubeloop.operators.blackadder.agent import reconcile_agent, restore_everything
from kubeloop.operators.blackadder.models import ChaosAgent, ChaosAgentV1Alpha1
from kubeloop.operators.blackadder.safety import Settings, operator_namespace
from kubeloop.reconcile import Context, Result
from kubeloop.resources.builtin import CONFIG_MAP, DEPLOYMENT, HORIZONTAL_POD_AUTOSCALER, NAMESPACE, POD

__all__ = ["ChaosAgent", "ChaosAgentV1Alpha1", "FINALIZER", "build_operator", "operator"]

FINALIZER = "blackadder.io/restore"


def build_operator(name: str = "blackadder", agent_selector: str | None = None) -> Operator:
    """The blackadder operator. ``agent_selector`` (a label selector) makes this instance handle only
    the ChaosAgents it matches, e.g. to keep test runs sharing a cluster apart."""
    op = Operator(name)
    op.serve(ChaosAgentV1Alpha1)  # the article's first version stays served (deprecated)
    _options(op)
    _permissions(op)

    @op.reconcile(ChaosAgent, label_selector=agent_selector, resync=300.0)
    async def reconcile(agent: ChaosAgent, ctx: Context) -> Result:
        return await reconcile_agent(agent, ctx, settings_of(op))

    @op.finalize(ChaosAgent, finalizer=FINALIZER)
    async def finalize(agent: ChaosAgent, ctx: Context) -> None:
        await restore_everything(agent, ctx, settings_of(op))

    return op


def _options(op: Operator) -> None:
    op.option("operator-namespace", None, help="The operator's own namespace: never touched, and where "
              "large ConfigMap backups live (default: the pod's namespace; outside a cluster: none, so "
              "nothing extra is protected and large ConfigMaps are not rewritten).",
              envvars=["POD_NAMESPACE"])
    op.option("protected-namespaces", (), multiple=True,
              help="More namespaces no agent may touch (besides kube-system, kube-public, kube-node-lease "
                   "and the operator's own); repeat or comma-separate.")
    op.option("max-concurrent-actions", 8, type=int, help="Requests one round makes at the same time.")
    op.option("recent-actions", 20, type=int, help="How many recent actions status.recentActions keeps.")
    op.option("annotation-limit", 64 * 1024, type=int,
              help="Original ConfigMap data up to this many bytes is kept in an annotation, larger "
                   "goes to a backup ConfigMap in the operator's namespace.")


def _permissions(op: Operator) -> None:
    # What a round and a restore do beyond watching ChaosAgents. Secrets: never.
    op.permission(NAMESPACE, ["list"])
    op.permission(POD, ["list", "delete"])
    op.permission(POD, ["create"], subresource="eviction")
    op.permission(DEPLOYMENT, ["get", "list", "patch"])
    op.permission(HORIZONTAL_POD_AUTOSCALER, ["list"])
    # ConfigMaps: rewritten and restored wherever an agent reaches; backups are created and deleted
    # only in the operator's own namespace, so create/delete stay out of the ClusterRole.
    op.permission(CONFIG_MAP, ["get", "list", "patch"])
    op.permission(CONFIG_MAP, ["create", "patch", "delete"], own_namespace=True)


def settings_of(op: Operator) -> Settings:
    s = op.settings
    protected = [n.strip() for value in s.get("protected_namespaces") or ()
                 for n in str(value).split(",") if n.strip()]
    return Settings(operator=op.name,
                    operator_namespace=operator_namespace(s.get("operator_namespace")),
                    protected_namespaces=tuple(protected),
                    max_concurrent_actions=max(1, int(s["max_concurrent_actions"])),
                    recent_actions=int(s["recent_actions"]), annotation_limit=int(s["annotation_limit"]))


operator = build_operator()
