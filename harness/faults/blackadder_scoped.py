"""blackadder as ``kubeloop run harness.faults.blackadder_scoped``: handles only the ChaosAgents matching
``$FAULTS_AGENT_SELECTOR``, so a scenario on a shared cluster never acts on anyone else's agents."""

import os

from kubeloop.operators.blackadder import build_operator

operator = build_operator(agent_selector=os.environ.get("FAULTS_AGENT_SELECTOR") or None)
