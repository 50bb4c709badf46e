"""The differential fuzzer: generated request sequences (fuzz.py) over ConfigMaps, Secrets, Namespaces,
Pods, Services, Deployments, StatefulSets, DaemonSets, Jobs, CronJobs, Leases, Events (core v1 and
events.k8s.io), a custom resource and CRDs themselves — valid and invalid input, every verb and patch
type, deletecollection, /status writes, selectors, paging, watches from a mark compared event by
event — run on the fake and on the real control plane and compared step
by step. A difference fails the test and hypothesis shrinks it to a minimal sequence, unless
``explained`` recognises it as one the docs list as not modelled (counted apart; so is every later
step of a sequence that already differs).

Budget: ``KUBELOOP_FUZZ_EXAMPLES`` sequences (default 20: well under a minute once the cluster is up).
Long run (record, do not stop at the first difference; per-kind figures and every differing sequence
in full to a JSON file; no time limit per test)::

    KUBELOOP_FUZZ_EXAMPLES=20000 KUBELOOP_FUZZ_RECORD=1 KUBELOOP_FUZZ_REPORT=fuzz-report.json \\
        python -m pytest tests/differential/test_fuzz.py -p no:cacheprovider -q -s --time-limit=0

The default run is derandomized (the same 20 sequences each time); setting ``KUBELOOP_FUZZ_EXAMPLES``
explores, ``--hypothesis-seed=N`` replays an exploring run, and ``KUBELOOP_FUZZ_KINDS=Pod,DaemonSet``
(``CustomResourceDefinition`` for CRDs) focuses one.
"""

from __future__ import annotations

import asyncio
import os
import time
from typing import Any

from hypothesis import HealthCheck, Phase, given, settings

from tests.differential.conftest import FUZZ, write_fuzz_report
from tests.differential.fuzz import CRD_GROUP, CRD_PLURALS, KINDS, NS2, FuzzNormaliser, Op, project, sequences
from tests.differential.harness import Backend, _fill, new_namespace, run

RECORD = os.environ.get("KUBELOOP_FUZZ_RECORD") == "1"
# A long run's end (Unix time, e.g. ``$(date -d 17:10 +%s)``): later examples are not played.
UNTIL = float(os.environ.get("KUBELOOP_FUZZ_UNTIL", "0"))
CRD = "CustomResourceDefinition"
CRD_CLEANUP = "customresourcecleanup.apiextensions.k8s.io"
# The default run (the README's test command, CI) plays the same sequences every time, so a red run means a
# change of ours; asking for a budget or a seed explores new ones.
EXPLORE = RECORD or "KUBELOOP_FUZZ_EXAMPLES" in os.environ
PHASES = (Phase.explicit, Phase.reuse, Phase.generate) + (() if RECORD else (Phase.shrink,))


async def _request(backend: Backend, op: Op, ns: str, marks: dict[str, Any]) -> dict[str, Any]:
    path, params = _fill(op.path, ns, marks), _fill(op.params, ns, marks)
    if op.special == "mark":
        status, body = await backend.request("GET", path)
        marks[f"mark:{op.kind}"] = ((body or {}).get("metadata") or {}).get("resourceVersion", "0")
        return {"status": status}
    if op.special.startswith("watch"):
        since = marks.get(f"mark:{op.kind}") if op.special == "watch" else None
        since = since or marks[f"start:{op.kind}"]
        status, events = await backend.watch(path, {**params, "resourceVersion": since}, idle=0.5)
        return {"status": status, "events": [e for e in events if e.get("type") != "BOOKMARK"]}
    if not op.paged:
        status, body = await backend.request(op.method, path, _fill(op.body, ns, marks), op.ct, params)
        if op.method == "DELETE" and status == 200 and op.label.startswith("deletecollection"):
            for item in (body or {}).get("items") or []:  # each as a delete of its own
                if not await _collected(backend, f"{path}/{item['metadata']['name']}"):
                    marks.setdefault("unsettled", "yes")
        elif op.method == "DELETE" and status == 200:
            if not await _collected(backend, path, gone=op.kind in ("Namespace", CRD)):
                marks.setdefault("unsettled", "yes")
        if op.kind == CRD and op.method == "POST" and status == 201:  # its cleanup finalizer comes with it
            await _established(backend, f"{path}/{body['metadata']['name']}")
        return {"status": status, "body": body}
    pages: list[dict[str, Any]] = []
    token = ""
    for _ in range(50):
        page = {**params, "limit": str(op.paged), **({"continue": token} if token else {})}
        status, body = await backend.request("GET", path, params=page)
        if status != 200:
            return {"status": status, "pages": pages}
        pages.append(body)
        token = body["metadata"].get("continue") or ""
        if not token:
            break
    return {"status": 200, "pages": pages}


async def _collected(backend: Backend, path: str, timeout: float = 30.0, gone: bool = False) -> bool:
    """Waits until the garbage collector has handled a deletion (its orphan or foregroundDeletion
    finalizer gone), and with ``gone`` (a namespace: emptied, then removed) until the object is gone
    or held only by other finalizers: the real controllers take their time, the fake's act at once,
    and the fuzzer compares what they settle to, not how fast. False: not settled within ``timeout``."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while loop.time() < deadline:
        status, body = await backend.request("GET", path)
        fins = set(((body or {}).get("metadata") or {}).get("finalizers") or []) if status == 200 else set()
        fins -= {CRD_CLEANUP}  # a CRD's goes once its custom resources are gone
        if not fins & {"orphan", "foregroundDeletion"} and (not gone or status == 404 or fins):
            return True
        await asyncio.sleep(0.05)
    return False


async def _established(backend: Backend, path: str, timeout: float = 30.0) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while loop.time() < deadline:
        status, body = await backend.request("GET", path)
        conditions = ((body or {}).get("status") or {}).get("conditions") or [] if status == 200 else []
        if any(c.get("type") == "Established" and c.get("status") == "True" for c in conditions) and \
                CRD_CLEANUP in ((body or {}).get("metadata") or {}).get("finalizers", []):
            return
        await asyncio.sleep(0.05)


async def play(backend: Backend, steps: list[Op], ns: str) -> list[Any]:
    """Runs a sequence in a fresh namespace (and its ``-x1`` sibling when used); projected outcomes. The
    steps after a deletion the server's controllers did not settle in time are marked (``UNSETTLED``)."""
    await run(backend, [], ns)
    if any(NS2 in s.path for s in steps):
        status, body = await backend.request("POST", "/api/v1/namespaces", {"metadata": {"name": _fill(NS2, ns, {})}})
        assert status == 201, body
    status, namespace = await backend.request("GET", f"/api/v1/namespaces/{ns}")
    marks = {"nsuid": namespace["metadata"]["uid"]}
    for kind in {s.kind for s in steps if s.special.startswith("watch")}:  # where a watch without a mark starts
        status, body = await backend.request("GET", KINDS[kind].base(ns))
        marks[f"start:{kind}"] = body["metadata"]["resourceVersion"]
    norm = FuzzNormaliser(ns)
    norm.text(marks["nsuid"])  # the namespace's uid is uid#1 on both
    out = []
    for s in steps:
        unsettled = "unsettled" in marks
        outcome = project(s, await _request(backend, s, ns, marks), norm)
        out.append({**outcome, UNSETTLED: True} if unsettled and isinstance(outcome, dict) else outcome)
    return out


# Marks an outcome that followed a deletion the server's controllers had not settled within the fuzzer's
# wait (30 s): on a loaded control plane (a long run's own namespace deletions keep its namespace
# controller busy) the real server is then mid-way where the fake is done. Counted apart, not compared.
UNSETTLED = "after-unsettled-deletion"


def explained(step: Op, fake: Any, real: Any, earlier: list[str]) -> str | None:
    """A difference the docs list as not modelled (counted apart, does not fail the test), or None."""
    if earlier:
        return "follows an earlier difference in the sequence"
    if step.label.startswith("apply") and step.kind in ("Pod", "Service"):
        return "apply merges containers/ports by key on the real server; the fake's field manager keeps lists atomic"
    if step.kind == "Deployment" and isinstance(fake, dict) and isinstance(real, dict) and fake.get("object") and \
            real.get("object") and {**fake["object"]["metadata"], "generation": 0} == \
            {**real["object"]["metadata"], "generation": 0}:
        return "generation moved by the revision annotation the real Deployment controller writes"
    return None


def _tally(steps: list[Op], fake: list[Any], real: list[Any]) -> list[str]:
    """Counts agreement per kind; returns the unexplained differences."""
    diffs: list[str] = []
    seen: list[str] = []
    fake, real = [_settled(o) for o in fake], [_settled(o) for o in real]
    for i, (step, (f, f_late), (r, r_late)) in enumerate(zip(steps, fake, real, strict=True)):
        per_kind = FUZZ["kinds"].setdefault(step.kind, [0, 0])
        per_kind[0] += 1
        if step.special.startswith("watch"):  # how many watches and events were compared (a figure for the docs)
            FUZZ["watches"] += 1
            FUZZ["watch_events"] += len(r.get("events") or []) if isinstance(r, dict) else 0
        if f == r:
            per_kind[1] += 1
            continue
        why = UNSETTLED_WHY if f_late or r_late else explained(step, f, r, seen)
        shown = f"step {i} {step!r}\n  fake: {f}\n  real: {r}"
        seen.append(shown)
        if why:
            FUZZ["explained"][why] = FUZZ["explained"].get(why, 0) + 1
            continue
        diffs.append(shown)
        label = f"{step.kind} {step.label}"
        FUZZ["labels"][label] = FUZZ["labels"].get(label, 0) + 1
    FUZZ["sequences"] += 1
    FUZZ["agreeing_sequences"] += fake == real
    return diffs


UNSETTLED_WHY = "after a deletion the real server's controllers had not settled within 30 s (the run's load)"


def _settled(outcome: Any) -> tuple[Any, bool]:
    """(the outcome without its UNSETTLED mark, whether it had one)."""
    if isinstance(outcome, dict) and UNSETTLED in outcome:
        return {k: v for k, v in outcome.items() if k != UNSETTLED}, True
    return outcome, False


@settings(max_examples=int(os.environ.get("KUBELOOP_FUZZ_EXAMPLES", "20")), deadline=None, phases=PHASES,
          derandomize=not EXPLORE,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                 HealthCheck.data_too_large])
@given(steps=sequences())
async def test_fuzzed_sequences_agree(steps: list[Op], fake: Backend, real: Backend) -> None:
    if UNTIL and time.time() > UNTIL:  # a long run's budget is spent: the remaining examples pass at once
        return
    ns_fake, ns_real = new_namespace(), new_namespace()
    got_fake = await play(fake, steps, ns_fake)
    got_real = await play(real, steps, ns_real)
    used = [ns_real] + ([_fill(NS2, ns_real, {})] if any(NS2 in s.path for s in steps) else [])
    if RECORD:  # a long run frees its Services' cluster IPs as it goes: thousands of namespaces' Services
        for ns in used:  # filled the local control plane's /24 service range (500 "range is full")
            await real.request("DELETE", f"/api/v1/namespaces/{ns}/services")
    # (A namespace deleted per sequence is no lighter: the real namespace controller then retries every one
    # whose objects keep a finalizer the sequence left, and its backlog delays the sequences' own namespace
    # deletions past the fuzzer's wait.)
    FUZZ["namespaces"] += used
    if any(s.kind == CRD for s in steps):  # deleted at the end of the session (cluster-wide: few of them)
        FUZZ["crds"] += [f"{p}.{_fill(CRD_GROUP, ns_real, {})}" for p in CRD_PLURALS]
    diffs = _tally(steps, got_fake, got_real)
    write_fuzz_report()
    if diffs and RECORD:  # the whole sequence, to replay it as a written one
        played = [f"  {i}: {s!r}" for i, s in enumerate(steps)]
        FUZZ["differences"].append("\n".join(diffs + ["sequence:", *played]))
    assert RECORD or not diffs, "\n".join(diffs)
