"""``kubeloop deploy|undeploy``: an operator's manifests onto a cluster with server-side apply, and
back off again without touching what users made.

Undeploy deletes only objects this tool applied (their managedFields name ``kubeloop-deploy``) and by
UID precondition, so a same-named object someone else created is never removed. CRDs go only with
``delete_crds``, the namespace (with whatever else lives in it) only with ``delete_namespace``.

The operator's custom resources are deleted first, while the operator still runs: it holds finalizers on
them, and once it is gone nothing would release them — deleting one later (or its namespace, or the
CRD) would hang forever. If they are still terminating at the deadline, undeploy stops before removing
the operator and says which object holds which finalizer and how to release it; with
``force_finalizers`` it removes the operator's own finalizers itself. Other controllers' finalizers are
never touched.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from kubeloop.client import Client, Conflict, NotFound
from kubeloop.client.wait import wait_for, wait_for_crd, wait_for_deletion
from kubeloop.helpers.finalizers import remove_finalizer
from kubeloop.resources.manifests import KIND_ORDER

FIELD_MANAGER = "kubeloop-deploy"
PART_OF = "app.kubernetes.io/part-of"
Log = Callable[[str], None]


def _rank(obj: dict[str, Any]) -> int:
    return KIND_ORDER.index(obj["kind"]) if obj["kind"] in KIND_ORDER else len(KIND_ORDER)


def describe(obj: dict[str, Any]) -> str:
    meta = obj["metadata"]
    where = f"{meta['namespace']}/" if meta.get("namespace") else ""
    return f"{obj['kind']} {where}{meta['name']}"


def ref_of(obj: dict[str, Any]) -> str:
    """The client's reference for an object's resource: ``apiVersion/Kind``."""
    return f"{obj['apiVersion']}/{obj['kind']}"


def crd_ref(crd: dict[str, Any]) -> str:
    """The client's reference for a CRD's objects in its storage version (``group/version/plural``):
    reading them in another version would need the operator's conversion webhook, which may be gone."""
    spec = crd["spec"]
    storage = next((v["name"] for v in spec["versions"] if v.get("storage")), spec["versions"][0]["name"])
    return f"{spec['group']}/{storage}/{spec['names']['plural']}"


def kubectl_resource(ref: str) -> str:
    """``group/version/plural`` as kubectl names it (``plural.version.group``); other forms as they are."""
    if ref.count("/") != 2:
        return ref
    group, version, plural = ref.split("/")
    return f"{plural}.{version}.{group}"


def deployed_by_us(obj: dict[str, Any]) -> bool:
    return any(m.get("manager") == FIELD_MANAGER for m in obj["metadata"].get("managedFields") or [])


def labelled(obj: dict[str, Any], part_of: str) -> dict[str, Any]:
    """``obj`` with the ``app.kubernetes.io/part-of`` label. Besides grouping the objects, it gives
    this field manager a field on every object: an apply that sets no fields (a bare Namespace) leaves
    no managedFields entry, and undeploy could not tell the object was ours."""
    meta = {**obj["metadata"], "labels": {**(obj["metadata"].get("labels") or {}), PART_OF: part_of}}
    return {**obj, "metadata": meta}


async def deploy(client: Client, objs: list[dict[str, Any]], *, part_of: str, log: Log,
                 timeout: float = 60.0, wait: bool = False) -> None:
    """Apply in dependency order; CRDs must be Established (and discovered) before anything that
    could use them. ``wait``: until the Deployment is Available."""
    ordered = [labelled(o, part_of) for o in sorted(objs, key=_rank)]
    crds = [o for o in ordered if o["kind"] == "CustomResourceDefinition"]
    for obj in ordered:
        if obj["kind"] not in ("Namespace", "CustomResourceDefinition") and crds:
            for crd in crds:
                await wait_for_crd(client, crd["metadata"]["name"], timeout=timeout)
                log(f"{describe(crd)} established")
            crds = []
        await client.apply(obj, field_manager=FIELD_MANAGER, force=True)
        log(f"applied {describe(obj)}")
    if wait:
        for dep in (o for o in ordered if o["kind"] == "Deployment"):
            meta = dep["metadata"]
            await wait_for(client, "deployments", meta["name"], meta["namespace"], _available,
                           timeout=timeout, description=f"{describe(dep)} to be Available")
            log(f"{describe(dep)} available")


def _available(obj: dict[str, Any]) -> bool:
    return any(c.get("type") == "Available" and c.get("status") == "True"
               for c in (obj.get("status") or {}).get("conditions") or [])


@dataclass
class UndeployReport:
    deleted: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)  # with the reason
    remaining: list[str] = field(default_factory=list)  # custom resources still in the cluster
    stuck: list[str] = field(default_factory=list)  # custom resources still terminating, and why
    released: list[str] = field(default_factory=list)  # finalizers removed by force_finalizers
    stopped: bool = False  # the operator was left in place: its finalizers are still pending


async def custom_resources(client: Client, crds: list[dict[str, Any]]) -> list[tuple[str, dict[str, Any]]]:
    """Every object of the CRDs in all namespaces, as (CRD name, object); CRDs not served are skipped."""
    found = []
    for crd in crds:
        try:
            items = (await client.list(crd_ref(crd), None))["items"]
        except NotFound:
            continue
        found += [(crd_ref(crd), {"kind": crd["spec"]["names"]["kind"], **o}) for o in items]
    return found


async def _delete_ours(client: Client, obj: dict[str, Any], report: UndeployReport, log: Log,
                       timeout: float) -> None:
    meta = obj["metadata"]
    try:
        live = await client.get(ref_of(obj), meta["name"], meta.get("namespace"))
    except NotFound:
        return
    if not deployed_by_us(live):
        report.kept.append(f"{describe(obj)} (not applied by kubeloop deploy)")
        return
    try:
        await client.delete(ref_of(obj), meta["name"], meta.get("namespace"), uid=live["metadata"]["uid"],
                            propagation_policy="Background")
    except NotFound:
        return
    if obj["kind"] in ("CustomResourceDefinition", "Namespace"):  # these finish asynchronously
        await wait_for_deletion(client, ref_of(obj), meta["name"], timeout=timeout)
    report.deleted.append(describe(obj))
    log(f"deleted {describe(obj)}")


async def undeploy(client: Client, objs: list[dict[str, Any]], *, log: Log, finalizers: Sequence[str] = (),
                   keep_custom_resources: bool = False, force_finalizers: bool = False,
                   delete_crds: bool = False, delete_namespace: bool = False,
                   timeout: float = 60.0) -> UndeployReport:
    """``finalizers``: the operator's own (``Operator.finalizers()``), the only ones it may remove."""
    if keep_custom_resources and delete_crds:
        raise ValueError("keep_custom_resources and delete_crds contradict: deleting a CRD deletes all "
                         "its custom resources")
    report = UndeployReport()
    crds = [o for o in objs if o["kind"] == "CustomResourceDefinition"]
    if not keep_custom_resources:
        await _delete_custom_resources(client, crds, set(finalizers), report, log, timeout, force_finalizers)
        if report.stopped:
            return report
    for obj in sorted(objs, key=_rank, reverse=True):
        if obj["kind"] == "CustomResourceDefinition" and not delete_crds:
            report.kept.append(f"{describe(obj)} (pass --delete-crds to remove it and all its objects)")
        elif obj["kind"] == "Namespace" and not delete_namespace:
            report.kept.append(f"{describe(obj)} (pass --delete-namespace to remove it and all it holds)")
        else:
            await _delete_ours(client, obj, report, log, timeout)
    report.remaining = sorted(describe(obj) for _, obj in await custom_resources(client, crds))
    return report


async def _delete_custom_resources(client: Client, crds: list[dict[str, Any]], ours: set[str],
                                   report: UndeployReport, log: Log, timeout: float, force: bool) -> None:
    """Deletes every custom resource while the operator can still run its finalizers, and waits; then
    deals with those still held by the operator's finalizers (report and stop, or force)."""
    remaining = await custom_resources(client, crds)
    if not remaining:
        return
    log(f"deleting {len(remaining)} custom resource(s) while the operator can still release them")
    for ref, obj in remaining:
        meta = obj["metadata"]
        with contextlib.suppress(NotFound):
            await client.delete(ref, meta["name"], meta.get("namespace"), uid=meta["uid"])
    left = await _settle(client, crds, timeout)
    held = [(ref, obj) for ref, obj in left if ours & set(obj["metadata"].get("finalizers") or ())]
    if held and force:
        for ref, obj in held:
            await _release(client, ref, obj, ours, report, log)
        left = await _settle(client, crds, min(timeout, 30.0))
        held = [(ref, obj) for ref, obj in left if ours & set(obj["metadata"].get("finalizers") or ())]
    gone = {obj["metadata"]["uid"] for _, obj in remaining} - {obj["metadata"]["uid"] for _, obj in left}
    for line in sorted(describe(obj) for _, obj in remaining if obj["metadata"]["uid"] in gone):
        report.deleted.append(line)
        log(f"deleted {line}")
    for ref, obj in left:
        report.stuck.append(stuck_line(ref, obj, ours))
    if held:
        report.stopped = True
        log(f"{len(held)} custom resource(s) still carry the operator's finalizers after {timeout:.0f}s; "
            "the operator is left in place so that it can release them")


def stuck_line(ref: str, obj: dict[str, Any], ours: set[str]) -> str:
    """Which finalizers still hold ``obj``, and for the operator's own, the command that releases one
    (guarded by a test op: it removes that finalizer and nothing else, or fails)."""
    meta = obj["metadata"]
    where = f" -n {meta['namespace']}" if meta.get("namespace") else ""
    parts = []
    for i, name in enumerate(meta.get("finalizers") or ()):
        if name not in ours:
            parts.append(f"finalizer {name} (another controller's: left alone)")
            continue
        ops = (f'[{{"op":"test","path":"/metadata/finalizers/{i}","value":"{name}"}},'
               f'{{"op":"remove","path":"/metadata/finalizers/{i}"}}]')
        parts.append(f"finalizer {name}: release with kubectl patch {kubectl_resource(ref)} {meta['name']}{where} "
                     f"--type=json -p '{ops}'")
    return f"{describe(obj)}: " + "; ".join(parts)


async def _release(client: Client, ref: str, obj: dict[str, Any], ours: set[str], report: UndeployReport,
                   log: Log) -> None:
    """Removes the operator's own finalizers from ``obj``, one guarded JSON patch each."""
    res = await client.resource(ref)
    for name in [f for f in obj["metadata"].get("finalizers") or () if f in ours]:
        if await _remove_one(client, res, obj["metadata"], name):
            report.released.append(f"{describe(obj)}: {name}")
            log(f"removed finalizer {name} from {describe(obj)} (--force-finalizers)")


async def _remove_one(client: Client, res: Any, meta: dict[str, Any], name: str, tries: int = 5) -> bool:
    """Re-reads on a conflict: another controller may be editing its own finalizers at the same time."""
    for _ in range(tries):
        try:
            live = await client.get(res, meta["name"], meta.get("namespace"))
            await remove_finalizer(client, res, live, name)
            return True
        except NotFound:
            return False
        except Conflict:
            await asyncio.sleep(0.2)
    return False


async def _settle(client: Client, crds: list[dict[str, Any]],
                  timeout: float) -> list[tuple[str, dict[str, Any]]]:
    """Waits for the custom resources to be gone; returns those left at the deadline."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while (left := await custom_resources(client, crds)) and loop.time() < deadline:
        await asyncio.sleep(0.5)
    return left
