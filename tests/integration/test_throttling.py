"""429 handling for real: API Priority and Fairness throttles a test identity, the client retries
(honouring Retry-After) and every request still succeeds."""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path

from kubeloop import metrics
from kubeloop.client import Client

APF = "flowcontrol.apiserver.k8s.io/v1"


async def test_client_survives_apf_throttling(kube_cluster, kube_client: Client, namespace: str,
                                              tmp_path: Path) -> None:
    sa = "throttled"
    level, schema = f"tiny-{namespace}", f"throttle-{namespace}"
    await kube_client.create({"apiVersion": "v1", "kind": "ServiceAccount",
                              "metadata": {"name": sa, "namespace": namespace}})
    await kube_client.create({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
                              "metadata": {"name": sa, "namespace": namespace},
                              "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                                          "name": "view"},
                              "subjects": [{"kind": "ServiceAccount", "name": sa, "namespace": namespace}]})
    # One seat, no queue: concurrent requests beyond the first are rejected with 429. No borrowing
    # either (unset, it is unlimited): the API server would lend this level idle seats of others.
    await kube_client.create({"apiVersion": APF, "kind": "PriorityLevelConfiguration",
                              "metadata": {"name": level},
                              "spec": {"type": "Limited", "limited": {
                                  "nominalConcurrencyShares": 1, "lendablePercent": 0,
                                  "borrowingLimitPercent": 0,
                                  "limitResponse": {"type": "Reject"}}}})
    await kube_client.create({"apiVersion": APF, "kind": "FlowSchema", "metadata": {"name": schema},
                              "spec": {"priorityLevelConfiguration": {"name": level},
                                       "matchingPrecedence": 100,
                                       "distinguisherMethod": {"type": "ByUser"},
                                       "rules": [{"subjects": [{"kind": "ServiceAccount", "serviceAccount": {
                                           "name": sa, "namespace": namespace}}],
                                           "resourceRules": [{"verbs": ["*"], "apiGroups": ["*"],
                                                              "resources": ["*"], "namespaces": ["*"]}]}]}})
    # ~1 MB lists: the API server holds the seat while it writes one, so concurrent lists overlap even
    # when a busy machine slows the client down (with small lists they could all be served one by one).
    for i in range(40):
        await kube_client.create({"apiVersion": "v1", "kind": "ConfigMap",
                                  "metadata": {"name": f"c{i}", "namespace": namespace},
                                  "data": {"x": "y" * 25_000}})
    path = await asyncio.to_thread(kube_cluster.service_account_kubeconfig, namespace, sa,
                                   tmp_path / "kubeconfig")
    client = await Client.from_kubeconfig(str(path))
    host = client.transport.host
    throttled = metrics.rest_client_requests.labels("429", "GET", host)
    before = throttled.get()
    try:
        await client.list("configmaps", namespace)  # discovery + warm-up
        results = await asyncio.gather(*(client.list("configmaps", namespace) for _ in range(60)))
    finally:
        await client.close()
        for ref, name in (("flowschemas.flowcontrol.apiserver.k8s.io", schema),
                          ("prioritylevelconfigurations.flowcontrol.apiserver.k8s.io", level)):
            with contextlib.suppress(Exception):
                await kube_client.delete(ref, name)
    assert all(sum(o["metadata"]["name"].startswith("c") for o in r["items"]) == 40 for r in results)
    assert throttled.get() > before, "the API server never throttled: the test proves nothing"
