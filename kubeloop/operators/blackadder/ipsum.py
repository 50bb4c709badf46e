"""ipsumMode: randomly overwrite ConfigMaps' data with lorem ipsum — reversibly.

The first rewrite records the original data: in an annotation on the ConfigMap when small, else in a
backup ConfigMap in the operator's namespace (which no agent ever touches). Restoring puts the data
back exactly, unless someone edited the ConfigMap since (then only the marks go). Immutable,
controller-owned and kube-root-ca.crt ConfigMaps are never rewritten; Secrets are never even listed.
"""

from __future__ import annotations

from collections.abc import Callable

import orjson

from kubeloop import Client, Conflict, NotFound, Obj, builtin
from kubeloop.operators.blackadder import lorem, marks
from kubeloop.operators.blackadder.chaos import Action, Round, fresh, restore_held, retry_on_conflict
from kubeloop.operators.blackadder.safety import Settings, rewritable_configmap
from kubeloop.operators.blackadder.schedule import chance

BACKUP_OF = "blackadder.io/backup-of"


def lorem_data(rnd: Round, cm: Obj) -> dict[str, str]:
    """Every key gets a paragraph; the dice are the object's own, so the text does not depend on
    which other ConfigMaps were hit."""
    meta = cm["metadata"]
    rng = rnd.dice("ipsum", meta["namespace"], meta["name"])
    return {key: lorem.paragraph(rng) for key in sorted(cm.get("data") or {})}


async def randomly_write_configmaps(rnd: Round, configmaps: list[Obj], eagerness: int) -> list[Action]:
    candidates = [cm for cm in configmaps
                  if rewritable_configmap(cm) and not marks.held_by_other(cm, rnd.label)]
    rng = rnd.dice("ipsum")
    chosen = [cm for cm in candidates if chance(rng, eagerness)]

    async def scribble(cm: Obj) -> Action | None:
        return await rewrite(rnd, cm)
    return await rnd.each(chosen, scribble)


async def rewrite(rnd: Round, cm: Obj) -> Action | None:
    meta = cm["metadata"]
    garbage = lorem_data(rnd, cm)
    detail = f"{len(garbage)} key(s): {', '.join(garbage)}"
    if rnd.dry_run:
        return Action("ipsum", "rewrote", cm, detail, dry_run=True)
    annotations: dict[str, str | None] = {marks.CHAOS_DIGEST: marks.digest(garbage)}
    backup = None
    if marks.holder(cm) is None:  # the first change: remember the original
        original = orjson.dumps(cm["data"], option=orjson.OPT_SORT_KEYS).decode()
        if len(original) <= rnd.settings.annotation_limit:
            annotations[marks.ORIGINAL_DATA] = original
        elif rnd.settings.operator_namespace is None:  # nowhere to keep it: the change would be for good
            return Action("ipsum", "skipped", cm, f"its data is over --annotation-limit "
                          f"({rnd.settings.annotation_limit} bytes) and there is no --operator-namespace "
                          "to back it up in", changed=False)
        else:
            backup = await save_backup(rnd.client, rnd.settings.operator, rnd.settings.operator_namespace,
                                       rnd.label, cm)
            annotations[marks.BACKUP] = backup
    patch = {"metadata": marks.mark(cm, rnd.label, rnd.timestamp, annotations), "data": garbage}
    try:
        updated = await rnd.client.patch(builtin.CONFIG_MAP, meta["name"], patch, meta["namespace"])
    except (Conflict, NotFound):  # changed or gone meanwhile: skip it this round
        if backup:
            await delete_backup(rnd.client, backup)
        return None
    return Action("ipsum", "rewrote", updated | {"apiVersion": "v1", "kind": "ConfigMap"}, detail)


def backup_name(cm: Obj) -> str:
    return f"blackadder-backup-{cm['metadata']['uid']}"


async def save_backup(client: Client, field_manager: str, namespace: str, label: str, cm: Obj) -> str:
    """A copy of ``cm``'s data in the operator's ``namespace`` (the only place backups are written)."""
    meta = cm["metadata"]
    name = backup_name(cm)
    await client.apply({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": namespace, "labels": {marks.BACKUP_FOR: label},
                     "annotations": {BACKUP_OF: f"{meta['namespace']}/{meta['name']}"}},
        "data": cm["data"]}, field_manager=field_manager)
    return f"{namespace}/{name}"


async def delete_backup(client: Client, ref: str) -> None:
    namespace, _, name = ref.partition("/")
    try:
        await client.delete(builtin.CONFIG_MAP, name, namespace)
    except NotFound:
        pass


async def delete_backups(client: Client, settings: Settings, label: str) -> None:
    """Leftover backups of an agent (a crash between backup and rewrite); called when it goes away."""
    if settings.operator_namespace is None:
        return
    listed = await client.list(builtin.CONFIG_MAP, settings.operator_namespace,
                               label_selector=f"{marks.BACKUP_FOR}={label}")
    for cm in listed["items"]:
        await delete_backup(client, f"{settings.operator_namespace}/{cm['metadata']['name']}")


def trusted_backup(settings: Settings, cm: Obj) -> str | None:
    """The backup reference of ``cm`` if it is the one blackadder would have made for it, else None.
    The annotation sits on the tenant's own ConfigMap, so anyone who may edit it can point it elsewhere:
    following it blindly would copy another namespace's ConfigMap into theirs and then delete it."""
    ref = marks.annotation(cm, marks.BACKUP)
    if not ref or settings.operator_namespace is None:
        return None
    return ref if ref == f"{settings.operator_namespace}/{backup_name(cm)}" else None


async def original_data(client: Client, settings: Settings, cm: Obj) -> dict[str, str] | None:
    inline = marks.annotation(cm, marks.ORIGINAL_DATA)
    if inline is not None:
        try:
            data = orjson.loads(inline)
        except orjson.JSONDecodeError:
            return None
        return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else None
    ref = trusted_backup(settings, cm)
    if ref is None:
        return None
    namespace, _, name = ref.partition("/")
    try:
        backup = await client.get(builtin.CONFIG_MAP, name, namespace)
    except NotFound:
        return None
    meta = cm["metadata"]
    # Made for this very ConfigMap (its name carries the UID; the annotation says where it came from).
    if (backup["metadata"].get("annotations") or {}).get(BACKUP_OF) != f"{meta['namespace']}/{meta['name']}":
        return None
    return dict(backup.get("data") or {})


async def restore_configmaps(client: Client, settings: Settings, label: str,
                             wanted: Callable[[Obj], bool]) -> list[Action]:
    """Every ConfigMap this agent holds and ``wanted`` picks gets its original data back."""
    async def restore_one(client: Client, cm: Obj) -> Action | None:
        return await restore_configmap(client, settings, cm)
    return await restore_held(client, builtin.CONFIG_MAP, label, wanted, restore_one)


async def restore_configmap(client: Client, settings: Settings, cm: Obj) -> Action | None:
    meta = cm["metadata"]
    original = await original_data(client, settings, cm)
    backup = trusted_backup(settings, cm)
    current: Obj | None = cm

    async def attempt() -> Action | None:
        nonlocal current
        if current is None:
            return None
        untouched_since = marks.annotation(current, marks.CHAOS_DIGEST) == marks.digest(current.get("data"))
        patch: Obj = {"metadata": marks.unmark(current)}
        if original is not None and untouched_since:
            extra = {k: None for k in current.get("data") or {} if k not in original}  # null deletes
            patch["data"] = {**extra, **original}
        try:
            updated = await client.patch(builtin.CONFIG_MAP, meta["name"], patch, meta["namespace"])
        except Conflict:  # re-read, then retry_on_conflict tries again
            current = await fresh(client, builtin.CONFIG_MAP, meta["namespace"], meta["name"])
            raise
        obj = updated | {"apiVersion": "v1", "kind": "ConfigMap"}
        if "data" in patch:
            return Action("restore", "restored", obj, f"original data of {len(original or {})} key(s)")
        why = "was edited by someone else; left as it is" if original is not None else "original data lost"
        return Action("restore", "released", obj, why)
    try:
        action = await retry_on_conflict(attempt)
    except NotFound:
        action = None
    if backup:
        await delete_backup(client, backup)
    return action
