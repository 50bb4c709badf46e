"""Generated sequences (hypothesis): creates, updates, patches of every flavour, applies, deletes with
and without finalizers, (paginated) lists and deletecollections over a few names, labels and managers,
on ConfigMaps and the Echo custom resource, then a watch from the start. Each example runs on the fake
and the real control plane; any normalised difference fails. ``KUBELOOP_DIFF_EXAMPLES`` sets the number
of examples (default 25, the same ones every run so that a red run means a change of ours); setting it
explores: run under several ``--hypothesis-seed`` values for breadth. Shrinking is off: every example costs
real requests."""

from __future__ import annotations

import os
from typing import Any

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from tests.differential.compare import compare
from tests.differential.harness import APPLY, JSON, MERGE, STRATEGIC, Backend, Mark, Req, Step, Watch
from tests.differential.sequences import CM, ECHO, cm, echo

NAMES = st.sampled_from(["a", "b", "c"])
LABELS = st.dictionaries(st.sampled_from(["app", "tier"]), st.sampled_from(["x", "y"]), max_size=2)
DATA = st.dictionaries(st.sampled_from(["k1", "k2", "k3"]), st.sampled_from(["1", "2"]), max_size=3)
SELECTORS = st.sampled_from(["app=x", "app!=x", "tier in (x,y)", "!tier", "app", "app=x,tier=y"])
MANAGERS = st.sampled_from(["m1", "m2"])
# Deletecollection only with selectors that need a label: deleting the unlabelled kube-root-ca.crt would race
# the real controller that puts it back (the fake's puts it back at once: a documented difference).
LABELLED = st.sampled_from(["app=x", "tier in (x,y)", "app", "app=x,tier=y"])


def _ops() -> st.SearchStrategy[Step]:
    return st.one_of(
        st.builds(lambda n, lab, d: Req("POST", CM, cm(n, d, lab)), NAMES, LABELS, DATA),
        st.builds(lambda n, d, stale: Req("PUT", f"{CM}/{n}", {**cm(n, d), "metadata": {
            "name": n, **({"resourceVersion": "1"} if stale else {})}}), NAMES, DATA, st.booleans()),
        st.builds(lambda n, lab, d, drop: Req("PATCH", f"{CM}/{n}", {
            "metadata": {"labels": {**lab, **({"app": None} if drop else {})}}, "data": d}, MERGE),
            NAMES, LABELS, DATA, st.booleans()),
        st.builds(lambda n, v, new: Req("PATCH", f"{CM}/{n}", [
            {"op": "test", "path": "/data/k1", "value": v}, {"op": "add", "path": "/data/k1", "value": new}], JSON),
            NAMES, st.sampled_from(["1", "2"]), st.sampled_from(["1", "2"])),
        st.builds(lambda n, d: Req("PATCH", f"{CM}/{n}", {"data": d}, STRATEGIC), NAMES, DATA),
        st.builds(lambda n, m, d, lab, force: Req("PATCH", f"{CM}/{n}", cm(n, d, lab), APPLY, {
            "fieldManager": m, **({"force": "true"} if force else {})}), NAMES, MANAGERS, DATA, LABELS,
            st.booleans()),
        st.builds(lambda n: Req("PATCH", f"{CM}/{n}", {"metadata": {"finalizers": ["diff.kubeloop.dev/f"]}}, MERGE),
                  NAMES),
        st.builds(lambda n: Req("PATCH", f"{CM}/{n}", {"metadata": {"finalizers": None}}, MERGE), NAMES),
        st.builds(lambda n: Req("DELETE", f"{CM}/{n}"), NAMES),
        st.builds(lambda sel: Req("GET", CM, params={"labelSelector": sel}), SELECTORS),
        st.builds(lambda sel, limit: Req("GET", CM, params={"labelSelector": sel, "limit": limit}), SELECTORS,
                  st.sampled_from(["1", "2"])),
        st.builds(lambda sel: Req("DELETE", CM, params={"labelSelector": sel}), LABELLED),
        st.builds(lambda n: Req("PATCH", f"{ECHO}/{n}", {"metadata": {"finalizers": ["diff.kubeloop.dev/f"]}},
                                MERGE), NAMES),
        st.builds(lambda n: Req("PATCH", f"{ECHO}/{n}", [{"op": "remove", "path": "/metadata/finalizers"}], JSON),
                  NAMES),
        st.builds(lambda n: Req("GET", f"{CM}/{n}"), NAMES),
        st.builds(lambda n, msg: Req("POST", ECHO, echo(n, message=msg)), NAMES, st.sampled_from(["p", "q"])),
        st.builds(lambda n, msg: Req("PATCH", f"{ECHO}/{n}", {"spec": {"message": msg},
                                                                "metadata": {"labels": {"app": msg}}}, MERGE),
                  NAMES, st.sampled_from(["p", "q"])),
        st.builds(lambda n, seen: Req("PATCH", f"{ECHO}/{n}/status", {"status": {"seen": seen}}, MERGE),
                  NAMES, st.sampled_from(["s", "t"])),
        st.builds(lambda n: Req("DELETE", f"{ECHO}/{n}"), NAMES),
    )


SEQUENCE = st.lists(_ops(), min_size=1, max_size=12).map(
    lambda ops: [Mark("start", CM), *ops, Req("GET", CM), Req("GET", ECHO),
                 Watch(CM, since="start", to_last_write=True)])


@settings(max_examples=int(os.environ.get("KUBELOOP_DIFF_EXAMPLES", "25")), deadline=None,
          phases=(Phase.explicit, Phase.reuse, Phase.generate),
          derandomize="KUBELOOP_DIFF_EXAMPLES" not in os.environ,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(steps=SEQUENCE)
async def test_generated_sequences_agree(steps: list[Any], fake: Backend, real: Backend) -> None:
    diffs = await compare("generated", steps, fake, real)
    assert not diffs, "\n".join(diffs)
