"""The benchmark's tracker on the real control plane when its client drops its connections, as the client
does under load when a request goes unanswered while the server answers on a new connection (seen in
the fault suite's log at load 25 on 2 cores: "got no answer for 14s while the server answers on a new
connection"). The tracker's watch is on that pool: it must go on from where it was, or every wait of
the benchmark runs to its timeout blind (a test of the compiled contestants sat 25 minutes that way)."""

from __future__ import annotations

import random

from harness.bench.tracker import Tracker
from harness.bench.workload import Workload
from kubeloop.client import Client


async def test_the_tracker_sees_on_after_its_client_drops_every_connection(kube_cluster) -> None:
    client = await Client.from_kubeconfig(str(kube_cluster.kubeconfig), qps=0)
    workload = Workload(client)
    try:
        await workload.install_crd()
        ns = await workload.new_namespace("tracker")
        tracker = Tracker(client, ns, workload.counter)
        try:
            await tracker.start()
            values = {"w-1": random.randint(1, 1000)}
            tracker.expect(values)
            session = client.transport._session
            assert session is not None
            client.transport._drop_pool(session, "(dropped by the test)")
            await workload.create(ns, values, with_status=True)
            assert await tracker.wait(60), "the tracker's view went blind when its connection was dropped"
            tracker.check()
            assert tracker._view.resumes == 1
        finally:
            await tracker.stop()
            await workload.delete_namespace(ns)
    finally:
        await client.close()
