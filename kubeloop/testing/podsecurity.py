"""Pods that the "restricted" Pod Security Standard admits, for tests on the hardened control plane.

The test kit's namespaces enforce ``restricted`` (``pod-security.kubernetes.io/enforce``), as hardened
clusters do for workloads. A test's own pods and pod templates meet it with :func:`restricted`; a test
that needs a pod the standard refuses relabels its namespace with :func:`relax` and says why.
"""

from __future__ import annotations

from typing import Any

ENFORCE = "pod-security.kubernetes.io/enforce"

# What "restricted" (Kubernetes 1.35) requires of a pod: a non-root user, the runtime's seccomp profile,
# and of each container: no privilege escalation, every capability dropped.
POD_SECURITY_CONTEXT: dict[str, Any] = {"runAsNonRoot": True, "runAsUser": 65532,
                                        "seccompProfile": {"type": "RuntimeDefault"}}
CONTAINER_SECURITY_CONTEXT: dict[str, Any] = {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}}


def restricted(pod_spec: dict[str, Any]) -> dict[str, Any]:
    """Adds to ``pod_spec`` (in place, and returns it) the security contexts "restricted" requires, keeping
    what it sets already."""
    pod_spec["securityContext"] = {**POD_SECURITY_CONTEXT, **(pod_spec.get("securityContext") or {})}
    for container in [*(pod_spec.get("initContainers") or ()), *(pod_spec.get("containers") or ())]:
        container["securityContext"] = {**CONTAINER_SECURITY_CONTEXT, **(container.get("securityContext") or {})}
    return pod_spec


async def relax(client: Any, namespace: str, level: str = "baseline") -> None:
    """Lets ``namespace`` admit pods of the ``level`` standard ("baseline" or "privileged")."""
    if level not in ("baseline", "privileged", "restricted"):
        raise ValueError(f"level={level!r}: a Pod Security Standard is restricted, baseline or privileged")
    await client.patch("namespaces", namespace, {"metadata": {"labels": {ENFORCE: level}}})
