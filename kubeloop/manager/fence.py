"""The client the controllers write through, fenced: every write first awaits the manager's fence.

With leader election the fence is :meth:`LeaderElector.confirm` (the lease renewed less than
``renew_deadline`` ago, or renewed on the spot); with ``--shards``, the member's own renewal (a member
renewed longer ago than ``renew_deadline`` holds no slot: the write is refused, the reconcile retried
once the member has renewed and checked its slots again). Reads, watches and everything else go to the
shared client unchanged: one connection pool.

What it cannot cover: the moment between the check and the request leaving the socket. The check is
the last step before the client's own (the rate limiter, credentials, a pooled connection), so that
window is normally microseconds; a stall inside it still has ``lease_duration - renew_deadline`` (5 s
by default) of margin before a standby may take over.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from kubeloop.client import Client

Fence = Callable[[], Awaitable[None]]


class FencedClient:
    """``client``, with ``fence()`` awaited before each write (it raises to refuse the write)."""

    def __init__(self, client: Client, fence: Fence) -> None:
        self._client, self._fence = client, fence

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)

    async def create(self, *args: Any, **kwargs: Any) -> Any:
        await self._fence()
        return await self._client.create(*args, **kwargs)

    async def replace(self, *args: Any, **kwargs: Any) -> Any:
        await self._fence()
        return await self._client.replace(*args, **kwargs)

    async def patch(self, *args: Any, **kwargs: Any) -> Any:
        await self._fence()
        return await self._client.patch(*args, **kwargs)

    async def apply(self, *args: Any, **kwargs: Any) -> Any:
        await self._fence()
        return await self._client.apply(*args, **kwargs)

    async def delete(self, *args: Any, **kwargs: Any) -> Any:
        await self._fence()
        return await self._client.delete(*args, **kwargs)

    async def delete_collection(self, *args: Any, **kwargs: Any) -> Any:
        await self._fence()
        return await self._client.delete_collection(*args, **kwargs)

    async def patch_status(self, *args: Any, **kwargs: Any) -> Any:
        await self._fence()
        return await self._client.patch_status(*args, **kwargs)
