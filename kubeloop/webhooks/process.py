"""Webhooks served from a process of their own: ``WebhookOptions(isolation="process")``.

- Why: a thread of the operator's process shares its GIL, so while a reconcile computes in pure Python
  each review waits its turn (the noisy-neighbour benchmark, docs/PERFORMANCE.md). A child process has an
  interpreter of its own: its answers wait for nothing of the operator's.
- What runs there: loop-free handlers and conversions only (they decide from the review alone). They are
  handed to the child pickled at start, with their state as it is then (the author guard's key, loaded
  before the webhooks start). :func:`refusal` names a hook that cannot go (not loop-free, not picklable).
- The parent keeps the certificates (rotation, the ``caBundle``): each new pair is sent to the child,
  which loads it for new handshakes and acknowledges it.
- The child reports each review on a pipe; the parent records controller-runtime's webhook metrics and
  :attr:`answered` from it, so ``/metrics`` and the test kit see what they see of a server in-process.
- Lifetimes: the child ends when its standard input closes (the parent's stop, or the parent's death). A
  child that dies is started again on the same port (after 1 s, doubling to 30 s); the server is ready
  only while a child listens.

Frames on the child's standard input: a length (4 bytes, big-endian) and its bytes. The first is JSON
(``sys.path``, so the second can import the handlers' modules), the second the pickled :class:`Spec`, the
next ones JSON certificate pairs. The child reports JSON lines on the file descriptor it is given.
"""

from __future__ import annotations

import asyncio
import logging
import os
import pickle
import ssl
import subprocess
import sys
import tempfile
import threading
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import orjson

from kubeloop import metrics
from kubeloop.webhooks.cert_dir import MountedCerts
from kubeloop.webhooks.certs import WebhookCerts
from kubeloop.webhooks.conversion import Converter
from kubeloop.webhooks.server import Webhook, WebhookServer

log = logging.getLogger(__name__)

START_TIMEOUT = 60.0  # seconds for a child to import its handlers and listen (a loaded 2-core machine)
STOP_TIMEOUT = 10.0  # seconds for a child to finish open reviews after its standard input closed
ACK_TIMEOUT = 5.0  # seconds a rotation waits for the child to load the new pair
RESTART_BACKOFF = (1.0, 30.0)  # first and longest wait before a dead child is started again


@dataclass
class Spec:
    """What the child serves: everything picklable, nothing of the parent's loop."""

    host: str
    port: int
    pem: tuple[bytes, bytes]
    webhooks: dict[str, Webhook]
    converters: dict[str, Converter]
    log_level: int = logging.INFO  # the parent's: the child sends its records up to be logged there


def refusal(webhooks: dict[str, Webhook], converters: dict[str, Converter]) -> str | None:
    """Why these cannot be served from a process of their own, or None if they can."""
    for path, hook in webhooks.items():
        if not hook.loop_free:
            return (f"webhook {path} is not loop-free (it may await the operator's client or cache); declare it "
                    f"loop_free=True if it decides from the review alone")
    for path, value in [*webhooks.items(), *converters.items()]:
        try:
            pickle.dumps(value)
        except Exception as exc:  # noqa: BLE001 - pickle raises several types for what it cannot take
            return (f"webhook {path} cannot be handed to a process of its own ({type(exc).__name__}: {exc}); "
                    f"define its handler (and its model, its converters) at module level")
    return None


class ProcessWebhookServer(WebhookServer):
    """A :class:`WebhookServer` whose listener and handlers live in a child process (module docstring)."""

    def __init__(self, certs: WebhookCerts | MountedCerts, *, host: str = "127.0.0.1", port: int = 0,
                 rotation_check_every: float = 3600.0) -> None:
        super().__init__(certs, host=host, port=port, rotation_check_every=rotation_check_every)
        self._child: subprocess.Popen[bytes] | None = None
        self._reader: threading.Thread | None = None
        self._listening = False
        self._stopping = False
        self._in_flight: Counter[str] = Counter()  # reviews the child began and has not answered
        self._loaded = threading.Event()  # the child acknowledged a certificate pair
        self._started: asyncio.Future[str | None] | None = None  # the first "listening" or "error"
        self._restart: asyncio.Task[None] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    @property
    def ready(self) -> bool:
        return self._listening and self.certs.loaded

    @property
    def pid(self) -> int | None:
        """The child's process id while one runs."""
        return self._child.pid if self._child is not None and self._child.poll() is None else None

    async def start(self) -> None:
        """Starts the child and returns once it listens (learning the port when 0); a child that cannot
        listen (a taken port) raises ``OSError`` here, one whose handlers cannot go raises ``ValueError``."""
        why = refusal(self.webhooks, self.converters)
        if why:
            raise ValueError(why)
        self._loop, self._stopping = asyncio.get_running_loop(), False
        error = await self._spawn()
        if error is not None:
            await self._reap()
            raise OSError(error)
        self.certs.on_change.append(self._send_pair)
        self._rotation = asyncio.create_task(self.certs.keep_fresh(self.rotation_check_every))

    async def stop(self) -> None:
        """Closes the child's standard input, waits for it to finish its open reviews, and reaps it."""
        self._stopping = True
        if self._restart is not None:
            self._restart.cancel()
        if self._send_pair in self.certs.on_change:
            self.certs.on_change.remove(self._send_pair)
        if self._rotation is not None:
            self._rotation.cancel()
            await asyncio.gather(self._rotation, return_exceptions=True)
            self._rotation = None
        await self._reap()

    # the child's lifetime --------------------------------------------------------------------------

    async def _spawn(self) -> str | None:
        """Starts a child; returns None once it listens, or why it could not."""
        assert self._loop is not None and self.certs.pem is not None
        spec = Spec(self.host, self.port, self.certs.pem, self.webhooks, self.converters,
                    logging.getLogger().getEffectiveLevel())
        read, write = os.pipe()
        try:
            child = subprocess.Popen([sys.executable, "-m", "kubeloop.webhooks.process", str(write)],
                                     stdin=subprocess.PIPE, pass_fds=(write,))
        finally:
            os.close(write)
        self._child, self._started = child, self._loop.create_future()
        self._reader = threading.Thread(target=self._read_reports, args=(child, os.fdopen(read, "rb")),
                                        name="kubeloop webhook process reports", daemon=True)
        self._reader.start()
        try:
            assert child.stdin is not None
            _send(child.stdin, orjson.dumps({"sys_path": sys.path}))
            _send(child.stdin, pickle.dumps(spec))
        except OSError as exc:  # it died at once (its reports say why, if it could)
            log.error("webhook process %d did not take its handlers: %s", child.pid, exc)
        try:
            return await asyncio.wait_for(asyncio.shield(self._started), START_TIMEOUT)
        except TimeoutError:
            return f"the webhook process did not listen within {START_TIMEOUT:g} s"

    async def _reap(self) -> None:
        child, self._child = self._child, None
        if child is None:
            return
        if child.stdin is not None:
            try:
                child.stdin.close()
            except OSError:
                pass  # already gone
        try:
            await asyncio.to_thread(child.wait, STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            log.warning("webhook process %d did not stop within %g s; killing it", child.pid, STOP_TIMEOUT)
            child.kill()
            await asyncio.to_thread(child.wait)
        if self._reader is not None:
            await asyncio.to_thread(self._reader.join)
        self._listening = False

    def _read_reports(self, child: subprocess.Popen[bytes], reports: IO[bytes]) -> None:
        """The reader thread: each report line as it comes, then the child's end."""
        with reports:
            for line in reports:
                self._report(orjson.loads(line))
        code = child.wait()
        self._listening = False
        for path, n in self._in_flight.items():  # reviews it took with it
            metrics.webhook_in_flight.labels(path).dec(n)
        self._in_flight.clear()
        loop, started = self._loop, self._started
        if loop is None or loop.is_closed():
            return
        if started is not None:
            loop.call_soon_threadsafe(_settle, started, f"the webhook process exited with status {code}")
        if not self._stopping:
            log.error("webhook process %d exited with status %s; starting another", child.pid, code)
            loop.call_soon_threadsafe(self._schedule_restart)

    def _report(self, message: dict[str, Any]) -> None:
        if "log" in message:  # logged here, by the parent's handlers, as if the child's loggers were ours
            record = logging.makeLogRecord(message["log"])
            logging.getLogger(record.name).handle(record)
        elif "end" in message:  # recorded as the server in-process records its own
            self._in_flight[message["end"]] -= 1
            self._ended(message["end"], message["code"], message["seconds"])
        elif "begin" in message:
            self._in_flight[message["begin"]] += 1
            self._began(message["begin"])
        elif "loaded" in message:
            self._loaded.set()
        elif "listening" in message or "error" in message:
            if "listening" in message:
                self.port, self._listening = message["listening"], True
            assert self._loop is not None and self._started is not None
            self._loop.call_soon_threadsafe(_settle, self._started, message.get("error"))

    def _schedule_restart(self) -> None:
        if not self._stopping and (self._restart is None or self._restart.done()):
            self._restart = asyncio.create_task(self._restart_until_listening())

    async def _restart_until_listening(self) -> None:
        wait, longest = RESTART_BACKOFF
        while not self._stopping:
            await asyncio.sleep(wait)
            await self._reap()
            if self._stopping:
                return
            error = await self._spawn()
            if error is None:
                log.info("webhook process %s listening again on %s:%d", self.pid, self.host, self.port)
                return
            log.error("webhook process could not start again: %s; retrying in %g s", error, min(wait * 2, longest))
            wait = min(wait * 2, longest)

    def _send_pair(self) -> None:
        """A new certificate pair (a rotation in the parent), to the child; waits for it to load it so
        that the next handshake gets it."""
        child, pem = self._child, self.certs.pem
        if child is None or child.stdin is None or pem is None:
            return
        self._loaded.clear()
        try:
            _send(child.stdin, orjson.dumps({"cert": pem[0].decode(), "key": pem[1].decode()}))
        except OSError as exc:
            log.warning("webhook process %d did not take the new certificate (%s); its restart will", child.pid, exc)
            return
        if not self._loaded.wait(ACK_TIMEOUT):
            log.warning("webhook process %d did not load the new certificate within %g s", child.pid, ACK_TIMEOUT)


def _settle(future: asyncio.Future[str | None], error: str | None) -> None:
    if not future.done():
        future.set_result(error)


def _send(stream: IO[bytes], data: bytes) -> None:
    stream.write(len(data).to_bytes(4, "big") + data)
    stream.flush()


def _receive(stream: IO[bytes]) -> bytes | None:
    """The next frame, or None at the end of the stream."""
    head = stream.read(4)
    if len(head) < 4:
        return None
    return stream.read(int.from_bytes(head, "big"))


# --- the child ---------------------------------------------------------------------------------------


class _Certs:
    """The child's certificates: the pairs its parent sends, loaded into one SSL context."""

    def __init__(self) -> None:
        self.ssl_context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        self.ssl_context.minimum_version = ssl.TLSVersion.TLSv1_2
        self.loaded = False
        self._dir = Path(tempfile.mkdtemp(prefix="kubeloop-webhook-"))  # 0700 by mkdtemp

    def load(self, cert_pem: bytes, key_pem: bytes) -> None:
        crt, key = self._dir / "tls.crt", self._dir / "tls.key"
        crt.write_bytes(cert_pem)
        key.touch(mode=0o600)
        key.write_bytes(key_pem)
        try:
            self.ssl_context.load_cert_chain(crt, key)
        finally:  # the context has copied them; a key on disk is a liability
            crt.unlink()
            key.unlink()
        self.loaded = True

    async def keep_fresh(self, check_every: float) -> None:
        """Nothing to do: the parent rotates and sends the new pair."""
        await asyncio.Event().wait()

    def close(self) -> None:
        os.rmdir(self._dir)


class _Reports:
    """The child's reports to its parent: one JSON line each, whole (a lock: loggers write from threads)."""

    def __init__(self, stream: IO[bytes]) -> None:
        self.stream, self.lock = stream, threading.Lock()

    def __call__(self, message: dict[str, Any]) -> None:
        line = orjson.dumps(message, default=str) + b"\n"
        with self.lock:
            self.stream.write(line)


class _LogUp(logging.Handler):
    """Sends the child's log records to the parent, which logs them with its own handlers and format."""

    def __init__(self, report: _Reports) -> None:
        super().__init__()
        self.report = report

    def emit(self, record: logging.LogRecord) -> None:
        fields = {"name": record.name, "levelno": record.levelno, "levelname": record.levelname,
                  "msg": record.getMessage(), "created": record.created, "pathname": record.pathname,
                  "lineno": record.lineno, "funcName": record.funcName, "process": record.process,
                  "exc_text": self.format_exception(record)}
        self.report({"log": fields})

    @staticmethod
    def format_exception(record: logging.LogRecord) -> str | None:
        return logging.Formatter().formatException(record.exc_info) if record.exc_info else None


class _ChildServer(WebhookServer):
    """The server in the child: its reviews are reported to the parent instead of recorded here."""

    def __init__(self, certs: _Certs, spec: Spec, report: _Reports) -> None:
        super().__init__(certs, host=spec.host, port=spec.port)  # type: ignore[arg-type]
        self.webhooks, self.converters, self.report = spec.webhooks, spec.converters, report

    def _began(self, path: str) -> None:
        self.report({"begin": path})

    def _ended(self, path: str, code: int, seconds: float) -> None:
        self.report({"end": path, "code": code, "seconds": seconds})


async def _serve(spec: Spec, stdin: IO[bytes], report: _Reports) -> None:
    certs = _Certs()
    certs.load(*spec.pem)
    server = _ChildServer(certs, spec, report)
    try:
        await server.start()
    except OSError as exc:
        report({"error": f"cannot listen on {spec.host}:{spec.port}: {exc}"})
        certs.close()
        return
    report({"listening": server.port})
    loop = asyncio.get_running_loop()
    try:
        while (frame := await loop.run_in_executor(None, _receive, stdin)) is not None:
            pair = orjson.loads(frame)
            certs.load(pair["cert"].encode(), pair["key"].encode())
            report({"loaded": True})
    finally:
        await server.stop()
        certs.close()


def main() -> None:
    """``python -m kubeloop.webhooks.process FD``: the child (started by :class:`ProcessWebhookServer`)."""
    report = _Reports(os.fdopen(int(sys.argv[1]), "wb", buffering=0))
    stdin = sys.stdin.buffer
    header = _receive(stdin)
    if header is None:
        return
    sys.path[:] = orjson.loads(header)["sys_path"]
    frame = _receive(stdin)
    if frame is None:
        return
    spec: Spec = pickle.loads(frame)  # noqa: S301 - from the parent that started this process, over its pipe
    root = logging.getLogger()
    root.handlers[:] = [_LogUp(report)]
    root.setLevel(spec.log_level)
    asyncio.run(_serve(spec, stdin, report))

if __name__ == "__main__":
    main()
