"""The bundled operators under the faults that matter for each, run as ``kubeloop run NAME`` processes
under their generated RBAC, SIGKILLed at seeded random points and restarted:

- immortal: a burst of ImmortalContainers → exactly one pod per CR, created once;
- copyrator: copies made, updated and removed mid-way → every copy once, no orphans;
- reloader: ConfigMaps changed while it is down → exactly one rollout per Deployment;
- blackadder: chaos switched off while it is down → everything restored, once.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
from collections.abc import Awaitable, Callable
from typing import Any

from harness.common.concurrency import bounded
from harness.common.listwatch import ListWatch, key_of
from harness.common.stats import percentile
from harness.faults.env import Env, OperatorProcess, OperatorSetup, now, retrying
from harness.faults.observe import follow
from harness.faults.results import Row
from harness.faults.rig import Size
from harness.faults.scenarios import Spec
from kubeloop.builder import Operator
from kubeloop.client import ApiError, NotFound
from kubeloop.client.wait import wait_for_deletion

Obj = dict[str, Any]


class Rig:
    """A bundled operator as a process, with its namespaces; cleaned up on exit."""

    def __init__(self, env: Env, size: Size, scenario: str, operator: Operator, target: str,
                 namespaces: int = 1, labels: dict[str, str] | None = None) -> None:
        self.env, self.size, self.scenario, self.operator, self.target = env, size, scenario, operator, target
        self.count, self.labels = namespaces, labels or {}
        self.namespaces: list[str] = []
        self.setup: OperatorSetup | None = None
        self.proc: OperatorProcess | None = None
        self.follows: list[ListWatch] = []
        self.rng = random.Random(size.seed)
        self.started = now()

    async def __aenter__(self) -> Rig:
        env = self.env
        try:
            op_ns = await env.namespace(env.name(f"fo-{self.scenario}"))
            self.namespaces = [await env.namespace(env.name(f"fb-{self.scenario}-{i}"), self.labels)
                               for i in range(self.count)]
            self.setup = await env.install(self.operator, op_ns, rbac_name=f"faults-{self.scenario}")
        except BaseException:
            await self.__aexit__()
            raise
        return self

    async def __aexit__(self, *exc: object) -> None:
        with contextlib.suppress(Exception):
            await self.cleanup_hook()  # while the operator still runs (finalizers)
        if self.proc:
            with contextlib.suppress(Exception):
                await self.proc.stop()
        for view in self.follows:
            await view.stop()
        await self.env.delete_namespaces(self.namespaces)
        if self.setup:
            await self.env.remove_crds(self.setup.new_crds)
            await self.env.remove_setup(self.setup)

    async def cleanup_hook(self) -> None:
        return None

    async def start(self, *args: str, env: dict[str, str] | None = None) -> OperatorProcess:
        assert self.setup is not None
        tag = f"{self.scenario}-{self.target.rsplit('.', 1)[-1]}"
        self.proc = self.env.process(self.setup, self.target, tag, args=args, env=env)
        await self.proc.start()
        await self.proc.wait_ready()
        return self.proc

    async def follow(self, resource: Any, namespace: str | None = None, label_selector: str | None = None,
                     handler: Callable[[str, Obj, float], None] = lambda *a: None) -> ListWatch:
        view = follow(self.env.admin, resource, handler, namespace=namespace, label_selector=label_selector)
        view.start()
        await asyncio.wait_for(view.synced.wait(), 60)
        self.follows.append(view)
        return view

    async def kill_points(self, kills: int, during: Callable[[], Awaitable[Any]] | None = None,
                          spread: float = 2.0) -> float:
        """SIGKILL + immediate restart ``kills`` times, at seeded random moments (optionally while
        ``during`` runs); returns when the last restart happened."""
        assert self.proc is not None
        task = asyncio.create_task(during()) if during else None
        last = now()
        for _ in range(kills):
            await asyncio.sleep(self.rng.uniform(0.0, spread))
            await self.proc.restart()
            last = now()
        if task:
            await task
        await self.proc.wait_ready()
        return last

    async def converge(self, check: Callable[[], Awaitable[dict[str, bool]]], fault_end: float,
                       row: Row) -> Row:
        """Polls ``check`` (key → converged) until all are, or the deadline; fills the timing columns."""
        done: dict[str, float] = {}
        state: dict[str, bool] = {}
        deadline = now() + self.size.timeout
        while now() < deadline:
            with contextlib.suppress(ApiError, OSError):
                state = await check()
                t = now()
                for key, ok in state.items():
                    if ok:
                        done.setdefault(key, t)
                    else:
                        done.pop(key, None)
                if state and all(state.values()):
                    break
            await asyncio.sleep(0.25)
        lags = [max(0.0, t - fault_end) for t in done.values()]
        row.objects = len(state)
        row.never_converged = sum(1 for ok in state.values() if not ok)
        row.converge_p99_s = _r(percentile(lags, 99))
        row.converge_max_s = _r(max(lags) if lags else None)
        row.recovery_s = row.converge_max_s if not row.never_converged else None
        if self.proc:
            row.restarts, row.crashes = self.proc.kills, self.proc.crashes
        row.seconds = round(now() - self.started, 1)
        if row.never_converged:
            row.details["not_converged"] = [k for k, ok in state.items() if not ok][:5]
        return row


def _r(value: float | None) -> float | None:
    return None if value is None else round(value, 2)


# --- immortal ---------------------------------------------------------------------------------------------


async def immortal_sigkill(env: Env, size: Size) -> list[Row]:
    from kubeloop.operators.immortal import ImmortalContainer, operator
    from kubeloop.operators.immortal import pods as podlib

    ic_res = ImmortalContainer.resource()
    kills = max(2, size.kills // 2)
    row = Row("immortal-sigkill", "immortal", f"operator SIGKILLed at {kills} random points during a burst of "
                                              "ImmortalContainer creates")
    async with Rig(env, size, "immortal", operator, "immortal") as rig:
        ns = rig.namespaces[0]
        pod_uids: dict[str, set[str]] = {}

        def on_pod(etype: str, pod: Obj, t: float) -> None:
            if etype != "DELETED":
                pod_uids.setdefault(pod["metadata"]["name"], set()).add(pod["metadata"]["uid"])

        await rig.follow("pods", ns, handler=on_pod)
        await rig.start("--namespace", ns)
        names = [f"ic-{i:03d}" for i in range(size.bundled_n)]

        async def burst() -> None:  # spread over the kill window, in small bursts
            for i in range(0, len(names), 5):
                await bounded(names[i:i + 5], lambda n: retrying(lambda: env.admin.create({
                    "apiVersion": ic_res.api_version, "kind": "ImmortalContainer",
                    "metadata": {"name": n, "namespace": ns}, "spec": {"image": "nginx:latest"}})), 5)
                await asyncio.sleep(kills * 0.75 * 5 / len(names))

        fault_end = await rig.kill_points(kills, burst, spread=1.5)

        async def check() -> dict[str, bool]:
            ics = {o["metadata"]["name"]: o for o in (await env.admin.list(ic_res, ns))["items"]}
            pods = {o["metadata"]["name"]: o for o in (await env.admin.list("pods", ns))["items"]}
            out = {}
            for name in names:
                ic, pod = ics.get(name), pods.get(podlib.pod_name(name))
                status = (ic or {}).get("status") or {}
                out[name] = bool(ic and pod and status.get("podUID") == pod["metadata"]["uid"]
                                 and pod["metadata"]["ownerReferences"][0]["uid"] == ic["metadata"]["uid"])
            row.details["start_times"] = sorted({(((ics.get(n) or {}).get("status") or {}).get("startTimes") or 0)
                                                 for n in names})
            return out

        await rig.converge(check, fault_end, row)
        extra_pods = sum(len(uids) - 1 for uids in pod_uids.values() if len(uids) > 1)
        row.duplicates = extra_pods
        row.details["pods_created"] = sum(len(u) for u in pod_uids.values())
        one_each = not extra_pods and len(pod_uids) == len(names)
        row.details["pods_per_cr"] = "exactly 1" if one_each else "see pods_created"
        await env.admin.delete_collection(ic_res, ns)
    return [row]


# --- copyrator --------------------------------------------------------------------------------------------


async def copyrator_restart(env: Env, size: Size) -> list[Row]:
    from kubeloop.operators.copyrator import operator
    from kubeloop.operators.copyrator.models import CopyratorRule
    from kubeloop.operators.copyrator.plan import RULE_ANNOTATION, RULE_LABEL

    kills = max(2, size.kills // 2)
    targets = 5
    sources = max(2, size.bundled_n // targets)
    row = Row("copyrator-restart", "copyrator", f"operator SIGKILLed at {2 * kills} points while {sources} sources "
                                                f"are copied into {targets} namespaces, updated, and one deleted")
    async with Rig(env, size, "copyrator", operator, "copyrator", namespaces=1 + targets) as rig:
        src, dests = rig.namespaces[0], rig.namespaces[1:]
        label = f"faults-copy-{env.run_id}"
        for ns in dests:
            await env.admin.patch("namespaces", ns, {"metadata": {"labels": {label: "yes"}}})
        copy_uids: dict[str, set[str]] = {}

        def on_copy(etype: str, cm: Obj, t: float) -> None:
            if etype != "DELETED":
                copy_uids.setdefault(key_of(cm), set()).add(cm["metadata"]["uid"])

        await rig.follow("configmaps", None, label_selector=RULE_LABEL, handler=on_copy)
        data = {f"src-{i}": {"v": "0", "unicode": "ü→✓"} for i in range(sources)}
        for name, d in data.items():
            await env.admin.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {
                "name": name, "namespace": src, "labels": {"faults-copy": "yes"}}, "data": d})
        await rig.start("--namespace", src)
        rule = {"apiVersion": CopyratorRule.resource().api_version, "kind": "CopyratorRule",
                "metadata": {"name": "rule", "namespace": src}, "ruleType": "configmap",
                "selector": {"faults-copy": "yes"}, "namespace": src,
                "namespaceSelector": {"matchLabels": {label: "yes"}}}
        await env.admin.create(rule)
        await rig.kill_points(kills, spread=1.0)
        doomed = "src-0"

        async def churn() -> None:
            for round_ in range(1, 4):
                for name in data:
                    if name == doomed and round_ > 1:
                        continue
                    data[name] = {"v": str(round_), "unicode": "ü→✓" * round_}
                    await retrying(lambda n=name: env.admin.patch("configmaps", n, {"data": data[n]}, src))
                if round_ == 1:
                    data.pop(doomed)
                    await retrying(lambda: env.admin.delete("configmaps", doomed, src))
                await asyncio.sleep(0.7)

        fault_end = await rig.kill_points(kills, churn, spread=1.2)
        want = {f"{ns}/{name}": d for ns in dests for name, d in data.items()}

        async def check() -> dict[str, bool]:
            copies = {key_of(c): c for c in (await env.admin.list("configmaps", label_selector=RULE_LABEL))["items"]
                      if (c["metadata"].get("annotations") or {}).get(RULE_ANNOTATION) == f"{src}/rule"}
            out = {key: (copies.get(key) or {}).get("data") == d for key, d in want.items()}
            orphans = [k for k in copies if k not in want]
            for k in orphans:
                out[f"orphan:{k}"] = False
            return out

        await rig.converge(check, fault_end, row)
        row.duplicates = sum(len(u) - 1 for u in copy_uids.values() if len(u) > 1)
        row.details["copies"] = len(want)
        row.details["copies_created"] = sum(len(u) for k, u in copy_uids.items() if k.split("/")[0] in dests)
        with contextlib.suppress(ApiError, AssertionError):  # the finalizer removes the copies while it runs
            await env.admin.delete(CopyratorRule.resource(), "rule", src)
            await wait_for_deletion(env.admin, CopyratorRule.resource(), "rule", src, timeout=30)
    return [row]


# --- reloader ---------------------------------------------------------------------------------------------


async def reloader_down(env: Env, size: Size) -> list[Row]:
    from kubeloop.operators.reloader import operator
    from kubeloop.operators.reloader.policy import HASH, TEMPLATE_HASH

    kills = max(2, size.kills // 2)
    count = max(2, size.bundled_n // 2)
    row = Row("reloader-down", "reloader", f"every ConfigMap changed (half twice) while the operator is down; "
                                           f"then SIGKILLed at {kills} points during the rollouts")
    async with Rig(env, size, "reloader", operator, "reloader") as rig:
        ns = rig.namespaces[0]
        templates: dict[str, set[str]] = {}

        def on_deploy(etype: str, dep: Obj, t: float) -> None:
            if etype != "DELETED":
                value = ((dep["spec"]["template"].get("metadata") or {}).get("annotations") or {}).get(TEMPLATE_HASH)
                if value:
                    templates.setdefault(dep["metadata"]["name"], set()).add(value)

        names = [f"app-{i:03d}" for i in range(count)]
        for name in names:
            await env.admin.create({"apiVersion": "v1", "kind": "ConfigMap",
                                    "metadata": {"name": f"{name}-conf", "namespace": ns}, "data": {"conf": "v0"}})
            await env.admin.create({
                "apiVersion": "apps/v1", "kind": "Deployment",
                "metadata": {"name": name, "namespace": ns, "annotations": {"reloader.stakater.com/auto": "true"}},
                "spec": {"replicas": 1, "selector": {"matchLabels": {"app": name}},
                         "template": {"metadata": {"labels": {"app": name}}, "spec": {"containers": [{
                             "name": "app", "image": "nginx",
                             "envFrom": [{"configMapRef": {"name": f"{name}-conf"}}]}]}}}})
        await rig.follow("deployments.apps", ns, handler=on_deploy)
        await rig.start("--namespace", ns, "--debounce-seconds", "1")

        async def recorded() -> dict[str, bool]:
            deps = {d["metadata"]["name"]: d for d in (await env.admin.list("deployments.apps", ns))["items"]}
            return {n: HASH in (deps[n]["metadata"].get("annotations") or {}) for n in names}

        deadline = now() + size.timeout
        while not all((await recorded()).values()) and now() < deadline:
            await asyncio.sleep(0.3)
        first = {d["metadata"]["name"]: d["metadata"]["annotations"].get(HASH)
                 for d in (await env.admin.list("deployments.apps", ns))["items"]}
        assert rig.proc is not None
        await rig.proc.kill()
        for i, name in enumerate(names):
            for version in (("v1", "v2") if i % 2 else ("v1",)):
                await env.admin.patch("configmaps", f"{name}-conf", {"data": {"conf": version}}, ns)
        await rig.proc.start()
        fault_end = await rig.kill_points(kills, spread=1.5)

        async def check() -> dict[str, bool]:
            deps = {d["metadata"]["name"]: d for d in (await env.admin.list("deployments.apps", ns))["items"]}
            out = {}
            for n in names:
                meta, tmpl = deps[n]["metadata"], deps[n]["spec"]["template"].get("metadata") or {}
                recorded_hash = (meta.get("annotations") or {}).get(HASH)
                out[n] = (recorded_hash != first.get(n) and (tmpl.get("annotations") or {}).get(TEMPLATE_HASH)
                          == recorded_hash)
            return out

        await rig.converge(check, fault_end, row)
        await asyncio.sleep(3)  # a late duplicate rollout would show up here
        row.duplicates = sum(len(v) - 1 for v in templates.values() if len(v) > 1)
        row.details["rollouts"] = sum(len(v) for v in templates.values())
        row.details["deployments"] = count
    return [row]


# --- blackadder -------------------------------------------------------------------------------------------


async def blackadder_restore(env: Env, size: Size) -> list[Row]:
    from kubeloop.operators.blackadder import ChaosAgent, ChaosAgentV1Beta1, operator
    from kubeloop.operators.blackadder.marks import AGENT

    kills = max(2, size.kills // 2)
    count = max(2, size.bundled_n // 3)
    agent_res = ChaosAgent.resource()
    agent = env.name("faults-agent")
    row = Row("blackadder-restore", "blackadder", f"chaos (ipsum + cancer) switched off while the operator is down; "
                                                  f"SIGKILLed at {kills} points while it restores")
    label = f"faults-chaos-{env.run_id}"

    class BRig(Rig):
        async def cleanup_hook(self) -> None:
            with contextlib.suppress(ApiError):
                await env.admin.delete(agent_res, agent)
            if self.proc and not self.proc.running:
                return
            for _ in range(40):  # the finalizer restores and lets go while the operator runs
                try:
                    await env.admin.get(agent_res, agent)
                except NotFound:
                    break
                await asyncio.sleep(0.5)

    async with BRig(env, size, "blackadder", operator, "harness.faults.blackadder_scoped",
                    labels={label: "yes"}) as rig:
        ns = rig.namespaces[0]
        writes_after_restore: dict[str, int] = {}
        restored: set[str] = set()
        originals = {f"cm-{i:03d}": {"k": f"original {i} ✓"} for i in range(count)}

        def on_cm(etype: str, cm: Obj, t: float) -> None:
            name = cm["metadata"]["name"]
            if etype == "DELETED" or name not in originals:
                return
            clean = cm.get("data") == originals[name] and AGENT not in (cm["metadata"].get("labels") or {})
            if name in restored:
                writes_after_restore[name] = writes_after_restore.get(name, 0) + 1
            elif clean and chaos_seen.get(name):
                restored.add(name)
            if not clean:
                chaos_seen[name] = True

        chaos_seen: dict[str, bool] = {}
        for name, d in originals.items():
            await env.admin.create({"apiVersion": "v1", "kind": "ConfigMap",
                                    "metadata": {"name": name, "namespace": ns, "labels": {"chaos": "faults"}},
                                    "data": d})
        await env.admin.create({
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "victim", "namespace": ns, "labels": {"chaos": "faults"}},
            "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "victim"}},
                     "template": {"metadata": {"labels": {"app": "victim"}},
                                  "spec": {"containers": [{"name": "app", "image": "nginx"}]}}}})
        await rig.follow("configmaps", ns, handler=on_cm)
        await rig.start("--operator-namespace", rig.setup.namespace if rig.setup else "",
                        env={"FAULTS_AGENT_SELECTOR": f"{label}=yes"})
        await env.admin.create({
            "apiVersion": agent_res.api_version, "kind": "ChaosAgent",
            "metadata": {"name": agent, "labels": {label: "yes"}},
            "spec": {"ipsumMode": True, "cancerMode": True, "eagerness": 100, "pauseDuration": 3600,
                     "seed": size.seed, "namespaceSelector": {"matchLabels": {label: "yes"}},
                     "configMapSelector": {"matchLabels": {"chaos": "faults"}},
                     "deploymentSelector": {"matchLabels": {"chaos": "faults"}}}})

        async def held() -> int:
            cms = (await env.admin.list("configmaps", ns, label_selector=AGENT))["items"]
            deps = (await env.admin.list("deployments.apps", ns, label_selector=AGENT))["items"]
            return len(cms) + len(deps)

        deadline = now() + size.timeout
        while await held() < count + 1 and now() < deadline:
            await asyncio.sleep(0.3)
        row.details["held_by_chaos"] = await held()
        assert rig.proc is not None
        await rig.proc.kill()
        # Through the storage version (v1beta1, the same field names): while no process serves blackadder's
        # conversion webhook, requests in the versions it converts fail, and this one comes while it is down.
        await env.admin.patch(ChaosAgentV1Beta1.resource(), agent, {"spec": {"ipsumMode": False, "cancerMode": False}})
        await rig.proc.start()
        fault_end = await rig.kill_points(kills, spread=1.0)

        async def check() -> dict[str, bool]:
            cms = {c["metadata"]["name"]: c for c in (await env.admin.list("configmaps", ns))["items"]}
            out = {n: cms[n].get("data") == d and AGENT not in (cms[n]["metadata"].get("labels") or {})
                   for n, d in originals.items()}
            dep = await env.admin.get("deployments.apps", "victim", ns)
            labels = dep["metadata"].get("labels") or {}
            out["deployment/victim"] = dep["spec"]["replicas"] == 1 and AGENT not in labels
            return out

        await rig.converge(check, fault_end, row)
        await asyncio.sleep(2)
        row.duplicates = sum(writes_after_restore.values())
        status = (await env.admin.get(agent_res, agent)).get("status") or {}
        row.details["counters"] = status.get("counters")
    return [row]


# --- bad input ---------------------------------------------------------------------------------------------


async def invalid_objects(env: Env, size: Size) -> list[Row]:
    """The table of faults.badinput against this cluster: every invalid object refused, naming the field."""
    from harness.faults.badinput import check_all
    from kubeloop.operators.blackadder import build_operator as blackadder
    from kubeloop.operators.copyrator import operator as copyrator
    from kubeloop.operators.immortal import operator as immortal
    from kubeloop.testing.operator import install_crds

    started = now()
    operators = (immortal, copyrator, blackadder())
    added = [name for op in operators for name in await env.missing_crds(op)]
    for op in operators:
        await retrying(lambda o=op: install_crds(env.admin, o))
    ns = await env.namespace(env.name("fb-invalid"))
    try:
        results = await check_all(env.admin, ns)
    finally:
        await env.delete_namespaces([ns])
        await env.remove_crds(added)
    row = Row("invalid-objects", "immortal,copyrator,blackadder",
              "invalid custom resources (dry-run creates): each must be refused by the API server, naming the field")
    row.objects = len(results)
    row.never_converged = sum(1 for r in results if not r["named"])
    row.details["refused_naming_the_field"] = f"{len(results) - row.never_converged}/{len(results)}"
    row.details["cases"] = results
    row.seconds = round(now() - started, 1)
    return [row]


BUNDLED_SCENARIOS: list[Spec] = [
    Spec("immortal-sigkill", immortal_sigkill, ("immortal",), False, "SIGKILL mid-burst: one pod per CR"),
    Spec("copyrator-restart", copyrator_restart, ("copyrator",), False, "restarts mid-way: no orphans/duplicates"),
    Spec("reloader-down", reloader_down, ("reloader",), False, "changes while down: exactly one rollout"),
    Spec("blackadder-restore", blackadder_restore, ("blackadder",), False, "restore after restart"),
    Spec("invalid-objects", invalid_objects, ("immortal", "copyrator", "blackadder"), False,
         "invalid custom resources refused with field paths"),
]
