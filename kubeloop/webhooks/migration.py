"""Storage-version migration: rewrite a CRD's objects in its current storage version.

When a CRD's ``storage: true`` moves to another version, objects already in etcd stay encoded in the
old one (and the old version stays in ``status.storedVersions``, so it can never be removed) until
each is written again. The API server re-encodes on any update, even one that changes nothing, so:

- every object is read and written back unchanged (a conflict means someone else just wrote it —
  which migrated it too — so it is skipped, as is an object deleted meanwhile);
- then ``status.storedVersions`` is set to the storage version alone, which is what allows the old
  version to be dropped from the CRD later.

The CRD's conversion webhook must be serving while this runs: every read and write converts.
"""

from __future__ import annotations

import contextlib

from kubeloop.client import Client, Conflict, NotFound
from kubeloop.client.resource import Resource


async def storage_resource(client: Client, crd_name: str) -> Resource:
    """The CRD's resource at its storage version."""
    crd = await client.get("customresourcedefinitions", crd_name)
    spec = crd["spec"]
    storage = [v["name"] for v in spec["versions"] if v.get("storage")]
    if len(storage) != 1:
        raise ValueError(f"CRD {crd_name} has {len(storage)} storage versions; exactly one is expected")
    return Resource(spec["group"], storage[0], spec["names"]["plural"], spec["names"]["kind"],
                    namespaced=spec["scope"] == "Namespaced")


async def migrate_storage(client: Client, crd_name: str) -> int:
    """Rewrites every object of CRD ``crd_name`` in its storage version; returns how many were written."""
    res = await storage_resource(client, crd_name)
    written = 0
    async for page in client.list_pages(res):
        for item in page.get("items") or []:
            with contextlib.suppress(Conflict, NotFound):
                await client.replace(item, resource=res)
                written += 1
    await client.patch_status("customresourcedefinitions", crd_name, {"storedVersions": [res.version]})
    return written
