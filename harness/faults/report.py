"""docs/RELIABILITY.md from the results JSON: the table of figures, then what each scenario did."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from harness.faults.results import CONVERGENCE_BOUND_S, Row

HEADER = """# Reliability: what kubeloop loses and duplicates under faults

{claim} — with the figures to show it, produced by one command that anyone can run on a laptop
(it starts its own local control plane on 127.0.0.1 and wipes it afterwards):

```bash
{invocation}
```

Generated {date} on {machine}; kubeloop {kubeloop} ({git}), Kubernetes {kubernetes}, etcd {etcd},
kwok {kwok}, Python {python}, aiohttp {aiohttp}. Every scenario ran under each of the seeds {seeds}
(every random choice — storm, kill points, victims — follows the seed); {n} Widgets per synthetic
scenario, {bundled_n} objects per bundled-operator scenario, {kills} SIGKILL points.
`python -m harness.faults --full` is the full run (100 kill points); `--seeds`, `--n`, `--kills` scale it.

**The bound**: after any fault ends, every object converges within **{bound:g} s** (measured per object
from the end of the fault, or from the scenario's last change to it if later). A run past it fails,
even if nothing was lost.

"""

COLUMNS = """## The figures: the worst case over the seeds

Each cell is the worst value any seed produced; the verdict is ok only if every seed passed.

| scenario | operator | objects | never converged | duplicated | converge p99 (s) | converge max (s) | \
settled after last disturbance (s) | restarts | crashes | seeds passed | verdict |
|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|
"""

PER_SEED = """
## Per seed

| scenario | operator | seed | never converged | duplicated | converge p99 (s) | converge max (s) | verdict |
|---|---|---:|---:|---:|---:|---:|---|
"""

METHOD = """
## How to read it

- **never converged** must be 0: after the fault, every object reaches its desired state within the
  harness's deadline ({timeout:g} s; the bound above is the stricter test), checked with fresh LISTs
  (the ground truth), not the operator's cache.
  Objects the scenario deletes must be gone, finalizers released; leftovers count here.
- **duplicated** must be 0: side effects made twice. Synthetic: a Widget's ConfigMap created more than once
  (a new UID for the same Widget), a value going backwards (a stale write landing after a newer one), or a
  status write by a replica outside its leader term. immortal: more than one pod created per
  ImmortalContainer; copyrator: a copy created twice; reloader: more than one rollout (pod-template
  change) per Deployment; blackadder: a write to an object after it was restored.
- **converge p99 / max**: per object, seconds from the end of the fault (or from its last change by the
  scenario, if later) until the harness's own watch saw it converged. **settled after last disturbance**:
  from the end of the fault or the scenario's last write, whichever came later, until the last object
  converged (the storm often goes on after the fault, so this can be shorter than the max). The max
  is held to the bound; the rest are reported, not asserted (a 2-core machine: they are noisy).
- **restarts**: SIGKILLs the scenario dealt (each followed by a restart); **crashes**: operator exits
  nobody asked for — must be 0.
- Operators run as real processes (`kubeloop run …`) under their generated least-privilege RBAC, with a
  ServiceAccount token, exactly as in a cluster. The harness watches with its own admin client.

## The synthetic operator

`harness/faults/widget.py`: a `Widget` (`faults.kubeloop.dev/v1`) asks for one ConfigMap `<name>-w` holding
`spec.value`; the operator server-side-applies it (owned by the Widget), then writes
`status.observed = spec.value` guarded by the resourceVersion it read. A finalizer deletes the
ConfigMap first. The storm only ever raises `spec.value`, so any value going back down is a stale write.
"""


def _f(value: Any) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:.2f}"
    return str(value)


def _code(text: str) -> str:
    """The API server's words verbatim, as a code span: they hold regular expressions such as
    ``[01][0-9]`` that Markdown would read as reference links."""
    return "`" + text.replace("`", "'") + "`"


def _detail(value: Any) -> str:
    if isinstance(value, list | tuple):
        return ", ".join(_detail(v) for v in value)
    if isinstance(value, dict):
        return ", ".join(f"{k} {_detail(v)}" for k, v in value.items())
    return str(value).replace("|", "\\|")


def _verdict(r: Row) -> str:
    if r.ok:
        return "ok"
    if r.error:
        return "error: " + r.error[:80]
    return "**FAILED**" if r.within_bound else f"**FAILED** (over {CONVERGENCE_BOUND_S:g} s)"


def _worst(values: list[Any]) -> Any:
    present = [v for v in values if v is not None]
    return max(present) if present else None


def worst_case(rows: list[Row]) -> list[tuple[Row, int, int]]:
    """One row per (scenario, operator), in first-seen order: the worst of each figure over its seeds,
    with how many seeds passed out of how many ran."""
    groups: dict[tuple[str, str], list[Row]] = {}
    for r in rows:
        groups.setdefault((r.scenario, r.operator), []).append(r)
    out = []
    for (scenario, operator), runs in groups.items():
        worst = Row(scenario, operator, runs[0].fault, objects=max(r.objects for r in runs),
                    never_converged=max(r.never_converged for r in runs),
                    duplicates=max(r.duplicates for r in runs),
                    converge_p99_s=_worst([r.converge_p99_s for r in runs]),
                    converge_max_s=_worst([r.converge_max_s for r in runs]),
                    recovery_s=_worst([r.recovery_s for r in runs]), restarts=max(r.restarts for r in runs),
                    crashes=max(r.crashes for r in runs),
                    error=next((r.error for r in runs if r.error), None))
        out.append((worst, sum(r.ok for r in runs), len(runs)))
    return out


def render(data: dict[str, Any]) -> str:
    meta = data.get("meta", {})
    versions = meta.get("versions", {})
    size = meta.get("size", {})
    machine = meta.get("machine", {})
    rows = [Row.from_dict(r) for r in data.get("results", [])]
    seeds = meta.get("seeds") or sorted({r.seed for r in rows if r.seed is not None}) or [size.get("seed", "?")]
    failed = [r for r in rows if not r.ok]
    claim = ("**Nothing**, in every scenario below, under every seed" if rows and not failed else
             f"**{len(failed)} scenario run(s) below failed** (see the verdicts)")
    out = [HEADER.format(claim=claim, invocation=meta.get("invocation", "python -m harness.faults"),
                         date=meta.get("date", "?"),
                         machine=f"{machine.get('cpus', '?')} CPUs ({machine.get('platform', '?')})",
                         git=meta.get("git", "?"), seeds=", ".join(map(str, seeds)), n=size.get("n", "?"),
                         bundled_n=size.get("bundled_n", "?"), kills=size.get("kills", "?"),
                         bound=CONVERGENCE_BOUND_S,
                         **{k: versions.get(k, "?") for k in
                            ("kubeloop", "kubernetes", "etcd", "kwok", "python", "aiohttp")})]
    out.append(f"**{len(rows) - len(failed)} of {len(rows)} scenario runs passed** (0 never converged, "
               f"0 duplicated, 0 crashes, every object within {CONVERGENCE_BOUND_S:g} s).\n\n"
               if rows else "No results.\n\n")
    out.append(COLUMNS)
    for r, passed, ran in worst_case(rows):
        verdict = "ok" if passed == ran else _verdict(r) if not r.ok else "**FAILED**"
        out.append(f"| {r.scenario} | {r.operator} | {r.objects} | {r.never_converged} | {r.duplicates} | "
                   f"{_f(r.converge_p99_s)} | {_f(r.converge_max_s)} | {_f(r.recovery_s)} | {r.restarts} | "
                   f"{r.crashes} | {passed}/{ran} | {verdict} |\n")
    out.append(PER_SEED)
    for r in rows:
        out.append(f"| {r.scenario} | {r.operator} | {_f(r.seed)} | {r.never_converged} | {r.duplicates} | "
                   f"{_f(r.converge_p99_s)} | {_f(r.converge_max_s)} | {_verdict(r)} |\n")
    out.append(METHOD.format(timeout=size.get("timeout", 180)))
    out.append("\n## Each scenario: the fault, and what else was measured\n\n")
    for r in rows:
        details = "; ".join(f"{k}: {_detail(v)}" for k, v in r.details.items() if k != "cases") or "–"
        seed = f", seed {r.seed}" if r.seed is not None else ""
        out.append(f"- **{r.scenario}** ({r.operator}{seed}, {r.seconds:g} s): {r.fault}. {details}\n")
    out.append(NOTES)
    out.append(BAD_INPUT)
    cases = next((r.details.get("cases") for r in rows if r.scenario == "invalid-objects"), None)
    if cases:
        out.append("\n| invalid object | refused | naming | the API server said |\n|---|---|---|---|\n")
        for c in cases:
            said = c["message"].split(" is invalid: ", 1)[-1].lstrip("[").replace("|", "\\|")
            said = said.split(", <nil>: Invalid value: null: some validation rules were not checked")[0]
            out.append(f"| {c['case']} | {'yes' if c['refused'] else '**no**'} | "
                       f"{'`' + c['field'] + '`' if c['named'] else '**not named**'} | {_code(said[:160])} |\n")
    if rows:
        out.append("\nOperator logs of each run go to a temporary folder (`--log-dir` keeps them); they are "
                   "not kept in the repository.\n")
    return "".join(out)


NOTES = """
## Findings behind the figures

- **What produces the 410.** Compacting etcd alone (`etcd-compaction`) does not make a resuming watch
  fail: the API server's watch cache still holds the events and serves the resume (`resume_probe`), so
  the operator reconnects without relisting (`relists_410: 0`). The 410 Gone comes from the watch cache,
  not from etcd: after an API server restart (`etcd-compaction+restart`, `apiserver-restart`) the fresh
  cache starts at etcd's current revision and refuses older ones ("too old resource version"); the
  informer relists and converges. A CRD deleted and created again (`crd-recreate`) does the same for its
  resource. Recovery after a long cut-off is bounded by the reconnect backoff the watcher accumulated
  meanwhile (client-go's reflector: 0.8 s doubling to 30 s, jittered).
- **When a restart ends.** kube-apiserver answers /readyz before it admits everything again: its
  OwnerReferencesPermissionEnforcement plugin maps an owner's kind through a discovery RESTMapper that
  k8s.io/apiserver (`pkg/server/options/admission.go`) resets every 30 s, and a restarted server can
  refuse a blocking owner reference to a CRD kind ("cannot find RESTMapping") until the next reset. Seen
  in CI: 30 s of such 403s after a ready server. The harness restarts the server, then probes as the
  operator (a server-side dry-run create of a ConfigMap owned by a Widget) and ends the fault when the
  server admits it; `owner_refs_refused_after_ready_s` is that wait. The operator retries these 403s as
  transient (at most 8 s apart), so it follows within seconds.
- **Half-open connections.** Two kinds. A path that silently drops packets (a node gone, a NAT entry
  expired) is noticed by the kernel: every connection has TCP keepalive (4 s idle, 3 probes 2 s apart)
  and a 10 s user timeout, so a quiet watch on it fails in 10–12 s (a unit test takes loopback down
  under an open watch in a network namespace of its own) instead of at its inactivity timeout
  (`--watch-inactivity-timeout`, default 330 s). A peer whose kernel still answers but whose program
  went mute — what `half-open` does, with a proxy that stops relaying — passes those checks. Requests in
  flight on such connections used to wait out the 60 s request timeout (`half-open` converged in 61 s);
  HTTP/1.1 has no ping, so now a request for one object that has had no answer for 8 s while the API
  server answers `GET /version` on a new connection within 3 s is taken to sit on a dead path, and the
  client closes every connection of that pool: its requests fail and are retried or requeued, its
  watches reopen at once. A server that does not answer the probe either is slow, not cut off: its
  requests keep their timeout. (client-go's HTTP/2 health check: ~45 s, 30 s read-idle + 15 s ping.) A
  watch on a mute connection with no request in flight is still caught only by its inactivity timeout
  (5 s in `half-open`, where the storm never leaves a live watch silent that long): the API server sends
  a bookmark about once a minute, so that default cannot safely go much below ~70 s. A watch *opened*
  on a dead pooled connection is different: the API server answers a watch's headers at once, so until
  they arrive the watch is judged like a request (the 8 s check), and one that times out before them
  condemns the pool as well when the probe is answered; before that, each reopened watch took the next
  dead connection of the pool in turn (`half-open` with 40 widgets converged in 23–25 s; now 14 s).
- **Leader takeover** after a SIGKILL takes the lease duration (15 s, controller-runtime's default) plus a
  retry period: the standby must not act before the dead leader's lease expires (`takeover_s`). No status
  write by a replica outside its own term was seen (`writes_outside_own_term`).
- **RBAC revoked at runtime**: every 403 is one log line naming the verb and resource with what to do (it
  was a full traceback per retry, thousands of lines in seconds); the operator keeps running (no crash
  loop, no restart) and recovers once the permission is back. Failures about the environment — 401/403,
  409, 429, 5xx, lost connections — now retry on their own short schedule (5 ms doubling to 8 s,
  jittered) instead of the per-object exponential backoff (capped at 300 s), which is kept for errors
  about the object. Before, keys that failed a dozen times during the 8 s outage waited up to 160 s after
  it ended, with no event to wake them (`rbac-revoke-write` failed under seeds 42 and 7). Losing
  list/watch on an owned kind does not stop the primary objects from converging; hand edits of the owned
  objects are reverted once the watch is back.
- **A namespace deleted under the operator** (`namespace-delete`) failed under seeds 42, 7 and 1234
  with a few Widgets "never converged" and the namespace reported gone after ~193 s. Both were the
  harness's: a storm round still in flight when the namespace was deleted patched some of its Widgets
  after the harness had written them off, which made them "expected to converge" again; they went with
  their namespace (the operator had released every finalizer within seconds), so they counted as never
  converged, and `namespace_gone_s` was taken after the harness's 180 s wait for them. A late write no
  longer revives a written-off Widget, and the namespace's deletion time is taken when it goes.
- **Conflicts and throttling** cost retries, not correctness: 409s are retried from a fresher cache
  (`operator_409s`), 429s wait at least their Retry-After, plus a jittered backoff that grows with
  each attempt so requests throttled together do not all come back together (`operator_429s`; the
  `test_throttling` integration test found the lockstep), and the lease survives throttling.
- **Finalizer patches on a stale cache** were logged as a `422 Invalid` with a traceback (a JSON patch
  `test` op failing); they are conflicts and are now reported and retried as such.
- **Status counters are best effort under SIGKILL**: blackadder restores every object exactly once, but its
  `status.counters` are written after the actions, so restorations done just before a kill are not counted
  (see `counters` of `blackadder-restore`: the objects themselves are all back, as the figures show).
"""


BAD_INPUT = """
## Bad input

`tests/integration/test_bad_input.py` (run by `python -m pytest`) covers three kinds:

- **Invalid custom resources** are refused by the API server with the field path, from the CRDs kubeloop
  generates (structural schema, enums, bounds, patterns, and CEL: a label-selector requirement must have
  values for `In`/`NotIn` and none for `Exists`/`DoesNotExist`, as the API server demands of its own
  selectors). The table (`harness/faults/badinput.py`) as this run's cluster answered it is below; in the figures
  above, "never converged" of `invalid-objects` counts objects *not* refused with their field named.
- **Odd but valid objects**, generated with hypothesis (unicode everywhere, missing optional fields, lists of
  hundreds of items, an ImmortalContainer of ~1.4 MiB, pod annotations over the 256 KiB limit, ConfigMaps
  of ~1 MiB, references to ConfigMaps that do not exist): immortal, copyrator and reloader keep every
  informer and worker alive, report the problem (a `ReplicaFailure`/`FailedCreate` condition, a
  `ReloadSourceMissing` event) and still serve a canary object created afterwards.
  `KUBELOOP_FUZZ_EXAMPLES` scales the number of examples (default 6 per operator, derandomized).
- **Hostile configuration**: a ChaosAgent with every mode on, eagerness 100 and no exclusion picks no
  victim in `kube-system`, `kube-public`, `kube-node-lease`, the operator's own namespace or a namespace
  annotated `blackadder.io/exclude`; a CopyratorRule aimed at a Secret without the owner's consent copies
  nothing and reports `NoConsent` (and copies it once consent is given); a Deployment whose rollouts rewrite
  its own ConfigMap is rolled a few times, then reloader records the change without rolling and says so
  with a `ReloadLoop` Warning (`--loop-rollouts`, `--loop-window-seconds`).
"""


def write(data: dict[str, Any], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render(data))


if __name__ == "__main__":  # pragma: no cover
    import sys
    write(json.loads(Path(sys.argv[1]).read_text()), Path(sys.argv[2]))
