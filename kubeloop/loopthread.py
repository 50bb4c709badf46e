"""A server on a thread of its own: an event loop on a daemon thread, so that what it serves (probes,
metrics, admission webhooks) answers while a computation holds the process's own loop.

- ``start(listen, close)`` runs ``listen`` on the thread's loop and returns once it listens; an error of
  ``listen`` (a taken port) is raised by ``start`` as if there were no thread, after ``close`` ran.
- ``stop()`` stops the thread's loop, runs ``close`` there and waits for the thread to end.
- ``owner`` is the loop that started it: work that must run there is handed back with it.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import Awaitable, Callable

Step = Callable[[], Awaitable[None]]


class LoopThread:
    """One daemon thread running one event loop, for one server's lifetime."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.owner: asyncio.AbstractEventLoop | None = None  # the loop that called start()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None

    @property
    def running(self) -> bool:
        return self._thread is not None

    async def start(self, listen: Step, close: Step) -> None:
        self.owner = asyncio.get_running_loop()
        started: concurrent.futures.Future[None] = concurrent.futures.Future()
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._run, args=(listen, close, started), name=self.name,
                                        daemon=True)
        self._thread.start()
        try:
            await asyncio.wrap_future(started)
        except BaseException:
            await asyncio.to_thread(self._thread.join)
            self._thread = self._loop = None
            raise

    async def stop(self) -> None:
        if self._thread is None or self._loop is None:
            return
        self._loop.call_soon_threadsafe(self._loop.stop)
        await asyncio.to_thread(self._thread.join)
        self._thread = self._loop = None

    def _run(self, listen: Step, close: Step, started: concurrent.futures.Future[None]) -> None:
        loop = self._loop
        assert loop is not None
        asyncio.set_event_loop(loop)
        try:
            loop.run_until_complete(listen())
        except BaseException as exc:  # noqa: BLE001 - handed to start(), which raises it
            loop.run_until_complete(close())
            loop.close()
            started.set_exception(exc)
            return
        started.set_result(None)
        loop.run_forever()
        loop.run_until_complete(close())
        loop.close()
