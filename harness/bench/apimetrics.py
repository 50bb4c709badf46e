"""API requests as the API server counts them: ``apiserver_request_total`` from its ``/metrics``.

The counter has no client label, so what an operator made is the delta over a window minus what the
harness itself sent in that window (``HarnessCounter``), restricted to the resources an operator of
this workload can touch (widgets, events, Kopf's peering objects): the control plane's own background
traffic (node leases, ...) is left out. Long-running WATCH requests are counted by the API server when
they end, so a watch still open at the end of a window is not in that window.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import aiohttp

from harness.common import prometheus
from kubeloop.client import Client

Key = tuple[str, str, str, str]  # verb, group, resource, subresource
WRITE_VERBS = {"POST", "PUT", "PATCH", "APPLY", "DELETE", "DELETECOLLECTION", "CREATE", "UPDATE"}
ATTRIBUTED_RESOURCES = {"events", "kopfpeerings", "clusterkopfpeerings"}


def parse(text: str) -> Counter[Key]:
    """``apiserver_request_total`` by (verb, group, resource, subresource), summed over the other labels."""
    out: Counter[Key] = Counter()
    for sample in prometheus.parse(text, "apiserver_request_total"):
        labels = sample.labels
        if not labels.get("resource"):
            continue  # non-resource requests (/metrics, /healthz, discovery)
        key = (labels.get("verb", ""), labels.get("group", ""), labels["resource"], labels.get("subresource", ""))
        out[key] += int(sample.value)
    return out


async def scrape(client: Client) -> Counter[Key]:
    """The API server's request counters, read with the client's (admin) credentials."""
    return parse(await metrics_text(client))


async def metrics_text(client: Client) -> str:
    """The API server's /metrics exposition, read with the client's (admin) credentials."""
    config = client.config
    creds = await config.auth.credentials()
    headers = {"Accept": "text/plain"}
    if creds.token:
        headers["Authorization"] = f"Bearer {creds.token}"
    async with (
        aiohttp.ClientSession() as session,
        session.get(
            config.server + "/metrics",
            headers=headers,
            ssl=config.ssl_context(creds),
            server_hostname=config.tls_server_name,
            timeout=aiohttp.ClientTimeout(total=30),
        ) as resp,
    ):
        resp.raise_for_status()
        return await resp.text()


class HarnessCounter:
    """What the harness sent, keyed like the API server's counter."""

    def __init__(self) -> None:
        self.counts: Counter[Key] = Counter()

    def add(self, verb: str, group: str, resource: str, subresource: str = "", n: int = 1) -> None:
        self.counts[(verb, group, resource, subresource)] += n

    def snapshot(self) -> Counter[Key]:
        return Counter(self.counts)


def operator_requests(
    before: Counter[Key],
    after: Counter[Key],
    harness_before: Counter[Key],
    harness_after: Counter[Key],
    group: str,
) -> dict[str, int]:
    """``{"PATCH widgets/status": 1000, ...}``: the window's delta minus the harness's own requests."""
    out: dict[str, int] = {}
    for key in set(after) | set(before):
        verb, grp, resource, sub = key
        if grp != group and resource not in ATTRIBUTED_RESOURCES:
            continue
        n = after[key] - before[key] - (harness_after[key] - harness_before[key])
        if n > 0:
            out[f"{verb} {resource}{'/' + sub if sub else ''}"] = n
    return dict(sorted(out.items()))


def writes(requests: dict[str, int]) -> int:
    return sum(n for name, n in requests.items() if name.split()[0] in WRITE_VERBS)


def summary(requests: dict[str, Any]) -> str:
    return ", ".join(f"{k} {v}" for k, v in requests.items()) or "none"
