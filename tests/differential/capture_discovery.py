"""Writes kubeloop/testing/apiserver/real_resources.json: every resource the real control plane serves
(from its discovery documents), so that the fake refuses by name (501, "run with --real-cluster") a
built-in kind it does not model instead of answering 404 as if the kind did not exist::

    python tests/differential/capture_discovery.py <kubeconfig>

Custom resources installed on that cluster are left out (the fake serves CRDs itself).
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

from kubeloop.client import Client

OUT = Path(__file__).resolve().parents[2] / "kubeloop" / "testing" / "apiserver" / "real_resources.json"


async def main(kubeconfig: str) -> None:
    async with await Client.from_kubeconfig(kubeconfig) as client:
        crds = await client.transport.request("GET", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions")
        custom = {c["spec"]["group"] for c in crds["items"]}
        version = await client.transport.request("GET", "/version")
        served: dict[str, list[str]] = {}
        paths = ["/api/v1"]
        for group in (await client.transport.request("GET", "/apis"))["groups"]:
            if group["name"] not in custom:
                paths += [f"/apis/{v['groupVersion']}" for v in group["versions"]]
        for path in paths:
            doc = await client.transport.request("GET", path)
            served[doc["groupVersion"]] = sorted(r["name"] for r in doc["resources"])
    OUT.write_text(json.dumps({"source": f"discovery of kube-apiserver {version['gitVersion']}",
                               "resources": served}, indent=1, sort_keys=True) + "\n")
    print(f"wrote {OUT} ({sum(len(v) for v in served.values())} resources)")


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
