"""blackadder: the chaos operator of "Writing Kubernetes Operators with Python", made safe to run.

ChaosAgents (``chaosagents.blackadder.io``, cluster-scoped) kill pods (tantrumMode), double
Deployments' replicas (cancerMode) and fill ConfigMaps with lorem ipsum (ipsumMode) in periodic,
seeded rounds; what cancer and ipsum change is put back when the mode is switched off, the agent is
deleted or a TTL passes. ``kubeloop run blackadder --help`` lists the settings.
"""

from __future__ import annotations

from kubeloop import Context, Operator, Result, builtin
from kubeloop.operators.blackadder.agent import reconcile_agent, restore_everything
from kubeloop.operators.blackadder.models import ChaosAgent, ChaosAgentV1Alpha1, ChaosAgentV1Beta1
from kubeloop.operators.blackadder.settings import BlackadderSettings
from kubeloop.operators.blackadder.versions import SPOKES

__all__ = ["ChaosAgent", "ChaosAgentV1Alpha1", "ChaosAgentV1Beta1", "FINALIZER", "build_operator", "operator"]

FINALIZER = "blackadder.io/restore"


def build_operator(name: str = "blackadder", agent_selector: str | None = None) -> Operator[BlackadderSettings]:
    """The blackadder operator. ``agent_selector`` (a label selector) makes this instance handle only
    the ChaosAgents it matches, e.g. to keep test runs sharing a cluster apart."""
    op = Operator(name, settings=BlackadderSettings)
    # The article's versions stay served (v1beta1 stored); the reconciler reads the hub, v1beta2.
    op.serve(ChaosAgentV1Alpha1, ChaosAgentV1Beta1)
    op.convert(ChaosAgent, spokes=SPOKES)
    _permissions(op)

    @op.reconcile(ChaosAgent, label_selector=agent_selector, resync=300.0)
    async def reconcile(agent: ChaosAgent, ctx: Context) -> Result:
        return await reconcile_agent(agent, ctx, op.settings.resolve(op.name))

    @op.finalize(ChaosAgent, finalizer=FINALIZER)
    async def finalize(agent: ChaosAgent, ctx: Context) -> None:
        await restore_everything(agent, ctx, op.settings.resolve(op.name))

    return op


def _permissions(op: Operator) -> None:
    # What a round and a restore do beyond watching ChaosAgents. Secrets: never.
    op.permission(builtin.NAMESPACE, ["list"])
    op.permission(builtin.POD, ["list", "delete"])
    op.permission(builtin.POD, ["create"], subresource="eviction")
    op.permission(builtin.DEPLOYMENT, ["get", "list", "patch"])
    op.permission(builtin.HORIZONTAL_POD_AUTOSCALER, ["list"])
    # ConfigMaps: rewritten and restored wherever an agent reaches; backups are created and deleted
    # only in the operator's own namespace, so create/delete stay out of the ClusterRole.
    op.permission(builtin.CONFIG_MAP, ["get", "list", "patch"])
    op.permission(builtin.CONFIG_MAP, ["create", "patch", "delete"], own_namespace=True)


operator = build_operator()
