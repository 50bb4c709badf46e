"""What a receiving namespace says about copies: its owner's policy, and its copy limit.

The owner of a namespace usually holds a namespaced role (the built-in ``admin`` or ``edit``), which
cannot label or annotate the Namespace object (cluster-scoped) but can create ConfigMaps. So the
namespace speaks through a ConfigMap of its own named ``copyrator-policy``:

    data:
      accept: "false"            # no copies here ("true"/"*", the default: any rule's)
      # accept: "team-a, ops/base-config"   # only rules of these namespaces, or these rules (globs)
      max-copies: "10"           # at most 10 copies here from the rules of any one namespace

A ConfigMap that is itself a copy never counts as a policy (and no copy is ever named like it), so a
rule cannot speak for the namespace it writes into. The policy applies to every rule, trusted ones
included: the namespace owner decides what lands there; the cluster admin, who may write the policy
ConfigMap too, keeps the last word.

The copy limit: copies made in one namespace by the rules of one namespace count against the same
limit (``--max-copies-per-namespace``, lowered by ``max-copies``), per kind, because they count against
the receiving namespace's ResourceQuota (``count/configmaps``, ``count/secrets``). Rules of one
namespace share it in the order of their names (earlier names first), so the split never depends on
event order and never oscillates.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from kubeloop.operators.copyrator.boundary import consent_problem, grants

POLICY_NAME = "copyrator-policy"
ACCEPT_KEY = "accept"
MAX_COPIES_KEY = "max-copies"
DEFAULT_MAX_COPIES = 64
REFUSED = "NamespaceRefuses"
LIMITED = "CopyLimit"


@dataclass(frozen=True)
class NamespacePolicy:
    """A namespace's policy ConfigMap, read (the default: no ConfigMap, everything accepted)."""

    accept: str = "true"
    max_copies: int | None = None
    problem: str | None = None  # a value the operator could not read: then nothing is accepted

    def refusal(self, rule_namespace: str, rule_key: str) -> str | None:
        """Why the namespace refuses the rule's copies (None: it accepts them)."""
        if self.problem:
            return f"{POLICY_NAME}: {self.problem}; no copies are accepted until it is fixed"
        if not grants(self.accept, rule_namespace, rule_key):
            return f"{POLICY_NAME} accepts copies from {self.accept[:100]!r} only"
        return None


def read_policy(configmap: Mapping[str, Any] | None) -> NamespacePolicy:
    if configmap is None:
        return NamespacePolicy()
    data = configmap.get("data") or {}
    accept = str(data.get(ACCEPT_KEY, "true")).strip()
    if problem := consent_problem(accept):
        return NamespacePolicy(accept, problem=f"{ACCEPT_KEY} is {problem}")
    given = data.get(MAX_COPIES_KEY)
    if given is None:
        return NamespacePolicy(accept)
    try:
        limit = int(str(given).strip())
    except ValueError:
        limit = -1
    if limit < 0:
        return NamespacePolicy(accept, problem=f"{MAX_COPIES_KEY} {str(given)[:20]!r} is not a whole number >= 0")
    return NamespacePolicy(accept, limit)


@dataclass(frozen=True)
class Reception:
    """What the plan asks of the receiving namespaces: a refusal, and the room left for one rule."""

    refusal: Callable[[Any, str], str | None]  # (rule, namespace) → reason refused, or None
    room: Callable[[Any, str], int | None]  # (rule, namespace) → copies the rule may have there (None: any)
