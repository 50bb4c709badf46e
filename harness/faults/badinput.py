"""Invalid custom resources for every bundled CRD, and what the API server must say about each: the
field path it names and a fragment of its message (generated structural schema, enums, bounds,
patterns, and CEL). Shared by ``tests/integration/test_bad_input.py`` and the ``invalid-objects``
scenario of ``python -m harness.faults``, which prints the table in docs/RELIABILITY.md."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kubeloop.client import Client, Invalid
from kubeloop.operators.blackadder import ChaosAgent
from kubeloop.operators.copyrator.models import CopyratorRule
from kubeloop.operators.immortal import ImmortalContainer

Obj = dict[str, Any]
IC, RULE, AGENT = ImmortalContainer.resource(), CopyratorRule.resource(), ChaosAgent.resource()


def ic(ns: str, spec: Obj | None) -> Obj:
    body: Obj = {"apiVersion": IC.api_version, "kind": "ImmortalContainer",
                 "metadata": {"name": "bad", "namespace": ns}}
    if spec is not None:
        body["spec"] = spec
    return body


def rule(ns: str, **fields: Any) -> Obj:
    body: Obj = {"apiVersion": RULE.api_version, "kind": "CopyratorRule", "metadata": {"name": "bad", "namespace": ns},
                 "ruleType": "configmap", "selector": {"app": "x"}, "namespace": ns}
    body.update(fields)
    return {k: v for k, v in body.items() if v is not None}


def agent(ns: str, version: str = "v1beta1", **spec: Any) -> Obj:
    return {"apiVersion": f"blackadder.io/{version}", "kind": "ChaosAgent", "metadata": {"name": f"bad-{ns}"},
            "spec": spec}


SELECTOR_RULE = "values must be non-empty for In and NotIn, and empty for Exists and DoesNotExist"

# (case, body(namespace), the field path the refusal names, a fragment of its message)
INVALID: list[tuple[str, Callable[[str], Obj], str, str]] = [
    ("immortal: no spec", lambda ns: ic(ns, None), "spec", "Required value"),
    ("immortal: empty image", lambda ns: ic(ns, {"image": ""}), "spec.image", "at least 1 chars long"),
    ("immortal: image not a string", lambda ns: ic(ns, {"image": 42}), "spec.image", "must be of type string"),
    ("immortal: unknown pull policy", lambda ns: ic(ns, {"image": "x", "template": {"imagePullPolicy": "Sometimes"}}),
     "spec.template.imagePullPolicy", 'Unsupported value: "Sometimes"'),
    ("immortal: negative grace period",
     lambda ns: ic(ns, {"image": "x", "template": {"terminationGracePeriodSeconds": -1}}),
     "spec.template.terminationGracePeriodSeconds", "greater than or equal to 0"),
    ("immortal: label value not a string", lambda ns: ic(ns, {"image": "x", "template": {"labels": {"a": 1}}}),
     "spec.template.labels.a", "must be of type string"),
    ("immortal: args not a list", lambda ns: ic(ns, {"image": "x", "template": {"args": "--verbose"}}),
     "spec.template.args", "must be of type array"),
    ("copyrator: unknown ruleType", lambda ns: rule(ns, ruleType="pod"), "ruleType", 'Unsupported value: "pod"'),
    ("copyrator: empty selector", lambda ns: rule(ns, selector={}), "selector", "at least 1 properties"),
    ("copyrator: no source namespace", lambda ns: rule(ns, namespace=None), "namespace", "Required value"),
    ("copyrator: unknown conflictPolicy", lambda ns: rule(ns, conflictPolicy="Merge"), "conflictPolicy",
     'Unsupported value: "Merge"'),
    ("copyrator: copyLabels not a list", lambda ns: rule(ns, copyLabels="*"), "copyLabels", "must be of type array"),
    ("copyrator: unknown selector operator",
     lambda ns: rule(ns, namespaceSelector={"matchExpressions": [{"key": "a", "operator": "Maybe"}]}),
     "namespaceSelector.matchExpressions[0].operator", 'Unsupported value: "Maybe"'),
    ("copyrator: In without values (CEL)",
     lambda ns: rule(ns, namespaceSelector={"matchExpressions": [{"key": "a", "operator": "In"}]}),
     "namespaceSelector.matchExpressions[0]", SELECTOR_RULE),
    ("blackadder: too eager", lambda ns: agent(ns, eagerness=200), "spec.eagerness", "less than or equal to 100"),
    ("blackadder v1alpha1: too eager", lambda ns: agent(ns, "v1alpha1", eagerness=200), "spec.eagerness",
     "less than or equal to 100"),
    ("blackadder: never eager", lambda ns: agent(ns, eagerness=0), "spec.eagerness", "greater than or equal to 1"),
    ("blackadder: no pause", lambda ns: agent(ns, pauseDuration=0), "spec.pauseDuration", "greater than or equal to 1"),
    ("blackadder: bad time window", lambda ns: agent(ns, excludedTimesOfDay=["25:00-06:00"]),
     "spec.excludedTimesOfDay[0]", "should match"),
    ("blackadder: unknown weekday", lambda ns: agent(ns, excludedWeekdays=["Funday"]), "spec.excludedWeekdays[0]",
     'Unsupported value: "Funday"'),
    ("blackadder: negative seed", lambda ns: agent(ns, seed=-1), "spec.seed", "greater than or equal to 0"),
    ("blackadder: boolean as a string", lambda ns: agent(ns, tantrumMode="yes"), "spec.tantrumMode",
     "must be of type boolean"),
    ("blackadder: Exists with values (CEL)",
     lambda ns: agent(ns, podSelector={"matchExpressions": [{"key": "app", "operator": "Exists", "values": ["x"]}]}),
     "spec.podSelector.matchExpressions[0]", SELECTOR_RULE),
]


async def refusal(client: Client, body: Obj) -> tuple[list[str], str] | None:
    """Creates ``body`` as a dry run: None if accepted, else the field paths and message of the refusal."""
    try:
        await client.create(body, dry_run=True)
    except Invalid as exc:
        return [str(c.get("field")) for c in exc.causes], exc.message
    return None


async def check_all(client: Client, namespace: str) -> list[dict[str, Any]]:
    """Every case of INVALID against a cluster that has the bundled CRDs: was it refused, naming the field?"""
    out = []
    for case, body, field, fragment in INVALID:
        answer = await refusal(client, body(namespace))
        fields, message = answer if answer else ([], "accepted")
        out.append({"case": case, "field": field, "refused": answer is not None,
                    "named": field in fields and fragment in message, "message": message})
    return out
